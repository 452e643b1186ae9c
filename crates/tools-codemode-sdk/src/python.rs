//! Schema → Python type text, and the Python declarations of the `tools:sdk` section
//! (`TypedDict` classes and a `Tools` protocol).
//!
//! One walk per annotation, driven by an explicit task stack. Annotation text streams
//! into the buffer on top of a buffer stack: entering an object that becomes a `TypedDict`
//! writes the class name where the object is referenced and pushes a fresh buffer for the
//! class body; leaving it pops the body into the class list. So nested classes are
//! declared before their parents, no text is copied once per level, and nothing recurses.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::names::{Allocator, camel_case, is_field_name, is_method_name, join};
use super::text::{
    collapse_js_whitespace, description_of, is_literal_int, json_string, py_number, sorted_order,
};
use super::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SdkOptions, ToolSdkSchema, ToolSearchSdk};

/// `list[` nesting at which an array degrades to `Any` (CPython's parser allows 200 open
/// brackets; the rest is headroom for `NotRequired[`, `Literal[` and `dict[`).
pub(crate) const MAX_LIST_DEPTH: usize = 180;

/// The comment line closing an open `TypedDict` (kept as the reference writes it, because
/// it is part of the declaration block that the golden files pin byte for byte).
const OPEN_OBJECT_COMMENT: &str = "    # Additional keys beyond those declared are allowed.\n";

/// Names that annotations inside `class Tools(Protocol)` may refer to. A method with one of
/// these names would shadow it for the methods after it (mypy: "Function … is not valid as
/// a type"), so such a tool is declared in the subscript comment form instead.
const ANNOTATION_NAMES: [&str; 8] = [
    "Any", "Literal", "str", "int", "float", "bool", "list", "dict",
];

/// The instructions before the declarations (our own wording; the facts follow the
/// reference implementation's).
pub(crate) const INSTRUCTIONS: &str = "\
`run_code` takes two required arguments: `code`, the program, and `description`, a short \
active-voice summary of what the program does (shown to the user).

`code` is the body of an async Python function, so top-level `await` and `return` work.

Exactly two names are bound when the program runs: `tools` and `ToolCallError`. The \
`TypedDict` classes below are static stubs that describe shapes; they do not exist at run \
time, so build arguments as plain dicts such as `{\"path\": \"a.txt\"}`. Writing \
`FooArgs(field=1)` raises `NameError`.

Call a tool with `await tools.name(args)`. Tools declared as `__getitem__` with a \
`Literal` name (names that are reserved words, start with `_`, contain characters outside \
Python identifiers, or would shadow a type name) need subscript access: \
`await tools[\"my-server.tool\"](args)`. A call returns the tool's result as JSON data \
(dicts, lists, str, int, float, bool, None) of the declared type. A failed call raises \
`ToolCallError`; its `toolName` says which tool failed and its `code` says why \
(`INVALID_ARGS`, `DENIED`, `APPROVAL_DENIED`, `TOOL_TIMEOUT`, …).

Independent calls may overlap: `await asyncio.gather(tools.a(x), tools.b(y))`. Read-only \
tools then run concurrently, while tools that change state run alone, in the order the \
program called them. Sequence dependent work with `await`.

The program's output is what it prints with `print(...)` and the value of a top-level \
`return <value>`; the returned value must be lossless JSON (no NaN or infinities, no \
objects other than dicts and lists). Intermediate tool results are not shown unless the \
program prints or returns them. Images produced by tools are attached after the run.

The tools available to the program:";

/// The tool-search helpers of the Python SDK.
pub(crate) const TOOL_SEARCH: ToolSearchSdk = ToolSearchSdk {
    search: "search_tools",
    search_parameters: &["query", "limit"],
    describe: "describe_tool",
    describe_parameters: &["name"],
    instructions: "\
Not every tool is declared below: more are found by searching. \
`await tools.search_tools(\"what you need\")` looks through the others by what they do and \
returns their names, descriptions and signatures as values (nothing is added to this \
prompt). Call a tool it found by its name, like a declared one (the call is checked like any \
other): `hit = (await tools.search_tools(\"weather\"))[0]` then \
`await tools[hit[\"name\"]](args)`. `await tools.describe_tool(name)` returns one tool's \
signature and the JSON Schema of its arguments.",
};

/// The classes the Python SDK adds for tool search, after the generated ones.
const SEARCH_CLASSES: [(&str, &str); 2] = [
    (
        "FoundTool",
        "class FoundTool(TypedDict):\n    name: str\n    description: str\n    # The tool's signature, written like the declarations below.\n    signature: str",
    ),
    (
        "ToolDescription",
        "class ToolDescription(FoundTool):\n    # The JSON Schema of the tool's arguments.\n    parameters: dict[str, Any]",
    ),
];

