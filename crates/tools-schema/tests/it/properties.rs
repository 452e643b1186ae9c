//! Property tests: any DSL tree compiles to a schema the subset accepts, deterministically;
//! the compiled `required` lists follow the `required` flags; values generated from a spec
//! validate; removing a required key is reported by name.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_schema::{Params, Schema, params};

#[derive(Clone, Debug)]
enum Shape {
    Str(Option<Vec<String>>),
    Int,
    Num,
    Bool,
    Null,
    Json,
    Arr(Box<Shape>),
    Obj {
        props: Vec<(String, Shape, bool)>,
        open: bool,
    },
    /// Branches of distinct JSON kinds, so that exactly one matches.
    OneOf(Vec<Shape>),
}

fn kind(shape: &Shape) -> Option<u8> {
    Some(match shape {
        Shape::Str(_) => 0,
        Shape::Int | Shape::Num => 1,
        Shape::Bool => 2,
        Shape::Null => 3,
        Shape::Arr(_) => 4,
        Shape::Obj { .. } => 5,
        Shape::Json | Shape::OneOf(_) => return None,
    })
}

fn unique(props: Vec<(String, Shape, bool)>) -> Vec<(String, Shape, bool)> {
    let mut seen = std::collections::HashSet::new();
    props
        .into_iter()
        .filter(|(n, _, _)| seen.insert(n.clone()))
        .collect()
}

