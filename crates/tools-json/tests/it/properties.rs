//! Property tests: the validator and the support check are total, canonicalisation is
//! idempotent, and a value generated from a schema validates against it.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_json::{CompiledSchema, JsonValue, check_schema};

/// Any JSON value, including negative zero and integral floats.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop_oneof![
            Just(-0.0f64),
            Just(1.0f64),
            Just(1e300f64),
            -1e6f64..1e6f64,
            any::<i32>().prop_map(f64::from)
        ]
        .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-d]{1,2}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Any lossless JSON value (no negative zero).
fn lossless_json() -> impl Strategy<Value = Value> {
    any_json().prop_map(scrub)
}

fn scrub(value: Value) -> Value {
    match value {
        Value::Number(n) if tools_json::is_negative_zero(&n) => json!(0),
        Value::Array(items) => Value::Array(items.into_iter().map(scrub).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, scrub(v))).collect()),
        other => other,
    }
}

/// A schema of the subset together with a strategy for values it accepts.
#[derive(Clone, Debug)]
enum Shape {
    Any,
    String(Option<Vec<String>>),
    Integer(Option<Vec<i64>>),
    Number,
    Boolean,
    Null,
    Array(Box<Shape>),
    Object {
        props: Vec<(String, Shape, bool)>,
        closed: bool,
    },
    /// Branches of pairwise distinct JSON kinds, so that exactly one can match.
    OneOf(Vec<Shape>),
}

/// The JSON kind a shape's values have, for building disjoint `oneOf` branches.
fn kind(shape: &Shape) -> Option<u8> {
    match shape {
        Shape::Any | Shape::OneOf(_) => None,
        Shape::String(_) => Some(0),
        Shape::Integer(_) | Shape::Number => Some(1),
        Shape::Boolean => Some(2),
        Shape::Null => Some(3),
        Shape::Array(_) => Some(4),
        Shape::Object { .. } => Some(5),
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        Just(Shape::Any),
        prop::option::of(prop::collection::vec("[a-c]{1,3}", 1..4)).prop_map(Shape::String),
        prop::option::of(prop::collection::vec(-5i64..5, 1..4)).prop_map(Shape::Integer),
        Just(Shape::Number),
        Just(Shape::Boolean),
        Just(Shape::Null),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
            (
                prop::collection::vec(("[a-e]{1,3}", inner.clone(), any::<bool>()), 0..4),
                any::<bool>()
            )
                .prop_map(|(props, closed)| {
                    let mut seen = std::collections::HashSet::new();
                    let props = props
                        .into_iter()
                        .filter(|(name, _, _)| seen.insert(name.clone()))
                        .collect();
                    Shape::Object { props, closed }
                }),
            prop::collection::vec(inner, 2..5).prop_filter_map(
                "need two disjoint branches",
                |branches| {
                    let mut kinds = std::collections::HashSet::new();
                    let branches: Vec<Shape> = branches
                        .into_iter()
                        .filter(|b| kind(b).is_some_and(|k| kinds.insert(k)))
                        .collect();
                    (branches.len() >= 2).then_some(Shape::OneOf(branches))
                }
            ),
        ]
    })
}

fn schema_of(shape: &Shape) -> Value {
    match shape {
        Shape::Any => json!({"description": "anything"}),
        Shape::String(None) => json!({"type": "string"}),
        Shape::String(Some(values)) => {
            json!({"type": "string", "enum": values, "const": values[0]})
        }
        Shape::Integer(None) => json!({"type": "integer"}),
        Shape::Integer(Some(values)) => json!({"type": "integer", "enum": values}),
        Shape::Number => json!({"type": "number"}),
        Shape::Boolean => json!({"type": "boolean"}),
        Shape::Null => json!({"type": "null"}),
        Shape::Array(items) => json!({"type": "array", "items": schema_of(items)}),
        Shape::Object { props, closed } => {
            let properties: Map<String, Value> = props
                .iter()
                .map(|(name, shape, _)| (name.clone(), schema_of(shape)))
                .collect();
            let required: Vec<&String> = props
                .iter()
                .filter(|(_, _, required)| *required)
                .map(|(name, _, _)| name)
                .collect();
            json!({"type": "object", "properties": properties, "required": required, "additionalProperties": !closed})
        }
        Shape::OneOf(branches) => {
            json!({"oneOf": branches.iter().map(schema_of).collect::<Vec<_>>()})
        }
    }
}

