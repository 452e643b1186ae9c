//! Strict tool schemas: the form a provider's constrained decoding accepts (every object
//! closed, every property required, an optional property as `anyOf [T, null]`, `oneOf` as
//! `anyOf`), or the typed reason a schema has none. Arguments decoded under a strict schema
//! are mapped back (`null` for an optional property the original does not let be `null`
//! becomes absent) before the tool's own validator sees them, which stays exact. An
//! optional property that accepts `null` itself cannot tell "absent" from `null` under
//! strict decoding: it arrives as `null` (valid for the tool either way).

use std::fmt;

use serde_json::{Map, Value, json};

/// Whose strict mode a schema is made for: each refuses some keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAI structured outputs (Responses and Chat Completions).
    OpenAi,
    /// Anthropic strict tool use.
    Anthropic,
}

impl Dialect {
    /// The keywords its strict mode refuses (the subset's others are kept).
    fn refuses(self) -> &'static [&'static str] {
        match self {
            Dialect::OpenAi => &[
                "minLength",
                "maxLength",
                "uniqueItems",
                "minProperties",
                "maxProperties",
            ],
            Dialect::Anthropic => &[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "uniqueItems",
                "minProperties",
                "maxProperties",
            ],
        }
    }
}

/// Why a tool's schema has no strict form. The tool is then declared without `strict`.
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
    /// strict decoding cannot produce.
    FreeFormObject {
        /// Where.
        path: String,
    },
    /// A value of any type (`{}`, or an array with no `items`): strict decoding needs a type.
    Untyped {
        /// Where.
        path: String,
    },
    /// A keyword the provider's strict mode refuses (dropping it would hide the limit from
    /// the model).
    Unsupported {
        /// Where.
        path: String,
        /// The keyword.
        keyword: &'static str,
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
            NotStrict::Unsupported { path, keyword } => {
                write!(
                    f,
                    "{} uses `{keyword}`, which strict mode does not support",
                    at(path)
                )
            }
        }
    }
}

/// A strict schema and what it takes to map its arguments back.
#[derive(Clone, Debug)]
pub(crate) struct Strict {
    /// The strict form, for the provider.
    pub(crate) schema: Value,
    /// The original schema, to map arguments back.
    original: Value,
}

impl Strict {
    /// Makes `schema` strict for `dialect`.
    pub(crate) fn new(schema: &Value, dialect: Dialect) -> Result<Strict, NotStrict> {
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
        if !is_object {
            return Err(NotStrict::RootNotObject);
        }
        let mut path = String::new();
        let strict = node(schema, &mut path, dialect)?;
        Ok(Strict {
            schema: strict,
            original: schema.clone(),
        })
    }

    /// Maps arguments decoded under the strict schema back to the original's shape: an
    /// optional property sent as `null` is removed unless the original accepts `null`.
    pub(crate) fn restore(&self, args: &mut Value) {
        restore(&self.original, args);
    }
}

/// The annotations a strict schema keeps (the others constrain nothing and some providers
/// refuse them).
const KEPT_ANNOTATIONS: [&str; 2] = ["description", "title"];

fn node(schema: &Value, path: &mut String, dialect: Dialect) -> Result<Value, NotStrict> {
    let Some(map) = schema.as_object() else {
        return Err(NotStrict::Untyped { path: path.clone() });
    };
    for keyword in dialect.refuses() {
        if map.contains_key(*keyword) {
            return Err(NotStrict::Unsupported {
                path: path.clone(),
                keyword,
            });
        }
    }
    let mut out = Map::new();
    for key in KEPT_ANNOTATIONS {
        if let Some(v) = map.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        // Strict decoders take `anyOf`; the tool's own validator still enforces "exactly one".
        let mut any = Vec::with_capacity(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            any.push(within(path, &format!("oneOf[{i}]"), |p| {
                node(branch, p, dialect)
            })?);
        }
        out.insert("anyOf".into(), Value::Array(any));
        return Ok(Value::Object(out));
    }
    for key in [
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
    ] {
        if let Some(v) = map.get(key) {
            out.insert(key.into(), v.clone());
        }
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
                None => return Err(NotStrict::FreeFormObject { path: path.clone() }),
                Some(_) => return Err(NotStrict::OpenObject { path: path.clone() }),
            }
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut props = Map::new();
            for (name, prop) in properties {
                let strict = within(path, &format!("properties.{name}"), |p| {
                    node(prop, p, dialect)
                })?;
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
                return Err(NotStrict::Untyped { path: path.clone() });
            };
            out.insert("type".into(), json!("array"));
            out.insert(
                "items".into(),
                within(path, "items", |p| node(items, p, dialect))?,
            );
        }
        Some(scalar) => {
            out.insert("type".into(), json!(scalar));
        }
        None if map.contains_key("enum") || map.contains_key("const") => {}
        None => return Err(NotStrict::Untyped { path: path.clone() }),
    }
    Ok(Value::Object(out))
}

/// Runs `f` with `segment` appended to `path`, then restores it.
fn within<T>(path: &mut String, segment: &str, f: impl FnOnce(&mut String) -> T) -> T {
    let len = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(segment);
    let out = f(path);
    path.truncate(len);
    out
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
