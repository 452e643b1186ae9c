//! Foreign schemas (docs/decisions.md, entry 27): a schema this project did not write (an
//! MCP server's, another host's) is never rejected and never dropped. The model sees it
//! verbatim; values are validated by every keyword of it the subset enforces; what is left
//! unenforced is listed.
//!
//! The schema is *lowered* to the subset by a fixed-point loop over the support check: each
//! violation is repaired at its path, then the check runs again (a repair can expose the next
//! problem, e.g. removing a type array orphans `properties`). Repairs only ever loosen a
//! schema (a value the original accepts, the lowered schema accepts), and each is either
//! exact or listed as unenforced:
//!
//! | violation | repair | listed |
//! | --- | --- | --- |
//! | a boolean schema | `{}` | `false` only (`true` is `{}`) |
//! | an unknown keyword (`anyOf`, `$ref`, `patternProperties`, …) | removed | yes (`$defs`/`definitions` are only containers: no) |
//! | an annotation of the wrong shape or not lossless | removed | no (annotations constrain nothing) |
//! | a keyword on the wrong type (`minimum` on a string) | removed | no (JSON Schema ignores it there too) |
//! | `enum` or `const` on an array or an object (the subset enforces them on scalars only) | removed | yes (JSON Schema applies them to every type) |
//! | `required` naming an undeclared property | `properties.<name>: {}` added | no (exact) |
//! | schema-valued `additionalProperties` | `true` | yes, unless it was `{}` |
//! | `type` beside `oneOf`, a type array, a malformed `oneOf`, `enum`, `const`, bound or `pattern`, a constraint without `type` | the keyword removed | yes |
//! | a `pattern` over the bounds on compiling patterns (its length, property escapes, nesting, compiled size, or the schema's budget: `pattern_too_large`) | removed | yes |
//! | any loosening inside a `oneOf` branch | the outermost such `oneOf` removed too (a looser branch can make "exactly one" refuse a value two branches now match) | yes (`OneOfLoosened`) |
//! | `patternProperties` beside `additionalProperties: false` | removed, and the object opened (its keys would become "additional") | yes |
//!
//! The JSON-Schema-Test-Suite holds this to account: compiled as foreign schemas, all 168
//! groups of the vendored files accept every instance the suite calls valid, and the
//! fully enforced ones agree with the suite on every test (`tests/it/conformance.rs`).
//! After [`MAX_PASSES`] passes that still leave violations (or a pass that repairs nothing),
//! the whole schema is enforced as `{}` (any lossless JSON) and that is listed at the root.

use serde_json::{Map, Value};

use super::pattern::Patterns;
use crate::{Limits, Segment, Violation, ViolationKind};

/// Passes of the repair loop before the schema is given up as `{}`.
const MAX_PASSES: usize = 16;

/// The lowered schema and what of the original it leaves unenforced (paths rooted at
/// `schema`, kinds as the support check named them). Every pass checks its patterns as a
/// walk of `patterns`, which builds each distinct pattern once for all the passes (and for
/// the compiler after them); the last walk admitted every pattern of the lowered schema.
pub(crate) fn lower(schema: &Value, patterns: &mut Patterns) -> (Value, Vec<Violation>) {
    let mut lowered = crate::clone_deep(schema);
    let mut unenforced = Vec::new();
    for _ in 0..MAX_PASSES {
        let violations = super::check::check(&lowered, "schema", &Limits::default(), patterns);
        if violations.is_empty() {
            return (lowered, unenforced);
        }
        let mut repaired = false;
        // Last first: a repair never moves an earlier path (only keys are removed, and a
        // node is replaced in place), and nested problems are repaired before their parents.
        for violation in violations.into_iter().rev() {
            match repair(&mut lowered, &violation) {
                Repair::Exact => repaired = true,
                Repair::Loosened => {
                    repaired = true;
                    let widened = widen_one_of(&mut lowered, &violation.path);
                    unenforced.push(violation);
                    unenforced.extend(widened);
                }
                Repair::None => {}
            }
        }
        if !repaired {
            break;
        }
    }
    let gave_up = super::check::check(&lowered, "schema", &Limits::default(), patterns);
    if gave_up.is_empty() {
        return (lowered, unenforced);
    }
    crate::drop_deep(lowered);
    unenforced.extend(gave_up);
    (Value::Object(Map::new()), unenforced)
}

enum Repair {
    /// The lowered schema accepts exactly what the original does at this point.
    Exact,
    /// The lowered schema accepts more.
    Loosened,
    /// Nothing could be done (the path no longer exists): the next pass sees it again.
    None,
}