fn value_of(shape: &Shape) -> BoxedStrategy<Value> {
    match shape {
        Shape::Any => lossless_json().boxed(),
        Shape::String(None) => ".{0,6}".prop_map(Value::String).boxed(),
        // With both enum and const, the const (the first member) is the only valid value.
        Shape::String(Some(values)) => Just(Value::String(values[0].clone())).boxed(),
        Shape::Integer(None) => prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            (-1000i32..1000).prop_map(|n| json!(f64::from(n) + 0.0).to_owned()),
        ]
        .prop_map(|v| if v == json!(-0.0) { json!(0) } else { v })
        .boxed(),
        Shape::Integer(Some(values)) => prop::sample::select(values.clone())
            .prop_map(|n| json!(n))
            .boxed(),
        Shape::Number => prop_oneof![
            (-1e9f64..1e9)
                .prop_filter("not -0", |f| !(*f == 0.0 && f.is_sign_negative()))
                .prop_map(|f| json!(f)),
            any::<i32>().prop_map(|n| json!(n))
        ]
        .boxed(),
        Shape::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        Shape::Null => Just(Value::Null).boxed(),
        Shape::Array(items) => prop::collection::vec(value_of(items), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        Shape::Object { props, closed } => {
            let members: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .iter()
                .map(|(name, shape, required)| {
                    let name = name.clone();
                    let value = value_of(shape);
                    if *required {
                        value.prop_map(move |v| Some((name.clone(), v))).boxed()
                    } else {
                        prop::option::of(value)
                            .prop_map(move |v| v.map(|v| (name.clone(), v)))
                            .boxed()
                    }
                })
                .collect();
            let declared: Vec<String> = props.iter().map(|(n, _, _)| n.clone()).collect();
            let extras = if *closed {
                Just(Vec::new()).boxed()
            } else {
                prop::collection::vec(("[v-z]{1,2}", lossless_json()), 0..3).boxed()
            };
            (members, extras)
                .prop_map(move |(members, extras)| {
                    let mut map: Map<String, Value> = members.into_iter().flatten().collect();
                    for (k, v) in extras {
                        if !declared.contains(&k) {
                            map.insert(k, v);
                        }
                    }
                    Value::Object(map)
                })
                .boxed()
        }
        Shape::OneOf(branches) => {
            let options: Vec<BoxedStrategy<Value>> = branches.iter().map(value_of).collect();
            prop::strategy::Union::new(options).boxed()
        }
    }
}

