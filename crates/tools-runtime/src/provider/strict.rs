//! Strict tool schemas: the form a provider's constrained decoding accepts (every object
//! closed, every property required, an optional property as `anyOf [T, null]`, `oneOf` as
//! `anyOf`), or the typed reason a schema has none. Arguments decoded under a strict schema
//! are mapped back (`null` for an optional property the original does not let be `null`
//! becomes absent) before the tool's own validator sees them, which stays exact. An
//! optional property that accepts `null` itself cannot tell "absent" from `null` under
//! strict decoding: it arrives as `null` (valid for the tool either way).
//!
//! A strict schema is derived from the schema the runtime *enforces* (the parameter schema
//! lowered to the enforced subset, as `tools_json::CompiledSchema::compile_foreign` lowers
//! it), never from keywords nobody checks: a tool whose schema has a part the runtime does
//! not enforce (`anyOf`, `$ref`, an `enum` on an array, …) is declared as given, without
//! `strict` ([`NotStrict::Unenforced`]), since a strict declaration would hide that part
//! from the model and nothing would refuse a call that breaks it.
//!
//! Strict declarations are *lowered*, not abandoned: a keyword of the enforced schema that
//! the provider's strict mode refuses (Anthropic: the numeric bounds) is left out of the
//! declaration, listed ([`Strict::left_out`]) and written into the node's `description`
//! (`{minimum: 0}`, as the providers' own SDKs do), and the runtime still enforces it when
//! the call arrives: a call that breaks it is refused with `INVALID_ARGS`, never run as
//! another call.

use std::fmt;

use serde_json::{Map, Value, json};
use tools_json::{CompiledSchema, Path};

/// Whose strict mode a schema is made for: the constraint keywords of the subset
/// ([`CONSTRAINTS`]) it accepts. Each wire names its own (`Wire::STRICT`); what a dialect
/// does not accept is left out of the declaration, and the runtime still enforces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// The keywords of [`CONSTRAINTS`] it accepts.
    accepts: &'static [&'static str],
}
/// The constraint keywords of the enforced subset a strict node may carry beside its
/// structure (`type`, `properties`, `required`, `additionalProperties`, `items`, `oneOf`),
/// in the order they are written: `enum`, `const`, the `format` annotation, and the bound
/// keywords (`tools_json::BOUND_KEYWORDS`, every one of them: a unit test holds this).
pub(super) const CONSTRAINTS: [&str; 16] = [
    "enum",
    "const",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

impl Dialect {
    /// OpenAI structured outputs (Responses and Chat Completions): refuses `minLength`,
    /// `maxLength`, `uniqueItems`, `minProperties` and `maxProperties`.
    pub(crate) const OPENAI: Dialect = Dialect::accepting(&[
        "enum",
        "const",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    ]);

    /// Anthropic strict tool use: refuses what OpenAI refuses, and also the numeric bounds
    /// and `minItems` / `maxItems`.
    pub(crate) const ANTHROPIC: Dialect =
        Dialect::accepting(&["enum", "const", "pattern", "format"]);

    /// The strict mode that accepts `keywords` (each one of [`CONSTRAINTS`]).
    pub(crate) const fn accepting(keywords: &'static [&'static str]) -> Dialect {
        Dialect { accepts: keywords }
    }

    /// Whether its strict mode accepts `keyword` (one of [`CONSTRAINTS`]).
    fn accepts(self, keyword: &str) -> bool {
        self.accepts.contains(&keyword)
    }
}

/// Why a tool's schema has no strict form. The tool is then declared without `strict`,
/// with its parameter schema as given.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotStrict {
    /// The parameters are not an object schema.
    RootNotObject,
    /// An object that allows undeclared properties (`additionalProperties: true`): closing
    /// it would refuse arguments the tool accepts.
    OpenObject {
        /// Where, in the parameter schema (`properties.options`).
        path: String,
    },
    /// An object with no declared properties that does not say it is closed: a map, which
    /// strict decoding cannot produce. (The root is not one: a tool without parameters is
    /// declared as the closed empty object.)
    FreeFormObject {
        /// Where.
        path: String,
    },
    /// A value of any type (`{}`, or an array with no `items`): strict decoding needs a type.
    Untyped {
        /// Where.
        path: String,
    },
    /// A part of the parameter schema the runtime does not enforce (a foreign schema's
    /// keyword outside the enforced subset: `anyOf`, `$ref`, an `enum` on an array, an
    /// `enum` of another type than its node's…). A strict declaration is built from what
    /// the runtime enforces, so it would leave that part out: strict decoding would no
    /// longer show it to the model, and nothing would refuse a call that breaks it.
    Unenforced {
        /// Where, in the parameter schema, ending in the keyword
        /// (`properties.intents.enum`).
        path: String,
        /// The support check's name for the problem (`ViolationKind::name`, e.g.
        /// `unsupported_keyword`).
        kind: &'static str,
    },
}

