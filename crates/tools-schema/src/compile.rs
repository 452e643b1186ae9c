//! Compilation of author specs to raw JSON Schema.
//!
//! Two passes, both iterative:
//! 1. the **author walk** checks the spec depth-first in document order and stops at the
//!    first author error (for a property: that it is an object and its `required` flag;
//!    then, for every node, its vocabulary in key order, then its structure: `type` beside
//!    `oneOf`, a `oneOf` that is not an array, object openness, an `enum` that is not an
//!    array, and the `type` itself);
//! 2. the **build** emits each node's keys in a fixed order (parameter root: `type`,
//!    `additionalProperties` (closed roots only), `properties`, `required`; scalar: `type`, annotations,
//!    `enum`, `const`, bounds; array: `type`, annotations, bounds, `items`; object: `type`,
//!    annotations, bounds, `additionalProperties`, `properties`, `required`; `json`:
//!    annotations only; `oneOf`: `oneOf`, annotations; annotations in the order
//!    `description, title, default, examples, deprecated, format`, bounds in the order of
//!    [`BOUNDS`]), then `tools-json` checks the output against the subset and
//!    reports every violation, with the root label `schema`.

use serde_json::{Map, Value};
use tools_json::{CompiledSchema, Path, Segment, Violation, ViolationKind};

/// The build's root, shared with the fast path.
pub(crate) use crate::fast_path::Root;

use crate::Error;
use crate::spec::Spec;

/// The DSL's node types.
const DSL_TYPES: [&str; 8] = [
    "string", "number", "integer", "boolean", "null", "array", "object", "json",
];

/// Where a node sits, which decides whether `required` may appear on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    /// The root of a value spec, array `items`, or a `oneOf` branch.
    Value,
    /// A property of a parameter map or of an object's `properties`.
    Property,
}

