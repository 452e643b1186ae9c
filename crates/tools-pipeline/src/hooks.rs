//! The three waterfalls' requests, the boxed stage services, and how registered hooks are
//! composed into stacks (once per change, never per call).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio_util::sync::CancellationToken;
use tools_registry::AgentScope;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

use crate::{Execution, PostDecision, PreDecision, ToolResult};

/// The request of the pre-execute waterfall: the execution (with the caller's token).
#[derive(Clone, Debug)]
pub struct PreRequest {
    pub(crate) exec: Arc<Execution>,
}

impl PreRequest {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

/// The request of the execute (around-dispatch) waterfall: the execution and the
/// cancellation token the body will see. A wrapper may replace the token for its delegated
/// call; the caller's token is honoured regardless (the body sees both, fused).
#[derive(Clone, Debug)]
pub struct DispatchRequest {
    pub(crate) exec: Arc<Execution>,
    pub(crate) cancel: CancellationToken,
}

impl DispatchRequest {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The token the body will see (fused with the caller's).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The same request with another token for the delegated call.
    #[must_use]
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> DispatchRequest {
        self.cancel = cancel;
        self
    }
}

/// The request of the post-execute waterfall: the execution (with the caller's token) and
/// the result so far.
#[derive(Clone, Debug)]
pub struct PostRequest {
    pub(crate) exec: Arc<Execution>,
    pub(crate) result: ToolResult,
}

impl PostRequest {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The result so far.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }
}

/// Requests that carry an execution (used to filter scoped hooks).
pub trait HasExecution {
    /// The execution.
    fn execution(&self) -> &Arc<Execution>;
}

impl HasExecution for PreRequest {
    fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

impl HasExecution for DispatchRequest {
    fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

impl HasExecution for PostRequest {
    fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

/// The pre-execute waterfall as one service.
pub type PreService = BoxCloneSyncService<PreRequest, PreDecision, BoxError>;
/// The execute waterfall as one service.
pub type DispatchService = BoxCloneSyncService<DispatchRequest, ToolResult, BoxError>;
/// The post-execute waterfall as one service.
pub type PostService = BoxCloneSyncService<PostRequest, PostDecision, BoxError>;

/// Wraps a boxed stage service in a hook.
pub(crate) type Wrap<R, T> = Arc<
    dyn Fn(BoxCloneSyncService<R, T, BoxError>) -> BoxCloneSyncService<R, T, BoxError>
        + Send
        + Sync,
>;

/// Turns a tower layer into a boxed wrapper of the stage service.
pub(crate) fn wrap_layer<R, T, L>(layer: L) -> Wrap<R, T>
where
    R: Send + 'static,
    T: Send + 'static,
    L: Layer<BoxCloneSyncService<R, T, BoxError>> + Send + Sync + 'static,
    L::Service: Service<R, Response = T> + Clone + Send + Sync + 'static,
    <L::Service as Service<R>>::Error: Into<BoxError>,
    <L::Service as Service<R>>::Future: Send + 'static,
{
    Arc::new(move |inner| BoxCloneSyncService::new(layer.layer(inner).map_err(Into::into)))
}

/// One registered hook: its id, the scope it is registered on, and the wrapper.
pub(crate) struct Hook<R, T> {
    pub(crate) id: u64,
    pub(crate) scope: Option<AgentScope>,
    pub(crate) wrap: Wrap<R, T>,
    /// Set for a hook registered with [`crate::HookOptions::active_when`].
    pub(crate) condition: Option<crate::pipeline::Condition>,
}

impl<R, T> Clone for Hook<R, T> {
    fn clone(&self) -> Self {
        Hook {
            id: self.id,
            scope: self.scope.clone(),
            wrap: Arc::clone(&self.wrap),
            condition: self.condition.clone(),
        }
    }
}

/// Composes `hooks` (first = outermost) around `terminal`.
pub(crate) fn compose<R, T>(
    hooks: &[Hook<R, T>],
    terminal: BoxCloneSyncService<R, T, BoxError>,
) -> BoxCloneSyncService<R, T, BoxError>
where
    R: HasExecution + Send + 'static,
    T: Send + 'static,
{
    let mut service = terminal;
    for hook in hooks.iter().rev() {
        let hooked = (hook.wrap)(service.clone());
        service = match &hook.scope {
            None => hooked,
            Some(scope) => BoxCloneSyncService::new(Scoped {
                scope: scope.clone(),
                hooked,
                bypass: service,
            }),
        };
    }
    service
}

/// A scoped hook: calls through the hook only for executions whose agent chain contains
/// the scope, and straight to the inner stack otherwise.
struct Scoped<R, T> {
    scope: AgentScope,
    hooked: BoxCloneSyncService<R, T, BoxError>,
    bypass: BoxCloneSyncService<R, T, BoxError>,
}

// Written by hand: a derive would require `R: Clone` and `T: Clone`.
impl<R, T> Clone for Scoped<R, T> {
    fn clone(&self) -> Self {
        Scoped {
            scope: self.scope.clone(),
            hooked: self.hooked.clone(),
            bypass: self.bypass.clone(),
        }
    }
}

impl<R: HasExecution + Send + 'static, T: Send + 'static> Service<R> for Scoped<R, T> {
    type Response = T;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Readiness is acquired per call below (`oneshot` on a clone).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        let service = if request.execution().is_seen_by(Some(&self.scope)) {
            self.hooked.clone()
        } else {
            self.bypass.clone()
        };
        Box::pin(service.oneshot(request))
    }
}

/// A waterfall listener written as an async function of the request and the rest of the
/// chain; see [`from_fn`].
#[derive(Clone)]
pub struct FnLayer<F> {
    f: F,
}

/// A listener as an async closure `(request, next) -> Result<response, BoxError>`: call
/// `next.run(request)` to delegate to the rest of the chain (ending in the stage's default),
/// or return without calling it to short-circuit. Calling `next` twice runs the downstream
/// chain twice (tower semantics).
///
/// # Examples
///
/// ```
/// use tools_pipeline::{PreDecision, PreRequest, from_fn};
///
/// // Deny every call to `bash`; let everything else through.
/// let no_bash = from_fn(|request: PreRequest, next: tools_pipeline::Next<PreRequest, PreDecision>| async move {
///     if request.execution().name().as_str() == "bash" {
///         return Ok(PreDecision::Deny("bash is disabled here".into()));
///     }
///     next.run(request).await
/// });
/// # let _ = no_bash;
/// ```
pub fn from_fn<F>(f: F) -> FnLayer<F> {
    FnLayer { f }
}

impl<F> fmt::Debug for FnLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnLayer").finish_non_exhaustive()
    }
}

impl<F: Clone, S> Layer<S> for FnLayer<F> {
    type Service = FnService<F, S>;