/// Arbitrary schema-like JSON: objects whose keys are mostly keywords.
fn schema_like() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("type".to_owned()),
        Just("oneOf".to_owned()),
        Just("properties".to_owned()),
        Just("required".to_owned()),
        Just("additionalProperties".to_owned()),
        Just("items".to_owned()),
        Just("enum".to_owned()),
        Just("const".to_owned()),
        Just("description".to_owned()),
        Just("default".to_owned()),
        // The bound keywords and annotations of docs/decisions.md, entry 28.
        prop::sample::select(
            tools_json::BOUND_KEYWORDS
                .iter()
                .chain(&["format", "$schema", "$comment", "deprecated", "readOnly"])
                .copied()
                .collect::<Vec<_>>()
        )
        .prop_map(str::to_owned),
        "[a-z$]{1,6}",
    ];
    let leaf = prop_oneof![
        any_json(),
        prop::sample::select(vec!["^a+$", "(a)\\1", "[", "a{2}", "(?=a)", "\\p{Letter}"])
            .prop_map(|p| json!(p)),
        prop::sample::select(vec![
            json!(0),
            json!(2.0),
            json!(-1),
            json!(0.5),
            json!(true)
        ]),
        prop::sample::select(vec![
            "object", "array", "string", "number", "integer", "boolean", "null", "tuple"
        ])
        .prop_map(|t| json!(t)),
    ];
    leaf.prop_recursive(4, 40, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_support_check_is_total_and_agrees_with_compile(schema in schema_like()) {
        let violations = check_schema(&schema);
        prop_assert_eq!(CompiledSchema::compile(&schema).is_ok(), violations.is_empty());
        // The yes/no form stops at the first violation and must agree.
        prop_assert_eq!(tools_json::is_schema_supported(&schema), violations.is_empty());
        for v in &violations {
            prop_assert!(v.path.to_string().starts_with("schema"));
            prop_assert!(!v.to_string().is_empty());
        }
    }

    /// docs/decisions.md, entry 27: a foreign schema always compiles; inside the subset it
    /// is the same schema, fully enforced; outside, what it leaves unenforced is listed.
    #[test]
    fn a_foreign_schema_always_compiles_and_agrees_inside_the_subset(schema in schema_like(), value in any_json()) {
        let foreign = CompiledSchema::compile_foreign(&schema);
        prop_assert!(tools_json::is_lossless(foreign.as_json()));
        let violations = foreign.validate(&value, "value");
        prop_assert_eq!(violations.is_empty(), foreign.is_valid(&value));
        match CompiledSchema::compile(&schema) {
            Ok(native) => {
                prop_assert!(foreign.is_fully_enforced(), "{:?}", foreign.unenforced());
                prop_assert_eq!(native.validate(&value, "value"), violations);
            }
            Err(_) => {
                for v in foreign.unenforced() {
                    prop_assert!(v.path.to_string().starts_with("schema"));
                }
            }
        }
    }

    #[test]
    fn validation_is_total_over_any_value(schema in schema_like(), value in any_json()) {
        if let Ok(compiled) = CompiledSchema::compile(&schema) {
            let violations = compiled.validate(&value, "value");
            prop_assert_eq!(violations.is_empty(), compiled.is_valid(&value));
            for v in &violations {
                prop_assert!(v.path.to_string().starts_with("value"));
            }
        }
    }

    #[test]
    fn validation_is_total_for_generated_schemas(shape in shape(), value in any_json()) {
        let compiled = CompiledSchema::compile(&schema_of(&shape)).expect("generated schemas are in the subset");
        let violations = compiled.validate(&value, "");
        prop_assert_eq!(violations.is_empty(), compiled.is_valid(&value));
    }

    #[test]
    fn a_value_generated_from_a_schema_validates((shape, value) in shape().prop_flat_map(|s| { let v = value_of(&s); (Just(s), v) })) {
        let schema = schema_of(&shape);
        prop_assert!(check_schema(&schema).is_empty(), "schema {} rejected", schema);
        let compiled = CompiledSchema::compile(&schema).expect("checked");
        let violations = compiled.validate(&value, "value");
        prop_assert!(violations.is_empty(), "schema {} value {}: {}", schema, value, violations);
        // Canonicalised, it is still valid.
        let canonical = JsonValue::new(value).expect("generated values are lossless");
        prop_assert!(compiled.is_valid(&canonical));
    }

    #[test]
    fn a_remembered_validation_always_agrees_with_a_fresh_one(
        shapes in prop::collection::vec(shape(), 1..4),
        value in lossless_json(),
        order in prop::collection::vec(0..4usize, 1..8),
    ) {
        // Several schemas validate one snapshot in any order, repeatedly: every answer equals
        // a fresh validation of the plain value.
        let compiled: Vec<CompiledSchema> = shapes
            .iter()
            .map(|s| CompiledSchema::compile(&schema_of(s)).expect("generated schemas are in the subset"))
            .collect();
        let snapshot = JsonValue::new(value).expect("lossless by construction");
        for i in order {
            let schema = &compiled[i % compiled.len()];
            let remembered = schema.validate_snapshot(&snapshot, "value");
            let fresh = schema.validate(snapshot.as_value(), "value");
            prop_assert_eq!(schema.is_valid_snapshot(&snapshot), fresh.is_empty());
            prop_assert_eq!(remembered, fresh);
        }
    }

    #[test]
    fn canonicalisation_is_idempotent(value in any_json()) {
        if let Ok(once) = JsonValue::new(value.clone()) {
            let twice = JsonValue::new(once.as_value().clone()).expect("canonical values are lossless");
            prop_assert_eq!(&once, &twice);
            prop_assert_eq!(once.to_string(), twice.to_string());
        } else {
            prop_assert!(!tools_json::is_lossless(&value));
        }
    }

    #[test]
    fn canonical_text_round_trips(value in lossless_json()) {
        let canonical = JsonValue::new(value).expect("lossless");
        let reparsed = JsonValue::parse(&canonical.to_string()).expect("reparse");
        prop_assert_eq!(canonical, reparsed);
    }

    #[test]
    fn deep_clone_equals_clone(value in any_json()) {
        prop_assert_eq!(tools_json::clone_deep(&value), value);
    }
}