/// The helper methods of the `Tools` protocol with tool search.
fn search_methods() -> String {
    format!(
        "    async def search_tools(self, query: str, limit: int = {DEFAULT_SEARCH_LIMIT}) -> list[FoundTool]:\n        \"\"\"Finds tools not declared here by what they do, best match first: at most `limit` (at most {MAX_SEARCH_LIMIT}). Call one as `await tools[hit[\"name\"]](args)`.\"\"\"\n    async def describe_tool(self, name: str) -> ToolDescription | None:\n        \"\"\"Describes a tool the program may call (declared here or found by `search_tools`); None for any other name.\"\"\"\n"
    )
}

/// Renders `schema` as Python type text without a naming context: objects are
/// `dict[str, Any]` (there is nowhere to declare classes).
///
/// A schema outside the enforced subset renders as `Any`. Literal members follow the
/// reference exactly, including `Literal[1.5]` (PEP 586 allows no floats) and integers
/// beyond 64 bits (which mypy refuses); the SDK renderer widens such sets to `float` /
/// `int`. Total and non-recursive.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_codemode_sdk::json_schema_to_py;
///
/// assert_eq!(json_schema_to_py(&json!({"oneOf": [{"type": "string"}, {"type": "null"}]})), "str | None");
/// assert_eq!(json_schema_to_py(&json!({"type": "integer", "enum": [1152921504606846976u64]})), "Literal[1152921504606846976]");
/// assert_eq!(json_schema_to_py(&json!({"type": "array", "items": {"type": "object"}})), "list[dict[str, Any]]");
/// assert_eq!(json_schema_to_py(&json!({"type": "string", "contentEncoding": "base64"})), "Any");
/// ```
pub fn json_schema_to_py(schema: &Value) -> String {
    let mut writer = Writer::new(Mode::ContextFree);
    writer.annotation(schema, "")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `jsonSchemaToPy`: no classes, literals exactly as the reference writes them.
    ContextFree,
    /// The SDK: `TypedDict` classes, and only literal sets that type checkers accept.
    Sdk,
    /// One tool's signature: like the SDK, but objects inline (`TypedDict[{"k": T}]`, PEP
    /// 764 style), since a signature on one line has nowhere to declare classes.
    Inline,
}

/// The state of one rendering: allocated class names, declared classes, used imports.
struct Writer {
    mode: Mode,
    names: Allocator,
    classes: Vec<String>,
    uses_any: bool,
    uses_literal: bool,
    uses_not_required: bool,
}

enum Task<'a> {
    Node {
        schema: &'a Value,
        stem: String,
        depth: usize,
    },
    Text(&'static str),
    Owned(String),
    EndClass,
}

impl Writer {
    fn new(mode: Mode) -> Writer {
        Writer {
            mode,
            names: Allocator::default(),
            classes: Vec::new(),
            uses_any: false,
            uses_literal: false,
            uses_not_required: false,
        }
    }

    /// The annotation of `schema` at the root of an args/output type, with class names
    /// stemming from `stem`; declares the classes it needs.
    fn annotation(&mut self, schema: &Value, stem: &str) -> String {
        if !tools_json::is_schema_supported(schema) {
            self.uses_any = true;
            return "Any".to_owned();
        }
        let mut buffers: Vec<String> = vec![String::new()];
        let mut stack = vec![Task::Node {
            schema,
            stem: stem.to_owned(),
            depth: 0,
        }];
        while let Some(task) = stack.pop() {
            match task {
                Task::Text(text) => push(&mut buffers, text),
                Task::Owned(text) => push(&mut buffers, &text),
                Task::EndClass => {
                    if buffers.len() > 1
                        && let Some(mut class) = buffers.pop()
                    {
                        if class.ends_with('\n') {
                            class.pop();
                        }
                        self.classes.push(class);
                    }
                }
                Task::Node {
                    schema,
                    stem,
                    depth,
                } => self.node(&mut buffers, &mut stack, schema, stem, depth),
            }
        }
        buffers.swap_remove(0)
    }

