//! Schemas from Rust types: a tool written once.
//!
//! [`ToolSchema`] is the author value schema of a Rust type and [`ToolArgs`] the parameter
//! map of an argument struct. `#[derive(ToolSchema)]` and `#[derive(ToolArgs)]` (from
//! `tools-macros`, re-exported here) read the type and its `serde` attributes, so the
//! schema the model sees and the type the body receives cannot disagree; this module holds
//! the traits, their implementations for the standard types (`impls`), and the runtime
//! half of the generated code (`support`, public only as `__private`).
//!
//! What a derived schema means, in one place (the crate README has the examples):
//!
//! - The schema follows **deserialization**, conservatively: it never accepts what `serde`
//!   would refuse, and refuses a few things `serde` accepts (aliases, `null` for an
//!   absent parameter, `{"Unit": null}` for a unit variant, overlapping untagged variants).
//! - At the **parameter root** an `Option<T>` field is an optional key whose value must be
//!   a `T`: `null` is not "absent" (the project rule). Everywhere else (nested objects,
//!   outputs) it is an optional key that also admits `null`, because `serde` serializes
//!   `None` as `null` and reads `null` back as `None`.
//! - An output type must round-trip: what its `Serialize` writes must be what its
//!   `Deserialize` reads (a field that is skipped when serializing but required when
//!   deserializing breaks its own output schema).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{ObjectSchema, Params, Schema};

mod impls;
pub(crate) mod support;

/// The author value schema of a Rust type: what a value of the type serializes to and
/// deserializes from, in the enforced subset.
///
/// Implemented for the standard types (strings, `bool`, every integer type with its exact
/// range, floats, `char`, sequences and sets, `Option`, smart pointers, `serde_json::Value`
/// and `serde_json::Map`, `()`) and derived with `#[derive(ToolSchema)]` for structs and
/// enums. Maps with typed values (`HashMap<String, T>`) have no implementation: the subset
/// cannot say what the values of undeclared keys are.
///
/// # Examples
///
/// ```
/// use tools_schema::ToolSchema;
///
/// assert_eq!(
///     u8::tool_schema().compile()?.as_json().to_string(),
///     r#"{"type":"integer","minimum":0,"maximum":255}"#
/// );
/// assert_eq!(
///     <Option<Vec<bool>>>::tool_schema().compile()?.as_json().to_string(),
///     r#"{"oneOf":[{"type":"array","items":{"type":"boolean"}},{"type":"null"}]}"#
/// );
/// # Ok::<(), tools_schema::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema: it does not implement `ToolSchema`",
    label = "no tool schema for this type",
    note = "derive it on your own types (`#[derive(ToolSchema)]`), implement `ToolSchema` by hand, or give the field `#[tool(schema = path::to_fn)]`",
    note = "maps (`HashMap`, `BTreeMap`) have no tool schema: the enforced JSON Schema subset cannot describe the values of undeclared keys (no schema-valued `additionalProperties`); use a `Vec` of key/value structs or `serde_json::Map<String, serde_json::Value>`"
)]
pub trait ToolSchema {
    /// The author value schema (compile it with [`Schema::compile`]).
    fn tool_schema() -> Schema;
}

/// The parameter map of a tool's argument type: what `define_tool` shows the model and
/// validates every call against before the arguments are deserialized into `Self`.
///
/// Derive it (`#[derive(Deserialize, ToolArgs)]`) on a struct with named fields; the
/// derive also implements [`ToolSchema`] and [`ToolObject`]. A hand-written
/// implementation is the escape hatch for a parameter map the derive cannot produce:
/// it must then agree with `Deserialize`, which [`crate::testing::check_args_type`] checks
/// in a test.
///
/// # Examples
///
/// A hand-written implementation:
///
/// ```
/// use serde::Deserialize;
/// use tools_schema::{Params, Schema, ToolArgs, params};
///
/// #[derive(Deserialize)]
/// struct Lookup { id: String }
///
/// impl ToolArgs for Lookup {
///     fn tool_params() -> Params {
///         params().required("id", Schema::string().pattern("^[a-z]+-[0-9]+$"))
///     }
/// }
/// assert!(Lookup::tool_params().as_json()["id"].is_object());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool argument type: it does not implement `ToolArgs`",
    label = "not a tool argument type",
    note = "derive it (`#[derive(Deserialize, ToolArgs)]` on a struct with named fields) or implement `ToolArgs` by hand; a tool without parameters takes `NoArgs`"
)]
pub trait ToolArgs: DeserializeOwned {
    /// The parameter map.
    fn tool_params() -> Params;
}

