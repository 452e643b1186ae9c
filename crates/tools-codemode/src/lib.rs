#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod error;
mod sdk;

pub use error::Error;
pub use sdk::{
    Language, LanguageBinding, RunCodeFlavour, SDK_HEADING, SdkRenderer, ToolSdkSchema,
    json_schema_to_py, json_schema_to_ts,
};

/// Re-export of the workspace's machine codes.
pub use tools_json::ErrorCode;
