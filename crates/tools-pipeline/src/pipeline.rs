//! The pipeline handle: hook registration, the stages as methods, `execute`, and the
//! `tower::Service<ToolCall>` impl.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use tools_json::JsonValue;
use tools_registry::{ExecutionMode, Registry};
use tower::Service;

use crate::call::Arguments;
use crate::hook::chain::Hook;
use crate::hook::options::HookOptions;
use crate::hook::set::{Hooked, Observer};
use crate::shared::Shared;
use crate::stage::complete::{Pending, complete};
use crate::stage::dispatch::dispatch;
use crate::stage::prepare::{Decided, Prepared, Ready, decide, resume};
use crate::{
    Approval, ApprovalOutcome, DispatchRequest, Execution, PostRequest, PreRequest, ToolCall,
    ToolResult,
};

/// The guarded execution path of tool calls.
///
/// Cheap to clone (a handle), `Send + Sync`. Hooks can be added and removed at any time:
/// every call takes one snapshot of the hooks when it starts, so a hook added while a call
/// is in flight applies from the next call, and adding or removing a hook never rebuilds
/// another (a tower layer's service is built once, when it is registered).
///
/// As a [`tower::Service<ToolCall>`] it never fails (`Error = Infallible`): every failure
/// is an error [`ToolResult`].
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_pipeline::{Pipeline, PreDecision, PreNext, PreRequest, ToolCall, ToolError, from_fn};
/// use tools_registry::{OutputDecl, Registry, ToolDefinition};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.register(
///     ToolDefinition::builder("echo", "Echo the text back.")
///         .output(OutputDecl::text(json!({"type": "string"})))
///         .body(|args, _ctx| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) })
///         .build()?,
/// )?.keep();
/// let pipeline = Pipeline::new(registry);
/// pipeline.on_pre_execute(from_fn(|req: PreRequest, next: PreNext| async move {
///     if req.execution().arguments().get("text").is_none() {
///         return Ok(PreDecision::Deny("say something".into()));
///     }
///     next.run(req).await
/// })).keep();
///
/// let ok = pipeline.execute(ToolCall::new("c1", "echo", json!({"text": "hi"}))?).await;
/// assert_eq!(ok.text(), "hi");
/// let denied = pipeline.execute(ToolCall::new("c2", "echo", json!({}))?).await;
/// assert_eq!(denied.error_code(), Some(tools_pipeline::ErrorCode::Denied));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Pipeline {
    shared: Arc<Shared>,
}

