//! The reference implementation's test scenarios for the subset check, value validation and
//! lossless JSON that the golden files do not pin.

use serde_json::{Value, json};
use tools_json::{
    CompiledSchema, Error, ErrorCode, JsonType, JsonValue, LosslessScope, ViolationKind,
    check_schema,
};

fn kinds(schema: &Value) -> Vec<(String, &'static str)> {
    check_schema(schema)
        .iter()
        .map(|v| (v.path.to_string(), v.kind.name()))
        .collect()
}

fn validate(schema: Value, value: Value, root: &str) -> Vec<String> {
    CompiledSchema::compile(&schema)
        .expect("schema compiles")
        .validate(&value, root)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn s42_accepted_shapes() {
    for schema in [
        json!({"type": "string"}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"type": "object", "properties": {"nested": {"type": "object", "properties": {}, "additionalProperties": false}, "free": {}}, "required": ["nested"], "additionalProperties": true}),
        json!({"oneOf": [{"type": "string"}, {"type": "number"}]}),
        json!({"description": "any", "title": "JSON", "default": null, "examples": [1, "x"]}),
    ] {
        assert!(check_schema(&schema).is_empty(), "{schema}");
    }
}

#[test]
fn s46_unsupported_keywords_are_named() {
    // `pattern`, `minimum`, `maxLength` and `$schema` joined the subset (docs/decisions.md,
    // entry 28).
    for keyword in [
        "anyOf",
        "allOf",
        "not",
        "$ref",
        "$defs",
        "patternProperties",
        "prefixItems",
        "if",
    ] {
        let schema = json!({"type": "object", keyword: 1});
        let violations = check_schema(&schema);
        assert_eq!(violations.len(), 1, "{keyword}");
        assert_eq!(violations[0].path.to_string(), format!("schema.{keyword}"));
        assert_eq!(
            violations[0].kind,
            ViolationKind::UnsupportedKeyword {
                keyword: keyword.into()
            }
        );
        let err = CompiledSchema::compile(&schema).unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::UnsupportedSchema));
    }
}

#[test]
fn s48_constraints_without_type_in_fixed_order() {
    let schema = json!({"const": 1, "enum": [1], "items": {}, "additionalProperties": true, "required": [], "properties": {}});
    let names: Vec<String> = kinds(&schema).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        names,
        [
            "schema.properties",
            "schema.required",
            "schema.additionalProperties",
            "schema.items",
            "schema.enum",
            "schema.const"
        ]
    );
}

#[test]
fn s49_independent_errors_are_all_collected() {
    let schema = json!({"type": "object", "pattern": "x", "properties": {"a": {"type": "weird"}, "b": {"type": "string", "minimum": 1}}});
    assert_eq!(
        kinds(&schema),
        [
            ("schema.pattern".to_owned(), "keyword_on_wrong_type"),
            ("schema.properties.a.type".to_owned(), "unknown_type"),
            (
                "schema.properties.b.minimum".to_owned(),
                "keyword_on_wrong_type"
            ),
        ]
    );
}

#[test]
fn s51_tail_checks_follow_the_children() {
    let schema = json!({"type": "object", "additionalProperties": "yes", "required": ["zz"], "items": {}, "properties": {"a": {"type": "weird"}}});
    assert_eq!(
        kinds(&schema),
        [
            ("schema.items".to_owned(), "keyword_on_wrong_type"),
            ("schema.properties.a.type".to_owned(), "unknown_type"),
            ("schema.required".to_owned(), "required_undeclared"),
            (
                "schema.additionalProperties".to_owned(),
                "additional_properties_not_boolean"
            ),
        ]
    );
}

#[test]
fn s52_type_correct_enum_and_const_pairs() {
    for schema in [
        json!({"type": "string", "enum": ["a"], "const": "a"}),
        json!({"type": "number", "enum": [1.5], "const": 1.5}),
        json!({"type": "integer", "enum": [2], "const": 2}),
        json!({"type": "boolean", "enum": [true], "const": true}),
        json!({"type": "null", "enum": [null], "const": null}),
        json!({"type": "integer", "enum": [1.0]}),
        json!({"type": "integer", "const": 2.0}),
        json!({"type": "integer", "enum": [1, 2], "const": 2.0}),
    ] {
        assert!(check_schema(&schema).is_empty(), "{schema}");
    }
}

#[test]
fn compiled_schemas_show_integral_floats_as_integers() {
    let schema =
        CompiledSchema::compile(&json!({"type": "integer", "enum": [1.0, 2], "default": 3.0}))
            .unwrap();
    assert_eq!(
        schema.as_json().to_string(),
        r#"{"type":"integer","enum":[1,2],"default":3}"#
    );
}

#[test]
fn s60_full_order_in_one_object() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b", "a", "b"], "additionalProperties": false});
    assert_eq!(
        validate(schema, json!({"z": 1, "a": 2, "y": 3}), "value"),
        [
            "value.b: required property is missing",
            "value.b: required property is missing",
            "value.a: must be a string",
            "value.z: is not a declared property (additionalProperties is false)",
            "value.y: is not a declared property (additionalProperties is false)",
        ]
    );
}

