//! The pipeline: hook registration, the three stages, and `execute`.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::task::{Context, Poll};

use serde_json::Value;
use tools_json::{ErrorCode, JsonValue, Limits};
use tools_presentation::ContentBlock;
use tools_registry::{
    AgentScope, CallInfo, ExecutionMode, ExecutionToken, Registry, RunContext, ToolContext,
    ToolDefinition, ToolError,
};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

use crate::call::{Arguments, ExecState};
use crate::catch::CatchUnwind;
use crate::hooks::{DispatchService, Hook, PostService, PreService, Wrap, compose, wrap_layer};
use crate::result::{Outcome, blocked_message};
use crate::{
    Approval, ApprovalOutcome, ApprovalRequest, DispatchRequest, Execution, PostDecision,
    PostRequest, PreDecision, PreRequest, Replacement, ToolCall, ToolResult,
};

/// A result observer: sees every published result, cannot change it.
pub type Observer = Arc<dyn Fn(&Execution, &ToolResult) + Send + Sync>;

/// When a hook takes part in calls; see [`HookOptions::active_when`].
pub type Condition = Arc<dyn Fn() -> bool + Send + Sync>;

/// Where a hook is registered.
#[derive(Clone, Default)]
pub struct HookOptions {
    scope: Option<AgentScope>,
    prepend: bool,
    condition: Option<Condition>,
}

impl fmt::Debug for HookOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookOptions")
            .field("scope", &self.scope)
            .field("prepend", &self.prepend)
            .field("conditional", &self.condition.is_some())
            .finish()
    }
}

impl HookOptions {
    /// Unscoped, appended (innermost of the hooks so far).
    pub fn new() -> HookOptions {
        HookOptions::default()
    }

    /// Only calls whose agent chain contains `scope` go through the hook.
    #[must_use]
    pub fn scope(mut self, scope: &AgentScope) -> HookOptions {
        self.scope = Some(scope.clone());
        self
    }

    /// Insert the hook before every other (outermost).
    #[must_use]
    pub fn prepend(mut self) -> HookOptions {
        self.prepend = true;
        self
    }

    /// A promise that the hook is a pure pass-through whenever `condition` is `false`: the
    /// pipeline may then leave it out of the stack for that call, and saves the cost of the
    /// layer (a boxed future and a service clone per call). The hook keeps its place in
    /// its waterfall: while the condition holds, calls go through it exactly as if it had
    /// no condition.
    ///
    /// `condition` runs once per call and stage, before the stage, so it must be cheap (an
    /// atomic load). With several conditional hooks in one waterfall, a call goes through
    /// all of them as soon as one condition holds. The timeout policy of `tools-runtime`
    /// uses it with [`tools_registry::Registry::has_timeouts`].
    ///
    /// Only the waterfalls (pre-execute, execute, post-execute) read it: a result observer
    /// registered with these options always runs.
    #[must_use]
    pub fn active_when(
        mut self,
        condition: impl Fn() -> bool + Send + Sync + 'static,
    ) -> HookOptions {
        self.condition = Some(Arc::new(condition));
        self
    }
}

/// The guarded execution path of tool calls.
///
/// Cheap to clone (a handle), `Send + Sync`. Hooks can be added and removed at any time;
/// the composed stacks are rebuilt when the set changes and every call takes a snapshot of
/// them, so a hook added while a call is in flight applies from the next call.
///
/// As a [`tower::Service<ToolCall>`] it never fails (`Error = Infallible`): every failure
/// is an error [`ToolResult`].
#[derive(Clone)]
pub struct Pipeline {
    shared: Arc<Shared>,
}

/// A stage a call entered, as reported to the test probe.
#[cfg(feature = "test-util")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Pre,
    Execute,
    Post,
    Published,
}

#[cfg(feature = "test-util")]
pub(crate) type ProbeFn = Arc<dyn Fn(&Execution, Probe) + Send + Sync>;

struct Shared {
    #[cfg(feature = "test-util")]
    probe: RwLock<Option<ProbeFn>>,
    /// Set once a probe is installed: calls without one skip the lock.
    #[cfg(feature = "test-util")]
    probing: std::sync::atomic::AtomicBool,
    registry: Registry,
    hooks: Mutex<HookSet>,
    stacks: RwLock<Arc<Stacks>>,
    approval: RwLock<Option<Arc<dyn Approval>>>,
    next_id: AtomicU64,
    weak: Weak<Shared>,
}

#[derive(Default)]
struct HookSet {
    pre: Vec<Hook<PreRequest, PreDecision>>,
    dispatch: Vec<Hook<DispatchRequest, ToolResult>>,
    post: Vec<Hook<PostRequest, PostDecision>>,
    observers: Vec<(u64, Option<AgentScope>, Observer)>,
}

/// The composed stacks, shared by the calls that started while they were current.
struct Stacks {
    pre: Waterfall<PreService>,
    dispatch: Waterfall<DispatchService>,
    post: Waterfall<PostService>,
    observers: Arc<[(Option<AgentScope>, Observer)]>,
}