    fn node<'a>(
        &mut self,
        buffers: &mut Vec<String>,
        stack: &mut Vec<Task<'a>>,
        node: &'a Value,
        stem: String,
        depth: usize,
    ) {
        let Some(map) = node.as_object() else {
            self.any(buffers);
            return;
        };
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            for (i, branch) in branches.iter().enumerate().rev() {
                let branch_stem = match self.mode {
                    Mode::Sdk => join(&stem, &(i + 1).to_string()),
                    Mode::ContextFree | Mode::Inline => String::new(),
                };
                stack.push(Task::Node {
                    schema: branch,
                    stem: branch_stem,
                    depth,
                });
                if i > 0 {
                    stack.push(Task::Text(" | "));
                }
            }
            return;
        }
        match map.get("type").and_then(Value::as_str) {
            None => self.any(buffers),
            Some("null") => push(buffers, "None"),
            Some("array") => {
                if depth >= MAX_LIST_DEPTH {
                    self.any(buffers);
                    return;
                }
                match map.get("items") {
                    None => {
                        self.uses_any = true;
                        push(buffers, "list[Any]");
                    }
                    Some(items) => {
                        push(buffers, "list[");
                        stack.push(Task::Text("]"));
                        stack.push(Task::Node {
                            schema: items,
                            stem,
                            depth: depth + 1,
                        });
                    }
                }
            }
            Some("object") => match self.mode {
                Mode::ContextFree => self.open_dict(buffers),
                Mode::Sdk => self.typed_dict(buffers, stack, map, &stem),
                Mode::Inline => self.inline_dict(buffers, stack, map, depth),
            },
            Some(ty) => self.scalar(buffers, map, ty),
        }
    }

    fn any(&mut self, buffers: &mut [String]) {
        self.uses_any = true;
        push(buffers, "Any");
    }

    fn open_dict(&mut self, buffers: &mut [String]) {
        self.uses_any = true;
        push(buffers, "dict[str, Any]");
    }

    /// An object in the SDK: a `TypedDict` when every field name can be a class-syntax
    /// field and the object is not an open empty one; else `dict[str, Any]`.
    fn typed_dict<'a>(
        &mut self,
        buffers: &mut Vec<String>,
        stack: &mut Vec<Task<'a>>,
        map: &'a Map<String, Value>,
        stem: &str,
    ) {
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty());
        let open = map.get("additionalProperties") != Some(&Value::Bool(false));
        let expressible = properties.is_none_or(|p| p.keys().all(|k| is_field_name(k)));
        if (open && properties.is_none()) || !expressible {
            self.open_dict(buffers);
            return;
        }
        let name = self.names.allocate(stem);
        push(buffers, &name);
        buffers.push(format!("class {name}(TypedDict):\n"));
        stack.push(Task::EndClass);
        let Some(properties) = properties else {
            stack.push(Task::Text("    pass\n"));
            return;
        };
        if open {
            stack.push(Task::Text(OPEN_OBJECT_COMMENT));
        }
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (field, child) in properties.iter().rev() {
            let is_required = required.contains(field.as_str());
            stack.push(Task::Text(if is_required { "\n" } else { "]\n" }));
            stack.push(Task::Node {
                schema: child,
                stem: join(&name, &camel_case(field)),
                depth: 1,
            });
            let mut head = String::new();
            if let Some(comment) = description_of(child).and_then(|d| comment_text(&d)) {
                head.push_str("    # ");
                head.push_str(&comment);
                head.push('\n');
            }
            head.push_str("    ");
            head.push_str(field);
            head.push_str(": ");
            if !is_required {
                self.uses_not_required = true;
                head.push_str("NotRequired[");
            }
            stack.push(Task::Owned(head));
        }
    }

    /// An object in a signature: `TypedDict[{"key": T, "other": NotRequired[U]}]` with its
    /// declared properties (any key, written as a string literal); `dict[str, Any]` for an
    /// open object without properties, `TypedDict[{}]` for a closed one.
    fn inline_dict<'a>(
        &mut self,
        buffers: &mut [String],
        stack: &mut Vec<Task<'a>>,
        map: &'a Map<String, Value>,
        depth: usize,
    ) {
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty());
        let Some(properties) = properties else {
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                push(buffers, "TypedDict[{}]");
            } else {
                self.open_dict(buffers);
            }
            return;
        };
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        push(buffers, "TypedDict[{");
        stack.push(Task::Text("}]"));
        for (i, (field, child)) in properties.iter().enumerate().rev() {
            let is_required = required.contains(field.as_str());
            if !is_required {
                stack.push(Task::Text("]"));
            }
            stack.push(Task::Node {
                schema: child,
                stem: String::new(),
                depth,
            });
            let mut head = String::new();
            if i > 0 {
                head.push_str(", ");
            }
            head.push_str(&json_string(field));
            head.push_str(": ");
            if !is_required {
                head.push_str("NotRequired[");
            }
            stack.push(Task::Owned(head));
        }
    }

    /// A scalar: `Literal[…]` for `const` (over `enum`) or `enum`, else the base type.
    fn scalar(&mut self, buffers: &mut [String], map: &Map<String, Value>, ty: &str) {
        let members: &[Value] = match (map.get("const"), map.get("enum")) {
            (Some(constant), _) => std::slice::from_ref(constant),
            (None, Some(Value::Array(members))) => members,
            _ => &[],
        };
        let expressible = self.mode == Mode::ContextFree
            || members
                .iter()
                .all(|m| m.as_number().is_none_or(is_literal_int));
        if members.is_empty() || !expressible {
            push(
                buffers,
                match ty {
                    "string" => "str",
                    "number" => "float",
                    "integer" => "int",
                    "boolean" => "bool",
                    _ => "Any",
                },
            );
            return;
        }
        self.uses_literal = true;
        let mut text = String::from("Literal[");
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            match member {
                Value::String(s) => text.push_str(&json_string(s)),
                Value::Number(n) => text.push_str(&py_number(n)),
                Value::Bool(true) => text.push_str("True"),
                Value::Bool(false) => text.push_str("False"),
                Value::Null => text.push_str("None"),
                Value::Array(_) | Value::Object(_) => text.push_str("None"),
            }
        }
        text.push(']');
        push(buffers, &text);
    }

    /// The `typing` import: what the classes use, and for tools reached by subscript
    /// (`subscripts`) the names their `__getitem__` needs (`overload` when there are
    /// several).
    fn import_line(&self, uses_typed_dict: bool, subscripts: bool, overloaded: bool) -> String {
        let mut names = Vec::new();
        if self.uses_any {
            names.push("Any");
        }
        if subscripts {
            names.push("Awaitable");
            names.push("Callable");
        }
        if self.uses_literal || subscripts {
            names.push("Literal");
        }
        if self.uses_not_required {
            names.push("NotRequired");
        }
        names.push("Protocol");
        if uses_typed_dict {
            names.push("TypedDict");
        }
        if overloaded {
            names.push("overload");
        }
        format!("from typing import {}", names.join(", "))
    }
}

