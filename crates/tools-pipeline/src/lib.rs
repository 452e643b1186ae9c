#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod approval;
mod call;
mod catch;
mod error;
mod hook;
mod outcome;
mod pipeline;
mod principal;
mod result;
mod shared;
mod stage;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;
pub mod trace;

pub use approval::{
    Approval, ApprovalOutcome, ApprovalRequest, ApprovalStore, MemoryApprovalStore,
};
pub use call::{Execution, ToolCall};
pub use error::Error;
pub use hook::chain::{Hook, HookFuture, Next, NextFuture, Request};
pub use hook::from_fn::{FromFn, FromFnWithState, from_fn, from_fn_with_state};
pub use hook::layer::{Continue, ContinueFuture, LayerHook, layer};
pub use hook::options::{Condition, HookOptions};
pub use hook::request::{
    DispatchNext, DispatchRequest, PostNext, PostRequest, PreNext, PreRequest,
};
pub use hook::set::{Hooked, Observer};
pub use pipeline::{Pipeline, WeakPipeline};
pub use principal::Principal;
pub use result::{Outcome, PostDecision, PreDecision, Replacement, ToolResult};
pub use stage::body::BodyFuture;
pub use stage::complete::Pending;
pub use stage::prepare::{Decided, Prepared, Ready};

pub use tools_json::ErrorCode;
pub use tools_registry::{Code, ToolContext, ToolError};
pub use tower::BoxError;