/// A type whose schema is an object with declared properties: what `#[serde(flatten)]`
/// merges and an internally tagged newtype variant wraps. Derived for structs with named
/// fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be merged into an object: it does not implement `ToolObject`",
    label = "not a struct with named fields that derives `ToolSchema` or `ToolArgs`",
    note = "`#[serde(flatten)]` fields and the newtype variants of an internally tagged enum must be structs with named fields that derive `ToolSchema` or `ToolArgs`"
)]
pub trait ToolObject: ToolSchema {
    /// The properties, in declaration order, as seen from `position`.
    fn tool_fields(position: FieldPosition) -> ObjectFields;
}

/// Where an object's properties are: it decides what an `Option` field admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldPosition {
    /// The parameter root of a tool: an `Option<T>` field's value must be a `T` (`null` is
    /// not "absent").
    Params,
    /// Any other object (nested values, outputs): an `Option<T>` field also admits `null`.
    Value,
}

/// The properties of an object schema under construction, in declaration order, and its
/// openness: what derived [`ToolObject`] implementations return.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectFields {
    position: FieldPosition,
    closed: bool,
    /// Property specs in their JSON form (`"required": true` on required ones).
    properties: Map<String, Value>,
}

impl ObjectFields {
    /// No properties yet; `closed` rejects undeclared keys.
    pub fn new(position: FieldPosition, closed: bool) -> ObjectFields {
        ObjectFields {
            position,
            closed,
            properties: Map::new(),
        }
    }

    /// Where the object is.
    pub fn position(&self) -> FieldPosition {
        self.position
    }

    /// Whether undeclared keys are rejected.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The declared property names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.properties.keys().map(String::as_str)
    }

    /// Adds a property; a later property of the same name replaces an earlier one in place
    /// (as the last of two `serde` fields of one name wins).
    pub fn field(&mut self, name: impl Into<String>, schema: impl Into<Schema>, required: bool) {
        let mut spec = schema.into().into_json();
        if required && let Value::Object(map) = &mut spec {
            map.insert("required".into(), Value::Bool(true));
        }
        self.properties.insert(name.into(), spec);
    }

    /// The schema of an `Option<T>` field from the schema of `T`: `T` itself at the
    /// parameter root, `T` or `null` elsewhere (see [`FieldPosition`]).
    pub fn option(&self, inner: Schema) -> Schema {
        match self.position {
            FieldPosition::Params => inner,
            FieldPosition::Value => support::nullable(inner),
        }
    }

    /// Merges the properties of a flattened struct (its own openness does not matter:
    /// the outer object's does, as in `serde`).
    pub fn flatten(&mut self, other: ObjectFields) {
        self.properties.extend(other.properties);
    }

    /// The parameter map (closed when the object is).
    pub fn into_params(self) -> Params {
        let params = Params::from_json(Value::Object(self.properties));
        if self.closed { params.closed() } else { params }
    }

    /// The object value schema.
    pub fn into_object(self) -> ObjectSchema {
        let mut object = if self.closed {
            Schema::closed_object()
        } else {
            Schema::open_object()
        };
        if !self.properties.is_empty() {
            object.set("properties", Value::Object(self.properties));
        }
        object
    }
}

/// The argument type of a tool without parameters: any object (extra keys are ignored).
/// Not `()`: `serde` reads `()` only from `null`, and arguments are an object.
///
/// ```
/// use tools_schema::{NoArgs, ToolArgs};
///
/// let compiled = NoArgs::tool_params().compile()?;
/// assert_eq!(compiled.as_json().to_string(), r#"{"type":"object","properties":{}}"#);
/// # Ok::<(), tools_schema::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct NoArgs {}

impl ToolArgs for NoArgs {
    fn tool_params() -> Params {
        crate::params()
    }
}

