//! Structural signatures of violations: ours, and the reference's messages in the golden
//! files (docs/decisions.md, entry 18: same count, order, paths and kinds). Also included
//! by other crates' tests through `#[path]`.

use serde_json::Value;
use tools_json::{Violation, ViolationKind};

/// A structural signature of one of our violations: `(location, kind[:detail])`.
pub(crate) fn signature(violation: &Violation) -> (String, String) {
    let detail = match &violation.kind {
        ViolationKind::KeywordOnWrongType { ty }
        | ViolationKind::EnumInvalid { ty }
        | ViolationKind::ConstInvalid { ty } => format!(":{ty}"),
        ViolationKind::ExpectedType { expected } => format!(":{expected}"),
        ViolationKind::RequiredUndeclared { name } => format!(":{name}"),
        ViolationKind::OneOfMismatch { matched } => format!(":{matched}"),
        ViolationKind::NotInEnum { allowed } => format!(":{}", Value::Array(allowed.clone())),
        ViolationKind::ConstMismatch { expected } => format!(":{expected}"),
        _ => String::new(),
    };
    (
        violation.path.display_name(),
        format!("{}{detail}", violation.kind.name()),
    )
}

/// The structural signature of one of the reference's violation messages.
pub(crate) fn reference_signature(message: &str) -> (String, String) {
    let sig = |path: &str, kind: &str| (path.to_owned(), kind.to_owned());
    // Value violations quote their path.
    if let Some(rest) = message.strip_prefix("missing required property \"") {
        return sig(rest.trim_end_matches('"'), "missing_required");
    }
    if let Some(rest) = message.strip_prefix('"') {
        let (path, tail) = rest.split_once("\" ").expect("quoted path");
        let kind = match tail {
            "must be a string" => "expected_type:string".to_owned(),
            "must be a number" => "expected_type:number".to_owned(),
            "must be an integer" => "expected_type:integer".to_owned(),
            "must be a boolean" => "expected_type:boolean".to_owned(),
            "must be null" => "expected_type:null".to_owned(),
            "must be an object" => "expected_type:object".to_owned(),
            "must be an array" => "expected_type:array".to_owned(),
            "must be a finite JSON number" => "not_finite_number".to_owned(),
            "must be a lossless JSON value"
            | "must be a lossless JSON object"
            | "must be a dense lossless JSON array" => "not_lossless".to_owned(),
            "is not a declared property (additionalProperties: false)" => {
                "undeclared_property".to_owned()
            }
            t if t.starts_with("must match exactly one oneOf branch (matched ") => {
                let n = t.trim_start_matches("must match exactly one oneOf branch (matched ");
                format!("one_of_mismatch:{}", n.trim_end_matches(')'))
            }
            t if t.starts_with("must be one of ") => {
                format!("not_in_enum:{}", t.trim_start_matches("must be one of "))
            }
            t if t.starts_with("must be ") => {
                format!("const_mismatch:{}", t.trim_start_matches("must be "))
            }
            other => panic!("unknown reference value message: {other}"),
        };
        return (path.to_owned(), kind);
    }
    // Schema violations: `<location> <template>`.
    let table: &[(&str, &str)] = &[
        (" must be a value schema object", "not_a_value_schema"),
        (
            " must be an object of value schemas",
            "property_map_not_object",
        ),
        (" must be true when present", "required_not_true"),
        (
            " is not supported by the value schema DSL",
            "unsupported_by_dsl",
        ),
        (" must be explicitly true or false", "openness_not_explicit"),
        (
            " must be an array of at least two value schemas",
            "dsl_one_of_malformed",
        ),
        (
            " must be a non-empty array of scalar values",
            "dsl_enum_malformed",
        ),
        (
            " must be string/number/integer/boolean/null/array/object/json, or use oneOf",
            "unknown_dsl_type",
        ),
        (" must be a schema object", "not_a_schema_object"),
        (" cannot declare both type and oneOf", "type_with_one_of"),
        (
            " annotation must be lossless JSON data",
            "annotation_not_lossless",
        ),
        (" requires type or oneOf", "requires_type_or_one_of"),
        (
            " must be an array of at least two schemas",
            "one_of_malformed",
        ),
        (" is not supported beside oneOf", "beside_one_of"),
        (
            " must be a single type string (type arrays are not supported)",
            "type_array",
        ),
        (
            " must be one of object/array/string/number/integer/boolean/null",
            "unknown_type",
        ),
        (" must be an object of schemas", "properties_not_object"),
        (" must be an array of strings", "required_malformed"),
        (" must be a boolean", "additional_properties_not_boolean"),
        (
            " must be \"object\" (structured output is object-rooted)",
            "not_object_rooted",
        ),
    ];
    for (suffix, kind) in table {
        if let Some(location) = message.strip_suffix(suffix) {
            return sig(location, kind);
        }
    }
    if let Some((location, _)) = message.split_once(" is not a supported keyword (subset:") {
        return sig(location, "unsupported_keyword");
    }
    if let Some(location) = message
        .strip_suffix(" must be a string")
        .filter(|l| l.ends_with(".description") || l.ends_with(".title"))
    {
        return sig(location, "annotation_not_string");
    }
    if let Some((location, ty)) = message.split_once(" is not supported on type \"") {
        return sig(
            location,
            &format!("keyword_on_wrong_type:{}", ty.trim_end_matches('"')),
        );
    }
    if let Some((location, name)) = message.split_once(" names \"") {
        let name = name.trim_end_matches("\" which is not in properties");
        return sig(location, &format!("required_undeclared:{name}"));
    }
    if let Some((location, ty)) = message.split_once(" must be a non-empty array of ") {
        return sig(
            location,
            &format!("enum_invalid:{}", ty.trim_end_matches(" values")),
        );
    }
    if message.contains(" must be one of ") && message.ends_with(" when both are declared") {
        let (location, _) = message.split_once(" must be one of ").expect("checked");
        return sig(location, "const_not_in_enum");
    }
    if let Some((location, ty)) = message.split_once(" must be a ") {
        return sig(
            location,
            &format!("const_invalid:{}", ty.trim_end_matches(" value")),
        );
    }
    panic!("unknown reference schema message: {message}");
}
