//! Regex bounds in schemas: patterns that are huge or pathological to compile ("pattern
//! bombs") are refused quickly, reported as unenforced in a foreign schema (whose import
//! succeeds, the rest enforced) and as `UNSUPPORTED_SCHEMA` in an author schema. No
//! timing is asserted here; the measurements are in `docs/decisions.md`.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_json::{
    CompiledSchema, ErrorCode, JsonType, PatternBound, ViolationKind, build, check_schema,
    is_schema_supported,
};

/// A 100 KB alternation of distinct words.
fn alternation() -> String {
    let words: Vec<String> = (0..12_000).map(|i| format!("w{i:06}")).collect();
    format!("^(?:{})$", words.join("|"))
}

/// The bombs, each with the bound it breaks.
fn bombs() -> Vec<(&'static str, String, PatternBound)> {
    let length = PatternBound::Length { limit: 4096 };
    let compiled = PatternBound::CompiledSize { limit: 4 << 20 };
    vec![
        ("alternation", alternation(), length),
        ("repeat", "(a{1000}){1000}".to_owned(), compiled),
        (
            "nested",
            "((((a{20}){20}){20}){20}){20}".to_owned(),
            compiled,
        ),
        (
            "letters",
            format!("^[{}]+$", r"\p{L}".repeat(800)),
            PatternBound::PropertyEscapes { limit: 32 },
        ),
        (
            "deep",
            format!("{}a{}", "(".repeat(50_000), ")".repeat(50_000)),
            length,
        ),
        (
            "groups",
            format!("{}a{}", "(".repeat(40), ")".repeat(40)),
            PatternBound::Nesting { limit: 32 },
        ),
        ("count", "a{1,99999999999}".to_owned(), compiled),
        ("unicode", r"\p{L}{200}".to_owned(), compiled),
    ]
}

fn foreign_schema() -> Value {
    let mut properties = Map::new();
    for (name, pattern, _) in bombs() {
        properties.insert(
            name.into(),
            json!({"type": "string", "pattern": pattern, "maxLength": 8}),
        );
    }
    properties.insert(
        "id".into(),
        json!({"type": "string", "pattern": "^[a-z]+-\\d+$"}),
    );
    properties.insert("n".into(), json!({"type": "integer", "minimum": 1}));
    properties.insert(
        "tags".into(),
        json!({"type": "array", "maxItems": 2, "items": {"type": "string", "pattern": "(a{1000}){1000}"}}),
    );
    json!({
        "type": "object",
        "properties": Value::Object(properties),
        "required": ["n"],
        "additionalProperties": false
    })
}

#[test]
fn a_foreign_schema_with_pattern_bombs_imports_with_them_unenforced() {
    let schema = foreign_schema();
    // (a) The import succeeds, and the model still sees every pattern as given.
    let compiled = CompiledSchema::compile_foreign(&schema);
    assert_eq!(compiled.as_json(), &schema);
    assert!(!compiled.is_fully_enforced());

    // (b) Each bomb is listed at its path, with the bound it breaks.
    let mut listed: Vec<(String, PatternBound)> = compiled
        .unenforced()
        .iter()
        .map(|v| match &v.kind {
            ViolationKind::PatternTooLarge { bound } => (v.path.to_string(), *bound),
            other => panic!("{}: unexpected {other:?}", v.path),
        })
        .collect();
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected: Vec<(String, PatternBound)> = bombs()
        .into_iter()
        .map(|(name, _, bound)| (format!("schema.properties.{name}.pattern"), bound))
        .chain([(
            "schema.properties.tags.items.pattern".to_owned(),
            PatternBound::CompiledSize { limit: 4 << 20 },
        )])
        .collect();
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(listed, expected);
    assert!(
        compiled
            .unenforced()
            .iter()
            .all(|v| v.kind.name() == "pattern_too_large")
    );

    // (c) Everything else is still enforced: lengths beside the bombs, the small pattern,
    // the minimum, `required`, the closed object, `maxItems`.
    let ok = json!({"n": 1, "id": "ab-12", "repeat": "x", "tags": ["b"]});
    assert!(compiled.is_valid(&ok), "{}", compiled.validate(&ok, ""));
    let bad = json!({
        "n": 0,
        "id": "AB",
        "alternation": "far too long for eight",
        "deep": "123456789",
        "tags": ["a", "b", "c"],
        "extra": true
    });
    let violations = compiled.validate(&bad, "");
    let mut found: Vec<String> = violations
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "alternation too_many",
            "deep too_many",
            "extra undeclared_property",
            "id pattern_mismatch",
            "n below_minimum",
            "tags too_many",
        ]
    );
    assert!(!compiled.is_valid(&json!({"id": "ab-1"})), "n is required");
}

