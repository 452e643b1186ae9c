//! Tests of the strict schemas: their shape, their refusals, and the mapping back of
//! strict-decoded arguments (unit cases and a property over random schemas).

use proptest::prelude::*;

use super::*;

fn strict(schema: Value) -> Result<Value, NotStrict> {
    Strict::new(&schema, Dialect::OPENAI).map(|s| s.schema)
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
            json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
            NotStrict::Unenforced {
                path: "properties.v.anyOf".into(),
                kind: "unsupported_keyword",
            },
        ),
        (
            json!({"type": "object", "properties": {"n": {"type": "integer", "enum": ["a"]}}}),
            NotStrict::Unenforced {
                path: "properties.n.enum".into(),
                kind: "enum_invalid",
            },
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "enum": [["a"]]}}}),
            NotStrict::Unenforced {
                path: "properties.l.enum".into(),
                kind: "keyword_on_wrong_type",
            },
        ),
    ];
    for (schema, reason) in cases {
        assert_eq!(strict(schema), Err(reason));
    }
}

/// A keyword the dialect refuses is left out, listed with its node's path, and written
/// into the node's description; the tool stays strict.
#[test]
fn refused_keywords_are_left_out_listed_and_described() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 9, "description": "A digit."},
            "s": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
            "l": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "uniqueItems": true}
        },
        "required": ["n", "s", "l"],
        "additionalProperties": false
    });
    let openai = Strict::new(&schema, Dialect::OPENAI).unwrap();
    assert_eq!(
        openai.left_out(),
        [
            ("properties.s".to_owned(), "maxLength"),
            ("properties.l".to_owned(), "uniqueItems"),
        ]
    );
    assert_eq!(
        openai.schema["properties"],
        json!({
            "n": {"description": "A digit.", "minimum": 0, "maximum": 9, "type": "integer"},
            "s": {"description": "{maxLength: 3}", "pattern": "^[a-z]+$", "type": "string"},
            "l": {
                "description": "{uniqueItems: true}",
                "minItems": 1,
                "type": "array",
                "items": {"type": "boolean"}
            }
        })
    );
    let anthropic = Strict::new(&schema, Dialect::ANTHROPIC).unwrap();
    assert_eq!(
        anthropic.left_out(),
        [
            ("properties.n".to_owned(), "minimum"),
            ("properties.n".to_owned(), "maximum"),
            ("properties.s".to_owned(), "maxLength"),
            ("properties.l".to_owned(), "minItems"),
            ("properties.l".to_owned(), "uniqueItems"),
        ]
    );
    assert_eq!(
        anthropic.schema["properties"]["n"],
        json!({"description": "A digit.\n\n{minimum: 0, maximum: 9}", "type": "integer"})
    );
}

/// The strict form is made from what the runtime enforces: exact repairs of a foreign
/// schema are applied (`minimum` on a string constrains nothing), annotations dropped.
#[test]
fn strict_forms_are_made_from_the_enforced_schema() {
    let out = strict(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"name": {"type": "string", "minimum": 3, "default": "x"}},
        "required": ["name"]
    }))
    .unwrap();
    assert_eq!(
        out,
        json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}},
            "additionalProperties": false
        })
    );
}

/// A tool without parameters (no declared properties at the root) is strict as the closed
/// empty object; below the root such an object is still a map.
#[test]
fn a_tool_without_parameters_is_strict() {
    let closed =
        json!({"type": "object", "required": [], "properties": {}, "additionalProperties": false});
    for schema in [
        json!({"type": "object", "properties": {}}),
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}, "required": []}),
        json!({"type": "object", "additionalProperties": false}),
    ] {
        for dialect in [Dialect::OPENAI, Dialect::ANTHROPIC] {
            let s = Strict::new(&schema, dialect).unwrap();
            assert_eq!(s.schema, closed, "{schema}");
            let mut args = json!({});
            s.restore(&mut args);
            assert_eq!(args, json!({}));
        }
    }
    assert_eq!(
        strict(json!({"type": "object", "additionalProperties": true})),
        Err(NotStrict::OpenObject {
            path: String::new()
        })
    );
}

/// Every constraint keyword of the subset is one a strict node either carries or leaves
/// out (and so lists): none is dropped unseen.
#[test]
fn every_bound_keyword_is_a_listed_constraint() {
    for keyword in tools_json::BOUND_KEYWORDS {
        assert!(CONSTRAINTS.contains(&keyword), "{keyword}");
    }
}

