#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod approval;
mod batch;
pub mod budget;
mod error;
pub mod metrics;
pub mod provider;
mod runtime;
mod span;
mod timeout;

pub mod prelude;

// The front door: a handful of names at the root (what nearly every host writes) and one
// module per concern. A host depends on this crate alone (plus tokio, serde and serde_json).

pub use batch::{Batch, BatchEvent};
pub use error::Error;
pub use runtime::{RuntimeBuilder, RuntimeConfig, ToolRuntime};
// Tools, calls, results and errors.
pub use tools_json::{ErrorCode, JsonValue};
pub use tools_pipeline::{ToolCall, ToolResult};
pub use tools_registry::{RunContext, ToolContext, ToolDefinition, ToolError, define_tool, tool};
// Typed tools take their schemas from their types: the `ToolArgs` and `ToolSchema` traits,
// each with its derive of the same name, and `#[tool]` on an `async fn`.
pub use tools_schema::{ToolArgs, ToolSchema};
// Cancellation, as every call and batch takes it.
pub use tokio_util::sync::CancellationToken;

/// Defining and registering tools: the registry, scopes, typed builders, the schema DSL,
/// declared outputs and result content.
pub mod tools {
    pub use tools_presentation::ContentBlock;
    /// What registering or building a tool can refuse (`tools_registry::Error`).
    pub use tools_registry::Error as RegistryError;
    pub use tools_registry::{
        AgentScope, CallInfo, Change, Code, ExecutionMode, Exposure, Guard, OutputDecl,
        PresentationMode, Refusal, Registration, Registry, SEARCH_TOOLS, SearchError, ToolFilter,
        ToolSpec, TypedToolBuilder, View,
    };
    pub use tools_schema::{NoArgs, Params, Schema, params};
}

/// How calls and results look to people: result content, UI cards for calls and results,
/// typed presenters, and the Agent Client Protocol mapping (`tools-presentation`).
pub mod presentation {
    pub use tools_presentation::*;
}

/// Hooks around every call: the stages' requests, continuations and decisions, closures
/// (`from_fn`) and tower layers (`layer`) as hooks, the pipeline they run in, and the
/// timeout policy (an execute hook the runtime installs by default).
pub mod hooks {
    pub use crate::timeout::TimeoutPolicy;
    /// What making a call can refuse (`tools_pipeline::Error`: an empty tool name).
    pub use tools_pipeline::Error as CallError;
    pub use tools_pipeline::{
        DispatchNext, DispatchRequest, Execution, FromFn, FromFnWithState, Hook, HookOptions,
        Hooked, LayerHook, Next, Outcome, Pipeline, PostDecision, PostNext, PostRequest,
        PreDecision, PreNext, PreRequest, Principal, Replacement, from_fn, from_fn_with_state,
        layer,
    };
}

/// Code Mode on a [`ToolRuntime`]: the configuration is always here; each engine is an
/// opt-in feature (`quickjs`, `python`, `quickjs-process`).
pub mod codemode {
    pub use tools_codemode::{
        CodeModeConfig, CodeRuntime, DispatchSettled, DispatchSink, DispatchStarted, Language,
        RuntimeLimits,
    };
    #[cfg(feature = "quickjs")]
    pub use tools_quickjs::{QuickJsRuntime, quickjs_worker_main};
    #[cfg(any(feature = "python", feature = "quickjs-process"))]
    pub use tools_sandbox::{Isolation, SandboxUser};
    #[cfg(feature = "python")]
    pub use tools_sandbox::{PythonOptions, PythonRuntime};
    #[cfg(feature = "quickjs-process")]
    pub use tools_sandbox::{QuickJsProcessOptions, QuickJsProcessRuntime};
}

/// The named futures of the front door, as tower keeps its futures apart.
pub mod future {
    pub use tools_codemode::{DisposeFuture, RunFuture};
    pub use tools_pipeline::HookFuture;
}

/// The crates the derives and `#[tool]` expand to when a host depends on this crate alone.
/// Not part of the API: hosts use the modules above.
#[doc(hidden)]
pub mod __private {
    pub use tools_registry as registry;
    pub use tools_schema as schema;
}