#[test]
fn an_author_schema_with_a_pattern_bomb_is_refused_naming_the_path_and_the_bound() {
    for (name, pattern, bound) in bombs() {
        let schema = json!({
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": pattern}},
            "required": ["code"]
        });
        let err = CompiledSchema::compile(&schema).unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::UnsupportedSchema), "{name}");
        let [violation] = err.violations() else {
            panic!("{name}: {err}");
        };
        assert_eq!(violation.path.to_string(), "schema.properties.code.pattern");
        assert_eq!(violation.kind, ViolationKind::PatternTooLarge { bound });
        let message = violation.to_string();
        assert!(
            message
                .starts_with("schema.properties.code.pattern: pattern is too large to compile: ")
        );
        assert!(message.contains(&bound.to_string()), "{message}");
        // The check, its yes/no form and the node builder agree.
        assert_eq!(check_schema(&schema).len(), 1);
        assert!(!is_schema_supported(&schema));
        let node = json!({"type": "string", "pattern": pattern});
        let keywords = build::Keywords::classify(node.as_object().unwrap(), |_, _, _| {});
        let mut builder = build::Builder::new();
        assert_eq!(
            builder.bounds(JsonType::String, &keywords).err(),
            Some(build::Refused),
            "{name}: the builder hands a bomb to the checked path"
        );
    }
    let err = CompiledSchema::compile(&json!({"type": "string", "pattern": "a".repeat(5000)}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported JSON schema: schema.pattern: pattern is too large to compile: its text is longer than the limit of 4096 bytes"
    );
}

/// A pattern the first repair pass cannot reach (beside a type array, which it removes) is
/// bounded in the next one.
#[test]
fn a_pattern_exposed_by_a_repair_is_bounded_too() {
    let schema = json!({
        "type": "object",
        "properties": {"v": {"type": ["string", "null"], "pattern": "(a{1000}){1000}", "maxLength": 2}}
    });
    let compiled = CompiledSchema::compile_foreign(&schema);
    let listed: Vec<String> = compiled
        .unenforced()
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    assert_eq!(
        listed,
        [
            "schema.properties.v.type type_array",
            "schema.properties.v.pattern pattern_too_large",
        ]
    );
    assert!(compiled.is_valid(&json!({"v": null})));
    assert!(
        !compiled.is_valid(&json!({"v": "abc"})),
        "maxLength is enforced"
    );
}

