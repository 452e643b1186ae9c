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
//! Numeric ranges are not probed: the subset cannot state a minimum, so samples use small
//! non-negative numbers and an unsigned field passes. Arguments out of a type's range still
//! fail cleanly at run time (`INVALID_ARGS`).

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::ArgsSchema;

/// Schemas nested deeper than this are not sampled.
const MAX_SAMPLE_DEPTH: usize = 32;

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
/// many samples were checked.
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
                message: format!("internal: the sample breaks its own schema: {violations}"),
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

/// Valid sample values of a compiled (subset) schema, deterministic.
///
/// # Errors
///
/// A message when the schema is deeper than the sampler goes.
pub fn samples(schema: &Value) -> Result<Vec<Value>, String> {
    let alternatives = max_alternatives(schema);
    let count = (4 * alternatives.max(1)).min(64);
    (0..count)
        .map(|variant| sample(schema, variant, 0))
        .collect()
}

fn max_alternatives(schema: &Value) -> usize {
    let mut max = 1;
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        for key in ["enum", "oneOf"] {
            if let Some(list) = map.get(key).and_then(Value::as_array) {
                max = max.max(list.len());
            }
        }
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            stack.extend(branches);
        }
        if let Some(items) = map.get("items") {
            stack.push(items);
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            stack.extend(properties.values());
        }
    }
    max
}

fn pick(list: &[Value], variant: usize) -> Option<&Value> {
    if list.is_empty() {
        None
    } else {
        list.get(variant % list.len())
    }
}

fn sample(schema: &Value, variant: usize, depth: usize) -> Result<Value, String> {
    if depth > MAX_SAMPLE_DEPTH {
        return Err(format!(
            "the schema nests deeper than {MAX_SAMPLE_DEPTH} levels; not sampled"
        ));
    }
    let Some(map) = schema.as_object() else {
        return Ok(Value::Null);
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        return match pick(branches, variant) {
            Some(branch) => sample(branch, variant / branches.len().max(1), depth + 1),
            None => Ok(Value::Null),
        };
    }
    if let Some(constant) = map.get("const") {
        return Ok(constant.clone());
    }
    if let Some(value) = map
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| pick(e, variant))
    {
        return Ok(value.clone());
    }
    let value = match map.get("type").and_then(Value::as_str) {
        None => match variant % 3 {
            0 => Value::Null,
            1 => Value::from(1),
            _ => serde_json::json!({"key": ["value", true]}),
        },
        Some("string") => Value::String(format!("sample-{variant}")),
        Some("number") => {
            [Value::from(0.5), Value::from(1), Value::from(2.25)][variant % 3].clone()
        }
        Some("integer") => [Value::from(0), Value::from(1), Value::from(42)][variant % 3].clone(),
        Some("boolean") => Value::Bool(variant.is_multiple_of(2)),
        Some("null") => Value::Null,
        Some("array") => {
            let count = 1 + variant % 2;
            let mut items = Vec::with_capacity(count);
            match map.get("items") {
                Some(items_schema) => {
                    for i in 0..count {
                        items.push(sample(items_schema, variant + i, depth + 1)?);
                    }
                }
                None => items.extend([Value::from(1), Value::from("x")].into_iter().take(count)),
            }
            Value::Array(items)
        }
        Some("object") => {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(properties) = map.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    if variant % 2 == 1 || required.contains(&name.as_str()) {
                        out.insert(name.clone(), sample(property, variant, depth + 1)?);
                    }
                }
            }
            let open = map.get("additionalProperties") != Some(&Value::Bool(false));
            if open && variant % 4 == 3 && !out.contains_key("extra_key") {
                out.insert("extra_key".into(), Value::from("extra"));
            }
            Value::Object(out)
        }
        Some(_) => Value::Null,
    };
    Ok(value)
}
