#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod compile;
mod derive;
mod dsl;
mod error;
mod fast_path;
#[cfg(feature = "schemars")]
mod schemars_bridge;
mod spec;
pub mod testing;
mod typed;

#[cfg(test)]
mod fast_path_tests;

pub use derive::{
    ArrayBounds, FieldPosition, Formatted, NoArgs, NumericBounds, ObjectBounds, ObjectFields,
    StringBounds, ToolArgs, ToolObject, ToolSchema,
};
pub use dsl::{
    AnySchema, ArraySchema, BooleanSchema, IntegerSchema, NullSchema, NumberSchema, ObjectSchema,
    OneOfSchema, Params, Schema, StringSchema, params,
};
pub use error::Error;
pub use tools_json::{CompiledSchema, ErrorCode, JsonValue, Violation, ViolationKind, Violations};
/// `#[derive(ToolArgs)]` and `#[derive(ToolSchema)]` (see the crate docs, "Derived schemas").
pub use tools_macros::{ToolArgs, ToolSchema};
pub use typed::{ArgsSchema, OutputSchema, Validated};

/// What the derives' generated code calls; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::derive::support::*;
    pub use serde_json::Value;
}
