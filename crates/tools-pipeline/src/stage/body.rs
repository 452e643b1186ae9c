//! The end of the execute waterfall: [`BodyFuture`] resolves the tool and runs its body,
//! watching the caller's token, and cancels the body's token if it is dropped unfinished.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tools_registry::{BodyCancellation, Registry, RunContext, RunHooks, ToolDefinition, ToolError};

use crate::Execution;
use crate::ToolResult;
use crate::catch::CatchUnwind;
use crate::outcome::{canonical, create_success, resolve};

pin_project! {
    /// The tool body of one call, as the execute waterfall's end.
    ///
    /// The body's token is a child of the innermost token (a wrapper's, if one replaced
    /// the caller's), so its cancellation reaches the body at once. On an execution's
    /// first dispatch under the caller's own token it is made only if the body asks for
    /// it (`body_token.rs`). A caller distinct from that token is
    /// watched while the body runs and cancels the body's token too. The body is awaited to
    /// completion by the pipeline; if a wrapper drops this future first (as
    /// `tower::timeout` does), the body's token is cancelled at once and the drop is
    /// reported through `tracing` (docs/decisions.md, entry 25).
    pub struct BodyFuture {
        #[pin]
        state: State,
        // Whether the body is running unsettled: dropping the future now cancels its
        // token. Cleared when the body settles.
        armed: bool,
    }

    impl PinnedDrop for BodyFuture {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if !*this.armed {
                return;
            }
            if let StateProj::Running { exec, fused, .. } = this.state.project() {
                // Cancelled before the body is dropped, so that work it started and
                // that outlives it sees the cancellation first.
                fused.cancel(exec);
                if !std::thread::panicking() {
                    tracing::warn!(
                        tool = %exec.name(),
                        call_id = exec.call_id(),
                        "tool {:?} ({}): the running body was dropped before it settled (a wrapper or the caller stopped polling it); its cancellation token is cancelled",
                        exec.name().as_str(),
                        exec.call_id()
                    );
                }
            }
        }
    }
}

pin_project! {
    #[project = StateProj]
    enum State {
        Settled {
            result: Option<ToolResult>,
        },
        Running {
            #[pin]
            body: CatchUnwind<tools_registry::BodyFuture>,
            #[pin]
            caller: Option<WaitForCancellationFutureOwned>,
            // The tool resolved at dispatch; `None`: the execution's prepared tool.
            def: Option<ToolDefinition>,
            exec: Arc<Execution>,
            fused: Fused,
        },
    }
}

/// The body's token.
#[derive(Clone)]
enum Fused {
    /// The execution's own, made when the body asks for it (its first dispatch under the
    /// caller's token).
    OnDemand,
    /// Made for this dispatch (under a wrapper's token, or a later dispatch of the same
    /// execution, as a retry makes).
    Made(CancellationToken),
}

impl Fused {
    fn cancel(&self, exec: &Execution) {
        match self {
            Fused::OnDemand => exec.state.body_token.cancel(),
            Fused::Made(token) => token.cancel(),
        }
    }

    fn is_cancelled(&self, exec: &Execution) -> bool {
        match self {
            Fused::OnDemand => exec.is_body_cancelled(),
            Fused::Made(token) => token.is_cancelled(),
        }
    }
}

