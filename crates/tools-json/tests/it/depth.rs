//! Depth safety: values at the depth limit, and schemas thousands of levels deep, are
//! handled on a 2 MiB thread stack in a debug build (docs/decisions.md, entry 16).

use serde_json::{Map, Value, json};
use tools_json::{
    CompiledSchema, DEFAULT_MAX_DEPTH, Error, JsonValue, Limits, ViolationKind, check_schema,
    clone_deep, drop_deep,
};

// `json!` clones an embedded `Value` through its (recursive) serializer, so the deep
// builders below assemble containers by hand.

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<_, _>>(),
    )
}

const STACK: usize = 2 * 1024 * 1024;

/// Runs `f` on a thread with a 2 MiB stack and propagates its panic, if any.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .expect("spawn");
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

/// A value of exactly `depth` nested containers, alternating arrays and objects.
fn nested(depth: usize) -> Value {
    let mut value = json!(1.0);
    for level in 0..depth {
        value = if level % 2 == 0 {
            Value::Array(vec![value])
        } else {
            object(vec![("k", value)])
        };
    }
    value
}

/// A schema describing [`nested`] exactly, built iteratively.
fn nested_schema(depth: usize) -> Value {
    let mut schema = json!({"type": "integer"});
    for level in 0..depth {
        schema = if level % 2 == 0 {
            object(vec![("type", json!("array")), ("items", schema)])
        } else {
            object(vec![
                ("type", json!("object")),
                ("properties", object(vec![("k", schema)])),
                ("required", json!(["k"])),
                ("additionalProperties", json!(false)),
            ])
        };
    }
    schema
}

/// A union `oneOf: [string, oneOf: [string, … ]]` of `depth` levels.
fn deep_union(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = object(vec![(
            "oneOf",
            Value::Array(vec![json!({"type": "number"}), schema]),
        )]);
    }
    schema
}

#[test]
fn a_value_at_the_depth_limit_survives_every_walker_on_a_small_stack() {
    on_small_stack(|| {
        let value = JsonValue::new(nested(DEFAULT_MAX_DEPTH)).expect("at the limit is accepted");
        assert_eq!(value.depth(), DEFAULT_MAX_DEPTH);

        // Validate against a schema of the same depth, and against `{}`.
        let schema_json = nested_schema(DEFAULT_MAX_DEPTH);
        let schema = CompiledSchema::compile(&schema_json).expect("deep schema compiles");
        assert!(schema.validate(&value, "value").is_empty());
        assert!(schema.is_valid(&value));
        let any = CompiledSchema::compile(&json!({})).expect("compiles");
        assert!(any.validate(&value, "value").is_empty());

        // Serialize, parse back, compare, clone, drop.
        let text = value.to_string();
        let reparsed = JsonValue::parse(&text).expect("reparse at the limit");
        assert!(reparsed == value);
        let copy = value.clone();
        drop(value);
        drop(reparsed);
        drop(copy);
        drop(schema);
        drop_deep(schema_json);
    });
}

#[test]
fn one_level_past_the_limit_is_refused_with_the_limit_named() {
    on_small_stack(|| {
        let err = JsonValue::new(nested(DEFAULT_MAX_DEPTH + 1)).unwrap_err();
        let Error::NotLossless { violations } = &err else {
            panic!("wrong error: {err}");
        };
        assert_eq!(violations.len(), 1);
        assert_eq!(
            violations[0].kind,
            ViolationKind::TooDeep {
                limit: DEFAULT_MAX_DEPTH
            }
        );
        assert!(err.to_string().contains("depth limit of 512"));
        // The path leads to the first container past the limit.
        assert_eq!(violations[0].path.segments().len(), DEFAULT_MAX_DEPTH);

        let text = "[".repeat(DEFAULT_MAX_DEPTH + 1) + &"]".repeat(DEFAULT_MAX_DEPTH + 1);
        assert!(JsonValue::parse(&text).is_err());
    });
}

#[test]
fn a_raised_limit_admits_and_drops_very_deep_values_without_recursion() {
    on_small_stack(|| {
        let limits = Limits::default().with_max_depth(20_000);
        let value = JsonValue::with_limits(nested(20_000), &limits).expect("accepted");
        let any = CompiledSchema::compile(&json!({})).expect("compiles");
        assert!(any.is_valid(&value));
        let copy = clone_deep(&value);
        drop(value);
        drop_deep(copy);
    });
}

