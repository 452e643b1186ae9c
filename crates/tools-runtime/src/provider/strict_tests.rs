//! Tests of the strict schemas: their shape, their refusals, and the mapping back of
//! strict-decoded arguments (unit cases and a property over random schemas).

use proptest::prelude::*;

use super::*;

fn strict(schema: Value) -> Result<Value, NotStrict> {
    Strict::new(&schema, Dialect::OpenAi).map(|s| s.schema)
}

#[test]
fn objects_close_and_optional_properties_become_nullable() {
    let out = strict(json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where."},
            "lines": {"type": "integer", "minimum": 1, "description": "How many."}
        },
        "required": ["path"]
    }))
    .unwrap();
    assert_eq!(
        out,
        json!({
            "type": "object",
            "required": ["path", "lines"],
            "properties": {
                "path": {"description": "Where.", "type": "string"},
                "lines": {
                    "description": "How many.",
                    "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}]
                }
            },
            "additionalProperties": false
        })
    );
}

#[test]
fn what_has_no_strict_form_says_where_and_why() {
    let cases = [
        (json!({"type": "string"}), NotStrict::RootNotObject),
        (
            json!({"type": "object", "properties": {"o": {"type": "object", "additionalProperties": true, "properties": {"a": {"type": "string"}}}}}),
            NotStrict::OpenObject {
                path: "properties.o".into(),
            },
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
            NotStrict::FreeFormObject {
                path: "properties.m".into(),
            },
        ),
        (
            json!({"type": "object", "properties": {"v": {}}}),
            NotStrict::Untyped {
                path: "properties.v".into(),
            },
        ),
        (
            json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}),
            NotStrict::Unsupported {
                path: "properties.s".into(),
                keyword: "maxLength",
            },
        ),
    ];
    for (schema, reason) in cases {
        assert_eq!(strict(schema), Err(reason));
    }
    let anthropic = Strict::new(
        &json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}),
        Dialect::Anthropic,
    );
    assert!(matches!(
        anthropic,
        Err(NotStrict::Unsupported {
            keyword: "minimum",
            ..
        })
    ));
}

#[test]
fn nulls_of_optional_properties_are_removed_before_validation() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "c": {"oneOf": [{"type": "string"}, {"type": "null"}]},
            "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}, "required": ["kind"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}, "required": ["kind"], "additionalProperties": false}
            ]}
        },
        "required": ["a"]
    });
    let s = Strict::new(&schema, Dialect::OpenAi).unwrap();
    let mut args = json!({
        "a": "x", "b": null, "c": null,
        "list": [{"x": null}, {"x": 2}],
        "shape": {"kind": "square", "side": null}
    });
    s.restore(&mut args);
    assert_eq!(
        args,
        json!({"a": "x", "c": null, "list": [{}, {"x": 2}], "shape": {"kind": "square"}})
    );
}

/// A small random subset schema (objects, arrays, scalars; random required sets;
/// optional properties that sometimes accept `null` themselves).
fn schema(depth: u32) -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "boolean"})),
        Just(json!({"oneOf": [{"type": "string"}, {"type": "null"}]})),
    ];
    scalar.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a-e]", inner.clone(), 1..4).prop_flat_map(|props| {
                let names: Vec<String> = props.keys().cloned().collect();
                let n = names.len();
                (Just(props), prop::collection::vec(any::<bool>(), n)).prop_map(
                    move |(props, required)| {
                        let required: Vec<&String> = names
                            .iter()
                            .zip(&required)
                            .filter(|(_, r)| **r)
                            .map(|(n, _)| n)
                            .collect();
                        json!({
                            "type": "object",
                            "properties": props,
                            "required": required,
                            "additionalProperties": false
                        })
                    },
                )
            }),
            inner.prop_map(|items| json!({"type": "array", "items": items})),
        ]
    })
}

/// A value of `schema`, chosen by `seed`: optional properties present or absent.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn sample(schema: &Value, seed: &mut u64) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    if required.contains(&name.as_str()) || next(seed).is_multiple_of(2) {
                        let value = sample(prop, seed);
                        out.insert(name.clone(), value);
                    }
                }
            }
            Value::Object(out)
        }
        Some("array") => {
            let n = next(seed) % 3;
            Value::Array((0..n).map(|_| sample(&schema["items"], seed)).collect())
        }
        Some("string") => json!("s"),
        Some("integer") => json!(next(seed) % 100),
        Some("boolean") => json!(next(seed).is_multiple_of(2)),
        _ => {
            if next(seed).is_multiple_of(2) {
                Value::Null
            } else {
                json!("x")
            }
        }
    }
}

/// What a strict decoder sends for `value`: every absent optional property as `null`.
fn as_decoded(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    match object.get_mut(name) {
                        Some(v) => as_decoded(prop, v),
                        None => {
                            object.insert(name.clone(), Value::Null);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                as_decoded(&schema["items"], item);
            }
        }
        _ => {}
    }
}

/// Removes `null`s of optional properties that accept `null`.
fn drop_nullable_nulls(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(object) => {
            let required: Vec<String> = schema["required"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(props) = schema["properties"].as_object() {
                object.retain(|name, v| {
                    !(v.is_null()
                        && !required.contains(name)
                        && props.get(name).is_some_and(accepts_null))
                });
                for (name, v) in object.iter_mut() {
                    if let Some(prop) = props.get(name) {
                        drop_nullable_nulls(prop, v);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                drop_nullable_nulls(&schema["items"], item);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the schema, a value sent back by a strict decoder (absent optional
    /// properties as `null`) maps back to the value itself.
    #[test]
    fn strict_nulls_map_back_to_the_original_value(
        properties in prop::collection::btree_map("[a-e]", schema(3), 1..4),
        seed in 1u64..,
    ) {
        let root = json!({"type": "object", "properties": properties});
        prop_assert!(Strict::new(&root, Dialect::OpenAi).is_ok());
        let strict = Strict::new(&root, Dialect::OpenAi).unwrap();
        let mut seed = seed;
        let original = sample(&root, &mut seed);
        let mut decoded = original.clone();
        as_decoded(&root, &mut decoded);
        strict.restore(&mut decoded);
        // An optional property that accepts `null` itself cannot tell "absent" from
        // `null` under strict decoding (both are valid for the tool): compare without
        // such `null`s.
        let (mut a, mut b) = (decoded, original);
        drop_nullable_nulls(&root, &mut a);
        drop_nullable_nulls(&root, &mut b);
        prop_assert_eq!(a, b);
    }
}
