//! The names almost every host uses: `use tools_runtime::prelude::*;`.
//!
//! Tools ([`ToolDefinition`], [`define_tool`], [`macro@tool`], [`ToolArgs`],
//! [`ToolSchema`] (the trait and the derive), [`NoArgs`], [`OutputDecl`], [`Schema`],
//! [`params`], [`RunContext`], [`ToolError`]), the runtime ([`ToolRuntime`], [`ToolCall`],
//! [`ToolResult`], [`ErrorCode`], [`CancellationToken`]), hooks ([`from_fn`], [`layer`],
//! the requests, the `Next` aliases and the decisions) and approval.
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
//! # Ok::<(), tools_runtime::RegistryError>(())
//! ```

pub use crate::{
    ApprovalOutcome, ApprovalRequest, CancellationToken, DispatchNext, DispatchRequest, ErrorCode,
    HookOptions, NoArgs, OutputDecl, PostDecision, PostNext, PostRequest, PreDecision, PreNext,
    PreRequest, RunContext, Schema, ToolArgs, ToolCall, ToolDefinition, ToolError, ToolResult,
    ToolRuntime, define_tool, from_fn, layer, params, tool,
};
/// The author value schema of a type: the trait and its derive.
pub use tools_schema::ToolSchema;
