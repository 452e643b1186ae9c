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
    /// The key an answer for the session or for always is remembered under
    /// ([`tools_registry::ToolDefinition::approval_key`]: by default the tool's name and its
    /// canonical arguments), so a host can show what "allow for this session" covers.
    pub key: Arc<str>,
    /// The caller's cancellation token.
    pub cancel: CancellationToken,
}

/// The approval service's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApprovalOutcome {
    /// Allowed for this call (guards still apply).
    AllowedOnce,
    /// Allowed for this call and every later call with the same key from the same agent
    /// scope: the [`ApprovalStore`] remembers it, and they are not asked again.
    AllowedForSession,
    /// Allowed for this call and every later call with the same key from any scope; the
    /// [`ApprovalStore`] keeps it (a host's durable store keeps it across runs).
    AllowedAlways,
    /// The user said no.
    Rejected,
    /// The question was cancelled.
    Cancelled,
    /// Nobody can answer.
    Unavailable,
}

impl ApprovalOutcome {
    /// Whether the call may run.
    pub fn is_allowed(self) -> bool {
        matches!(
            self,
            ApprovalOutcome::AllowedOnce
                | ApprovalOutcome::AllowedForSession
                | ApprovalOutcome::AllowedAlways
        )
    }
}

/// Where approvals for the session and for always are remembered. The pipeline asks it
/// before it asks the approval service, and tells it every answer that is to be remembered.
/// [`MemoryApprovalStore`] is the default; a host keeps "always" across runs with its own.
pub trait ApprovalStore: Send + Sync + 'static {
    /// Whether a call with `key` from `agent` is approved already.
    fn is_approved(&self, agent: &AgentScope, key: &str) -> bool;
    /// Remembers `outcome` (`AllowedForSession` or `AllowedAlways`) for `key` and `agent`.
    fn remember(&self, agent: &AgentScope, key: &str, outcome: ApprovalOutcome);
    /// Forgets the session answers of a disposed scope (`AgentScope::key`); the pipeline
    /// calls it when the registry reports the disposal. Default: nothing to forget.
    fn forget_scope(&self, scope: u64) {
        let _ = scope;
    }
}

/// The in-memory [`ApprovalStore`]: session answers per agent scope (forgotten when the
/// scope is disposed), always-answers for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryApprovalStore {
    state: std::sync::Mutex<Remembered>,
}

#[derive(Debug, Default)]
struct Remembered {
    session: std::collections::HashSet<(u64, Arc<str>)>,
    always: std::collections::HashSet<Arc<str>>,
}

impl MemoryApprovalStore {
    /// An empty store.
    pub fn new() -> MemoryApprovalStore {
        MemoryApprovalStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ApprovalStore for MemoryApprovalStore {
    fn is_approved(&self, agent: &AgentScope, key: &str) -> bool {
        let state = self.lock();
        state.always.contains(key) || state.session.contains(&(agent.key(), Arc::from(key)))
    }

    fn remember(&self, agent: &AgentScope, key: &str, outcome: ApprovalOutcome) {
        let mut state = self.lock();
        match outcome {
            ApprovalOutcome::AllowedForSession => {
                state.session.insert((agent.key(), Arc::from(key)));
            }
            ApprovalOutcome::AllowedAlways => {
                state.always.insert(Arc::from(key));
            }
            _ => {}
        }
    }

    fn forget_scope(&self, scope: u64) {
        self.lock().session.retain(|(s, _)| *s != scope);
    }
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