impl Pipeline {
    /// A pipeline over `registry`, with no hooks and no approval service.
    pub fn new(registry: Registry) -> Pipeline {
        let shared = Arc::new_cyclic(|weak: &Weak<Shared>| Shared {
            #[cfg(feature = "test-util")]
            probe: RwLock::new(None),
            #[cfg(feature = "test-util")]
            probing: std::sync::atomic::AtomicBool::new(false),
            registry: registry.clone(),
            hooks: Mutex::new(HookSet::default()),
            stacks: RwLock::new(Arc::new(build_stacks(&HookSet::default(), &registry))),
            approval: RwLock::new(None),
            next_id: AtomicU64::new(1),
            weak: weak.clone(),
        });
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
        *self
            .shared
            .approval
            .write()
            .unwrap_or_else(PoisonError::into_inner) = approval;
    }

    /// Adds a pre-execute layer (default decision: allow).
    pub fn on_pre_execute<L>(&self, layer: L) -> Hooked
    where
        L: Layer<PreService> + Send + Sync + 'static,
        L::Service: Service<PreRequest, Response = PreDecision> + Clone + Send + Sync + 'static,
        <L::Service as Service<PreRequest>>::Error: Into<BoxError>,
        <L::Service as Service<PreRequest>>::Future: Send + 'static,
    {
        self.on_pre_execute_with(HookOptions::new(), layer)
    }

    /// Adds a pre-execute layer with options (scope, prepend).
    pub fn on_pre_execute_with<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<PreService> + Send + Sync + 'static,
        L::Service: Service<PreRequest, Response = PreDecision> + Clone + Send + Sync + 'static,
        <L::Service as Service<PreRequest>>::Error: Into<BoxError>,
        <L::Service as Service<PreRequest>>::Future: Send + 'static,
    {
        let wrap = wrap_layer(layer);
        self.add(
            options,
            |set, hook| insert(&mut set.pre, hook),
            wrap,
            Kind::Pre,
        )
    }

    /// Adds an around-dispatch layer (any tower middleware whose error converts into
    /// `BoxError`: `tower::timeout`, `tower::retry`, `tower::limit`, …).
    pub fn on_execute<L>(&self, layer: L) -> Hooked
    where
        L: Layer<DispatchService> + Send + Sync + 'static,
        L::Service: Service<DispatchRequest, Response = ToolResult> + Clone + Send + Sync + 'static,
        <L::Service as Service<DispatchRequest>>::Error: Into<BoxError>,
        <L::Service as Service<DispatchRequest>>::Future: Send + 'static,
    {
        self.on_execute_with(HookOptions::new(), layer)
    }

    /// Adds an around-dispatch layer with options.
    pub fn on_execute_with<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<DispatchService> + Send + Sync + 'static,
        L::Service: Service<DispatchRequest, Response = ToolResult> + Clone + Send + Sync + 'static,
        <L::Service as Service<DispatchRequest>>::Error: Into<BoxError>,
        <L::Service as Service<DispatchRequest>>::Future: Send + 'static,
    {
        let wrap = wrap_layer(layer);
        self.add(
            options,
            |set, hook| insert(&mut set.dispatch, hook),
            wrap,
            Kind::Dispatch,
        )
    }

    /// Adds a post-execute layer (default decision: accept).
    pub fn on_post_execute<L>(&self, layer: L) -> Hooked
    where
        L: Layer<PostService> + Send + Sync + 'static,
        L::Service: Service<PostRequest, Response = PostDecision> + Clone + Send + Sync + 'static,
        <L::Service as Service<PostRequest>>::Error: Into<BoxError>,
        <L::Service as Service<PostRequest>>::Future: Send + 'static,
    {
        self.on_post_execute_with(HookOptions::new(), layer)
    }

