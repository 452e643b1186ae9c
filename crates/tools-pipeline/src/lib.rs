#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod approval;
mod call;
mod catch;
mod error;
mod hooks;
mod pipeline;
mod result;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

pub use approval::{Approval, ApprovalOutcome, ApprovalRequest};
pub use call::{Execution, ToolCall};
pub use error::Error;
pub use hooks::{
    DispatchRequest, DispatchService, FnLayer, FnService, HasExecution, Next, PostRequest,
    PostService, PreRequest, PreService, from_fn,
};
pub use pipeline::{
    Condition, Decided, HookOptions, Hooked, Observer, Pending, Pipeline, Prepared, Ready,
    WeakPipeline,
};
pub use result::{Outcome, PostDecision, PreDecision, Replacement, ToolResult};

pub use tools_json::ErrorCode;
pub use tools_registry::{Code, ToolContext, ToolError};
pub use tower::BoxError;
