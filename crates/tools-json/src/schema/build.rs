//! Building a validator node by node, for a reader of its own schema dialect that compiles
//! straight to a validator instead of writing a JSON Schema and checking it (`tools-schema`
//! compiles its author DSL this way).
//!
//! Every step accepts only what is plainly inside the subset and answers [`Refused`] for
//! anything it would have to judge: a malformed or misplaced bound, an `enum` member of
//! another type, a `const` outside the `enum`. A refusal means "take the checked path"
//! (write the JSON Schema and [`CompiledSchema::compile`] it), which is the one that reports
//! errors; so a builder never changes what a caller sees, only how fast a good schema
//! compiles. The caller promises that the JSON its `render` makes is the schema it built:
//! `tools-schema`'s property tests hold its DSL to that.
//!
//! # Examples
//!
//! ```
//! use serde_json::json;
//! use tools_json::build::{Builder, Keywords};
//! use tools_json::JsonType;
//!
//! // `{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}},
//! //   "required": ["name"], "additionalProperties": false}`, built node by node.
//! let mut builder = Builder::new();
//! let name = builder.child(Builder::ROOT)?;
//! builder.object(Builder::ROOT, vec![("name".into(), name)], vec![0], true, None);
//! let node = json!({"type": "string", "maxLength": 8});
//! let keywords = Keywords::classify(node.as_object().unwrap(), |_, _, _| {});
//! let bounds = builder.bounds(JsonType::String, &keywords)?;
//! builder.scalar(name, JsonType::String, None, None, bounds)?;
//! let schema = builder.finish(|| json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string", "maxLength": 8}},
//!     "required": ["name"],
//!     "additionalProperties": false
//! }));
//!
//! assert!(schema.validate(&json!({"name": "Ada"}), "").is_empty());
//! let too_long = schema.validate(&json!({"name": "Ada Lovelace"}), "");
//! assert_eq!(too_long.len(), 1);
//! assert!(!schema.is_json_rendered(), "the JSON is made when first read");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::{Map, Value};
use smol_str::SmolStr;

use super::allowed::Allowed;
use super::bounds::{self, Bounds};
use super::check::{annotation_ok, is_scalar_of};
use super::compile::{Node, NodeId};
use super::keys::Keys;
pub use super::keys::KeywordKind;
use super::pattern::Patterns;
use super::properties::PropertyMap;
use super::{CompiledSchema, direct};
use crate::{JsonType, Limits};

/// A step the builder will not take: the caller takes the checked path instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the node needs the checked path (write the JSON Schema and compile it)")]
pub struct Refused;

/// A node of the validator being built, to be filled once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    id: NodeId,
    /// How deep the node is, the root's being 0.
    depth: u32,
}

/// The keywords of one schema node, sorted in one pass.
pub struct Keywords<'a> {
    keys: Keys<'a>,
    bounds: bool,
}

impl<'a> Keywords<'a> {
    /// Sorts the keys of `map`, calling `each` with every key, its value and its kind, in
    /// key order.
    #[inline(always)]
    pub fn classify(
        map: &'a Map<String, Value>,
        mut each: impl FnMut(&'a str, &'a Value, KeywordKind),
    ) -> Keywords<'a> {
        let mut bounds = false;
        let keys = Keys::classify(map, |name, value, kind| {
            bounds |= kind == KeywordKind::Bound;
            each(name, value, kind);
        });
        Keywords { keys, bounds }
    }

    /// `type`.
    #[inline]
    pub fn ty(&self) -> Option<&'a Value> {
        self.keys.ty
    }

    /// `oneOf`.
    #[inline]
    pub fn one_of(&self) -> Option<&'a Value> {
        self.keys.one_of
    }

    /// `properties`.
    #[inline]
    pub fn properties(&self) -> Option<&'a Value> {
        self.keys.properties
    }

    /// `required`.
    #[inline]
    pub fn required(&self) -> Option<&'a Value> {
        self.keys.required
    }

    /// `additionalProperties`.
    #[inline]
    pub fn additional_properties(&self) -> Option<&'a Value> {
        self.keys.additional
    }

    /// `items`.
    #[inline]
    pub fn items(&self) -> Option<&'a Value> {
        self.keys.items
    }

    /// `enum`.
    #[inline]
    pub fn enumeration(&self) -> Option<&'a Value> {
        self.keys.enumeration
    }

    /// `const`.
    #[inline]
    pub fn constant(&self) -> Option<&'a Value> {
        self.keys.constant
    }

    /// `description`.
    #[inline]
    pub fn description(&self) -> Option<&'a Value> {
        self.keys.description
    }

    /// `title`.
    #[inline]
    pub fn title(&self) -> Option<&'a Value> {
        self.keys.title
    }

    /// Whether any bound keyword is present.
    #[inline]
    pub fn has_bounds(&self) -> bool {
        self.bounds
    }
}

