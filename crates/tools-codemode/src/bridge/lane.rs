//! The per-run dispatch lane: the scheduler of a `run_code` execution's sub-calls.
//!
//! One lane runs beside the program. Every ordered stage (classification, `prepare`,
//! `complete`) happens inside it, one at a time, so ordered stages never overlap; a body
//! is first polled in the lane and, if it waits, continues as a spawned task, where bodies
//! overlap. The loop, per iteration:
//!
//! 1. the head of the commit queue has settled → commit it (post-execute, finalize,
//!    notify), forward its contexts, settle its binding, log it;
//! 2. else the head of the pending queue (its call built and classified once, when it
//!    becomes the head): the run is over → abandon it; capacity (nothing
//!    exclusive active; exclusive needs an empty pool, parallel fewer than the cap in
//!    flight) → move it to the commit queue, log its start, `prepare` it inline, and start
//!    its body (or park its pre-decided result);
//! 3. else wait for a body to settle, a submission, or the run's end; exit once the run is
//!    over and nothing is pending, committing or in flight.
//!
//! Abort is final: once the run token is cancelled no binding call is prepared or
//! dispatched. The host refuses new calls (`not dispatched`), the lane abandons queued
//! ones, and a call prepared just before is refused by the pipeline's dispatch
//! (`ABORTED_BEFORE_DISPATCH`: its token is the run token). The run token is a child of
//! the `run_code` body's token, which the pipeline makes a child of the outer call's
//! token, so an outer abort cancels it at once: also when a sub-call's body cancels the
//! outer call and the lane goes on, in the same poll, to the next submission.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use tokio::sync::oneshot;
use tokio::task::{Id, JoinSet};
use tokio_util::sync::CancellationToken;
use tools_json::{ErrorCode, JsonValue};
use tools_pipeline::{Pending, Pipeline, Prepared, Ready, ToolCall, ToolResult};
use tools_registry::{ExecutionMode, RunContext, ToolContext, ToolError, ToolName};

use super::end_watch::EndWatch;
use super::queue::{Receiver, SubmitQueue};
use super::search::ToolSearch;
use super::{DispatchSettled, DispatchStarted, Events, IMAGE_CONTEXT_SOURCE, MAX_JSON_DEPTH};
use crate::runtime::{BindingError, BindingFuture, BindingHost, BindingOutcome, SettleReply};

/// The reason a run is over when the outer call was cancelled before the program settled.
const OUTER_ABORT_REASON: &str = "tool call aborted";

/// One accepted binding call.
pub(crate) struct Submission {
    n: u64,
    name: ToolName,
    args: JsonValue,
    reply: oneshot::Sender<BindingOutcome>,
}

/// What the program side and the lane share about one run.
pub(crate) struct RunState {
    token: CancellationToken,
    reason: OnceLock<&'static str>,
    /// Where binding calls are numbered and queued for the lane, under one lock, so that
    /// `n` follows submission order even if a runtime calls the host from several threads.
    submit: Arc<SubmitQueue<Submission>>,
    /// The tool names bound in the program's namespace: a call to any other name (a
    /// non-conforming runtime, or `run_code` itself) never reaches the pipeline.
    names: BoundNames,
    /// The tool-search helpers, bound beside the tools in a scope with deferred tools:
    /// answered here, from the run's view, without reaching the pipeline (see `search`).
    search: Option<ToolSearch>,
}

/// The names a run binds, looked up per binding call with an unkeyed hash (the set is
/// fixed by the host, not by the program).
pub(crate) type BoundNames = HashSet<ToolName, foldhash::fast::FixedState>;

impl RunState {
    /// A run cancelled by `token` (a child of the outer call's token).
    pub(crate) fn new(
        token: CancellationToken,
        names: BoundNames,
        search: Option<ToolSearch>,
    ) -> (Arc<RunState>, Receiver<Submission>) {
        let (submit, submissions) = SubmitQueue::new();
        let state = Arc::new(RunState {
            token,
            reason: OnceLock::new(),
            submit,
            names,
            search,
        });
        (state, submissions)
    }

