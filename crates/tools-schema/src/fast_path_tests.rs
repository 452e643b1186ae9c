//! The fast path (`fast_path.rs`) held to the full path (author
//! walk, build, support check) on random author specs, good and bad:
//! - whatever the fast path accepts, the full path accepts, with the same JSON;
//! - the two validators give the same violations (kinds, paths, messages) on valid samples
//!   of the schema and on those samples broken at random;
//! - a spec made without any fault always takes the fast path.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_json::CompiledSchema;

use crate::compile::{Root, compile_full};

/// A small deterministic generator (xorshift), so that one `u64` from proptest makes a
/// whole spec and its probe values.
struct Gen {
    state: u64,
    /// Whether this spec may carry faults (author errors, subset violations, unknown keys).
    faults: bool,
}

impl Gen {
    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// A fault, one time in `one_in`, when this spec may carry faults.
    fn fault(&mut self, one_in: u64) -> bool {
        self.faults && self.chance(one_in)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let i = usize::try_from(self.below(items.len() as u64)).unwrap_or(0);
        items.get(i).copied().unwrap_or("")
    }
}

const SCALARS: [&str; 5] = ["string", "number", "integer", "boolean", "null"];

/// A scalar value of `ty` (numbers include integral floats, which are canonicalized).
fn scalar_of(g: &mut Gen, ty: &str) -> Value {
    match ty {
        "string" => json!(g.pick(&["a", "bb", "ccc", ""])),
        "number" => [json!(1.5), json!(2), json!(-3.25), json!(4.0)][g.below(4) as usize].clone(),
        "integer" => [json!(1), json!(2.0), json!(-7), json!(40)][g.below(4) as usize].clone(),
        "boolean" => json!(g.chance(2)),
        _ => Value::Null,
    }
}

fn annotations(g: &mut Gen, map: &mut Map<String, Value>, ty: &str) {
    if g.chance(3) {
        let text = if g.fault(6) {
            json!(3)
        } else {
            json!("about it")
        };
        map.insert("description".into(), text);
    }
    if g.chance(6) {
        map.insert("title".into(), json!("T"));
    }
    if g.chance(6) {
        let data = if g.fault(4) {
            json!({"x": -0.0})
        } else {
            json!({"n": 1.0, "s": "d"})
        };
        map.insert("default".into(), data);
    }
    if g.chance(8) {
        map.insert("examples".into(), json!([1, "two", null]));
    }
    if g.chance(8) {
        let flag = if g.fault(4) {
            json!("yes")
        } else {
            json!(true)
        };
        map.insert("deprecated".into(), flag);
    }
    let formatted = matches!(ty, "string" | "number" | "integer");
    if (formatted && g.chance(6)) || g.fault(30) {
        let format = if g.fault(5) {
            json!(1)
        } else {
            json!("date-time")
        };
        map.insert("format".into(), format);
    }
    if g.fault(25) {
        let key = g.pick(&["$comment", "x-extra", "readOnly", "nullable", "required"]);
        map.insert(key.into(), json!(true));
    }
}

fn bounds(g: &mut Gen, map: &mut Map<String, Value>, ty: &str) {
    let candidates: &[(&str, Value, Value)] = match ty {
        "string" => &[
            ("minLength", json!(1), json!(-1)),
            ("maxLength", json!(3.0), json!("3")),
            ("pattern", json!("^[a-c]*$"), json!("(")),
        ],
        "number" | "integer" => &[
            ("minimum", json!(-5.0), json!("0")),
            ("maximum", json!(10), json!(null)),
            ("exclusiveMinimum", json!(-10), json!(true)),
            ("multipleOf", json!(0.5), json!(0)),
        ],
        "array" => &[
            ("minItems", json!(1), json!(1.5)),
            ("maxItems", json!(4), json!(-2)),
            ("uniqueItems", json!(true), json!(1)),
        ],
        "object" => &[
            ("minProperties", json!(0), json!("x")),
            ("maxProperties", json!(8.0), json!(-1)),
        ],
        _ => &[],
    };
    for (key, good, bad) in candidates {
        if g.chance(5) {
            let value = if g.fault(5) {
                bad.clone()
            } else {
                good.clone()
            };
            map.insert((*key).into(), value);
        }
    }
    if g.fault(30) {
        // A bound of another type's family.
        let key = g.pick(&["minLength", "minimum", "minItems", "minProperties"]);
        map.insert(key.into(), json!(1));
    }
}