    fn layer(&self, inner: S) -> Self::Service {
        FnService {
            f: self.f.clone(),
            inner,
        }
    }
}

/// The service of an [`FnLayer`].
pub struct FnService<F, S> {
    f: F,
    inner: S,
}

// Written by hand to keep the bounds to `F: Clone, S: Clone`.
impl<F: Clone, S: Clone> Clone for FnService<F, S> {
    fn clone(&self) -> Self {
        FnService {
            f: self.f.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<F, S> fmt::Debug for FnService<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnService").finish_non_exhaustive()
    }
}

/// The rest of a waterfall, as seen by an [`from_fn`] listener.
pub struct Next<R, T> {
    inner: BoxCloneSyncService<R, T, BoxError>,
}

impl<R: Send + 'static, T: Send + 'static> Next<R, T> {
    /// Runs the rest of the chain with `request`.
    ///
    /// # Errors
    ///
    /// What the rest of the chain fails with.
    pub async fn run(&self, request: R) -> Result<T, BoxError> {
        self.inner.clone().oneshot(request).await
    }
}

impl<R, T> fmt::Debug for Next<R, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

impl<F, Fut, R, T> Service<R> for FnService<F, BoxCloneSyncService<R, T, BoxError>>
where
    F: Fn(R, Next<R, T>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
    R: Send + 'static,
    T: Send + 'static,
{
    type Response = T;
    type Error = BoxError;
    type Future = Fut;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Fut {
        let next = Next {
            inner: self.inner.clone(),
        };
        (self.f)(request, next)
    }
}
