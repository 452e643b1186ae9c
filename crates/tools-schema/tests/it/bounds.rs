//! The bound builders of the DSL (docs/decisions.md, entry 28): what they emit, and what
//! the DSL refuses.

use serde_json::json;
use tools_schema::{Error, Schema, ViolationKind, params};

fn compiled(schema: impl Into<Schema>) -> String {
    schema.into().compile().unwrap().as_json().to_string()
}

#[test]
fn range_forms_set_the_matching_keywords() {
    assert_eq!(
        compiled(Schema::integer().range(1..=500).describe("Lines.")),
        r#"{"type":"integer","description":"Lines.","minimum":1,"maximum":500}"#
    );
    assert_eq!(
        compiled(Schema::integer().range(0..10)),
        r#"{"type":"integer","minimum":0,"exclusiveMaximum":10}"#
    );
    assert_eq!(
        compiled(Schema::number().range(0.5..).multiple_of(0.25)),
        r#"{"type":"number","minimum":0.5,"multipleOf":0.25}"#
    );
    assert_eq!(
        compiled(Schema::number().exclusive_minimum(0.0).maximum(1.0)),
        r#"{"type":"number","maximum":1,"exclusiveMinimum":0}"#
    );
}

#[test]
fn string_array_and_object_bounds_are_emitted_in_a_fixed_order() {
    assert_eq!(
        compiled(
            Schema::string()
                .pattern("^[a-z]+$")
                .format("hostname")
                .max_length(63)
                .min_length(1)
                .deprecated(true)
        ),
        r#"{"type":"string","deprecated":true,"format":"hostname","minLength":1,"maxLength":63,"pattern":"^[a-z]+$"}"#
    );
    assert_eq!(
        compiled(
            Schema::array(Schema::string())
                .unique_items(true)
                .max_items(3)
        ),
        r#"{"type":"array","maxItems":3,"uniqueItems":true,"items":{"type":"string"}}"#
    );
    assert_eq!(
        compiled(
            Schema::open_object()
                .min_properties(1)
                .optional("a", Schema::string())
        ),
        r#"{"type":"object","minProperties":1,"additionalProperties":true,"properties":{"a":{"type":"string"}}}"#
    );
}

#[test]
fn bounds_are_enforced_on_arguments() {
    let spec = params()
        .required("path", Schema::string().min_length(1))
        .optional("limit", Schema::integer().range(1..=500));
    let schema = spec.compile().unwrap();
    assert!(schema.is_valid(&json!({"path": "/a", "limit": 500})));
    assert_eq!(
        schema
            .validate(&json!({"path": "", "limit": 0}), "")
            .to_string(),
        "path: must have at least 1 character; limit: must be >= 1"
    );
}

#[test]
fn a_bound_on_the_wrong_kind_is_an_author_error() {
    let spec = json!({"type": "integer", "pattern": "a"});
    let err = Schema::from_json(spec).compile().unwrap_err();
    let Error::UnsupportedSchema { violations } = err else {
        panic!("unexpected error");
    };
    assert_eq!(violations[0].path.to_string(), "schema.pattern");
    assert_eq!(
        violations[0].kind,
        ViolationKind::UnsupportedByDsl {
            key: "pattern".into()
        }
    );
    // A malformed bound passes the DSL's vocabulary and is caught by the subset check.
    let err = Schema::from_json(json!({"type": "string", "pattern": "(a)\\1"}))
        .compile()
        .unwrap_err();
    let Error::UnsupportedSchema { violations } = err else {
        panic!("unexpected error");
    };
    assert_eq!(violations[0].path.to_string(), "schema.pattern");
    assert!(
        matches!(&violations[0].kind, ViolationKind::PatternInvalid { reason } if reason.contains("backreference")),
        "{violations}"
    );
}