fn push(buffers: &mut [String], text: &str) {
    if let Some(top) = buffers.last_mut() {
        top.push_str(text);
    }
}

/// A description as comment text: JavaScript white space collapsed and trimmed, control
/// characters (C0 except the folded white space, DEL, C1) written as `\xNN`. A blank
/// description has none (docs/decisions.md, entry 19).
pub(crate) fn comment_text(description: &str) -> Option<String> {
    let collapsed = collapse_js_whitespace(description);
    if collapsed.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(collapsed.len());
    for c in collapsed.chars() {
        if matches!(c, '\u{0}'..='\u{8}' | '\u{E}'..='\u{1F}' | '\u{7F}'..='\u{9F}') {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A description as the body of a `"""…"""` docstring: comment text with backslashes
/// doubled and double quotes escaped.
fn docstring_text(description: &str) -> Option<String> {
    comment_text(description).map(|t| t.replace('\\', "\\\\").replace('"', "\\\""))
}

/// One tool's signature on one line: `async def name(args: A) -> O` (objects inline), or
/// `tools["name"]: Callable[[A], Awaitable[O]]` for a name that cannot be a method.
pub(crate) fn signature(tool: &ToolSdkSchema) -> String {
    let mut writer = Writer::new(Mode::Inline);
    let args = writer.annotation(&tool.parameters, "");
    let output = writer.annotation(&tool.output, "");
    if is_method_name(&tool.name) {
        format!("async def {}(args: {args}) -> {output}", tool.name)
    } else {
        format!(
            "tools[{}]: Callable[[{args}], Awaitable[{output}]]",
            json_string(&tool.name)
        )
    }
}

/// The fenced declaration block of the Python SDK (without the fence lines).
pub(crate) fn declarations(tools: &[ToolSdkSchema], options: SdkOptions) -> String {
    let search = options.tool_search();
    // With tool search, a tool named like a helper is left out: the helper takes its name.
    let tools: Vec<&ToolSdkSchema> = tools
        .iter()
        .filter(|tool| !(search && TOOL_SEARCH.is_helper(&tool.name)))
        .collect();
    let order = sorted_order(tools.iter().map(|t| t.name.as_str()));
    let mut writer = Writer::new(Mode::Sdk);
    if search {
        // The helpers' classes keep their names; a generated class that would take one
        // gets a suffix, and a tool named like one is reached by subscript.
        for (name, _) in SEARCH_CLASSES {
            let _ = writer.names.allocate(name);
        }
        writer.uses_any = true;
    }
    let mut signatures = Vec::with_capacity(order.len());
    for &i in &order {
        let tool = tools[i];
        let stem = camel_case(&tool.name);
        let args = writer.annotation(&tool.parameters, &join(&stem, "Args"));
        let output = writer.annotation(&tool.output, &join(&stem, "Output"));
        signatures.push((tool, args, output));
    }
    let is_method = |name: &str| {
        is_method_name(name) && !ANNOTATION_NAMES.contains(&name) && !writer.names.is_taken(name)
    };
    let mut body = String::new();
    let mut any_method = false;
    // Tools reached by subscript: one `__getitem__` per name, typed by a `Literal` of the
    // name, so that a checker checks these calls too; overloads are kept together, after
    // the methods.
    let mut subscripts: Vec<String> = Vec::new();
    for (tool, args, output) in &signatures {
        let method = is_method(&tool.name);
        let mut entry = if method {
            format!(
                "    async def {}(self, args: {args}) -> {output}:",
                tool.name
            )
        } else {
            format!(
                "    def __getitem__(self, name: Literal[{}]) -> Callable[[{args}], Awaitable[{output}]]:",
                json_string(&tool.name)
            )
        };
        match docstring_text(&tool.description) {
            Some(doc) => entry.push_str(&format!("\n        \"\"\"{doc}\"\"\"\n")),
            None => entry.push_str(" ...\n"),
        }
        if method {
            any_method = true;
            body.push_str(&entry);
        } else {
            subscripts.push(entry);
        }
    }
    if search {
        body.push_str(&search_methods());
    }
    let overloaded = subscripts.len() > 1;
    let empty = !any_method && !search && subscripts.is_empty();
    for entry in &subscripts {
        if overloaded {
            body.push_str("    @overload\n");
        }
        body.push_str(entry);
    }
    let mut out = writer.import_line(
        !writer.classes.is_empty() || search,
        !subscripts.is_empty(),
        overloaded,
    );
    out.push_str(
        "\n\nclass ToolCallError(Exception):\n    toolName: str\n    code: str | None\n\n",
    );
    for class in &writer.classes {
        out.push_str(class);
        out.push_str("\n\n");
    }
    if search {
        for (_, class) in SEARCH_CLASSES {
            out.push_str(class);
            out.push_str("\n\n");
        }
    }
    out.push_str("class Tools(Protocol):\n");
    if empty {
        out.push_str("    pass\n");
    }
    out.push_str(&body);
    out.push_str("\ntools: Tools");
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn comments_escape_controls_and_fold_white_space() {
        assert_eq!(comment_text(" \u{85} ").as_deref(), Some("\\x85"));
        assert_eq!(
            comment_text("a\u{0}b\u{7}\u{1b}\u{7f}\u{9b}").as_deref(),
            Some("a\\x00b\\x07\\x1b\\x7f\\x9b")
        );
        assert_eq!(comment_text("a\t\n\r\u{A0}b").as_deref(), Some("a b"));
        assert_eq!(
            comment_text("zero\u{200B}width \u{1F600}").as_deref(),
            Some("zero\u{200B}width \u{1F600}")
        );
        assert_eq!(comment_text("   "), None);
        assert_eq!(
            docstring_text("ends\\ \"q\" \u{0}").as_deref(),
            Some("ends\\\\ \\\"q\\\" \\\\x00")
        );
    }

    #[test]
    fn sdk_literals_widen_what_type_checkers_refuse_but_context_free_ones_do_not() {
        let schema = json!({"type": "number", "enum": [1, 2.5]});
        assert_eq!(json_schema_to_py(&schema), "Literal[1, 2.5]");
        let mut writer = Writer::new(Mode::Sdk);
        assert_eq!(writer.annotation(&schema, "X"), "float");
        let huge = json!({"type": "number", "const": 1e21});
        assert_eq!(json_schema_to_py(&huge), "Literal[1000000000000000000000]");
        assert_eq!(writer.annotation(&huge, "X"), "float");
        let edge = json!({"type": "integer", "enum": [i64::MAX, -i64::MAX]});
        assert_eq!(
            writer.annotation(&edge, "X"),
            "Literal[9223372036854775807, -9223372036854775807]"
        );
        let beyond = json!({"type": "integer", "enum": [1, 9_223_372_036_854_775_808u64]});
        assert_eq!(writer.annotation(&beyond, "X"), "int");
        let beyond = json!({"type": "integer", "const": i64::MIN});
        assert_eq!(writer.annotation(&beyond, "X"), "int");
    }
}
