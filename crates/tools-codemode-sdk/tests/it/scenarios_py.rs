//! The reference implementation's SDK generation scenarios for Python (its numbers
//! 80–98), one test each where the scenario is this crate's; the registry wiring scenarios
//! (99, 100, most of 101) belong to the registry and the runtime.

use serde_json::{Value, json};
use tools_codemode_sdk::{Language, json_schema_to_py, json_schema_to_ts};

use crate::support::{args_tool, closed, open, output_tool, py, tool};

#[test]
fn s080_the_python_mapping_table() {
    let cases = [
        (json!({"type": "string"}), "str"),
        (json!({"type": "number"}), "float"),
        (json!({"type": "integer"}), "int"),
        (json!({"type": "boolean"}), "bool"),
        (json!({"type": "null", "enum": [null]}), "None"),
        (
            json!({"type": "array", "items": {"type": "number"}}),
            "list[float]",
        ),
        (
            json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}),
            "list[Literal[\"x\", \"y\"]]",
        ),
        (json!({"type": "array"}), "list[Any]"),
        (
            closed(json!({"a": {"type": "string"}}), json!(["a"])),
            "dict[str, Any]",
        ),
        (
            json!({"type": "string", "enum": ["a", "b"], "const": "b"}),
            "Literal[\"b\"]",
        ),
    ];
    for (schema, expected) in cases {
        assert_eq!(json_schema_to_py(&schema), expected, "{schema}");
    }
}

#[test]
fn s081_python_literals_use_json_escapes() {
    let literal = |s: &str| json_schema_to_py(&json!({"type": "string", "const": s}));
    assert_eq!(literal("a\u{0}b"), "Literal[\"a\\u0000b\"]");
    assert_eq!(literal("say \"hi\"\n"), "Literal[\"say \\\"hi\\\"\\n\"]");
    assert_eq!(literal("ends\\"), "Literal[\"ends\\\\\"]");
    assert_eq!(
        literal("\u{85}\u{2028}\u{2029}"),
        "Literal[\"\u{85}\u{2028}\u{2029}\"]"
    );
}

#[test]
fn s082_big_integers_keep_every_digit() {
    let py = |v: Value| json_schema_to_py(&json!({"type": "integer", "const": v}));
    assert_eq!(
        py(json!(1_152_921_504_606_846_976u64)),
        "Literal[1152921504606846976]"
    );
    assert_eq!(
        py(json!(-1_152_921_504_606_846_976i64)),
        "Literal[-1152921504606846976]"
    );
    assert_eq!(py(json!(1e21)), "Literal[1000000000000000000000]");
    assert_eq!(
        py(json!(9_007_199_254_740_991u64)),
        "Literal[9007199254740991]"
    );
    assert_eq!(
        json_schema_to_py(&json!({"type": "number", "const": 1e-7})),
        "Literal[1e-7]"
    );
    // TypeScript keeps integers exact too (JavaScript would print 1152921504606847000).
    let ts = json_schema_to_ts(
        &json!({"type": "integer", "const": 1_152_921_504_606_846_976u64}),
        0,
    );
    assert_eq!(ts, "1152921504606846976");
}