/// The keys of one author node, sorted in one pass.
#[derive(Default)]
struct DslKeys<'a> {
    ty: Option<&'a Value>,
    one_of: Option<&'a Value>,
    required: Option<&'a Value>,
    properties: Option<&'a Value>,
    additional: Option<&'a Value>,
    items: Option<&'a Value>,
    enumeration: Option<&'a Value>,
    constant: Option<&'a Value>,
    /// `description`, `title`, `default`, `examples`, `deprecated`, `format`, in that
    /// (emission) order.
    annotations: [Option<&'a Value>; 6],
    /// The bound keywords, in [`BOUNDS`] order.
    bounds: [Option<&'a Value>; 13],
}

/// The annotations, in the order they are emitted.
pub(crate) const ANNOTATIONS: [&str; 6] = [
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "format",
];

/// The bound keywords (docs/decisions.md, entry 28), in the order they are emitted.
const BOUNDS: [&str; 13] = tools_json::BOUND_KEYWORDS;

impl<'a> DslKeys<'a> {
    fn classify(map: &'a Map<String, Value>) -> DslKeys<'a> {
        let mut keys = DslKeys::default();
        for (name, value) in map {
            let slot = match name.as_str() {
                "type" => &mut keys.ty,
                "oneOf" => &mut keys.one_of,
                "required" => &mut keys.required,
                "properties" => &mut keys.properties,
                "additionalProperties" => &mut keys.additional,
                "items" => &mut keys.items,
                "enum" => &mut keys.enumeration,
                "const" => &mut keys.constant,
                "description" => &mut keys.annotations[0],
                "title" => &mut keys.annotations[1],
                "default" => &mut keys.annotations[2],
                "examples" => &mut keys.annotations[3],
                "deprecated" => &mut keys.annotations[4],
                "format" => &mut keys.annotations[5],
                other => match BOUNDS.iter().position(|b| *b == other) {
                    Some(i) => &mut keys.bounds[i],
                    None => continue,
                },
            };
            *slot = Some(value);
        }
        keys
    }
}

/// Compiles a value spec (root label `schema`).
pub(crate) fn compile_value(spec: &Spec) -> Result<CompiledSchema, Error> {
    compile(spec, Root::Value)
}

/// Compiles a parameter map (author root label `parameters`); a `closed` root gets
/// `"additionalProperties": false`.
pub(crate) fn compile_params(spec: &Spec, closed: bool) -> Result<CompiledSchema, Error> {
    compile(spec, Root::Params { closed })
}

/// The fast path first: a spec plainly inside the DSL and the subset compiles its validator
/// straight from the spec, and its raw schema is built only when something reads it (the
/// compiled schema keeps a handle on the spec, not a copy). Anything else takes the full
/// path, whose author walk and support check report the errors: the fast path only ever
/// accepts, and what it accepts the full path accepts with the same JSON (the property
/// tests in `fast_path_tests.rs` hold it to that).
fn compile(spec: &Spec, root: Root) -> Result<CompiledSchema, Error> {
    let shared = spec.share();
    match crate::fast_path::compile(spec.get(), root, move || build(shared.get(), root)) {
        Ok(compiled) => Ok(compiled),
        Err(_) => compile_full(spec.get(), root),
    }
}

/// The full path: the author walk, the build, and the subset's check of the output.
pub(crate) fn compile_full(spec: &Value, root: Root) -> Result<CompiledSchema, Error> {
    match root {
        Root::Value => author_walk(spec, "schema", false)?,
        Root::Params { .. } => author_walk(spec, "parameters", true)?,
    }
    check_output(build(spec, root))
}

fn check_output(raw: Value) -> Result<CompiledSchema, Error> {
    CompiledSchema::compile_owned(raw).map_err(|err| Error::UnsupportedSchema {
        violations: err.violations().to_vec().into(),
    })
}

/// One step of a path in the author walk's arena.
#[derive(Clone, Copy)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

struct Arena<'a> {
    steps: Vec<(usize, Step<'a>)>,
    root: &'a str,
}

impl<'a> Arena<'a> {
    fn child(&mut self, parent: usize, step: Step<'a>) -> usize {
        self.steps.push((parent, step));
        self.steps.len() - 1
    }

    /// The error for `kind` at node `at`, extended by `key` when given.
    fn error(&self, mut at: usize, key: Option<&str>, kind: ViolationKind) -> Error {
        let mut segments = Vec::new();
        if let Some(key) = key {
            segments.push(Segment::Key(key.into()));
        }
        while let Some(&(parent, step)) = self.steps.get(at) {
            match step {
                Step::Root => break,
                Step::Key(k) => segments.push(Segment::Key(k.into())),
                Step::Index(i) => segments.push(Segment::Index(i)),
            }
            at = parent;
        }
        segments.reverse();
        Error::UnsupportedSchema {
            violations: vec![Violation::new(Path::from_parts(self.root, segments), kind)].into(),
        }
    }
}

/// The keys a node may carry besides the common ones, by its `type`.
pub(crate) fn allowed_by_kind(ty: Option<&str>, key: &str) -> bool {
    match ty {
        Some("string") => matches!(
            key,
            "enum" | "const" | "minLength" | "maxLength" | "pattern" | "format"
        ),
        Some("number" | "integer") => matches!(
            key,
            "enum"
                | "const"
                | "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "format"
        ),
        Some("boolean" | "null") => matches!(key, "enum" | "const"),
        Some("array") => matches!(key, "items" | "minItems" | "maxItems" | "uniqueItems"),
        Some("object") => matches!(
            key,
            "properties" | "additionalProperties" | "minProperties" | "maxProperties"
        ),
        _ => false,
    }
}

/// The initial capacity of the compile walks' stacks and arenas (nodes of a typical tool).
const WALK_CAPACITY: usize = 64;

/// The author walk: `Ok(())` or the first author error.
fn author_walk(spec: &Value, root: &str, params: bool) -> Result<(), Error> {
    // Sized for a typical tool up front: growing these from empty reallocates several times
    // per compile, and that was a tenth of e3's instructions.
    let mut steps = Vec::with_capacity(WALK_CAPACITY);
    steps.push((0, Step::Root));
    let mut arena = Arena { steps, root };
    let mut stack: Vec<(&Value, usize, Position)> = Vec::with_capacity(WALK_CAPACITY);
    if params {
        let Some(map) = spec.as_object() else {
            return Err(arena.error(0, None, ViolationKind::PropertyMapNotObject));
        };
        let start = stack.len();
        for (name, property) in map {
            let id = arena.child(0, Step::Key(name));
            stack.push((property, id, Position::Property));
        }
        stack[start..].reverse();
    } else {
        stack.push((spec, 0, Position::Value));
    }
    while let Some((node, at, position)) = stack.pop() {
        let Some(map) = node.as_object() else {
            return Err(arena.error(at, None, ViolationKind::NotAValueSchema));
        };
        let keys = DslKeys::classify(map);
        if position == Position::Property
            && let Some(flag) = keys.required
            && flag != &Value::Bool(true)
        {
            return Err(arena.error(at, Some("required"), ViolationKind::RequiredNotTrue));
        }
        let ty = keys.ty.and_then(Value::as_str);
        // Vocabulary, in key order: the common keys, `required` on properties, and the
        // keys of the node's own type.
        let unsupported = map.keys().find(|name| !match name.as_str() {
            "type" | "oneOf" | "description" | "title" | "default" | "examples" | "deprecated" => {
                true
            }
            "required" => position == Position::Property,
            other => allowed_by_kind(ty, other),
        });
        if let Some(name) = unsupported {
            return Err(arena.error(
                at,
                Some(name),
                ViolationKind::UnsupportedByDsl {
                    key: name.as_str().into(),
                },
            ));
        }
        if keys.ty.is_some() && keys.one_of.is_some() {
            return Err(arena.error(at, None, ViolationKind::TypeWithOneOf));
        }
        if let Some(branches) = keys.one_of {
            let Some(branches) = branches.as_array() else {
                return Err(arena.error(at, Some("oneOf"), ViolationKind::DslOneOfMalformed));
            };
            let one_of = arena.child(at, Step::Key("oneOf"));
            for (i, branch) in branches.iter().enumerate().rev() {
                let id = arena.child(one_of, Step::Index(i));
                stack.push((branch, id, Position::Value));
            }
            continue;
        }
        if ty == Some("object") && !keys.additional.is_some_and(Value::is_boolean) {
            return Err(arena.error(
                at,
                Some("additionalProperties"),
                ViolationKind::OpennessNotExplicit,
            ));
        }
        if keys.enumeration.is_some_and(|e| !e.is_array()) {
            return Err(arena.error(at, Some("enum"), ViolationKind::DslEnumMalformed));
        }
        if !ty.is_some_and(|t| DSL_TYPES.contains(&t)) {
            return Err(arena.error(at, Some("type"), ViolationKind::UnknownDslType));
        }
        match ty {
            Some("array") => {
                if let Some(items) = keys.items {
                    let id = arena.child(at, Step::Key("items"));
                    stack.push((items, id, Position::Value));
                }
            }
            Some("object") => match keys.properties {
                None => {}
                Some(Value::Object(properties)) => {
                    let props = arena.child(at, Step::Key("properties"));
                    let start = stack.len();
                    for (name, property) in properties {
                        let id = arena.child(props, Step::Key(name));
                        stack.push((property, id, Position::Property));
                    }
                    stack[start..].reverse();
                }
                Some(_) => {
                    return Err(arena.error(
                        at,
                        Some("properties"),
                        ViolationKind::PropertyMapNotObject,
                    ));
                }
            },
            _ => {}
        }
    }
    Ok(())
}

/// What a node of the build arena becomes once its children are built.
enum Shape<'a> {
    /// The parameter root: an object whose `additionalProperties` is `false` when closed
    /// and absent when open.
    ParamsRoot {
        properties: &'a Map<String, Value>,
        closed: bool,
    },
    OneOf {
        keys: DslKeys<'a>,
        branches: usize,
    },
    Array {
        keys: DslKeys<'a>,
        items: bool,
    },
    Object {
        keys: DslKeys<'a>,
        properties: Option<&'a Map<String, Value>>,
    },
    Scalar {
        keys: DslKeys<'a>,
    },
    Json {
        keys: DslKeys<'a>,
    },
}

/// Builds the raw schema of a spec that passed the author walk.
///
/// A first pass lays the nodes out in pre-order, each with the ids of its children; a
/// second pass builds them from the last to the first, so that every child is complete
/// before its parent takes it. Each output key is inserted exactly once. No recursion.
pub(crate) fn build(spec: &Value, root: Root) -> Value {
    let mut shapes: Vec<(Shape<'_>, Vec<usize>)> = Vec::with_capacity(WALK_CAPACITY);
    // Pending nodes: the spec and the slot in its parent's child list.
    let mut work: Vec<(&Value, Option<(usize, usize)>)> = Vec::with_capacity(WALK_CAPACITY);
    if let Root::Params { closed } = root {
        let empty = empty_map();
        let properties = spec.as_object().unwrap_or(empty);
        shapes.push((
            Shape::ParamsRoot { properties, closed },
            vec![0; properties.len()],
        ));
        for (i, property) in properties.values().enumerate().rev() {
            work.push((property, Some((0, i))));
        }
    } else {
        work.push((spec, None));
    }
    while let Some((node, parent)) = work.pop() {
        let id = shapes.len();
        if let Some((parent, slot)) = parent
            && let Some(child) = shapes.get_mut(parent).and_then(|(_, c)| c.get_mut(slot))
        {
            *child = id;
        }
        let empty = empty_map();
        let map = node.as_object().unwrap_or(empty);
        let keys = DslKeys::classify(map);
        let (shape, children): (Shape<'_>, Vec<&Value>) =
            if let Some(branches) = keys.one_of.and_then(Value::as_array) {
                let n = branches.len();
                (
                    Shape::OneOf { keys, branches: n },
                    branches.iter().collect(),
                )
            } else {
                match keys.ty.and_then(Value::as_str) {
                    Some("array") => {
                        let items: Vec<&Value> = keys.items.into_iter().collect();
                        let has = !items.is_empty();
                        (Shape::Array { keys, items: has }, items)
                    }
                    Some("object") => {
                        let properties = keys.properties.and_then(Value::as_object);
                        let children = properties.into_iter().flat_map(|p| p.values()).collect();
                        (Shape::Object { keys, properties }, children)
                    }
                    Some("json") | None => (Shape::Json { keys }, Vec::new()),
                    Some(_) => (Shape::Scalar { keys }, Vec::new()),
                }
            };
        for (slot, child) in children.iter().enumerate().rev() {
            work.push((child, Some((id, slot))));
        }
        shapes.push((shape, vec![0; children.len()]));
    }
    let mut built: Vec<Option<Value>> = Vec::new();
    built.resize_with(shapes.len(), || None);
    let mut take = |built: &mut Vec<Option<Value>>, id: usize| {
        built
            .get_mut(id)
            .and_then(Option::take)
            .unwrap_or(Value::Null)
    };
    for (id, (shape, children)) in shapes.into_iter().enumerate().rev() {
        // Sized once: a map that grows reallocates its entries and rehashes.
        let mut out = Map::with_capacity(shape.key_count());
        match shape {
            Shape::ParamsRoot { properties, closed } => {
                out.insert("type".into(), Value::String("object".into()));
                if closed {
                    out.insert("additionalProperties".into(), Value::Bool(false));
                }
                let (props, required) =
                    assemble_properties(properties, &children, &mut built, &mut take);
                out.insert("properties".into(), Value::Object(props));
                if !required.is_empty() {
                    out.insert("required".into(), Value::Array(required));
                }
            }
            Shape::OneOf { keys, branches } => {
                let branches = children
                    .iter()
                    .take(branches)
                    .map(|&c| take(&mut built, c))
                    .collect();
                out.insert("oneOf".into(), Value::Array(branches));
                copy_annotations(&keys, &mut out);
            }
            Shape::Array { keys, items } => {
                out.insert("type".into(), Value::String("array".into()));
                copy_annotations(&keys, &mut out);
                copy_bounds(&keys, &mut out);
                if items && let Some(&child) = children.first() {
                    out.insert("items".into(), take(&mut built, child));
                }
            }
            Shape::Object { keys, properties } => {
                out.insert("type".into(), Value::String("object".into()));
                copy_annotations(&keys, &mut out);
                copy_bounds(&keys, &mut out);
                if let Some(open) = keys.additional {
                    out.insert("additionalProperties".into(), open.clone());
                }
                if let Some(properties) = properties {
                    let (props, required) =
                        assemble_properties(properties, &children, &mut built, &mut take);
                    out.insert("properties".into(), Value::Object(props));
                    if !required.is_empty() {
                        out.insert("required".into(), Value::Array(required));
                    }
                }
            }
            Shape::Scalar { keys } => {
                if let Some(ty) = keys.ty {
                    out.insert("type".into(), ty.clone());
                }
                copy_annotations(&keys, &mut out);
                if let Some(values) = keys.enumeration {
                    out.insert("enum".into(), tools_json::clone_deep(values));
                }
                if let Some(constant) = keys.constant {
                    out.insert("const".into(), tools_json::clone_deep(constant));
                }
                copy_bounds(&keys, &mut out);
            }
            Shape::Json { keys } => copy_annotations(&keys, &mut out),
        }
        if let Some(slot) = built.get_mut(id) {
            *slot = Some(Value::Object(out));
        }
    }
    take(&mut built, 0)
}

impl Shape<'_> {
    /// How many keys the built schema of this shape has (at most).
    fn key_count(&self) -> usize {
        let annotations = |keys: &DslKeys<'_>| {
            keys.annotations.iter().filter(|a| a.is_some()).count()
                + keys.bounds.iter().filter(|b| b.is_some()).count()
        };
        match self {
            Shape::ParamsRoot { closed, .. } => 3 + usize::from(*closed),
            Shape::OneOf { keys, .. } => 1 + annotations(keys),
            Shape::Json { keys } => annotations(keys),
            Shape::Array { keys, .. } => 2 + annotations(keys),
            Shape::Object { keys, .. } => 4 + annotations(keys),
            Shape::Scalar { keys } => {
                1 + usize::from(keys.enumeration.is_some())
                    + usize::from(keys.constant.is_some())
                    + annotations(keys)
            }
        }
    }
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// The built property schemas (in declaration order) and the names flagged
/// `required: true`.
fn assemble_properties(
    properties: &Map<String, Value>,
    children: &[usize],
    built: &mut Vec<Option<Value>>,
    take: &mut impl FnMut(&mut Vec<Option<Value>>, usize) -> Value,
) -> (Map<String, Value>, Vec<Value>) {
    let mut out = Map::with_capacity(properties.len());
    let mut required = Vec::new();
    for ((name, property), &child) in properties.iter().zip(children) {
        if property.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::String(name.clone()));
        }
        out.insert(name.clone(), take(built, child));
    }
    (out, required)
}

fn copy_bounds(keys: &DslKeys<'_>, to: &mut Map<String, Value>) {
    for (name, value) in BOUNDS.iter().zip(keys.bounds) {
        if let Some(value) = value {
            to.insert((*name).into(), value.clone());
        }
    }
}

fn copy_annotations(keys: &DslKeys<'_>, to: &mut Map<String, Value>) {
    for (name, value) in ANNOTATIONS.iter().zip(keys.annotations) {
        if let Some(value) = value {
            to.insert((*name).into(), tools_json::clone_deep(value));
        }
    }
}