    /// Adds a post-execute layer with options.
    pub fn on_post_execute_with<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<PostService> + Send + Sync + 'static,
        L::Service: Service<PostRequest, Response = PostDecision> + Clone + Send + Sync + 'static,
        <L::Service as Service<PostRequest>>::Error: Into<BoxError>,
        <L::Service as Service<PostRequest>>::Future: Send + 'static,
    {
        let wrap = wrap_layer(layer);
        self.add(
            options,
            |set, hook| insert(&mut set.post, hook),
            wrap,
            Kind::Post,
        )
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
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut set = self
                .shared
                .hooks
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let entry = (id, options.scope, Arc::new(observer) as Observer);
            if options.prepend {
                set.observers.insert(0, entry);
            } else {
                set.observers.push(entry);
            }
            self.shared.rebuild(&set);
        }
        Hooked::new(&self.shared, Kind::Observer, id)
    }

    fn add<R, T>(
        &self,
        options: HookOptions,
        insert_into: impl FnOnce(&mut HookSet, (Hook<R, T>, bool)),
        wrap: Wrap<R, T>,
        kind: Kind,
    ) -> Hooked {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let hook = Hook {
            id,
            scope: options.scope,
            condition: options.condition,
            wrap,
        };
        {
            let mut set = self
                .shared
                .hooks
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            insert_into(&mut set, (hook, options.prepend));
            self.shared.rebuild(&set);
        }
        Hooked::new(&self.shared, kind, id)
    }

    /// Installs the test probe (feature `test-util`).
    #[cfg(feature = "test-util")]
    pub(crate) fn set_probe(&self, probe: ProbeFn) {
        *self
            .shared
            .probe
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(probe);
        self.shared.probing.store(true, Ordering::Release);
    }

    #[cfg(feature = "test-util")]
    fn probe(&self, exec: &Execution, stage: Probe) {
        if !self.shared.probing.load(Ordering::Acquire) {
            return;
        }
        let probe = self
            .shared
            .probe
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(probe) = probe {
            probe(exec, stage);
        }
    }

    fn stacks(&self) -> Arc<Stacks> {
        Arc::clone(
            &self
                .shared
                .stacks
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
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
        self.shared
            .registry
            .view(call.agent.as_ref())
            .execution_mode(call.name(), args, call.parent.is_some())
    }

    /// Runs one call through every stage: prepare, dispatch, complete. Never fails.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call: a started body is dropped with it. Cancel
    /// through the call's token instead, which the pipeline honours at every check point
    /// and which lets a started body finish.
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
    /// pre-abort checks), runs the pre-execute waterfall, the approval service for `ask`,
    /// and the guards. Equal to [`Pipeline::decide`] then [`Pipeline::resume`].
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
    /// decides them all, asks about those whose [`Decided::approval_request`] is `Some`, and
    /// resumes each with its answer.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn decide(&self, call: ToolCall) -> Decided {
        let registry = &self.shared.registry;
        let view = registry.view(call.agent.as_ref());
        let visible = view.get(call.name()).cloned();
        let has_parent = call.parent.is_some();
        let collapsed = visible.is_some() && view.collapses(call.name(), has_parent);
        let pre_aborted = call.cancel.is_cancelled();
        let (arguments, arguments_error) = match call.arguments {
            Arguments::Json(args) => (args, None),
            Arguments::Refused(err) => (JsonValue::null(), Some(err)),
            Arguments::Wire(raw) => {
                match JsonValue::with_limits_at(raw, &Limits::default(), "arguments") {
                    Ok(args) => (args, None),
                    Err(err) => (JsonValue::null(), Some(err)),
                }
            }
        };
        let finalizer = if collapsed && !pre_aborted {
            None
        } else {
            visible
        };
        let root_call_id = call
            .root_call_id
            .unwrap_or_else(|| Arc::clone(&call.call_id));
        let exec = Arc::new(Execution {
            info: Arc::new(CallInfo {
                root_call_id: Arc::clone(&root_call_id),
                call_id: call.call_id,
                tool: call.name,
                token: ExecutionToken::mint(),
                agent: call.agent,
                parent: call.parent,
                arguments,
            }),
            root_call_id,
            arguments_ok: arguments_error.is_none(),
            caller: call.cancel,
            state: ExecState {
                finalizer,
                ..ExecState::default()
            },
        });
        let settle = |result: ToolResult, post: bool| {
            Decided(DecidedInner::Settled(Pending::new(
                Arc::clone(&exec),
                result,
                post,
            )))
        };

        if let Some(err) = arguments_error {
            let message =
                format!("tool execution arguments must be losslessly JSON-serializable: {err}");
            return settle(ToolResult::failure(ToolError::new(message)), false);
        }
        if collapsed {
            let name = exec.name();
            let result = if pre_aborted {
                ToolResult::aborted_before_dispatch()
            } else {
                ToolResult::coded(
                    ErrorCode::UnknownTool,
                    format!(
                        "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
                    ),
                )
            };
            return settle(result, false);
        }
        if pre_aborted {
            return settle(ToolResult::aborted_before_dispatch(), false);
        }

        let stacks = self.stacks();
        #[cfg(feature = "test-util")]
        self.probe(&exec, Probe::Pre);
        let request = PreRequest {
            exec: Arc::clone(&exec),
        };
        let decision = match stacks.pre.pick() {
            None => PreDecision::Allow,
            Some(pre) => match CatchUnwind::new(pre.clone().oneshot(request)).await {
                Ok(Ok(decision)) => decision,
                Ok(Err(err)) => return settle(ToolResult::failure(tool_error(err)), false),
                Err(panic) => {
                    return settle(ToolResult::failure(ToolError::from_panic(&*panic)), false);
                }
            },
        };
        Decided(DecidedInner::Open {
            exec,
            view,
            decision,
        })
    }

    /// The second half of [`Pipeline::prepare`]: resolves `ask` (with `answer` when the
    /// caller already asked, else through the installed approval service), runs the guards
    /// and the last cancellation check.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn resume(&self, decided: Decided, answer: Option<ApprovalOutcome>) -> Prepared {
        let (exec, view, decision) = match decided.0 {
            DecidedInner::Settled(pending) => return Prepared::Settled(pending),
            DecidedInner::Open {
                exec,
                view,
                decision,
            } => (exec, view, decision),
        };
        let settle = |result: ToolResult, post: bool| {
            Prepared::Settled(Pending::new(Arc::clone(&exec), result, post))
        };
        let (decision, approval_cancelled) = match (decision, answer) {
            (PreDecision::Ask(_), Some(outcome)) => outcome_decision(exec.name().as_str(), outcome),
            (PreDecision::Ask(reason), None) => match self.ask(&exec, reason).await {
                Ok(resolved) => resolved,
                Err(err) => return settle(ToolResult::failure(err), false),
            },
            (other, _) => (other, false),
        };
        if approval_cancelled && exec.caller.is_cancelled() {
            return settle(ToolResult::aborted_before_dispatch(), true);
        }
        let reason = match decision {
            PreDecision::Allow => match run_guards(&view, &exec) {
                Ok(reason) => reason,
                Err(err) => return settle(ToolResult::failure(err), false),
            },
            PreDecision::Deny(reason) => Some(reason),
            PreDecision::Ask(reason) => Some(reason.unwrap_or_default()),
        };
        if let Some(reason) = reason {
            return settle(ToolResult::failure(ToolError::new(reason)), true);
        }
        if exec.caller.is_cancelled() {
            return settle(ToolResult::aborted_before_dispatch(), true);
        }
        Prepared::Dispatch(Ready { exec })
    }

    /// Resolves `ask`: `(decision, approval reported cancellation)`.
    async fn ask(
        &self,
        exec: &Arc<Execution>,
        reason: Option<String>,
    ) -> Result<(PreDecision, bool), ToolError> {
        let name = exec.name().to_string();
        let approval = self
            .shared
            .approval
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(approval) = approval else {
            let reason = reason.unwrap_or_else(|| {
                format!("tool {name:?} requires approval (no approval service is installed)")
            });
            return Ok((PreDecision::Deny(reason), false));
        };
        let Some(agent) = exec.agent().cloned() else {
            return Ok((
                PreDecision::Deny(format!(
                    "tool {name:?} requires approval, but the call has no agent to route it through"
                )),
                false,
            ));
        };
        let request = ApprovalRequest {
            agent,
            tool: exec.name().clone(),
            call_id: Arc::clone(&exec.info.call_id),
            reason,
            cancel: exec.caller.clone(),
        };
        let outcome = match CatchUnwind::new(approval.request(request)).await {
            Ok(outcome) => outcome?,
            Err(panic) => return Err(ToolError::from_panic(&*panic)),
        };
        Ok(outcome_decision(&name, outcome))
    }

    /// The dispatch stage: the execute waterfall around the tool body, then normalization,
    /// deferred contexts and the caller-cancellation check. The only stage that may overlap
    /// with other calls.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn dispatch(&self, ready: Ready) -> Pending {
        let exec = ready.exec;
        let stacks = self.stacks();
        #[cfg(feature = "test-util")]
        self.probe(&exec, Probe::Execute);
        let request = DispatchRequest {
            exec: Arc::clone(&exec),
            cancel: exec.caller.clone(),
        };
        let outcome = match stacks.dispatch.pick() {
            None => Ok(Ok(run_body(&self.shared.registry, request).await)),
            Some(dispatch) => CatchUnwind::new(dispatch.clone().oneshot(request)).await,
        };
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => return Pending::new(exec, ToolResult::failure(tool_error(err)), false),
            Err(panic) => {
                return Pending::new(
                    exec,
                    ToolResult::failure(ToolError::from_panic(&*panic)),
                    false,
                );
            }
        };
        let result = match normalize(&self.shared.registry, &exec, result) {
            Ok(result) => result,
            Err(err) => return Pending::new(exec, ToolResult::failure(err), false),
        };
        let deferred: Vec<ToolContext> = std::mem::take(
            &mut *exec
                .state
                .deferred
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let result = if deferred.is_empty() {
            result
        } else {
            let mut contexts = deferred;
            contexts.extend(result.contexts().iter().cloned());
            keep_provenance(result, |r| r.with_contexts(contexts), &exec)
        };
        let result = cancel_success(&exec, result);
        Pending::new(exec, result, true)
    }

    /// The completion stage: the post-execute waterfall (for results that take it), then
    /// materialization, `finalize_content` exactly once, and the result observers.
    ///
    /// # Cancel safety
    ///
    /// See [`Pipeline::execute`].
    pub async fn complete(&self, pending: Pending) -> ToolResult {
        let (exec, mut result, post) = pending.take();
        if post {
            let stacks = self.stacks();
            #[cfg(feature = "test-util")]
            self.probe(&exec, Probe::Post);
            if let Some(post) = stacks.post.pick() {
                let request = PostRequest {
                    exec: Arc::clone(&exec),
                    result: result.clone(),
                };
                result = match CatchUnwind::new(post.clone().oneshot(request)).await {
                    Ok(Ok(decision)) => {
                        match apply_decision(&self.shared.registry, &exec, result, decision) {
                            Ok(result) => result,
                            Err(err) => ToolResult::failure(err),
                        }
                    }
                    Ok(Err(err)) => ToolResult::failure(tool_error(err)),
                    Err(panic) => ToolResult::failure(ToolError::from_panic(&*panic)),
                };
            }
            result = cancel_success(&exec, result);
        }
        self.finish(&exec, result)
    }

    /// Materialization, `finalize_content` and publication.
    fn finish(&self, exec: &Arc<Execution>, result: ToolResult) -> ToolResult {
        let mut result = if result_lossless(&result) {
            result
        } else {
            ToolResult::failure(ToolError::new(
                "tool result must be losslessly JSON-serializable",
            ))
        };
        if let Some(def) = &exec.state.finalizer {
            match def.finalize(&exec.info, &result.view()) {
                Ok(None) => {}
                Ok(Some(content)) => {
                    if content_lossless(&content) {
                        result = result.with_content_kept_provenance(content);
                    } else {
                        result = ToolResult::failure(ToolError::new(
                            "finalize_content returned content that is not losslessly JSON-serializable",
                        ));
                    }
                }
                Err(err) => {
                    result = ToolResult::failure(ToolError::new(format!(
                        "finalize_content failed: {err}"
                    )));
                }
            }
        }
        #[cfg(feature = "test-util")]
        self.probe(exec, Probe::Published);
        let stacks = self.stacks();
        for (scope, observer) in stacks.observers.iter() {
            if !exec.is_seen_by(scope.as_ref()) {
                continue;
            }
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| observer(exec, &result))) {
                let error = ToolError::from_panic(&*panic);
                tracing::warn!(
                    tool = %exec.name(),
                    call_id = exec.call_id(),
                    "tool {:?} ({}): result observer failed: {error}",
                    exec.name().as_str(),
                    exec.call_id()
                );
            }
        }
        result
    }
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self
            .shared
            .hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Pipeline")
            .field("pre_execute", &set.pre.len())
            .field("execute", &set.dispatch.len())
            .field("post_execute", &set.post.len())
            .field("observers", &set.observers.len())
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

