#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod compile;
mod dsl;
mod error;
pub mod testing;
mod typed;

pub use dsl::{
    AnySchema, ArraySchema, BooleanSchema, IntegerSchema, NullSchema, NumberSchema, ObjectSchema,
    OneOfSchema, Params, Schema, StringSchema, params,
};
pub use error::Error;
pub use tools_json::{CompiledSchema, ErrorCode, JsonValue, Violation, ViolationKind, Violations};
pub use typed::{ArgsSchema, OutputSchema, Validated};
