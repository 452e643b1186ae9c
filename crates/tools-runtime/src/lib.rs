#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod batch;
mod error;
mod metrics;
mod runtime;
mod timeout;

pub use batch::{Batch, BatchApproval, BatchEvent};
pub use error::Error;
pub use metrics::{LATENCY_BUCKETS, Metrics, ToolStats};
pub use runtime::{RuntimeBuilder, RuntimeConfig, ToolRuntime};
pub use timeout::TimeoutPolicy;

pub use tools_pipeline::{
    Approval, ApprovalOutcome, ApprovalRequest, HookOptions, Hooked, ToolCall, ToolResult,
};
pub use tools_registry::{ExecutionMode, PresentationMode, ToolFilter};

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
