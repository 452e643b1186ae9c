//! Typed arguments and typed, validated outputs.

use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tools_json::{CompiledSchema, JsonValue, Violations};

use crate::{Error, Params, Schema};

/// A tool's compiled parameter schema, tied to the Rust type its arguments deserialize
/// into.
///
/// [`ArgsSchema::parse`] validates first (every violation, paths like `items[3].qty`, code
/// `INVALID_ARGS`) and only then deserializes, so the model always gets the full list, a
/// present `null` is never mistaken for an absent key, and integral floats (`1.0`) reach
/// integer fields as integers.
///
/// The argument type must accept what the schema accepts: optional properties as `Option`
/// fields (or `#[serde(default)]`), and `#[serde(deny_unknown_fields)]` only with a
/// [`Params::closed`] root. A type deriving [`crate::ToolArgs`] agrees by construction; for
/// a hand-written map, [`crate::testing::check_args_type`] checks it in a test.
///
/// # Examples
///
/// ```
/// use serde::Deserialize;
/// use tools_schema::{ArgsSchema, ErrorCode, Schema, params};
/// use tools_json::JsonValue;
///
/// #[derive(Debug, Deserialize, PartialEq)]
/// struct Args {
///     path: String,
///     limit: Option<u32>,
/// }
///
/// let schema = ArgsSchema::<Args>::new(
///     &params().required("path", Schema::string()).optional("limit", Schema::integer()),
/// )?;
///
/// let args = JsonValue::parse(r#"{"path": "/tmp/a", "limit": 10.0}"#)?;
/// assert_eq!(schema.parse(&args)?, Args { path: "/tmp/a".into(), limit: Some(10) });
///
/// let err = schema.parse(&JsonValue::parse(r#"{"limit": null}"#)?).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::InvalidArgs);
/// assert_eq!(
///     err.to_string(),
///     "invalid arguments: path: required property is missing; limit: must be an integer"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ArgsSchema<T> {
    schema: CompiledSchema,
    _args: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> ArgsSchema<T> {
    /// Compiles `params` once, for the type `T`.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] for a malformed parameter map.
    pub fn new(params: &Params) -> Result<Self, Error> {
        Ok(ArgsSchema {
            schema: params.compile()?,
            _args: PhantomData,
        })
    }

    /// Validates canonical arguments and deserializes them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgs`] with every violation; [`Error::ArgsType`] when valid arguments
    /// do not fit `T` (a schema/type mismatch).
    pub fn parse(&self, args: &JsonValue) -> Result<T, Error> {
        let violations = self.schema.validate_snapshot(args, "");
        if !violations.is_empty() {
            return Err(Error::InvalidArgs { violations });
        }
        T::deserialize(args.as_value()).map_err(|e| Error::ArgsType {
            message: e.to_string(),
        })
    }

    /// Fails exactly when, and exactly as, [`ArgsSchema::parse`] fails, and keeps nothing:
    /// it validates (every violation) and deserializes, then drops the value. A validation
    /// pass is remembered by the snapshot, so a later `parse` of it does not validate again
    /// (it deserializes again).
    ///
    /// This is the check a typed tool hands its definition
    /// (`tools_registry::ToolDefinition::check_arguments`), which the layers above run
    /// before anything acts on the arguments.
    ///
    /// # Errors
    ///
    /// As [`ArgsSchema::parse`]: [`Error::InvalidArgs`] with every violation;
    /// [`Error::ArgsType`] when valid arguments do not fit `T`.
    pub fn check(&self, args: &JsonValue) -> Result<(), Error> {
        self.parse(args).map(drop)
    }

    /// Takes raw arguments across the lossless boundary, then parses them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgs`] also when the arguments are not lossless JSON (negative zero,
    /// too deep).
    pub fn parse_value(&self, args: Value) -> Result<T, Error> {
        let args =
            JsonValue::with_limits_at(args, &tools_json::Limits::default(), "").map_err(|e| {
                Error::InvalidArgs {
                    violations: e.violations().to_vec().into(),
                }
            })?;
        self.parse(&args)
    }

    /// Whether canonical arguments are valid, without deserializing them; a pass is
    /// remembered by the snapshot, so a later [`ArgsSchema::parse`] of it does not validate
    /// again.
    pub fn accepts(&self, args: &JsonValue) -> bool {
        self.schema.is_valid_snapshot(args)
    }

    /// Soft parsing, for presenters and classifiers replaying logged arguments: `None`
    /// instead of an error.
    pub fn parse_soft(&self, args: &Value) -> Option<T> {
        if !self.schema.is_valid(args) {
            return None;
        }
        let canonical = JsonValue::new(tools_json::clone_deep(args)).ok()?;
        T::deserialize(canonical.as_value()).ok()
    }

    /// Every violation of `args` (empty when valid), without deserializing.
    pub fn validate(&self, args: &Value) -> Violations {
        self.schema.validate(args, "")
    }
}

impl<T> ArgsSchema<T> {
    /// The compiled schema (its JSON is the model-facing parameter schema).
    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }
}

impl<T> Clone for ArgsSchema<T> {
    fn clone(&self) -> Self {
        ArgsSchema {
            schema: self.schema.clone(),
            _args: PhantomData,
        }
    }
}

