#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod deep;
mod error;
mod limits;
mod lossless;
mod parse;
mod path;
mod schema;
mod text;
mod value;
mod violation;

pub use deep::{clone_deep, drop_deep, eq_deep};
pub use error::Error;
pub use limits::{DEFAULT_MAX_DEPTH, Limits};
pub use lossless::{canonicalize_numbers, is_lossless, is_negative_zero};
pub use path::{Path, Segment};
pub use schema::build;
pub use schema::{BOUND_KEYWORDS, CompiledSchema, check_schema, is_schema_supported};
pub use text::{to_compact_string, to_pretty_capped};
/// The workspace's machine codes (`tools-error`), which this crate's errors carry.
pub use tools_error::{ErrorCode, UnknownErrorCode};
pub use value::JsonValue;
pub use violation::{
    CountUnit, JsonType, LosslessScope, PatternBound, Violation, ViolationFamily, ViolationKind,
    Violations,
};

/// Re-export of `serde_json`, whose `Value` is the raw JSON type of the whole workspace.
pub use serde_json;

/// Re-export of the small-string type of a [`Segment::Key`] (and of the registry's tool
/// names): a `str` of up to 23 bytes stored inline.
pub use smol_str::SmolStr;
