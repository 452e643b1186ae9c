//! The prepare stage: creates the execution (identity, argument snapshot, collapse and
//! pre-abort checks), runs the pre-execute waterfall, then settles its decision, and ends
//! with the last cancellation check. Its handles: [`Decided`], [`Prepared`], [`Ready`].
//!
//! The order after the waterfall (approval comes last):
//!
//! - `deny`: `DENIED`; the guards are not consulted.
//! - `allow`: the guards. The arguments are the body's to validate.
//! - `ask`, when a person would be asked (no earlier answer for the session or always
//!   covers the call, and the caller brought no answer): first the guards, then the
//!   tool's argument check ([`tools_registry::ToolDefinition::check_arguments`]: a typed
//!   tool's parameter map, a foreign schema), and only when both pass the approval
//!   service. A call that could never run settles `DENIED` or `INVALID_ARGS`, exactly as
//!   it would have after an approval, and nobody is asked about it. The guards are not
//!   run again after the answer.
//! - `ask` covered by a remembered answer: no question, so nothing is checked before; the
//!   guards run after, as for `allow`.
//! - `ask` answered by the caller ([`Decided::approval_request`] then
//!   [`crate::Pipeline::resume`] with the answer, as a batch asks): the check ran when the
//!   request was made, which is `None` for a call the check stops; such a call, resumed
//!   without an answer, settles with the check's result. An answer that came without a
//!   request is followed by the guards, as for `allow`.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;
use tools_json::{ErrorCode, JsonValue, Limits};
use tools_registry::{CallInfo, ExecutionToken, Guard, HeldView, ToolError};

use crate::call::{Arguments, ExecState};
use crate::catch::CatchUnwind;
use crate::hook::chain::Next;
use crate::hook::set::Stacks;
#[cfg(feature = "test-util")]
use crate::shared::Probe;
use crate::shared::Shared;
use crate::stage::complete::Pending;
use crate::{
    ApprovalOutcome, ApprovalRequest, Execution, PreDecision, PreRequest, ToolCall, ToolResult,
};

/// A call whose pre-execute decision is known: the result of [`crate::Pipeline::decide`].
#[must_use = "a decided call must be resumed"]
pub struct Decided(DecidedInner);

enum DecidedInner {
    Settled(Pending),
    Open {
        exec: Arc<Execution>,
        stacks: Arc<Stacks>,
        /// The view the name was looked up in when it resolved to no tool (for its
        /// guards); a resolved tool's view is the execution's.
        unresolved: Option<HeldView>,
        decision: PreDecision,
        /// The check before a question (guards, then arguments), once made by
        /// [`Decided::approval_request`]: `None` when the call could run.
        checked: OnceLock<Option<Box<Refusal>>>,
    },
}

/// Why the check before a question stops a call: its failure, and whether the
/// post-execute waterfall sees it (a guard's denial and invalid arguments do, as they
/// would after an approval; a panicking guard does not).
struct Refusal {
    error: ToolError,
    post: bool,
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

    /// The approval request this call needs: `Some` when the decision is `ask`, the call
    /// has an agent to route the question through, and the call could run: its guards let
    /// it through and its arguments pass the tool's check
    /// ([`tools_registry::ToolDefinition::check_arguments`]). Approval comes last, so a
    /// call a guard denies or whose arguments are invalid gives `None`, and
    /// [`crate::Pipeline::resume`] without an answer then settles it `DENIED` or
    /// `INVALID_ARGS` without asking anyone.
    ///
    /// The check runs once per call, on the first request (a call remembered for the
    /// session is checked too: a scheduler asks [`crate::Pipeline::remembers`] after
    /// this); `resume` reuses it and does not run the guards again after the answer.
    pub fn approval_request(&self) -> Option<ApprovalRequest> {
        let DecidedInner::Open {
            exec,
            unresolved,
            decision: PreDecision::Ask(reason),
            checked,
            ..
        } = &self.0
        else {
            return None;
        };
        // Nobody is asked about a call without an agent: nothing to check for a question.
        exec.agent()?;
        let refusal = checked
            .get_or_init(|| check_before_asking(exec, view_guards(exec, unresolved.as_ref())));
        if refusal.is_some() {
            return None;
        }
        approval_request(exec, approval_key(exec).into(), reason.clone())
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

/// The outcome of [`crate::Pipeline::prepare`].
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
            Prepared::Settled(pending) => pending.execution(),
        }
    }
}

