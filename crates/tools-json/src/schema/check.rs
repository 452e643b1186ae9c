//! The support check: every way a raw schema leaves the enforced subset.
//!
//! The walk is depth-first in document order and collects every violation. For one node
//! it reports, in this order: a node that is not an object (and stops); unknown keywords,
//! non-lossless `default`/`examples`, a non-string `format`/`$schema`/`$id`/`$comment`
//! and a non-boolean `deprecated`/`readOnly`/`writeOnly`, in key order; a non-string
//! `description`, then `title`; `type` beside `oneOf` (and stops); constraint keywords
//! without `type` or `oneOf`, in the fixed order `properties, required,
//! additionalProperties, items, enum, const`, then malformed bound keywords (bounds need
//! no type; see [`super::bounds`]) (and stops); for `oneOf`, a malformed list or its
//! branches, then the constraint and bound keywords beside it; a bad `type` (and stops);
//! keywords on the wrong type (whose subtrees are not visited), then bound keywords on the
//! wrong type or malformed, in the bounds' fixed order; then per type: an object's `properties` shape, its property
//! schemas, then `required` and `additionalProperties`; an array's `items`; a scalar's
//! `enum`, `const`, and `const` ∈ `enum`.

use serde_json::{Map, Value};

use super::bounds;
use super::keys::{Key, Keys};
use super::pattern::Patterns;
use crate::lossless::{Step, materialize_path};
use crate::{JsonType, Limits, Violation, ViolationKind, Violations, is_lossless};

/// Which constraint keywords each type admits.
pub(super) fn admits(ty: JsonType, keyword: &str) -> bool {
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
pub(super) fn annotation_ok(value: &Value, limits: &Limits) -> bool {
    is_lossless(value) && crate::schema::depth_within(value, limits.max_depth())
}

enum Task<'a> {
    Visit(&'a Value, u32),
    /// The constraint keywords beside a `oneOf`, reported after its branches.
    BesideOneOf(&'a Map<String, Value>, u32),
    /// `required` and `additionalProperties`, reported after the property schemas.
    ObjectTail(&'a Map<String, Value>, u32),
}

/// Runs the support check over `schema`, with paths rooted at `root`, as a new walk of
/// `patterns` (which compiles each `pattern` once and holds the schema's patterns to their
/// budget, in this walk's order).
pub(crate) fn check(
    schema: &Value,
    root: &str,
    limits: &Limits,
    patterns: &mut Patterns,
) -> Violations {
    patterns.walk();
    let mut out: Vec<Violation> = Vec::new();
    // Sized for a typical tool: growing from one element reallocates several times.
    let mut arena: Vec<(u32, Step<'_>)> = Vec::with_capacity(64);
    arena.push((0, Step::Root));
    let mut stack: Vec<Task<'_>> = Vec::with_capacity(64);
    stack.push(Task::Visit(schema, 0));

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
                let mut pending: Vec<(&str, ViolationKind)> = Vec::new();
                let keys = Keys::classify(map, |name, value, key| match key {
                    Key::Unknown => pending.push((
                        name,
                        ViolationKind::UnsupportedKeyword {
                            keyword: name.into(),
                        },
                    )),
                    Key::Data if !annotation_ok(value, limits) => {
                        pending.push((name, ViolationKind::AnnotationNotLossless));
                    }
                    Key::Text if !value.is_string() => {
                        pending.push((name, ViolationKind::AnnotationNotString));
                    }
                    Key::Flag if !value.is_boolean() => {
                        pending.push((name, ViolationKind::AnnotationNotBoolean));
                    }
                    Key::Data | Key::Known | Key::Bound | Key::Text | Key::Flag => {}
                });
                for (name, kind) in pending {
                    report!(at, key name, kind);
                }
                if keys.description.is_some_and(|v| !v.is_string()) {
                    report!(at, key "description", ViolationKind::AnnotationNotString);
                }
                if keys.title.is_some_and(|v| !v.is_string()) {
                    report!(at, key "title", ViolationKind::AnnotationNotString);
                }
                if keys.ty.is_some() && keys.one_of.is_some() {
                    report!(at, ViolationKind::TypeWithOneOf);
                    continue;
                }
                let (Some(ty), None) = (keys.ty, keys.one_of) else {
                    if let Some(one_of) = keys.one_of {
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
                        for key in keys.constraints() {
                            report!(at, key key, ViolationKind::RequiresTypeOrOneOf);
                        }
                        // Without a type, each bound applies to values of its own type.
                        for (index, key, value) in keys.bounds() {
                            if let Some(kind) = bounds::malformed(index, value, patterns) {
                                report!(at, key key, kind);
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
                for key in keys.constraints() {
                    if !admits(ty, key) {
                        report!(at, key key, ViolationKind::KeywordOnWrongType { ty });
                    }
                }
                for (index, key, value) in keys.bounds() {
                    if !bounds::family(index).is_some_and(|f| f.admits(ty)) {
                        report!(at, key key, ViolationKind::KeywordOnWrongType { ty });
                    } else if let Some(kind) = bounds::malformed(index, value, patterns) {
                        report!(at, key key, kind);
                    }
                }
                match ty {
                    JsonType::Object => {
                        stack.push(Task::ObjectTail(map, at));
                        match keys.properties {
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
                        if let Some(items) = keys.items {
                            let id = child(&mut arena, at, Step::Key("items"));
                            stack.push(Task::Visit(items, id));
                        }
                    }
                    scalar => {
                        let enum_ok = match keys.enumeration {
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
                        if let Some(constant) = keys.constant {
                            if !is_scalar_of(scalar, constant) {
                                report!(at, key "const", ViolationKind::ConstInvalid { ty: scalar });
                            } else if enum_ok == Some(true) {
                                let members = keys.enumeration.and_then(Value::as_array);
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
                let keys = Keys::classify(map, |_, _, _| {});
                for key in keys.constraints() {
                    report!(at, key key, ViolationKind::BesideOneOf);
                }
                for (_, key, _) in keys.bounds() {
                    report!(at, key key, ViolationKind::BesideOneOf);
                }
            }
            Task::ObjectTail(map, at) => {
                let keys = Keys::classify(map, |_, _, _| {});
                if let Some(required) = keys.required {
                    match required.as_array() {
                        Some(names) if names.iter().all(Value::is_string) => {
                            let declared = keys.properties.and_then(Value::as_object);
                            for name in names.iter().filter_map(Value::as_str) {
                                if !declared.is_some_and(|d| d.contains_key(name)) {
                                    report!(at, key "required", ViolationKind::RequiredUndeclared { name: name.into() });
                                }
                            }
                        }
                        _ => report!(at, key "required", ViolationKind::RequiredMalformed),
                    }
                }
                if keys.additional.is_some_and(|v| !v.is_boolean()) {
                    report!(at, key "additionalProperties", ViolationKind::AdditionalPropertiesNotBoolean);
                }
            }
        }
    }
    out.into()
}
