#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod error;
mod names;
mod python;
mod text;
mod typescript;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

pub use error::Error;
pub use python::json_schema_to_py;
/// Re-export of the workspace's machine codes.
pub use tools_json::ErrorCode;
pub use typescript::{BareKey, is_bare_key, json_schema_to_ts};

/// The heading line that opens the `tools:sdk` section in every language.
pub const SDK_HEADING: &str = "## Writing code for run_code";

/// The number of tools a program's tool search returns when it gives no limit.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// The most tools one tool search of a program returns: a larger limit is clamped to it (the
/// limit of `tools-search`, which the SDK text states).
pub const MAX_SEARCH_LIMIT: usize = 50;

/// What an SDK declares besides the tools it is given.
///
/// # Examples
///
/// ```
/// use tools_codemode_sdk::{Language, SdkOptions};
///
/// let plain = Language::TypeScript.render_declarations_with(&[], SdkOptions::new());
/// assert_eq!(plain, Language::TypeScript.render_declarations(&[]));
/// let searching = Language::TypeScript
///     .render_declarations_with(&[], SdkOptions::new().with_tool_search(true));
/// assert!(searching.contains("$search(query: string, options?: { limit?: number }): Promise<FoundTool[]>;"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SdkOptions {
    tool_search: bool,
}

impl SdkOptions {
    /// The tools only, as [`Language::render_section`] renders them.
    pub const fn new() -> SdkOptions {
        SdkOptions { tool_search: false }
    }

    /// Whether the SDK declares the tool-search helpers ([`ToolSearchSdk`]): for a scope
    /// with deferred tools, which the SDK leaves out and a program finds by searching. A
    /// tool named like one of the helpers is then left out of the SDK too (the helper
    /// takes its name in the `tools` object).
    #[must_use]
    pub const fn with_tool_search(mut self, on: bool) -> SdkOptions {
        self.tool_search = on;
        self
    }

    /// Whether the tool-search helpers are declared.
    pub const fn tool_search(self) -> bool {
        self.tool_search
    }
}

/// The tool-search helpers of one language: two functions on the `tools` object, bound by
/// the host (not tools), that answer from the calling scope's catalogue with values.
///
/// Each helper takes positional arguments (and, in Python, keyword arguments), which the
/// runtime packs into one object keyed by the parameter names before it reaches the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolSearchSdk {
    /// The search helper's name on `tools` (`$search`, `search_tools`).
    pub search: &'static str,
    /// Its parameters, in order (`query, options` in TypeScript, `query, limit` in Python).
    pub search_parameters: &'static [&'static str],
    /// The describe helper's name on `tools` (`$describe`, `describe_tool`).
    pub describe: &'static str,
    /// Its parameters, in order (`name`).
    pub describe_parameters: &'static [&'static str],
    /// The paragraph the instructions gain before the declarations.
    pub instructions: &'static str,
}

impl ToolSearchSdk {
    /// Whether `name` is one of the helpers.
    pub fn is_helper(&self, name: &str) -> bool {
        name == self.search || name == self.describe
    }
}

/// One tool as the SDK sees it: a name, a description, and two raw JSON Schemas.
///
/// The schemas are raw JSON (an MCP server's `inputSchema` reaches the renderers
/// unchecked); anything outside the enforced subset degrades to `unknown` / `Any`. A blank
/// description (white space only) is treated as absent.
///
/// Dropping, cloning and debug-printing never recurse per level of the schemas, so a
/// schema thousands of levels deep is safe on a small stack.
pub struct ToolSdkSchema {
    /// The tool's name, as the model calls it (`tools.name` / `tools["name"]`).
    pub name: String,
    /// The tool's description; empty or blank for none.
    pub description: String,
    /// The raw JSON Schema of the arguments.
    pub parameters: Value,
    /// The raw JSON Schema of the tool's canonical output value (`{}` for any JSON).
    pub output: Value,
}