/// A prepared call that is allowed to run. Only [`crate::Pipeline::prepare`] makes one.
#[must_use = "a ready call must be dispatched"]
pub struct Ready {
    pub(crate) exec: Arc<Execution>,
    pub(crate) stacks: Arc<Stacks>,
}

impl Ready {
    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready").field("exec", &self.exec).finish()
    }
}

/// The first half of the prepare stage: creation and the pre-execute waterfall.
pub(crate) async fn decide(shared: &Shared, call: ToolCall) -> Decided {
    let stacks = shared.hooks.snapshot();
    let has_parent = call.parent.is_some();
    let by_host = call.by_host;
    // What the call keeps of the view (its tool, its guards when it has any, its
    // generation) is taken from one snapshot, held through the current thread slot's
    // handle: the call's clones write no reference count that calls on other workers
    // write (not the view's, not the definition's).
    let (visible, unresolved, refused, generation) = match shared
        .registry
        .held_view(call.agent.as_ref())
        .resolve(call.name())
    {
        Ok(tool) => {
            let view = tool.view();
            let refused = tool.refusal(has_parent, by_host);
            let generation = view.generation();
            (Some(tool), None, refused, generation)
        }
        Err(view) => {
            let generation = view.generation();
            (None, Some(view), None, generation)
        }
    };
    // A sub-call's span, a child of the `run_code` call's (the current span here).
    let span = if has_parent {
        let span = crate::trace::call_span(&call);
        (!span.is_disabled()).then(|| (span, std::time::Instant::now()))
    } else {
        None
    };
    let caller = call.cancel;
    let pre_aborted = caller.as_ref().is_some_and(CancellationToken::is_cancelled);
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
    let finalizer = if refused.is_some() && !pre_aborted {
        None
    } else {
        visible
    };
    // A model-issued call is its own root.
    let root_call_id = call
        .root_call_id
        .unwrap_or_else(|| Arc::clone(&call.call_id));
    let exec = Arc::new(Execution {
        info: CallInfo {
            root_call_id,
            call_id: call.call_id,
            tool: call.name,
            token: ExecutionToken::mint(),
            agent: call.agent,
            parent: call.parent,
            arguments,
        },
        arguments_ok: arguments_error.is_none(),
        caller,
        channels: call.channels,
        by_host,
        state: ExecState {
            finalizer,
            resolved_in: generation,
            span,
            ..ExecState::default()
        },
    });
    let settle = |result: ToolResult, stacks: Arc<Stacks>| {
        Decided(DecidedInner::Settled(Pending::new(
            Arc::clone(&exec),
            stacks,
            result,
            false,
        )))
    };

    if let Some(err) = arguments_error {
        let message =
            format!("tool execution arguments must be losslessly JSON-serializable: {err}");
        return settle(ToolResult::failure(ToolError::new(message)), stacks);
    }
    if let Some(refusal) = refused {
        let result = if pre_aborted {
            ToolResult::aborted_before_dispatch()
        } else {
            ToolResult::coded(
                ErrorCode::UnknownTool,
                refusal.message(exec.name().as_str()),
            )
        };
        return settle(result, stacks);
    }
    if pre_aborted {
        return settle(ToolResult::aborted_before_dispatch(), stacks);
    }

    #[cfg(feature = "test-util")]
    shared.probe(&exec, Probe::Pre);
    let decision = if stacks.pre.hooks.is_empty() {
        PreDecision::Allow
    } else {
        // Lazy, so that a hook that panics while building its future is caught too.
        let request = PreRequest::new(Arc::clone(&exec));
        let run = async { Next::run_stack(&stacks.pre, request).await };
        match CatchUnwind::new(run).await {
            Ok(Ok(decision)) => decision,
            Ok(Err(err)) => return settle(ToolResult::failure(err), stacks),
            Err(panic) => {
                return settle(ToolResult::failure(ToolError::from_panic(&*panic)), stacks);
            }
        }
    };
    Decided(DecidedInner::Open {
        exec,
        stacks,
        unresolved,
        decision,
        checked: OnceLock::new(),
    })
}