/// The answer of an approval as a decision: `(decision, the approval reported
/// cancellation)`.
fn outcome_decision(name: &str, outcome: ApprovalOutcome) -> (PreDecision, bool) {
    match outcome {
        ApprovalOutcome::AllowedOnce => (PreDecision::Allow, false),
        ApprovalOutcome::Rejected => (
            PreDecision::Deny(format!("the user rejected tool {name:?}")),
            false,
        ),
        ApprovalOutcome::Cancelled => (
            PreDecision::Deny(format!("approval for tool {name:?} was cancelled")),
            true,
        ),
        ApprovalOutcome::Unavailable => (
            PreDecision::Deny(format!(
                "tool {name:?} requires approval, but no approval channel is available"
            )),
            false,
        ),
    }
}

/// A call whose pre-execute decision is known: the result of [`Pipeline::decide`].
#[must_use = "a decided call must be resumed"]
pub struct Decided(DecidedInner);

enum DecidedInner {
    Settled(Pending),
    Open {
        exec: Arc<Execution>,
        view: Arc<tools_registry::View>,
        decision: PreDecision,
    },
}

impl Decided {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        match &self.0 {
            DecidedInner::Settled(pending) => pending.execution(),
            DecidedInner::Open { exec, .. } => exec,
        }
    }

    /// The pre-execute decision, unless the call already settled (a collapse, a
    /// cancellation, a failing hook).
    pub fn decision(&self) -> Option<&PreDecision> {
        match &self.0 {
            DecidedInner::Settled(_) => None,
            DecidedInner::Open { decision, .. } => Some(decision),
        }
    }

    /// The approval request this call needs: `Some` when the decision is `ask` and the call
    /// has an agent to route the question through.
    pub fn approval_request(&self) -> Option<ApprovalRequest> {
        let DecidedInner::Open {
            exec,
            decision: PreDecision::Ask(reason),
            ..
        } = &self.0
        else {
            return None;
        };
        Some(ApprovalRequest {
            agent: exec.agent()?.clone(),
            tool: exec.name().clone(),
            call_id: Arc::clone(&exec.info.call_id),
            reason: reason.clone(),
            cancel: exec.caller.clone(),
        })
    }
}