/// A dialect names only constraint keywords: a keyword it "accepts" that is not one is
/// never written, so the list would say more than the lowering does.
#[test]
fn every_dialect_keyword_is_a_listed_constraint() {
    for dialect in [Dialect::OPENAI, Dialect::ANTHROPIC] {
        for keyword in dialect.accepts {
            assert!(CONSTRAINTS.contains(keyword), "{keyword}");
        }
    }
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
                {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}}, "required": ["kind"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind"], "additionalProperties": false}
            ]}
        },
        "required": ["a"]
    });
    let s = Strict::new(&schema, Dialect::OPENAI).unwrap();
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
        prop_assert!(Strict::new(&root, Dialect::OPENAI).is_ok());
        let strict = Strict::new(&root, Dialect::OPENAI).unwrap();
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

/// A random schema inside the enforced subset with the bound keywords, `enum`, `const`
/// and `oneOf` of scalars: closed objects with random required sets and property counts,
/// arrays with item counts and `uniqueItems`, strings with lengths and a `pattern` (with an
/// example, so the sampler can make one), numbers with every numeric bound.
fn bounded_schema() -> impl Strategy<Value = Value> {
    let string = (0u64..3, 0u64..4, any::<bool>()).prop_map(|(min, extra, patterned)| {
        let mut node = json!({"type": "string", "minLength": min, "maxLength": min + extra});
        if patterned {
            node["pattern"] = json!("^[a-z]*$");
            node["examples"] = json!(["abc"[..usize::try_from(min).unwrap_or(0)].to_owned()]);
        }
        node
    });
    // Every range holds at least one multiple of `k`: `low * k`.
    let integer = (-5i64..5, 0i64..10, 1i64..4, any::<bool>()).prop_map(|(low, span, k, open)| {
        let (min, max) = (low * k, (low + span) * k);
        if open {
            json!({
                "type": "integer",
                "exclusiveMinimum": min - 1,
                "exclusiveMaximum": max + 1,
                "multipleOf": k
            })
        } else {
            json!({"type": "integer", "minimum": min, "maximum": max, "multipleOf": k})
        }
    });
    let scalar = prop_oneof![
        string,
        integer,
        Just(json!({"type": "number", "minimum": -1.5, "maximum": 2.5})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "string", "enum": ["a", "b"], "format": "x"})),
        Just(json!({"type": "integer", "enum": [1, 2, 3], "const": 2})),
        Just(json!({"type": "null"})),
        Just(json!({"oneOf": [
            {"type": "string", "maxLength": 2},
            {"type": "integer", "minimum": 0},
            {"type": "null"}
        ]})),
    ];
    scalar.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-d]", inner.clone(), 1..4),
                any::<u8>(),
                0u64..2,
            )
                .prop_map(|(props, mask, min)| {
                    let required: Vec<&String> = props
                        .keys()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, n)| n)
                        .collect();
                    json!({
                        "type": "object",
                        "properties": props,
                        "required": required,
                        "additionalProperties": false,
                        "minProperties": min.min(u64::try_from(required.len()).unwrap_or(0)),
                    })
                }),
            (inner, 0u64..2, 1u64..3, any::<bool>()).prop_map(|(items, min, extra, unique)| {
                json!({
                    "type": "array", "items": items,
                    "minItems": min, "maxItems": min + extra, "uniqueItems": unique
                })
            }),
        ]
    })
}

/// Whether a strict-form node accepts `value`: `anyOf`, closed objects whose every
/// property is present, items, and the node's own keywords (checked by the subset's
/// validator on a copy of the node without its children).
fn strict_accepts(node: &Value, value: &Value) -> bool {
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        return branches.iter().any(|b| strict_accepts(b, value));
    }
    let mut local = Map::new();
    for key in std::iter::once("type").chain(CONSTRAINTS) {
        if let Some(v) = node.get(key) {
            local.insert(key.into(), v.clone());
        }
    }
    let Ok(local) = tools_json::CompiledSchema::compile(&Value::Object(local)) else {
        return false;
    };
    if !local.is_valid(value) {
        return false;
    }
    match (value, node.get("properties"), node.get("items")) {
        (Value::Object(object), Some(Value::Object(props)), _) => {
            object.len() == props.len()
                && props
                    .iter()
                    .all(|(name, prop)| object.get(name).is_some_and(|v| strict_accepts(prop, v)))
        }
        (Value::Array(items), _, Some(item)) => items.iter().all(|v| strict_accepts(item, v)),
        (Value::Object(_), None, _) | (Value::Array(_), _, None) => false,
        _ => true,
    }
}

