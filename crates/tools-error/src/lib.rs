#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod code;
mod tool_error;

pub use code::{ErrorCode, UnknownErrorCode};
pub use tool_error::{Code, ToolError};
