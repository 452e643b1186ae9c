//! The tool-search helpers of the SDK (`tools.$search` / `tools.$describe`,
//! `tools.search_tools` / `tools.describe_tool`) and the one-line tool signatures they
//! return: declared only when asked for, exactly, in both languages.

use serde_json::{Value, json};
use tools_codemode_sdk::{
    DEFAULT_SEARCH_LIMIT, Language, MAX_SEARCH_LIMIT, SdkOptions, ToolSdkSchema,
};

use crate::support::{args_tool, closed, tool};

fn search() -> SdkOptions {
    SdkOptions::new().with_tool_search(true)
}

fn bash() -> ToolSdkSchema {
    tool(
        "bash",
        "Run a command.",
        closed(json!({"cmd": {"type": "string"}}), json!(["cmd"])),
        json!({"type": "string"}),
    )
}

fn weather() -> ToolSdkSchema {
    tool(
        "get_weather",
        "Current weather for a city.",
        closed(
            json!({
                "city": {"type": "string", "description": "City name,\n  in English."},
                "units": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "array", "items": {"type": "object", "properties": {"d": {"type": "integer"}}, "required": ["d"]}}
            }),
            json!(["city"]),
        ),
        closed(json!({"temp": {"type": "number"}}), json!(["temp"])),
    )
}

#[test]
fn without_tool_search_nothing_changes() {
    let tools = [bash(), weather()];
    for language in Language::ALL {
        let plain = language.render_section(&tools);
        assert_eq!(
            language.render_section_with(&tools, SdkOptions::new()),
            plain
        );
        assert_eq!(
            language.render_declarations_with(&tools, SdkOptions::new()),
            language.render_declarations(&tools)
        );
        for absent in [
            "$search",
            "$describe",
            "search_tools",
            "describe_tool",
            "FoundTool",
            "Not every tool",
        ] {
            assert!(!plain.contains(absent), "{absent:?} in {plain}");
        }
    }
}

#[test]
fn typescript_declares_the_helpers_after_the_tools() {
    let text = Language::TypeScript.render_declarations_with(&[bash()], search());
    let expected_tail = format!(
        "declare class ToolCallError extends Error {{\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n  readonly code: ToolErrorCode | (string & {{}}) | undefined;\n}}\n\n\
interface FoundTool {{\n  name: string;\n  description: string;\n  /** The tool's signature, written like the declarations above. */\n  signature: string;\n}}\n\n\
interface ToolDescription extends FoundTool {{\n  /** The JSON Schema of the tool's arguments. */\n  parameters: {{ [key: string]: JsonValue }};\n}}\n\n\
declare const tools: {{\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}} & {{\n  \
/** Finds tools not declared above by what they do, best match first: at most `limit` (default {DEFAULT_SEARCH_LIMIT}, at most {MAX_SEARCH_LIMIT}). Call one as `await tools[hit.name](args)`. */\n  \
$search(query: string, options?: {{ limit?: number }}): Promise<FoundTool[]>;\n  \
/** Describes a tool the program may call (declared above or found by `$search`); `null` for any other name. */\n  \
$describe(name: string): Promise<ToolDescription | null>;\n}}"
    );
    assert!(text.ends_with(&expected_tail), "{text}");
    // The tools are declared as without search.
    let plain = Language::TypeScript.render_declarations(&[bash()]);
    let head = plain.split("declare class ToolCallError").next().unwrap();
    assert!(text.starts_with(head));
    assert!(text.contains("  bash: {\n    cmd: string;\n  };\n"));
}

#[test]
fn python_declares_the_helper_classes_and_methods() {
    let text = Language::Python.render_declarations_with(&[bash()], search());
    assert!(
        text.starts_with("from typing import Any, Protocol, TypedDict\n\n"),
        "{text}"
    );
    let expected = [
        "class BashArgs(TypedDict):",
        "    cmd: str",
        "",
        "class FoundTool(TypedDict):",
        "    name: str",
        "    description: str",
        "    # The tool's signature, written like the declarations below.",
        "    signature: str",
        "",
        "class ToolDescription(FoundTool):",
        "    # The JSON Schema of the tool's arguments.",
        "    parameters: dict[str, Any]",
        "",
        "class Tools(Protocol):",
        "    async def bash(self, args: BashArgs) -> str:",
        "        \"\"\"Run a command.\"\"\"",
        &format!("    async def search_tools(self, query: str, limit: int = {DEFAULT_SEARCH_LIMIT}) -> list[FoundTool]:"),
        &format!("        \"\"\"Finds tools not declared here by what they do, best match first: at most `limit` (at most {MAX_SEARCH_LIMIT}). Call one as `await tools[hit[\"name\"]](args)`.\"\"\""),
        "    async def describe_tool(self, name: str) -> ToolDescription | None:",
        "        \"\"\"Describes a tool the program may call (declared here or found by `search_tools`); None for any other name.\"\"\"",
        "",
        "tools: Tools",
    ]
    .join("\n");
    assert!(text.ends_with(&expected), "{text}");
    // With no tool at all, the protocol holds the helpers only (no `pass`).
    let empty = Language::Python.render_declarations_with(&[], search());
    assert!(!empty.contains("    pass\n"), "{empty}");
    assert!(empty.contains("class Tools(Protocol):\n    async def search_tools(self"));
}

