//! Code Mode SDK commands, and the `docs/tool-catalog.md` generator.
//!
//! - `cargo xtask sdk --lang typescript|python --catalog FILE.json [--section]
//!   [--allow-unsupported]`: prints the SDK declarations (with `--section`, the whole
//!   `tools:sdk` prompt section) for a catalog file, a JSON array of
//!   `{"name", "description", "parameters", "output"}` with raw JSON Schemas.
//! - `cargo xtask sdk-check`: renders the SDK of `xtask/sdk-check/catalog.json` in both
//!   languages and proves it with the real checkers: `tsc --strict --noEmit` (TypeScript from
//!   the npm registry, installed into `target/sdk-check/node`) and `mypy --strict` (from
//!   PyPI, installed into the virtual environment `target/sdk-check/venv`). The well-typed
//!   programs `good.ts` / `good.py` must be accepted; every line marked `wrong:` in
//!   `bad.ts` / `bad.py` must be rejected, and nothing else. `runtime.d.ts` declares the
//!   one global a TypeScript program has besides the SDK (`console`).
//! - [`tool_catalog_md`]: the model-facing schemas and both SDK renderings of the example
//!   tools in `xtask/sdk-check/examples.json`.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tools_codemode_sdk::{Language, SdkOptions, ToolSdkSchema};
use tools_json::{JsonValue, Segment, Violation};

use crate::project_root;

mod check;
pub(crate) use check::sdk_check;

/// The TypeScript release `sdk-check` installs.
const TYPESCRIPT_VERSION: &str = "5.9.3";
/// The mypy release `sdk-check` installs.
const MYPY_VERSION: &str = "2.4.1";
/// The oldest Python the SDK targets (`typing.NotRequired` arrived in 3.11).
const PYTHON_TARGET: &str = "3.11";
/// The fewest tools the sdk-check catalog must have.
const MIN_CHECK_TOOLS: usize = 40;
/// The marker of a line that a checker must reject.
const WRONG_MARKER: &str = "wrong:";

/// The example tools of `docs/tool-catalog.md`.
const EXAMPLES: &str = include_str!("../../sdk-check/examples.json");

const SDK_USAGE: &str = "usage: cargo xtask sdk --lang typescript|python --catalog FILE.json [--section] [--allow-unsupported]

  --section            print the whole tools:sdk prompt section, not only the declarations
  --allow-unsupported  render schemas outside the enforced subset (they degrade to unknown / Any)
                       instead of failing";

/// `cargo xtask sdk`.
pub(crate) fn sdk(args: &[String]) -> Result<(), String> {
    let mut language = None;
    let mut catalog = None;
    let mut section = false;
    let mut allow_unsupported = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lang" | "--language" => {
                let name = args
                    .next()
                    .ok_or_else(|| format!("--lang needs a value\n\n{SDK_USAGE}"))?;
                language = Some(name.parse::<Language>().map_err(|e| e.to_string())?);
            }
            "--catalog" => {
                let path = args
                    .next()
                    .ok_or_else(|| format!("--catalog needs a file\n\n{SDK_USAGE}"))?;
                catalog = Some(PathBuf::from(path));
            }
            "--section" => section = true,
            "--allow-unsupported" => allow_unsupported = true,
            "-h" | "--help" => {
                println!("{SDK_USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}\n\n{SDK_USAGE}")),
        }
    }
    let language = language.ok_or_else(|| format!("missing --lang\n\n{SDK_USAGE}"))?;
    let catalog = catalog.ok_or_else(|| format!("missing --catalog\n\n{SDK_USAGE}"))?;
    let tools = load_catalog(&catalog, !allow_unsupported)?;
    if section {
        println!("{}", language.render_section(&tools));
    } else {
        println!("{}", language.render_declarations(&tools));
    }
    Ok(())
}