impl BodyFuture {
    /// Resolves the tool now (a tool removed since the call was prepared is
    /// `UNKNOWN_TOOL`) and starts its body with `wrapper`'s token, unless a token is
    /// already cancelled (`ABORTED_BEFORE_DISPATCH`).
    pub(crate) fn new(
        registry: &Registry,
        exec: Arc<Execution>,
        wrapper: Option<CancellationToken>,
    ) -> BodyFuture {
        let settled = |result: ToolResult, exec: &Execution| BodyFuture {
            state: State::Settled {
                result: Some(canonical(result, exec)),
            },
            armed: false,
        };
        // Without a wrapper that replaced it, the request's token is the caller's own: one
        // token to check and watch, not two (`==` is identity for tokens).
        let same = wrapper.is_some() && exec.caller == wrapper;
        if exec.is_cancelled() || (!same && wrapper.as_ref().is_some_and(|w| w.is_cancelled())) {
            return settled(ToolResult::aborted_before_dispatch(), &exec);
        }
        // The tool prepare found, unless the registry changed since (a tool removed since
        // is `UNKNOWN_TOOL`): one atomic load instead of a second lookup. It is borrowed
        // from the execution (`def: None`): a clone would write its reference count, which
        // the calls of the tool on every worker share.
        let prepared =
            exec.state.finalizer.is_some() && registry.generation() == exec.state.resolved_in;
        let def = if prepared {
            None
        } else {
            let Some(def) = resolve(registry, &exec) else {
                return settled(ToolResult::unknown_tool(exec.name().as_str()), &exec);
            };
            Some(def)
        };
        let Some(tool) = running_tool(def.as_ref(), &exec) else {
            return settled(ToolResult::unknown_tool(exec.name().as_str()), &exec);
        };
        // Read after the body by the same call's later stages (`cancel_success`).
        exec.state.body_invoked.store(true, Ordering::Release);
        // The token descends from the caller's unless a wrapper replaced it: only then is
        // a token made now, as for a later dispatch of the same execution.
        let own = wrapper.is_none() || same;
        let (fused, ctx) = if own && exec.state.body_token.claim() {
            let source = Arc::clone(&exec) as Arc<dyn BodyCancellation>;
            (Fused::OnDemand, RunContext::on_demand(source))
        } else {
            let hooks = Arc::clone(&exec) as Arc<dyn RunHooks>;
            let token = wrapper
                .as_ref()
                .map_or_else(CancellationToken::new, CancellationToken::child_token);
            (Fused::Made(token.clone()), RunContext::new(hooks, token))
        };
        let body = CatchUnwind::new(tool.call(exec.arguments().clone(), ctx));
        let caller = match &exec.caller {
            Some(caller) if !same => Some(caller.clone().cancelled_owned()),
            _ => None,
        };
        BodyFuture {
            armed: true,
            state: State::Running {
                body,
                caller,
                def,
                exec,
                fused,
            },
        }
    }
}

/// The tool a body runs: the one resolved again at dispatch, else the execution's prepared
/// one (`None` only when neither exists, which `BodyFuture::new` settles before starting).
fn running_tool<'a>(
    resolved: Option<&'a ToolDefinition>,
    exec: &'a Execution,
) -> Option<&'a ToolDefinition> {
    resolved.or(exec.definition())
}

impl Future for BodyFuture {
    type Output = Result<ToolResult, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.state.project() {
            StateProj::Settled { result } => Poll::Ready(Ok(result
                .take()
                .unwrap_or_else(ToolResult::aborted_before_dispatch))),
            StateProj::Running {
                mut body,
                mut caller,
                def,
                exec,
                fused,
            } => loop {
                if let Poll::Ready(outcome) = body.as_mut().poll(cx) {
                    // Settled: nothing to cancel when this future is dropped.
                    *this.armed = false;
                    let result = match outcome {
                        Err(panic) => ToolResult::failure(ToolError::from_panic(&*panic)),
                        Ok(Err(error)) => ToolResult::failure(error),
                        Ok(Ok(value)) => match running_tool(def.as_ref(), exec)
                            .map(|tool| create_success(tool, exec, value))
                        {
                            None => ToolResult::unknown_tool(exec.name().as_str()),
                            Some(Err(error)) => ToolResult::failure(error),
                            Some(Ok(_)) if fused.is_cancelled(exec) => ToolResult::aborted(),
                            Some(Ok(success)) => success,
                        },
                    };
                    return Poll::Ready(Ok(canonical(result, exec)));
                }
                let Some(watch) = caller.as_mut().as_pin_mut() else {
                    return Poll::Pending;
                };
                if watch.poll(cx).is_pending() {
                    return Poll::Pending;
                }
                // The caller cancelled: cancel the body's token and let the body see it.
                caller.set(None);
                fused.cancel(exec);
            },
        }
    }
}

impl fmt::Debug for BodyFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyFuture")
            .field("running", &self.armed)
            .finish()
    }
}