#[test]
fn s083_the_python_sdk_shape_and_instructions() {
    let tools = [
        tool(
            "bash",
            "Run.",
            open(json!({"c": {"type": "string"}}), json!(["c"])),
            json!({"type": "string"}),
        ),
        args_tool("my-mcp.tool", json!({"type": "object", "properties": {}})),
        args_tool("class", json!({"type": "object"})),
    ];
    let section = Language::Python.render_section(&tools);
    for needle in [
        "    async def bash(self, args: BashArgs) -> str:\n        \"\"\"Run.\"\"\"",
        "    def __getitem__(self, name: Literal[\"my-mcp.tool\"]) -> Callable[[dict[str, Any]], Awaitable[str]]:",
        "    def __getitem__(self, name: Literal[\"class\"]) -> Callable[[dict[str, Any]], Awaitable[str]]:",
        "class ToolCallError(Exception):\n    toolName: str",
        "```python\n",
        "\ntools: Tools\n```",
    ] {
        assert!(section.contains(needle), "{needle:?} in {section}");
    }
    let prose = section.split("```python").next().unwrap();
    for fact in [
        "two required arguments",
        "`code`",
        "`description`",
        "body of an async Python function",
        "top-level `await`",
        "`tools` and `ToolCallError`",
        "static stubs",
        "plain dicts",
        "`FooArgs(field=1)` raises `NameError`",
        "subscript access",
        "reserved words, start with `_`",
        "asyncio.gather",
        "run alone, in the order",
        "print(...)",
        "return <value>",
        "lossless JSON",
        "toolName",
        "Images produced by tools are attached after the run",
    ] {
        assert!(prose.contains(fact), "{fact:?} missing from the prose");
    }
    assert!(!prose.contains("TypeScript"));
}

#[test]
fn s084_required_and_optional_fields() {
    let params = open(
        json!({
            "query": {"type": "string", "description": "What to search for."},
            "limit": {"type": "number", "description": "Max results."}
        }),
        json!(["query"]),
    );
    let text = py(&[tool("search", "", params, json!({"type": "string"}))]);
    assert!(
        text.starts_with("from typing import NotRequired, Protocol, TypedDict\n"),
        "{text}"
    );
    assert!(text.contains("    # What to search for.\n    query: str\n    # Max results.\n    limit: NotRequired[float]\n"), "{text}");
}

#[test]
fn s085_a_malformed_parameter_schema_and_a_closed_output() {
    let params = json!({"type": "object", "description": 7, "properties": {}});
    let output = closed(json!({"ok": {"type": "boolean"}}), json!(["ok"]));
    let text = py(&[tool("1st-tool", "", params, output)]);
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"1st-tool\"]) -> Callable[[Any], Awaitable[Tool1stToolOutput]]: ...\n"),
        "{text}"
    );
    assert!(
        text.contains("class Tool1stToolOutput(TypedDict):\n    ok: bool\n"),
        "{text}"
    );
}

#[test]
fn s086_no_required_list_and_enum_fields() {
    let params = closed(
        json!({"a": {"type": "string"}, "b": {"type": "integer"}}),
        json!([]),
    );
    let text = py(&[args_tool("t", params)]);
    assert!(
        text.contains("    a: NotRequired[str]\n    b: NotRequired[int]\n"),
        "{text}"
    );
    let params = closed(
        json!({"mode": {"type": "string", "enum": ["fast", "slow"]}}),
        json!(["mode"]),
    );
    let text = py(&[args_tool("t", params)]);
    assert!(
        text.starts_with("from typing import Literal, Protocol, TypedDict\n"),
        "{text}"
    );
    assert!(
        text.contains("    mode: Literal[\"fast\", \"slow\"]\n"),
        "{text}"
    );
}

