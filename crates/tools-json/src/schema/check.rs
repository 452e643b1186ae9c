//! The support check: every way a raw schema leaves the enforced subset.
//!
//! The walk is depth-first in document order and collects every violation. For one node
//! it reports, in this order: a node that is not an object (and stops); unknown keywords
//! and non-lossless `default`/`examples`, in key order; a non-string `description`, then
//! `title`; `type` beside `oneOf` (and stops); constraint keywords without `type` or
//! `oneOf`, in the fixed order `properties, required, additionalProperties, items, enum,
//! const` (and stops); for `oneOf`, a malformed list or its branches, then the constraint
//! keywords beside it; a bad `type` (and stops); keywords on the wrong type (whose
//! subtrees are not visited); then per type: an object's `properties` shape, its property
//! schemas, then `required` and `additionalProperties`; an array's `items`; a scalar's
//! `enum`, `const`, and `const` ∈ `enum`.

use serde_json::{Map, Value};

use crate::value::{Step, materialize_path};
use crate::{JsonType, Limits, Violation, ViolationKind, Violations, is_lossless};

/// The keywords of the subset.
pub(crate) const KEYWORDS: [&str; 12] = [
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

/// The constraint keywords, in the fixed order the check reports them.
pub(crate) const CONSTRAINTS: [&str; 6] = [
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// Which constraint keywords each type admits.
fn admits(ty: JsonType, keyword: &str) -> bool {
    match ty {
        JsonType::Object => matches!(keyword, "properties" | "required" | "additionalProperties"),
        JsonType::Array => keyword == "items",
        _ => matches!(keyword, "enum" | "const"),
    }
}

/// Whether `value` is a value of the scalar type `ty`.
pub(crate) fn is_scalar_of(ty: JsonType, value: &Value) -> bool {
    match ty {
        JsonType::String => value.is_string(),
        JsonType::Number => value
            .as_number()
            .is_some_and(|n| !crate::is_negative_zero(n)),
        JsonType::Integer => value.as_number().is_some_and(crate::schema::is_integer),
        JsonType::Boolean => value.is_boolean(),
        JsonType::Null => value.is_null(),
        JsonType::Object | JsonType::Array => false,
    }
}

/// Whether annotation data is lossless and within the depth limit.
fn annotation_ok(value: &Value, limits: &Limits) -> bool {
    is_lossless(value) && crate::schema::depth_within(value, limits.max_depth())
}

enum Task<'a> {
    Visit(&'a Value, u32),
    /// The constraint keywords beside a `oneOf`, reported after its branches.
    BesideOneOf(&'a Map<String, Value>, u32),
    /// `required` and `additionalProperties`, reported after the property schemas.
    ObjectTail(&'a Map<String, Value>, u32),
}

/// Runs the support check over `schema`, with paths rooted at `root`.
pub(crate) fn check(schema: &Value, root: &str, limits: &Limits) -> Violations {
    let mut out: Vec<Violation> = Vec::new();
    let mut arena: Vec<(u32, Step<'_>)> = vec![(0, Step::Root)];
    let mut stack: Vec<Task<'_>> = vec![Task::Visit(schema, 0)];

    // Adds a child step to the arena and returns its id.
    fn child<'a>(arena: &mut Vec<(u32, Step<'a>)>, parent: u32, step: Step<'a>) -> u32 {
        let id = u32::try_from(arena.len()).unwrap_or(u32::MAX);
        arena.push((parent, step));
        id
    }

    macro_rules! report {
        ($at:expr, $kind:expr) => {
            out.push(Violation::new(materialize_path(&arena, $at, root), $kind))
        };
        ($at:expr, key $key:expr, $kind:expr) => {{
            let id = child(&mut arena, $at, Step::Key($key));
            out.push(Violation::new(materialize_path(&arena, id, root), $kind));
        }};
    }

    while let Some(task) = stack.pop() {
        match task {
            Task::Visit(node, at) => {
                let Some(map) = node.as_object() else {
                    report!(at, ViolationKind::NotASchemaObject);
                    continue;
                };
                for (key, value) in map {
                    if !KEYWORDS.contains(&key.as_str()) {
                        report!(at, key key, ViolationKind::UnsupportedKeyword { keyword: key.as_str().into() });
                    } else if (key == "default" || key == "examples")
                        && !annotation_ok(value, limits)
                    {
                        report!(at, key key, ViolationKind::AnnotationNotLossless);
                    }
                }
                for key in ["description", "title"] {
                    if map.get(key).is_some_and(|v| !v.is_string()) {
                        report!(at, key key, ViolationKind::AnnotationNotString);
                    }
                }
                let ty = map.get("type");
                let one_of = map.get("oneOf");
                if ty.is_some() && one_of.is_some() {
                    report!(at, ViolationKind::TypeWithOneOf);
                    continue;
                }
                let (Some(ty), None) = (ty, one_of) else {
                    if let Some(one_of) = one_of {
                        match one_of.as_array() {
                            Some(branches) if branches.len() >= 2 => {
                                stack.push(Task::BesideOneOf(map, at));
                                let one_of_id = child(&mut arena, at, Step::Key("oneOf"));
                                for (i, branch) in branches.iter().enumerate().rev() {
                                    let id = child(&mut arena, one_of_id, Step::Index(i));
                                    stack.push(Task::Visit(branch, id));
                                }
                            }
                            _ => {
                                report!(at, key "oneOf", ViolationKind::OneOfMalformed);
                                stack.push(Task::BesideOneOf(map, at));
                            }
                        }
                    } else {
                        for key in CONSTRAINTS {
                            if map.contains_key(key) {
                                report!(at, key key, ViolationKind::RequiresTypeOrOneOf);
                            }
                        }
                    }
                    continue;
                };
                let ty = match ty {
                    Value::Array(_) => {
                        report!(at, key "type", ViolationKind::TypeArray);
                        continue;
                    }
                    Value::String(name) => match JsonType::from_name(name) {
                        Some(ty) => ty,
                        None => {
                            report!(at, key "type", ViolationKind::UnknownType);
                            continue;
                        }
                    },
                    _ => {
                        report!(at, key "type", ViolationKind::UnknownType);
                        continue;
                    }
                };
                for key in CONSTRAINTS {
                    if map.contains_key(key) && !admits(ty, key) {
                        report!(at, key key, ViolationKind::KeywordOnWrongType { ty });
                    }
                }
                match ty {
                    JsonType::Object => {
                        stack.push(Task::ObjectTail(map, at));
                        match map.get("properties") {
                            None => {}
                            Some(Value::Object(properties)) => {
                                let props_id = child(&mut arena, at, Step::Key("properties"));
                                let start = stack.len();
                                for (name, schema) in properties {
                                    let id = child(&mut arena, props_id, Step::Key(name));
                                    stack.push(Task::Visit(schema, id));
                                }
                                stack[start..].reverse();
                            }
                            Some(_) => {
                                report!(at, key "properties", ViolationKind::PropertiesNotObject)
                            }
                        }
                    }
                    JsonType::Array => {
                        if let Some(items) = map.get("items") {
                            let id = child(&mut arena, at, Step::Key("items"));
                            stack.push(Task::Visit(items, id));
                        }
                    }
                    scalar => {
                        let enum_ok = match map.get("enum") {
                            None => None,
                            Some(values) => {
                                let ok = values.as_array().is_some_and(|values| {
                                    !values.is_empty()
                                        && values.iter().all(|v| is_scalar_of(scalar, v))
                                });
                                if !ok {
                                    report!(at, key "enum", ViolationKind::EnumInvalid { ty: scalar });
                                }
                                Some(ok)
                            }
                        };
                        if let Some(constant) = map.get("const") {
                            if !is_scalar_of(scalar, constant) {
                                report!(at, key "const", ViolationKind::ConstInvalid { ty: scalar });
                            } else if enum_ok == Some(true) {
                                let members = map.get("enum").and_then(Value::as_array);
                                let found = members.is_some_and(|members| {
                                    members
                                        .iter()
                                        .any(|m| crate::schema::json_scalar_eq(m, constant))
                                });
                                if !found {
                                    report!(at, key "const", ViolationKind::ConstNotInEnum);
                                }
                            }
                        }
                    }
                }
            }
            Task::BesideOneOf(map, at) => {
                for key in CONSTRAINTS {
                    if map.contains_key(key) {
                        report!(at, key key, ViolationKind::BesideOneOf);
                    }
                }
            }
            Task::ObjectTail(map, at) => {
                if let Some(required) = map.get("required") {
                    match required.as_array() {
                        Some(names) if names.iter().all(Value::is_string) => {
                            let declared = map.get("properties").and_then(Value::as_object);
                            for name in names.iter().filter_map(Value::as_str) {
                                if !declared.is_some_and(|d| d.contains_key(name)) {
                                    report!(at, key "required", ViolationKind::RequiredUndeclared { name: name.into() });
                                }
                            }
                        }
                        _ => report!(at, key "required", ViolationKind::RequiredMalformed),
                    }
                }
                if map
                    .get("additionalProperties")
                    .is_some_and(|v| !v.is_boolean())
                {
                    report!(at, key "additionalProperties", ViolationKind::AdditionalPropertiesNotBoolean);
                }
            }
        }
    }
    out.into()
}
