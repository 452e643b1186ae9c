//! Hooks written as async functions: [`from_fn`] and [`from_fn_with_state`], axum's idiom.

use std::fmt;
use std::future::Future;

use tools_registry::ToolError;

use crate::hook::chain::{Hook, HookFuture, Next, Request};

/// A hook written as an async function of the request and the rest of the chain; see
/// [`from_fn`].
#[derive(Clone)]
pub struct FromFn<F> {
    f: F,
}

impl<F> fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn").finish_non_exhaustive()
    }
}

/// A hook from an async closure or `async fn` of `(request, next)`: call
/// `next.run(request).await` to delegate to the rest of the chain (the later hooks, then the
/// waterfall's default or the tool body), or return without calling it to short-circuit.
/// [`Next`] is consumed by `run`, so the rest of the chain runs at most once unless the hook
/// clones `next` on purpose.
///
/// The waterfall is inferred from where the hook is registered: a pass-through closure needs
/// no annotation, and a closure that looks at the request names its type once
/// (`|req: PreRequest, next| …`); an `async fn` names both (`PreNext`, `DispatchNext`,
/// `PostNext` are the aliases of `next`'s type).
///
/// Per call, a hook costs one boxed future.
///
/// # Examples
///
/// ```
/// use tools_pipeline::{Pipeline, PreDecision, PreNext, PreRequest, ToolError, from_fn};
/// # let pipeline = Pipeline::new(tools_registry::Registry::new());
///
/// // A pass-through: no annotations.
/// pipeline.on_execute(from_fn(|req, next| async move { next.run(req).await })).keep();
///
/// // Deny every call to `bash`, as an async fn.
/// async fn no_bash(req: PreRequest, next: PreNext) -> Result<PreDecision, ToolError> {
///     if req.execution().name().as_str() == "bash" {
///         return Ok(PreDecision::Deny("bash is disabled here".into()));
///     }
///     next.run(req).await
/// }
/// pipeline.on_pre_execute(from_fn(no_bash)).keep();
/// ```
pub fn from_fn<F, R, Fut>(f: F) -> FromFn<F>
where
    R: Request,
    F: Fn(R, Next<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Response, ToolError>> + Send + 'static,
{
    FromFn { f }
}

impl<F, R, Fut> Hook<R> for FromFn<F>
where
    R: Request,
    F: Fn(R, Next<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Response, ToolError>> + Send + 'static,
{
    fn call(&self, request: R, next: Next<R>) -> HookFuture<R::Response> {
        Box::pin((self.f)(request, next))
    }
}

/// A hook with shared state, as axum's `from_fn_with_state`: `f(state, request, next)`
/// receives a clone of `state` per call.
#[derive(Clone)]
pub struct FromFnWithState<S, F> {
    state: S,
    f: F,
}

impl<S, F> fmt::Debug for FromFnWithState<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFnWithState").finish_non_exhaustive()
    }
}

/// A hook from an async function of `(state, request, next)`; `state` is cloned for each
/// call (share mutable state through an `Arc`).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use tools_pipeline::{DispatchNext, DispatchRequest, Pipeline, ToolError, ToolResult, from_fn_with_state};
/// # let pipeline = Pipeline::new(tools_registry::Registry::new());
///
/// async fn count(
///     calls: Arc<AtomicU64>,
///     req: DispatchRequest,
///     next: DispatchNext,
/// ) -> Result<ToolResult, ToolError> {
///     calls.fetch_add(1, Ordering::Relaxed);
///     next.run(req).await
/// }
/// let calls = Arc::new(AtomicU64::new(0));
/// pipeline.on_execute(from_fn_with_state(calls.clone(), count)).keep();
/// ```
pub fn from_fn_with_state<S, F, R, Fut>(state: S, f: F) -> FromFnWithState<S, F>
where
    S: Clone + Send + Sync + 'static,
    R: Request,
    F: Fn(S, R, Next<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Response, ToolError>> + Send + 'static,
{
    FromFnWithState { state, f }
}

impl<S, F, R, Fut> Hook<R> for FromFnWithState<S, F>
where
    S: Clone + Send + Sync + 'static,
    R: Request,
    F: Fn(S, R, Next<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Response, ToolError>> + Send + 'static,
{
    fn call(&self, request: R, next: Next<R>) -> HookFuture<R::Response> {
        Box::pin((self.f)(self.state.clone(), request, next))
    }
}