/// Checks that every constraint keyword of the enforced node `full` is in the strict node
/// `lowered` unchanged or listed in `left_out` at `path`, and that `lowered` adds none.
fn check_reported(
    full: &Value,
    lowered: &Value,
    path: &str,
    left_out: &[(String, &'static str)],
) -> Result<(), String> {
    for key in CONSTRAINTS {
        let listed = left_out.iter().any(|(p, k)| p == path && *k == key);
        match (full.get(key), lowered.get(key)) {
            (Some(a), Some(b)) if a == b && !listed => {}
            (Some(_), None) if listed => {}
            (None, None) if !listed => {}
            (a, b) => return Err(format!("{path} {key}: {a:?} -> {b:?}, listed: {listed}")),
        }
    }
    let at = |segment: &str| {
        if path.is_empty() {
            segment.to_owned()
        } else {
            format!("{path}.{segment}")
        }
    };
    if let Some(branches) = full.get("oneOf").and_then(Value::as_array) {
        for (i, branch) in branches.iter().enumerate() {
            check_reported(
                branch,
                &lowered["anyOf"][i],
                &at(&format!("oneOf[{i}]")),
                left_out,
            )?;
        }
    }
    if let Some(props) = full.get("properties").and_then(Value::as_object) {
        let required = full["required"].as_array().cloned().unwrap_or_default();
        for (name, prop) in props {
            let mut strict = &lowered["properties"][name];
            if !required.contains(&json!(name)) && !accepts_null(prop) {
                strict = &strict["anyOf"][0];
            }
            check_reported(prop, strict, &at(&format!("properties.{name}")), left_out)?;
        }
    }
    if let Some(items) = full.get("items") {
        check_reported(items, &lowered["items"], &at("items"), left_out)?;
    }
    Ok(())
}

/// As [`as_decoded`], through closed objects nested anywhere (`oneOf` branches here are
/// scalars).
fn decoded(schema: &Value, value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    let v = object.get(name).map_or(Value::Null, |v| decoded(prop, v));
                    out.insert(name.clone(), v);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| decoded(&schema["items"], v)).collect())
        }
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Lowering only removes constraints: for random enforced schemas, every value the full
    /// schema accepts (the sampler's, bounds at their edges), sent back as a strict decoder
    /// sends it, is accepted by the lowered strict form of either dialect and maps back to
    /// a value the full schema accepts; and every keyword the strict form lacks is listed.
    #[test]
    fn the_lowered_form_accepts_what_the_full_schema_accepts_and_lists_what_it_drops(
        properties in prop::collection::btree_map("[a-e]", bounded_schema(), 1..4),
        required in any::<u8>(),
    ) {
        let names: Vec<&String> = properties.keys().collect();
        let required: Vec<&&String> =
            names.iter().enumerate().filter(|(i, _)| required & (1 << i) != 0).map(|(_, n)| n).collect();
        let root = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        });
        prop_assert!(tools_json::is_schema_supported(&root), "{}", root);
        let full = tools_json::CompiledSchema::compile(&root).unwrap();
        let samples = tools_schema::testing::samples(&root).unwrap();
        prop_assert!(samples.iter().any(|s| full.is_valid(s)), "no valid sample of {}", root);
        for dialect in [Dialect::OPENAI, Dialect::ANTHROPIC] {
            let strict = Strict::new(&root, dialect);
            prop_assert!(strict.is_ok(), "{:?}: {}", strict, root);
            let strict = strict.unwrap();
            if let Err(why) = check_reported(&root, &strict.schema, "", strict.left_out()) {
                prop_assert!(false, "{:?}: {}\n{}\n{}", dialect, why, root, strict.schema);
            }
            for sample in samples.iter().filter(|s| full.is_valid(s)) {
                let mut sent = decoded(&root, sample);
                prop_assert!(
                    strict_accepts(&strict.schema, &sent),
                    "{:?} refuses {} (sent as {})\n{}", dialect, sample, sent, strict.schema
                );
                // Mapped back to the value itself, but for an optional property that
                // accepts `null` (strict decoding cannot tell it from absent; see
                // `strict_nulls_map_back_to_the_original_value`).
                strict.restore(&mut sent);
                let mut original = sample.clone();
                drop_nullable_nulls(&root, &mut sent);
                drop_nullable_nulls(&root, &mut original);
                prop_assert_eq!(sent, original, "{:?}", dialect);
            }
        }
    }
}