#[test]
fn s087_nested_classes_are_declared_dependency_first() {
    // The reference's third worked Python SDK example, byte for byte.
    let workflow = tool(
        "workflow",
        "Run a workflow.",
        open(
            json!({"meta": {
                "type": "object", "additionalProperties": false, "description": "Identity block.",
                "properties": {
                    "name": {"type": "string", "description": "Short name."},
                    "phases": {"type": "array", "items": closed(
                        json!({"title": {"type": "string", "description": "Phase title."}}),
                        json!(["title"]),
                    )}
                },
                "required": ["name"]
            }}),
            json!(["meta"]),
        ),
        json!({"type": "string"}),
    );
    let dash = tool(
        "my-tool",
        "Dash form.",
        open(json!({"x": {"type": "string"}}), json!(["x"])),
        json!({"type": "string"}),
    );
    let dot = tool(
        "my.tool",
        "Dot \"quoted\" form\\",
        open(json!({"y": {"type": "string"}}), json!(["y"])),
        json!({"type": "string"}),
    );
    let expected = r#"from typing import Awaitable, Callable, Literal, NotRequired, Protocol, TypedDict, overload

class ToolCallError(Exception):
    toolName: str
    code: str | None

class MyToolArgs(TypedDict):
    x: str
    # Additional keys beyond those declared are allowed.

class MyToolArgs2(TypedDict):
    y: str
    # Additional keys beyond those declared are allowed.

class WorkflowArgsMetaPhases(TypedDict):
    # Phase title.
    title: str

class WorkflowArgsMeta(TypedDict):
    # Short name.
    name: str
    phases: NotRequired[list[WorkflowArgsMetaPhases]]

class WorkflowArgs(TypedDict):
    # Identity block.
    meta: WorkflowArgsMeta
    # Additional keys beyond those declared are allowed.

class Tools(Protocol):
    async def workflow(self, args: WorkflowArgs) -> str:
        """Run a workflow."""
    @overload
    def __getitem__(self, name: Literal["my-tool"]) -> Callable[[MyToolArgs], Awaitable[str]]:
        """Dash form."""
    @overload
    def __getitem__(self, name: Literal["my.tool"]) -> Callable[[MyToolArgs2], Awaitable[str]]:
        """Dot \"quoted\" form\\"""

tools: Tools"#;
    assert_eq!(py(&[workflow, dash, dot]), expected);
}

#[test]
fn s088_unions_of_objects_number_their_branches() {
    let union = json!({"oneOf": [
        closed(json!({"a": {"type": "string"}}), json!(["a"])),
        closed(json!({"b": {"type": "string"}}), json!(["b"])),
    ]});
    let text = py(&[output_tool("act", union.clone())]);
    assert!(
        text.contains(
            "class ActOutput1(TypedDict):\n    a: str\n\nclass ActOutput2(TypedDict):\n    b: str\n"
        ),
        "{text}"
    );
    assert!(text.contains("-> ActOutput1 | ActOutput2: ..."), "{text}");
    let text = py(&[args_tool("x", union.clone())]);
    assert!(text.contains("args: XArgs1 | XArgs2"), "{text}");
    assert_eq!(json_schema_to_py(&union), "dict[str, Any] | dict[str, Any]");
}

#[test]
fn s089_class_name_collisions_get_numbers() {
    let text = py(&[
        args_tool(
            "my-tool",
            closed(json!({"x": {"type": "string"}}), json!([])),
        ),
        args_tool(
            "my.tool",
            closed(json!({"y": {"type": "string"}}), json!([])),
        ),
    ]);
    assert!(
        text.contains("class MyToolArgs(TypedDict):")
            && text.contains("class MyToolArgs2(TypedDict):"),
        "{text}"
    );
    let nested = |f: &str| {
        (
            f.to_owned(),
            closed(json!({"v": {"type": "string"}}), json!([])),
        )
    };
    let properties: serde_json::Map<String, Value> = ["phase", "phase2", "Phase"]
        .into_iter()
        .map(nested)
        .collect();
    let text = py(&[args_tool(
        "foo",
        closed(Value::Object(properties), json!([])),
    )]);
    assert!(text.contains("    phase: NotRequired[FooArgsPhase]\n    phase2: NotRequired[FooArgsPhase2]\n    Phase: NotRequired[FooArgsPhase3]\n"), "{text}");
}