impl ToolSdkSchema {
    /// A tool for the SDK.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_codemode_sdk::ToolSdkSchema;
    ///
    /// let tool = ToolSdkSchema::new("echo", "Echo a text.", json!({"type": "object"}), json!({}));
    /// assert_eq!(tool.name, "echo");
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        output: Value,
    ) -> ToolSdkSchema {
        ToolSdkSchema {
            name: name.into(),
            description: description.into(),
            parameters,
            output,
        }
    }
}

impl Clone for ToolSdkSchema {
    fn clone(&self) -> Self {
        ToolSdkSchema {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: tools_json::clone_deep(&self.parameters),
            output: tools_json::clone_deep(&self.output),
        }
    }
}

impl Drop for ToolSdkSchema {
    fn drop(&mut self) {
        tools_json::drop_deep(self.parameters.take());
        tools_json::drop_deep(self.output.take());
    }
}

impl fmt::Debug for ToolSdkSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The schemas are left out: `serde_json`'s printers recurse per level.
        f.debug_struct("ToolSdkSchema")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// A Code Mode language: the single place that pairs an SDK renderer with a `run_code`
/// flavour.
///
/// [`Language::binding`] is one exhaustive `match`; a new variant cannot compile without
/// both halves.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_codemode_sdk::{Language, SDK_HEADING, ToolSdkSchema};
///
/// let tools = [ToolSdkSchema::new(
///     "echo",
///     "Echo a text.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     json!({"type": "string"}),
/// )];
///
/// let language: Language = "python".parse()?;
/// let section = language.render_section(&tools);
/// assert!(section.starts_with(SDK_HEADING));
/// assert!(section.contains("    async def echo(self, args: EchoArgs) -> str:\n"));
/// assert!(section.ends_with("tools: Tools\n```"));
///
/// let ts = Language::TypeScript.render_declarations(&tools);
/// assert!(ts.contains("  echo: {\n    text: string;\n  } & Record<string, JsonValue>;\n"));
///
/// assert!("ruby".parse::<Language>().is_err());
/// # Ok::<(), tools_codemode_sdk::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Language {
    /// TypeScript (`typescript`): ambient declarations, programs run as an async function
    /// body with types stripped.
    TypeScript,
    /// Python (`python`): `TypedDict` stubs and a `Tools` protocol, programs run as an
    /// async function body.
    Python,
}

/// What a [`Language`] brings: its SDK renderer and its `run_code` flavour.
#[derive(Clone, Copy, Debug)]
pub struct LanguageBinding {
    /// Renders the `tools:sdk` section.
    pub renderer: SdkRenderer,
    /// The model-facing strings of `run_code` in this language.
    pub flavour: RunCodeFlavour,
}

/// The SDK renderer of one language.
#[derive(Clone, Copy)]
pub struct SdkRenderer {
    /// The info string of the Markdown code fence (`ts`, `python`).
    pub fence: &'static str,
    /// The instruction prose between the heading and the declarations.
    pub instructions: &'static str,
    /// Renders the declaration block for a tool set (sorted inside).
    pub declarations: fn(&[ToolSdkSchema], SdkOptions) -> String,
    /// Renders one tool's signature on one line, written like its declaration.
    pub signature: fn(&ToolSdkSchema) -> String,
    /// The tool-search helpers.
    pub tool_search: ToolSearchSdk,
}

impl fmt::Debug for SdkRenderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SdkRenderer")
            .field("fence", &self.fence)
            .finish_non_exhaustive()
    }
}

