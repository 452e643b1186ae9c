//! The fast path for schemas written in `tools-schema`'s author DSL: the validator is
//! compiled straight from the author spec, in one walk, and the model-facing JSON Schema is
//! rendered only when something asks for it ([`super::CompiledSchema::compile_dsl`]).
//!
//! This walk only ever **accepts**. It takes a spec when every node is plainly inside both
//! the DSL and the subset, and refuses (returns `None`) at the first thing it would have to
//! judge: an author error, anything the support check would report on the compiled output,
//! or a key it does not know. The caller then takes the full path (author walk, build,
//! support check), which is the one that reports errors. So a refusal here never changes
//! what a caller sees, only how fast a good spec compiles.
//!
//! The DSL as read here (`tools-schema`'s compile module is the authority; the property
//! test there holds this walk to it):
//! - every node is an object; a node that is a property may carry `"required": true`;
//! - the common keys are `description` and `title` (strings), `default` and `examples`
//!   (lossless data within the default depth), `deprecated` (a boolean);
//! - a `oneOf` node has an array of at least two branches and nothing but the common keys;
//! - otherwise `type` is one of `string`, `number`, `integer`, `boolean`, `null`, `array`,
//!   `object`, `json`. Scalars may carry `enum` (non-empty, every member of the type),
//!   `const` (of the type, and in the `enum` when both are there) and their bounds; strings
//!   and numbers `format` (a string); arrays `items` and their bounds; objects
//!   `additionalProperties` (a boolean, required), `properties` (an object) and their
//!   bounds; `json` only the common keys and compiles to "any lossless JSON";
//! - a parameter map is the property map of an object root, open or closed.
//!
//! Numbers are held canonically (`1.0` as `1`), as the compiled output is.

use serde_json::{Map, Value};

use super::allowed::Allowed;
use super::bounds::{self, Bounds};
use super::check::{annotation_ok, is_scalar_of};
use super::compile::{Node, NodeId, PropertyMap};
use super::keys::{Key, Keys};
use super::pattern::Patterns;
use crate::{JsonType, Limits};

/// How the root of a DSL spec is read ([`super::CompiledSchema::compile_dsl`]; not a
/// general API).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DslRoot {
    /// A value spec: the root is a node.
    Value,
    /// A parameter map: the root is the property map of an object, closed
    /// (`"additionalProperties": false`) or open.
    Params {
        /// Whether keys other than the declared properties are rejected.
        closed: bool,
    },
}

/// A node waiting to be compiled: its spec, its slot in the arena, whether it is a
/// property (which may carry `"required": true`), and its depth (the root's children are
/// at 1).
type Pending<'a> = (&'a Value, NodeId, bool, usize);

/// The compiled nodes and their nesting (as `direct::nesting` counts it: the depth of the
/// deepest node, the root being at 0).
pub(crate) struct Compiled {
    pub(crate) nodes: Box<[Node]>,
    pub(crate) nesting: usize,
}

/// Compiles the validator's nodes from a DSL spec, or `None` at the first thing the full
/// path has to judge. Node 0 is the root. Iterative: the depth of the spec costs heap, not
/// stack.
pub(crate) fn compile(spec: &Value, root: DslRoot) -> Option<Compiled> {
    let limits = Limits::default();
    // One walk: the spec's patterns are held to one schema's budget.
    let mut patterns = Patterns::default();
    patterns.walk();
    // Sized for a typical tool: growing from one element reallocates several times.
    let mut nodes: Vec<Node> = Vec::with_capacity(64);
    nodes.push(Node::Any { bounds: None });
    let mut work: Vec<Pending<'_>> = Vec::with_capacity(64);
    match root {
        DslRoot::Params { closed } => {
            let properties = spec.as_object()?;
            let node = object(properties, closed, None, 1, &mut nodes, &mut work)?;
            *nodes.first_mut()? = node;
        }
        DslRoot::Value => work.push((spec, 0, false, 0)),
    }
    let mut nesting = 0;
    while let Some((spec, slot, property, depth)) = work.pop() {
        nesting = nesting.max(depth);
        let compiled = node(
            spec,
            property,
            depth + 1,
            &limits,
            &mut patterns,
            &mut nodes,
            &mut work,
        )?;
        *nodes.get_mut(usize::try_from(slot).ok()?)? = compiled;
    }
    Some(Compiled {
        nodes: nodes.into_boxed_slice(),
        nesting,
    })
}

/// A new arena slot (filled when its spec is popped).
fn alloc(nodes: &mut Vec<Node>) -> Option<NodeId> {
    let id = NodeId::try_from(nodes.len()).ok()?;
    nodes.push(Node::Any { bounds: None });
    Some(id)
}

/// An object node over `properties` (each queued as a property node at `depth`), its
/// `required` list gathered from the properties' flags in declaration order.
fn object<'a>(
    properties: &'a Map<String, Value>,
    closed: bool,
    bounds: Option<Box<Bounds>>,
    depth: usize,
    nodes: &mut Vec<Node>,
    work: &mut Vec<Pending<'a>>,
) -> Option<Node> {
    let mut declared = Vec::with_capacity(properties.len());
    let mut required = Vec::new();
    for (index, (name, spec)) in properties.iter().enumerate() {
        let id = alloc(nodes)?;
        work.push((spec, id, true, depth));
        declared.push((name.as_str().into(), id));
        // A scan, not `Map::get`: a property has a handful of keys, and hashing the name
        // (SipHash) costs more than comparing them.
        let flagged = spec.as_object().is_some_and(|map| {
            map.iter()
                .any(|(key, value)| key == "required" && matches!(value, Value::Bool(true)))
        });
        if flagged {
            required.push(u32::try_from(index).ok()?);
        }
    }
    Some(Node::Object {
        properties: PropertyMap::from_entries(declared),
        required: required.into_boxed_slice(),
        closed,
        bounds,
    })
}