#[test]
fn a_five_thousand_deep_union_is_checked_and_validated_on_a_small_stack() {
    on_small_stack(|| {
        let schema_json = deep_union(5_000);
        assert!(check_schema(&schema_json).is_empty());
        let schema = CompiledSchema::compile(&schema_json).expect("compiles");
        assert!(schema.validate(&json!("leaf"), "value").is_empty());
        // With U(0) = string and U(n) = oneOf[number, U(n-1)], a number matches U(n) for odd
        // n only (U(1) matches once, so U(2) matches twice, so U(3) once…): 5 000 is even.
        let violations = schema.validate(&json!(42), "value");
        assert_eq!(violations.len(), 1);
        assert_eq!(
            violations[0].kind,
            ViolationKind::OneOfMismatch { matched: 2 }
        );
        assert!(schema.validate(&json!(42), "value").len() == 1);
        let odd = CompiledSchema::compile(&json!({"oneOf": [{"type": "number"}, {"oneOf": [{"type": "number"}, {"type": "string"}]}]})).expect("compiles");
        assert_eq!(odd.validate(&json!(42), "value").len(), 1);
        // A boolean matches no branch at any level.
        let violations = schema.validate(&json!(true), "value");
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].path.to_string(), "value");
        assert_eq!(
            violations[0].kind,
            ViolationKind::OneOfMismatch { matched: 0 }
        );
        // Debug output of a deep schema does not recurse either.
        assert!(format!("{schema:?}").contains("nodes"));
        drop(schema);
        drop_deep(schema_json);
    });
}

#[test]
fn a_five_thousand_deep_union_of_strings_rejects_a_number_at_the_root() {
    // The reference scenario's shape: every branch level is `oneOf: [string, deeper]` ending in a string.
    on_small_stack(|| {
        let mut schema_json = json!({"type": "string"});
        for _ in 0..5_000 {
            schema_json = object(vec![(
                "oneOf",
                Value::Array(vec![json!({"type": "null"}), schema_json]),
            )]);
        }
        let schema = CompiledSchema::compile(&schema_json).expect("compiles");
        assert!(schema.validate(&json!("leaf"), "value").is_empty());
        let violations = schema.validate(&json!(42), "value");
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].path.to_string(), "value");
        assert_eq!(
            violations[0].kind,
            ViolationKind::OneOfMismatch { matched: 0 }
        );
        drop(schema);
        drop_deep(schema_json);
    });
}

#[test]
fn a_hundred_thousand_deep_array_parses_and_round_trips_on_a_small_stack() {
    on_small_stack(|| {
        const DEPTH: usize = 100_000;
        let limits = Limits::default().with_max_depth(200_000);
        let text = "[".repeat(DEPTH) + "1.0" + &"]".repeat(DEPTH);
        let value = JsonValue::parse_with_limits(&text, &limits).expect("parses");
        assert_eq!(value.depth(), DEPTH);
        // Written without recursion, canonical (`1.0` became `1`), and read back equal.
        let written = value.to_string();
        assert_eq!(written, "[".repeat(DEPTH) + "1" + &"]".repeat(DEPTH));
        let reparsed = JsonValue::parse_with_limits(&written, &limits).expect("reparses");
        assert!(reparsed == value);
        assert!(value == *reparsed.as_value());
        assert!(format!("{reparsed:?}").starts_with("JsonValue([[["));
        // A shared handle clones without recursion.
        let shared = reparsed.clone();
        drop_deep(reparsed.into_value());
        drop(shared);
        // Not equal when the leaf differs.
        let other = "[".repeat(DEPTH) + "2" + &"]".repeat(DEPTH);
        let other = JsonValue::parse_with_limits(&other, &limits).expect("parses");
        assert!(other != value);
        // A failure deep down unwinds what was built without recursion.
        let broken = "[".repeat(DEPTH) + "1,]" + &"]".repeat(DEPTH - 1);
        let err = JsonValue::parse_with_limits(&broken, &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid JSON text: trailing comma at line 1 column {}",
                DEPTH + 3
            )
        );
        // Past the limit, the text is refused before parsing, with the limit named.
        let err = JsonValue::parse_with_limits(&text, &Limits::default().with_max_depth(DEPTH - 1))
            .unwrap_err();
        assert!(err.to_string().contains("depth limit of 99999"), "{err}");
    });
}

#[test]
fn deep_objects_parse_with_the_last_duplicate_winning_in_the_first_place() {
    on_small_stack(|| {
        const DEPTH: usize = 50_000;
        let limits = Limits::default().with_max_depth(DEPTH);
        let text = r#"{"k":0,"a":"#.repeat(DEPTH) + "null" + &r#","k":1}"#.repeat(DEPTH);
        let value = JsonValue::parse_with_limits(&text, &limits).expect("parses");
        assert_eq!(value.depth(), DEPTH);
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["k", "a"]);
        assert_eq!(value["k"], json!(1));
        let written = value.to_string();
        assert!(written.starts_with(r#"{"k":1,"a":{"k":1,"a":"#));
        let reparsed = JsonValue::parse_with_limits(&written, &limits).expect("reparses");
        assert!(reparsed == value);
    });
}
