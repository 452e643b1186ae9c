//! Byte-for-byte comparison with the reference outputs vendored in `tests/data/golden/`
//! (docs/decisions.md, entry 18): TypeScript and Python type text, and the SDK declaration
//! blocks.

use serde_json::Value;
use tools_codemode_sdk::{
    Language, SDK_HEADING, ToolSdkSchema, json_schema_to_py, json_schema_to_ts,
};

use crate::support::{parse, read_data};

fn cases(file: &str) -> Vec<Value> {
    match read_data(&format!("golden/{file}")) {
        Value::Array(cases) => cases,
        other => panic!("{file} is not an array: {other}"),
    }
}

#[test]
fn typescript_type_text_matches_the_reference() {
    let cases = cases("ts-types.json");
    assert!(cases.len() >= 40);
    for case in &cases {
        assert_eq!(case["fn"], "jsonSchemaToTs");
        let schema = parse(case["schema_json"].as_str().unwrap());
        let indent = usize::try_from(case["indent"].as_u64().unwrap()).unwrap();
        let expected = case["result"].as_str().unwrap();
        assert_eq!(
            json_schema_to_ts(&schema, indent),
            expected,
            "schema {schema} at indent {indent}"
        );
    }
}

#[test]
fn python_type_text_matches_the_reference() {
    let cases = cases("py-types.json");
    assert!(cases.len() >= 50);
    for case in &cases {
        assert_eq!(case["fn"], "jsonSchemaToPy");
        let schema = parse(case["schema_json"].as_str().unwrap());
        let expected = case["result"].as_str().unwrap();
        assert_eq!(json_schema_to_py(&schema), expected, "schema {schema}");
    }
}

fn tools_of(set: &Value) -> Vec<ToolSdkSchema> {
    set["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            ToolSdkSchema::new(
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
                t["parameters"].clone(),
                t["output"].clone(),
            )
        })
        .collect()
}

/// The reference's output where docs/decisions.md, entry 28, changes it: the `edge` set's
/// `broken` tool has the output schema `{"type": "string", "minLength": 1}`, outside the
/// reference's subset (so its output degraded to `unknown` / `Any`) and inside ours (so it
/// types as a string). Every other line is the reference's.
fn amended(set: &str, declarations: &str) -> String {
    // Every set: a failed call's error carries its machine code (`code`), typed in both SDKs.
    let coded = declarations
        .replace(
            "type ToolName = keyof ToolOutputMap\n\ndeclare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}",
            &format!(
                "type ToolName = keyof ToolOutputMap\n\ntype ToolErrorCode = {};\n\ndeclare class ToolCallError extends Error {{\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n  readonly code: ToolErrorCode | (string & {{}}) | undefined;\n}}",
                tools_json::ErrorCode::ALL
                    .map(|code| format!("\"{}\"", code.as_str()))
                    .join(" | ")
            ),
        )
        .replace(
            "class ToolCallError(Exception):\n    toolName: str\n",
            "class ToolCallError(Exception):\n    toolName: str\n    code: str | None\n",
        );
    assert_ne!(
        coded, declarations,
        "the error class is gone from the golden file"
    );
    let coded = typed_subscripts(&coded);
    if set != "edge" {
        return coded;
    }
    let declarations = coded.as_str();
    let amended = declarations
        .replace("  broken: unknown;", "  broken: string;")
        .replace(
            "async def broken(self, args: BrokenArgs) -> Any:",
            "async def broken(self, args: BrokenArgs) -> str:",
        );
    assert_ne!(
        amended, declarations,
        "the amended lines are gone from the golden file"
    );
    amended
}

/// Our amendment of the reference's Python SDK: a tool reached by subscript is declared as
/// a `__getitem__` typed by a `Literal` of its name (after the methods, `@overload` when
/// there are several, its description as a docstring) instead of a comment, so a checker
/// checks calls to it; the `typing` import names what that needs.
fn typed_subscripts(declarations: &str) -> String {
    if !declarations.contains("class Tools(Protocol):") {
        return declarations.to_owned();
    }
    let mut lines: Vec<&str> = declarations.lines().collect();
    let mut entries: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = lines[i].strip_prefix("    # tools[") else {
            i += 1;
            continue;
        };
        // `"name"](args: A) -> O`
        let close = rest.find("](args: ").unwrap();
        let name = &rest[..close];
        let (args, output) = rest[close + "](args: ".len()..]
            .split_once(") -> ")
            .unwrap();
        let mut entry = format!(
            "    def __getitem__(self, name: Literal[{name}]) -> Callable[[{args}], Awaitable[{output}]]:"
        );
        lines.remove(i);
        match lines.get(i).and_then(|l| l.strip_prefix("    #   ")) {
            Some(text) => {
                let doc = text.replace('\\', "\\\\").replace('"', "\\\"");
                entry.push_str(&format!("\n        \"\"\"{doc}\"\"\""));
                lines.remove(i);
            }
            None => entry.push_str(" ..."),
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        return declarations.to_owned();
    }
    let overloaded = entries.len() > 1;
    let mut text = lines.join("\n");
    let mut block = String::new();
    for entry in &entries {
        if overloaded {
            block.push_str("\n    @overload");
        }
        block.push('\n');
        block.push_str(entry);
    }
    text = text.replace(
        "class Tools(Protocol):\n    pass\n",
        "class Tools(Protocol):\n",
    );
    let at = text.rfind("\n\ntools: Tools").unwrap();
    text.insert_str(at, &block);
    // The import line, in the generator's order.
    let first = text.lines().next().unwrap().to_owned();
    let mut names: Vec<&str> = first
        .strip_prefix("from typing import ")
        .unwrap()
        .split(", ")
        .collect();
    names.extend(["Awaitable", "Callable", "Literal"]);
    if overloaded {
        names.push("overload");
    }
    let order = [
        "Any",
        "Awaitable",
        "Callable",
        "Literal",
        "NotRequired",
        "Protocol",
        "TypedDict",
        "overload",
    ];
    let mut sorted: Vec<&str> = order.into_iter().filter(|n| names.contains(n)).collect();
    sorted.dedup();
    text.replacen(
        &first,
        &format!("from typing import {}", sorted.join(", ")),
        1,
    )
}

#[test]
fn sdk_declaration_blocks_match_the_reference() {
    let sets = cases("sdk-sections.json");
    assert_eq!(sets.len(), 5);
    for set in &sets {
        let name = set["set"].as_str().unwrap();
        let tools = tools_of(set);
        for (language, key, fence) in [
            (Language::TypeScript, "typescript", "ts"),
            (Language::Python, "python", "python"),
        ] {
            let golden = &set[key];
            let expected = amended(name, golden["declarations"].as_str().unwrap());
            let expected = expected.as_str();
            assert_eq!(
                language.render_declarations(&tools),
                expected,
                "set {name}, {key}"
            );
            let section = language.render_section(&tools);
            let heading = golden["heading_line"].as_str().unwrap();
            assert_eq!(heading, SDK_HEADING);
            assert_eq!(section.lines().next(), Some(heading), "set {name}, {key}");
            let fenced = format!("\n\n```{fence}\n{expected}\n```");
            assert!(section.ends_with(&fenced), "set {name}, {key}");
            assert_eq!(golden["ends_with_fence"], true);
        }
    }
}