/// Many patterns just under the size limit (about 1.3 MiB compiled each): the schema's
/// budget admits the first few in walk order and refuses the rest, so that one schema
/// cannot make its compile keep hundreds of MiB.
#[test]
fn the_patterns_of_one_schema_share_a_budget() {
    let mut properties = Map::new();
    for i in 0..10 {
        properties.insert(
            format!("p{i}"),
            json!({"type": "string", "pattern": format!(".{{1000}}|^x{i}$")}),
        );
    }
    // The same text again costs nothing more.
    properties.insert(
        "again".into(),
        json!({"type": "string", "pattern": ".{1000}|^x0$"}),
    );
    let schema = json!({"type": "object", "properties": Value::Object(properties)});

    let compiled = CompiledSchema::compile_foreign(&schema);
    let listed: Vec<String> = compiled
        .unenforced()
        .iter()
        .map(|v| {
            assert_eq!(
                v.kind,
                ViolationKind::PatternTooLarge {
                    bound: PatternBound::SchemaTotal { limit: 32 << 20 }
                }
            );
            v.path.to_string()
        })
        .collect();
    assert_eq!(
        listed,
        [
            "schema.properties.p9.pattern",
            "schema.properties.p8.pattern",
            "schema.properties.p7.pattern",
            "schema.properties.p6.pattern",
        ]
    );
    // The admitted ones are enforced, the refused ones not.
    assert!(!compiled.is_valid(&json!({"p0": "y", "again": "x0"})));
    assert!(compiled.is_valid(&json!({"p0": "x0", "p5": "x5", "again": "x0"})));
    assert!(!compiled.is_valid(&json!({"p5": "y"})));
    assert!(compiled.is_valid(&json!({"p6": "y", "p9": "y"})));

    // An author schema is refused, at the first pattern over the budget.
    let err = CompiledSchema::compile(&schema).unwrap_err();
    let paths: Vec<String> = err
        .violations()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "schema.properties.p6.pattern",
            "schema.properties.p7.pattern",
            "schema.properties.p8.pattern",
            "schema.properties.p9.pattern",
        ]
    );
    assert!(!is_schema_supported(&schema));
    // Without the refused ones, the same schema fits.
    let mut fits = schema.clone();
    if let Some(properties) = fits["properties"].as_object_mut() {
        for i in 6..10 {
            properties.remove(&format!("p{i}"));
        }
    }
    assert!(CompiledSchema::compile(&fits).is_ok());
    assert!(is_schema_supported(&fits));
}

/// Printable ASCII, with the regex syntax that matters weighted up.
fn ascii_pattern() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => "[ -~]".prop_map(|s: String| s),
        1 => prop::sample::select(vec![
            "(", ")", "[", "]", "{", "}", "|", "*", "+", "?", "\\", "^", "$", ".", ",", "-",
            "{2}", "{1,3}", "{100}", "{1000}", "{0,}", "(?:", "(?=", "(?<n>", "\\1", "\\p{L}",
            "\\P{N}", "\\d", "\\w", "\\s", "\\b", "\\u00e9", "\\x41", "[^", "\\c", "\\k<n>",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random ASCII patterns never panic the compiler: each compiles, or is reported at
    /// its path (as not a supported pattern, or as too large), and the import of a foreign
    /// schema holding it succeeds with everything else enforced.
    #[test]
    fn random_ascii_patterns_compile_or_are_reported(pattern in ascii_pattern(), text in "[ -~]{0,16}") {
        let schema = json!({
            "type": "object",
            "properties": {
                "s": {"type": "string", "pattern": pattern, "maxLength": 16},
                "n": {"type": "integer"}
            }
        });
        let violations = check_schema(&schema);
        prop_assert_eq!(is_schema_supported(&schema), violations.is_empty());
        let foreign = CompiledSchema::compile_foreign(&schema);
        match CompiledSchema::compile(&schema) {
            Ok(native) => {
                prop_assert!(violations.is_empty());
                prop_assert!(foreign.is_fully_enforced());
                let value = json!({"s": text});
                prop_assert_eq!(native.is_valid(&value), foreign.is_valid(&value));
            }
            Err(err) => {
                prop_assert_eq!(err.code(), Some(ErrorCode::UnsupportedSchema));
                prop_assert_eq!(err.violations(), &violations[..]);
                let [violation] = &violations[..] else {
                    return Err(TestCaseError::fail(format!("{violations}")));
                };
                prop_assert_eq!(violation.path.to_string(), "schema.properties.s.pattern");
                prop_assert!(matches!(
                    violation.kind,
                    ViolationKind::PatternInvalid { .. } | ViolationKind::PatternTooLarge { .. }
                ), "{}", violation);
                prop_assert_eq!(foreign.unenforced(), &violations[..]);
                // The pattern is not enforced; the rest is.
                let loose = json!({"s": text});
                let long = json!({"s": "x".repeat(17)});
                let wrong = json!({"n": "1"});
                prop_assert!(foreign.is_valid(&loose));
                prop_assert!(!foreign.is_valid(&long));
                prop_assert!(!foreign.is_valid(&wrong));
            }
        }
    }
}
