//! Tower layers as hooks: [`layer`] applies a `tower::Layer` once, at registration, around
//! [`Continue`] (the service that runs the rest of the chain), and keeps the built service
//! for every later call.

use std::fmt;
use std::future::{Future, poll_fn};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tools_json::ErrorCode;
use tools_registry::ToolError;
use tower::{BoxError, Layer, Service};

use crate::hook::chain::{Hook, HookFuture, Next, NextFuture, Request};

/// A tower `Layer` registered as a hook; see [`layer`].
pub struct LayerHook<S, R> {
    service: Arc<tokio::sync::Mutex<S>>,
    _request: PhantomData<fn(R)>,
}

impl<S, R> fmt::Debug for LayerHook<S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LayerHook").finish_non_exhaustive()
    }
}

/// A tower layer as a hook of the waterfall it is registered in.
///
/// The layer is applied **once**, here, around [`Continue`]; the built service is kept for
/// every later call, so its state (a concurrency limit's semaphore, a rate limiter's
/// window, a circuit breaker's counts) survives every hook added or removed later. Any
/// service fits, `Clone` or not: the hook keeps it behind an async mutex, held only while
/// the service gets ready and its `call` returns its future (never while that future runs).
/// Readiness is therefore taken in arrival order, which is what a limiter wants; the cost
/// is one lock per call (held only while the service gets ready, so calls on several
/// threads contend for it only that long), and one boxed future. A hook written with
/// [`crate::from_fn`] takes no lock.
///
/// While a call waits for the service to get ready (a limit's permit, a rate window), its
/// cancellation ends the wait: the call fails with `ABORTED_BEFORE_DISPATCH` and never
/// reaches the service. A `run_code` call that holds the only permit of a limit its own
/// sub-calls wait for therefore still ends when it is cancelled or times out.
///
/// The service's errors become the call's failure: a [`ToolError`] keeps its code,
/// `tower::timeout::error::Elapsed` is `TOOL_TIMEOUT`, any other error is a plain message
/// (no code).
///
/// **Layers that drop the inner future.** `tower::timeout` (and any wrapper that stops
/// polling early, e.g. a `select!` on a deadline) drops the rest of the chain when it gives
/// up. When that drops a running tool body, the body's cancellation token is cancelled at
/// once and the drop is reported through `tracing` (docs/decisions.md, entry 25); the body
/// does not keep running. Layers that only wait before calling (`ConcurrencyLimit`,
/// `RateLimit`, `Buffer`) or call again after a result (`Retry`) never drop a body. The
/// runtime's own timeout policy (`tools-runtime`) cancels the token and waits for the body
/// instead.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tools_pipeline::{Pipeline, layer};
/// # let pipeline = Pipeline::new(tools_registry::Registry::new());
///
/// pipeline.on_execute(layer(tower::limit::ConcurrencyLimitLayer::new(4))).keep();
/// pipeline.on_execute(layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)))).keep();
/// ```
pub fn layer<L, R>(layer: L) -> LayerHook<L::Service, R>
where
    R: Request,
    L: Layer<Continue<R>>,
    L::Service: Service<R, Response = R::Response> + Send + 'static,
    <L::Service as Service<R>>::Error: Into<BoxError>,
    <L::Service as Service<R>>::Future: Send + 'static,
{
    LayerHook {
        service: Arc::new(tokio::sync::Mutex::new(layer.layer(Continue::new()))),
        _request: PhantomData,
    }
}

impl<S, R> Hook<R> for LayerHook<S, R>
where
    R: Request,
    S: Service<R, Response = R::Response> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn call(&self, mut request: R, next: Next<R>) -> HookFuture<R::Response> {
        *request.next_slot() = Some(next);
        let service = Arc::clone(&self.service);
        let cancel = request.cancel_ref().cloned();
        Box::pin(async move {
            let ready = async {
                let mut service = service.lock().await;
                poll_fn(|cx| service.poll_ready(cx))
                    .await
                    .map_err(|e| layer_error(e.into()))?;
                Ok::<_, ToolError>(service.call(request))
            };
            // Waiting for readiness (a limit's permit, a rate window) gives way to the
            // call's cancellation: a call never waits on a layer after it was cancelled,
            // so a run that holds a permit its own sub-calls wait for can still end.
            let future = match cancel {
                None => ready.await?,
                Some(cancel) => tokio::select! {
                    biased;
                    () = cancel.cancelled() => {
                        return Err(ToolError::with_code(
                            ErrorCode::AbortedBeforeDispatch,
                            "tool call aborted before dispatch (cancelled while waiting for a layer)",
                        ));
                    }
                    ready = ready => ready?,
                },
            };
            future.await.map_err(|e| layer_error(e.into()))
        })
    }
}

/// The failure of a layer's error: a [`ToolError`] keeps its code; a stock `tower::timeout`
/// elapse is `TOOL_TIMEOUT`; anything else is a plain message.
pub(crate) fn layer_error(error: BoxError) -> ToolError {
    match error.downcast::<ToolError>() {
        Ok(error) => *error,
        Err(error) => {
            if error.is::<tower::timeout::error::Elapsed>() {
                ToolError::with_code(ErrorCode::ToolTimeout, "tool call timed out")
            } else {
                ToolError::new(error.to_string())
            }
        }
    }
}

/// The service a registered layer wraps: it runs the rest of the chain (the hooks after the
/// layer, then the waterfall's end) with the request it is called with. Always ready.
pub struct Continue<R> {
    _request: PhantomData<fn(R)>,
}

impl<R> Continue<R> {
    fn new() -> Continue<R> {
        Continue {
            _request: PhantomData,
        }
    }
}

impl<R> Clone for Continue<R> {
    fn clone(&self) -> Self {
        Continue::new()
    }
}

impl<R> fmt::Debug for Continue<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Continue")
    }
}

impl<R: Request> Service<R> for Continue<R> {
    type Response = R::Response;
    type Error = ToolError;
    type Future = ContinueFuture<R>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: R) -> ContinueFuture<R> {
        match request.next_slot().take() {
            Some(next) => ContinueFuture {
                inner: ContinueInner::Run {
                    future: next.run(request),
                },
            },
            None => ContinueFuture {
                inner: ContinueInner::Lost,
            },
        }
    }
}

pin_project! {
    /// The future of [`Continue`].
    pub struct ContinueFuture<R: Request> {
        #[pin]
        inner: ContinueInner<R>,
    }
}

pin_project! {
    #[project = ContinueProj]
    enum ContinueInner<R: Request> {
        // The rest of the chain runs.
        Run {
            #[pin]
            future: NextFuture<R>,
        },
        // The request reached `Continue` without the chain it belongs to; fails at once.
        Lost,
    }
}

impl<R: Request> Future for ContinueFuture<R> {
    type Output = Result<R::Response, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().inner.project() {
            ContinueProj::Run { future } => future.poll(cx),
            ContinueProj::Lost => Poll::Ready(Err(ToolError::new(
                "a hook's request reached the rest of the chain without it (internal error)",
            ))),
        }
    }
}

impl<R: Request> fmt::Debug for ContinueFuture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContinueFuture")
    }
}