/// Whether `value` may stand as annotation data (`default`, `examples`): lossless JSON
/// within `limits`.
#[inline]
pub fn is_annotation_data(value: &Value, limits: &Limits) -> bool {
    annotation_ok(value, limits)
}

/// The bounds of one node, compiled by [`Builder::bounds`].
pub struct NodeBounds(Box<Bounds>);

impl std::fmt::Debug for NodeBounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBounds").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Keywords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keywords")
            .field("has_bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("nodes", &self.nodes.len())
            .finish_non_exhaustive()
    }
}

/// A validator under construction. The root is [`Builder::ROOT`]; every other slot is made
/// below its parent ([`Builder::child`]), so the builder knows how deep the schema nests.
pub struct Builder {
    nodes: Vec<Node>,
    /// The depth of the deepest slot made so far.
    nesting: u32,
    patterns: Patterns,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// The root slot.
    pub const ROOT: Slot = Slot { id: 0, depth: 0 };

    /// A builder with an empty root.
    pub fn new() -> Builder {
        // Sized for a typical tool: growing from one element reallocates several times.
        let mut nodes = Vec::with_capacity(64);
        nodes.push(Node::Any { bounds: None });
        // One walk: the schema's patterns are held to one schema's budget.
        let mut patterns = Patterns::default();
        patterns.walk();
        Builder {
            nodes,
            nesting: 0,
            patterns,
        }
    }

    /// A new slot one level below `parent`, to be filled later.
    ///
    /// # Errors
    ///
    /// [`Refused`] past `u32::MAX` nodes.
    #[inline]
    pub fn child(&mut self, parent: Slot) -> Result<Slot, Refused> {
        let id = NodeId::try_from(self.nodes.len()).map_err(|_| Refused)?;
        let depth = parent.depth.checked_add(1).ok_or(Refused)?;
        self.nodes.push(Node::Any { bounds: None });
        self.nesting = self.nesting.max(depth);
        Ok(Slot { id, depth })
    }

    #[inline]
    fn set(&mut self, slot: Slot, node: Node) {
        if let Some(place) = usize::try_from(slot.id)
            .ok()
            .and_then(|i| self.nodes.get_mut(i))
        {
            *place = node;
        }
    }

    /// Fills `slot` with "any lossless JSON".
    #[inline]
    pub fn any(&mut self, slot: Slot) {
        self.set(slot, Node::Any { bounds: None });
    }

    /// Fills `slot` with "exactly one of `branches`" (slots below it).
    #[inline]
    pub fn one_of(&mut self, slot: Slot, branches: Vec<Slot>) {
        let ids = branches.into_iter().map(|branch| branch.id).collect();
        self.set(slot, Node::OneOf(ids));
    }

