//! A yes/no form of the support check ([`crate::is_schema_supported`]).
//!
//! [`super::check`] collects every violation with its path, which costs time and memory in
//! proportion to depth × violations on a pathological schema (every level of a 5 000-deep
//! chain broken). A caller that only needs to know whether there is at least one violation
//! (the SDK renderers' "degrade the whole schema" rule) uses this walk instead: it stops at
//! the first violation and stays linear. It accepts exactly the schemas for which the full
//! check reports nothing; a property test in `tests/it/properties.rs` holds the two
//! together. The per-keyword rules (`admits`, `is_scalar_of`, `annotation_ok`) are the full
//! check's own.

use serde_json::{Map, Value};

use super::bounds;
use super::check::{admits, annotation_ok, is_scalar_of};
use super::json_scalar_eq;
use super::pattern::Patterns;
use crate::{JsonType, Limits};

/// The keywords of the subset, besides the bounds ([`bounds::KEYWORDS`]) and the
/// annotations checked by shape ([`TEXT_NOTES`], [`FLAG_NOTES`]).
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

/// Annotations that must be strings.
const TEXT_NOTES: [&str; 4] = ["format", "$schema", "$id", "$comment"];
/// Annotations that must be booleans.
const FLAG_NOTES: [&str; 3] = ["deprecated", "readOnly", "writeOnly"];

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
/// Iterative, stops at the first violation, total over any JSON. The patterns are one walk
/// of a [`Patterns`]: their budget refuses some pattern exactly when their total is over it,
/// whatever the order, so this walk and the full check agree on it too.
pub(crate) fn is_supported(schema: &Value) -> bool {
    let mut patterns = Patterns::default();
    patterns.walk();
    let mut stack: Vec<&Value> = vec![schema];
    while let Some(node) = stack.pop() {
        let Some(map) = node.as_object() else {
            return false;
        };
        if !node_is_supported(map, &mut stack, &mut patterns) {
            return false;
        }
    }
    true
}

/// Checks one schema object and pushes its child schemas.
fn node_is_supported<'a>(
    map: &'a Map<String, Value>,
    stack: &mut Vec<&'a Value>,
    patterns: &mut Patterns,
) -> bool {
    let mut has_bound = false;
    for (key, value) in map {
        if let Some(index) = bounds::index_of(key) {
            if bounds::malformed(index, value, patterns).is_some() {
                return false;
            }
            has_bound = true;
            continue;
        }
        if TEXT_NOTES.contains(&key.as_str()) {
            if !value.is_string() {
                return false;
            }
            continue;
        }
        if FLAG_NOTES.contains(&key.as_str()) {
            if !value.is_boolean() {
                return false;
            }
            continue;
        }
        if !KEYWORDS.contains(&key.as_str()) {
            return false;
        }
        if (key == "default" || key == "examples") && !annotation_ok(value, &Limits::default()) {
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
            Some(branches) if branches.len() >= 2 && !has_constraint && !has_bound => {
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
            if has_bound
                && bounds::KEYWORDS
                    .iter()
                    .any(|(k, family, _)| map.contains_key(*k) && !family.admits(ty))
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
            members.is_none_or(|members| members.iter().any(|m| json_scalar_eq(m, constant)))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::DEFAULT_MAX_DEPTH;

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
            json!({"minimum": 1, "pattern": "a"}),
            json!({"type": "string", "pattern": "(a)\\1"}),
            json!({"type": "string", "pattern": "["}),
            json!({"type": "integer", "maxLength": 1}),
            json!({"oneOf": [{}, {}], "minimum": 1}),
            json!({"type": "array", "minItems": -1}),
            json!({"type": "array", "minItems": 1.0, "uniqueItems": false}),
            json!({"type": "number", "multipleOf": 0}),
            json!({"format": 1}),
            json!({"readOnly": "yes"}),
            json!({"$schema": "x", "$id": "y", "$comment": "z", "deprecated": true}),
        ];
        for case in cases {
            assert_eq!(
                is_supported(&case),
                crate::check_schema(&case).is_empty(),
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
        assert!(!crate::check_schema(&schema).is_empty());
        crate::drop_deep(schema);
    }
}
