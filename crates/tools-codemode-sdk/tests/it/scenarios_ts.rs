//! The reference implementation's SDK generation scenarios for TypeScript (its numbers
//! 70–79), one test each where the scenario is this crate's.

use serde_json::{Value, json};
use tools_codemode_sdk::{Language, json_schema_to_py, json_schema_to_ts};

use crate::support::{closed, open, output_tool, tool, ts};

#[test]
fn s070_the_typescript_mapping_table() {
    let cases = [
        (json!({"type": "string"}), "string"),
        (json!({"type": "integer"}), "number"),
        (
            json!({"type": "string", "enum": ["a", "b"], "const": "a"}),
            "\"a\"",
        ),
        (
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            "string | null",
        ),
        (
            json!({"type": "array", "items": {"type": "number"}}),
            "number[]",
        ),
        (json!({"type": "array"}), "JsonValue[]"),
        (json!({"type": "object"}), "Record<string, JsonValue>"),
        (
            json!({"type": "object", "properties": {}}),
            "Record<string, JsonValue>",
        ),
        (
            json!({"type": "object", "additionalProperties": false}),
            "Record<string, never>",
        ),
        (
            json!({"type": "object", "additionalProperties": false, "properties": {}}),
            "Record<string, never>",
        ),
        (json!({}), "JsonValue"),
    ];
    for (schema, expected) in cases {
        assert_eq!(json_schema_to_ts(&schema, 0), expected, "{schema}");
    }
}

#[test]
fn s071_indent_moves_every_line_but_the_first() {
    let schema = open(json!({"a": {"type": "string"}}), json!(["a"]));
    assert_eq!(
        json_schema_to_ts(&schema, 0),
        "{\n  a: string;\n} & Record<string, JsonValue>"
    );
    assert_eq!(
        json_schema_to_ts(&schema, 2),
        "{\n      a: string;\n    } & Record<string, JsonValue>"
    );
}

#[test]
fn s072_anything_outside_the_subset_is_unknown() {
    for schema in [
        json!(null),
        json!(42),
        json!("s"),
        json!({"oneOf": [{"type": "string"}]}),
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#"}}}}),
        json!({"type": "object", "properties": 7}),
        json!({"type": "string", "enum": [1, 2]}),
        json!({"type": "string", "enum": []}),
        json!({"type": "object", "properties": {"a": {}}, "required": [7]}),
        json!({"type": "object", "properties": {"weird": 42}}),
        json!({"type": "number", "const": -0.0}),
    ] {
        assert_eq!(json_schema_to_ts(&schema, 0), "unknown", "{schema}");
        assert_eq!(json_schema_to_py(&schema), "Any", "{schema}");
    }
}

#[test]
fn s073_comment_terminators_in_descriptions_are_escaped() {
    let schema = closed(
        json!({"a": {"type": "string", "description": "globs like packages/*/tool-*/ over here"}}),
        json!([]),
    );
    let text = json_schema_to_ts(&schema, 0);
    assert!(text.contains("tool-*\\/ over"), "{text}");
    assert!(!text.contains("tool-*/ over"), "{text}");
}