    /// The run-scoped token every sub-call and the runtime are cancelled by.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Ends the run (the program settled): later binding calls are refused, in-flight
    /// sub-calls are cancelled, queued ones abandoned.
    pub(crate) fn end(&self, reason: &'static str) {
        if !self.token.is_cancelled() {
            let _ = self.reason.set(reason);
        }
        self.token.cancel();
    }

    /// The binding host handed to the code runtime.
    pub(crate) fn host(self: &Arc<Self>) -> Arc<dyn BindingHost> {
        Arc::new(Host(Arc::clone(self)))
    }

    /// `run_code run is over (<reason>); <name> <what>`, coded `code`.
    fn over(&self, name: &str, what: &str, code: ErrorCode) -> BindingError {
        let reason = self.reason.get().copied().unwrap_or(OUTER_ABORT_REASON);
        BindingError::with_code(
            code,
            format!("run_code run is over ({reason}); {name} {what}"),
        )
    }
}

/// The program's side of the bridge: accepts a binding call synchronously (so `n` follows
/// the program's call order) and waits for the lane's commit.
struct Host(Arc<RunState>);

impl BindingHost for Host {
    fn call(&self, global: &str, name: &str, args: JsonValue) -> BindingFuture {
        let state = Arc::clone(&self.0);
        if state.token.is_cancelled() {
            return BindingFuture::ready(Err(state.over(
                name,
                "not dispatched",
                ErrorCode::AbortedBeforeDispatch,
            )));
        }
        // A tool-search helper reads the run's view and answers at once: not a tool call,
        // so not numbered, prepared or logged.
        if let Some(search) = &state.search
            && let Some(helper) = search.helper(name)
        {
            let callable = |tool: &str| state.names.contains(tool);
            return BindingFuture::ready(search.answer(helper, global, &args, &callable));
        }
        // The bound name is shared, not copied: names of up to 23 bytes are inline.
        let Some(name) = state.names.get(name).cloned() else {
            return BindingFuture::ready(Err(BindingError::with_code(
                ErrorCode::UnknownTool,
                format!("unknown tool \"{name}\""),
            )));
        };
        // Like arguments that are not lossless JSON: refused before numbering, nothing
        // dispatched or logged.
        if args.depth() > MAX_JSON_DEPTH {
            return BindingFuture::ready(Err(BindingError::with_code(
                ErrorCode::InvalidArgs,
                format!(
                    "arguments of {global}.{name} nest deeper than the depth limit of {MAX_JSON_DEPTH}"
                ),
            )));
        }
        let (reply, answer) = oneshot::channel();
        let sent = state.submit.submit(|n| Submission {
            n,
            name: name.clone(),
            args,
            reply,
        });
        if !sent {
            return BindingFuture::ready(Err(state.over(
                name.as_str(),
                "tool call abandoned",
                ErrorCode::AbortedBeforeDispatch,
            )));
        }
        // No box: the channel and the run's state are the whole future.
        BindingFuture::reply(answer, state, name)
    }
}

impl SettleReply for RunState {
    fn settle(&self, name: &str, delivered: Option<BindingOutcome>) -> BindingOutcome {
        match delivered {
            Some(Ok(value)) if !self.token.is_cancelled() => Ok(value),
            Some(Ok(_)) => Err(self.over(name, "result discarded", ErrorCode::Aborted)),
            Some(Err(error)) => Err(error),
            None => Err(self.over(name, "tool call abandoned", ErrorCode::Aborted)),
        }
    }
}

/// The head of the pending queue, built and classified once: it may wait for capacity
/// over many iterations of the lane's loop.
struct Head {
    sub: Submission,
    sub_call_id: Arc<str>,
    call: Result<ToolCall, ToolResult>,
    exclusive: bool,
}

/// A started sub-call, waiting for its commit.
struct Slot {
    sub: Submission,
    sub_call_id: Arc<str>,
    exclusive: bool,
    settled: Option<Settled>,
}

enum Settled {
    /// The pipeline's pending result: committing completes it.
    Pending(Pending),
    /// The body task died outside the pipeline's panic containment; committed as is.
    Lost(ToolResult),
}

