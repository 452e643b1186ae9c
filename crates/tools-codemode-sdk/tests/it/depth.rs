//! Depth and size: schemas thousands of levels deep render on a 2 MiB thread stack in a
//! debug build (docs/decisions.md, entry 16), and the text grows linearly with the depth.

use serde_json::{Value, json};
use tools_codemode_sdk::{Language, ToolSdkSchema, json_schema_to_py, json_schema_to_ts};
use tools_json::drop_deep;

use crate::support::{object, py, tool, ts};

const STACK: usize = 2 * 1024 * 1024;

/// Runs `f` on a thread with a 2 MiB stack and propagates its panic, if any.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .expect("spawn");
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

/// `oneOf: [oneOf: [… string …, null], null]`, `depth` levels.
fn nullable_chain(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = object(vec![(
            "oneOf",
            Value::Array(vec![schema, json!({"type": "null"})]),
        )]);
    }
    schema
}

/// A chain of closed single-field objects, `depth` levels, around a string.
fn object_chain(depth: usize, field: &str) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = object(vec![
            ("type", json!("object")),
            ("additionalProperties", json!(false)),
            ("properties", object(vec![(field, schema)])),
            ("required", json!([field])),
        ]);
    }
    schema
}

/// `depth` nested arrays around `leaf`.
fn array_chain(depth: usize, leaf: Value) -> Value {
    let mut schema = leaf;
    for _ in 0..depth {
        schema = object(vec![("type", json!("array")), ("items", schema)]);
    }
    schema
}

#[test]
fn a_5000_deep_union_renders_linearly_on_a_small_stack() {
    on_small_stack(|| {
        let schema = nullable_chain(5_000);
        let text = json_schema_to_ts(&schema, 0);
        assert!(text.starts_with("string | null"));
        assert_eq!(text.len(), 6 + 5_000 * 7);
        let text = json_schema_to_py(&schema);
        assert!(text.starts_with("str | None"));
        assert_eq!(text.len(), 3 + 5_000 * 7);
        drop_deep(schema);
    });
}

#[test]
fn a_5000_deep_object_chain_renders_in_linear_size_on_a_small_stack() {
    on_small_stack(|| {
        let small = [tool("t", "", object_chain(1_000, "f"), json!({}))];
        let large = [tool("t", "", object_chain(5_000, "f"), json!({}))];
        for language in Language::ALL {
            let a = language.render_declarations(&small).len();
            let b = language.render_declarations(&large).len();
            // Five times the depth, at most about five times the text (indentation is
            // capped in TypeScript; Python classes are flat).
            assert!(b < a * 6, "{language}: {a} -> {b}");
        }
        let text = py(&large);
        assert_eq!(text.matches("(TypedDict):").count(), 5_000);
        assert!(text.contains("    async def t(self, args: TArgs) -> Any: ..."));
    });
}

#[test]
fn deep_chains_and_long_names_keep_class_names_short() {
    on_small_stack(|| {
        let name = "n".repeat(200);
        let tools = [tool(&name, "", object_chain(4_000, "field"), json!({}))];
        let text = py(&tools);
        let longest = text
            .lines()
            .filter_map(|l| l.strip_prefix("class ")?.split('(').next())
            .map(|n| n.encode_utf16().count())
            .max()
            .unwrap();
        assert!(longest <= 140, "{longest}");
        assert!(text.len() < 4_000 * 400, "{}", text.len());
    });
}

#[test]
fn a_60000_deep_union_of_closed_empty_objects_renders() {
    on_small_stack(|| {
        let mut schema = json!({"type": "object", "additionalProperties": false});
        for _ in 0..60_000 {
            schema = object(vec![(
                "oneOf",
                Value::Array(vec![
                    json!({"type": "object", "additionalProperties": false}),
                    schema,
                ]),
            )]);
        }
        let tools = [tool("x", "", json!({"type": "object"}), schema)];
        let text = py(&tools);
        assert_eq!(text.matches("(TypedDict):\n    pass").count(), 60_001);
        let longest = text
            .lines()
            .filter_map(|l| l.strip_prefix("class ")?.split('(').next())
            .map(|n| n.encode_utf16().count())
            .max()
            .unwrap();
        assert!(longest <= 140, "{longest}");
        let text = ts(&tools);
        assert_eq!(text.matches("Record<string, never>").count(), 60_001);
    });
}

#[test]
fn twenty_thousand_nested_arrays_stop_at_the_list_cap() {
    on_small_stack(|| {
        let schema = array_chain(20_000, json!({"type": "string"}));
        let text = json_schema_to_py(&schema);
        assert_eq!(
            text,
            format!("{}Any{}", "list[".repeat(180), "]".repeat(180))
        );
        let text = json_schema_to_ts(&schema, 0);
        assert_eq!(text, format!("string{}", "[]".repeat(20_000)));
        drop_deep(schema);
    });
}

#[test]
fn a_deep_schema_broken_at_every_level_degrades_quickly() {
    on_small_stack(|| {
        // `contentEncoding` and `contains` are outside the subset (`format` and `minItems`
        // joined it with docs/decisions.md, entry 28).
        let mut schema = json!({"type": "string", "contentEncoding": "base64"});
        for _ in 0..5_000 {
            schema = object(vec![
                ("type", json!("array")),
                ("items", schema),
                ("contains", json!({})),
            ]);
        }
        assert_eq!(json_schema_to_ts(&schema, 0), "unknown");
        assert_eq!(json_schema_to_py(&schema), "Any");
        drop_deep(schema);
    });
}

#[test]
fn a_tool_with_a_5000_deep_output_union_renders_in_the_sdk() {
    on_small_stack(|| {
        let tools = vec![ToolSdkSchema::new(
            "deep_output",
            "Deep.",
            json!({"type": "object", "properties": {}}),
            nullable_chain(5_000),
        )];
        let text = Language::TypeScript.render_section(&tools);
        assert!(text.contains("  deep_output: Record<string, JsonValue>;\n"));
        assert!(text.contains("  deep_output: string | null | null"));
        let text = Language::Python.render_section(&tools);
        assert!(text.contains(
            "    async def deep_output(self, args: dict[str, Any]) -> str | None | None"
        ));
        // Cloning and dropping the tool do not recurse either.
        let copy = tools.clone();
        drop(tools);
        drop(copy);
    });
}