impl<T> fmt::Debug for ArgsSchema<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgsSchema")
            .field("type", &std::any::type_name::<T>())
            .field("schema", &self.schema)
            .finish()
    }
}

/// A tool's compiled output schema, tied to the Rust type of its value.
///
/// [`OutputSchema::validate`] serializes the value, takes it across the lossless boundary
/// and validates it (root label `value`, code `INVALID_TOOL_OUTPUT`); the result,
/// [`Validated`], carries both the typed value and its canonical JSON, and is what a tool's
/// `render` and `presentation_meta` receive.
///
/// # Examples
///
/// ```
/// use serde::Serialize;
/// use tools_schema::{ErrorCode, OutputSchema, Schema};
///
/// #[derive(Serialize)]
/// struct Slice { text: String, lines: u32 }
///
/// let output = OutputSchema::<Slice>::new(
///     Schema::closed_object()
///         .required("text", Schema::string())
///         .required("lines", Schema::integer()),
/// )?;
/// let ok = output.validate(Slice { text: "a\nb".into(), lines: 2 })?;
/// assert_eq!(ok.json().to_string(), r#"{"text":"a\nb","lines":2}"#);
/// assert_eq!(ok.value().lines, 2);
///
/// let strings = OutputSchema::<f64>::new(Schema::string())?;
/// let err = strings.validate(1.5).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::InvalidToolOutput);
/// assert_eq!(err.to_string(), "invalid tool output: value: must be a string");
/// # Ok::<(), tools_schema::Error>(())
/// ```
pub struct OutputSchema<V> {
    schema: CompiledSchema,
    _value: PhantomData<fn(V)>,
}

impl<V: Serialize> OutputSchema<V> {
    /// Compiles the output spec once, for the type `V`. Any root is allowed.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`].
    pub fn new(spec: impl Into<Schema>) -> Result<Self, Error> {
        let schema = spec.into().compile()?;
        // Built now, unlike a parameter schema's: the model is rarely shown an output
        // schema, so a deferred one would keep its author spec (a map grown key by key,
        // larger than the built JSON) for the life of the tool.
        schema.json();
        Ok(OutputSchema {
            schema,
            _value: PhantomData,
        })
    }

    /// Serializes, canonicalises and validates a value the tool produced.
    ///
    /// # Errors
    ///
    /// [`Error::OutputNotSerializable`], or [`Error::InvalidOutput`] with every violation
    /// (including negative zero).
    pub fn validate(&self, value: V) -> Result<Validated<V>, Error> {
        let json = serde_json::to_value(&value).map_err(|e| Error::OutputNotSerializable {
            message: e.to_string(),
        })?;
        let json = self.validate_json(json)?;
        Ok(Validated { value, json })
    }

    /// Canonicalises and validates a JSON value (for values that arrive as JSON, e.g. a
    /// post-execute replacement).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOutput`] with every violation.
    pub fn validate_json(&self, json: Value) -> Result<JsonValue, Error> {
        let json = JsonValue::new(json).map_err(|e| Error::InvalidOutput {
            violations: e.violations().to_vec().into(),
        })?;
        let violations = self.schema.validate(&json, "value");
        if violations.is_empty() {
            Ok(json)
        } else {
            Err(Error::InvalidOutput { violations })
        }
    }
}

impl<V: Serialize + DeserializeOwned> OutputSchema<V> {
    /// Reads a JSON value back as a typed, validated value (for values that arrive as JSON,
    /// e.g. when a tool's render receives the canonical value).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOutput`] when the value breaks the schema;
    /// [`Error::OutputNotSerializable`] when it does not deserialize into `V`.
    pub fn read(&self, json: JsonValue) -> Result<Validated<V>, Error> {
        let violations = self.schema.validate(&json, "value");
        if !violations.is_empty() {
            return Err(Error::InvalidOutput { violations });
        }
        let value = V::deserialize(json.as_value()).map_err(|e| Error::OutputNotSerializable {
            message: format!("the value matches the schema but not the output type: {e}"),
        })?;
        Ok(Validated { value, json })
    }
}

impl<V> OutputSchema<V> {
    /// The compiled schema (its JSON is the model-facing output schema).
    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }
}

impl<V> Clone for OutputSchema<V> {
    fn clone(&self) -> Self {
        OutputSchema {
            schema: self.schema.clone(),
            _value: PhantomData,
        }
    }
}

impl<V> fmt::Debug for OutputSchema<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputSchema")
            .field("type", &std::any::type_name::<V>())
            .field("schema", &self.schema)
            .finish()
    }
}

/// A tool's value that passed its output schema: the typed value and its canonical JSON.
#[derive(Clone, Debug)]
pub struct Validated<V> {
    value: V,
    json: JsonValue,
}

impl<V> Validated<V> {
    /// The typed value.
    pub fn value(&self) -> &V {
        &self.value
    }

    /// The canonical JSON of the value.
    pub fn json(&self) -> &JsonValue {
        &self.json
    }

    /// Both parts.
    pub fn into_parts(self) -> (V, JsonValue) {
        (self.value, self.json)
    }
}