/// The lane of one run.
pub(crate) struct Lane {
    pipeline: Pipeline,
    state: Arc<RunState>,
    ctx: RunContext,
    /// `<outer call id>:code:`, the start of every sub-call id, followed by the number of
    /// the last sub-call whose id was made (see `sub_call_id`).
    id: String,
    /// The length of the prefix in `id`.
    id_prefix: usize,
    cap: usize,
    events: Option<Events>,
    pending: VecDeque<Submission>,
    /// Taken from the front of `pending`, waiting for capacity.
    head: Option<Head>,
    commits: VecDeque<Slot>,
    bodies: JoinSet<(u64, Pending)>,
    tasks: HashMap<Id, u64>,
    next_slot: u64,
    first_slot: u64,
    in_flight: usize,
    exclusive_active: bool,
}

impl Lane {
    pub(crate) fn new(
        pipeline: Pipeline,
        state: Arc<RunState>,
        ctx: RunContext,
        cap: usize,
        events: Option<Events>,
    ) -> Lane {
        let id = format!("{}:code:", ctx.call().call_id);
        Lane {
            id_prefix: id.len(),
            id,
            pipeline,
            state,
            ctx,
            cap: cap.max(1),
            events,
            pending: VecDeque::new(),
            head: None,
            commits: VecDeque::new(),
            bodies: JoinSet::new(),
            tasks: HashMap::new(),
            next_slot: 0,
            first_slot: 0,
            in_flight: 0,
            exclusive_active: false,
        }
    }

    /// Runs until the run is over and every started sub-call is committed.
    pub(crate) async fn run(mut self, submissions: Receiver<Submission>) {
        // One wait for the run's end, registered once and kept across the loop's waits: a
        // fresh `cancelled()` per wait registers and unregisters a waiter under the
        // token's lock every time, and re-polling one takes that lock again (see
        // `EndWatch`).
        let mut ended = EndWatch::new(self.state.token.clone());
        let mut seen_end = false;
        // The box of the last body that finished in its first poll, reused for the next
        // body (see `start`). Its type is `dispatch_body`'s future, named by inference.
        let mut spare = None;
        loop {
            if self.head_settled() {
                self.commit_head().await;
                continue;
            }
            if self.head.is_none()
                && let Some(sub) = self.pending.pop_front()
            {
                self.head = Some(self.classify(sub));
            }
            if let Some(head) = &self.head {
                if self.state.token.is_cancelled() {
                    if let Some(head) = self.head.take() {
                        self.abandon(head.sub);
                    }
                    continue;
                }
                let has_capacity = !self.exclusive_active
                    && if head.exclusive {
                        self.in_flight == 0
                    } else {
                        self.in_flight < self.cap
                    };
                if has_capacity {
                    if let Some(head) = self.head.take() {
                        self.start(head, &mut spare, dispatch_body).await;
                    }
                    continue;
                }
            }
            if self.head.is_none()
                && self.pending.is_empty()
                && self.commits.is_empty()
                && self.bodies.is_empty()
                && self.state.token.is_cancelled()
            {
                break;
            }
            tokio::select! {
                biased;
                Some(joined) = self.bodies.join_next_with_id(), if !self.bodies.is_empty() => {
                    self.body_settled(joined);
                }
                () = poll_fn(|cx| submissions.poll_take(cx, &mut self.pending)) => {}
                () = poll_fn(|cx| ended.poll_end(cx)), if !seen_end => seen_end = true,
                else => break,
            }
        }
        let late = submissions.close();
        let waiting = self.head.take().map(|head| head.sub);
        let queued = std::mem::take(&mut self.pending);
        for sub in waiting.into_iter().chain(queued).chain(late) {
            self.abandon(sub);
        }
    }

    fn head_settled(&self) -> bool {
        self.commits
            .front()
            .is_some_and(|slot| slot.settled.is_some())
    }

    /// `<outer call id>:code:<n>` (once per sub-call). One allocation, the `Arc`'s: the
    /// text is put together in a buffer the lane keeps for the run, which already holds the
    /// prefix.
    fn sub_call_id(&mut self, n: u64) -> Arc<str> {
        let mut digits = itoa::Buffer::new();
        self.id.truncate(self.id_prefix);
        self.id.push_str(digits.format(n));
        Arc::from(self.id.as_str())
    }

