//! What the two validator walks (`validate.rs`, iterative; `direct.rs`, recursive) share:
//! the scalar check and the matching of an object's members to its declared properties.
//! Each walk keeps only its own path bookkeeping and control flow, so the two cannot drift
//! apart on a verdict (their property test holds them equal as well).

use serde_json::{Map, Value};

use super::allowed::{Allowed, same_text};
use super::compile::PropertyMap;
use super::{Node, NodeId, is_integer, json_scalar_eq};
use crate::{JsonType, ViolationKind, is_lossless};

/// Why a scalar node refuses a value, in the order the checks run; `Enum` and `Const`
/// borrow the schema data they report.
#[derive(Clone, Copy)]
pub(super) enum ScalarMiss<'s> {
    /// A `number` node given negative zero (JSON cannot carry it).
    NegativeZero,
    /// The value is not of the node's type.
    Type(JsonType),
    /// The value is not one of the node's `enum`.
    Enum(&'s Allowed),
    /// The value differs from the node's `const`.
    Const(&'s Value),
}

impl ScalarMiss<'_> {
    /// The violation to report (built only when a walk reports it: `Enum` and `Const` copy
    /// schema data).
    pub(super) fn kind(self) -> ViolationKind {
        match self {
            ScalarMiss::NegativeZero => ViolationKind::NotFiniteNumber,
            ScalarMiss::Type(expected) => ViolationKind::ExpectedType { expected },
            ScalarMiss::Enum(allowed) => ViolationKind::NotInEnum {
                allowed: allowed.to_values(),
            },
            ScalarMiss::Const(constant) => ViolationKind::ConstMismatch {
                expected: constant.clone(),
            },
        }
    }
}

/// How a value stands against a scalar type alone.
#[derive(PartialEq, Eq)]
enum TypeMatch {
    Yes,
    No,
    NegativeZero,
}

#[inline(always)]
fn type_match(ty: JsonType, value: &Value) -> TypeMatch {
    match (ty, value) {
        (JsonType::String, Value::String(_))
        | (JsonType::Boolean, Value::Bool(_))
        | (JsonType::Null, Value::Null) => TypeMatch::Yes,
        (JsonType::Number, Value::Number(n)) if crate::is_negative_zero(n) => {
            TypeMatch::NegativeZero
        }
        (JsonType::Number, Value::Number(_)) => TypeMatch::Yes,
        (JsonType::Integer, Value::Number(n)) if is_integer(n) => TypeMatch::Yes,
        _ => TypeMatch::No,
    }
}

/// The first check of a scalar node that `value` fails, if any (bounds are checked apart).
#[inline]
pub(super) fn scalar_miss<'s>(
    ty: JsonType,
    allowed: Option<&'s Allowed>,
    constant: Option<&'s Value>,
    value: &Value,
) -> Option<ScalarMiss<'s>> {
    match type_match(ty, value) {
        TypeMatch::Yes => {}
        TypeMatch::No => return Some(ScalarMiss::Type(ty)),
        TypeMatch::NegativeZero => return Some(ScalarMiss::NegativeZero),
    }
    if let Some(allowed) = allowed
        && !allowed.contains(value)
    {
        return Some(ScalarMiss::Enum(allowed));
    }
    if let Some(constant) = constant
        && !json_scalar_eq(constant, value)
    {
        return Some(ScalarMiss::Const(constant));
    }
    None
}

/// Whether `value` passes `node` when `node` is a scalar without bounds, decided in place:
/// a plain scalar (a type alone: no `enum`, `const` or bounds, flagged when compiled) by
/// its type, one with `enum` or `const` by [`scalar_miss`]. Such leaves, nearly all of a
/// typical argument object, pass without a visit, and a `oneOf` probe of such a branch
/// (the common nullable union) needs none either: a probe's failure reports nothing.
/// `None` for any other node ("not decided here", never "invalid").
#[inline(always)]
pub(super) fn scalar_verdict(nodes: &[Node], node: NodeId, value: &Value) -> Option<bool> {
    match nodes.get(node as usize) {
        Some(Node::Scalar {
            ty, plain: true, ..
        }) => Some(type_match(*ty, value) == TypeMatch::Yes),
        Some(Node::Scalar {
            ty,
            allowed,
            constant,
            bounds: None,
            ..
        }) => Some(scalar_miss(*ty, allowed.as_ref(), constant.as_ref(), value).is_none()),
        _ => None,
    }
}

/// Whether `value` passes `node` by [`scalar_verdict`]: `false` means "not decided here"
/// as well as "fails".
#[inline(always)]
pub(super) fn scalar_passes(nodes: &[Node], node: NodeId, value: &Value) -> bool {
    scalar_verdict(nodes, node, value) == Some(true)
}

/// An object's members matched to its declared properties, in one pass over the members.
///
/// The undeclared keys themselves are not gathered: a valid call has none, and a walk that
/// reports them finds them again with [`undeclared_keys`].
pub(super) struct Members {
    /// Whether a closed object has an undeclared key.
    pub(super) undeclared: bool,
    /// Whether an undeclared member of an open object is not lossless.
    pub(super) undeclared_lossy: bool,
}

/// Fills `present[i]` with the member of declared property `i` (slots start `None`) and
/// returns what is undeclared. Arguments usually list their keys in declaration order, so
/// the next declared name is tried before hashing.
#[inline]
pub(super) fn match_members<'a>(
    properties: &PropertyMap,
    closed: bool,
    members: &'a Map<String, Value>,
    present: &mut [Option<&'a Value>],
) -> Members {
    let mut out = Members {
        undeclared: false,
        undeclared_lossy: false,
    };
    let mut cursor = 0;
    for (key, member) in members {
        let index = match properties.get_index(cursor) {
            Some((name, _)) if same_text(name, key) => Some(cursor),
            _ => properties.get_index_of(key.as_str()),
        };
        match index {
            Some(index) => {
                cursor = index + 1;
                if let Some(slot) = present.get_mut(index) {
                    *slot = Some(member);
                }
            }
            None if closed => out.undeclared = true,
            None => out.undeclared_lossy |= !is_lossless(member),
        }
    }
    out
}

/// The keys of `members` that `properties` does not declare, in value order (for a walk
/// that reports them, after [`match_members`] found some).
pub(super) fn undeclared_keys<'a>(
    properties: &'a PropertyMap,
    members: &'a Map<String, Value>,
) -> impl DoubleEndedIterator<Item = &'a str> {
    members
        .keys()
        .map(String::as_str)
        .filter(|key| properties.get_index_of(key).is_none())
}
