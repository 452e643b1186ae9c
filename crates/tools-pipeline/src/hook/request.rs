//! The three waterfalls' requests and their ends (default decision, tool body), and the
//! aliases of each waterfall's [`Next`].

use std::future::{Ready, ready};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;
use tools_registry::ToolError;

use crate::hook::chain::{Next, Request, sealed::Sealed};
use crate::hook::set::Stacks;
use crate::stage::body::BodyFuture;
use crate::{Execution, PostDecision, PreDecision, ToolResult};

/// The rest of the pre-execute waterfall.
pub type PreNext = Next<PreRequest>;
/// The rest of the execute (around-dispatch) waterfall.
pub type DispatchNext = Next<DispatchRequest>;
/// The rest of the post-execute waterfall.
pub type PostNext = Next<PostRequest>;

/// The request of the pre-execute waterfall: the execution (with the caller's token). Its
/// end decides `allow`.
#[derive(Clone, Debug)]
pub struct PreRequest {
    pub(crate) exec: Arc<Execution>,
    pub(crate) next: Option<PreNext>,
}

impl PreRequest {
    pub(crate) fn new(exec: Arc<Execution>) -> PreRequest {
        PreRequest { exec, next: None }
    }

    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

impl Sealed for PreRequest {
    type Response = PreDecision;
    type Terminal = Ready<Result<PreDecision, ToolError>>;

    fn terminal(self) -> Self::Terminal {
        ready(Ok(PreDecision::Allow))
    }

    fn execution_ref(&self) -> &Arc<Execution> {
        &self.exec
    }

    fn next_slot(&mut self) -> &mut Option<PreNext> {
        &mut self.next
    }
}

impl Request for PreRequest {}

/// The request of the execute (around-dispatch) waterfall: the execution and the
/// cancellation token the body will see. Its end runs the tool body.
///
/// A wrapper may replace the token for its delegated call (a deadline, a retry attempt);
/// the caller's token is honoured regardless (the body sees both).
#[derive(Clone, Debug)]
pub struct DispatchRequest {
    pub(crate) exec: Arc<Execution>,
    /// The caller's token, a wrapper's, or (made when first asked for) a fresh one for a
    /// call without a token: a call nobody can cancel costs no token until then.
    pub(crate) cancel: OnceLock<CancellationToken>,
    /// The call's hook snapshot, which carries the registry the body is resolved in (a
    /// clone of the thread slot's copy, not of the registry every worker shares).
    pub(crate) stacks: Arc<Stacks>,
    pub(crate) next: Option<DispatchNext>,
}

impl DispatchRequest {
    pub(crate) fn new(exec: Arc<Execution>, stacks: Arc<Stacks>) -> DispatchRequest {
        let cancel = OnceLock::new();
        if let Some(caller) = &exec.caller {
            let _ = cancel.set(caller.clone());
        }
        DispatchRequest {
            cancel,
            exec,
            stacks,
            next: None,
        }
    }

    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The token the body will see (fused with the caller's).
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.get_or_init(CancellationToken::new)
    }

    /// The same request with another token for the delegated call.
    #[must_use]
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> DispatchRequest {
        self.cancel = OnceLock::from(cancel);
        self
    }
}

impl Sealed for DispatchRequest {
    type Response = ToolResult;
    type Terminal = BodyFuture;

    fn terminal(self) -> BodyFuture {
        BodyFuture::new(&self.stacks.registry, self.exec, self.cancel.into_inner())
    }

    fn execution_ref(&self) -> &Arc<Execution> {
        &self.exec
    }

    fn cancel_ref(&self) -> Option<&CancellationToken> {
        self.cancel.get().or(self.exec.caller.as_ref())
    }

    fn next_slot(&mut self) -> &mut Option<DispatchNext> {
        &mut self.next
    }
}

impl Request for DispatchRequest {}

/// The request of the post-execute waterfall: the execution (with the caller's token) and
/// the result so far. Its end decides `accept`.
#[derive(Clone, Debug)]
pub struct PostRequest {
    pub(crate) exec: Arc<Execution>,
    pub(crate) result: ToolResult,
    pub(crate) next: Option<PostNext>,
}

impl PostRequest {
    pub(crate) fn new(exec: Arc<Execution>, result: ToolResult) -> PostRequest {
        PostRequest {
            exec,
            result,
            next: None,
        }
    }

    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The result so far.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }
}

impl Sealed for PostRequest {
    type Response = PostDecision;
    type Terminal = Ready<Result<PostDecision, ToolError>>;

    fn terminal(self) -> Self::Terminal {
        ready(Ok(PostDecision::accept()))
    }

    fn execution_ref(&self) -> &Arc<Execution> {
        &self.exec
    }

    fn next_slot(&mut self) -> &mut Option<PostNext> {
        &mut self.next
    }
}

impl Request for PostRequest {}