    /// Builds the sub-call of `sub` and decides whether it runs exclusively (a call that
    /// cannot be built is committed as is, exclusively).
    fn classify(&mut self, sub: Submission) -> Head {
        let sub_call_id = self.sub_call_id(sub.n);
        let call = self.sub_call(&sub, Arc::clone(&sub_call_id));
        let exclusive = match &call {
            Ok(call) => self.pipeline.execution_mode(call) == ExecutionMode::Exclusive,
            Err(_) => true,
        };
        Head {
            sub,
            sub_call_id,
            call,
            exclusive,
        }
    }

    fn sub_call(&self, sub: &Submission, id: Arc<str>) -> Result<ToolCall, ToolResult> {
        let outer = self.ctx.call();
        let call = ToolCall::from_json(id, sub.name.as_str(), sub.args.clone())
            .map_err(|_| ToolResult::unknown_tool(sub.name.as_str()))?
            .with_cancellation(self.state.token.clone())
            .with_parent(outer.token)
            .with_channels_of(&self.ctx)
            .with_root_call_id(Arc::clone(&outer.root_call_id));
        Ok(match &outer.agent {
            Some(agent) => call.with_agent(agent.clone()),
            None => call,
        })
    }

    /// Starts `head`: logs its start, prepares it, and polls its body once (`make` builds
    /// the body's future). A body that waits moves, in its box, into a task of its own; the
    /// box of a body that finished is kept in `spare` and the next body is written into it,
    /// so that a run of bodies that never wait (most tools) allocates one box in all.
    async fn start<F>(
        &mut self,
        head: Head,
        spare: &mut Option<Pin<Box<F>>>,
        make: fn(Pipeline, Ready) -> F,
    ) where
        F: Future<Output = Pending> + Send + 'static,
    {
        let Head {
            sub,
            sub_call_id,
            call,
            exclusive,
        } = head;
        let slot_id = self.next_slot;
        self.next_slot += 1;
        if exclusive {
            self.exclusive_active = true;
        }
        if let Some(events) = &self.events {
            events.started(&DispatchStarted {
                root_call_id: Arc::clone(&self.ctx.call().root_call_id),
                parent_call_id: Arc::clone(&self.ctx.call().call_id),
                sub_call_id: Arc::clone(&sub_call_id),
                name: sub.name.to_string(),
                arguments: sub.args.clone(),
            });
        }
        let settled = match call {
            Err(result) => Some(Settled::Lost(result)),
            Ok(call) => match self.pipeline.prepare(call).await {
                Prepared::Settled(pending) => Some(Settled::Pending(pending)),
                Prepared::Dispatch(ready) => {
                    // The body's first poll happens here, in the lane: a body that finishes
                    // without waiting (most tools) never pays a task spawn and two thread
                    // hand-offs. Only a body that waits moves into its own task, already
                    // started, where it overlaps with the others.
                    let future = make(self.pipeline.clone(), ready);
                    let mut body = match spare.take() {
                        Some(mut reused) => {
                            reused.set(future);
                            reused
                        }
                        None => Box::pin(future),
                    };
                    match poll_fn(|cx| Poll::Ready(body.as_mut().poll(cx))).await {
                        Poll::Ready(pending) => {
                            *spare = Some(body);
                            Some(Settled::Pending(pending))
                        }
                        Poll::Pending => {
                            let handle = self.bodies.spawn(async move { (slot_id, body.await) });
                            self.tasks.insert(handle.id(), slot_id);
                            self.in_flight += 1;
                            None
                        }
                    }
                }
            },
        };
        self.commits.push_back(Slot {
            sub,
            sub_call_id,
            exclusive,
            settled,
        });
    }

