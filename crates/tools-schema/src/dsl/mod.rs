//! The author DSL: typed builders for value schemas and parameter maps.
//!
//! Every builder holds the author spec in its JSON form (the same shape that
//! [`Schema::from_json`] and [`Params::from_json`] accept), so there is one compiler for
//! specs written in Rust and specs loaded from files. Builders are typed per node kind:
//! `enum` and `const` take values of the node's own type, and an object cannot be made
//! without saying whether it is open or closed.

use std::fmt;

mod bounds;

pub(crate) use crate::spec::Spec;

use serde_json::{Map, Number, Value};

/// Adds the annotation methods to a builder type that has a `set(&mut self, key, value)`.
macro_rules! annotations {
    ($ty:ident) => {
        impl $ty {
            /// Sets the `description` annotation (shown to the model).
            #[must_use]
            pub fn describe(mut self, text: impl Into<String>) -> Self {
                self.set("description", serde_json::Value::String(text.into()));
                self
            }

            /// Sets the `title` annotation.
            #[must_use]
            pub fn title(mut self, text: impl Into<String>) -> Self {
                self.set("title", serde_json::Value::String(text.into()));
                self
            }

            /// Sets the `default` annotation. It documents the value used when the key is
            /// absent; it is never applied to arguments.
            #[must_use]
            pub fn default_value(mut self, value: impl Into<serde_json::Value>) -> Self {
                self.set("default", value.into());
                self
            }

            /// Sets the `examples` annotation (any lossless JSON, usually an array).
            #[must_use]
            pub fn examples(mut self, value: impl Into<serde_json::Value>) -> Self {
                self.set("examples", value.into());
                self
            }

            /// Sets the `deprecated` annotation (shown to the model, never enforced).
            #[must_use]
            pub fn deprecated(mut self, deprecated: bool) -> Self {
                self.set("deprecated", serde_json::Value::Bool(deprecated));
                self
            }
        }
    };
}

/// An author value schema of any kind: what [`Schema::compile`] turns into raw JSON Schema,
/// and what every builder converts into.
///
/// # Examples
///
/// ```
/// use tools_schema::Schema;
///
/// let mode = Schema::string().enum_values(["fast", "slow"]).describe("How hard to try.");
/// let compiled = Schema::from(mode).compile().unwrap();
/// assert_eq!(
///     compiled.as_json().to_string(),
///     r#"{"type":"string","description":"How hard to try.","enum":["fast","slow"]}"#
/// );
/// ```
pub struct Schema(pub(crate) Spec);

impl Schema {
    /// A string node.
    pub fn string() -> StringSchema {
        StringSchema(typed("string"))
    }

    /// A number node: any finite JSON number other than negative zero.
    pub fn number() -> NumberSchema {
        NumberSchema(typed("number"))
    }

    /// An integer node (`1.0` counts as an integer).
    pub fn integer() -> IntegerSchema {
        IntegerSchema(typed("integer"))
    }

    /// A boolean node.
    pub fn boolean() -> BooleanSchema {
        BooleanSchema(typed("boolean"))
    }

    /// A node that only admits `null`.
    pub fn null() -> NullSchema {
        NullSchema(typed("null"))
    }

    /// An array whose elements match `items`.
    pub fn array(items: impl Into<Schema>) -> ArraySchema {
        let mut map = typed("array");
        map.insert("items".into(), items.into().into_json());
        ArraySchema(map)
    }

    /// An array of any lossless JSON elements (no `items`).
    pub fn array_of_any() -> ArraySchema {
        ArraySchema(typed("array"))
    }

    /// A closed object: keys other than the declared properties are rejected.
    pub fn closed_object() -> ObjectSchema {
        object(false)
    }

    /// An open object: undeclared keys are allowed (and only checked to be lossless).
    pub fn open_object() -> ObjectSchema {
        object(true)
    }

    /// Any lossless JSON value (the author-only `json` node, compiled to an annotation-only
    /// schema).
    pub fn json() -> AnySchema {
        AnySchema(typed("json"))
    }

    /// Exactly one of `branches` must match (at least two are needed).
    pub fn one_of<I, S>(branches: I) -> OneOfSchema
    where
        I: IntoIterator<Item = S>,
        S: Into<Schema>,
    {
        let branches: Vec<Value> = branches.into_iter().map(|b| b.into().into_json()).collect();
        let mut map = Map::new();
        map.insert("oneOf".into(), Value::Array(branches));
        OneOfSchema(map)
    }

    /// An author spec in its JSON form, e.g. `{"type": "object", "additionalProperties":
    /// false, "properties": {"id": {"type": "integer", "required": true}}}`. Nothing is
    /// checked until [`Schema::compile`].
    pub fn from_json(spec: Value) -> Schema {
        Schema(Spec::new(spec))
    }

    /// The author spec in its JSON form.
    pub fn as_json(&self) -> &Value {
        self.0.get()
    }

    /// The author spec in its JSON form, by value.
    pub fn into_json(mut self) -> Value {
        self.0.take()
    }