/// Fragments of JSON text, well formed or not, that random texts are glued from.
const FRAGMENTS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    " ",
    "\n",
    "\t",
    "\"a\"",
    "\"b\"",
    "\"\\u00e9\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"\\udc00x\"",
    "\"\\x\"",
    "\"\\u12\"",
    "\"",
    "\\",
    "\"\u{e9}\"",
    "\"\n\"",
    "1",
    "-",
    "0",
    "01",
    "-0",
    "1.5",
    "1.",
    ".5",
    "1e5",
    "1E-2",
    "1e",
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "2.0",
    "true",
    "tru",
    "false",
    "null",
    "nul",
    "x",
    "\"k\":",
    "\"k\":1",
    "{\"k\":",
    "[1,",
    "[]",
    "{}",
];

/// Random texts: a value written with random spacing, a glued fragment list, or a value's
/// text with one byte removed or one fragment inserted.
fn json_texts() -> impl Strategy<Value = String> {
    let written = (any_json(), any::<bool>()).prop_map(|(value, pretty)| {
        if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            value.to_string()
        }
    });
    let glued = prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24)
        .prop_map(|fragments| fragments.concat());
    let mutated = (
        any_json(),
        any::<prop::sample::Index>(),
        prop::option::of(prop::sample::select(FRAGMENTS)),
    )
        .prop_map(|(value, at, insert)| {
            let mut text = value.to_string();
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match insert {
                Some(fragment) => text.insert_str(at, fragment),
                None if at < text.len() => {
                    text.remove(at);
                }
                None => {}
            }
            text
        });
    // Objects with repeated keys (a `Map` cannot hold them, so they are written by hand).
    let duplicates = prop::collection::vec(("[ab]", any_json()), 0..5).prop_map(|members| {
        let members: Vec<String> = members
            .iter()
            .map(|(key, value)| format!("\"{key}\":{value}"))
            .collect();
        format!("{{{}}}", members.join(","))
    });
    prop_oneof![written, glued, mutated, duplicates]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// The iterative parser agrees with `serde_json::from_str` on shallow texts: the same
    /// value (key order included), the same refusals with the same message and position.
    #[test]
    fn parsing_agrees_with_serde_json(text in json_texts()) {
        let ours = JsonValue::parse(&text);
        let theirs = serde_json::from_str::<Value>(&text)
            .map_err(|e| tools_json::Error::Parse(e.to_string()))
            .and_then(JsonValue::new);
        match (&ours, &theirs) {
            (Ok(ours), Ok(theirs)) => {
                prop_assert_eq!(ours, theirs);
                // Same key order too: the texts are equal.
                prop_assert_eq!(ours.to_string(), theirs.to_string());
            }
            _ => prop_assert_eq!(&ours.map(|_| ()), &theirs.map(|_| ())),
        }
    }
}