/// A value node (`property`: it sits in a property map and may carry `required: true`).
fn node(g: &mut Gen, depth: u32, property: bool) -> Value {
    if g.fault(40) {
        return json!(7);
    }
    let kinds = if depth == 0 { 6 } else { 9 };
    let mut map = Map::new();
    let ty = match g.below(kinds) {
        k @ 0..=4 => SCALARS[k as usize],
        5 => "json",
        6 => "array",
        7 => "object",
        _ => "oneOf",
    };
    match ty {
        "oneOf" => {
            let n = if g.fault(6) { 1 } else { 2 + g.below(2) };
            let branches: Vec<Value> = (0..n).map(|_| node(g, depth - 1, false)).collect();
            map.insert("oneOf".into(), Value::Array(branches));
            if g.fault(15) {
                map.insert("type".into(), json!("string"));
            }
        }
        "array" => {
            map.insert("type".into(), json!("array"));
            if !g.chance(4) {
                map.insert("items".into(), node(g, depth - 1, false));
            }
            bounds(g, &mut map, ty);
        }
        "object" => {
            map.insert("type".into(), json!("object"));
            if !g.fault(10) {
                let open = if g.fault(8) {
                    json!("no")
                } else {
                    json!(g.chance(2))
                };
                map.insert("additionalProperties".into(), open);
            }
            if !g.chance(5) {
                map.insert("properties".into(), properties(g, depth - 1));
            }
            bounds(g, &mut map, ty);
        }
        "json" => {
            map.insert("type".into(), json!("json"));
            if g.fault(10) {
                map.insert("minLength".into(), json!(1));
            }
        }
        scalar => {
            let written = if g.fault(30) { "text" } else { scalar };
            map.insert("type".into(), json!(written));
            if scalar != "null" && g.chance(3) {
                let mut members: Vec<Value> =
                    (0..1 + g.below(3)).map(|_| scalar_of(g, scalar)).collect();
                members.dedup();
                if g.fault(6) {
                    members = if g.chance(2) {
                        Vec::new()
                    } else {
                        vec![json!({"no": 1})]
                    };
                }
                let constant = g.chance(3).then(|| {
                    if g.fault(4) {
                        scalar_of(g, "string")
                    } else {
                        members.first().cloned().unwrap_or(Value::Null)
                    }
                });
                map.insert("enum".into(), Value::Array(members));
                if let Some(constant) = constant {
                    map.insert("const".into(), constant);
                }
            } else if g.chance(6) {
                let constant = if g.fault(4) {
                    json!([1])
                } else {
                    scalar_of(g, scalar)
                };
                map.insert("const".into(), constant);
            }
            bounds(g, &mut map, scalar);
        }
    }
    annotations(g, &mut map, ty);
    if property && g.chance(2) {
        let flag = if g.fault(8) {
            json!(false)
        } else {
            json!(true)
        };
        map.insert("required".into(), flag);
    }
    Value::Object(map)
}

fn properties(g: &mut Gen, depth: u32) -> Value {
    let mut map = Map::new();
    for _ in 0..g.below(4) {
        let name = g.pick(&["id", "name", "tags", "a", "b", "nested"]);
        map.insert(name.into(), node(g, depth, true));
    }
    if g.fault(20) {
        return json!(["not", "a", "map"]);
    }
    Value::Object(map)
}

/// A random value, to swap into a sample.
fn noise(g: &mut Gen) -> Value {
    match g.below(8) {
        0 => json!(null),
        1 => json!(g.chance(2)),
        2 => json!(g.below(100)),
        3 => json!(-2.5),
        4 => json!(g.pick(&["a", "zzzz", "bb"])),
        5 => json!([1, "x"]),
        6 => json!({"id": "x", "extra": 1}),
        _ => json!({}),
    }
}

/// `value` with one randomly chosen place replaced by noise (maybe the root itself).
fn break_one(g: &mut Gen, mut value: Value) -> Value {
    break_at(g, &mut value);
    value
}

fn break_at(g: &mut Gen, value: &mut Value) {
    let stop = g.chance(3);
    match value {
        Value::Array(items) if !items.is_empty() && !stop => {
            let i = g.below(items.len() as u64) as usize;
            if let Some(child) = items.get_mut(i) {
                return break_at(g, child);
            }
        }
        Value::Object(map) if !map.is_empty() && !stop => {
            let i = g.below(map.len() as u64) as usize;
            if let Some(child) = map.values_mut().nth(i) {
                return break_at(g, child);
            }
        }
        _ => {}
    }
    *value = noise(g);
}

fn both(
    spec: &Value,
    root: Root,
) -> (
    Result<CompiledSchema, ()>,
    Result<CompiledSchema, crate::Error>,
) {
    let shared = spec.clone();
    let fast = crate::fast_path::compile(spec, root, move || crate::compile::build(&shared, root))
        .map_err(|_| ());
    (fast, compile_full(spec, root))
}

fn check(seed: u64, faults: bool) -> Result<bool, TestCaseError> {
    let mut g = Gen {
        state: seed | 1,
        faults,
    };
    let (spec, root) = if g.chance(2) {
        let closed = g.chance(2);
        (properties(&mut g, 3), Root::Params { closed })
    } else {
        (node(&mut g, 3, false), Root::Value)
    };
    let (fast, full) = both(&spec, root);
    let Ok(fast) = fast else {
        prop_assert!(faults, "a spec without faults left the fast path: {spec}");
        return Ok(false);
    };
    prop_assert!(!fast.is_json_rendered());
    let full = match full {
        Ok(full) => full,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "fast accepted, full refused {spec}: {e}"
            )));
        }
    };
    prop_assert_eq!(fast.as_json(), full.as_json(), "spec {}", spec);
    let samples = crate::testing::samples(full.as_json()).unwrap_or_default();
    let mut probes = samples.clone();
    for sample in samples.into_iter().take(6) {
        probes.push(break_one(&mut g, sample.clone()));
        probes.push(break_one(&mut g, sample));
    }
    probes.push(noise(&mut g));
    for probe in &probes {
        let (a, b) = (fast.validate(probe, ""), full.validate(probe, ""));
        prop_assert_eq!(&a, &b, "spec {} value {}", spec, probe);
        prop_assert_eq!(a.to_string(), b.to_string());
        prop_assert_eq!(fast.is_valid(probe), full.is_valid(probe));
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn what_the_fast_path_accepts_the_full_path_accepts_alike(seed in any::<u64>()) {
        check(seed, true)?;
    }

    #[test]
    fn a_spec_without_faults_always_takes_the_fast_path(seed in any::<u64>()) {
        prop_assert!(check(seed, false)?);
    }
}

#[test]
fn faults_do_reach_the_full_path() {
    // The generator's faults are not all absorbed: many specs with faults are refused by
    // the fast path (and by the full path, with errors), so both branches are exercised.
    let refused = (1..400u64)
        .filter(|seed| !check(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), true).unwrap_or(true))
        .count();
    assert!(refused > 20, "only {refused} of 400 specs were refused");
}