    /// Compiles the spec to raw JSON Schema (root label `schema` in violations).
    ///
    /// # Errors
    ///
    /// [`crate::Error::UnsupportedSchema`]: the first author error (the author walk stops
    /// there), or every violation of the subset's check on the compiled output.
    pub fn compile(&self) -> Result<tools_json::CompiledSchema, crate::Error> {
        crate::compile::compile_value(&self.0)
    }
}

annotations!(Schema);

/// Cloning shares the spec; a change to either copy then copies it (see the module
/// `spec`).
impl Clone for Schema {
    fn clone(&self) -> Self {
        Schema(self.0.share())
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_json(f, "Schema", self.0.get())
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// A tool's parameter map: the implicit object root of its arguments, open unless
/// [`Params::closed`].
///
/// # Examples
///
/// ```
/// use tools_schema::{Schema, params};
///
/// let read_file = params()
///     .required("path", Schema::string().describe("Absolute file path."))
///     .optional("limit", Schema::integer());
/// let compiled = read_file.compile().unwrap();
/// assert_eq!(
///     compiled.as_json().to_string(),
///     r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute file path."},"limit":{"type":"integer"}},"required":["path"]}"#
/// );
/// ```
#[derive(Clone, PartialEq)]
pub struct Params {
    /// The property map in its JSON form.
    spec: Spec,
    /// Whether keys other than the declared properties are rejected.
    closed: bool,
}

/// An empty parameter map; add properties with [`Params::required`] and [`Params::optional`].
pub fn params() -> Params {
    Params {
        spec: Spec::new(Value::Object(Map::new())),
        closed: false,
    }
}

impl Params {
    /// Adds a property the arguments must carry. A later property of the same name replaces
    /// an earlier one in place.
    #[must_use]
    pub fn required(self, name: impl Into<String>, schema: impl Into<Schema>) -> Params {
        self.property(name, schema, true)
    }

    /// Adds a property the arguments may omit (a present `null` is still a value and must
    /// match the schema).
    #[must_use]
    pub fn optional(self, name: impl Into<String>, schema: impl Into<Schema>) -> Params {
        self.property(name, schema, false)
    }

    /// Closes the root: arguments carrying a key that is not a declared property are
    /// rejected (`"additionalProperties": false`), as `#[serde(deny_unknown_fields)]` does.
    ///
    /// ```
    /// use tools_schema::{Schema, params};
    ///
    /// let compiled = params().required("id", Schema::string()).closed().compile().unwrap();
    /// assert_eq!(
    ///     compiled.as_json().to_string(),
    ///     r#"{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"]}"#
    /// );
    /// ```
    #[must_use]
    pub fn closed(mut self) -> Params {
        self.closed = true;
        self
    }

    /// Whether the root is closed ([`Params::closed`]).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<Schema>,
        required: bool,
    ) -> Params {
        let mut spec = schema.into().into_json();
        if required && let Value::Object(map) = &mut spec {
            map.insert("required".into(), Value::Bool(true));
        }
        if let Value::Object(map) = self.spec.get_mut() {
            map.insert(name.into(), spec);
        }
        self
    }

    /// A parameter map in its JSON form: `{"name": {…value spec…, "required": true}, …}`.
    /// The root is open (see [`Params::closed`]). Nothing is checked until
    /// [`Params::compile`].
    pub fn from_json(spec: Value) -> Params {
        Params {
            spec: Spec::new(spec),
            closed: false,
        }
    }

    /// The parameter map in its JSON form (the property map; openness is
    /// [`Params::is_closed`]).
    pub fn as_json(&self) -> &Value {
        self.spec.get()
    }

    /// Compiles the map to the raw JSON Schema of the arguments: `{"type": "object",
    /// "properties": {…}, "required": […]}`, with `"additionalProperties": false` after
    /// `type` only when [`Params::closed`] (an open root has no such key) and `required`
    /// only when something is required.
    ///
    /// # Errors
    ///
    /// [`crate::Error::UnsupportedSchema`]: the first author error (paths rooted at
    /// `parameters`), or every violation of the subset's check on the compiled output (paths
    /// rooted at `schema`).
    pub fn compile(&self) -> Result<tools_json::CompiledSchema, crate::Error> {
        crate::compile::compile_params(&self.spec, self.closed)
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.closed {
            "ClosedParams"
        } else {
            "Params"
        };
        debug_json(f, name, self.spec.get())
    }
}

fn debug_json(f: &mut fmt::Formatter<'_>, name: &str, value: &Value) -> fmt::Result {
    // serde_json's printer recurses: print shallow specs only.
    if depth_at_most(value, 64) {
        write!(f, "{name}({value})")
    } else {
        write!(f, "{name}(<deep spec>)")
    }
}

fn depth_at_most(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(map) => map.values().collect(),
            _ => continue,
        };
        if depth >= limit {
            return false;
        }
        stack.extend(children.into_iter().map(|c| (c, depth + 1)));
    }
    true
}