fn shape(depth: u32) -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        prop::option::of(prop::collection::vec("[a-c]{1,3}", 1..4)).prop_map(Shape::Str),
        Just(Shape::Int),
        Just(Shape::Num),
        Just(Shape::Bool),
        Just(Shape::Null),
        Just(Shape::Json),
    ];
    leaf.prop_recursive(depth, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Arr(Box::new(s))),
            (
                prop::collection::vec(("[a-e]{1,3}", inner.clone(), any::<bool>()), 0..4),
                any::<bool>()
            )
                .prop_map(|(props, open)| Shape::Obj {
                    props: unique(props),
                    open
                }),
            prop::collection::vec(inner, 2..5).prop_filter_map(
                "two disjoint branches",
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

fn builder(shape: &Shape) -> Schema {
    match shape {
        Shape::Str(None) => Schema::string().into(),
        Shape::Str(Some(values)) => Schema::string().enum_values(values.clone()).into(),
        Shape::Int => Schema::integer().into(),
        Shape::Num => Schema::number().describe("a number").into(),
        Shape::Bool => Schema::boolean().into(),
        Shape::Null => Schema::null().into(),
        Shape::Json => Schema::json().into(),
        Shape::Arr(items) => Schema::array(builder(items)).into(),
        Shape::Obj { props, open } => {
            let mut object = if *open {
                Schema::open_object()
            } else {
                Schema::closed_object()
            };
            for (name, shape, required) in props {
                object = if *required {
                    object.required(name.clone(), builder(shape))
                } else {
                    object.optional(name.clone(), builder(shape))
                };
            }
            object.into()
        }
        Shape::OneOf(branches) => Schema::one_of(branches.iter().map(builder)).into(),
    }
}

fn params_of(props: &[(String, Shape, bool)]) -> Params {
    let mut spec = params();
    for (name, shape, required) in props {
        spec = if *required {
            spec.required(name.clone(), builder(shape))
        } else {
            spec.optional(name.clone(), builder(shape))
        };
    }
    spec
}

fn value_of(shape: &Shape) -> BoxedStrategy<Value> {
    match shape {
        Shape::Str(None) => ".{0,5}".prop_map(Value::String).boxed(),
        Shape::Str(Some(values)) => prop::sample::select(values.clone())
            .prop_map(Value::String)
            .boxed(),
        Shape::Int => prop_oneof![
            any::<i64>().prop_map(Value::from),
            (-100i32..100).prop_map(|n| json!(f64::from(n) + 0.5 - 0.5))
        ]
        .prop_map(|v| if v == json!(-0.0) { json!(0) } else { v })
        .boxed(),
        Shape::Num => (-1e6f64..1e6)
            .prop_filter("not -0", |f| !(*f == 0.0 && f.is_sign_negative()))
            .prop_map(|f| json!(f))
            .boxed(),
        Shape::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Shape::Null => Just(Value::Null).boxed(),
        Shape::Json => prop_oneof![
            Just(json!(null)),
            Just(json!({"a": [1, "b"]})),
            any::<i32>().prop_map(Value::from)
        ]
        .boxed(),
        Shape::Arr(items) => prop::collection::vec(value_of(items), 0..3)
            .prop_map(Value::Array)
            .boxed(),
        Shape::Obj { props, open } => object_value(props, *open),
        Shape::OneOf(branches) => {
            prop::strategy::Union::new(branches.iter().map(value_of).collect::<Vec<_>>()).boxed()
        }
    }
}

fn object_value(props: &[(String, Shape, bool)], open: bool) -> BoxedStrategy<Value> {
    let members: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .iter()
        .map(|(name, shape, required)| {
            let name = name.clone();
            if *required {
                value_of(shape)
                    .prop_map(move |v| Some((name.clone(), v)))
                    .boxed()
            } else {
                prop::option::of(value_of(shape))
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed()
            }
        })
        .collect();
    let declared: Vec<String> = props.iter().map(|(n, _, _)| n.clone()).collect();
    (members, any::<bool>())
        .prop_map(move |(members, extra)| {
            let mut map: Map<String, Value> = members.into_iter().flatten().collect();
            if open && extra && !declared.iter().any(|d| d == "zz") {
                map.insert("zz".into(), json!({"free": true}));
            }
            Value::Object(map)
        })
        .boxed()
}

fn props_strategy(depth: u32) -> impl Strategy<Value = Vec<(String, Shape, bool)>> {
    prop::collection::vec(("[a-e]{1,3}", shape(depth), any::<bool>()), 0..5).prop_map(unique)
}

/// The `required` lists of every object in a compiled schema, with the flags expected.
fn check_required(compiled: &Value, props: &[(String, Shape, bool)]) -> Result<(), TestCaseError> {
    let expected: Vec<&str> = props
        .iter()
        .filter(|(_, _, r)| *r)
        .map(|(n, _, _)| n.as_str())
        .collect();
    let actual: Vec<&str> = compiled
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    prop_assert_eq!(&actual, &expected);
    if expected.is_empty() {
        prop_assert!(
            compiled.get("required").is_none(),
            "an empty required list is omitted"
        );
    }
    for (name, shape, _) in props {
        let child = &compiled["properties"][name];
        check_shape_required(child, shape)?;
    }
    Ok(())
}

fn check_shape_required(compiled: &Value, shape: &Shape) -> Result<(), TestCaseError> {
    match shape {
        Shape::Obj { props, open } => {
            prop_assert_eq!(&compiled["additionalProperties"], &json!(*open));
            if props.is_empty() {
                // No declared property: the builder writes no `properties` key.
                prop_assert!(compiled.get("properties").is_none());
                return Ok(());
            }
            check_required(compiled, props)
        }
        Shape::Arr(items) => check_shape_required(&compiled["items"], items),
        Shape::OneOf(branches) => {
            for (i, branch) in branches.iter().enumerate() {
                check_shape_required(&compiled["oneOf"][i], branch)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn required_lists_follow_the_flags(props in props_strategy(2)) {
        let compiled = params_of(&props).compile().expect("generated specs compile");
        let json = compiled.as_json();
        prop_assert_eq!(&json["type"], &json!("object"));
        prop_assert!(json.get("additionalProperties").is_none(), "the root is open");
        check_required(json, &props)?;
    }

    #[test]
    fn generated_specs_compile_deterministically_into_the_subset(props in props_strategy(3)) {
        let spec = params_of(&props);
        let first = spec.compile().expect("compiles");
        prop_assert!(tools_json::check_schema(first.as_json()).is_empty());
        let second = spec.compile().expect("compiles again");
        prop_assert_eq!(first.as_json().to_string(), second.as_json().to_string());
        // The JSON form of the spec compiles to the same text.
        let from_json = Params::from_json(spec.as_json().clone()).compile().expect("compiles");
        prop_assert_eq!(first.as_json().to_string(), from_json.as_json().to_string());
    }

    #[test]
    fn validation_never_panics(props in props_strategy(2), args in any::<Option<i32>>().prop_map(|n| json!({"a": n, "b": [n], "c": {"d": n}}))) {
        let compiled = params_of(&props).compile().expect("compiles");
        let _ = compiled.validate(&args, "");
    }

    #[test]
    fn generated_values_validate_and_missing_required_keys_are_named(
        (props, value) in props_strategy(3).prop_flat_map(|props| {
            let value = object_value(&props, true);
            (Just(props), value)
        })
    ) {
        let compiled = params_of(&props).compile().expect("compiles");
        let violations = compiled.validate(&value, "");
        prop_assert!(violations.is_empty(), "{} rejected: {}", value, violations);
        for (name, _, required) in &props {
            if *required {
                let mut without = value.clone();
                without.as_object_mut().expect("object").shift_remove(name);
                let violations = compiled.validate(&without, "");
                prop_assert!(violations.iter().any(|v| v.path.to_string() == *name), "removing {} went unnoticed", name);
            }
        }
        for not_an_object in [json!(null), json!(1), json!("x"), json!([value.clone()])] {
            prop_assert!(!compiled.validate(&not_an_object, "").is_empty());
        }
    }
}
