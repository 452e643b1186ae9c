//! The schemars bridge (cargo feature `schemars`): [`Schema::from_schemars`] and
//! [`Params::from_schemars`] turn the schema a `schemars::JsonSchema` derive generates
//! (draft 2020-12, schemars 1.x) into the author DSL's JSON form, so that types which already
//! derive `JsonSchema` can be tool arguments and outputs without a second derive.
//!
//! The rules are documented on [`Schema::from_schemars`] (the public entry point).
//!
//! The conversion is iterative and total over any JSON document: a work stack expands each
//! node (inlining `$ref`, merging `allOf`), checks its vocabulary and decides its shape
//! (any JSON, one type, or a `oneOf` whose branches are pushed as new work); a bottom-up
//! pass then proves each rewritten `anyOf` disjoint, and a last bottom-up pass builds the
//! author spec, only when nothing was refused. Violations are located in the schemars
//! document through an arena of path steps, and a `$ref` chain of contexts detects cycles.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};
use tools_json::{JsonType, Path, Segment, Violation, ViolationKind, Violations};

use crate::{Error, Params, Schema};

/// How many schema nodes may be created by copies (`$ref` inlining and keywords moved into
/// `oneOf` branches) before the conversion gives up.
pub(crate) const MAX_COPIED_NODES: usize = 100_000;

/// The annotations the author DSL keeps, in the order it emits them.
const NOTES: [&str; 6] = crate::compile::ANNOTATIONS;

/// Keys dropped from the author form: annotations the DSL has no slot for, and the
/// containers of definitions (which are reached through `$ref`).
const DROPPED: [&str; 7] = [
    "$schema",
    "$id",
    "$comment",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
];

/// The constraint keywords of a typed node, in the order they are emitted.
const REST: [&str; 15] = {
    let mut rest = [""; 15];
    rest[0] = "enum";
    rest[1] = "const";
    let mut i = 0;
    while i < tools_json::BOUND_KEYWORDS.len() {
        rest[i + 2] = tools_json::BOUND_KEYWORDS[i];
        i += 1;
    }
    rest
};

/// The structural keywords understood besides [`NOTES`] and [`REST`].
const STRUCTURE: [&str; 8] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
    "nullable",
];