#[test]
fn s091_inexpressible_field_names_degrade_the_object() {
    for field in [
        "a-b",
        "\u{FB01}eld",
        "__token",
        "__debug__",
        "class",
        "a\u{200C}b",
    ] {
        let params = closed(json!({ field: {"type": "string"} }), json!([]));
        let text = py(&[args_tool("t", params)]);
        assert!(
            text.contains("async def t(self, args: dict[str, Any]) -> str: ..."),
            "{field}: {text}"
        );
        assert!(!text.contains("TypedDict"), "{field}: {text}");
    }
    for field in ["__meta__", "match", "case", "type", "_", "路径", "深度"] {
        let params = closed(json!({ field: {"type": "string"} }), json!([]));
        let text = py(&[args_tool("t", params)]);
        assert!(
            text.contains(&format!("    {field}: NotRequired[str]\n")),
            "{field}: {text}"
        );
    }
    let params = closed(
        json!({"opts": closed(json!({"深度": {"type": "integer"}}), json!([]))}),
        json!([]),
    );
    let text = py(&[args_tool("搜索", params)]);
    assert!(text.contains("class 搜索ArgsOpts(TypedDict):"), "{text}");
    assert!(
        text.contains("    async def 搜索(self, args: 搜索Args) -> str: ..."),
        "{text}"
    );
}

#[test]
fn s092_tool_names_pick_the_method_or_the_comment_form() {
    let empty = || json!({"type": "object", "properties": {}});
    let some = || closed(json!({"a": {"type": "string"}}), json!([]));
    let tools = [
        args_tool("_foo", empty()),
        args_tool("__meta__", empty()),
        args_tool("__token", empty()),
        args_tool("\u{FB01}nd", some()),
        args_tool("class", some()),
    ];
    let text = py(&tools);
    // Only subscript tools: typed `__getitem__` overloads, no `pass`.
    assert!(
        text.contains("class Tools(Protocol):\n    @overload\n    def __getitem__"),
        "{text}"
    );
    for name in ["_foo", "__meta__", "__token", "\u{FB01}nd"] {
        assert!(
            text.contains(&format!(
                "    @overload\n    def __getitem__(self, name: Literal[\"{name}\"]) -> Callable[["
            )),
            "{name}: {text}"
        );
    }
    assert!(text.contains("class FIndArgs(TypedDict):"), "{text}");
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"class\"]) -> Callable[[ClassArgs], Awaitable[str]]:"),
        "{text}"
    );
    // Our portability rule (README): ZWNJ is not an identifier character for the SDK, so a
    // name with one is reached by subscript, and it splits class-name parts.
    let text = py(&[
        args_tool("a\u{200C}b", some()),
        args_tool("\u{200C}b", some()),
    ]);
    assert!(
        text.contains("class ABArgs(TypedDict):") && text.contains("class BArgs(TypedDict):"),
        "{text}"
    );
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"a\u{200C}b\"]) -> Callable[[ABArgs], Awaitable[str]]:"),
        "{text}"
    );
    // A tool named like a type the protocol's annotations use would shadow it.
    let text = py(&[
        args_tool("list", empty()),
        args_tool("str", empty()),
        args_tool("zeta", empty()),
    ]);
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"list\"]) -> Callable[[dict[str, Any]], Awaitable[str]]:"),
        "{text}"
    );
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"str\"]) -> Callable[[dict[str, Any]], Awaitable[str]]:"),
        "{text}"
    );
    assert!(
        text.contains("    async def zeta(self, args: dict[str, Any]) -> str: ..."),
        "{text}"
    );
    let text = py(&[args_tool("FooArgs", empty()), args_tool("foo", some())]);
    assert!(
        text.contains("    def __getitem__(self, name: Literal[\"FooArgs\"]) -> Callable[[dict[str, Any]], Awaitable[str]]:"),
        "{text}"
    );
}