impl ToolSchema for NoArgs {
    fn tool_schema() -> Schema {
        Schema::open_object().into()
    }
}

impl ToolObject for NoArgs {
    fn tool_fields(position: FieldPosition) -> ObjectFields {
        ObjectFields::new(position, false)
    }
}

impl ObjectBounds for NoArgs {}

/// Types whose schema takes the numeric bounds (`minimum`, `maximum`, their exclusive
/// forms, `multiple_of`, `range`).
#[diagnostic::on_unimplemented(
    message = "numeric bounds (`range`, `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`, `multiple_of`) apply to integers and floats, not to `{Self}`",
    label = "this bound does not apply to the field's type"
)]
pub trait NumericBounds: ToolSchema {}

/// Types whose schema takes the string bounds (`min_length`, `max_length`, `pattern`).
#[diagnostic::on_unimplemented(
    message = "string bounds (`min_length`, `max_length`, `pattern`) apply to strings, not to `{Self}`",
    label = "this bound does not apply to the field's type"
)]
pub trait StringBounds: ToolSchema {}

/// Types whose schema takes the `format` annotation (strings and numbers).
#[diagnostic::on_unimplemented(
    message = "`format` applies to strings and numbers, not to `{Self}`",
    label = "this annotation does not apply to the field's type"
)]
pub trait Formatted: ToolSchema {}

/// Types whose schema takes the array bounds (`min_items`, `max_items`, `unique_items`).
#[diagnostic::on_unimplemented(
    message = "array bounds (`min_items`, `max_items`, `unique_items`) apply to sequences and sets, not to `{Self}`",
    label = "this bound does not apply to the field's type"
)]
pub trait ArrayBounds: ToolSchema {}

/// Types whose schema takes the object bounds (`min_properties`, `max_properties`).
#[diagnostic::on_unimplemented(
    message = "object bounds (`min_properties`, `max_properties`) apply to structs and JSON objects, not to `{Self}`",
    label = "this bound does not apply to the field's type"
)]
pub trait ObjectBounds: ToolSchema {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_fields_reject_null_only_at_the_parameter_root() {
        let root = ObjectFields::new(FieldPosition::Params, false);
        assert_eq!(
            root.option(Schema::string().into()),
            Schema::string().into()
        );
        let nested = ObjectFields::new(FieldPosition::Value, false);
        assert_eq!(
            nested.option(Schema::string().into()),
            Schema::one_of([Schema::from(Schema::string()), Schema::null().into()]).into()
        );
    }

    #[test]
    fn fields_become_closed_params_or_objects() {
        let mut fields = ObjectFields::new(FieldPosition::Params, true);
        fields.field("a", Schema::string(), true);
        fields.field("b", Schema::integer(), false);
        let mut flat = ObjectFields::new(FieldPosition::Params, false);
        flat.field("c", Schema::boolean(), true);
        fields.flatten(flat);
        assert_eq!(fields.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        let params = fields.clone().into_params();
        assert!(params.is_closed());
        assert_eq!(
            params.compile().map(|c| c.as_json().to_string()),
            Ok(concat!(
                r#"{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"#,
                r#""b":{"type":"integer"},"c":{"type":"boolean"}},"required":["a","c"]}"#
            )
            .to_owned())
        );
        let object = Schema::from(fields.into_object()).compile();
        assert_eq!(
            object.map(|c| c.as_json()["additionalProperties"].clone()),
            Ok(Value::Bool(false))
        );
        let empty = Schema::from(ObjectFields::new(FieldPosition::Value, false).into_object());
        assert_eq!(
            empty.compile().map(|c| c.as_json().to_string()),
            Ok(r#"{"type":"object","additionalProperties":true}"#.to_owned())
        );
    }

    #[test]
    fn no_args_accepts_any_object() {
        let args: Result<NoArgs, _> = serde_json::from_value(serde_json::json!({"x": 1}));
        assert_eq!(args.ok(), Some(NoArgs {}));
        assert_eq!(
            NoArgs::tool_params()
                .compile()
                .map(|c| c.as_json().to_string()),
            Ok(r#"{"type":"object","properties":{}}"#.to_owned())
        );
    }
}