impl Schema {
    /// The author schema of a type that derives `schemars::JsonSchema` (cargo feature
    /// `schemars`): the schema `schemars::schema_for!(T)` generates, converted to the
    /// author DSL and compiled once.
    ///
    /// # What is converted
    ///
    /// The author DSL is a strict subset: every keyword it accepts is enforced. The conversion
    /// rewrites what has an exact equivalent in that subset and refuses everything else:
    ///
    /// - **`$ref`** to a place in the same document (`#`, `#/$defs/…`, `#/definitions/…`,
    ///   `#/components/schemas/…`, any JSON pointer) is inlined; keywords beside it are
    ///   combined with the target, the site's annotations winning. A `$ref` that closes a
    ///   cycle (a recursive type) is refused at the `$ref` that closes it, e.g.
    ///   `schema.$defs.Node.properties.next.anyOf[0].$ref`, as is a `$ref` that does not
    ///   resolve or points outside the document.
    /// - **`allOf`** (any length), and **`anyOf`/`oneOf` with one branch**, are merged into
    ///   the node; two different values of one keyword cannot be merged and are refused at the
    ///   `allOf`/`$ref` that brought them.
    /// - **`type: [T, "null"]`** (and any type array) becomes `oneOf: [{type T …}, {type
    ///   null}]`, each keyword moving into the branches of the types it applies to (the
    ///   annotations stay on the `oneOf`); `["integer", "number"]` is `number`. OpenAPI's
    ///   **`nullable: true`** adds `null` to the node's types the same way.
    /// - **`anyOf`** with two or more branches becomes `oneOf` when no value can match two
    ///   branches (their types are pairwise disjoint, as in `Option<Struct>`'s `anyOf: [{$ref},
    ///   {type: null}]` or an untagged enum of a string and an object); otherwise it is
    ///   refused. Keywords beside a `oneOf`/`anyOf` move into every branch.
    /// - **`required` lists** become `"required": true` on the properties; an object without
    ///   `additionalProperties` becomes explicitly open (`true`, JSON Schema's default), `false`
    ///   stays; a schema-valued `additionalProperties` (a `HashMap`/`BTreeMap`) is refused.
    /// - **`enum`/`const` without `type`** get the type all their values share (`integer` and
    ///   `number` mix as `number`), else they are refused.
    /// - The bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
    ///   `multipleOf`, `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`,
    ///   `uniqueItems`, `minProperties`, `maxProperties`) are kept and enforced, so the
    ///   `minimum: 0, maximum: 255` schemars writes for a `u8` bounds the argument; `format`
    ///   (`uint8`, `int64`, `double`, …) is kept as an annotation.
    /// - Annotations `description` (doc comments), `title`, `default`, `examples`,
    ///   `deprecated` and `format` are kept. `$schema`, `$id`, `$comment`, `readOnly` and
    ///   `writeOnly` are **dropped**: the author DSL has no slot for them (and they never
    ///   constrain a value), as are the definition containers `$defs`, `definitions` and the
    ///   root's `components`. A boolean schema `true` is any JSON (`{"type": "json"}`).
    ///
    /// Everything else (`patternProperties`, `propertyNames`, `if`/`then`/`else`, `not`,
    /// `prefixItems` (tuples), `contains`, `dependentRequired`, `unevaluatedProperties`, the
    /// boolean schema `false`, …) is refused. Refusals are collected, never stopped at the
    /// first: the error is [`Error::UnsupportedSchema`] with one violation per problem, each at
    /// its path in the schemars document (root label `schema`; a problem inside a definition
    /// used twice is reported once, at the definition). The usual kinds are
    /// [`ViolationKind::UnsupportedKeyword`] (a keyword outside the subset, or a `$ref`,
    /// `allOf` or `anyOf` that cannot be rewritten), [`ViolationKind::AdditionalPropertiesNotBoolean`]
    /// (maps), [`ViolationKind::KeywordOnWrongType`], [`ViolationKind::RequiresTypeOrOneOf`]
    /// (a mixed `enum`) and [`ViolationKind::BesideOneOf`]. A converted schema is then compiled
    /// once, so a returned `Schema`/`Params` always compiles.
    ///
    /// The conversion is iterative (an explicit work stack, then a bottom-up build), total over
    /// any JSON document, and refuses to inline more than 100 000 nodes (a
    /// schema whose definitions reuse each other can grow exponentially when inlined): the
    /// violation names the `$ref` (or the keyword beside a `oneOf`) being copied when the limit
    /// was reached.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] with every keyword that cannot be enforced, each at its
    /// path in the schemars document (rooted at `schema`); or the compile error of the
    /// converted schema.
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_schema::Schema;
    ///
    /// /// Where to look.
    /// #[derive(schemars::JsonSchema, serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Search {
    ///     /// The text to find.
    ///     query: String,
    ///     /// At most this many hits.
    ///     limit: Option<u8>,
    /// }
    ///
    /// let schema = Schema::from_schemars::<Search>().unwrap();
    /// assert_eq!(
    ///     schema.compile().unwrap().as_json().to_string(),
    ///     concat!(
    ///         r#"{"type":"object","description":"Where to look.","title":"Search","#,
    ///         r#""additionalProperties":false,"properties":{"#,
    ///         r#""query":{"type":"string","description":"The text to find."},"#,
    ///         r#""limit":{"oneOf":[{"type":"integer","format":"uint8","minimum":0,"maximum":255},"#,
    ///         r#"{"type":"null"}],"description":"At most this many hits."}},"required":["query"]}"#,
    ///     )
    /// );
    ///
    /// // A map has no equivalent in the subset: refused with its path.
    /// #[derive(schemars::JsonSchema)]
    /// struct Tags {
    ///     tags: std::collections::HashMap<String, String>,
    /// }
    /// let err = Schema::from_schemars::<Tags>().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "unsupported JSON schema: schema.properties.tags.additionalProperties: \
    ///      additionalProperties must be true or false"
    /// );
    /// ```
    pub fn from_schemars<T: schemars::JsonSchema + ?Sized>() -> Result<Schema, Error> {
        Schema::from_schemars_schema(
            &schemars::SchemaGenerator::default().into_root_schema_for::<T>(),
        )
    }

    /// [`Schema::from_schemars`] for a schema generated with other settings (draft 07,
    /// OpenAPI 3.0's `nullable`, another definitions path, transforms…).
    ///
    /// # Errors
    ///
    /// As [`Schema::from_schemars`].
    pub fn from_schemars_schema(schema: &schemars::Schema) -> Result<Schema, Error> {
        let value = convert(schema.as_value(), false)?;
        let schema = Schema(crate::dsl::Spec::new(value));
        schema.compile()?;
        Ok(schema)
    }
}