#[test]
fn s093_unicode_normalisation_at_joins() {
    let some = || closed(json!({"a": {"type": "string"}}), json!([]));
    let text = py(&[args_tool("\u{301}abc", some())]);
    assert!(
        text.contains("class Too\u{13A}abcArgs(TypedDict):"),
        "{text}"
    );
    // A field whose segment starts with a trailing jamo composes with the parent's syllable.
    let inner = |v: &str| closed(json!({ v: {"type": "string"} }), json!([]));
    let params = closed(
        json!({"\u{AC00}": closed(json!({"\u{11A8}": inner("y")}), json!([])), "\u{AC01}": inner("z")}),
        json!([]),
    );
    let text = py(&[args_tool("x", params)]);
    assert!(
        text.contains(
            "class XArgs\u{AC00}(TypedDict):\n    \u{11A8}: NotRequired[XArgs\u{AC01}]\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("class XArgs\u{AC01}(TypedDict):\n    y: "),
        "{text}"
    );
    assert!(
        text.contains("class XArgs\u{AC01}2(TypedDict):\n    z: "),
        "{text}"
    );
    let deseret = format!("a{}", "\u{10400}".repeat(100));
    let text = py(&[args_tool(&deseret, some())]);
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("class ")?.strip_suffix("(TypedDict):"))
        .expect("a class");
    assert_eq!(name.encode_utf16().count(), 119, "{name}");
}

#[test]
fn s094_empty_objects() {
    let closed_empty = json!({"type": "object", "additionalProperties": false});
    let closed_empty_props =
        json!({"type": "object", "additionalProperties": false, "properties": {}});
    let text = py(&[
        output_tool("a", closed_empty),
        output_tool("b", closed_empty_props),
    ]);
    assert!(
        text.contains("class AOutput(TypedDict):\n    pass\n"),
        "{text}"
    );
    assert!(
        text.contains("class BOutput(TypedDict):\n    pass\n"),
        "{text}"
    );
    let text = py(&[output_tool("a", json!({"type": "object"}))]);
    assert!(text.contains("-> dict[str, Any]: ..."), "{text}");
    let text = py(&[args_tool(
        "a",
        open(json!({"x": {"type": "string"}}), json!([])),
    )]);
    assert!(
        text.contains("    # Additional keys beyond those declared are allowed.\n"),
        "{text}"
    );
    let text = py(&[args_tool(
        "a",
        closed(json!({"x": {"type": "string"}}), json!([])),
    )]);
    assert!(!text.contains("Additional keys"), "{text}");
}

#[test]
fn s095_docstrings_are_method_bodies() {
    let text = py(&[
        tool(
            "a",
            "Does a.",
            json!({"type": "object"}),
            json!({"type": "string"}),
        ),
        tool(
            "b",
            "   ",
            json!({"type": "object"}),
            json!({"type": "string"}),
        ),
        tool(
            "c",
            "",
            json!({"type": "object"}),
            json!({"type": "string"}),
        ),
        tool(
            "_d",
            " \n ",
            json!({"type": "object"}),
            json!({"type": "string"}),
        ),
    ]);
    assert!(
        text.contains(
            "    async def a(self, args: dict[str, Any]) -> str:\n        \"\"\"Does a.\"\"\"\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    async def b(self, args: dict[str, Any]) -> str: ...\n"),
        "{text}"
    );
    assert!(
        text.contains("    async def c(self, args: dict[str, Any]) -> str: ...\n"),
        "{text}"
    );
    assert!(
        text.ends_with("    def __getitem__(self, name: Literal[\"_d\"]) -> Callable[[dict[str, Any]], Awaitable[str]]: ...\n\ntools: Tools"),
        "{text}"
    );
    assert_eq!(text.matches("\"\"\"").count(), 2, "{text}");
    for line in text.lines().filter(|l| l.contains("\"\"\"")) {
        assert!(line.starts_with("        \"\"\""), "{line}");
    }
}

#[test]
fn s096_protocol_body_order_and_pass() {
    let text = py(&[
        args_tool("z", json!({"type": "object"})),
        args_tool("a-tool", json!({"type": "object"})),
    ]);
    assert!(
        // Methods first, then the subscript tools' `__getitem__` (overloads stay together).
        text.find("async def z") < text.find("Literal[\"a-tool\"]"),
        "{text}"
    );
    assert!(!text.contains("    pass"), "{text}");
    let text = py(&[]);
    assert_eq!(
        text,
        "from typing import Protocol\n\nclass ToolCallError(Exception):\n    toolName: str\n    code: str | None\n\nclass Tools(Protocol):\n    pass\n\ntools: Tools"
    );
}