impl fmt::Display for NotStrict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |path: &str| {
            if path.is_empty() {
                "the root".to_owned()
            } else {
                format!("`{path}`")
            }
        };
        match self {
            NotStrict::RootNotObject => f.write_str("the parameters are not an object schema"),
            NotStrict::OpenObject { path } => {
                write!(f, "{} allows undeclared properties", at(path))
            }
            NotStrict::FreeFormObject { path } => {
                write!(
                    f,
                    "{} is an object with no declared properties (a map)",
                    at(path)
                )
            }
            NotStrict::Untyped { path } => write!(f, "{} accepts any JSON value", at(path)),
            NotStrict::Unenforced { path, kind } => write!(
                f,
                "{} is not enforced by the runtime ({kind}): a strict declaration would hide it from the model",
                at(path)
            ),
        }
    }
}

/// A strict schema and what it takes to map its arguments back.
#[derive(Clone, Debug)]
pub(crate) struct Strict {
    /// The strict form, for the provider.
    pub(crate) schema: Value,
    /// The enforced schema it was derived from, to map arguments back.
    original: Value,
    /// The keywords of the enforced schema the strict form leaves out (the provider's
    /// strict mode refuses them), each with the path of its node; the runtime enforces them.
    left_out: Vec<(String, &'static str)>,
}

impl Strict {
    /// Makes the schema the runtime enforces for `schema` strict for `dialect`.
    pub(crate) fn new(schema: &Value, dialect: Dialect) -> Result<Strict, NotStrict> {
        let enforced = enforced(schema)?;
        let enforced = enforced.as_ref().unwrap_or(schema);
        let is_object = enforced.get("type").and_then(Value::as_str) == Some("object");
        if !is_object {
            return Err(NotStrict::RootNotObject);
        }
        let mut lowering = Lowering {
            dialect,
            path: String::new(),
            left_out: Vec::new(),
        };
        let strict = lowering.node(enforced, true)?;
        Ok(Strict {
            schema: strict,
            original: enforced.clone(),
            left_out: lowering.left_out,
        })
    }

    /// Maps arguments decoded under the strict schema back to the original's shape: an
    /// optional property sent as `null` is removed unless the original accepts `null`.
    pub(crate) fn restore(&self, args: &mut Value) {
        restore(&self.original, args);
    }

    /// The keywords left out of the strict form, each as (path of its node, keyword).
    pub(crate) fn left_out(&self) -> &[(String, &'static str)] {
        &self.left_out
    }
}

/// The schema the runtime enforces for `schema`: `None` when that is `schema` itself
/// (inside the subset), else the lowered copy, when the lowering was exact.
///
/// # Errors
///
/// [`NotStrict::Unenforced`] naming the first part the lowering could not keep.
fn enforced(schema: &Value) -> Result<Option<Value>, NotStrict> {
    if tools_json::is_schema_supported(schema) {
        return Ok(None);
    }
    let compiled = CompiledSchema::compile_foreign(schema);
    if let Some(first) = compiled.unenforced().first() {
        return Err(NotStrict::Unenforced {
            path: Path::from_parts("", first.path.segments().to_vec()).to_string(),
            kind: first.kind.name(),
        });
    }
    Ok(Some(compiled.enforced_json().clone()))
}

/// The annotations a strict schema keeps (the others constrain nothing and some providers
/// refuse them).
const KEPT_ANNOTATIONS: [&str; 2] = ["description", "title"];

/// One lowering of an enforced schema to a dialect: where it is, and what it left out.
struct Lowering {
    dialect: Dialect,
    /// The path of the node being lowered (`properties.a.items`).
    path: String,
    left_out: Vec<(String, &'static str)>,
}

impl Lowering {
    fn node(&mut self, schema: &Value, root: bool) -> Result<Value, NotStrict> {
        let path = |this: &Self| this.path.clone();
        let Some(map) = schema.as_object() else {
            return Err(NotStrict::Untyped { path: path(self) });
        };
        let mut out = Map::new();
        for key in KEPT_ANNOTATIONS {
            if let Some(v) = map.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            // Strict decoders take `anyOf`; the tool's own validator still enforces "exactly
            // one". (Inside the subset, nothing but annotations stands beside `oneOf`.)
            let mut any = Vec::with_capacity(branches.len());
            for (i, branch) in branches.iter().enumerate() {
                any.push(self.within(&format!("oneOf[{i}]"), |this| this.node(branch, false))?);
            }
            out.insert("anyOf".into(), Value::Array(any));
            return Ok(Value::Object(out));
        }
        let mut hints = Vec::new();
        for key in CONSTRAINTS {
            let Some(v) = map.get(key) else { continue };
            if self.dialect.accepts(key) {
                out.insert(key.into(), v.clone());
            } else {
                self.left_out.push((path(self), key));
                hints.push(format!("{key}: {}", tools_json::to_compact_string(v)));
            }
        }
        if !hints.is_empty() {
            // The model still reads what strict decoding cannot hold it to.
            let hint = format!("{{{}}}", hints.join(", "));
            let description = match out.get("description").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => format!("{text}\n\n{hint}"),
                _ => hint,
            };
            out.insert("description".into(), Value::String(description));
        }
        match map.get("type").and_then(Value::as_str) {
            Some("object") => {
                let empty = Map::new();
                let properties = map
                    .get("properties")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty);
                match map.get("additionalProperties") {
                    Some(Value::Bool(false)) => {}
                    None if !properties.is_empty() => {}
                    // The root without declared properties: a tool without parameters.
                    None if root => {}
                    None => return Err(NotStrict::FreeFormObject { path: path(self) }),
                    Some(_) => return Err(NotStrict::OpenObject { path: path(self) }),
                }
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut props = Map::new();
                for (name, prop) in properties {
                    let strict =
                        self.within(&format!("properties.{name}"), |this| this.node(prop, false))?;
                    let strict = if required.contains(&name.as_str()) || accepts_null(prop) {
                        strict
                    } else {
                        nullable(strict)
                    };
                    props.insert(name.clone(), strict);
                }
                out.insert("type".into(), json!("object"));
                out.insert(
                    "required".into(),
                    Value::Array(props.keys().map(|k| Value::String(k.clone())).collect()),
                );
                out.insert("properties".into(), Value::Object(props));
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Some("array") => {
                let Some(items) = map.get("items") else {
                    return Err(NotStrict::Untyped { path: path(self) });
                };
                out.insert("type".into(), json!("array"));
                let items = self.within("items", |this| this.node(items, false))?;
                out.insert("items".into(), items);
            }
            Some(scalar) => {
                out.insert("type".into(), json!(scalar));
            }
            None => return Err(NotStrict::Untyped { path: path(self) }),
        }
        Ok(Value::Object(out))
    }