impl fmt::Debug for Decided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decided")
            .field("execution", self.execution())
            .field("decision", &self.decision())
            .finish()
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

/// The outcome of [`Pipeline::prepare`].
#[derive(Debug)]
#[must_use = "a prepared call must be dispatched or completed, or its result is never published"]
pub enum Prepared {
    /// The call is allowed: dispatch it.
    Dispatch(Ready),
    /// The call already has its result (a denial, a cancellation, a failure): complete it.
    Settled(Pending),
}

impl Prepared {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        match self {
            Prepared::Dispatch(ready) => &ready.exec,
            Prepared::Settled(pending) => &pending.exec,
        }
    }
}

/// A prepared call that is allowed to run. Only [`Pipeline::prepare`] makes one.
#[derive(Debug)]
#[must_use = "a ready call must be dispatched"]
pub struct Ready {
    exec: Arc<Execution>,
}

impl Ready {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

/// A call with a candidate result, waiting for [`Pipeline::complete`]. Only the pipeline's
/// stages make one; dropping it without completing it means the result is never published
/// (reported through `tracing`).
#[must_use = "a pending call must be completed, or its result is never published"]
pub struct Pending {
    exec: Arc<Execution>,
    result: Option<ToolResult>,
    post: bool,
}

impl Pending {
    fn new(exec: Arc<Execution>, result: ToolResult, post: bool) -> Pending {
        Pending {
            exec,
            result: Some(result),
            post,
        }
    }

