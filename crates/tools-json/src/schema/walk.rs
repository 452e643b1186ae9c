//! What the two validator walks (`validate.rs`, iterative; `direct.rs`, recursive) share:
//! the scalar check and the matching of an object's members to its declared properties.
//! Each walk keeps only its own path bookkeeping and control flow, so the two cannot drift
//! apart on a verdict (their property test holds them equal as well).

use serde_json::{Map, Value};
use smallvec::SmallVec;

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
    Enum(&'s [Value]),
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
                allowed: allowed.to_vec(),
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
    allowed: Option<&'s [Value]>,
    constant: Option<&'s Value>,
    value: &Value,
) -> Option<ScalarMiss<'s>> {
    match type_match(ty, value) {
        TypeMatch::Yes => {}
        TypeMatch::No => return Some(ScalarMiss::Type(ty)),
        TypeMatch::NegativeZero => return Some(ScalarMiss::NegativeZero),
    }
    if let Some(allowed) = allowed
        && !in_enum(allowed, value)
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

/// Whether `value` is one of `allowed`: strings compared as strings (the common enum),
/// anything else by [`json_scalar_eq`].
fn in_enum(allowed: &[Value], value: &Value) -> bool {
    match value {
        Value::String(text) => allowed
            .iter()
            .any(|member| member.as_str() == Some(text.as_str())),
        _ => allowed.iter().any(|member| json_scalar_eq(member, value)),
    }
}

/// Whether `node` is a plain scalar (a type alone: no `enum`, `const` or bounds, flagged
/// when compiled) and `value` has that type. Such a leaf, most of a typical argument
/// object, passes without a visit. `false` means "not decided here", never "invalid".
#[inline(always)]
pub(super) fn plain_scalar_passes(nodes: &[Node], node: NodeId, value: &Value) -> bool {
    match nodes.get(node as usize) {
        Some(Node::Scalar {
            ty, plain: true, ..
        }) => type_match(*ty, value) == TypeMatch::Yes,
        _ => false,
    }
}

/// An object's members matched to its declared properties, in one pass over the members.
pub(super) struct Members<'a> {
    /// Undeclared keys of a closed object, in value order.
    pub(super) undeclared: SmallVec<[&'a str; 2]>,
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
) -> Members<'a> {
    let mut out = Members {
        undeclared: SmallVec::new(),
        undeclared_lossy: false,
    };
    let mut cursor = 0;
    for (key, member) in members {
        let index = match properties.get_index(cursor) {
            Some((name, _)) if **name == **key => Some(cursor),
            _ => properties.get_index_of(key.as_str()),
        };
        match index {
            Some(index) => {
                cursor = index + 1;
                if let Some(slot) = present.get_mut(index) {
                    *slot = Some(member);
                }
            }
            None if closed => out.undeclared.push(key),
            None => out.undeclared_lossy |= !is_lossless(member),
        }
    }
    out
}
