//! Approval: the policy that answers a call that asks ([`Approval`]), the memory of
//! answers ([`ApprovalStore`]), and batch approval, one question for every call of a batch
//! that asks ([`BatchApproval`]).

use std::future::Future;
use std::pin::Pin;

use tools_pipeline::ToolError;
pub use tools_pipeline::{
    Approval, ApprovalOutcome, ApprovalRequest, ApprovalStore, MemoryApprovalStore,
};

/// Answers the `ask` decisions of one batch with one question (opt-in; see
/// [`crate::RuntimeBuilder::batch_approval`]).
pub trait BatchApproval: Send + Sync + 'static {
    /// One outcome per request, in the same order.
    fn request_batch(
        &self,
        requests: Vec<ApprovalRequest>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<ApprovalOutcome>, ToolError>> + Send>>;
}

impl<F, Fut> BatchApproval for F
where
    F: Fn(Vec<ApprovalRequest>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ApprovalOutcome>, ToolError>> + Send + 'static,
{
    fn request_batch(
        &self,
        requests: Vec<ApprovalRequest>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<ApprovalOutcome>, ToolError>> + Send>> {
        Box::pin(self(requests))
    }
}
