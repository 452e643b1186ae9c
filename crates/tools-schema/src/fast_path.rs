//! The fast path for specs written in the author DSL: the validator is built straight from
//! the spec with `tools_json::build`, in one walk, and the model-facing JSON Schema is
//! rendered only when something asks for it.
//!
//! This walk only ever **accepts**. It takes a spec when every node is plainly inside both
//! the DSL and the subset, and refuses at the first thing it would have to judge: an author
//! error, anything the support check would report on the compiled output, or a key it does
//! not know. The caller then takes the full path (author walk, build, support check), which
//! is the one that reports errors. So a refusal here never changes what a caller sees, only
//! how fast a good spec compiles.
//!
//! The DSL as read here (`compile.rs` is the authority; `fast_path_tests.rs` holds this walk
//! to it):
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

use serde_json::{Map, Value};
use tools_json::build::{Builder, KeywordKind, Keywords, NodeBounds, Refused, Slot};
use tools_json::{CompiledSchema, JsonType, Limits};

/// What the build's root is: a value spec, or a parameter map, open (no
/// `additionalProperties` key) or closed. The full path (`compile.rs`) builds the same roots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Root {
    /// A value spec: the root is a node.
    Value,
    /// A parameter map: the root is the property map of an object, closed
    /// (`"additionalProperties": false`) or open.
    Params {
        /// Whether keys other than the declared properties are rejected.
        closed: bool,
    },
}

/// A node waiting to be built: its spec, its slot, and whether it is a property (which may
/// carry `"required": true`).
type Pending<'a> = (&'a Value, Slot, bool);

/// Compiles `spec` read as `root`, or hands `render` back when the full path has to judge
/// it. `render` must make the DSL's compiled JSON of `spec`. Iterative: the depth of the
/// spec costs heap, not stack.
pub(crate) fn compile<F>(spec: &Value, root: Root, render: F) -> Result<CompiledSchema, F>
where
    F: FnOnce() -> Value + Send + 'static,
{
    match build(spec, root) {
        Ok(builder) => Ok(builder.finish(render)),
        Err(Refused) => Err(render),
    }
}

fn build(spec: &Value, root: Root) -> Result<Builder, Refused> {
    let limits = Limits::default();
    let mut builder = Builder::new();
    // Sized for a typical tool: growing from one element reallocates several times.
    let mut work: Vec<Pending<'_>> = Vec::with_capacity(64);
    match root {
        Root::Params { closed } => {
            let properties = spec.as_object().ok_or(Refused)?;
            object(
                Builder::ROOT,
                properties,
                closed,
                None,
                &mut builder,
                &mut work,
            )?;
        }
        Root::Value => work.push((spec, Builder::ROOT, false)),
    }
    while let Some((spec, slot, property)) = work.pop() {
        node(spec, slot, property, &limits, &mut builder, &mut work)?;
    }
    Ok(builder)
}

/// Fills `slot` with an object over `properties` (each queued as a property node below
/// it), its `required` list gathered from the properties' flags in declaration order.
fn object<'a>(
    slot: Slot,
    properties: &'a Map<String, Value>,
    closed: bool,
    bounds: Option<NodeBounds>,
    builder: &mut Builder,
    work: &mut Vec<Pending<'a>>,
) -> Result<(), Refused> {
    let mut declared = Vec::with_capacity(properties.len());
    let mut required = Vec::new();
    for (index, (name, spec)) in properties.iter().enumerate() {
        let child = builder.child(slot)?;
        work.push((spec, child, true));
        declared.push((name.as_str().into(), child));
        // A scan, not `Map::get`: a property has a handful of keys, and hashing the name
        // (SipHash) costs more than comparing them.
        let flagged = spec.as_object().is_some_and(|map| {
            map.iter()
                .any(|(key, value)| key == "required" && matches!(value, Value::Bool(true)))
        });
        if flagged {
            required.push(u32::try_from(index).map_err(|_| Refused)?);
        }
    }
    builder.object(slot, declared, required, closed, bounds);
    Ok(())
}

