//! Unit tests of the conversion.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;

use super::*;

fn author(doc: Value) -> Result<String, String> {
    convert(&doc, false).map(|v| v.to_string()).map_err(|e| {
        e.violations()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[test]
fn refs_are_inlined_with_the_site_annotations_winning() {
    let doc = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Inner", "description": "Site."},
            "b": {"$ref": "#/definitions/Other"},
            "c": {"$ref": "#/$defs/Inner"}
        },
        "$defs": {"Inner": {"type": "string", "description": "Target.", "minLength": 1}},
        "definitions": {"Other": {"$ref": "#/$defs/Inner"}}
    });
    assert_eq!(
        author(doc).unwrap(),
        concat!(
            r#"{"type":"object","additionalProperties":true,"properties":{"#,
            r#""a":{"type":"string","description":"Site.","minLength":1},"#,
            r#""b":{"type":"string","description":"Target.","minLength":1},"#,
            r#""c":{"type":"string","description":"Target.","minLength":1}}}"#
        )
    );
}

#[test]
fn pointer_tokens_are_unescaped() {
    let doc = json!({
        "$ref": "#/$defs/a~1b%20c~0",
        "$defs": {"a/b c~": {"type": "boolean"}}
    });
    assert_eq!(author(doc).unwrap(), r#"{"type":"boolean"}"#);
}

#[test]
fn cycles_are_refused_at_the_ref_that_closes_them() {
    let doc = json!({
        "type": "object",
        "properties": {"next": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/Node"}, "up": {"$ref": "#"}}
        }}
    });
    assert_eq!(
        author(doc).unwrap_err(),
        concat!(
            r#"schema.$defs.Node.properties.next.$ref: keyword "$ref" is outside the supported subset"#,
            r#" (type, oneOf, properties, required, additionalProperties, items, enum, const, the bounds minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, minItems, maxItems, uniqueItems, minProperties, maxProperties; annotations description, title, default, examples, format, deprecated, readOnly, writeOnly, $schema, $id, $comment)"#,
            r#"; schema.$defs.Node.properties.up.$ref: keyword "$ref" is outside the supported subset"#,
            r#" (type, oneOf, properties, required, additionalProperties, items, enum, const, the bounds minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, minItems, maxItems, uniqueItems, minProperties, maxProperties; annotations description, title, default, examples, format, deprecated, readOnly, writeOnly, $schema, $id, $comment)"#,
        )
    );
    // A self-reference of a definition, and dangling or remote references.
    let doc = json!({"$ref": "#/$defs/A", "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}});
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations().len(), 1);
    assert_eq!(
        err.violations()[0].path.to_string(),
        "schema.$defs.A.allOf[0].$ref"
    );
    for reference in ["#/$defs/Missing", "other.json#/x", "#anchor", "#/$defs/%zz"] {
        let err = convert(&json!({"$ref": reference, "$defs": {}}), false).unwrap_err();
        assert_eq!(
            err.violations()[0].path.to_string(),
            "schema.$ref",
            "{reference}"
        );
    }
}

#[test]
fn a_shared_definition_is_not_a_cycle() {
    let doc = json!({
        "type": "object",
        "properties": {
            "x": {"allOf": [{"$ref": "#/$defs/B"}, {"$ref": "#/$defs/C"}]}
        },
        "$defs": {
            "B": {"allOf": [{"$ref": "#/$defs/D"}]},
            "C": {"allOf": [{"$ref": "#/$defs/D"}], "description": "C."},
            "D": {"type": "integer", "minimum": 1}
        }
    });
    assert_eq!(
        author(doc).unwrap(),
        r#"{"type":"object","additionalProperties":true,"properties":{"x":{"type":"integer","description":"C.","minimum":1}}}"#
    );
}

#[test]
fn type_arrays_become_one_of_with_keywords_in_their_branches() {
    let doc = json!({
        "description": "Maybe a byte.",
        "type": ["integer", "null"],
        "format": "uint8",
        "minimum": 0,
        "maximum": 255,
        "default": null
    });
    assert_eq!(
        author(doc).unwrap(),
        concat!(
            r#"{"oneOf":[{"type":"integer","format":"uint8","minimum":0,"maximum":255},{"type":"null"}],"#,
            r#""description":"Maybe a byte.","default":null}"#
        )
    );
    // The enum is split by type; a type with no value left disappears.
    let doc = json!({"type": ["string", "null", "boolean"], "enum": ["a", null]});
    assert_eq!(
        author(doc).unwrap(),
        r#"{"oneOf":[{"type":"string","enum":["a"]},{"type":"null"}]}"#
    );
    // `integer` inside `number` is `number`; one type left is no oneOf.
    assert_eq!(
        author(json!({"type": ["integer", "number"], "minimum": 1})).unwrap(),
        r#"{"type":"number","minimum":1}"#
    );
    // OpenAPI's nullable.
    assert_eq!(
        author(json!({"type": "string", "nullable": true, "maxLength": 3})).unwrap(),
        r#"{"oneOf":[{"type":"string","maxLength":3},{"type":"null"}]}"#
    );
    assert_eq!(
        author(json!({"nullable": true, "enum": [null]})).unwrap(),
        r#"{"type":"null"}"#
    );
}

#[test]
fn any_of_becomes_one_of_only_when_disjoint() {
    let doc = json!({"anyOf": [{"type": "string"}, {"type": "object"}], "title": "T"});
    assert_eq!(
        author(doc).unwrap(),
        r#"{"oneOf":[{"type":"string"},{"type":"object","additionalProperties":true}],"title":"T"}"#
    );
    let err = author(json!({"anyOf": [{"type": "integer"}, {"type": "number"}]})).unwrap_err();
    assert!(
        err.starts_with(r#"schema.anyOf: keyword "anyOf" is outside"#),
        "{err}"
    );
    let err = author(json!({"anyOf": [{}, {"type": "null"}]})).unwrap_err();
    assert!(err.starts_with("schema.anyOf: "), "{err}");
}

#[test]
fn keywords_beside_one_of_move_into_the_branches() {
    let doc = json!({
        "type": "object",
        "required": ["kind"],
        "description": "Shape.",
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "additionalProperties": false},
            {"properties": {"kind": {"const": "b"}, "n": {"type": "integer"}}}
        ]
    });
    assert_eq!(
        author(doc).unwrap(),
        concat!(
            r#"{"oneOf":["#,
            r#"{"type":"object","additionalProperties":false,"properties":{"kind":{"type":"string","const":"a","required":true}}},"#,
            r#"{"type":"object","additionalProperties":true,"properties":{"kind":{"type":"string","const":"b","required":true},"n":{"type":"integer"}}}"#,
            r#"],"description":"Shape."}"#
        )
    );
}