/// Reads a catalog file; see [`parse_catalog`].
fn load_catalog(path: &Path, strict: bool) -> Result<Vec<ToolSdkSchema>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read catalog {}: {e}", path.display()))?;
    parse_catalog(&text, strict).map_err(|e| format!("catalog {}: {e}", path.display()))
}

/// Parses catalog text: a JSON array of `{"name", "description", "parameters", "output"}`.
///
/// `name` and `parameters` are required; `description` defaults to none and `output` to
/// `{}` (any JSON). With `strict`, both schemas must be inside the enforced subset. Every
/// error names the entry, the tool and the path of the problem.
fn parse_catalog(text: &str, strict: bool) -> Result<Vec<ToolSdkSchema>, String> {
    let root = JsonValue::parse(text).map_err(|e| lossless_error(text, &e))?;
    let Value::Array(entries) = root.as_value() else {
        return Err(format!(
            "expected a JSON array of tools, found {}",
            kind(root.as_value())
        ));
    };
    let mut tools = Vec::with_capacity(entries.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("[{index}]");
        let Value::Object(map) = entry else {
            return Err(format!(
                "{at}: expected a tool object, found {}",
                kind(entry)
            ));
        };
        let name = match map.get("name") {
            Some(Value::String(name)) if name.is_empty() => {
                return Err(format!("{at}.name: a tool name cannot be empty"));
            }
            Some(Value::String(name)) if name == "run_code" => {
                return Err(format!(
                    "{at}.name: \"run_code\" is reserved for the Code Mode transport"
                ));
            }
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(format!(
                    "{at}.name: expected a string, found {}",
                    kind(other)
                ));
            }
            None => return Err(format!("{at}: missing \"name\"")),
        };
        let tool = format!("tool {name:?} ({at})");
        for key in map.keys() {
            if !matches!(
                key.as_str(),
                "name" | "description" | "parameters" | "output"
            ) {
                return Err(format!(
                    "{tool}: unknown key {key:?} (a tool has name, description, parameters, output)"
                ));
            }
        }
        if let Some(first) = seen.insert(name.clone(), index) {
            return Err(format!("{tool}: the name is already used by [{first}]"));
        }
        let description = match map.get("description") {
            None => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => {
                return Err(format!(
                    "{tool}: {at}.description: expected a string, found {}",
                    kind(other)
                ));
            }
        };
        let parameters = map
            .get("parameters")
            .ok_or_else(|| format!("{tool}: missing \"parameters\" (a JSON Schema)"))?;
        let output = map
            .get("output")
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        if strict {
            for (field, schema) in [("parameters", parameters), ("output", &output)] {
                let violations = tools_json::check_schema(schema);
                if !violations.is_empty() {
                    let list: Vec<String> = violations
                        .iter()
                        .map(|v| {
                            let path = tools_json::Path::from_parts(
                                &format!("{at}.{field}"),
                                v.path.segments().to_vec(),
                            );
                            Violation::new(path, v.kind.clone()).to_string()
                        })
                        .collect();
                    return Err(format!(
                        "{tool}: {field} is outside the supported JSON Schema subset \
                         (pass --allow-unsupported to render it as unknown / Any):\n  - {}",
                        list.join("\n  - ")
                    ));
                }
            }
        }
        tools.push(ToolSdkSchema::new(
            name,
            description,
            tools_json::clone_deep(parameters),
            output,
        ));
    }
    Ok(tools)
}

/// A boundary error, with each lossless violation attributed to its tool.
fn lossless_error(text: &str, error: &tools_json::Error) -> String {
    if !matches!(error, tools_json::Error::NotLossless { .. }) {
        return error.to_string();
    }
    let names = entry_names(text);
    let lines: Vec<String> = error
        .violations()
        .iter()
        .map(|v| match v.path.segments() {
            [Segment::Index(i), rest @ ..] => {
                let path = tools_json::Path::from_parts(&format!("[{i}]"), rest.to_vec());
                let violation = Violation::new(path, v.kind.clone());
                match names.get(*i).cloned().flatten() {
                    Some(name) => format!("tool {name:?} ([{i}]): {violation}"),
                    None => violation.to_string(),
                }
            }
            _ => v.to_string(),
        })
        .collect();
    format!("not lossless JSON:\n  - {}", lines.join("\n  - "))
}