    /// Runs `f` with `segment` appended to the path, then restores it.
    fn within<T>(&mut self, segment: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(segment);
        let out = f(self);
        self.path.truncate(len);
        out
    }
}

/// `anyOf [schema, null]`, with the description on the outside.
fn nullable(mut schema: Value) -> Value {
    let description = schema.as_object_mut().and_then(|m| m.remove("description"));
    let mut out = Map::new();
    if let Some(description) = description {
        out.insert("description".into(), description);
    }
    out.insert("anyOf".into(), json!([schema, {"type": "null"}]));
    Value::Object(out)
}

/// Whether a (subset) schema accepts `null`.
fn accepts_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return true;
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        return branches.iter().any(accepts_null);
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.contains(&Value::Null);
    }
    if let Some(value) = map.get("const") {
        return value.is_null();
    }
    match map.get("type").and_then(Value::as_str) {
        Some(t) => t == "null",
        None => true,
    }
}

/// Removes the `null`s strict decoding put where the original schema has an optional
/// property that does not accept `null`.
fn restore(schema: &Value, value: &mut Value) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        if let Some(branch) = branch_of(branches, value) {
            restore(branch, value);
        }
        return;
    }
    match value {
        Value::Object(object) => {
            let Some(properties) = map.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            object.retain(|name, v| {
                !(v.is_null()
                    && !required.contains(&name.as_str())
                    && properties.get(name).is_some_and(|p| !accepts_null(p)))
            });
            for (name, v) in object.iter_mut() {
                if let Some(prop) = properties.get(name) {
                    restore(prop, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = map.get("items") {
                for item in items {
                    restore(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// The `oneOf` branch a value was decoded under: the first whose `const` tags all match,
/// else the first whose required properties are all present and not `null`.
fn branch_of<'a>(branches: &'a [Value], value: &Value) -> Option<&'a Value> {
    let object = value.as_object()?;
    let tags_match = |branch: &Value| {
        let props = branch.get("properties").and_then(Value::as_object);
        let mut tagged = false;
        let all = props.is_some_and(|props| {
            props.iter().all(|(name, prop)| match prop.get("const") {
                Some(tag) => {
                    tagged = true;
                    object.get(name) == Some(tag)
                }
                None => true,
            })
        });
        all && tagged
    };
    branches.iter().find(|b| tags_match(b)).or_else(|| {
        branches.iter().find(|branch| {
            branch
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .all(|name| object.get(name).is_some_and(|v| !v.is_null()))
                })
        })
    })
}

#[cfg(test)]
#[path = "strict_tests.rs"]
mod tests;