#[test]
fn every_problem_is_reported_with_its_path() {
    let doc = json!({
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "t": {"type": "array", "prefixItems": [{"type": "string"}], "items": false},
            "p": {"type": "object", "patternProperties": {"^x": {}}},
            "e": {"enum": ["a", 1]},
            "n": {"not": {"type": "string"}, "if": {}, "then": {}},
            "ok": {"type": "string", "$comment": "dropped", "readOnly": true}
        }
    });
    let err = convert(&doc, false).unwrap_err();
    let listed: Vec<String> = err
        .violations()
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    assert_eq!(
        listed,
        [
            "schema.properties.m.additionalProperties additional_properties_not_boolean",
            "schema.properties.t.prefixItems unsupported_keyword",
            "schema.properties.t.items not_a_schema_object",
            "schema.properties.p.patternProperties unsupported_keyword",
            "schema.properties.e.enum requires_type_or_one_of",
            "schema.properties.n.not unsupported_keyword",
            "schema.properties.n.if unsupported_keyword",
            "schema.properties.n.then unsupported_keyword",
        ]
    );
    assert_eq!(err.code(), tools_json::ErrorCode::UnsupportedSchema);
}

#[test]
fn typeless_enums_take_their_shared_type() {
    assert_eq!(
        author(json!({"enum": [1, 2.5]})).unwrap(),
        r#"{"type":"number","enum":[1,2.5]}"#
    );
    assert_eq!(
        author(json!({"const": "x"})).unwrap(),
        r#"{"type":"string","const":"x"}"#
    );
    assert_eq!(author(json!(true)).unwrap(), r#"{"type":"json"}"#);
    assert!(author(json!(false)).is_err());
    assert!(author(json!({"enum": [{"a": 1}]})).is_err());
}

#[test]
fn conflicting_merges_are_refused_at_their_cause() {
    let doc = json!({"allOf": [{"type": "string", "maxLength": 3}, {"maxLength": 4}]});
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.allOf");
    let doc = json!({
        "$ref": "#/$defs/Closed",
        "properties": {"extra": {"type": "string"}},
        "$defs": {"Closed": {"type": "object", "additionalProperties": false}}
    });
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.$ref");
}

#[test]
fn exponential_inlining_stops_at_the_limit() {
    // 2^40 nodes once inlined: each level uses the next twice.
    let mut defs = Map::new();
    for level in 0..40 {
        let next = json!({"$ref": format!("#/$defs/L{}", level + 1)});
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {"a": next.clone(), "b": next}}),
        );
    }
    defs.insert("L40".into(), json!({"type": "integer"}));
    let doc = json!({"$ref": "#/$defs/L0", "$defs": defs});
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations().len(), 1);
    assert_eq!(err.violations()[0].kind.name(), "unsupported_keyword");
}