fn repair(root: &mut Value, violation: &Violation) -> Repair {
    use ViolationKind::*;
    let segments = violation.path.segments();
    match &violation.kind {
        NotASchemaObject | TypeWithOneOf => {
            let Some(node) = node_at(root, segments) else {
                return Repair::None;
            };
            if matches!(violation.kind, TypeWithOneOf) {
                return match node.as_object_mut().and_then(|m| m.shift_remove("oneOf")) {
                    Some(removed) => {
                        crate::drop_deep(removed);
                        Repair::Loosened
                    }
                    None => Repair::None,
                };
            }
            let exact = *node == Value::Bool(true);
            let old = std::mem::replace(node, Value::Object(Map::new()));
            crate::drop_deep(old);
            if exact {
                Repair::Exact
            } else {
                Repair::Loosened
            }
        }
        RequiredUndeclared { name } => {
            let Some((parent, _)) = parent_at(root, segments) else {
                return Repair::None;
            };
            let properties = parent
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            match properties.as_object_mut() {
                Some(properties) => {
                    properties
                        .entry(name.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                    Repair::Exact
                }
                None => Repair::None,
            }
        }
        AdditionalPropertiesNotBoolean => {
            let Some((parent, key)) = parent_at(root, segments) else {
                return Repair::None;
            };
            let Some(slot) = parent.get_mut(key) else {
                return Repair::None;
            };
            let exact = slot.as_object().is_some_and(Map::is_empty);
            let old = std::mem::replace(slot, Value::Bool(true));
            crate::drop_deep(old);
            if exact {
                Repair::Exact
            } else {
                Repair::Loosened
            }
        }
        kind => {
            let Some((parent, key)) = parent_at(root, segments) else {
                return Repair::None;
            };
            let key = key.to_owned();
            let Some(removed) = parent.shift_remove(&key) else {
                return Repair::None;
            };
            crate::drop_deep(removed);
            open_if_pattern_closed(parent, &key);
            // A keyword on a type it does not apply to constrains nothing in JSON Schema
            // either, except `enum` and `const`, which apply to values of every type: on an
            // array or an object (where the subset does not enforce them) removing one
            // loosens the schema.
            let exact = matches!(
                kind,
                AnnotationNotLossless | AnnotationNotString | AnnotationNotBoolean
            ) || (matches!(kind, KeywordOnWrongType { .. })
                && !matches!(key.as_str(), "enum" | "const"))
                || (matches!(kind, UnsupportedKeyword { .. })
                    && matches!(key.as_str(), "$defs" | "definitions"));
            if exact {
                Repair::Exact
            } else {
                Repair::Loosened
            }
        }
    }
}

/// After a loosening at `path`: the outermost `oneOf` the path runs through is removed
/// too, since a looser branch can make "exactly one" refuse a value the original accepts
/// (two branches matching where one did). Returns what to list.
fn widen_one_of(root: &mut Value, path: &crate::Path) -> Option<Violation> {
    let segments = path.segments();
    let at = segments.windows(2).position(|pair| {
        matches!(&pair[0], Segment::Key(k) if &**k == "oneOf")
            && matches!(pair[1], Segment::Index(_))
    })?;
    let node = node_at(root, &segments[..at])?.as_object_mut()?;
    let removed = node.shift_remove("oneOf")?;
    crate::drop_deep(removed);
    Some(Violation::new(
        crate::Path::from_parts(path.root_label(), segments[..=at].to_vec()),
        ViolationKind::OneOfLoosened,
    ))
}

/// Removing `patternProperties` from an object closed by `additionalProperties: false`
/// would make the keys its patterns allowed "additional": the object is opened too.
fn open_if_pattern_closed(parent: &mut Map<String, Value>, removed_key: &str) -> bool {
    if removed_key == "patternProperties"
        && let Some(slot) = parent.get_mut("additionalProperties")
        && *slot == Value::Bool(false)
    {
        *slot = Value::Bool(true);
        return true;
    }
    false
}

/// Replaces every negative zero in `value` with `0`, so that the model-facing copy of a
/// foreign schema is lossless JSON (JSON cannot carry `-0` anyway). Iterative.
pub(crate) fn scrub_negative_zero(value: &mut Value) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Number(n) if crate::is_negative_zero(n) => *node = Value::from(0),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// The node at `segments` (below the root).
fn node_at<'a>(root: &'a mut Value, segments: &[Segment]) -> Option<&'a mut Value> {
    let mut node = root;
    for segment in segments {
        node = match segment {
            Segment::Key(key) => node.as_object_mut()?.get_mut(&**key)?,
            Segment::Index(i) => node.as_array_mut()?.get_mut(*i)?,
        };
    }
    Some(node)
}

