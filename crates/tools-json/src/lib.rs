#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod code;
mod error;
mod parse;
mod path;
mod schema;
mod value;
mod violation;

pub use code::{ErrorCode, UnknownErrorCode};
pub use error::Error;
pub use path::{Path, Segment};
pub use schema::{CompiledSchema, check_schema, is_schema_supported};
pub use value::{
    DEFAULT_MAX_DEPTH, JsonValue, Limits, canonicalize_numbers, clone_deep, drop_deep, eq_deep,
    is_lossless, is_negative_zero, to_compact_string, to_pretty_capped,
};
pub use violation::{
    JsonType, LosslessScope, Violation, ViolationFamily, ViolationKind, Violations,
};

/// Re-export of `serde_json`, whose `Value` is the raw JSON type of the whole workspace.
pub use serde_json;
