//! The caller's input and the pipeline's execution.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_registry::{
    AgentScope, BodyCancellation, CallInfo, ExecutionToken, Progress, ProgressSink, ResolvedTool,
    RunHooks, ToolContext, ToolDefinition, ToolName,
};

use crate::stage::body_token::BodyToken;
use crate::{Approval, Error, Principal};

/// The channels back to whoever started a call: where its progress goes, and who answers
/// its `ask` in place of the pipeline's approval service.
#[derive(Clone, Default)]
pub(crate) struct Channels {
    pub(crate) progress: Option<Arc<dyn ProgressSink>>,
    pub(crate) approval: Option<Arc<dyn Approval>>,
    pub(crate) output_budget: Option<usize>,
    pub(crate) principal: Option<Arc<Principal>>,
    pub(crate) session: Option<Arc<str>>,
}

impl fmt::Debug for Channels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Channels")
            .field("progress", &self.progress.is_some())
            .field("approval", &self.approval.is_some())
            .field("output_budget", &self.output_budget)
            .field("principal", &self.principal)
            .field("session", &self.session)
            .finish()
    }
}

/// A call's arguments: as the model sent them, or an already lossless snapshot.
#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Wire(Value),
    Json(JsonValue),
    /// Wire arguments refused by the lossless boundary when a scheduler snapshotted them
    /// early ([`crate::Pipeline::classify`]); `prepare` reports the error.
    Refused(tools_json::Error),
}

impl Arguments {
    /// Takes wire arguments across the lossless boundary in place (once; no clone).
    pub(crate) fn snapshot(&mut self) {
        if let Arguments::Wire(raw) = self {
            let raw = std::mem::take(raw);
            let limits = tools_json::Limits::default();
            *self = match JsonValue::with_limits_at(raw, &limits, "arguments") {
                Ok(args) => Arguments::Json(args),
                Err(err) => Arguments::Refused(err),
            };
        }
    }
}

/// A model-issued call, as the host hands it to the pipeline.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tokio_util::sync::CancellationToken;
/// use tools_pipeline::ToolCall;
///
/// let call = ToolCall::new("call-1", "read_file", json!({"path": "/tmp/a"}))?
///     .with_cancellation(CancellationToken::new());
/// assert_eq!(call.name(), "read_file");
/// assert!(ToolCall::new("call-2", "", json!({})).is_err());
/// # Ok::<(), tools_pipeline::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub(crate) call_id: Arc<str>,
    pub(crate) root_call_id: Option<Arc<str>>,
    pub(crate) name: ToolName,
    pub(crate) arguments: Arguments,
    pub(crate) agent: Option<AgentScope>,
    pub(crate) parent: Option<ExecutionToken>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) channels: Channels,
    pub(crate) by_host: bool,
}