/// The object holding the keyword a path ends in, and that keyword.
fn parent_at<'a, 'p>(
    root: &'a mut Value,
    segments: &'p [Segment],
) -> Option<(&'a mut Map<String, Value>, &'p str)> {
    let (last, parent) = segments.split_last()?;
    let Segment::Key(key) = last else {
        return None;
    };
    Some((node_at(root, parent)?.as_object_mut()?, key))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lowered(schema: Value) -> (Value, Vec<String>) {
        let (lowered, unenforced) = lower(&schema, &mut Patterns::default());
        (
            lowered,
            unenforced
                .iter()
                .map(|v| format!("{} {}", v.path, v.kind.name()))
                .collect(),
        )
    }

    #[test]
    fn exact_repairs_are_not_listed() {
        let (schema, listed) = lowered(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"n": {"type": "string", "minimum": 1, "default": -0.0}},
            "required": ["n", "m"],
            "additionalProperties": {}
        }));
        assert!(listed.is_empty(), "{listed:?}");
        assert_eq!(
            schema,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"n": {"type": "string"}, "m": {}},
                "required": ["n", "m"],
                "additionalProperties": true
            })
        );
    }

    #[test]
    fn loosening_repairs_are_listed_with_their_paths() {
        let (schema, listed) = lowered(json!({
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "b": {"type": ["string", "null"], "maxLength": 3},
                "c": {"$ref": "#/$defs/C"},
                "d": false
            },
            "$defs": {"C": {"type": "integer"}}
        }));
        assert_eq!(
            listed,
            [
                "schema.properties.d not_a_schema_object",
                "schema.properties.c.$ref unsupported_keyword",
                "schema.properties.b.type type_array",
                "schema.properties.a.anyOf unsupported_keyword",
            ]
        );
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"a": {}, "b": {"maxLength": 3}, "c": {}, "d": {}}
            })
        );
    }

    #[test]
    fn a_repair_that_exposes_another_problem_is_followed() {
        // Removing the type array orphans `properties` (a constraint that needs a type).
        let (schema, listed) =
            lowered(json!({"type": ["object", "null"], "properties": {"x": {}}}));
        assert_eq!(
            listed,
            [
                "schema.type type_array",
                "schema.properties requires_type_or_one_of"
            ]
        );
        assert_eq!(schema, json!({}));
    }

    #[test]
    fn a_loosened_branch_unenforces_its_outermost_one_of() {
        let (schema, listed) = lowered(json!({
            "type": "object",
            "properties": {"v": {"oneOf": [
                {"type": "string"},
                {"oneOf": [{"type": "integer"}, {"type": "null", "not": {}}]}
            ]}}
        }));
        assert_eq!(
            listed,
            [
                "schema.properties.v.oneOf[1].oneOf[1].not unsupported_keyword",
                "schema.properties.v.oneOf one_of_loosened",
            ]
        );
        assert_eq!(schema, json!({"type": "object", "properties": {"v": {}}}));
    }

    /// `enum` and `const` constrain values of every type in JSON Schema, so removing one
    /// from an array or an object (where the subset does not enforce them) loosens the
    /// schema and is listed, unlike `minimum` on a string, which JSON Schema ignores.
    #[test]
    fn enum_and_const_on_arrays_and_objects_are_listed() {
        let (schema, listed) = lowered(json!({
            "type": "object",
            "properties": {
                "intents": {
                    "type": "array",
                    "items": {"type": "string"},
                    "enum": [["Sports"], ["News"]]
                },
                "point": {"type": "object", "const": {"x": 1}},
                "name": {"type": "string", "minimum": 1}
            }
        }));
        assert_eq!(
            listed,
            [
                "schema.properties.point.const keyword_on_wrong_type",
                "schema.properties.intents.enum keyword_on_wrong_type",
            ]
        );
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "intents": {"type": "array", "items": {"type": "string"}},
                    "point": {"type": "object"},
                    "name": {"type": "string"}
                }
            })
        );
        let compiled = crate::CompiledSchema::compile_foreign(&json!({
            "type": "object",
            "properties": {"intents": {
                "type": "array", "items": {"type": "string"}, "enum": [["Sports"], ["News"]]
            }}
        }));
        assert!(!compiled.is_fully_enforced());
        assert_eq!(
            compiled.unenforced()[0].path.to_string(),
            "schema.properties.intents.enum"
        );
    }

    #[test]
    fn pattern_properties_open_a_closed_object() {
        let (schema, listed) = lowered(json!({
            "type": "object", "patternProperties": {"^x": {}}, "additionalProperties": false
        }));
        assert_eq!(listed, ["schema.patternProperties unsupported_keyword"]);
        assert_eq!(
            schema,
            json!({"type": "object", "additionalProperties": true})
        );
    }
}