/// `depth` arrays around `leaf`, built by hand.
fn arrays(depth: usize, leaf: Value) -> Value {
    let mut schema = leaf;
    for _ in 0..depth {
        schema = crate::support::object(vec![("type", json!("array")), ("items", schema)]);
    }
    schema
}

#[test]
fn s097_list_nesting_is_capped_at_180() {
    let x = || json!({"type": "string", "const": "x"});
    let args = |schema: Value| {
        let text = py(&[args_tool("t", schema)]);
        text.lines()
            .find(|l| l.contains("async def t"))
            .unwrap()
            .to_owned()
    };
    let line = args(arrays(180, x()));
    assert_eq!(line.matches('[').count(), 181, "{line}");
    assert!(line.contains("Literal[\"x\"]"));
    let line = args(arrays(181, x()));
    assert_eq!(line.matches("list[").count(), 180);
    assert!(line.contains("list[Any]]"));
    let mut union = arrays(180, x());
    for _ in 0..3 {
        union = json!({"oneOf": [union, {"type": "null"}]});
    }
    assert_eq!(args(union).matches('[').count(), 181);
    let text = py(&[args_tool(
        "t",
        closed(json!({"f": arrays(200, x())}), json!(["f"])),
    )]);
    let field = text.lines().find(|l| l.starts_with("    f: ")).unwrap();
    assert_eq!(field.matches("list[").count(), 179);
    assert!(field.ends_with(&format!("list[Any{}", "]".repeat(179))));
    assert_eq!(
        json_schema_to_py(&arrays(179, json!({"type": "string"}))),
        format!("{}str{}", "list[".repeat(179), "]".repeat(179))
    );
}

#[test]
fn s098_description_escaping() {
    let desc = |d: &str| {
        let params = closed(
            json!({"f": {"type": "string", "description": d}}),
            json!([]),
        );
        py(&[
            tool("m", d, params.clone(), json!({"type": "string"})),
            tool("_s", d, params, json!({"type": "string"})),
        ])
    };
    let text = desc("ends in a quote\"");
    assert!(
        text.contains("        \"\"\"ends in a quote\\\"\"\"\""),
        "{text}"
    );
    assert!(text.contains("    # ends in a quote\"\n"), "{text}");
    let text = desc("trailing\\");
    assert!(
        text.contains("        \"\"\"trailing\\\\\"\"\"\n"),
        "{text}"
    );
    // The subscript tool's `__getitem__` gets the same docstring as the method.
    assert_eq!(
        text.matches("        \"\"\"trailing\\\\\"\"\"\n").count(),
        2,
        "{text}"
    );
    let text = desc("contains \"\"\" triple");
    assert!(
        text.contains("\"\"\"contains \\\"\\\"\\\" triple\"\"\""),
        "{text}"
    );
    let text = desc("nul\u{0} bel\u{7} esc\u{1b} del\u{7f} csi\u{9b} nel\u{85}");
    assert!(
        text.contains(
            "\"\"\"nul\\\\x00 bel\\\\x07 esc\\\\x1b del\\\\x7f csi\\\\x9b nel\\\\x85\"\"\""
        ),
        "{text}"
    );
    assert!(
        text.contains("    # nul\\x00 bel\\x07 esc\\x1b del\\x7f csi\\x9b nel\\x85\n"),
        "{text}"
    );
    let text = desc("tab\tlf\ncr\rnbsp\u{A0}end zw\u{200B}sp \u{1F600}");
    assert!(
        text.contains("    # tab lf cr nbsp end zw\u{200B}sp \u{1F600}\n"),
        "{text}"
    );
    let text = desc(" \u{85} ");
    assert!(text.contains("    # \\x85\n"), "{text}");
}
