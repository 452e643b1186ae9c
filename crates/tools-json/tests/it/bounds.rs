//! The bound keywords (docs/decisions.md, entry 28) against simple models: `pattern`
//! against the ECMA-262 engine `regress`, numeric bounds against exact small-number
//! arithmetic, lengths against a code-point count, `uniqueItems` against pairwise
//! comparison.

use proptest::prelude::*;
use serde_json::{Value, json};
use tools_json::{CompiledSchema, CountUnit, ViolationKind, check_schema};

/// Small ECMA-262 patterns over the constructs the rewrite handles.
fn pattern() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(vec![
        "a",
        "b",
        "é",
        " ",
        "1",
        "_",
        "-",
        ".",
        r"\d",
        r"\D",
        r"\w",
        r"\W",
        r"\s",
        r"\S",
        r"\b",
        r"\B",
        "[ab]",
        r"[^a\d]",
        "[a-c]",
        r"[\s-]",
        r"\u00e9",
        r"\x41",
        r"\n",
        "^",
        "$",
        "[]",
        "[^]",
        r"\.",
        r"\u2028",
        r"[\w\u2028]",
        r"\p{Letter}",
        r"\P{L}",
    ])
    .prop_map(str::to_owned);
    atom.prop_recursive(3, 16, 3, |inner| {
        let quantifier =
            prop::sample::select(vec!["*", "+", "?", "{1,2}", "{2}", "*?", "+?", "{0,}"]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|parts| parts.concat()),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}|{b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("(?:{a})")),
            (inner, quantifier).prop_map(|(a, q)| format!("(?:{a}){q}")),
        ]
    })
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            'a', 'b', 'é', ' ', '\n', '1', '_', '-', '\u{2028}', 'A', '.', '\u{85}', '\u{a0}',
        ]),
        0..8,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn string_schema(pattern: &str) -> Option<CompiledSchema> {
    CompiledSchema::compile(&json!({"type": "string", "pattern": pattern})).ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The linear-time rewrite finds a match exactly when the ECMA-262 engine does.
    #[test]
    fn the_pattern_rewrite_agrees_with_the_ecma_engine(pattern in pattern(), texts in prop::collection::vec(text(), 1..6)) {
        let ecma = regress::Regex::with_flags(&pattern, "u");
        let schema = string_schema(&pattern);
        // Valid ECMA-262 exactly when the subset accepts it (the generator has no
        // backreference or lookaround).
        prop_assert_eq!(ecma.is_ok(), schema.is_some(), "pattern {:?}", pattern);
        if let (Ok(ecma), Some(schema)) = (ecma, schema) {
            for text in texts {
                let expected = ecma.find(&text).is_some();
                prop_assert_eq!(
                    schema.is_valid(&json!(text)), expected,
                    "pattern {:?} on {:?}", pattern, text
                );
            }
        }
    }

    /// Numeric bounds and `multipleOf` on halves and small integers, where `f64` arithmetic
    /// is exact, agree with the obvious model.
    #[test]
    fn numeric_bounds_agree_with_exact_arithmetic(
        min in prop::option::of(-8i32..8), max in prop::option::of(-8i32..8),
        xmin in prop::option::of(-8i32..8), xmax in prop::option::of(-8i32..8),
        divisor in prop::option::of(prop::sample::select(vec![0.25, 0.5, 1.0, 2.0, 3.0])),
        halves in -20i32..20, as_float in any::<bool>(),
    ) {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), json!("number"));
        let half = |n: i32| f64::from(n) / 2.0;
        if let Some(m) = min { schema.insert("minimum".into(), json!(half(m))); }
        if let Some(m) = max { schema.insert("maximum".into(), json!(half(m))); }
        if let Some(m) = xmin { schema.insert("exclusiveMinimum".into(), json!(m)); }
        if let Some(m) = xmax { schema.insert("exclusiveMaximum".into(), json!(m)); }
        if let Some(d) = divisor { schema.insert("multipleOf".into(), json!(d)); }
        let compiled = CompiledSchema::compile(&Value::Object(schema)).expect("in the subset");
        let v = half(halves);
        let value = if v.fract() == 0.0 && !as_float { json!(halves / 2) } else { json!(v) };
        let value = if value == json!(-0.0) { json!(0) } else { value };
        let expected = min.is_none_or(|m| v >= half(m))
            && max.is_none_or(|m| v <= half(m))
            && xmin.is_none_or(|m| v > f64::from(m))
            && xmax.is_none_or(|m| v < f64::from(m))
            && divisor.is_none_or(|d| (v / d).fract() == 0.0);
        prop_assert_eq!(compiled.is_valid(&value), expected, "{} against {}", value, compiled.as_json());
        prop_assert_eq!(compiled.validate(&value, "v").is_empty(), expected);
    }

    /// Lengths count code points, whatever the bytes.
    #[test]
    fn lengths_count_code_points(text in "\\PC{0,12}", min in 0u64..8, max in 0u64..8) {
        let compiled = CompiledSchema::compile(&json!({"type": "string", "minLength": min, "maxLength": max})).expect("in the subset");
        let n = text.chars().count() as u64;
        let violations = compiled.validate(&json!(text), "s");
        prop_assert_eq!(violations.is_empty(), n >= min && n <= max);
        for v in &violations {
            let ok = matches!(
                v.kind,
                ViolationKind::TooFew { unit: CountUnit::Characters, limit } if limit == min && n < min
            ) || matches!(
                v.kind,
                ViolationKind::TooMany { unit: CountUnit::Characters, limit } if limit == max && n > max
            );
            prop_assert!(ok, "{}", v);
        }
    }

    /// `uniqueItems` finds the first duplicate that pairwise comparison finds.
    #[test]
    fn unique_items_agrees_with_pairwise_comparison(items in prop::collection::vec(small_json(), 0..10)) {
        let compiled = CompiledSchema::compile(&json!({"type": "array", "uniqueItems": true})).expect("in the subset");
        let mut expected = None;
        'outer: for second in 0..items.len() {
            for first in 0..second {
                if model_eq(&items[first], &items[second]) {
                    expected = Some((first, second));
                    break 'outer;
                }
            }
        }
        let violations = compiled.validate(&Value::Array(items), "a");
        match expected {
            None => prop_assert!(violations.is_empty(), "{}", violations),
            Some((first, second)) => {
                prop_assert_eq!(violations.len(), 1);
                prop_assert_eq!(&violations[0].kind, &ViolationKind::DuplicateItems { first, second });
            }
        }
    }
}