impl ToolCall {
    /// A call of `name` with `arguments`, never cancelled, without agent or parent.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyName`] when `name` is empty (docs/decisions.md, entry 11).
    pub fn new(
        call_id: impl Into<Arc<str>>,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCall, Error> {
        ToolCall::with_arguments(call_id.into(), name, Arguments::Wire(arguments))
    }

    fn with_arguments(
        call_id: Arc<str>,
        name: &str,
        arguments: Arguments,
    ) -> Result<ToolCall, Error> {
        let name = ToolName::new(name).map_err(|_| Error::EmptyName)?;
        Ok(ToolCall {
            call_id,
            root_call_id: None,
            name,
            arguments,
            agent: None,
            parent: None,
            cancel: None,
            channels: Channels::default(),
            by_host: false,
        })
    }

    /// A call whose arguments are already a lossless snapshot (a Code Mode sub-call): no
    /// conversion, no depth limit beyond the one the snapshot was built under.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyName`] when `name` is empty.
    pub fn from_json(
        call_id: impl Into<Arc<str>>,
        name: &str,
        arguments: JsonValue,
    ) -> Result<ToolCall, Error> {
        ToolCall::with_arguments(call_id.into(), name, Arguments::Json(arguments))
    }

    /// The call as made by `agent` (its scope decides visibility, masks, mode and hooks).
    #[must_use]
    #[inline]
    pub fn with_agent(mut self, agent: AgentScope) -> ToolCall {
        self.agent = Some(agent);
        self
    }

    /// The caller's cancellation token: cancelling it cancels the call. A scheduler that
    /// runs the call under its own token (a batch, a Code Mode run, an MCP request) fuses
    /// the two and never replaces this one (docs/decisions.md, entry 23).
    #[must_use]
    #[inline]
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> ToolCall {
        self.cancel = Some(cancel);
        self
    }

    /// Where the body's progress updates ([`tools_registry::RunContext::report_progress`])
    /// go, e.g. an MCP client's `notifications/progress`. Without one they are dropped.
    #[must_use]
    #[inline]
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> ToolCall {
        self.channels.progress = Some(sink);
        self
    }

    /// The service that answers this call's `ask` in place of the pipeline's (e.g. the MCP
    /// client that made the call, through elicitation). It gets the same request and its
    /// answer counts the same way: a refusal, cancellation or failure is `APPROVAL_DENIED`.
    #[must_use]
    #[inline]
    pub fn with_approval(mut self, approval: Arc<dyn Approval>) -> ToolCall {
        self.channels.approval = Some(approval);
        self
    }

    /// How many bytes of this call's output the model reads, in place of the runtime's and
    /// the tool's output budget (the runtime's budget hook reads it; see
    /// [`Execution::output_budget`]).
    #[must_use]
    #[inline]
    pub fn with_output_budget(mut self, bytes: usize) -> ToolCall {
        self.channels.output_budget = Some(bytes);
        self
    }

    /// The identity the call is made for (see [`Principal`]); a Code Mode sub-call
    /// inherits it with the other channels ([`ToolCall::with_channels_of`]).
    #[must_use]
    #[inline]
    pub fn with_principal(mut self, principal: Arc<Principal>) -> ToolCall {
        self.channels.principal = Some(principal);
        self
    }

    /// The client session the call came in on (an MCP session id), for audit and
    /// observability; inherited by Code Mode sub-calls like the principal.
    #[must_use]
    #[inline]
    pub fn with_session(mut self, session: impl Into<Arc<str>>) -> ToolCall {
        self.channels.session = Some(session.into());
        self
    }

    /// The same progress sink, approval service, output budget and principal as the call
    /// `ctx` belongs to (a Code Mode sub-call reports to, asks, and acts for whoever
    /// started the `run_code` call). A context the pipeline did not make gives nothing.
    #[must_use]
    #[inline]
    pub fn with_channels_of(mut self, ctx: &tools_registry::RunContext) -> ToolCall {
        if let Some(exec) = ctx
            .hooks()
            .as_any()
            .and_then(|any| any.downcast_ref::<Execution>())
        {
            self.channels = exec.channels.clone();
        }
        self
    }

    /// Marks the call as dispatched by the host itself, not issued by a model: it reaches
    /// every visible tool whatever its exposure (a hidden tool, a deferred one that was
    /// not loaded; docs/decisions.md, entry 35). Code Mode sub-calls never inherit it.
    #[must_use]
    #[inline]
    pub fn from_host(mut self) -> ToolCall {
        self.by_host = true;
        self
    }

    /// The enclosing transport execution of a Code Mode sub-call.
    #[must_use]
    #[inline]
    pub fn with_parent(mut self, parent: ExecutionToken) -> ToolCall {
        self.parent = Some(parent);
        self
    }

    /// The id of the model call this one descends from (defaults to the call id).
    #[must_use]
    #[inline]
    pub fn with_root_call_id(mut self, root: impl Into<Arc<str>>) -> ToolCall {
        self.root_call_id = Some(root.into());
        self
    }

    /// The called tool's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The wire arguments, as the call was made with them (`None` for a call made with
    /// [`ToolCall::from_json`], or once [`crate::Pipeline::classify`] has snapshotted them).
    pub fn arguments(&self) -> Option<&Value> {
        match &self.arguments {
            Arguments::Wire(value) => Some(value),
            Arguments::Json(_) | Arguments::Refused(_) => None,
        }
    }

    /// The arguments when they are already a lossless snapshot (a call made with
    /// [`ToolCall::from_json`], or classified by [`crate::Pipeline::classify`]).
    pub fn json_arguments(&self) -> Option<&JsonValue> {
        match &self.arguments {
            Arguments::Wire(_) | Arguments::Refused(_) => None,
            Arguments::Json(value) => Some(value),
        }
    }

    /// The calling agent, if any.
    pub fn agent(&self) -> Option<&AgentScope> {
        self.agent.as_ref()
    }

    /// The parent execution, if any.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.parent
    }

