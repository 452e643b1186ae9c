//! The names almost every host uses: `use tools_runtime::prelude::*;`.
//!
//! Tools ([`ToolDefinition`], [`define_tool`], [`OutputDecl`], [`Schema`], [`params`],
//! [`RunContext`], [`ToolError`]), the runtime ([`ToolRuntime`], [`ToolCall`],
//! [`ToolResult`], [`ErrorCode`], [`CancellationToken`]), hooks ([`from_fn`], [`layer`],
//! the requests, the `Next` aliases and the decisions) and approval.

pub use crate::{
    ApprovalOutcome, ApprovalRequest, CancellationToken, DispatchNext, DispatchRequest, ErrorCode,
    HookOptions, OutputDecl, PostDecision, PostNext, PostRequest, PreDecision, PreNext, PreRequest,
    RunContext, Schema, ToolCall, ToolDefinition, ToolError, ToolResult, ToolRuntime, define_tool,
    from_fn, layer, params,
};