/// Small JSON values where equality by value differs from equality by representation.
fn small_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![prop::sample::select(vec![
        json!(1),
        json!(1.0),
        json!(2),
        json!(0.5),
        json!(true),
        json!(null),
        json!("1"),
        json!("a"),
    ]),];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["x", "y"]), inner), 0..3).prop_map(
                |pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            ),
        ]
    })
}

/// Equality with numbers by value (the values here are exact in `f64`).
fn model_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| model_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| model_eq(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn bounds_need_the_right_type_and_shape() {
    let kinds = |schema: Value| -> Vec<(String, &'static str)> {
        check_schema(&schema)
            .iter()
            .map(|v| (v.path.to_string(), v.kind.name()))
            .collect()
    };
    assert_eq!(
        kinds(json!({"type": "integer", "pattern": "a", "minLength": 1, "minimum": 1})),
        [
            ("schema.minLength".to_owned(), "keyword_on_wrong_type"),
            ("schema.pattern".to_owned(), "keyword_on_wrong_type"),
        ]
    );
    assert_eq!(
        kinds(json!({"minLength": -1, "multipleOf": 0, "uniqueItems": "yes", "maximum": "9"})),
        [
            ("schema.maximum".to_owned(), "bound_malformed"),
            ("schema.multipleOf".to_owned(), "bound_malformed"),
            ("schema.minLength".to_owned(), "bound_malformed"),
            ("schema.uniqueItems".to_owned(), "bound_malformed"),
        ]
    );
    assert_eq!(
        kinds(json!({"oneOf": [{"type": "string"}, {"type": "null"}], "maxLength": 3})),
        [("schema.maxLength".to_owned(), "beside_one_of")]
    );
    assert_eq!(
        kinds(json!({"type": "string", "pattern": "(?<=a)b", "format": 1, "deprecated": "no"})),
        [
            ("schema.format".to_owned(), "annotation_not_string"),
            ("schema.deprecated".to_owned(), "annotation_not_boolean"),
            ("schema.pattern".to_owned(), "pattern_invalid"),
        ]
    );
    assert!(kinds(json!({"type": "array", "minItems": 2.0, "maxItems": 1e300})).is_empty());
    assert!(
        kinds(
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x",
            "$comment": "c", "readOnly": true, "writeOnly": false, "type": "null"})
        )
        .is_empty()
    );
}

#[test]
fn every_bound_violation_is_reported_with_its_path_and_message() {
    let schema = CompiledSchema::compile(&json!({
        "type": "object",
        "minProperties": 2,
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 500, "multipleOf": 5},
            "tags": {"type": "array", "maxItems": 2, "uniqueItems": true, "items": {"type": "string", "maxLength": 3}},
            "id": {"type": "string", "pattern": "^[a-z]+-\\d+$"}
        }
    }))
    .expect("in the subset");
    let violations = schema.validate(&json!({"n": 501, "tags": ["a", "abcd", "a"]}), "");
    assert_eq!(
        violations.to_string(),
        "n: must be <= 500; n: must be a multiple of 5; \
         tags: must have at most 2 items; tags: must have unique items, but items 0 and 2 are equal; \
         tags[1]: must have at most 3 characters"
    );
    let violations = schema.validate(&json!({"id": "web-x"}), "");
    assert_eq!(
        violations.to_string(),
        "arguments: must have at least 2 properties; id: must match the pattern \"^[a-z]+-\\\\d+$\""
    );
    assert!(schema.is_valid(&json!({"n": 500.0, "id": "web-01"})));
}

#[test]
fn typeless_bounds_apply_to_values_of_their_own_type() {
    let schema = CompiledSchema::compile(&json!({"minimum": 2, "maxLength": 1, "minItems": 1}))
        .expect("in the subset");
    assert!(schema.is_valid(&json!("a")));
    assert!(!schema.is_valid(&json!("ab")));
    assert!(schema.is_valid(&json!(true)));
    assert!(!schema.is_valid(&json!(1)));
    assert!(!schema.is_valid(&json!([])));
    assert!(schema.is_valid(&json!({})));
}

#[test]
fn bounds_inside_one_of_branches_decide_the_branch() {
    let schema = CompiledSchema::compile(&json!({"oneOf": [
        {"type": "integer", "maximum": 9},
        {"type": "integer", "minimum": 10}
    ]}))
    .expect("in the subset");
    assert!(schema.is_valid(&json!(3)));
    assert!(schema.is_valid(&json!(30)));
    let schema = CompiledSchema::compile(&json!({"oneOf": [
        {"type": "integer", "maximum": 10},
        {"type": "integer", "minimum": 10}
    ]}))
    .expect("in the subset");
    assert_eq!(
        schema.validate(&json!(10), "v").to_string(),
        "v: must match exactly one oneOf branch, but matched 2"
    );
}