    /// The caller's cancellation token, if the call was given one.
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    /// Takes the call's token out (a scheduler fusing it with its own; see
    /// [`ToolCall::with_cancellation`]).
    pub fn take_cancellation(&mut self) -> Option<CancellationToken> {
        self.cancel.take()
    }
}

/// One execution: the call's identity and immutable argument snapshot, shared (behind an
/// `Arc`) by every stage, hook and observer that sees the call.
///
/// `arguments` is the lossless snapshot of the call's arguments, or `null` when they could
/// not cross the lossless boundary ([`Execution::arguments_ok`] is then `false` and the
/// call ends with an error result before any hook runs).
pub struct Execution {
    pub(crate) info: CallInfo,
    pub(crate) arguments_ok: bool,
    /// The caller's token; `None` for a call that was given none (it is never cancelled).
    pub(crate) caller: Option<CancellationToken>,
    /// The caller's progress sink and approval service, if it gave any.
    pub(crate) channels: Channels,
    /// Whether the host dispatched the call itself ([`ToolCall::from_host`]).
    pub(crate) by_host: bool,
    pub(crate) state: ExecState,
}

/// The pipeline's private per-execution state.
#[derive(Default)]
pub(crate) struct ExecState {
    /// Set right before the body is invoked: selects `ABORTED` over
    /// `ABORTED_BEFORE_DISPATCH` for later cancellations.
    pub(crate) body_invoked: AtomicBool,
    /// Set by `RunContext::conclude_turn`.
    pub(crate) concluded: AtomicBool,
    /// Contexts deferred by the body, in call order.
    pub(crate) deferred: Mutex<Vec<ToolContext>>,
    /// Set once `deferred` has had a context: a call whose body deferred none takes no
    /// lock to find that out.
    pub(crate) has_deferred: AtomicBool,
    /// The definition whose `finalize_content` runs once at the end (captured at creation,
    /// held with the view it was resolved in).
    pub(crate) finalizer: Option<ResolvedTool>,
    /// The registry generation of the view `finalizer` was looked up in: while the
    /// registry is still at it, the dispatch stage takes `finalizer` as the tool instead of
    /// resolving the name again.
    pub(crate) resolved_in: u64,
    /// The token of the first dispatch's body (when no wrapper replaced the caller's
    /// token), made if the body asks for it.
    pub(crate) body_token: BodyToken,
    /// The span the pipeline opened for a Code Mode sub-call (the runtime opens the span of
    /// a call it is given) and when it started; `None` without one, or when disabled.
    pub(crate) span: Option<(tracing::Span, std::time::Instant)>,
}

/// The body of the execution's first dispatch gets its token from here, made on demand.
impl BodyCancellation for Execution {
    fn body_token(&self) -> &CancellationToken {
        self.state.body_token.get(self.caller.as_ref())
    }