    /// The bounds of a node of type `ty`: `None` without bound keywords.
    ///
    /// # Errors
    ///
    /// [`Refused`] for a bound that does not belong to `ty` or is malformed.
    #[inline]
    pub fn bounds(
        &mut self,
        ty: JsonType,
        keywords: &Keywords<'_>,
    ) -> Result<Option<NodeBounds>, Refused> {
        if !keywords.bounds {
            return Ok(None);
        }
        for (index, _, value) in keywords.keys.bounds() {
            let fits = bounds::family(index).is_some_and(|family| family.admits(ty));
            if !fits || bounds::malformed(index, value, &mut self.patterns).is_some() {
                return Err(Refused);
            }
        }
        Ok(Bounds::compile(&keywords.keys.bounds, &mut self.patterns).map(NodeBounds))
    }

    /// Fills `slot` with an object: its declared `properties` (name and slot, in
    /// declaration order), the indices of the `required` ones, whether other keys are
    /// refused, and its bounds.
    #[inline]
    pub fn object(
        &mut self,
        slot: Slot,
        properties: Vec<(SmolStr, Slot)>,
        required: Vec<u32>,
        closed: bool,
        bounds: Option<NodeBounds>,
    ) {
        let declared = properties
            .into_iter()
            .map(|(name, slot)| (name, slot.id))
            .collect();
        self.set(
            slot,
            Node::Object {
                properties: PropertyMap::from_entries(declared),
                required: required.into_boxed_slice(),
                closed,
                bounds: bounds.map(|b| b.0),
            },
        );
    }

    /// Fills `slot` with an array whose elements match `items` (a slot below it) when
    /// given.
    #[inline]
    pub fn array(&mut self, slot: Slot, items: Option<Slot>, bounds: Option<NodeBounds>) {
        self.set(
            slot,
            Node::Array {
                items: items.map(|items| items.id),
                bounds: bounds.map(|b| b.0),
            },
        );
    }

    /// Fills `slot` with a scalar of type `ty`, with its `enum` and `const` when given.
    ///
    /// # Errors
    ///
    /// [`Refused`] for an `enum` that is not a non-empty array of values of `ty`, or a
    /// `const` that is not of `ty` or not in the `enum`.
    #[inline]
    pub fn scalar(
        &mut self,
        slot: Slot,
        ty: JsonType,
        enumeration: Option<&Value>,
        constant: Option<&Value>,
        bounds: Option<NodeBounds>,
    ) -> Result<(), Refused> {
        let allowed = match enumeration {
            None => None,
            Some(values) => {
                let values = values.as_array().filter(|v| !v.is_empty()).ok_or(Refused)?;
                if !values.iter().all(|v| is_scalar_of(ty, v)) {
                    return Err(Refused);
                }
                Some(Allowed::new(values, canonical))
            }
        };
        let constant = match constant {
            None => None,
            Some(constant) => {
                let member = allowed
                    .as_ref()
                    .is_none_or(|allowed| allowed.contains(constant));
                if !(is_scalar_of(ty, constant) && member) {
                    return Err(Refused);
                }
                Some(canonical(constant))
            }
        };
        let plain = allowed.is_none() && constant.is_none() && bounds.is_none();
        self.set(
            slot,
            Node::Scalar {
                ty,
                allowed,
                constant,
                bounds: bounds.map(|b| b.0),
                plain,
            },
        );
        Ok(())
    }

    /// The compiled schema. `render` makes its model-facing JSON the first time something
    /// reads it ([`CompiledSchema::as_json`], [`CompiledSchema::json`]), once.
    pub fn finish<F>(self, render: F) -> CompiledSchema
    where
        F: FnOnce() -> Value + Send + 'static,
    {
        let nesting = usize::try_from(self.nesting).unwrap_or(usize::MAX);
        let nodes = self.nodes.into_boxed_slice();
        debug_assert_eq!(nesting, direct::nesting(&nodes));
        CompiledSchema::deferred(nodes, nesting, Box::new(render))
    }
}

/// A copy of a scalar in canonical form (an integral float as an integer).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(n) => Value::Number(crate::lossless::canonical_number(n)),
        other => other.clone(),
    }
}