/// Fills `slot` from one node (its children queued below it), or refuses when the full
/// path has to judge it.
fn node<'a>(
    spec: &'a Value,
    slot: Slot,
    property: bool,
    limits: &Limits,
    builder: &mut Builder,
    work: &mut Vec<Pending<'a>>,
) -> Result<(), Refused> {
    let map = spec.as_object().ok_or(Refused)?;
    let mut clean = true;
    let mut format = false;
    let keys = Keywords::classify(map, |name, value, kind| match kind {
        KeywordKind::Known | KeywordKind::Bound => {}
        KeywordKind::Data => clean &= tools_json::build::is_annotation_data(value, limits),
        KeywordKind::Text => {
            clean &= name == "format" && value.is_string();
            format = true;
        }
        KeywordKind::Flag => clean &= name == "deprecated" && value.is_boolean(),
        KeywordKind::Unknown => clean = false,
    });
    let texts_ok = [keys.description(), keys.title()]
        .iter()
        .all(|text| text.is_none_or(Value::is_string));
    let required_ok = match keys.required() {
        None => true,
        Some(flag) => property && matches!(flag, Value::Bool(true)),
    };
    if !(clean && texts_ok && required_ok) {
        return Err(Refused);
    }
    let has_bounds = keys.has_bounds();
    let has_value_keys = keys.enumeration().is_some() || keys.constant().is_some();
    let has_shape_keys = keys.properties().is_some()
        || keys.additional_properties().is_some()
        || keys.items().is_some();
    if let Some(branches) = keys.one_of() {
        if keys.ty().is_some() || format || has_bounds || has_value_keys || has_shape_keys {
            return Err(Refused);
        }
        let branches = branches
            .as_array()
            .filter(|b| b.len() >= 2)
            .ok_or(Refused)?;
        let mut ids = Vec::with_capacity(branches.len());
        for branch in branches {
            let child = builder.child(slot)?;
            work.push((branch, child, false));
            ids.push(child);
        }
        builder.one_of(slot, ids);
        return Ok(());
    }
    let name = keys.ty().and_then(Value::as_str).ok_or(Refused)?;
    if name == "json" {
        if format || has_bounds || has_value_keys || has_shape_keys {
            return Err(Refused);
        }
        builder.any(slot);
        return Ok(());
    }
    let ty = JsonType::from_name(name).ok_or(Refused)?;
    let vocabulary_ok = match ty {
        JsonType::Object => {
            keys.items().is_none()
                && !has_value_keys
                && keys.additional_properties().is_some_and(Value::is_boolean)
        }
        JsonType::Array => {
            !has_value_keys && keys.properties().is_none() && keys.additional_properties().is_none()
        }
        _ => !has_shape_keys,
    };
    let format_ok =
        !format || matches!(ty, JsonType::String | JsonType::Number | JsonType::Integer);
    if !(vocabulary_ok && format_ok) {
        return Err(Refused);
    }
    let bounds = builder.bounds(ty, &keys)?;
    match ty {
        JsonType::Object => {
            let closed = matches!(keys.additional_properties(), Some(Value::Bool(false)));
            match keys.properties() {
                None => object(slot, empty(), closed, bounds, builder, work),
                Some(properties) => {
                    let properties = properties.as_object().ok_or(Refused)?;
                    object(slot, properties, closed, bounds, builder, work)
                }
            }
        }
        JsonType::Array => {
            let items = match keys.items() {
                None => None,
                Some(items) => {
                    let child = builder.child(slot)?;
                    work.push((items, child, false));
                    Some(child)
                }
            };
            builder.array(slot, items, bounds);
            Ok(())
        }
        scalar => builder.scalar(slot, scalar, keys.enumeration(), keys.constant(), bounds),
    }
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}
