//! Test helpers for tool authors: pin that a parameter schema and its Rust type agree.
//!
//! There is no type-level link between a [`crate::Params`] spec and the `Deserialize` type
//! of the arguments, so a typo in a field name or a missing `Option` shows only when the
//! model sends such arguments. [`check_args_type`] finds it in a unit test: it generates
//! valid sample arguments from the compiled schema (every `enum` value and `oneOf` branch,
//! with and without optional properties, with extra keys where the object is open) and
//! deserializes each into the type.
//!
//! ```
//! use serde::Deserialize;
//! use tools_schema::{ArgsSchema, Schema, params, testing::check_args_type};
//!
//! #[derive(Deserialize)]
//! struct Good { path: String, limit: Option<u32> }
//! #[derive(Deserialize)]
//! struct Bad { path: String, limit: u32 } // `limit` is optional in the schema
//!
//! let spec = params().required("path", Schema::string()).optional("limit", Schema::integer());
//! assert!(check_args_type(&ArgsSchema::<Good>::new(&spec).unwrap()).is_ok());
//! let mismatch = check_args_type(&ArgsSchema::<Bad>::new(&spec).unwrap()).unwrap_err();
//! assert!(mismatch.message.contains("limit"));
//! ```
//!
//! The samples respect the bound keywords and probe their edges: numbers at `minimum`,
//! `maximum` and just inside the exclusive bounds (as multiples of `multipleOf`), strings
//! of exactly `minLength` and `maxLength` characters, arrays of `minItems` and `maxItems`
//! items (pairwise distinct under `uniqueItems`), objects within `minProperties` and
//! `maxProperties`. So a Rust type narrower than its schema (a `u8` under `maximum: 300`)
//! is caught. `format` is an annotation and is not probed.
//!
//! A `pattern` cannot be sampled in general: a string with a `pattern` takes its values
//! from the node's `examples` (its string items), else its `default`; without either the
//! sampler cannot make one, so an optional property is left out and a sample that needs
//! the value (a required property, a non-empty array) is skipped. A schema whose every
//! sample needs such a string yields no samples, and [`check_args_type`] checks none: give
//! patterned strings an example (`#[tool(pattern = "…", example = "…")]`).

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ArgsSchema;

mod sample;

/// A sample the schema accepts but the Rust type rejects.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeMismatch {
    /// The sample arguments.
    pub sample: Value,
    /// Why the type rejected them.
    pub message: String,
}

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the schema accepts {} but the argument type rejects it: {}",
            self.sample, self.message
        )
    }
}

impl std::error::Error for TypeMismatch {}

/// Checks that every generated sample of the schema deserializes into `T`; returns how
/// many samples were checked (see the module docs for `pattern`).
///
/// # Errors
///
/// The first [`TypeMismatch`].
pub fn check_args_type<T: DeserializeOwned>(schema: &ArgsSchema<T>) -> Result<usize, TypeMismatch> {
    let samples = samples(schema.schema().as_json()).map_err(|message| TypeMismatch {
        sample: Value::Null,
        message,
    })?;
    for sample in &samples {
        let violations = schema.validate(sample);
        if !violations.is_empty() {
            return Err(TypeMismatch {
                sample: sample.clone(),
                message: format!(
                    "the sample breaks its own schema (an example that misses its `pattern`, \
                     or `oneOf` branches that overlap): {violations}"
                ),
            });
        }
        if let Err(err) = schema.parse_value(sample.clone()) {
            return Err(TypeMismatch {
                sample: sample.clone(),
                message: err.to_string(),
            });
        }
    }
    Ok(samples.len())
}

/// Valid sample values of a compiled (subset) schema, deterministic (see the module docs
/// for what they cover).
///
/// # Errors
///
/// A message when the schema is deeper than the sampler goes.
pub fn samples(schema: &Value) -> Result<Vec<Value>, String> {
    sample::samples(schema)
}
