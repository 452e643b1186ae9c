#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod approval;
mod batch;
mod budget;
mod error;
mod metrics;
mod provider;
mod runtime;
mod span;
mod timeout;

pub use approval::BatchApproval;
pub use batch::{Batch, BatchEvent};
pub use budget::{
    MemoryResultStore, OutputBudget, READ_RESULT, ResultStore, StoredResult, cut_handle,
};
pub use error::Error;
pub use metrics::{LATENCY_BUCKETS, Metrics, ToolStats};
pub use provider::{Declarations, ModelCall, ModelResponse, NotStrict, Provider, TurnStep};
pub use runtime::{RuntimeBuilder, RuntimeConfig, ToolRuntime};
pub use timeout::TimeoutPolicy;

pub mod prelude;

// The front door: everything a host writes in the common case, so that a host depends on
// this crate alone (plus tokio, serde and serde_json).

// Tools: definitions (raw and typed), their outputs, the run context, errors.
/// What making a call can refuse (`tools_pipeline::Error`: an empty tool name).
pub use tools_pipeline::Error as CallError;
/// What registering or building a tool can refuse (`tools_registry::Error`).
pub use tools_registry::Error as RegistryError;
pub use tools_registry::{
    AgentScope, CallInfo, Code, Guard, OutputDecl, Registration, Registry, RunContext, ToolContext,
    ToolDefinition, ToolError, ToolSchema, TypedToolBuilder, define_tool,
};
pub use tools_registry::{ExecutionMode, PresentationMode, ToolFilter};
// Typed tools take their schemas from their types: the `ToolArgs` trait and derive, the
// `ToolSchema` derive (its trait is `prelude::ToolSchema`: here the name is the model-facing
// projection), `NoArgs`, and `#[tool]` on an `async fn`.
pub use tools_macros::ToolSchema;
pub use tools_registry::tool;
pub use tools_schema::{NoArgs, ToolArgs};
// The schema DSL, for hand-written schemas.
pub use tools_schema::{Params, Schema, params};
// Values and error codes.
pub use tools_json::{ErrorCode, JsonValue};
// Result content.
pub use tools_presentation::ContentBlock;
// Calls, results, hooks, decisions, approval.
pub use tools_pipeline::{
    Approval, ApprovalOutcome, ApprovalRequest, ApprovalStore, DispatchNext, DispatchRequest,
    Execution, FromFn, FromFnWithState, Hook, HookFuture, HookOptions, Hooked, LayerHook,
    MemoryApprovalStore, Next, Outcome, Pipeline, PostDecision, PostNext, PostRequest, PreDecision,
    PreNext, PreRequest, Replacement, ToolCall, ToolResult, from_fn, from_fn_with_state, layer,
};
// Cancellation, as every call and batch takes it.
pub use tokio_util::sync::CancellationToken;

// Code Mode: the configuration is always here; each engine is an opt-in feature.
#[cfg(any(feature = "python", feature = "quickjs-process"))]
pub use tools_codemode::Isolation;
#[cfg(feature = "quickjs")]
pub use tools_codemode::QuickJsRuntime;
pub use tools_codemode::{
    CodeModeConfig, CodeRuntime, DispatchSettled, DispatchSink, DispatchStarted, RuntimeLimits,
};
#[cfg(feature = "python")]
pub use tools_codemode::{PythonOptions, PythonRuntime};
#[cfg(feature = "quickjs-process")]
pub use tools_codemode::{QuickJsProcessOptions, QuickJsProcessRuntime};

/// The crates behind the front door, for what it does not re-export.
pub mod crates {
    pub use tools_codemode as codemode;
    pub use tools_json as json;
    pub use tools_pipeline as pipeline;
    pub use tools_presentation as presentation;
    pub use tools_registry as registry;
    pub use tools_schema as schema;
}
