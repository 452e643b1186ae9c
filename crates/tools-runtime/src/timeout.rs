//! The timeout policy: a hook of the execute waterfall that enforces each tool's budget
//! cooperatively and exactly.

use std::time::Duration;

use tokio::time::Instant;
use tools_json::ErrorCode;
use tools_pipeline::{DispatchNext, DispatchRequest, Hook, HookFuture, ToolError, ToolResult};

/// The timeout policy (installed by default by [`crate::ToolRuntime`]).
///
/// For a dispatch of a tool that declares a budget, it hands the rest of the chain a
/// deadline token (a child of the token it received), cancels it when the budget elapses,
/// **waits for the body to settle**, and then answers `TOOL_TIMEOUT` (`tool call timed out
/// after <ms>ms`). A body that settles after its deadline is `TOOL_TIMEOUT` too, even when
/// its result and the timer are seen in the same poll (docs/decisions.md, entry 24). If the
/// caller cancelled first, the deadline is not the cause and the result stands (`ABORTED`).
/// Tools without a budget, unknown tools and `run_code` pass through untouched.
///
/// The budget is the one of the definition the call resolved to when it was created
/// ([`tools_pipeline::Execution::definition`]): no registry lookup per call.
///
/// Composition follows registration order: registered outside a retry hook it bounds the
/// whole retry; inside it, each attempt.
///
/// `ToolRuntime` registers it with `HookOptions::active_when(|| registry.has_timeouts())`:
/// while no registered tool declares a budget the chain skips it (no boxed future). Register
/// it the same way when installing it on a `Pipeline` by hand.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeoutPolicy {
    _private: (),
}

impl TimeoutPolicy {
    /// The policy.
    pub fn new() -> TimeoutPolicy {
        TimeoutPolicy { _private: () }
    }
}

impl Hook<DispatchRequest> for TimeoutPolicy {
    fn call(&self, request: DispatchRequest, next: DispatchNext) -> HookFuture<ToolResult> {
        let budget = request
            .execution()
            .definition()
            .and_then(tools_registry::ToolDefinition::timeout);
        match budget {
            None => Box::pin(next.run(request)),
            Some(budget) => Box::pin(with_deadline(request, next, budget)),
        }
    }
}

async fn with_deadline(
    request: DispatchRequest,
    next: DispatchNext,
    budget: Duration,
) -> Result<ToolResult, ToolError> {
    let upstream = request.cancellation().clone();
    let deadline = upstream.child_token();
    let due = Instant::now() + budget;
    let call = next.run(request.with_cancellation(deadline.clone()));
    let mut call = std::pin::pin!(call);
    let sleep = tokio::time::sleep_until(due);
    let mut sleep = std::pin::pin!(sleep);
    let mut timed_out = false;
    // The body is always awaited; the timer only cancels its token.
    let outcome = loop {
        tokio::select! {
            biased;
            outcome = &mut call => break outcome,
            () = &mut sleep, if !timed_out && !deadline.is_cancelled() => {
                timed_out = true;
                deadline.cancel();
            }
        }
    };
    // Exact: a body that settled at or after its deadline is late, whichever branch the
    // poll saw first; a caller that cancelled is the cause instead.
    let late = timed_out || (Instant::now() >= due && !upstream.is_cancelled());
    if late {
        let millis = budget.as_millis();
        return Ok(ToolResult::coded(
            ErrorCode::ToolTimeout,
            format!("tool call timed out after {millis}ms"),
        ));
    }
    outcome
}
