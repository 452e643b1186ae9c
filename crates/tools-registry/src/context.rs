//! What a tool body receives besides its arguments: the call's identity, its cancellation
//! token and the hooks to defer context and conclude the turn.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_presentation::ContentBlock;

use crate::{AgentScope, ToolName};

/// An opaque, process-unique identity of one execution, usable only for equality.
///
/// The pipeline mints one per call; a Code Mode sub-call names its parent by it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionToken(NonZeroU64);

impl ExecutionToken {
    /// A fresh token, never equal to any other.
    ///
    /// Each thread takes a block of 1 024 numbers from one process-wide counter
    /// and hands them out one by one, so calls on different workers do not write the same
    /// atomic (a cache line every worker would otherwise pull in, once per call).
    pub fn mint() -> ExecutionToken {
        thread_local! {
            /// The next number of this thread's block, and the end of the block.
            static BLOCK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        }
        static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);
        let n = BLOCK
            .try_with(|block| {
                let (mut next, mut end) = block.get();
                if next == end {
                    next = NEXT_BLOCK.fetch_add(MINT_BLOCK, Ordering::Relaxed);
                    end = next.saturating_add(MINT_BLOCK);
                }
                block.set((next + 1, end));
                next
            })
            // During thread teardown: one number from the shared counter, as a block of one.
            .unwrap_or_else(|_| NEXT_BLOCK.fetch_add(1, Ordering::Relaxed));
        ExecutionToken(NonZeroU64::new(n).unwrap_or(NonZeroU64::MIN))
    }
}

/// How many token numbers a thread takes from the shared counter at a time.
const MINT_BLOCK: u64 = 1024;

impl fmt::Debug for ExecutionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionToken(#{})", self.0)
    }
}

/// The identity of one call, shared by every stage that sees it.
#[derive(Clone, Debug)]
pub struct CallInfo {
    /// The model's call id (`<callId>:code:<n>` for a Code Mode sub-call).
    pub call_id: Arc<str>,
    /// The call id of the model-issued call this call descends from (its own id for a
    /// top-level call).
    pub root_call_id: Arc<str>,
    /// The called tool.
    pub tool: ToolName,
    /// The execution's token.
    pub token: ExecutionToken,
    /// The calling agent's scope, if any.
    pub agent: Option<AgentScope>,
    /// The parent execution of a Code Mode sub-call.
    pub parent: Option<ExecutionToken>,
    /// The immutable argument snapshot.
    pub arguments: JsonValue,
}

/// A context message deferred by a tool: delivered to the model with the call's result
/// (the reference's `additionalContexts` entries), in call order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolContext {
    /// Who added it (e.g. `"tools-code-mode"`), if anyone says.
    pub source: Option<Arc<str>>,
    /// The message's content.
    pub content: Vec<ContentBlock>,
}

impl ToolContext {
    /// A context of one text block.
    pub fn text(text: impl Into<String>) -> ToolContext {
        ToolContext {
            source: None,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The same context with a source.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<Arc<str>>) -> ToolContext {
        self.source = Some(source.into());
        self
    }
}

/// One progress update of a running call: how far it is, out of how much, and what it is
/// doing. Forwarded to whoever started the call (an MCP client's `notifications/progress`,
/// a host's UI); a call nobody listens to drops it.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Work done so far (should increase with every update; MCP requires it).
    pub progress: f64,
    /// The total amount of work, when known.
    pub total: Option<f64>,
    /// A human-readable message about the current step.
    pub message: Option<String>,
}

impl Progress {
    /// `progress` units of work done, total unknown, no message.
    pub fn new(progress: f64) -> Progress {
        Progress {
            progress,
            total: None,
            message: None,
        }
    }

    /// The same update with the total amount of work.
    #[must_use]
    pub fn with_total(mut self, total: f64) -> Progress {
        self.total = Some(total);
        self
    }

    /// The same update with a message.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Progress {
        self.message = Some(message.into());
        self
    }
}

/// Where a call's progress updates go: given to a call by whoever starts it
/// (`ToolCall::with_progress` in `tools-pipeline`). It must not block: forward, or drop.
pub trait ProgressSink: Send + Sync + 'static {
    /// Receives one update.
    fn report(&self, progress: Progress);
}

impl<F> ProgressSink for F
where
    F: Fn(Progress) + Send + Sync + 'static,
{
    fn report(&self, progress: Progress) {
        self(progress);
    }
}

/// The pipeline's side of a run context: the call's identity, and where deferred contexts
/// and the turn conclusion go. Implemented by the pipeline's execution (one allocation
/// holds both); [`RunContext::detached`] uses a no-op.
pub trait RunHooks: Send + Sync {
    /// The call's identity.
    fn call_info(&self) -> &CallInfo;
    /// Adds a context to be delivered with the call's result.
    fn defer_context(&self, context: ToolContext);
    /// Asks the agent loop to end the turn after this call's batch.
    fn conclude_turn(&self);
    /// Forwards a progress update to whoever started the call (default: dropped).
    fn report_progress(&self, progress: Progress) {
        let _ = progress;
    }
    /// The implementation as `Any`, so the crate that made it can find its own state again
    /// (the pipeline passes a call's channels on to its Code Mode sub-calls); default none.
    fn as_any(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        None
    }
}

