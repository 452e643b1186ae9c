//! The timeout policy: a tower layer of the execute waterfall that enforces each tool's
//! budget cooperatively.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tools_json::ErrorCode;
use tools_pipeline::{BoxError, DispatchRequest, ToolResult};
use tools_registry::Registry;
use tower::{Layer, Service, ServiceExt};

/// The timeout policy (installed by default by [`crate::ToolRuntime`]).
///
/// For a dispatch of a tool that declares a budget, it hands the body a deadline token (a
/// child of the token it received), cancels it when the budget elapses, **waits for the body
/// to settle**, and then replaces whatever came back with `TOOL_TIMEOUT` (`tool call timed
/// out after <ms>ms`). If the caller cancelled first, the deadline is not the cause and the
/// result stands (`ABORTED`). Tools without a budget, unknown tools and `run_code` pass
/// through untouched.
///
/// Composition follows registration order: registered outside a retry layer it bounds the
/// whole retry; inside it, each attempt.
///
/// `ToolRuntime` registers it with `HookOptions::active_when(|| registry.has_timeouts())`:
/// while no registered tool declares a budget, every lookup above would find none, so calls
/// skip the layer (and its boxed future) at the cost of one atomic load. Register it the same
/// way when installing it on a `Pipeline` by hand.
#[derive(Clone, Debug)]
pub struct TimeoutPolicyLayer {
    registry: Registry,
}

impl TimeoutPolicyLayer {
    /// The policy for tools of `registry`.
    pub fn new(registry: Registry) -> TimeoutPolicyLayer {
        TimeoutPolicyLayer { registry }
    }
}

impl<S> Layer<S> for TimeoutPolicyLayer {
    type Service = TimeoutPolicy<S>;

    fn layer(&self, inner: S) -> TimeoutPolicy<S> {
        TimeoutPolicy {
            inner,
            registry: self.registry.clone(),
        }
    }
}

/// The service of [`TimeoutPolicyLayer`].
#[derive(Clone, Debug)]
pub struct TimeoutPolicy<S> {
    inner: S,
    registry: Registry,
}

impl<S> Service<DispatchRequest> for TimeoutPolicy<S>
where
    S: Service<DispatchRequest, Response = ToolResult, Error = BoxError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = ToolResult;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ToolResult, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: DispatchRequest) -> Self::Future {
        let exec = request.execution();
        let budget = self
            .registry
            .get(exec.name().as_str(), exec.agent())
            .and_then(|def| def.timeout());
        // Take the instance that was made ready; leave a clone behind (tower's idiom).
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let Some(budget) = budget else {
            return Box::pin(inner.oneshot(request));
        };
        Box::pin(with_deadline(inner, request, budget))
    }
}

async fn with_deadline<S>(
    inner: S,
    request: DispatchRequest,
    budget: Duration,
) -> Result<ToolResult, BoxError>
where
    S: Service<DispatchRequest, Response = ToolResult, Error = BoxError>,
{
    let upstream = request.cancellation().clone();
    let deadline = upstream.child_token();
    let call = inner.oneshot(request.with_cancellation(deadline.clone()));
    let mut call = std::pin::pin!(call);
    let sleep = tokio::time::sleep(budget);
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
    if timed_out {
        let millis = budget.as_millis();
        return Ok(ToolResult::coded(
            ErrorCode::ToolTimeout,
            format!("tool call timed out after {millis}ms"),
        ));
    }
    outcome
}
