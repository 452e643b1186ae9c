//! The direct walk against the iterative walk (the oracle): the same violations, in the
//! same order, and the same `is_valid` verdict, on random schemas of the subset and random
//! values.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::super::{CompiledSchema, validate};
use super::{MAX_DEPTH, nesting};

/// A random schema of the subset: every type, `enum`, `const`, `oneOf`, open and closed
/// objects with `required`, and the bound keywords.
fn schema() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(json!({})),
        Just(json!({"type": "string"})),
        Just(json!({"type": "string", "minLength": 2})),
        Just(json!({"type": "string", "maxLength": 1, "pattern": "^a"})),
        Just(json!({"type": "string", "enum": ["a", "bb"]})),
        Just(json!({"type": "string", "const": "a"})),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "integer", "minimum": 0, "maximum": 3})),
        Just(json!({"type": "integer", "enum": [1, 2], "multipleOf": 2})),
        Just(json!({"type": "number", "exclusiveMaximum": 1.5})),
        Just(json!({"type": "number", "const": 2})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({"minProperties": 1, "maxItems": 1})),
    ];
    scalar.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            (inner.clone(), any::<u8>()).prop_map(|(items, bits)| {
                let mut node = json!({"type": "array", "items": items});
                if bits & 1 == 1 {
                    node["minItems"] = json!(1);
                }
                if bits & 2 == 2 {
                    node["maxItems"] = json!(2);
                }
                if bits & 4 == 4 {
                    node["uniqueItems"] = json!(true);
                }
                if bits & 8 == 8 {
                    node.as_object_mut().unwrap().remove("items");
                }
                node
            }),
            (
                prop::collection::vec(("[a-d]", inner.clone(), any::<bool>()), 0..4),
                any::<u8>()
            )
                .prop_map(|(props, bits)| {
                    let mut properties = Map::new();
                    let mut required = Vec::new();
                    for (name, schema, needed) in props {
                        if needed && !required.contains(&name) {
                            required.push(name.clone());
                        }
                        properties.insert(name, schema);
                    }
                    required.retain(|name| properties.contains_key(name));
                    let mut node = json!({"type": "object", "properties": properties});
                    if !required.is_empty() {
                        node["required"] = json!(required);
                    }
                    if bits & 1 == 1 {
                        node["additionalProperties"] = json!(false);
                    }
                    if bits & 2 == 2 {
                        node["maxProperties"] = json!(2);
                    }
                    node
                }),
            prop::collection::vec(inner, 1..4).prop_map(|branches| json!({"oneOf": branches})),
        ]
    })
}

/// A random value, from a small vocabulary so that it often (not always) fits.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..5).prop_map(Value::from),
        prop::sample::select(vec![0.5, 1.0, 2.0, -0.0, 1.5]).prop_map(Value::from),
        prop::sample::select(vec!["", "a", "bb", "ab", "x"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-e]", inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn same_outcome(schema: &CompiledSchema, value: &Value) {
    let nodes = &schema.0.nodes;
    let oracle = validate::validate(nodes, value, "args");
    let direct = super::validate(nodes, value, "args");
    assert_eq!(direct.to_vec(), oracle.to_vec(), "violations of {value}");
    assert_eq!(
        super::is_valid(nodes, value),
        validate::is_valid(nodes, value),
        "is_valid of {value}"
    );
    assert_eq!(super::is_valid(nodes, value), oracle.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn direct_walk_agrees_with_the_iterative_walk(schema in schema(), value in value()) {
        let Ok(compiled) = CompiledSchema::compile(&schema) else {
            return Ok(());
        };
        same_outcome(&compiled, &value);
        // The value wrapped as the schema's own property tree sees more matches: also
        // try the value as an object member and as an array element.
        same_outcome(&compiled, &json!({"a": value.clone()}));
        same_outcome(&compiled, &json!([value]));
    }
}

#[test]
fn nesting_counts_levels_and_deep_schemas_take_the_iterative_walk() {
    let flat = CompiledSchema::compile(&json!({"type": "string"})).unwrap();
    assert_eq!(nesting(&flat.0.nodes), 0);
    assert!(flat.0.direct);
    let two = CompiledSchema::compile(&json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"oneOf": [{"type": "null"}, {}]}}}
    }))
    .unwrap();
    assert_eq!(nesting(&two.0.nodes), 3);
    let mut deep = json!({"type": "string"});
    for _ in 0..=MAX_DEPTH {
        deep = json!({"type": "array", "items": deep});
    }
    let deep = CompiledSchema::compile(&deep).unwrap();
    assert_eq!(nesting(&deep.0.nodes), MAX_DEPTH + 1);
    assert!(!deep.0.direct);
    // Both walks still give the same answer on it.
    let mut value = json!(["x", 1]);
    for _ in 0..MAX_DEPTH {
        value = json!([value]);
    }
    same_outcome(&deep, &value);
}

#[test]
fn undeclared_keys_are_reported_after_the_declared_properties_in_value_order() {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}
    }))
    .unwrap();
    let value = json!({"z": 1, "b": "not an integer", "y": 2, "a": "ok", "x": 3});
    let paths: Vec<String> = schema
        .validate(&value, "")
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    assert_eq!(
        paths,
        [
            "b expected_type",
            "z undeclared_property",
            "y undeclared_property",
            "x undeclared_property"
        ]
    );
    same_outcome(&schema, &value);
    // No undeclared key: nothing of the kind, in either walk.
    same_outcome(&schema, &json!({"b": 1, "a": "ok"}));
    assert!(schema.validate(&json!({"b": 1, "a": "ok"}), "").is_empty());
}