/// The `name` of each catalog entry (for messages). The boundary has already checked the
/// nesting against its limit, so the recursive parser runs on a thread with a large stack.
fn entry_names(text: &str) -> Vec<Option<String>> {
    let text = text.to_owned();
    let parse = move || {
        let mut de = serde_json::Deserializer::from_str(&text);
        de.disable_recursion_limit();
        let Some(Ok(Value::Array(entries))) = de.into_iter::<Value>().next() else {
            return Vec::new();
        };
        let names = entries
            .iter()
            .map(|e| e.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect();
        tools_json::drop_deep(Value::Array(entries));
        names
    };
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(parse)
        .ok()
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `docs/tool-catalog.md`: for the example tools of `xtask/sdk-check/examples.json`, the
/// model-facing schemas (what native presentation puts on the wire), then the TypeScript
/// and the Python `tools:sdk` declarations (what Code Mode puts in the prompt).
pub(crate) fn tool_catalog_md() -> String {
    let tools = match parse_catalog(EXAMPLES, true) {
        Ok(tools) => tools,
        // The examples are committed and covered by a test; keep the generator total.
        Err(e) => {
            return format!(
                "{PREAMBLE}\n\n# Tool catalog\n\nThe example catalog is invalid: {e}\n"
            );
        }
    };
    let mut order: Vec<&ToolSdkSchema> = tools.iter().collect();
    order.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
    let mut out = String::new();
    out.push_str(PREAMBLE);
    out.push_str("\n\n# Tool catalog\n\n");
    out.push_str(
        "The example tools of `xtask/sdk-check/examples.json` as a model sees them.\n\
         Native presentation sends each tool's schema; Code Mode sends only `run_code` and puts \
         the generated SDK (TypeScript or Python, after the code runtime's language) in the \
         system prompt.\n\
         Regenerate with `cargo xtask codegen`; `cargo xtask sdk` renders any catalog file.\n\n",
    );
    out.push_str("## Model-facing schemas\n\n| tool | description |\n| --- | --- |\n");
    for tool in &order {
        let _ = writeln!(
            out,
            "| `{}` | {} |",
            tool.name,
            tool.description.replace('|', "\\|").replace('\n', "<br>")
        );
    }
    for tool in &order {
        let _ = write!(
            out,
            "\n### `{}`\n\n{}\n\n",
            tool.name,
            tool.description.trim()
        );
        let _ = write!(
            out,
            "Parameters:\n\n```json\n{}\n```\n\nOutput (declared in the SDK only):\n\n```json\n{}\n```\n",
            pretty(&tool.parameters),
            pretty(&tool.output)
        );
    }
    for (language, title, fence) in [
        (Language::TypeScript, "TypeScript", "ts"),
        (Language::Python, "Python", "python"),
    ] {
        let _ = write!(
            out,
            "\n## Code Mode SDK: {title}\n\nThe declaration block of the `tools:sdk` section \
             (`cargo xtask sdk --lang {language} --catalog xtask/sdk-check/examples.json`); \
             the section opens with `{}` and our instructions.\n\n```{fence}\n{}\n```\n",
            tools_codemode_sdk::SDK_HEADING,
            language.render_declarations(&tools)
        );
    }
    out
}

/// The first line of every generated Markdown file (the same as `codegen.rs` writes).
const PREAMBLE: &str = "<!-- Generated by `cargo xtask codegen`; do not edit. -->";

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::check::{check_coverage, error_lines, py_call_forms, read, ts_call_forms};
    use super::*;

    fn err(text: &str) -> String {
        match parse_catalog(text, true) {
            Ok(tools) => panic!("accepted {} tools", tools.len()),
            Err(e) => e,
        }
    }

    #[test]
    fn a_bad_catalog_names_the_tool_and_the_path() {
        assert!(err("{}").contains("expected a JSON array of tools, found an object"));
        assert!(err("[1]").contains("[0]: expected a tool object, found a number"));
        assert!(err(r#"[{"parameters": {}}]"#).contains("[0]: missing \"name\""));
        assert!(
            err(r#"[{"name": "", "parameters": {}}]"#)
                .contains("[0].name: a tool name cannot be empty")
        );
        assert!(err(r#"[{"name": "run_code", "parameters": {}}]"#).contains("reserved"));
        assert!(err(r#"[{"name": "a"}]"#).contains("tool \"a\" ([0]): missing \"parameters\""));
        assert!(
            err(r#"[{"name": "a", "parameters": {}, "params": 1}]"#)
                .contains("unknown key \"params\"")
        );
        assert!(
            err(r#"[{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}]"#)
                .contains("tool \"a\" ([1]): the name is already used by [0]")
        );
        assert!(
            err(r#"[{"name": "a", "description": 7, "parameters": {}}]"#)
                .contains("[0].description: expected a string, found a number")
        );
        let e = err(
            r#"[{"name": "ok", "parameters": {}}, {"name": "b", "parameters": {"type": "object", "properties": {"x": {"type": "string", "contentEncoding": "base64"}}}}]"#,
        );
        assert!(e.contains("tool \"b\" ([1]): parameters is outside"), "{e}");
        assert!(
            e.contains("[1].parameters.properties.x.contentEncoding"),
            "{e}"
        );
        let e = err(
            r#"[{"name": "c", "parameters": {}, "output": {"type": "number", "enum": [-0.0]}}]"#,
        );
        assert!(e.contains("not lossless JSON"), "{e}");
        assert!(
            e.contains("tool \"c\" ([0]): [0].output.enum[0]: negative zero"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_schemas_render_when_allowed() {
        let tools = parse_catalog(
            r##"[{"name": "b", "parameters": {"$ref": "#/x"}, "output": {"type": "string", "minLength": 1}}]"##,
            false,
        )
        .unwrap();
        let ts = Language::TypeScript.render_declarations(&tools);
        assert!(ts.contains("  b: unknown;\n"));
    }

    #[test]
    fn the_check_catalog_and_the_examples_are_valid() {
        let root = project_root();
        let catalog = load_catalog(&root.join("xtask/sdk-check/catalog.json"), false).unwrap();
        assert!(catalog.len() >= MIN_CHECK_TOOLS);
        for (file, forms) in [
            ("good.ts", ts_call_forms as fn(&str) -> Vec<String>),
            ("good.py", py_call_forms),
        ] {
            let program = read(&root.join("xtask/sdk-check").join(file)).unwrap();
            check_coverage(&catalog, &program, file, forms).unwrap();
        }
        let examples = parse_catalog(EXAMPLES, true).unwrap();
        assert!(!examples.is_empty());
    }

    #[test]
    fn the_tool_catalog_shows_schemas_and_both_sdks() {
        let md = tool_catalog_md();
        assert!(md.starts_with(PREAMBLE));
        assert!(md.contains("## Model-facing schemas"));
        assert!(md.contains("```ts\ntype JsonValue ="));
        assert!(md.contains("```python\nfrom typing import "));
        assert!(md.contains("class Tools(Protocol):"));
    }

    #[test]
    fn error_lines_are_read_from_both_checkers() {
        let tsc =
            "bad.ts(12,5): error TS2322: Type 'number' is not assignable\nsdk.ts(1,1): error X\n";
        assert_eq!(error_lines(tsc, "bad.ts(").unwrap(), BTreeSet::from([12]));
        let mypy = "bad.py:7: error: Argument 1 has incompatible type  [arg-type]\nbad.py:9: note: ToolCallError: error\n";
        assert_eq!(error_lines(mypy, "bad.py:").unwrap(), BTreeSet::from([7]));
    }
}