/// The second half of the prepare stage: the guards, for `ask` the check before the
/// question and the question, the last cancellation check.
pub(crate) async fn resume(
    shared: &Shared,
    decided: Decided,
    answer: Option<ApprovalOutcome>,
) -> Prepared {
    let (exec, stacks, unresolved, decision, checked) = match decided.0 {
        DecidedInner::Settled(pending) => return Prepared::Settled(pending),
        DecidedInner::Open {
            exec,
            stacks,
            unresolved,
            decision,
            checked,
        } => (exec, stacks, unresolved, decision, checked.into_inner()),
    };
    let guards = view_guards(&exec, unresolved.as_ref());
    let settle = |result: ToolResult, stacks: Arc<Stacks>, post: bool| {
        Prepared::Settled(Pending::new(Arc::clone(&exec), stacks, result, post))
    };
    let refusal = match decision {
        PreDecision::Allow => match run_guards(guards, &exec) {
            Ok(None) => None,
            Ok(Some(reason)) => Some(ToolError::with_code(ErrorCode::Denied, reason)),
            Err(err) => return settle(ToolResult::failure(err), stacks, false),
        },
        PreDecision::Deny(reason) => Some(ToolError::with_code(ErrorCode::Denied, reason)),
        PreDecision::Ask(reason) => {
            // A check made for an approval request stands: a call it stopped was asked
            // about by nobody, and settles with its result whatever the answer.
            if let Some(Some(refusal)) = checked {
                return settle(ToolResult::failure(refusal.error), stacks, refusal.post);
            }
            // Whether the guards ran, and the arguments passed, before a question.
            let mut cleared = checked.is_some();
            // The approval key: computed once, for the store and the question.
            let key: Arc<str> = approval_key(&exec).into();
            let outcome = match answer {
                Some(outcome) => outcome,
                None if remembered(shared, &exec, &key) => ApprovalOutcome::AllowedOnce,
                None => {
                    // A person would be asked: first what would stop the call anyway.
                    if !cleared {
                        if let Some(refusal) = check_before_asking(&exec, guards) {
                            return settle(
                                ToolResult::failure(refusal.error),
                                stacks,
                                refusal.post,
                            );
                        }
                        cleared = true;
                    }
                    match ask(shared, &exec, Arc::clone(&key), reason.clone()).await {
                        Ok(outcome) => outcome,
                        Err(refusal) => {
                            return settle(ToolResult::failure(refusal), stacks, true);
                        }
                    }
                }
            };
            remember(shared, &exec, &key, outcome);
            if outcome == ApprovalOutcome::Cancelled && exec.is_cancelled() {
                return settle(ToolResult::aborted_before_dispatch(), stacks, true);
            }
            match outcome {
                // The guards ran before the question, over the same snapshot of the view's
                // guards and the same immutable arguments: not again.
                allowed if allowed.is_allowed() && cleared => None,
                allowed if allowed.is_allowed() => match run_guards(guards, &exec) {
                    Ok(None) => None,
                    Ok(Some(reason)) => Some(ToolError::with_code(ErrorCode::Denied, reason)),
                    Err(err) => return settle(ToolResult::failure(err), stacks, false),
                },
                refused => Some(approval_refusal(exec.name().as_str(), refused)),
            }
        }
    };
    if let Some(refusal) = refusal {
        return settle(ToolResult::failure(refusal), stacks, true);
    }
    if exec.is_cancelled() {
        return settle(ToolResult::aborted_before_dispatch(), stacks, true);
    }
    Prepared::Dispatch(Ready { exec, stacks })
}

fn approval_request(
    exec: &Execution,
    key: Arc<str>,
    reason: Option<String>,
) -> Option<ApprovalRequest> {
    Some(ApprovalRequest {
        agent: exec.agent()?.clone(),
        tool: exec.name().clone(),
        call_id: Arc::clone(&exec.info.call_id),
        reason,
        key,
        // A call without a token still gives the service one (never cancelled).
        cancel: exec.caller.clone().unwrap_or_default(),
    })
}

/// The key `exec`'s approval is remembered under: the tool's own key when the view had the
/// tool (an open call's tool is the one its view resolved), else its name.
fn approval_key(exec: &Execution) -> String {
    match &exec.state.finalizer {
        Some(def) => def.approval_key(&exec.info.arguments),
        None => exec.name().as_str().to_owned(),
    }
}

/// Whether an earlier answer "for the session" or "always" covers this call.
fn remembered(shared: &Shared, exec: &Execution, key: &str) -> bool {
    exec.agent()
        .is_some_and(|agent| shared.approval_store().is_approved(agent, key))
}