    fn body_settled(&mut self, joined: Result<(Id, (u64, Pending)), tokio::task::JoinError>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let (slot_id, settled) = match joined {
            Ok((id, (slot_id, pending))) => {
                self.tasks.remove(&id);
                (slot_id, Settled::Pending(pending))
            }
            Err(err) => {
                let Some(slot_id) = self.tasks.remove(&err.id()) else {
                    return;
                };
                let error = if err.is_panic() {
                    ToolError::from_panic(&*err.into_panic())
                } else {
                    ToolError::new("the sub-call's task was cancelled")
                };
                (slot_id, Settled::Lost(ToolResult::failure(error)))
            }
        };
        let index = slot_id.checked_sub(self.first_slot);
        if let Some(slot) = index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.commits.get_mut(i))
        {
            slot.settled = Some(settled);
        }
    }

    async fn commit_head(&mut self) {
        let Some(mut slot) = self.commits.pop_front() else {
            return;
        };
        self.first_slot += 1;
        let result = match slot.settled.take() {
            Some(Settled::Pending(pending)) => self.pipeline.complete(pending).await,
            Some(Settled::Lost(result)) => result,
            None => ToolResult::aborted(),
        };
        if slot.exclusive {
            self.exclusive_active = false;
        }
        // Asked without rendering: a text-only result's content is made only if read.
        if !result.is_error() && result.has_content_of_type("image") {
            self.ctx.defer_context(ToolContext {
                source: Some(IMAGE_CONTEXT_SOURCE.into()),
                content: result.content().to_vec(),
            });
        }
        for context in result.contexts() {
            self.ctx.defer_context(context.clone());
        }
        if !result.is_error() && result.concludes_turn() {
            self.ctx.conclude_turn();
        }
        let answer = if result.is_error() {
            Err(match result.error() {
                Some(error) => BindingError {
                    message: error.message().to_owned(),
                    code: error.code().map(|code| match code.known() {
                        Some(known) => Cow::Borrowed(known.as_str()),
                        None => Cow::Owned(code.as_str().to_owned()),
                    }),
                },
                None => BindingError::new(result.text()),
            })
        } else {
            match result.value() {
                // Only a tool that raised its own output limit gets here: the pipeline
                // refuses deeper values of every other tool as `INVALID_TOOL_OUTPUT`.
                Some(value) if value.depth() > MAX_JSON_DEPTH => Err(BindingError::with_code(
                    ErrorCode::InvalidToolOutput,
                    format!(
                        "output of tool {} nests deeper than the depth limit of {MAX_JSON_DEPTH}",
                        slot.sub.name
                    ),
                )),
                Some(value) => Ok(value.clone()),
                None => Ok(JsonValue::null()),
            }
        };
        let _ = slot.sub.reply.send(answer);
        if let Some(events) = &self.events {
            events.settled(DispatchSettled {
                root_call_id: Arc::clone(&self.ctx.call().root_call_id),
                parent_call_id: Arc::clone(&self.ctx.call().call_id),
                sub_call_id: slot.sub_call_id,
                name: slot.sub.name.to_string(),
                arguments: slot.sub.args,
                is_error: result.is_error(),
                content: result.content().to_vec(),
            });
        }
    }

    fn abandon(&self, sub: Submission) {
        let error = self.state.over(
            sub.name.as_str(),
            "tool call abandoned",
            ErrorCode::AbortedBeforeDispatch,
        );
        let _ = sub.reply.send(Err(error));
    }
}

/// A sub-call's body: the pipeline's dispatch stage. One function, so that every body of a
/// run has the same future type and fits the box of the one before; an `async fn` drops
/// its arguments when it finishes, so a finished body kept for its box holds nothing.
async fn dispatch_body(pipeline: Pipeline, ready: Ready) -> Pending {
    pipeline.dispatch(ready).await
}

impl Events {
    fn started(&self, event: &DispatchStarted) {
        let sink = &self.sink;
        if catch_unwind(AssertUnwindSafe(|| sink.started(event))).is_err() {
            tracing::warn!(
                sub_call_id = &*event.sub_call_id,
                "the code dispatch sink panicked on a start event"
            );
        }
    }

    fn settled(&self, mut event: DispatchSettled) {
        if let Some(rewrite) = &self.rewrite {
            match catch_unwind(AssertUnwindSafe(|| rewrite(&event))) {
                Ok(Ok(content)) => event.content = content,
                Ok(Err(message)) => tracing::warn!(
                    sub_call_id = &*event.sub_call_id,
                    %message,
                    "the code dispatch log rewrite failed; the original content is logged"
                ),
                Err(_) => tracing::warn!(
                    sub_call_id = &*event.sub_call_id,
                    "the code dispatch log rewrite panicked; the original content is logged"
                ),
            }
        }
        let sink = &self.sink;
        if catch_unwind(AssertUnwindSafe(|| sink.settled(&event))).is_err() {
            tracing::warn!(
                sub_call_id = &*event.sub_call_id,
                "the code dispatch sink panicked on a settle event"
            );
        }
    }
}