    /// Consumes the pending call for completion.
    fn take(mut self) -> (Arc<Execution>, ToolResult, bool) {
        let result = self
            .result
            .take()
            .unwrap_or_else(ToolResult::aborted_before_dispatch);
        (Arc::clone(&self.exec), result, self.post)
    }

    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The candidate result (before post-execute and finalization).
    pub fn candidate(&self) -> Option<&ToolResult> {
        self.result.as_ref()
    }

    /// Whether the post-execute waterfall will run.
    pub fn takes_post_execute(&self) -> bool {
        self.post
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.result.is_some() && !std::thread::panicking() {
            tracing::warn!(
                tool = %self.exec.name(),
                call_id = self.exec.call_id(),
                "a pending tool call was dropped without being completed; its result is not published"
            );
        }
    }
}

impl fmt::Debug for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("exec", &self.exec)
            .field("result", &self.result)
            .field("post", &self.post)
            .finish()
    }
}

/// A hook registration; dropping it (or [`Hooked::dispose`]) removes the hook for the calls
/// that start afterwards. [`Hooked::keep`] keeps it for the pipeline's lifetime.
#[must_use = "dropping a Hooked removes the hook at once; call .keep() to make it permanent"]
pub struct Hooked {
    shared: Weak<Shared>,
    kind: Kind,
    id: u64,
    armed: AtomicBool,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Pre,
    Dispatch,
    Post,
    Observer,
}

impl Hooked {
    fn new(shared: &Shared, kind: Kind, id: u64) -> Hooked {
        Hooked {
            shared: shared.weak.clone(),
            kind,
            id,
            armed: AtomicBool::new(true),
        }
    }

    /// Removes the hook now. Idempotent.
    pub fn dispose(&self) {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return;
        }
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut set = shared.hooks.lock().unwrap_or_else(PoisonError::into_inner);
        let id = self.id;
        match self.kind {
            Kind::Pre => set.pre.retain(|h| h.id != id),
            Kind::Dispatch => set.dispatch.retain(|h| h.id != id),
            Kind::Post => set.post.retain(|h| h.id != id),
            Kind::Observer => set.observers.retain(|(other, _, _)| *other != id),
        }
        shared.rebuild(&set);
    }

    /// Keeps the hook for the pipeline's lifetime.
    pub fn keep(self) {
        self.armed.store(false, Ordering::SeqCst);
    }
}

impl Drop for Hooked {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl fmt::Debug for Hooked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooked")
            .field("kind", &self.kind)
            .field("armed", &self.armed.load(Ordering::SeqCst))
            .finish()
    }
}

fn insert<R, T>(list: &mut Vec<Hook<R, T>>, (hook, prepend): (Hook<R, T>, bool)) {
    if prepend {
        list.insert(0, hook);
    } else {
        list.push(hook);
    }
}

impl Shared {
    fn rebuild(&self, set: &HookSet) {
        let stacks = Arc::new(build_stacks(set, &self.registry));
        *self.stacks.write().unwrap_or_else(PoisonError::into_inner) = stacks;
    }
}

fn build_stacks(set: &HookSet, registry: &Registry) -> Stacks {
    let pre_default: PreService =
        BoxCloneSyncService::new(tower::service_fn(|_: PreRequest| async {
            Ok::<_, BoxError>(PreDecision::Allow)
        }));
    let post_default: PostService =
        BoxCloneSyncService::new(tower::service_fn(|_: PostRequest| async {
            Ok::<_, BoxError>(PostDecision::accept())
        }));
    let body: DispatchService = BoxCloneSyncService::new(BodyService {
        registry: registry.clone(),
    });
    Stacks {
        pre: Waterfall::build(&set.pre, pre_default),
        dispatch: Waterfall::build(&set.dispatch, body),
        post: Waterfall::build(&set.post, post_default),
        observers: set
            .observers
            .iter()
            .map(|(_, scope, observer)| (scope.clone(), Arc::clone(observer)))
            .collect(),
    }
}

/// One waterfall's composed stacks. A waterfall without hooks is its default: the stage
/// skips the service machinery (`None`).
struct Waterfall<S> {
    /// Every hook.
    full: Option<S>,
    /// Without the conditional hooks (only built when there are some).
    base: Option<S>,
    /// The conditions of the conditional hooks.
    conditions: Box<[Condition]>,
}