#[test]
fn s61_lossless_container_checks() {
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let v = CompiledSchema::compile(&open)
        .unwrap()
        .validate(&json!({"a": "x", "extra": -0.0}), "value");
    assert_eq!(
        v[0].kind,
        ViolationKind::NotLossless {
            scope: LosslessScope::Object
        }
    );
    // A declared-property violation suppresses the container check.
    assert_eq!(
        validate(open, json!({"a": 1, "extra": -0.0}), "value"),
        ["value.a: must be a string"]
    );
    assert_eq!(
        validate(json!({"type": "array"}), json!([1, -0.0]), "value"),
        ["value: must be a dense lossless JSON array"]
    );
    assert_eq!(
        validate(
            json!({"type": "array", "items": {}}),
            json!([1, -0.0]),
            "value"
        ),
        ["value[1]: must be a lossless JSON value"]
    );
}

#[test]
fn s63_one_of_is_exact_one() {
    let s = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
    assert_eq!(
        validate(s.clone(), json!(1), "value"),
        ["value: must match exactly one oneOf branch, but matched 2"]
    );
    assert!(validate(s, json!(1.5), "value").is_empty());
    let overlap = json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
        {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": true}
    ]});
    assert_eq!(
        validate(overlap, json!({"a": "x", "b": "y"}), "value"),
        ["value: must match exactly one oneOf branch, but matched 2"]
    );
}

#[test]
fn s64_unconstrained_accepts_lossless_values_only() {
    for value in [
        json!(null),
        json!(true),
        json!(1),
        json!("x"),
        json!([1]),
        json!({"x": null}),
    ] {
        assert!(validate(json!({}), value, "value").is_empty());
    }
    assert_eq!(
        validate(json!({}), json!({"x": [1, {"y": -0.0}]}), "value"),
        ["value: must be a lossless JSON value"]
    );
}

#[test]
fn s65_own_keys_only() {
    let schema = json!({"type": "object", "properties": {}, "required": ["toString"]});
    assert_eq!(
        kinds(&schema),
        [("schema.required".to_owned(), "required_undeclared")]
    );
    let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(
        validate(closed, json!({"toString": 1}), "value"),
        ["value.toString: is not a declared property (additionalProperties is false)"]
    );
    let declared = json!({"type": "object", "properties": {"constructor": {"type": "string"}}});
    assert!(validate(declared, json!({}), "value").is_empty());
}

#[test]
fn s66_root_labels() {
    let schema = json!({"type": "object", "properties": {"c": {"type": "object", "properties": {"d": {"type": "integer"}}}, "a b": {"type": "string"}}, "required": ["a b"]});
    assert_eq!(
        validate(schema, json!({"c": {"d": "x"}}), ""),
        [
            "a b: required property is missing",
            "c.d: must be an integer"
        ]
    );
    assert_eq!(
        validate(json!({"type": "object"}), json!([]), ""),
        ["arguments: must be an object"]
    );
    let servers = json!({"type": "array", "items": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}});
    assert_eq!(
        validate(servers, json!([{"host": "a"}, {}]), ""),
        ["[1].host: required property is missing"]
    );
    assert_eq!(
        validate(json!({"type": "string"}), json!(1), "output"),
        ["output: must be a string"]
    );
}

#[test]
fn s67_lossless_boundary() {
    assert!(JsonValue::new(json!({"a": [1, {"b": -0.0}]})).is_err());
    assert!(JsonValue::from_f64(f64::NAN).is_err());
    assert!(JsonValue::from_f64(f64::NEG_INFINITY).is_err());
    assert!(matches!(JsonValue::parse("1e400"), Err(Error::Parse(_))));
    let err = JsonValue::new(json!([-0.0])).unwrap_err();
    assert_eq!(err.code(), None);
    assert_eq!(err.violations()[0].kind, ViolationKind::NegativeZero);
}

#[test]
fn s68_document_order_drives_violation_order() {
    let schema = json!({"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "string"}, "mid": {"type": "string"}}});
    assert_eq!(
        validate(schema, json!({"alpha": 1, "mid": 2, "zeta": 3}), ""),
        [
            "zeta: must be a string",
            "alpha: must be a string",
            "mid: must be a string"
        ]
    );
}

#[test]
fn enum_comparison_is_numeric() {
    let schema = json!({"type": "number", "enum": [1, 2.5]});
    assert!(validate(schema.clone(), json!(1.0), "value").is_empty());
    assert_eq!(
        validate(schema, json!(3), "value"),
        ["value: must be one of [1,2.5]"]
    );
    let constant = json!({"type": "string", "enum": ["a", "b"], "const": "a"});
    assert_eq!(
        validate(constant.clone(), json!("c"), "value"),
        ["value: must be one of [\"a\",\"b\"]"]
    );
    assert_eq!(
        validate(constant, json!("b"), "value"),
        ["value: must be \"a\""]
    );
}

#[test]
fn expected_type_names_the_type() {
    let v = CompiledSchema::compile(&json!({"type": "integer"}))
        .unwrap()
        .validate(&json!("1"), "value");
    assert_eq!(
        v[0].kind,
        ViolationKind::ExpectedType {
            expected: JsonType::Integer
        }
    );
}