#[test]
fn deep_documents_do_not_overflow_the_stack() {
    let mut doc = json!({"type": "string"});
    for _ in 0..50_000 {
        // Not `json!`: it would copy `doc` through a recursive serializer.
        let mut map = Map::new();
        map.insert("type".into(), json!("array"));
        map.insert("items".into(), doc);
        doc = Value::Object(map);
    }
    let out = convert(&doc, false).unwrap();
    tools_json::drop_deep(out);
    tools_json::drop_deep(doc);
}

#[test]
fn any_json_is_total() {
    for doc in [
        json!(null),
        json!(1),
        json!([]),
        json!({"type": 3}),
        json!({"type": []}),
        json!({"type": ["string", 4]}),
        json!({"allOf": "x"}),
        json!({"allOf": []}),
        json!({"oneOf": [true, false, 3]}),
        json!({"anyOf": {}}),
        json!({"$ref": 5}),
        json!({"type": "object", "properties": [], "required": "x"}),
        json!({"type": "object", "required": ["x"]}),
        json!({"nullable": "yes", "type": "string"}),
        json!({"nullable": true, "oneOf": [{"type": "string"}, {"type": "integer"}]}),
        json!({"type": ["string", "integer"], "enum": [true]}),
    ] {
        let text = doc.to_string();
        assert!(convert(&doc, false).is_err(), "{text}");
    }
    // Accepted here, refused when compiled (the values do not fit the type).
    assert!(
        Schema::from_json(json!({"type": "null", "const": 1}))
            .compile()
            .is_err()
    );
    assert_eq!(
        author(json!({"type": "null", "const": 1})).unwrap(),
        r#"{"type":"null","const":1}"#
    );
}

#[test]
fn enums_of_objects_are_refused_even_when_moved() {
    let mut deep = json!(1);
    for _ in 0..50_000 {
        deep = Value::Array(vec![deep]);
    }
    let mut doc = Map::new();
    doc.insert("type".into(), json!(["array", "null"]));
    doc.insert("enum".into(), Value::Array(vec![deep, Value::Null]));
    let doc = Value::Object(doc);
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.enum");
    assert_eq!(
        err.violations()[0].kind,
        ViolationKind::KeywordOnWrongType {
            ty: JsonType::Array
        }
    );
    tools_json::drop_deep(doc);
    // Without a value of the type, the type is dropped.
    assert_eq!(
        author(json!({"type": ["object", "string"], "enum": ["a"]})).unwrap(),
        r#"{"type":"string","enum":["a"]}"#
    );
    let doc =
        json!({"type": "object", "oneOf": [{"type": "object"}, {"type": "object"}], "enum": [{}]});
    let err = convert(&doc, false).unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.enum");
}

#[test]
fn params_need_an_object_root() {
    let err = convert(&json!({"type": "string"}), true).unwrap_err();
    assert_eq!(err.violations()[0].kind, ViolationKind::NotObjectRooted);
    let err = convert(&json!({"type": ["object", "null"]}), true).unwrap_err();
    assert_eq!(err.violations()[0].kind, ViolationKind::NotObjectRooted);
    let err = convert(&json!({"type": "object", "minProperties": 1}), true).unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.minProperties");
}
