//! The chain a waterfall's hooks form: the [`Hook`] trait, [`Next`] (the rest of the chain,
//! consumed by [`Next::run`]) and the snapshot of registered hooks it walks by index.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tools_registry::{AgentScope, ToolError};

use crate::Execution;
use crate::hook::options::Condition;

/// The boxed future a [`Hook`] returns.
pub type HookFuture<T> = Pin<Box<dyn Future<Output = Result<T, ToolError>> + Send>>;

pub(crate) mod sealed {
    use std::future::Future;
    use std::sync::Arc;

    use tools_registry::ToolError;

    use crate::Execution;

    /// What the chain needs from a waterfall's request; unnameable outside the crate, so
    /// only the three waterfalls' requests are [`super::Request`]s.
    pub trait Sealed: Send + Sized + 'static {
        /// What the waterfall answers.
        type Response: Send + 'static;
        /// The future of the waterfall's end (its default, or the tool body).
        type Terminal: Future<Output = Result<Self::Response, ToolError>> + Send;
        /// Runs the waterfall's end.
        fn terminal(self) -> Self::Terminal;
        /// The execution (for scoped hooks).
        fn execution_ref(&self) -> &Arc<Execution>;
        /// The token that cancels this request's work: for the execute waterfall the one
        /// the body will see, else the caller's.
        fn cancel_ref(&self) -> Option<&tokio_util::sync::CancellationToken> {
            self.execution_ref().caller.as_ref()
        }
        /// Where a tower layer's request carries the rest of the chain.
        fn next_slot(&mut self) -> &mut Option<super::Next<Self>>
        where
            Self: super::Request;
    }
}

/// The request of one of the three waterfalls: [`crate::PreRequest`],
/// [`crate::DispatchRequest`] or [`crate::PostRequest`]. Sealed.
pub trait Request: sealed::Sealed {}

/// One hook of a waterfall: gets the request and the rest of the chain, and answers by
/// calling [`Next::run`] (delegate) or not (short-circuit).
///
/// Closures `Fn(request, next) -> impl Future<Output = Result<response, ToolError>>` become
/// hooks through [`crate::from_fn`]; tower layers through [`crate::layer`]. Implement it by
/// hand for a hook with its own state and no closure.
pub trait Hook<R: Request>: Send + Sync + 'static {
    /// Handles one request.
    fn call(&self, request: R, next: Next<R>) -> HookFuture<R::Response>;
}

/// One registered hook with its filters.
pub(crate) struct Entry<R: Request> {
    pub(crate) id: u64,
    pub(crate) hook: Arc<dyn Hook<R>>,
    pub(crate) scope: Option<AgentScope>,
    pub(crate) condition: Option<Condition>,
}

impl<R: Request> Clone for Entry<R> {
    fn clone(&self) -> Self {
        Entry {
            id: self.id,
            hook: Arc::clone(&self.hook),
            scope: self.scope.clone(),
            condition: self.condition.clone(),
        }
    }
}

impl<R: Request> Entry<R> {
    /// Whether a call of `exec` goes through this hook now.
    fn applies(&self, exec: &Execution) -> bool {
        exec.is_seen_by(self.scope.as_ref()) && self.condition.as_ref().is_none_or(|on| on())
    }
}

/// A waterfall's hooks as one immutable snapshot (outermost first). Each thread slot's
/// copy of the snapshot has its own (see [`crate::hook::set::Stacks`]), aligned so that
/// two copies' reference counts never share a cache line.
#[repr(align(128))]
pub(crate) struct Stack<R: Request> {
    pub(crate) hooks: Box<[Entry<R>]>,
}

impl<R: Request> Stack<R> {
    pub(crate) fn new(hooks: Box<[Entry<R>]>) -> Arc<Stack<R>> {
        Arc::new(Stack { hooks })
    }

    /// The first hook at or after position `from` that applies to `exec`, with its
    /// position (each hook's condition is evaluated once).
    fn first_applying(&self, from: usize, exec: &Execution) -> Option<(usize, &Entry<R>)> {
        self.hooks
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, entry)| entry.applies(exec))
    }
}

/// The rest of a waterfall, as a hook sees it: the hooks after it and then the waterfall's
/// end (its default decision, or the tool body for the execute waterfall).
///
/// [`Next::run`] consumes it, so the rest of the chain runs at most once per hook call; a
/// hook that means to run it again (a retry) clones it first. Cheap to clone (a shared
/// snapshot and an index).
pub struct Next<R: Request> {
    stack: Arc<Stack<R>>,
    index: usize,
}

impl<R: Request> Clone for Next<R> {
    fn clone(&self) -> Self {
        Next {
            stack: Arc::clone(&self.stack),
            index: self.index,
        }
    }
}

impl<R: Request> fmt::Debug for Next<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field(
                "remaining_hooks",
                &self.stack.hooks.len().saturating_sub(self.index),
            )
            .finish()
    }
}

impl<R: Request> Next<R> {
    /// Runs the whole chain of `stack` with `request`. The stack is cloned only for the
    /// `Next` of a hook that applies: a call that no hook applies to (an empty waterfall,
    /// or hooks of other scopes or switched off) goes straight to the end without writing
    /// the stack's reference count, which the calls on every worker share.
    pub(crate) fn run_stack(stack: &Arc<Stack<R>>, request: R) -> NextFuture<R> {
        let Some((index, entry)) = stack.first_applying(0, request.execution_ref()) else {
            return NextFuture::end(request);
        };
        let next = Next {
            stack: Arc::clone(stack),
            index: index + 1,
        };
        NextFuture::hook(entry.hook.call(request, next))
    }

    /// Runs the rest of the chain with `request`: the next hook that applies to the call
    /// (scope and condition), or the waterfall's end.
    pub fn run(self, request: R) -> NextFuture<R> {
        let Some((index, entry)) = self
            .stack
            .first_applying(self.index, request.execution_ref())
        else {
            return NextFuture::end(request);
        };
        // The stack is cloned, not the hook: the stack is this thread slot's copy, while
        // the hook's reference count is the same for the calls on every worker.
        let next = Next {
            stack: Arc::clone(&self.stack),
            index: index + 1,
        };
        NextFuture::hook(entry.hook.call(request, next))
    }
}

pin_project! {
    /// The future of [`Next::run`]: the next hook's, or the waterfall's end.
    pub struct NextFuture<R: Request> {
        #[pin]
        inner: NextInner<R>,
    }
}

pin_project! {
    #[project = NextProj]
    enum NextInner<R: Request> {
        Hook {
            #[pin]
            future: HookFuture<R::Response>,
        },
        End {
            #[pin]
            future: R::Terminal,
        },
    }
}

impl<R: Request> NextFuture<R> {
    /// The future of a hook's call.
    fn hook(future: HookFuture<R::Response>) -> Self {
        NextFuture {
            inner: NextInner::Hook { future },
        }
    }

    /// The waterfall's end for `request`.
    fn end(request: R) -> Self {
        NextFuture {
            inner: NextInner::End {
                future: request.terminal(),
            },
        }
    }
}

impl<R: Request> Future for NextFuture<R> {
    type Output = Result<R::Response, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().inner.project() {
            NextProj::Hook { future } => future.poll(cx),
            NextProj::End { future } => future.poll(cx),
        }
    }
}

impl<R: Request> fmt::Debug for NextFuture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.inner {
            NextInner::Hook { .. } => "NextFuture::Hook",
            NextInner::End { .. } => "NextFuture::End",
        })
    }
}
