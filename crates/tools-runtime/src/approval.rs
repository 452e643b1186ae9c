//! Batch approval: one question for every call of a batch that asks.

use std::future::Future;
use std::pin::Pin;

use tools_pipeline::{ApprovalOutcome, ApprovalRequest, ToolError};

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
