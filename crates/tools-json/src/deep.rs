//! Deep operations on `serde_json` values without deep recursion: drop, equality, clone.

use serde_json::Value;

/// Drops a value of any depth without deep recursion.
///
/// `serde_json`'s own drop recurses once per level, which overflows a small thread stack
/// on values a few thousand levels deep. [`JsonValue`](crate::JsonValue) uses this for deep values.
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let map = std::mem::take(map);
                stack.extend(map.into_iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
}

/// Whether two values are equal (as `Value`'s `==`: objects compare as maps, regardless of
/// key order), without recursion.
pub fn eq_deep(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                stack.extend(a.iter().zip(b.iter()));
            }
            (Value::Object(a), Value::Object(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                for (key, a) in a {
                    match b.get(key) {
                        Some(b) => stack.push((a, b)),
                        None => return false,
                    }
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                return false;
            }
            (a, b) => {
                if a != b {
                    return false;
                }
            }
        }
    }
    true
}

/// Clones a value of any depth without deep recursion (`Value::clone` recurses per level).
pub fn clone_deep(root: &Value) -> Value {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, Vec<Value>),
        Object(
            serde_json::map::Iter<'a>,
            serde_json::Map<String, Value>,
            Option<&'a String>,
        ),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut pending: Option<&Value> = Some(root);
    let mut finished: Option<Value> = None;
    loop {
        if let Some(value) = pending.take() {
            match value {
                Value::Array(items) => {
                    stack.push(Frame::Array(items.iter(), Vec::with_capacity(items.len())));
                }
                Value::Object(map) => {
                    stack.push(Frame::Object(map.iter(), serde_json::Map::new(), None));
                }
                scalar => finished = Some(scalar.clone()),
            }
        }
        if let Some(value) = finished.take() {
            match stack.last_mut() {
                None => return value,
                Some(Frame::Array(_, out)) => out.push(value),
                Some(Frame::Object(_, out, key)) => {
                    out.insert(key.take().cloned().unwrap_or_default(), value);
                }
            }
        }
        match stack.last_mut() {
            None => return Value::Null,
            Some(Frame::Array(iter, _)) => {
                if let Some(child) = iter.next() {
                    pending = Some(child);
                    continue;
                }
            }
            Some(Frame::Object(iter, _, key)) => {
                if let Some((name, child)) = iter.next() {
                    *key = Some(name);
                    pending = Some(child);
                    continue;
                }
            }
        }
        finished = match stack.pop() {
            Some(Frame::Array(_, out)) => Some(Value::Array(out)),
            Some(Frame::Object(_, out, _)) => Some(Value::Object(out)),
            None => None,
        };
    }
}
