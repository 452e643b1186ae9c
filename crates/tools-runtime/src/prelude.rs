//! The names almost every host uses: `use tools_runtime::prelude::*;`.
//!
//! Tools ([`ToolDefinition`], [`define_tool`], [`macro@tool`], [`ToolArgs`],
//! [`ToolSchema`] (the trait and the derive), [`NoArgs`], [`OutputDecl`], [`Schema`],
//! [`params`], [`RunContext`], [`ToolError`]), the runtime ([`ToolRuntime`], [`ToolCall`],
//! [`ToolResult`], [`ErrorCode`], [`CancellationToken`]), hooks ([`from_fn`], [`layer`],
//! the requests, the `Next` aliases and the decisions), approval, and Code Mode
//! ([`PresentationMode`], [`CodeModeConfig`], [`RuntimeLimits`], [`CodeRuntime`],
//! [`Language`], and each engine its feature turns on).
//!
//! A typed tool in a few lines, with only `tools-runtime` and `serde` as dependencies:
//!
//! ```
//! use serde::Deserialize;
//! use tools_runtime::prelude::*;
//!
//! #[derive(Deserialize, ToolArgs)]
//! struct ReadFileArgs { /** Absolute path of the file. */ path: String }
//!
//! /// Read a UTF-8 text file.
//! #[tool(concurrent)]
//! async fn read_file(args: ReadFileArgs) -> Result<String, ToolError> {
//!     std::fs::read_to_string(&args.path).map_err(|e| ToolError::new(e.to_string()))
//! }
//!
//! let tool = read_file()?;
//! assert_eq!(tool.name().as_str(), "read_file");
//! assert_eq!(tool.description(), "Read a UTF-8 text file.");
//! assert_eq!(
//!     tool.parameters().to_string(),
//!     r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the file."}},"required":["path"]}"#
//! );
//! # Ok::<(), tools_runtime::tools::RegistryError>(())
//! ```

pub use crate::approval::{ApprovalOutcome, ApprovalRequest};
#[cfg(any(feature = "python", feature = "quickjs-process"))]
pub use crate::codemode::Isolation;
#[cfg(feature = "quickjs")]
pub use crate::codemode::QuickJsRuntime;
pub use crate::codemode::{CodeModeConfig, CodeRuntime, Language, RuntimeLimits};
#[cfg(feature = "python")]
pub use crate::codemode::{PythonOptions, PythonRuntime};
#[cfg(feature = "quickjs-process")]
pub use crate::codemode::{QuickJsProcessOptions, QuickJsProcessRuntime};
pub use crate::hooks::{
    DispatchNext, DispatchRequest, HookOptions, PostDecision, PostNext, PostRequest, PreDecision,
    PreNext, PreRequest, from_fn, layer,
};
pub use crate::tools::{NoArgs, OutputDecl, PresentationMode, Schema, params};
pub use crate::{
    CancellationToken, ErrorCode, RunContext, ToolArgs, ToolCall, ToolDefinition, ToolError,
    ToolResult, ToolRuntime, ToolSchema, define_tool, tool,
};