impl Pipeline {
    /// A pipeline over `registry`, with no hooks and no approval service.
    pub fn new(registry: Registry) -> Pipeline {
        let shared = Arc::new(Shared::new(registry));
        // Session approvals die with their scope.
        let weak = Arc::downgrade(&shared);
        let listener = shared.registry.on_change(move |change| {
            if let tools_registry::Change::ScopeDisposed { scope } = change
                && let Some(shared) = weak.upgrade()
            {
                shared.approval_store().forget_scope(*scope);
            }
        });
        *shared
            .scope_listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(listener);
        Pipeline { shared }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// A handle that does not keep the pipeline alive: what a tool stored in the
    /// pipeline's own registry (the Code Mode transport) holds to call back into it
    /// without a reference cycle.
    pub fn downgrade(&self) -> WeakPipeline {
        WeakPipeline {
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// Installs (or removes) the service that answers `ask` decisions.
    pub fn set_approval(&self, approval: Option<Arc<dyn Approval>>) {
        self.shared.set_approval(approval);
    }

    /// Whether an earlier answer "for the session" or "always" covers `request` (a batch
    /// scheduler leaves such calls out of its one question; their start then finds the
    /// answer by itself).
    pub fn remembers(&self, request: &crate::ApprovalRequest) -> bool {
        self.shared
            .approval_store()
            .is_approved(&request.agent, &request.key)
    }

    /// Replaces where approvals for the session and for always are remembered (default: a
    /// [`crate::MemoryApprovalStore`]).
    pub fn set_approval_store(&self, store: Arc<dyn crate::ApprovalStore>) {
        self.shared.set_approval_store(store);
    }

    /// Adds a pre-execute hook (the waterfall's default decision: allow); see
    /// [`crate::from_fn`] and [`crate::layer`].
    pub fn on_pre_execute(&self, hook: impl Hook<PreRequest>) -> Hooked {
        self.on_pre_execute_with(HookOptions::new(), hook)
    }

    /// Adds a pre-execute hook with options (scope, prepend, condition).
    pub fn on_pre_execute_with(&self, options: HookOptions, hook: impl Hook<PreRequest>) -> Hooked {
        self.shared.hooks.add(options, Arc::new(hook))
    }

    /// Adds an around-dispatch hook: a [`crate::from_fn`] wrapper, or any tower middleware
    /// through [`crate::layer`] (`tower::timeout`, `tower::retry`, `tower::limit`, …). The
    /// waterfall ends in the tool body.
    pub fn on_execute(&self, hook: impl Hook<DispatchRequest>) -> Hooked {
        self.on_execute_with(HookOptions::new(), hook)
    }

    /// Adds an around-dispatch hook with options.
    pub fn on_execute_with(
        &self,
        options: HookOptions,
        hook: impl Hook<DispatchRequest>,
    ) -> Hooked {
        self.shared.hooks.add(options, Arc::new(hook))
    }

    /// Adds a post-execute hook (the waterfall's default decision: accept).
    pub fn on_post_execute(&self, hook: impl Hook<PostRequest>) -> Hooked {
        self.on_post_execute_with(HookOptions::new(), hook)
    }

    /// Adds a post-execute hook with options.
    pub fn on_post_execute_with(
        &self,
        options: HookOptions,
        hook: impl Hook<PostRequest>,
    ) -> Hooked {
        self.shared.hooks.add(options, Arc::new(hook))
    }

    /// Adds a result observer: called once per published result, in registration order;
    /// it cannot change the result, and a panic in it is reported through `tracing` and
    /// does not affect the other observers.
    pub fn on_result(
        &self,
        observer: impl Fn(&Execution, &ToolResult) + Send + Sync + 'static,
    ) -> Hooked {
        self.on_result_with(HookOptions::new(), observer)
    }

    /// Adds a result observer with options (a scope; `prepend` puts it first).
    pub fn on_result_with(
        &self,
        options: HookOptions,
        observer: impl Fn(&Execution, &ToolResult) + Send + Sync + 'static,
    ) -> Hooked {
        self.shared
            .hooks
            .add_observer(options, Arc::new(observer) as Observer)
    }

    /// Installs the test probe (feature `test-util`).
    #[cfg(feature = "test-util")]
    pub(crate) fn set_probe(&self, probe: crate::shared::ProbeFn) {
        self.shared.set_probe(probe);
    }

    /// Whether `call` may overlap with its siblings (see
    /// [`tools_registry::View::execution_mode`]). Arguments that are not lossless JSON make
    /// the call exclusive.
    ///
    /// Converts wire arguments on every call; a scheduler that goes on to run the call uses
    /// [`Pipeline::classify`], which converts them once for both.
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        let converted;
        let args = match &call.arguments {
            Arguments::Json(args) => args,
            Arguments::Wire(raw) => match JsonValue::new(raw.clone()) {
                Ok(args) => {
                    converted = args;
                    &converted
                }
                Err(_) => return ExecutionMode::Exclusive,
            },
            Arguments::Refused(_) => return ExecutionMode::Exclusive,
        };
        self.mode_of(call, args)
    }

    /// As [`Pipeline::execution_mode`], taking the call's wire arguments across the lossless
    /// boundary in place first (once: later classifications and the prepare stage reuse the
    /// snapshot). Arguments the boundary refuses make the call exclusive, and its prepare
    /// stage reports them exactly as it would have.
    pub fn classify(&self, call: &mut ToolCall) -> ExecutionMode {
        call.arguments.snapshot();
        match &call.arguments {
            Arguments::Json(args) => self.mode_of(call, args),
            Arguments::Wire(_) | Arguments::Refused(_) => ExecutionMode::Exclusive,
        }
    }

    fn mode_of(&self, call: &ToolCall, args: &JsonValue) -> ExecutionMode {
        self.shared.registry.with_view(call.agent.as_ref(), |view| {
            view.execution_mode(call.name(), args, call.parent.is_some())
        })
    }

    /// Runs one call through every stage: prepare, dispatch, complete. Never fails.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call: a started body is dropped with it (and its
    /// token cancelled). Cancel through the call's token instead, which the pipeline
    /// honours at every check point and which lets a started body finish.
    pub async fn execute(&self, call: ToolCall) -> ToolResult {
        match self.prepare(call).await {
            Prepared::Dispatch(ready) => {
                let pending = self.dispatch(ready).await;
                self.complete(pending).await
            }
            Prepared::Settled(pending) => self.complete(pending).await,
        }
    }

    /// The prepare stage: creates the execution (identity, argument snapshot, collapse and
    /// pre-abort checks), runs the pre-execute waterfall and the guards, and for an `ask`
    /// that a person would answer first the guards and the tool's argument check, then the
    /// approval service (approval comes last: nobody is asked about a call that could never
    /// run). Equal to [`Pipeline::decide`] then [`Pipeline::resume`].
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn prepare(&self, call: ToolCall) -> Prepared {
        let decided = self.decide(call).await;
        self.resume(decided, None).await
    }

    /// The first half of [`Pipeline::prepare`]: creates the execution and runs the
    /// pre-execute waterfall. A scheduler that wants to ask one approval for several calls
    /// decides them all, asks about those whose [`Decided::approval_request`] is `Some` (a
    /// call its guards deny or whose arguments are invalid has none), and resumes each with
    /// its answer, or without one when it asked nothing.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn decide(&self, call: ToolCall) -> Decided {
        decide(&self.shared, call).await
    }

    /// The second half of [`Pipeline::prepare`]: runs the guards and resolves `ask` (with
    /// `answer` when the caller already asked, else through the installed approval service,
    /// after the guards and the tool's argument check; see [`Decided::approval_request`]),
    /// then the last cancellation check. A denial is `DENIED`; arguments that fail the check
    /// before a question are `INVALID_ARGS`, as the body would have answered; an `ask` that
    /// is refused, cancelled, unanswerable or whose service fails is `APPROVAL_DENIED`.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn resume(&self, decided: Decided, answer: Option<ApprovalOutcome>) -> Prepared {
        resume(&self.shared, decided, answer).await
    }