fn typed(ty: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), Value::String(ty.into()));
    map
}

fn object(open: bool) -> ObjectSchema {
    let mut map = typed("object");
    map.insert("additionalProperties".into(), Value::Bool(open));
    ObjectSchema(map)
}

/// A number as JSON; NaN and infinities become `null`, which compilation then reports as
/// a value of the wrong type (never silently accepted).
fn number_value(n: f64) -> Value {
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

impl Schema {
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        if let Value::Object(map) = self.0.get_mut() {
            map.insert(key.into(), value);
        }
    }

    pub(crate) fn remove(&mut self, key: &str) {
        if let Value::Object(map) = self.0.get_mut() {
            map.remove(key);
        }
    }
}

/// Declares a typed builder that wraps an author map and converts into [`Schema`].
macro_rules! builder {
    ($(#[$doc:meta])* $ty:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq)]
        pub struct $ty(Map<String, Value>);

        impl $ty {
            pub(crate) fn set(&mut self, key: &str, value: Value) {
                self.0.insert(key.into(), value);
            }
        }

        annotations!($ty);

        impl From<$ty> for Schema {
            fn from(builder: $ty) -> Schema {
                Schema(Spec::new(Value::Object(builder.0)))
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                debug_json(f, stringify!($ty), &Value::Object(self.0.clone()))
            }
        }
    };
}

builder!(
    /// A string node; see [`Schema::string`].
    StringSchema
);
builder!(
    /// A number node; see [`Schema::number`].
    NumberSchema
);
builder!(
    /// An integer node; see [`Schema::integer`].
    IntegerSchema
);
builder!(
    /// A boolean node; see [`Schema::boolean`].
    BooleanSchema
);
builder!(
    /// A null node; see [`Schema::null`].
    NullSchema
);
builder!(
    /// An array node; see [`Schema::array`].
    ArraySchema
);
builder!(
    /// An object node with explicit openness; see [`Schema::closed_object`].
    ObjectSchema
);
builder!(
    /// Any lossless JSON; see [`Schema::json`].
    AnySchema
);
builder!(
    /// Exactly one of several branches; see [`Schema::one_of`].
    OneOfSchema
);

impl StringSchema {
    /// The allowed values (`enum`).
    #[must_use]
    pub fn enum_values<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values = values
            .into_iter()
            .map(|v| Value::String(v.into()))
            .collect();
        self.set("enum", Value::Array(values));
        self
    }

    /// The one allowed value (`const`).
    #[must_use]
    pub fn constant(mut self, value: impl Into<String>) -> Self {
        self.set("const", Value::String(value.into()));
        self
    }
}

impl NumberSchema {
    /// The allowed values (`enum`). NaN, infinities and negative zero are reported when the
    /// schema is compiled.
    #[must_use]
    pub fn enum_values(mut self, values: impl IntoIterator<Item = f64>) -> Self {
        let values = values.into_iter().map(number_value).collect();
        self.set("enum", Value::Array(values));
        self
    }

    /// The one allowed value (`const`).
    #[must_use]
    pub fn constant(mut self, value: f64) -> Self {
        self.set("const", number_value(value));
        self
    }
}

impl IntegerSchema {
    /// The allowed values (`enum`).
    #[must_use]
    pub fn enum_values(mut self, values: impl IntoIterator<Item = i64>) -> Self {
        let values = values.into_iter().map(Value::from).collect();
        self.set("enum", Value::Array(values));
        self
    }

    /// The one allowed value (`const`).
    #[must_use]
    pub fn constant(mut self, value: i64) -> Self {
        self.set("const", Value::from(value));
        self
    }
}

impl BooleanSchema {
    /// The allowed values (`enum`).
    #[must_use]
    pub fn enum_values(mut self, values: impl IntoIterator<Item = bool>) -> Self {
        let values = values.into_iter().map(Value::Bool).collect();
        self.set("enum", Value::Array(values));
        self
    }

    /// The one allowed value (`const`).
    #[must_use]
    pub fn constant(mut self, value: bool) -> Self {
        self.set("const", Value::Bool(value));
        self
    }
}

impl NullSchema {
    /// Declares `const: null` (redundant with the type, kept for parity with JSON specs).
    #[must_use]
    pub fn constant(mut self) -> Self {
        self.set("const", Value::Null);
        self
    }
}

impl ObjectSchema {
    /// Adds a property the object must carry.
    #[must_use]
    pub fn required(self, name: impl Into<String>, schema: impl Into<Schema>) -> Self {
        self.property(name, schema, true)
    }

    /// Adds a property the object may omit.
    #[must_use]
    pub fn optional(self, name: impl Into<String>, schema: impl Into<Schema>) -> Self {
        self.property(name, schema, false)
    }

    fn property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<Schema>,
        required: bool,
    ) -> Self {
        let mut spec = schema.into().into_json();
        if required && let Value::Object(map) = &mut spec {
            map.insert("required".into(), Value::Bool(true));
        }
        let properties = self
            .0
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(name.into(), spec);
        }
        self
    }
}