/// The model-facing strings of the `run_code` tool in one language.
///
/// The `run_code` definition (`install` in `tools-codemode`) picks the
/// flavour of its code runtime's language when it is installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunCodeFlavour {
    /// The language this flavour belongs to.
    pub language: Language,
    /// The description of the `code` parameter (the reference implementation's exact text).
    pub code_parameter: &'static str,
    /// The `run_code` tool description: the language, both required arguments, how tools
    /// are called, what counts as output.
    pub tool_description: &'static str,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 2] = [Language::TypeScript, Language::Python];

    /// The runtime's spelling of the language (`typescript`, `python`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::Python => "python",
        }
    }

    /// Parses a code runtime's language name.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownLanguage`], naming the known languages.
    pub fn from_name(name: &str) -> Result<Language, Error> {
        Language::ALL
            .into_iter()
            .find(|l| l.as_str() == name)
            .ok_or_else(|| Error::UnknownLanguage {
                name: name.to_owned(),
            })
    }

    /// The SDK renderer and the `run_code` flavour of this language.
    pub const fn binding(self) -> LanguageBinding {
        match self {
            Language::TypeScript => LanguageBinding {
                renderer: SdkRenderer {
                    fence: "ts",
                    instructions: typescript::INSTRUCTIONS,
                    declarations: typescript::declarations,
                    signature: typescript::signature,
                    tool_search: typescript::TOOL_SEARCH,
                },
                flavour: RunCodeFlavour {
                    language: Language::TypeScript,
                    code_parameter: "The program: the body of an async TypeScript function.",
                    tool_description: "Execute a TypeScript program that calls the tools declared in \
                        the system prompt. Two required arguments: `code` is the BODY of an async \
                        function (erasable TypeScript syntax only; top-level `await` and `return` \
                        work) that calls tools as `await tools.name(args)`, and `description` says \
                        in a few words what the program does. Only what the program prints with \
                        `console.log` or returns is its output; images from tools are attached \
                        after the run.",
                },
            },
            Language::Python => LanguageBinding {
                renderer: SdkRenderer {
                    fence: "python",
                    instructions: python::INSTRUCTIONS,
                    declarations: python::declarations,
                    signature: python::signature,
                    tool_search: python::TOOL_SEARCH,
                },
                flavour: RunCodeFlavour {
                    language: Language::Python,
                    code_parameter: "The program: the body of an async Python function.",
                    tool_description: "Execute a Python program that calls the tools declared in the \
                        system prompt. Two required arguments: `code` is the BODY of an async \
                        function (top-level `await` works) that calls tools as \
                        `await tools.name(args)`, and `description` says in a few words what the \
                        program does. Only what the program prints with `print(...)` and/or \
                        returns with `return <value>` is its output; images from tools are \
                        attached after the run.",
                },
            },
        }
    }

    /// The `run_code` flavour of this language.
    pub const fn run_code_flavour(self) -> RunCodeFlavour {
        self.binding().flavour
    }

    /// The SDK renderer of this language.
    pub const fn renderer(self) -> SdkRenderer {
        self.binding().renderer
    }

    /// The declaration block of the SDK (the text inside the code fence): tools sorted by
    /// name (UTF-16 order, stable for equal names), byte-identical for the same set in any
    /// input order.
    pub fn render_declarations(self, tools: &[ToolSdkSchema]) -> String {
        self.render_declarations_with(tools, SdkOptions::new())
    }

    /// [`Language::render_declarations`] with `options`: with tool search, the block also
    /// declares the helpers of [`Language::tool_search`] and their result types, and leaves
    /// out a tool named like a helper.
    pub fn render_declarations_with(self, tools: &[ToolSdkSchema], options: SdkOptions) -> String {
        (self.renderer().declarations)(tools, options)
    }

    /// The whole `tools:sdk` section: [`SDK_HEADING`], the instructions, then the
    /// declarations in a fenced code block. No trailing newline after the fence.
    pub fn render_section(self, tools: &[ToolSdkSchema]) -> String {
        self.render_section_with(tools, SdkOptions::new())
    }

    /// [`Language::render_section`] with `options`: with tool search, the instructions gain
    /// the helpers' paragraph ([`ToolSearchSdk::instructions`]) before the list of tools.
    pub fn render_section_with(self, tools: &[ToolSdkSchema], options: SdkOptions) -> String {
        let renderer = self.renderer();
        let declarations = (renderer.declarations)(tools, options);
        let search = if options.tool_search() {
            renderer.tool_search.instructions
        } else {
            ""
        };
        let mut out = String::with_capacity(
            SDK_HEADING.len()
                + renderer.instructions.len()
                + search.len()
                + declarations.len()
                + 32,
        );
        out.push_str(SDK_HEADING);
        out.push_str("\n\n");
        match renderer.instructions.strip_suffix(TOOLS_LINE) {
            Some(before) if !search.is_empty() => {
                out.push_str(before);
                out.push_str(search);
                out.push_str("\n\n");
                out.push_str(TOOLS_LINE);
            }
            _ => out.push_str(renderer.instructions),
        }
        out.push_str("\n\n```");
        out.push_str(renderer.fence);
        out.push('\n');
        out.push_str(&declarations);
        out.push_str("\n```");
        out
    }

    /// One tool's signature on one line, written the way the SDK declares a tool, for a
    /// program to read: `get_weather(args: { city: string; }): Promise<string>` in
    /// TypeScript, `async def get_weather(args: TypedDict[{"city": str}]) -> str` in Python
    /// (objects inline, PEP 764 style; a name that cannot be a method reads
    /// `tools["my-server.tool"]: Callable[[…], Awaitable[…]]`). Descriptions of properties
    /// stay as inline doc comments in TypeScript and are left out in Python.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_codemode_sdk::{Language, ToolSdkSchema};
    ///
    /// let tool = ToolSdkSchema::new(
    ///     "get_weather",
    ///     "Current weather.",
    ///     json!({"type": "object", "additionalProperties": false,
    ///            "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    ///     json!({"type": "string"}),
    /// );
    /// assert_eq!(
    ///     Language::TypeScript.render_signature(&tool),
    ///     "get_weather(args: { city: string; }): Promise<string>"
    /// );
    /// assert_eq!(
    ///     Language::Python.render_signature(&tool),
    ///     "async def get_weather(args: TypedDict[{\"city\": str}]) -> str"
    /// );
    /// ```
    pub fn render_signature(self, tool: &ToolSdkSchema) -> String {
        (self.renderer().signature)(tool)
    }

    /// The tool-search helpers of this language.
    pub const fn tool_search(self) -> ToolSearchSdk {
        self.renderer().tool_search
    }
}