    fn is_body_cancelled(&self) -> bool {
        self.state.body_token.is_cancelled(self.caller.as_ref())
    }
}

impl RunHooks for Execution {
    fn call_info(&self) -> &CallInfo {
        &self.info
    }

    fn defer_context(&self, context: ToolContext) {
        self.state
            .deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(context);
        self.state.has_deferred.store(true, Ordering::Release);
    }

    fn conclude_turn(&self) {
        self.state.concluded.store(true, Ordering::Release);
    }

    fn report_progress(&self, progress: Progress) {
        if let Some(sink) = &self.channels.progress {
            sink.report(progress);
        }
    }

    fn as_any(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        Some(self)
    }
}

impl Execution {
    /// The output budget the caller gave this call ([`ToolCall::with_output_budget`]).
    pub fn output_budget(&self) -> Option<usize> {
        self.channels.output_budget
    }

    /// The identity the call is made for ([`ToolCall::with_principal`]), inherited by Code
    /// Mode sub-calls; `None` for a call the host made without one.
    pub fn principal(&self) -> Option<&Arc<Principal>> {
        self.channels.principal.as_ref()
    }

    /// The span the pipeline opened for this Code Mode sub-call (see [`crate::trace`]),
    /// when one is being recorded; a call the host gave has the span its runtime opened
    /// around it (the current span while its hooks run).
    pub fn span(&self) -> Option<&tracing::Span> {
        self.state.span.as_ref().map(|(span, _)| span)
    }

    /// The client session the call came in on ([`ToolCall::with_session`]).
    pub fn session(&self) -> Option<&str> {
        self.channels.session.as_deref()
    }

    /// The call's identity (call id, tool, token, agent, parent, arguments).
    pub fn info(&self) -> &CallInfo {
        &self.info
    }

    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.info.call_id
    }

    /// The id of the model call this one descends from.
    pub fn root_call_id(&self) -> &str {
        &self.info.root_call_id
    }

    /// The tool's name.
    pub fn name(&self) -> &ToolName {
        &self.info.tool
    }

    /// The execution's opaque token.
    pub fn token(&self) -> ExecutionToken {
        self.info.token
    }

    /// The calling agent.
    pub fn agent(&self) -> Option<&AgentScope> {
        self.info.agent.as_ref()
    }

    /// The parent execution of a sub-call.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.info.parent
    }

    /// The immutable argument snapshot.
    pub fn arguments(&self) -> &JsonValue {
        &self.info.arguments
    }

    /// The definition the call resolved to when it was created (`None` for a tool the
    /// caller cannot see, or a direct call collapsed under Code Mode). The body runs the
    /// definition that resolves at dispatch, which differs only if the tool was replaced
    /// in between.
    pub fn definition(&self) -> Option<&ToolDefinition> {
        self.state.finalizer.as_ref().map(ResolvedTool::definition)
    }

    /// Whether the arguments crossed the lossless boundary.
    pub fn arguments_ok(&self) -> bool {
        self.arguments_ok
    }

    /// The caller's cancellation token (what "the caller cancelled" means at every check),
    /// if the call was given one; a call without one is never cancelled by its caller.
    pub fn caller_cancellation(&self) -> Option<&CancellationToken> {
        self.caller.as_ref()
    }

    /// Whether the caller has cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.caller
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Whether a hook registered for `scope` (`None`: unscoped) sees this execution.
    pub fn is_seen_by(&self, scope: Option<&AgentScope>) -> bool {
        match scope {
            None => true,
            Some(scope) => self.agent().is_some_and(|agent| agent.is_within(scope)),
        }
    }
}

impl fmt::Debug for Execution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Execution")
            .field("call_id", &self.info.call_id)
            .field("tool", &self.info.tool)
            .field("token", &self.info.token)
            .field("agent", &self.info.agent)
            .field("parent", &self.info.parent)
            .field("arguments", &self.info.arguments)
            .finish_non_exhaustive()
    }
}