impl<R, T> Waterfall<BoxCloneSyncService<R, T, BoxError>>
where
    R: crate::HasExecution + Send + 'static,
    T: Send + 'static,
{
    fn build(hooks: &[Hook<R, T>], terminal: BoxCloneSyncService<R, T, BoxError>) -> Self {
        let conditions: Box<[Condition]> =
            hooks.iter().filter_map(|h| h.condition.clone()).collect();
        let base = if conditions.is_empty() {
            None
        } else {
            let unconditional: Vec<Hook<R, T>> = hooks
                .iter()
                .filter(|h| h.condition.is_none())
                .cloned()
                .collect();
            (!unconditional.is_empty()).then(|| compose(&unconditional, terminal.clone()))
        };
        Waterfall {
            full: (!hooks.is_empty()).then(|| compose(hooks, terminal)),
            base,
            conditions,
        }
    }

    /// The stack a call starting now goes through.
    fn pick(&self) -> Option<&BoxCloneSyncService<R, T, BoxError>> {
        if self.conditions.is_empty() || self.conditions.iter().any(|active| active()) {
            self.full.as_ref()
        } else {
            self.base.as_ref()
        }
    }
}

/// The innermost service of the execute waterfall: resolves the tool and runs its body.
#[derive(Clone)]
struct BodyService {
    registry: Registry,
}

impl Service<DispatchRequest> for BodyService {
    type Response = ToolResult;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ToolResult, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: DispatchRequest) -> Self::Future {
        let registry = self.registry.clone();
        Box::pin(async move { Ok(run_body(&registry, request).await) })
    }
}

async fn run_body(registry: &Registry, request: DispatchRequest) -> ToolResult {
    let DispatchRequest {
        exec,
        cancel: wrapper,
    } = request;
    let caller = &exec.caller;
    // Without a wrapper that replaced it, the request's token is the caller's own: one token
    // to check and watch, not two (`==` is identity for tokens).
    let same = wrapper == *caller;
    if caller.is_cancelled() || (!same && wrapper.is_cancelled()) {
        return canonical(ToolResult::aborted_before_dispatch(), &exec);
    }
    let Some(def) = resolve(registry, &exec) else {
        return canonical(ToolResult::unknown_tool(exec.name().as_str()), &exec);
    };
    exec.state.body_invoked.store(true, Ordering::SeqCst);
    // The body's token is a child of the innermost token (the wrapper's, else the
    // caller's), so that token's cancellation reaches the body at once, not at the body's
    // next poll: work the body drives within one poll (a Code Mode run's sub-calls) sees
    // it. A wrapper's token normally descends from the caller's (`child_token`), which
    // makes the caller's cancellation immediate too; the caller is still watched below for
    // a wrapper token that does not.
    let fused = wrapper.child_token();
    let ctx = RunContext::new(
        Arc::clone(&exec.info),
        fused.clone(),
        Arc::clone(&exec) as Arc<dyn tools_registry::RunHooks>,
    );
    let mut body = std::pin::pin!(CatchUnwind::new(def.call(exec.arguments().clone(), ctx)));
    // The body is awaited to completion; a caller distinct from the wrapper is watched
    // meanwhile and cancels the body's (fused) token.
    let mut caller_seen = same;
    let outcome = loop {
        tokio::select! {
            biased;
            outcome = &mut body => break outcome,
            () = caller.cancelled(), if !caller_seen => {
                caller_seen = true;
                fused.cancel();
            }
        }
    };
    let result = match outcome {
        Err(panic) => ToolResult::failure(ToolError::from_panic(&*panic)),
        Ok(Err(error)) => ToolResult::failure(error),
        Ok(Ok(value)) => match create_success(&def, &exec, value) {
            Err(error) => ToolResult::failure(error),
            Ok(_) if fused.is_cancelled() => ToolResult::aborted(),
            Ok(success) => success,
        },
    };
    canonical(result, &exec)
}

/// Marks a result as created by the pipeline for `exec`.
fn canonical(result: ToolResult, exec: &Execution) -> ToolResult {
    result.with_provenance(exec.token())
}

fn keep_provenance(
    result: ToolResult,
    change: impl FnOnce(ToolResult) -> ToolResult,
    exec: &Execution,
) -> ToolResult {
    let was = result.is_canonical_for(exec.token());
    let changed = change(result);
    if was {
        canonical(changed, exec)
    } else {
        changed
    }
}

/// The definition a call resolves to now: visible and not collapsed.
fn resolve(registry: &Registry, exec: &Execution) -> Option<ToolDefinition> {
    let view = registry.view(exec.agent());
    let name = exec.name().as_str();
    if view.collapses(name, exec.parent().is_some()) {
        return None;
    }
    view.get(name).cloned()
}

fn invalid_output(exec: &Execution, detail: impl fmt::Display) -> ToolError {
    ToolError::with_code(
        ErrorCode::InvalidToolOutput,
        format!(
            "tool {:?} returned invalid output: {detail}",
            exec.name().as_str()
        ),
    )
}

