//! Compilation of a checked schema into a flat node arena.

use serde_json::Value;

use super::allowed::Allowed;
use super::bounds::Bounds;
use super::keys::Keys;
use super::pattern::Patterns;
use crate::JsonType;

pub(crate) use super::properties::PropertyMap;

/// Index of a node in the arena.
pub(crate) type NodeId = u32;

/// One compiled schema node. Annotations are dropped: they never affect validation.
#[derive(Debug)]
pub(crate) enum Node {
    /// No `type` and no `oneOf`: any lossless JSON (held to the bounds of its own type).
    Any { bounds: Option<Box<Bounds>> },
    /// Exactly one branch must match.
    OneOf(Box<[NodeId]>),
    /// One of the five scalar types, with optional `enum` and `const`.
    Scalar {
        ty: JsonType,
        allowed: Option<Allowed>,
        constant: Option<Value>,
        bounds: Option<Box<Bounds>>,
        /// No `enum`, `const` or bounds: the type alone decides (set once, here).
        plain: bool,
    },
    /// An array, with an optional element schema.
    Array {
        items: Option<NodeId>,
        bounds: Option<Box<Bounds>>,
    },
    /// An object.
    Object {
        /// Declared properties, in declaration order.
        properties: PropertyMap,
        /// Indices into `properties` of the `required` names, in `required` order
        /// (duplicates kept: each is reported).
        required: Box<[u32]>,
        closed: bool,
        bounds: Option<Box<Bounds>>,
    },
}

/// Compiles a schema that passed the support check, taking its patterns from `patterns`
/// (the check's). Node 0 is the root. Iterative.
pub(crate) fn compile(schema: &Value, patterns: &mut Patterns) -> Box<[Node]> {
    let mut nodes: Vec<Node> = vec![Node::Any { bounds: None }];
    // Sized for a typical tool: growing from one element reallocates several times.
    let mut work: Vec<(&Value, usize)> = Vec::with_capacity(64);
    work.push((schema, 0));
    let alloc = |nodes: &mut Vec<Node>| -> NodeId {
        let id = nodes.len();
        nodes.push(Node::Any { bounds: None });
        NodeId::try_from(id).unwrap_or(NodeId::MAX)
    };
    while let Some((schema, slot)) = work.pop() {
        let Some(map) = schema.as_object() else {
            continue;
        };
        let keys = Keys::classify(map, |_, _, _| {});
        let bounds = Bounds::compile(&keys.bounds, patterns);
        let node = if let Some(branches) = keys.one_of.and_then(Value::as_array) {
            let ids: Vec<NodeId> = branches
                .iter()
                .map(|branch| {
                    let id = alloc(&mut nodes);
                    work.push((branch, id as usize));
                    id
                })
                .collect();
            Node::OneOf(ids.into())
        } else {
            match keys
                .ty
                .and_then(Value::as_str)
                .and_then(JsonType::from_name)
            {
                None => Node::Any { bounds },
                Some(JsonType::Array) => Node::Array {
                    items: keys.items.map(|items| {
                        let id = alloc(&mut nodes);
                        work.push((items, id as usize));
                        id
                    }),
                    bounds,
                },
                Some(JsonType::Object) => {
                    let mut entries = Vec::new();
                    if let Some(props) = keys.properties.and_then(Value::as_object) {
                        entries.reserve_exact(props.len());
                        for (name, schema) in props {
                            let id = alloc(&mut nodes);
                            work.push((schema, id as usize));
                            entries.push((name.as_str().into(), id));
                        }
                    }
                    let properties = PropertyMap::from_entries(entries);
                    // The support check guarantees that every required name is declared.
                    let required = keys
                        .required
                        .and_then(Value::as_array)
                        .map(|names| {
                            names
                                .iter()
                                .filter_map(Value::as_str)
                                .filter_map(|name| properties.get_index_of(name))
                                .filter_map(|index| u32::try_from(index).ok())
                                .collect()
                        })
                        .unwrap_or_default();
                    Node::Object {
                        properties,
                        required,
                        closed: keys.additional == Some(&Value::Bool(false)),
                        bounds,
                    }
                }
                Some(ty) => {
                    let allowed = keys
                        .enumeration
                        .and_then(Value::as_array)
                        .map(|values| Allowed::new(values, Value::clone));
                    let constant = keys.constant.cloned();
                    let plain = allowed.is_none() && constant.is_none() && bounds.is_none();
                    Node::Scalar {
                        ty,
                        allowed,
                        constant,
                        bounds,
                        plain,
                    }
                }
            }
        };
        if let Some(target) = nodes.get_mut(slot) {
            *target = node;
        }
    }
    nodes.into_boxed_slice()
}
