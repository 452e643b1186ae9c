//! The batch scheduler for one model turn's sibling tool calls.
//!
//! Calls are prepared in the model's order; only the dispatch of concurrency-safe calls
//! overlaps (up to `max_parallel_tool_calls`); an exclusive call waits until every earlier
//! call is committed, runs alone, and holds its barrier until it is committed; results are
//! completed (post-execute, finalize, observers) and published in the model's order. Each
//! call is classified right before it starts, so registry changes made by earlier calls
//! apply to later ones.
//!
//! Cancelling the batch's token cancels the calls in flight (their tokens are children of
//! it); they are drained and committed, and every call not yet started gets an
//! `ABORTED_BEFORE_DISPATCH` result without entering the pipeline.
//!
//! A call's own token (`ToolCall::with_cancellation`) is fused with the batch's, never
//! replaced (docs/decisions.md, entry 23): the call runs under a child of the batch token,
//! and one watcher task per batch (only when some call brought its own token) cancels that
//! child when the call's own token is cancelled. The watcher ends with the batch.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tools_pipeline::{
    ApprovalOutcome, ApprovalRequest, Decided, Pending, Prepared, Ready, ToolCall, ToolError,
    ToolResult,
};
use tools_registry::ExecutionMode;
use tracing::Instrument;

use crate::approval::BatchApproval;
use crate::runtime::ToolRuntime;
use crate::span::{call_span, record_outcome};

/// What a running batch reports, for UIs.
#[derive(Clone, Debug)]
pub enum BatchEvent {
    /// A call entered the pipeline.
    Started {
        /// Its position in the batch.
        index: usize,
    },
    /// A call's result was published (in the model's order).
    Settled {
        /// Its position in the batch.
        index: usize,
        /// The result.
        result: ToolResult,
    },
}

/// A batch running in the background; see [`ToolRuntime::start_batch`].
pub struct Batch {
    events: mpsc::UnboundedReceiver<BatchEvent>,
    task: tokio::task::JoinHandle<Vec<ToolResult>>,
}

impl Batch {
    /// The next event, or `None` once the batch has published every result.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: an event is not lost when the future is dropped.
    pub async fn next_event(&mut self) -> Option<BatchEvent> {
        self.events.recv().await
    }

    /// Every result, in the model's order (waits for the batch to finish).
    ///
    /// # Errors
    ///
    /// A `JoinError` if the scheduler task itself panicked or was aborted.
    pub async fn results(self) -> Result<Vec<ToolResult>, tokio::task::JoinError> {
        self.task.await
    }
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch").finish_non_exhaustive()
    }
}

