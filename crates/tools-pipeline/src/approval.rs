//! The approval service that answers `ask` decisions.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tools_registry::{AgentScope, ToolError, ToolName};

/// What the approval service is asked.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// The calling agent (an approval is always routed through an agent).
    pub agent: AgentScope,
    /// The tool.
    pub tool: ToolName,
    /// The call id.
    pub call_id: Arc<str>,
    /// The pre-execute hook's reason, if it gave one.
    pub reason: Option<String>,
    /// The caller's cancellation token.
    pub cancel: CancellationToken,
}

/// The approval service's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApprovalOutcome {
    /// Allowed for this call (guards still apply).
    AllowedOnce,
    /// The user said no.
    Rejected,
    /// The question was cancelled.
    Cancelled,
    /// Nobody can answer.
    Unavailable,
}

/// Answers `ask` decisions. Implemented for closures returning a future of the outcome.
pub trait Approval: Send + Sync + 'static {
    /// Asks about one call.
    fn request(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Result<ApprovalOutcome, ToolError>> + Send>>;
}

impl<F, Fut> Approval for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ApprovalOutcome, ToolError>> + Send + 'static,
{
    fn request(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Result<ApprovalOutcome, ToolError>> + Send>> {
        Box::pin(self(request))
    }
}