/// Remembers an answer that is to be remembered.
fn remember(shared: &Shared, exec: &Execution, key: &str, outcome: ApprovalOutcome) {
    if matches!(
        outcome,
        ApprovalOutcome::AllowedForSession | ApprovalOutcome::AllowedAlways
    ) && let Some(agent) = exec.agent()
    {
        shared.approval_store().remember(agent, key, outcome);
    }
}

/// Asks the installed approval service. `Err` is the `APPROVAL_DENIED` failure when nobody
/// can be asked or the service fails.
async fn ask(
    shared: &Shared,
    exec: &Arc<Execution>,
    key: Arc<str>,
    reason: Option<String>,
) -> Result<ApprovalOutcome, ToolError> {
    let name = exec.name().as_str();
    let denied = |message: String| ToolError::with_code(ErrorCode::ApprovalDenied, message);
    let Some(approval) = exec.channels.approval.clone().or_else(|| shared.approval()) else {
        return Err(denied(reason.unwrap_or_else(|| {
            format!("tool {name:?} requires approval (no approval service is installed)")
        })));
    };
    let Some(request) = approval_request(exec, key, reason) else {
        return Err(denied(format!(
            "tool {name:?} requires approval, but the call has no agent to route it through"
        )));
    };
    match CatchUnwind::new(approval.request(request)).await {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(err)) => Err(denied(format!(
            "approval for tool {name:?} failed: {}",
            err.message()
        ))),
        Err(panic) => Err(denied(format!(
            "approval for tool {name:?} failed: {}",
            ToolError::from_panic(&*panic).message()
        ))),
    }
}

/// The `APPROVAL_DENIED` failure of a refused, cancelled or unanswerable approval.
fn approval_refusal(name: &str, outcome: ApprovalOutcome) -> ToolError {
    let message = match outcome {
        ApprovalOutcome::AllowedOnce
        | ApprovalOutcome::AllowedForSession
        | ApprovalOutcome::AllowedAlways
        | ApprovalOutcome::Rejected => format!("the user rejected tool {name:?}"),
        ApprovalOutcome::Cancelled => format!("approval for tool {name:?} was cancelled"),
        ApprovalOutcome::Unavailable => {
            format!("tool {name:?} requires approval, but no approval channel is available")
        }
    };
    ToolError::with_code(ErrorCode::ApprovalDenied, message)
}

/// The guards of the view the call was looked up in: the resolved tool's view (which the
/// execution holds), else the view that had no such tool. Borrowed: the view's list of
/// guards is shared by every call, and a clone would write its reference count.
fn view_guards<'a>(exec: &'a Execution, unresolved: Option<&'a HeldView>) -> &'a [Arc<dyn Guard>] {
    match (unresolved, &exec.state.finalizer) {
        (Some(view), _) => view.guards(),
        (None, Some(tool)) => tool.view().guards(),
        (None, None) => &[],
    }
}

/// The check before a question: the guards first (so that a call both denied and invalid
/// gets the denial, as an allowed call would), then the arguments against the tool's check
/// (a typed tool's parameter map, a foreign schema; the same failure its body gives). A
/// name the view did not resolve has no arguments to check. `None`: the call could run.
fn check_before_asking(exec: &Execution, guards: &[Arc<dyn Guard>]) -> Option<Box<Refusal>> {
    let refusal = |error: ToolError, post: bool| Some(Box::new(Refusal { error, post }));
    match run_guards(guards, exec) {
        Ok(None) => {}
        Ok(Some(reason)) => return refusal(ToolError::with_code(ErrorCode::Denied, reason), true),
        Err(err) => return refusal(err, false),
    }
    let tool = exec.state.finalizer.as_ref()?;
    match tool.check_arguments(&exec.info.arguments) {
        Ok(()) => None,
        Err(err) => refusal(err, true),
    }
}

/// Evaluates the guards of the call's view (a snapshot): the first reason denies.
fn run_guards(guards: &[Arc<dyn Guard>], exec: &Execution) -> Result<Option<String>, ToolError> {
    for guard in guards {
        match catch_unwind(AssertUnwindSafe(|| guard.check(&exec.info))) {
            Ok(None) => {}
            Ok(Some(reason)) => return Ok(Some(reason)),
            Err(panic) => return Err(ToolError::from_panic(&*panic)),
        }
    }
    Ok(None)
}