/// Creates a success result from a candidate value (§2.4).
fn create_success(
    def: &ToolDefinition,
    exec: &Execution,
    value: Value,
) -> Result<ToolResult, ToolError> {
    let limits = Limits::default().with_max_depth(def.output().max_depth());
    let value = JsonValue::with_limits(value, &limits).map_err(|e| {
        invalid_output(
            exec,
            format!(
                "value is not lossless JSON ({})",
                e.violations()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )
    })?;
    let violations = def.output().schema().validate(&value, "value");
    if !violations.is_empty() {
        return Err(invalid_output(exec, violations));
    }
    let args = exec.arguments();
    let content = def
        .output()
        .render(args, &value)
        .map_err(|e| invalid_output(exec, format!("output.render failed: {e}")))?;
    if !content_lossless(&content) {
        return Err(invalid_output(
            exec,
            "output.render returned non-lossless JSON",
        ));
    }
    let meta = if exec.parent().is_none() {
        match def.output().presentation_meta(args, &value) {
            None => None,
            Some(Err(e)) => {
                return Err(invalid_output(
                    exec,
                    format!("output.presentation_meta failed: {e}"),
                ));
            }
            Some(Ok(meta)) => Some(JsonValue::new(meta).map_err(|_| {
                invalid_output(exec, "output.presentation_meta returned non-lossless JSON")
            })?),
        }
    } else {
        None
    };
    let concludes_turn = exec.state.concluded.load(Ordering::SeqCst);
    Ok(ToolResult::build(
        Outcome::Success {
            value,
            concludes_turn,
        },
        content,
        meta,
        Vec::new(),
        Some(exec.token()),
    ))
}

/// Normalizes what the execute waterfall returned (§2.5).
fn normalize(
    registry: &Registry,
    exec: &Execution,
    result: ToolResult,
) -> Result<ToolResult, ToolError> {
    if result.is_canonical_for(exec.token()) || result.is_error() {
        return Ok(result);
    }
    let def = resolve(registry, exec).ok_or_else(|| {
        ToolError::with_code(
            ErrorCode::UnknownTool,
            format!("unknown tool {:?}", exec.name().as_str()),
        )
    })?;
    let value = result
        .value()
        .map(|v| tools_json::clone_deep(v))
        .unwrap_or(Value::Null);
    let success = create_success(&def, exec, value)?;
    Ok(keep_provenance(
        success,
        |s| s.with_contexts(result.contexts().to_vec()),
        exec,
    ))
}

/// Replaces a success by the cancellation result when the caller has cancelled (§2.9),
/// keeping the contexts.
fn cancel_success(exec: &Execution, result: ToolResult) -> ToolResult {
    if result.is_error() || !exec.caller.is_cancelled() {
        return result;
    }
    let cancelled = if exec.state.body_invoked.load(Ordering::SeqCst) {
        ToolResult::aborted()
    } else {
        ToolResult::aborted_before_dispatch()
    };
    cancelled.with_contexts(result.contexts().to_vec())
}

/// Applies a post-execute decision (§2.7).
fn apply_decision(
    registry: &Registry,
    exec: &Execution,
    result: ToolResult,
    decision: PostDecision,
) -> Result<ToolResult, ToolError> {
    match decision {
        PostDecision::Block { feedback, contexts } => {
            let message = blocked_message(&feedback);
            Ok(
                ToolResult::failure_with_content(ToolError::new(message), feedback)
                    .with_contexts(contexts),
            )
        }
        PostDecision::Accept {
            replace: None,
            contexts,
        } if contexts.is_empty() => Ok(result),
        PostDecision::Accept { replace, contexts } => {
            let mut all = result.contexts().to_vec();
            all.extend(contexts);
            match replace {
                None => Ok(result.with_contexts(all)),
                Some(Replacement::Content(content)) => Ok(result
                    .with_content_kept_provenance(content)
                    .with_contexts(all)),
                Some(Replacement::Value(value)) => {
                    if result.is_error() {
                        return Err(ToolError::new(
                            "a post-execute decision cannot replace the value of a failed result",
                        ));
                    }
                    let def = resolve(registry, exec).ok_or_else(|| {
                        ToolError::with_code(
                            ErrorCode::UnknownTool,
                            format!("unknown tool {:?}", exec.name().as_str()),
                        )
                    })?;
                    Ok(create_success(&def, exec, value)?.with_contexts(all))
                }
            }
        }
    }
}

/// Evaluates the guards of the view (a snapshot): the first reason denies.
fn run_guards(view: &tools_registry::View, exec: &Execution) -> Result<Option<String>, ToolError> {
    for guard in view.guards().iter() {
        match catch_unwind(AssertUnwindSafe(|| guard.check(&exec.info))) {
            Ok(None) => {}
            Ok(Some(reason)) => return Ok(Some(reason)),
            Err(panic) => return Err(ToolError::from_panic(&*panic)),
        }
    }
    Ok(None)
}

/// The failure of a waterfall's error: a [`ToolError`] keeps its code; a stock
/// `tower::timeout` elapse becomes `TOOL_TIMEOUT`; anything else is a plain message.
fn tool_error(error: BoxError) -> ToolError {
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

fn content_lossless(content: &[ContentBlock]) -> bool {
    content.iter().all(|block| match block {
        ContentBlock::Other(other) => other.as_object().values().all(tools_json::is_lossless),
        _ => true,
    })
}

fn result_lossless(result: &ToolResult) -> bool {
    content_lossless(result.content())
        && result
            .contexts()
            .iter()
            .all(|c| content_lossless(&c.content))
}
