//! `uniqueItems`: the first pair of equal items of an array, in expected linear time.
//!
//! Equality is JSON Schema's: numbers compare by value (`1` equals `1.0`), objects as maps
//! (key order ignored), arrays element by element. Comparing every pair would be quadratic
//! in a model-chosen array, so each item gets a hash that equal items share (numbers hashed
//! by exact value, object members combined order-independently), and only items whose
//! hashes collide are compared. Both walks are iterative: no depth overflows the stack.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::Value;

use super::json_scalar_eq;

/// The indices `(first, second)` of the first item (by `second`) equal to an earlier one.
pub(crate) fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() < 2 {
        return None;
    }
    let state = foldhash::fast::FixedState::default();
    let mut seen: HashMap<u64, Vec<usize>, foldhash::fast::FixedState> =
        HashMap::with_capacity_and_hasher(items.len(), state.clone());
    for (index, item) in items.iter().enumerate() {
        let bucket = seen.entry(value_hash(item, &state)).or_default();
        if let Some(&first) = bucket
            .iter()
            .find(|&&earlier| items.get(earlier).is_some_and(|e| equal(e, item)))
        {
            return Some((first, index));
        }
        bucket.push(index);
    }
    None
}

/// A hash equal for values that [`equal`] calls equal.
fn value_hash(value: &Value, state: &foldhash::fast::FixedState) -> u64 {
    // Post-order: a container's hash combines its children's, computed first.
    enum Task<'a> {
        Enter(&'a Value),
        Array(usize),
        Object(&'a serde_json::Map<String, Value>),
    }
    let mut tasks = vec![Task::Enter(value)];
    let mut hashes: Vec<u64> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(Value::Array(items)) => {
                tasks.push(Task::Array(items.len()));
                tasks.extend(items.iter().rev().map(Task::Enter));
            }
            Task::Enter(Value::Object(map)) => {
                tasks.push(Task::Object(map));
                tasks.extend(map.values().rev().map(Task::Enter));
            }
            Task::Enter(scalar) => hashes.push(scalar_hash(scalar, state)),
            Task::Array(len) => {
                let children = hashes.split_off(hashes.len().saturating_sub(len));
                hashes.push(state.hash_one((1u8, len, &children)));
            }
            Task::Object(map) => {
                let children = hashes.split_off(hashes.len().saturating_sub(map.len()));
                // Order-independent: a sum of per-member hashes.
                let mut combined = 0u64;
                for (key, child) in map.keys().zip(children) {
                    combined = combined.wrapping_add(state.hash_one((key, child)));
                }
                hashes.push(state.hash_one((2u8, map.len(), combined)));
            }
        }
    }
    hashes.pop().unwrap_or(0)
}

fn scalar_hash(value: &Value, state: &foldhash::fast::FixedState) -> u64 {
    let mut h = state.build_hasher();
    match value {
        Value::Null => 3u8.hash(&mut h),
        Value::Bool(b) => (4u8, b).hash(&mut h),
        Value::String(s) => (5u8, s).hash(&mut h),
        Value::Number(n) => {
            // Integral values hash as integers whatever their representation.
            let f = n.as_f64().unwrap_or(0.0);
            if let Some(i) = n.as_i64() {
                (6u8, i128::from(i)).hash(&mut h);
            } else if let Some(u) = n.as_u64() {
                (6u8, i128::from(u)).hash(&mut h);
            } else if f.fract() == 0.0 && f.abs() < 1.7e38 {
                #[allow(clippy::cast_possible_truncation)]
                (6u8, f as i128).hash(&mut h);
            } else {
                (7u8, f.to_bits()).hash(&mut h);
            }
        }
        Value::Array(_) | Value::Object(_) => 0u8.hash(&mut h),
    }
    h.finish()
}

/// JSON Schema equality, iteratively.
fn equal(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                stack.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                for (key, x) in x {
                    match y.get(key) {
                        Some(y) => stack.push((x, y)),
                        None => return false,
                    }
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                return false;
            }
            (x, y) => {
                if !json_scalar_eq(x, y) {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dup(v: Value) -> Option<(usize, usize)> {
        first_duplicate(v.as_array().unwrap())
    }

    #[test]
    fn equality_is_json_schemas() {
        assert_eq!(dup(json!([1, 2, 1.0])), Some((0, 2)));
        assert_eq!(
            dup(json!([{"a": 1, "b": 2}, {"b": 2, "a": 1.0}])),
            Some((0, 1))
        );
        assert_eq!(dup(json!([[1, 2], [2, 1]])), None);
        assert_eq!(dup(json!([true, 1, "1", null, [], {}])), None);
        assert_eq!(dup(json!([0, false])), None);
        assert_eq!(dup(json!([[{"a": [1]}], [{"a": [1.0]}]])), Some((0, 1)));
        assert_eq!(dup(json!([1e300, 1e300])), Some((0, 1)));
        assert_eq!(dup(json!([0.5, 0.25, 0.5])), Some((0, 2)));
    }

    #[test]
    fn a_long_array_of_distinct_items_is_not_quadratic() {
        let items: Vec<Value> = (0..200_000).map(|i| json!({"i": i})).collect();
        assert_eq!(first_duplicate(&items), None);
    }
}