/// One node (its children queued at `below`), or `None` when the full path has to judge
/// it.
fn node<'a>(
    spec: &'a Value,
    property: bool,
    below: usize,
    limits: &Limits,
    patterns: &mut Patterns,
    nodes: &mut Vec<Node>,
    work: &mut Vec<Pending<'a>>,
) -> Option<Node> {
    let map = spec.as_object()?;
    let mut clean = true;
    let mut format = false;
    // Noted while classifying: most nodes have no bound, and then neither of the two
    // passes over the thirteen bound slots below is needed.
    let mut has_bounds = false;
    let keys = Keys::classify(map, |name, value, key| match key {
        Key::Known => {}
        Key::Bound => has_bounds = true,
        Key::Data => clean &= annotation_ok(value, limits),
        Key::Text => {
            clean &= name == "format" && value.is_string();
            format = true;
        }
        Key::Flag => clean &= name == "deprecated" && value.is_boolean(),
        Key::Unknown => clean = false,
    });
    let texts_ok = [keys.description, keys.title]
        .iter()
        .all(|text| text.is_none_or(Value::is_string));
    let required_ok = match keys.required {
        None => true,
        Some(flag) => property && matches!(flag, Value::Bool(true)),
    };
    if !(clean && texts_ok && required_ok) {
        return None;
    }
    let has_value_keys = keys.enumeration.is_some() || keys.constant.is_some();
    let has_shape_keys =
        keys.properties.is_some() || keys.additional.is_some() || keys.items.is_some();
    if let Some(branches) = keys.one_of {
        if keys.ty.is_some() || format || has_bounds || has_value_keys || has_shape_keys {
            return None;
        }
        let branches = branches.as_array().filter(|b| b.len() >= 2)?;
        let mut ids = Vec::with_capacity(branches.len());
        for branch in branches {
            let id = alloc(nodes)?;
            work.push((branch, id, false, below));
            ids.push(id);
        }
        return Some(Node::OneOf(ids.into_boxed_slice()));
    }
    let name = keys.ty?.as_str()?;
    if name == "json" {
        let plain = !(format || has_bounds || has_value_keys || has_shape_keys);
        return plain.then_some(Node::Any { bounds: None });
    }
    let ty = JsonType::from_name(name)?;
    let vocabulary_ok = match ty {
        JsonType::Object => {
            keys.items.is_none()
                && !has_value_keys
                && keys.additional.is_some_and(Value::is_boolean)
        }
        JsonType::Array => {
            !has_value_keys && keys.properties.is_none() && keys.additional.is_none()
        }
        _ => !has_shape_keys,
    };
    let format_ok =
        !format || matches!(ty, JsonType::String | JsonType::Number | JsonType::Integer);
    if !(vocabulary_ok && format_ok) {
        return None;
    }
    let bounds = if has_bounds {
        for (index, _, value) in keys.bounds() {
            let fits = bounds::family(index).is_some_and(|family| family.admits(ty));
            if !fits || bounds::malformed(index, value, patterns).is_some() {
                return None;
            }
        }
        Bounds::compile(&keys.bounds, patterns)
    } else {
        None
    };
    match ty {
        JsonType::Object => {
            let closed = matches!(keys.additional, Some(Value::Bool(false)));
            match keys.properties {
                None => object(empty(), closed, bounds, below, nodes, work),
                Some(properties) => {
                    object(properties.as_object()?, closed, bounds, below, nodes, work)
                }
            }
        }
        JsonType::Array => {
            let items = match keys.items {
                None => None,
                Some(items) => {
                    let id = alloc(nodes)?;
                    work.push((items, id, false, below));
                    Some(id)
                }
            };
            Some(Node::Array { items, bounds })
        }
        scalar => {
            let allowed = match keys.enumeration {
                None => None,
                Some(values) => {
                    let values = values.as_array().filter(|v| !v.is_empty())?;
                    if !values.iter().all(|v| is_scalar_of(scalar, v)) {
                        return None;
                    }
                    Some(Allowed::new(values, canonical))
                }
            };
            let constant = match keys.constant {
                None => None,
                Some(constant) => {
                    let member = allowed
                        .as_ref()
                        .is_none_or(|allowed| allowed.contains(constant));
                    if !(is_scalar_of(scalar, constant) && member) {
                        return None;
                    }
                    Some(canonical(constant))
                }
            };
            let plain = allowed.is_none() && constant.is_none() && bounds.is_none();
            Some(Node::Scalar {
                ty: scalar,
                allowed,
                constant,
                bounds,
                plain,
            })
        }
    }
}

/// A copy of a scalar in canonical form (an integral float as an integer).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(n) => Value::Number(crate::lossless::canonical_number(n)),
        other => other.clone(),
    }
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}
