//! A yes/no form of the subset's support check, for the renderers' "degrade the whole
//! schema" rule.
//!
//! [`tools_json::check_schema`] collects every violation with its path, which costs time
//! and memory in proportion to depth × violations on a pathological schema (every level of
//! a 5 000-deep chain broken). The renderers only need to know whether there is at least
//! one violation, so this walk stops at the first one and stays linear. It accepts exactly
//! the schemas for which `check_schema` returns no violation; a property test in
//! `tests/it/properties.rs` holds the two together.

use serde_json::{Map, Number, Value};
use tools_json::{DEFAULT_MAX_DEPTH, JsonType, is_lossless, is_negative_zero};

/// The keywords of the subset.
const KEYWORDS: [&str; 12] = [
    "type",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "description",
    "title",
    "default",
    "examples",
];

/// The constraint keywords (legal only with `type`, and each only on some types).
const CONSTRAINTS: [&str; 6] = [
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// Whether `schema` is inside the enforced subset (no violation anywhere).
///
/// Iterative, stops at the first violation, total over any JSON.
pub(crate) fn is_supported(schema: &Value) -> bool {
    let mut stack: Vec<&Value> = vec![schema];
    while let Some(node) = stack.pop() {
        let Some(map) = node.as_object() else {
            return false;
        };
        if !node_is_supported(map, &mut stack) {
            return false;
        }
    }
    true
}

/// Checks one schema object and pushes its child schemas.
fn node_is_supported<'a>(map: &'a Map<String, Value>, stack: &mut Vec<&'a Value>) -> bool {
    for (key, value) in map {
        if !KEYWORDS.contains(&key.as_str()) {
            return false;
        }
        if (key == "default" || key == "examples") && !annotation_ok(value) {
            return false;
        }
        if (key == "description" || key == "title") && !value.is_string() {
            return false;
        }
    }
    let has_constraint = CONSTRAINTS.iter().any(|k| map.contains_key(*k));
    match (map.get("type"), map.get("oneOf")) {
        (Some(_), Some(_)) => false,
        (None, None) => !has_constraint,
        (None, Some(one_of)) => match one_of.as_array() {
            Some(branches) if branches.len() >= 2 && !has_constraint => {
                stack.extend(branches.iter());
                true
            }
            _ => false,
        },
        (Some(ty), None) => {
            let Some(ty) = ty.as_str().and_then(JsonType::from_name) else {
                return false;
            };
            if CONSTRAINTS
                .iter()
                .any(|k| map.contains_key(*k) && !admits(ty, k))
            {
                return false;
            }
            match ty {
                JsonType::Object => object_is_supported(map, stack),
                JsonType::Array => {
                    if let Some(items) = map.get("items") {
                        stack.push(items);
                    }
                    true
                }
                scalar => scalar_is_supported(map, scalar),
            }
        }
    }
}

fn object_is_supported<'a>(map: &'a Map<String, Value>, stack: &mut Vec<&'a Value>) -> bool {
    let properties = match map.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(_) => return false,
    };
    if let Some(required) = map.get("required") {
        let Some(names) = required.as_array() else {
            return false;
        };
        for name in names {
            let Some(name) = name.as_str() else {
                return false;
            };
            if !properties.is_some_and(|p| p.contains_key(name)) {
                return false;
            }
        }
    }
    if map
        .get("additionalProperties")
        .is_some_and(|v| !v.is_boolean())
    {
        return false;
    }
    if let Some(properties) = properties {
        stack.extend(properties.values());
    }
    true
}

fn scalar_is_supported(map: &Map<String, Value>, ty: JsonType) -> bool {
    let members = match map.get("enum") {
        None => None,
        Some(Value::Array(members))
            if !members.is_empty() && members.iter().all(|m| is_scalar_of(ty, m)) =>
        {
            Some(members)
        }
        Some(_) => return false,
    };
    match map.get("const") {
        None => true,
        Some(constant) if !is_scalar_of(ty, constant) => false,
        Some(constant) => {
            members.is_none_or(|members| members.iter().any(|m| scalar_eq(m, constant)))
        }
    }
}

