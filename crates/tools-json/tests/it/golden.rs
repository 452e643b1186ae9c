//! The reference outputs vendored in `tests/data/golden/`, compared structurally
//! (docs/decisions.md, entry 18):
//! the same count, order, paths and kinds of violations.

use serde_json::Value;
use tools_json::{CompiledSchema, check_schema};

use crate::reference::{reference_signature, signature};
use crate::support::{parse, read_data};

fn reference_violations(result: &Value) -> Vec<(String, String)> {
    let list = match (result.get("error"), result.get("ok")) {
        (Some(error), _) => &error["violations"],
        (None, Some(ok)) if ok.is_array() => ok,
        _ => return Vec::new(),
    };
    list.as_array()
        .expect("violation list")
        .iter()
        .map(|m| reference_signature(m.as_str().expect("message")))
        .collect()
}

/// The reference cases whose outcome docs/decisions.md, entry 28, changes (the subset grew
/// by the bound keywords and the `$schema` annotation): the schema text and our expected
/// signatures. Every case that uses a new keyword must be listed here, so none is skipped
/// silently.
const AMENDED: [(&str, &[(&str, &str)]); 6] = [
    (
        r#"{"type":"object","pattern":[]}"#,
        &[("schema.pattern", "keyword_on_wrong_type:object")],
    ),
    (
        r#"{"type":"object","minimum":[]}"#,
        &[("schema.minimum", "keyword_on_wrong_type:object")],
    ),
    (
        r#"{"type":"object","maxLength":[]}"#,
        &[("schema.maxLength", "keyword_on_wrong_type:object")],
    ),
    (
        r#"{"type":"object","pattern":"x","properties":{"a":{"type":"weird"},"b":{"type":"string","minimum":1}}}"#,
        &[
            ("schema.pattern", "keyword_on_wrong_type:object"),
            ("schema.properties.a.type", "unknown_type"),
            (
                "schema.properties.b.minimum",
                "keyword_on_wrong_type:string",
            ),
        ],
    ),
    (
        r#"{"type":"string","description":"d","title":"t","default":"x","examples":["y"],"$schema":"x"}"#,
        &[],
    ),
    (
        r#"{"type":"object","pattern":"x"}"#,
        &[("schema.pattern", "keyword_on_wrong_type:object")],
    ),
];

#[test]
fn subset_check_matches_the_reference() {
    let cases = read_data("golden/json-subset.json");
    let cases = cases.as_array().expect("array");
    let mut checked = 0;
    let mut amended = 0;
    for case in cases {
        let text = case["schema_json"].as_str().expect("schema_json");
        let schema = parse(text);
        let expected = match AMENDED.iter().find(|(amended, _)| *amended == text) {
            Some((_, signatures)) => {
                amended += 1;
                signatures
                    .iter()
                    .map(|(p, k)| ((*p).to_owned(), (*k).to_owned()))
                    .collect()
            }
            None => reference_violations(&case["result"]),
        };
        let ours = match case["fn"].as_str() {
            Some("assertSupportedJsonSchema") => check_schema(&schema).into_vec(),
            Some("assertObjectJsonSchema") => {
                match CompiledSchema::compile_object_rooted(&schema) {
                    Ok(_) => Vec::new(),
                    Err(e) => e.violations().to_vec(),
                }
            }
            other => panic!("unexpected fn {other:?}"),
        };
        let ours: Vec<_> = ours.iter().map(signature).collect();
        assert_eq!(ours, expected, "schema {}", case["schema_json"]);
        // Compiling agrees with the check.
        assert_eq!(
            CompiledSchema::compile(&schema).is_ok(),
            check_schema(&schema).is_empty()
        );
        tools_json::drop_deep(schema);
        checked += 1;
    }
    assert_eq!(checked, cases.len());
    assert!(checked >= 60);
    assert_eq!(
        amended,
        AMENDED.len(),
        "an amended case is missing from the golden file"
    );
}

#[test]
fn validation_matches_the_reference() {
    let cases = read_data("golden/validate.json");
    let cases = cases.as_array().expect("array");
    for case in cases {
        let schema = parse(case["schema_json"].as_str().expect("schema_json"));
        let value = parse(case["value_json"].as_str().expect("value_json"));
        let root = case["path"].as_str().expect("path");
        let expected = reference_violations(&case["result"]);
        let compiled = CompiledSchema::compile(&schema)
            .unwrap_or_else(|e| panic!("golden schema {schema} rejected: {e}"));
        let violations = compiled.validate(&value, root);
        let ours: Vec<_> = violations.iter().map(signature).collect();
        assert_eq!(
            ours, expected,
            "schema {} value {} root {root:?}",
            case["schema_json"], case["value_json"]
        );
        assert_eq!(compiled.is_valid(&value), expected.is_empty());
        tools_json::drop_deep(schema);
        tools_json::drop_deep(value);
    }
    assert!(cases.len() >= 50);
}