/// The hooks of a detached context: the call's identity, nothing else.
struct Detached(Arc<CallInfo>);

impl RunHooks for Detached {
    fn call_info(&self) -> &CallInfo {
        &self.0
    }
    fn defer_context(&self, _context: ToolContext) {}
    fn conclude_turn(&self) {}
}

/// A body's cancellation token made the first time the body asks for it.
///
/// Most tool bodies never look at their token, and making one per call costs an
/// allocation (and, for a child token, a lock of its parent when made and when dropped).
/// A [`RunContext`] made by [`RunContext::on_demand`] asks its source for the token the
/// first time [`RunContext::cancellation`] is called and answers
/// [`RunContext::is_cancelled`] without making it. The pipeline's execution is such a
/// source for the body of its first dispatch. A source is also the call's [`RunHooks`], so
/// such a context holds one handle, not two.
pub trait BodyCancellation: RunHooks {
    /// The body's token: made on the first call (already cancelled if the body was
    /// cancelled before), the same token on every later call.
    fn body_token(&self) -> &CancellationToken;
    /// Whether the body has been cancelled, without making the token.
    fn is_body_cancelled(&self) -> bool;
}

/// Where a context's token comes from, with the call's hooks.
#[derive(Clone)]
enum Cancel {
    /// A token made by whoever made the context.
    Token {
        token: CancellationToken,
        hooks: Arc<dyn RunHooks>,
    },
    /// A token made on first use by its source, which is also the call's hooks.
    OnDemand(Arc<dyn BodyCancellation>),
}

/// What a tool body receives besides its arguments.
///
/// A body must observe [`RunContext::cancellation`] and settle only when the work it owns
/// is quiescent.
#[derive(Clone)]
pub struct RunContext {
    cancel: Cancel,
}

impl RunContext {
    /// A context for the call `hooks` describes, cancelled by `cancel`, reporting to
    /// `hooks`.
    pub fn new(hooks: Arc<dyn RunHooks>, cancel: CancellationToken) -> RunContext {
        RunContext {
            cancel: Cancel::Token {
                token: cancel,
                hooks,
            },
        }
    }

    /// A context whose token `source` makes when the body first asks for it (see
    /// [`BodyCancellation`]), reporting to `source`.
    pub fn on_demand(source: Arc<dyn BodyCancellation>) -> RunContext {
        RunContext {
            cancel: Cancel::OnDemand(source),
        }
    }

    /// A context whose deferred contexts and conclusion go nowhere (tests, direct calls).
    pub fn detached(call: Arc<CallInfo>, cancel: CancellationToken) -> RunContext {
        RunContext::new(Arc::new(Detached(call)), cancel)
    }

    /// The call's identity.
    pub fn call(&self) -> &CallInfo {
        self.hooks().call_info()
    }

    /// The pipeline's side of the context.
    pub fn hooks(&self) -> &dyn RunHooks {
        match &self.cancel {
            Cancel::Token { hooks, .. } => &**hooks,
            Cancel::OnDemand(source) => &**source,
        }
    }

    /// The token that is cancelled when the call must stop (made now if the context makes
    /// it on demand and nobody asked before).
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.cancel {
            Cancel::Token { token, .. } => token,
            Cancel::OnDemand(source) => source.body_token(),
        }
    }

    /// Whether the call has been cancelled (never makes a token).
    pub fn is_cancelled(&self) -> bool {
        match &self.cancel {
            Cancel::Token { token, .. } => token.is_cancelled(),
            Cancel::OnDemand(source) => source.is_body_cancelled(),
        }
    }

    /// Adds a context delivered with this call's result (before any context the result
    /// itself carries).
    pub fn defer_context(&self, context: ToolContext) {
        self.hooks().defer_context(context);
    }

    /// Asks the agent loop to end the turn after this call's batch.
    pub fn conclude_turn(&self) {
        self.hooks().conclude_turn();
    }

    /// Reports progress to whoever started the call (an MCP client that sent a progress
    /// token gets `notifications/progress`); dropped when nobody listens. Never blocks.
    ///
    /// ```
    /// use tools_registry::{Progress, RunContext};
    ///
    /// fn copy_files(ctx: &RunContext) {
    ///     for step in 1..=3 {
    ///         ctx.report_progress(Progress::new(f64::from(step)).with_total(3.0).with_message("copying"));
    ///     }
    /// }
    /// ```
    pub fn report_progress(&self, progress: Progress) {
        self.hooks().report_progress(progress);
    }
}

impl fmt::Debug for RunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunContext")
            .field("call", self.call())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{ExecutionToken, MINT_BLOCK};

    #[test]
    fn tokens_minted_on_many_threads_are_all_distinct() {
        // Each thread crosses at least two block boundaries.
        let per_thread = usize::try_from(MINT_BLOCK * 2 + 7).unwrap_or(usize::MAX);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    (0..per_thread)
                        .map(|_| ExecutionToken::mint())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for thread in threads {
            for token in thread.join().unwrap_or_default() {
                assert!(seen.insert(token), "{token:?} minted twice");
            }
        }
        assert_eq!(seen.len(), 4 * per_thread);
    }
}