/// Which constraint keywords each type admits.
fn admits(ty: JsonType, keyword: &str) -> bool {
    match ty {
        JsonType::Object => matches!(keyword, "properties" | "required" | "additionalProperties"),
        JsonType::Array => keyword == "items",
        _ => matches!(keyword, "enum" | "const"),
    }
}

/// Whether `value` is a value of the scalar type `ty`.
fn is_scalar_of(ty: JsonType, value: &Value) -> bool {
    match ty {
        JsonType::String => value.is_string(),
        JsonType::Number => value.as_number().is_some_and(|n| !is_negative_zero(n)),
        JsonType::Integer => value.as_number().is_some_and(is_integer),
        JsonType::Boolean => value.is_boolean(),
        JsonType::Null => value.is_null(),
        JsonType::Object | JsonType::Array => false,
    }
}

/// Finite, not negative zero, no fractional part (`1.0` counts).
pub(crate) fn is_integer(number: &Number) -> bool {
    if number.is_i64() || number.is_u64() {
        return true;
    }
    number
        .as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && !(f == 0.0 && f.is_sign_negative()))
}

/// A number as an exact integer where it is integral, else as a float.
#[derive(PartialEq)]
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(number: &Number) -> Exact {
    if let Some(i) = number.as_i64() {
        return Exact::Int(i128::from(i));
    }
    if let Some(u) = number.as_u64() {
        return Exact::Int(i128::from(u));
    }
    let f = number.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 18_446_744_073_709_551_616.0 {
        #[allow(clippy::cast_possible_truncation)]
        return Exact::Int(f as i128);
    }
    Exact::Float(f)
}

/// Equality of scalar JSON values with numbers compared by value (`1 == 1.0`).
fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => exact(x) == exact(y),
        _ => a == b,
    }
}

/// `default`/`examples` data must be lossless and within the boundary's depth limit.
fn annotation_ok(value: &Value) -> bool {
    is_lossless(value) && depth_within(value, DEFAULT_MAX_DEPTH)
}

/// Whether `value`'s container depth is at most `limit` (iterative).
fn depth_within(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) if depth < limit => {
                stack.extend(items.iter().map(|child| (child, depth + 1)));
            }
            Value::Object(map) if depth < limit => {
                stack.extend(map.values().map(|child| (child, depth + 1)));
            }
            Value::Array(_) | Value::Object(_) => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn agrees_with_the_support_check_on_the_usual_suspects() {
        let cases = [
            json!({}),
            json!({"description": "x"}),
            json!({"type": "string", "enum": ["a"], "const": "a"}),
            json!({"type": "string", "enum": ["a"], "const": "b"}),
            json!({"type": "number", "enum": [1], "const": 1.0}),
            json!({"type": "integer", "const": 1.5}),
            json!({"type": "integer", "const": -0.0}),
            json!({"type": "number", "enum": [-0.0]}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
            json!({"type": "object", "additionalProperties": {}}),
            json!({"type": "array", "items": [{}]}),
            json!({"oneOf": [{}, {}], "items": {}}),
            json!({"oneOf": [{}]}),
            json!({"type": ["string"]}),
            json!({"type": "weird"}),
            json!({"properties": {}}),
            json!({"default": -0.0}),
            json!({"title": 1}),
            json!({"$ref": "#"}),
            json!(null),
            json!([]),
        ];
        for case in cases {
            assert_eq!(
                is_supported(&case),
                tools_json::check_schema(&case).is_empty(),
                "{case}"
            );
        }
    }

    #[test]
    fn annotation_data_deeper_than_the_boundary_limit_is_unsupported() {
        let mut deep = json!(1);
        for _ in 0..=DEFAULT_MAX_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        let mut schema = Map::new();
        schema.insert("default".into(), deep);
        let schema = Value::Object(schema);
        assert!(!is_supported(&schema));
        assert!(!tools_json::check_schema(&schema).is_empty());
        tools_json::drop_deep(schema);
    }
}