/// The last line of every language's instructions, after which the declarations follow.
const TOOLS_LINE: &str = "The tools available to the program:";

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Language {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Language::from_name(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_round_trips_and_pairs_a_flavour_with_its_renderer() {
        for language in Language::ALL {
            assert_eq!(language.as_str().parse::<Language>().ok(), Some(language));
            let binding = language.binding();
            assert_eq!(binding.flavour.language, language);
            assert!(binding.flavour.tool_description.contains("`description`"));
            assert!(
                binding
                    .renderer
                    .instructions
                    .contains("two required arguments")
            );
        }
    }

    #[test]
    fn an_unknown_language_names_the_known_ones() {
        let err = Language::from_name("ruby").unwrap_err();
        let message = err.to_string();
        assert!(message.contains("\"ruby\""), "{message}");
        assert!(message.contains("\"typescript\", \"python\""), "{message}");
    }

    #[test]
    fn flavours_mention_their_language_only() {
        let ts = Language::TypeScript.run_code_flavour();
        let py = Language::Python.run_code_flavour();
        assert!(ts.tool_description.contains("Execute a TypeScript program"));
        assert!(ts.tool_description.contains("BODY of an"));
        assert!(py.tool_description.contains("Execute a Python program"));
        assert!(py.tool_description.contains("`return <value>`"));
        assert!(!py.tool_description.contains("TypeScript"));
        assert!(!python::INSTRUCTIONS.contains("TypeScript"));
    }
}