#[test]
fn the_instructions_gain_one_paragraph_before_the_tool_list() {
    for (language, needles) in [
        (
            Language::TypeScript,
            [
                "`await tools.$search(\"what you need\")`",
                "`const [hit] = await tools.$search(\"weather\"); await tools[hit.name](args)`",
                "`await tools.$describe(name)`",
            ],
        ),
        (
            Language::Python,
            [
                "`await tools.search_tools(\"what you need\")`",
                "`await tools[hit[\"name\"]](args)`",
                "`await tools.describe_tool(name)`",
            ],
        ),
    ] {
        let plain = language.render_section(&[bash()]);
        let section = language.render_section_with(&[bash()], search());
        let paragraph = language.tool_search().instructions;
        let plain_prose = plain
            .split("\n\nThe tools available to the program:")
            .next();
        let prose = section
            .split("\n\nThe tools available to the program:")
            .next();
        assert_eq!(
            prose.map(str::to_owned),
            plain_prose.map(|p| format!("{p}\n\n{paragraph}"))
        );
        for needle in needles {
            assert!(paragraph.contains(needle), "{needle:?} in {paragraph}");
        }
        assert!(paragraph.contains("as values"));
        assert!(section.ends_with("\n```"));
    }
}

#[test]
fn a_tool_named_like_a_helper_is_left_out_when_the_helper_is_declared() {
    let clash_ts = args_tool("$search", json!({"type": "object"}));
    let text = Language::TypeScript.render_declarations_with(&[bash(), clash_ts.clone()], search());
    assert!(
        !text.contains("\"$search\"") && !text.contains("  $search: "),
        "{text}"
    );
    // Without tool search the same tool is an ordinary tool.
    let plain = Language::TypeScript.render_declarations(&[bash(), clash_ts]);
    assert!(
        plain.contains("  $search: Record<string, JsonValue>;"),
        "{plain}"
    );

    let clash_py = args_tool("describe_tool", json!({"type": "object"}));
    let text = Language::Python.render_declarations_with(&[bash(), clash_py.clone()], search());
    assert_eq!(text.matches("def describe_tool(").count(), 1, "{text}");
    assert!(text.contains("    async def describe_tool(self, name: str)"));
    let plain = Language::Python.render_declarations(&[clash_py]);
    assert!(plain.contains("    async def describe_tool(self, args: dict[str, Any]) -> str: ..."));
}

#[test]
fn a_python_tool_named_like_a_helper_class_is_reached_by_subscript() {
    let text = Language::Python.render_declarations_with(
        &[args_tool("FoundTool", json!({"type": "object"}))],
        search(),
    );
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"FoundTool\"]) -> Callable[[dict[str, Any]], Awaitable[str]]: ..."),
        "{text}"
    );
    assert_eq!(text.matches("class FoundTool(").count(), 1);
}

#[test]
fn typescript_signatures_are_the_declared_types_on_one_line() {
    assert_eq!(
        Language::TypeScript.render_signature(&weather()),
        "get_weather(args: { /** City name, in English. */ city: string; units?: \"c\" | \"f\"; \
         days?: ({ d: number; } & Record<string, JsonValue>)[]; }): Promise<{ temp: number; }>"
    );
    assert_eq!(
        Language::TypeScript.render_signature(&args_tool(
            "my-server.tool",
            json!({"type": "object", "properties": {"q": {"type": "string", "enum": ["a\nb"]}}})
        )),
        "\"my-server.tool\"(args: { q?: \"a\\nb\"; } & Record<string, JsonValue>): Promise<string>"
    );
    // A schema outside the subset reads `unknown`, as in the SDK.
    assert_eq!(
        Language::TypeScript.render_signature(&tool("odd", "", json!({"$ref": "#/x"}), json!({}))),
        "odd(args: unknown): Promise<JsonValue>"
    );
}

#[test]
fn python_signatures_inline_their_objects() {
    assert_eq!(
        Language::Python.render_signature(&weather()),
        "async def get_weather(args: TypedDict[{\"city\": str, \"units\": NotRequired[Literal[\"c\", \"f\"]], \
         \"days\": NotRequired[list[TypedDict[{\"d\": int}]]]}]) -> TypedDict[{\"temp\": float}]"
    );
    assert_eq!(
        Language::Python.render_signature(&tool(
            "my-server.tool",
            "",
            json!({"type": "object", "properties": {"a-b": {"type": "number", "enum": [1.5]}}}),
            json!({"type": "object", "additionalProperties": false}),
        )),
        "tools[\"my-server.tool\"]: Callable[[TypedDict[{\"a-b\": NotRequired[float]}]], Awaitable[TypedDict[{}]]]"
    );
    assert_eq!(
        Language::Python.render_signature(&tool(
            "open",
            "",
            json!({"type": "object"}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
        )),
        "async def open(args: dict[str, Any]) -> str | None"
    );
}

#[test]
fn a_5000_deep_schema_signs_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let mut schema = json!({"type": "string"});
            for _ in 0..5_000 {
                let mut properties = serde_json::Map::new();
                properties.insert("a".to_owned(), schema);
                schema = Value::Object(
                    [
                        ("type".to_owned(), json!("object")),
                        ("properties".to_owned(), Value::Object(properties)),
                    ]
                    .into_iter()
                    .collect(),
                );
            }
            let deep = ToolSdkSchema::new("deep", "", schema, json!({}));
            let ts = Language::TypeScript.render_signature(&deep);
            let py = Language::Python.render_signature(&deep);
            drop(deep);
            (ts, py)
        })
        .unwrap();
    let (ts, py) = handle.join().unwrap();
    assert!(!ts.contains('\n') && !py.contains('\n'));
    assert_eq!(ts.matches("a?: ").count(), 5_000);
    assert_eq!(py.matches("\"a\": NotRequired[").count(), 5_000);
}