#[test]
fn s075_parenthesisation_corner_cases() {
    let array = |items: Value| json_schema_to_ts(&json!({"type": "array", "items": items}), 0);
    assert_eq!(
        array(closed(
            json!({"a": {"type": "string", "description": "x | y"}}),
            json!([])
        )),
        "({\n  /** x | y */\n  a?: string;\n})[]"
    );
    assert_eq!(
        array(json!({"type": "string", "enum": ["a|b"]})),
        "(\"a|b\")[]"
    );
    assert_eq!(
        array(json!({"type": "string", "const": "a&b"})),
        "(\"a&b\")[]"
    );
    assert_eq!(
        array(json!({"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "null"}]}})),
        "((string | null)[])[]"
    );
    assert_eq!(array(json!({"type": "boolean", "enum": [true]})), "true[]");
}

#[test]
fn s076_keys_and_doc_lines() {
    let schema = closed(
        json!({
            "my-key": {"type": "string"}, "1abc": {"type": "string"}, "ünï": {"type": "string"},
            "": {"type": "string"}, "$ok": {"type": "string"}, "_x1": {"type": "string"},
            "class": {"type": "string"},
            "blank": {"type": "string", "description": " \t\n "},
            "empty": {"type": "string", "description": ""},
            "bom": {"type": "string", "description": "a\u{FEFF}\u{FEFF}b"},
            "nel": {"type": "string", "description": "a\u{85}b"}
        }),
        json!([]),
    );
    let text = json_schema_to_ts(&schema, 0);
    for line in [
        "  \"my-key\"?: string;",
        "  \"1abc\"?: string;",
        "  \"ünï\"?: string;",
        "  \"\"?: string;",
        "  $ok?: string;",
        "  _x1?: string;",
        "  class?: string;",
        "  /** a b */\n  bom?: string;",
        "  /** a\u{85}b */\n  nel?: string;",
    ] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    // docs/decisions.md, entry 19: a blank description is absent (the reference wrote `/**  */`).
    assert!(
        text.contains("  class?: string;\n  blank?: string;\n  empty?: string;\n"),
        "{text}"
    );
    assert!(!text.contains("/**  */"));
}

fn bash() -> tools_codemode_sdk::ToolSdkSchema {
    tool(
        "bash",
        "Run a shell command.",
        open(json!({"command": {"type": "string"}}), json!(["command"])),
        closed(
            json!({"exitCode": {"type": "integer"}}),
            json!(["exitCode"]),
        ),
    )
}

fn exotic() -> tools_codemode_sdk::ToolSdkSchema {
    tool(
        "my-mcp.tool",
        "Exotic name.",
        json!({"type": "object", "properties": {}}),
        json!({"type": "array", "items": {"type": "string"}}),
    )
}

#[test]
fn s077_the_typescript_sdk_declares_everything_a_program_needs() {
    let text = ts(&[exotic(), bash()]);
    for needle in [
        "interface ToolArgsMap {",
        "interface ToolOutputMap {",
        "type ToolName = keyof ToolOutputMap",
        "declare class ToolCallError extends Error {",
        "  readonly toolName: ToolName;",
        "declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}",
        "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }",
        "  \"my-mcp.tool\": string[];",
        "    exitCode: number;",
        "  /** Run a shell command. */",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    assert!(text.find("  bash: {") < text.find("  \"my-mcp.tool\":"));
}

#[test]
fn s078_the_typescript_instructions_carry_the_facts() {
    let section = Language::TypeScript.render_section(&[bash()]);
    let prose = section.split("```ts").next().unwrap();
    for fact in [
        "## Writing code for run_code",
        "two required arguments",
        "`code`",
        "`description`",
        "body of an async TypeScript function",
        "erasable syntax",
        "advisory",
        "await tools.name(args)",
        "tools[\"my-server.tool\"](args)",
        "lossless JSON",
        "ToolCallError",
        "toolName",
        "Promise.all",
        "run alone, in the order",
        "console.log",
        "return",
        "Images produced by tools are attached after the run",
    ] {
        assert!(prose.contains(fact), "{fact:?} missing from the prose");
    }
    assert!(section.ends_with("\n```"));
}

#[test]
fn s079_output_is_deterministic_and_order_independent() {
    let a = output_tool("a", json!({"type": "string"}));
    let b = output_tool("b", json!({"type": "number"}));
    for language in Language::ALL {
        let ab = language.render_section(&[a.clone(), b.clone()]);
        let ba = language.render_section(&[b.clone(), a.clone()]);
        assert_eq!(ab, ba);
        assert_eq!(ab, language.render_section(&[a.clone(), b.clone()]));
    }
    // Duplicate names keep their input order (a stable sort).
    let first = output_tool("dup", json!({"type": "string"}));
    let second = output_tool("dup", json!({"type": "number"}));
    let text = ts(&[first, second]);
    assert!(
        text.find("  dup: string;") < text.find("  dup: number;"),
        "{text}"
    );
    let empty = ts(&[]);
    assert!(empty.contains("interface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n"));
}
