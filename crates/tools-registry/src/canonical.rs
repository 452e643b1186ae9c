//! Canonical JSON text: object keys sorted, compact, written without recursion.

use serde_json::Value;

/// `value` as compact JSON with every object's keys in sorted order: equal values give
/// equal text whatever order their keys came in.
pub(crate) fn json(value: &Value) -> String {
    enum Task<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::new();
    let mut stack = vec![Task::Value(value)];
    while let Some(task) = stack.pop() {
        match task {
            Task::Text(text) => out.push_str(text),
            Task::Key(key) => {
                out.push_str(&Value::String(key.to_owned()).to_string());
                out.push(':');
            }
            Task::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Task::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Task::Value(item));
                    if i > 0 {
                        stack.push(Task::Text(","));
                    }
                }
            }
            Task::Value(Value::Object(map)) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                stack.push(Task::Text("}"));
                for (i, key) in keys.iter().enumerate().rev() {
                    if let Some(v) = map.get(*key) {
                        stack.push(Task::Value(v));
                    }
                    stack.push(Task::Key(key));
                    if i > 0 {
                        stack.push(Task::Text(","));
                    }
                }
            }
            Task::Value(scalar) => out.push_str(&scalar.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_change_the_text() {
        let a = json!({"b": [1, {"y": 2, "x": "é\"q"}], "a": null});
        let b = json!({"a": null, "b": [1, {"x": "é\"q", "y": 2}]});
        assert_eq!(json(&a), json(&b));
        assert_eq!(json(&a), r#"{"a":null,"b":[1,{"x":"é\"q","y":2}]}"#);
        assert_eq!(json(&json!([])), "[]");
        assert_eq!(json(&json!({})), "{}");
    }
}