impl ToolRuntime {
    /// Runs one turn's sibling calls and returns one result per call, in the calls' order.
    /// Each call is cancelled by `cancel` and by its own token, if it has one.
    ///
    /// Call this on a tokio runtime: parallel dispatches are spawned as tasks so that they
    /// use every worker thread. A call that runs alone is dispatched in place, on the
    /// caller's task: spawning it would only hand it to another thread and back. Awaited
    /// inside a task (`tokio::spawn`), the spawned dispatches start on that worker's own
    /// queue; awaited by `block_on` (as `#[tokio::main]` awaits `main`), each one is
    /// handed to a worker thread and its result back, which for short calls costs more
    /// than the calls (see `docs/benchmarks.md`, "Other measurements", "A model turn as a host runs it").
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops the scheduling; dispatches already spawned run to their
    /// end without being completed. A call that runs alone (an exclusive call, or the last
    /// call while nothing else runs) is dispatched by the scheduler itself instead of
    /// spawned, and is dropped with the future: its body is dropped and its token
    /// cancelled. Cancel through `cancel` instead.
    pub async fn run_batch(
        &self,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Vec<ToolResult> {
        drive(self.clone(), calls, cancel, None).await
    }

    /// Starts a batch in the background and reports its progress as [`BatchEvent`]s.
    pub fn start_batch(&self, calls: Vec<ToolCall>, cancel: CancellationToken) -> Batch {
        let (sender, events) = mpsc::unbounded_channel();
        let task = tokio::spawn(drive(self.clone(), calls, cancel, Some(sender)));
        Batch { events, task }
    }
}

struct Slot {
    call: Option<ToolCall>,
    decided: Option<Decided>,
    answer: Option<ApprovalOutcome>,
    span: Option<(tracing::Span, Instant)>,
    parked: Option<Pending>,
    exclusive: bool,
}

/// What a dispatch task sends back: the call's index and its candidate result, or `None`
/// when the task ended without one.
type Dispatched = (usize, Option<Pending>);

/// Sends a dispatch task's outcome to the scheduler exactly once: the candidate result
/// when the dispatch finishes, or, should the task end without one (a panic outside the
/// user code the pipeline already catches, or its runtime shutting down), `None` from
/// `Drop`, so that the scheduler never waits for a call that cannot settle.
struct Report {
    index: usize,
    to: Option<mpsc::UnboundedSender<Dispatched>>,
}

impl Report {
    fn send(mut self, pending: Pending) {
        if let Some(to) = self.to.take() {
            // The scheduler is gone only when the batch's future was dropped.
            let _ = to.send((self.index, Some(pending)));
        }
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if let Some(to) = self.to.take() {
            let _ = to.send((self.index, None));
        }
    }
}

async fn drive(
    runtime: ToolRuntime,
    calls: Vec<ToolCall>,
    cancel: CancellationToken,
    events: Option<mpsc::UnboundedSender<BatchEvent>>,
) -> Vec<ToolResult> {
    let pipeline = runtime.inner.pipeline.clone();
    let cap = runtime.inner.config.max_parallel_tool_calls.get();
    let emit = |event: BatchEvent| {
        if let Some(events) = &events {
            let _ = events.send(event);
        }
    };
    let n = calls.len();
    let mut own_tokens: Vec<(CancellationToken, CancellationToken)> = Vec::new();
    let mut slots: Vec<Slot> = calls
        .into_iter()
        .map(|mut call| {
            let fused = cancel.child_token();
            if let Some(own) = call.take_cancellation() {
                if own.is_cancelled() {
                    fused.cancel();
                } else {
                    own_tokens.push((own, fused.clone()));
                }
            }
            call.with_cancellation(fused)
        })
        .map(|call| Slot {
            call: Some(call),
            decided: None,
            answer: None,
            span: None,
            parked: None,
            exclusive: false,
        })
        .collect();

    let _watcher = (!own_tokens.is_empty()).then(|| watch_own_tokens(own_tokens));

    if let Some(batch_approval) = runtime.inner.config.batch_approval.clone() {
        ask_once(&pipeline, &mut slots, batch_approval.as_ref()).await;
    }

    let mut results: Vec<Option<ToolResult>> = (0..n).map(|_| None).collect();
    // Dispatches run as their own tasks (so that they use every worker) and report back
    // through one channel: a task is spawned and forgotten, with no set of handles whose
    // shared lock every finishing task would take.
    let (done, mut finished) = mpsc::unbounded_channel::<Dispatched>();
    let mut in_flight = 0usize;
    let (mut next, mut commit) = (0usize, 0usize);
    let mut exclusive_active = false;

    loop {
        // Commit, in order, every call whose candidate is ready.
        while commit < next {
            if results[commit].is_some() {
                // An internal failure already settled this call.
                commit += 1;
                continue;
            }
            let Some(pending) = slots[commit].parked.take() else {
                break;
            };
            let span = slots[commit].span.take();
            let result = match &span {
                Some((span, _)) => pipeline.complete(pending).instrument(span.clone()).await,
                None => pipeline.complete(pending).await,
            };
            if let Some((span, started)) = span {
                record_outcome(&span, &result, started);
            }
            if slots[commit].exclusive {
                exclusive_active = false;
            }
            emit(BatchEvent::Settled {
                index: commit,
                result: result.clone(),
            });
            results[commit] = Some(result);
            commit += 1;
        }
        if commit == n {
            break;
        }
        // Start what may start.
        while next < n && !cancel.is_cancelled() {
            let Some(call) = slots[next].call.as_mut() else {
                break;
            };
            let mode = pipeline.classify(call);
            let may_start = match mode {
                ExecutionMode::Exclusive => commit == next && in_flight == 0,
                ExecutionMode::Parallel => !exclusive_active && in_flight < cap,
            };
            if !may_start {
                break;
            }
            let Some(call) = slots[next].call.take() else {
                break;
            };
            let span = call_span(&call);
            // A disabled span records nothing: no clock reads for it.
            let started = (!span.is_disabled()).then(Instant::now);
            emit(BatchEvent::Started { index: next });
            let decided = slots[next].decided.take();
            let answer = slots[next].answer.take();
            let prepared = async {
                match decided {
                    Some(decided) => pipeline.resume(decided, answer).await,
                    None => pipeline.prepare(call).await,
                }
            }
            .instrument(span.clone())
            .await;
            slots[next].exclusive = mode == ExecutionMode::Exclusive;
            exclusive_active |= slots[next].exclusive;
            match prepared {
                // Nothing else runs or waits to be committed, and nothing can start beside
                // this call (it is exclusive, or the batch's last): the driver dispatches
                // it itself. Spawning it would only hand it to another thread and back
                // (two wake-ups, most of a short call's time) and gain no overlap.
                Prepared::Dispatch(ready)
                    if in_flight == 0
                        && commit == next
                        && (slots[next].exclusive || next + 1 == n) =>
                {
                    let index = next;
                    match dispatch_here(&pipeline, ready)
                        .instrument(span.clone())
                        .await
                    {
                        Some(pending) => slots[index].parked = Some(pending),
                        None => results[index] = Some(dispatch_failed(index)),
                    }
                }
                Prepared::Dispatch(ready) => {
                    let pipeline = pipeline.clone();
                    let report = Report {
                        index: next,
                        to: Some(done.clone()),
                    };
                    let dispatch = async move { report.send(pipeline.dispatch(ready).await) }
                        .instrument(span.clone());
                    drop(tokio::spawn(dispatch));
                    in_flight += 1;
                }
                Prepared::Settled(pending) => slots[next].parked = Some(pending),
            }
            slots[next].span = started.map(|started| (span, started));
            next += 1;
        }
        if cancel.is_cancelled() && in_flight == 0 && commit == next {
            // Nothing in flight: every call not started gets its cancellation result.
            for (index, slot) in results.iter_mut().enumerate().skip(next) {
                let result = ToolResult::aborted_before_dispatch();
                emit(BatchEvent::Settled {
                    index,
                    result: result.clone(),
                });
                *slot = Some(result);
            }
            break;
        }
        if in_flight == 0 {
            if commit < next && slots[commit].parked.is_none() && results[commit].is_none() {
                // Unreachable by construction; never spin.
                results[commit] = Some(ToolResult::failure(ToolError::new(
                    "internal scheduler failure: a started call has no result",
                )));
            }
            continue;
        }
        // The scheduler holds a sender itself, so the channel never closes while calls
        // are in flight: `None` cannot come before every report.
        if let Some((index, pending)) = finished.recv().await {
            in_flight -= 1;
            match pending {
                Some(pending) => slots[index].parked = Some(pending),
                None => {
                    results[index] = Some(dispatch_failed(index));
                    slots[index].span = None;
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                ToolResult::failure(ToolError::new("internal scheduler failure: no result"))
            })
        })
        .collect()
}

/// Dispatches a call on the driver's own task. A panic that escapes the pipeline (which
/// already catches those of user code) gives `None`, as a failed dispatch task does.
async fn dispatch_here(pipeline: &tools_pipeline::Pipeline, ready: Ready) -> Option<Pending> {
    let mut dispatch = std::pin::pin!(pipeline.dispatch(ready));
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| dispatch.as_mut().poll(cx))) {
            Ok(Poll::Ready(pending)) => Poll::Ready(Some(pending)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        }
    })
    .await
}