impl Params {
    /// The parameter map of a type that derives `schemars::JsonSchema` (cargo feature
    /// `schemars`): its schema must be an object; its properties become the parameters
    /// (required as schemars says) and `additionalProperties: false`
    /// (`#[serde(deny_unknown_fields)]`) closes the map. The root's annotations (the
    /// struct's doc comment and title) have no slot in a parameter map and are dropped.
    ///
    /// ```
    /// use tools_schema::Params;
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct ReadFile {
    ///     /// Absolute path.
    ///     path: String,
    ///     offset: Option<u32>,
    /// }
    ///
    /// let params = Params::from_schemars::<ReadFile>().unwrap();
    /// assert!(!params.is_closed());
    /// assert_eq!(
    ///     params.compile().unwrap().as_json().to_string(),
    ///     concat!(
    ///         r#"{"type":"object","properties":{"#,
    ///         r#""path":{"type":"string","description":"Absolute path."},"#,
    ///         r#""offset":{"oneOf":[{"type":"integer","format":"uint32","minimum":0},{"type":"null"}]}},"#,
    ///         r#""required":["path"]}"#,
    ///     )
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Schema::from_schemars`]; a root that is not an object is
    /// [`ViolationKind::NotObjectRooted`], and root `minProperties`/`maxProperties`
    /// (which a parameter map cannot carry) are [`ViolationKind::UnsupportedByDsl`].
    pub fn from_schemars<T: schemars::JsonSchema + ?Sized>() -> Result<Params, Error> {
        Params::from_schemars_schema(
            &schemars::SchemaGenerator::default().into_root_schema_for::<T>(),
        )
    }

    /// [`Params::from_schemars`] for a schema generated with other settings.
    ///
    /// # Errors
    ///
    /// As [`Params::from_schemars`].
    pub fn from_schemars_schema(schema: &schemars::Schema) -> Result<Params, Error> {
        // Compiled as a value schema first (its drop is depth-safe): the parameter map
        // compiles to the same schema without the root's annotations.
        let schema = Schema(crate::dsl::Spec::new(convert(schema.as_value(), true)?));
        schema.compile()?;
        let mut closed = false;
        let mut properties = Value::Object(Map::new());
        if let Value::Object(mut root) = schema.into_json() {
            closed = root.get("additionalProperties") == Some(&Value::Bool(false));
            if let Some(found) = root.remove("properties") {
                properties = found;
            }
            tools_json::drop_deep(Value::Object(root));
        }
        let params = Params::from_json(properties);
        Ok(if closed { params.closed() } else { params })
    }
}

/// Converts a schemars document into an author spec; `params` asks for an object root.
fn convert(root: &Value, params: bool) -> Result<Value, Error> {
    Converter::new(root, params)
        .run()
        .map_err(|violations| Error::UnsupportedSchema { violations })
}

// ----- paths, contexts and violations -----

/// One step of a path in the schemars document.
#[derive(Clone, Copy)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// Where an inlined node came from: the chain of `$ref` targets being expanded above it
/// (for cycles) and the copy that made it (for the size limit).
#[derive(Clone, Copy)]
struct Ctx<'a> {
    parent: usize,
    /// The address of a `$ref` target being expanded, or 0.
    target: usize,
    /// The keyword (node path id and key) whose copy made this context, if any.
    via: Option<(usize, &'a str)>,
}

/// One keyword of a node being converted.
#[derive(Clone)]
struct Entry<'a> {
    key: &'a str,
    value: Cow<'a, Value>,
    /// The path id of the node that carries the keyword in the document.
    origin: usize,
    /// The context the keyword's subschemas are expanded in.
    ctx: usize,
    /// Moved in from a type array or from beside a `oneOf`: dropped, not reported, where
    /// it does not apply.
    soft: bool,
}

impl<'a> Entry<'a> {
    /// The value as a reference into the document (keywords holding subschemas are never
    /// rewritten, so they always are).
    fn borrowed(&self) -> Option<&'a Value> {
        match self.value {
            Cow::Borrowed(value) => Some(value),
            Cow::Owned(_) => None,
        }
    }
}

/// Why two views are merged, which decides where a conflict is reported.
#[derive(Clone, Copy)]
enum Cause<'a> {
    /// Through a `$ref` or `allOf` (node path id and key): the keyword is reported.
    Keyword(usize, &'a str),
    /// Keywords beside a `oneOf`/`anyOf` moved into a branch: the keyword beside is
    /// reported.
    Beside,
}

/// What a node becomes once its children are built.
enum Shape<'a> {
    /// Any JSON (`{"type": "json"}`), with its annotations.
    Json { notes: Vec<Entry<'a>> },
    /// A node of one type.
    Typed {
        ty: JsonType,
        notes: Vec<Entry<'a>>,
        rest: Vec<Entry<'a>>,
        /// Whether the first child is the array's `items`.
        items: bool,
        object: Option<ObjectShape<'a>>,
    },
    /// A `oneOf`; `any_of` is where the `anyOf` it replaces was, when its branches must be
    /// proved disjoint.
    OneOf {
        notes: Vec<Entry<'a>>,
        any_of: Option<(usize, &'a str)>,
    },
}

struct ObjectShape<'a> {
    open: bool,
    /// The property names, one per child, and whether each is required.
    names: Vec<(&'a str, bool)>,
}

/// A node waiting to be converted.
struct Work<'a> {
    view: Vec<Entry<'a>>,
    /// The node's path id.
    path: usize,
    /// The context of the node itself.
    ctx: usize,
    /// The parent's shape id and the slot among its children.
    parent: Option<(usize, usize)>,
}

struct Converter<'a> {
    root: &'a Value,
    params: bool,
    steps: Vec<(usize, Step<'a>)>,
    ctxs: Vec<Ctx<'a>>,
    /// Violations with the id of the node they were found at (for walk order).
    found: Vec<(usize, Violation)>,
    /// The ids of nodes that stand for a refused schema (sorted).
    poisoned: Vec<usize>,
    copied: usize,
}

/// The type bits of [`Converter::check_any_of`]: which values a node can match.
const OBJECT: u8 = 1;
const ARRAY: u8 = 2;
const STRING: u8 = 4;
const INTEGER: u8 = 8;
const FRACTION: u8 = 16;
const BOOLEAN: u8 = 32;
const NULL: u8 = 64;
const ANY: u8 = 127;

fn mask(ty: JsonType) -> u8 {
    match ty {
        JsonType::Object => OBJECT,
        JsonType::Array => ARRAY,
        JsonType::String => STRING,
        JsonType::Integer => INTEGER,
        JsonType::Number => INTEGER | FRACTION,
        JsonType::Boolean => BOOLEAN,
        JsonType::Null => NULL,
    }
}

/// Whether a JSON value has no fractional part.
fn is_integral(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// The narrowest type of a value (`integer` for integral numbers).
fn type_of(value: &Value) -> JsonType {
    match value {
        Value::Null => JsonType::Null,
        Value::Bool(_) => JsonType::Boolean,
        Value::Number(n) if is_integral(n) => JsonType::Integer,
        Value::Number(_) => JsonType::Number,
        Value::String(_) => JsonType::String,
        Value::Array(_) => JsonType::Array,
        Value::Object(_) => JsonType::Object,
    }
}

/// Whether `value` is a value of type `ty`.
fn fits(value: &Value, ty: JsonType) -> bool {
    let own = type_of(value);
    own == ty || (own == JsonType::Integer && ty == JsonType::Number)
}

/// Whether `key` constrains values of type `ty` in the author DSL: the compiler's own table
/// (`required` too, which the bridge keeps on objects).
fn applies(ty: JsonType, key: &str) -> bool {
    (ty == JsonType::Object && key == "required")
        || crate::compile::allowed_by_kind(Some(ty.as_str()), key)
}

/// Whether a schema admits every value (`true` or `{}`).
fn is_true_schema(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The types a `type` keyword names, or `None` when it is malformed.
fn type_list(value: &Value) -> Option<Vec<JsonType>> {
    let names: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut types = Vec::with_capacity(names.len());
    for name in names {
        let ty = JsonType::from_name(name.as_str()?)?;
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    if types.contains(&JsonType::Number) {
        types.retain(|t| *t != JsonType::Integer);
    }
    (!types.is_empty()).then_some(types)
}

/// The types two `type` keywords both admit (`integer` lies inside `number`).
fn intersect(a: &[JsonType], b: &[JsonType]) -> Vec<JsonType> {
    let admits = |list: &[JsonType], t: JsonType| {
        list.contains(&t) || t == JsonType::Integer && list.contains(&JsonType::Number)
    };
    let mut both = Vec::new();
    for &t in a.iter().chain(b) {
        if admits(a, t) && admits(b, t) && !both.contains(&t) {
            both.push(t);
        }
    }
    both
}

/// The `type` keyword for a list of types.
fn type_value(types: &[JsonType]) -> Value {
    match types {
        [one] => Value::String(one.as_str().into()),
        many => Value::Array(
            many.iter()
                .map(|t| Value::String(t.as_str().into()))
                .collect(),
        ),
    }
}

/// Decodes one JSON pointer token of a URI fragment (`%xx`, then `~1` and `~0`).
fn pointer_token(token: &str) -> Option<String> {
    let bytes = token.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(b);
            i += 1;
        }
    }
    let text = String::from_utf8(decoded).ok()?;
    Some(text.replace("~1", "/").replace("~0", "~"))
}

fn position(view: &[Entry<'_>], key: &str) -> Option<usize> {
    view.iter().position(|e| e.key == key)
}

fn get<'v, 'a>(view: &'v [Entry<'a>], key: &str) -> Option<&'v Entry<'a>> {
    view.iter().find(|e| e.key == key)
}

mod expand;
mod shape;
#[cfg(test)]
mod tests;