    /// The dispatch stage: the execute waterfall around the tool body, then normalization,
    /// deferred contexts and the caller-cancellation check. The only stage that may overlap
    /// with other calls.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn dispatch(&self, ready: Ready) -> Pending {
        dispatch(&self.shared, ready).await
    }

    /// The completion stage: the post-execute waterfall (for results that take it), then
    /// materialization, `finalize_content` exactly once, and the result observers.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn complete(&self, pending: Pending) -> ToolResult {
        complete(&self.shared, pending).await
    }
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [pre, execute, post, observers] = self.shared.hooks.counts();
        f.debug_struct("Pipeline")
            .field("pre_execute", &pre)
            .field("execute", &execute)
            .field("post_execute", &post)
            .field("observers", &observers)
            .finish_non_exhaustive()
    }
}

impl Service<ToolCall> for Pipeline {
    type Response = ToolResult;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<ToolResult, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> Self::Future {
        let pipeline = self.clone();
        Box::pin(async move { Ok(pipeline.execute(call).await) })
    }
}

/// A non-owning handle on a [`Pipeline`] (see [`Pipeline::downgrade`]).
#[derive(Clone)]
pub struct WeakPipeline {
    shared: Weak<Shared>,
}

impl WeakPipeline {
    /// The pipeline, while something else keeps it alive.
    pub fn upgrade(&self) -> Option<Pipeline> {
        self.shared.upgrade().map(|shared| Pipeline { shared })
    }
}

impl fmt::Debug for WeakPipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakPipeline")
            .field("alive", &(self.shared.strong_count() > 0))
            .finish()
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