/// The result of a call whose dispatch ended without one.
fn dispatch_failed(index: usize) -> ToolResult {
    tracing::error!(index, "a tool dispatch ended without a result");
    ToolResult::failure(ToolError::new(
        "internal scheduler failure: the dispatch ended without a result",
    ))
}

/// Aborts the watcher task when the batch ends (or its future is dropped).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Cancels each call's fused token when the call's own token is cancelled.
fn watch_own_tokens(pairs: Vec<(CancellationToken, CancellationToken)>) -> AbortOnDrop {
    let mut waiting: Vec<(Pin<Box<WaitForCancellationFutureOwned>>, CancellationToken)> = pairs
        .into_iter()
        .map(|(own, fused)| (Box::pin(own.cancelled_owned()), fused))
        .collect();
    AbortOnDrop(tokio::spawn(std::future::poll_fn(move |cx| {
        waiting.retain_mut(|(own, fused)| {
            if fused.is_cancelled() {
                return false;
            }
            if own.as_mut().poll(cx).is_ready() {
                fused.cancel();
                return false;
            }
            true
        });
        if waiting.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })))
}

/// Decides every call (creation and pre-execute, in order), asks one question for those that
/// ask, and stores each call's decision and answer for its start.
async fn ask_once(
    pipeline: &tools_pipeline::Pipeline,
    slots: &mut [Slot],
    approval: &dyn BatchApproval,
) {
    let mut asking: Vec<(usize, ApprovalRequest)> = Vec::new();
    for (index, slot) in slots.iter_mut().enumerate() {
        let Some(call) = slot.call.as_ref() else {
            continue;
        };
        let decided = pipeline.decide(call.clone()).await;
        if let Some(request) = decided.approval_request()
            && !pipeline.remembers(&request)
        {
            asking.push((index, request));
        }
        slot.decided = Some(decided);
    }
    if asking.is_empty() {
        return;
    }
    let (indices, requests): (Vec<usize>, Vec<ApprovalRequest>) = asking.into_iter().unzip();
    let outcomes = match approval.request_batch(requests).await {
        Ok(outcomes) if outcomes.len() == indices.len() => outcomes,
        Ok(outcomes) => {
            tracing::warn!(
                expected = indices.len(),
                got = outcomes.len(),
                "batch approval answered a different number of calls; treating it as unavailable"
            );
            vec![ApprovalOutcome::Unavailable; indices.len()]
        }
        Err(error) => {
            tracing::warn!(%error, "batch approval failed; treating it as unavailable");
            vec![ApprovalOutcome::Unavailable; indices.len()]
        }
    };
    for (index, outcome) in indices.into_iter().zip(outcomes) {
        slots[index].answer = Some(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_dropped_unsent_says_that_its_call_has_no_result() {
        let (to, mut from) = mpsc::unbounded_channel();
        drop(Report {
            index: 7,
            to: Some(to),
        });
        assert!(matches!(from.try_recv(), Ok((7, None))));
        // Exactly once.
        assert!(from.try_recv().is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_dispatch_task_that_panics_still_reports_so_the_scheduler_never_waits_for_it() {
        let (to, mut from) = mpsc::unbounded_channel();
        let report = Report {
            index: 3,
            to: Some(to),
        };
        let task = tokio::spawn(async move {
            let _report = report;
            std::panic::resume_unwind(Box::new("a dispatch task failed"));
        });
        assert!(task.await.is_err());
        assert!(matches!(from.recv().await, Some((3, None))));
        assert!(from.recv().await.is_none());
    }
}
