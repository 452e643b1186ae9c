//! Cancellation of a run: the outer call's abort, a rejecting or panicking runtime, abort
//! is final, queued calls abandoned, results read after the run (the reference
//! implementation's Code Mode scenarios 38, 39, 49 and 50).

use super::*;

/// A slow exclusive tool: logs its start, waits for its cancellation, logs it.
fn slow(log: &Log, started: &Arc<Notify>) -> ToolDefinition {
    let (l, s) = (log.clone(), Arc::clone(started));
    tool("slow", false, move |args, ctx| {
        let (log, started) = (l.clone(), Arc::clone(&s));
        async move {
            let n = args.get("n").map(ToString::to_string).unwrap_or_default();
            log.push(format!("start {n}"));
            started.notify_one();
            ctx.cancellation().cancelled().await;
            log.push(format!("aborted {n}"));
            Err(ToolError::new(format!("slow {n} interrupted")))
        }
    })
}

/// 38: the outer call is cancelled while one slow call runs and another is queued: the
/// first sees its abort, the second never starts, the run fails as `abort`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b38_outer_cancellation_aborts_the_run() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let outer_cancel = CancellationToken::new();
    let queued: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (s, c, slot) = (
        Arc::clone(&started),
        outer_cancel.clone(),
        Arc::clone(&queued),
    );
    let runtime = scripted(move |request: CodeRunRequest| {
        let (started, outer_cancel, slot) = (Arc::clone(&s), c.clone(), Arc::clone(&slot));
        async move {
            let host = request.host;
            let first = call(&host, "slow", json!({"n": 1}));
            let second = host.call("tools", "slow", JsonValue::new(json!({"n": 2})).unwrap());
            started.notified().await;
            outer_cancel.cancel();
            // The cancellation reaches the runtime through the run-scoped token; the
            // runtime then fails the run as `abort` and drops its pending calls.
            request.cancel.cancelled().await;
            *slot.lock().unwrap() = Some(second);
            drop(first);
            failed(FailureKind::Abort, "run aborted", &["was running"])
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(
        result.text(),
        "Error: code run failed (abort): run aborted\nCaptured output:\nwas running"
    );
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    let second = queued.lock().unwrap().take().unwrap();
    assert_eq!(
        tokio::time::timeout(HANG_GUARD, second)
            .await
            .unwrap()
            .map_err(|e| (e.message, e.code)),
        Err((
            "run_code run is over (tool call aborted); slow tool call abandoned".to_owned(),
            Some("ABORTED_BEFORE_DISPATCH".into())
        ))
    );
}

/// 39: the runtime rejects the run while a call is in flight: the call is aborted and
/// logged before `run_code` returns; the error carries the rejection.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b39_a_rejecting_runtime_still_drains_its_calls() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let s = Arc::clone(&started);
    let runtime = scripted(move |request: CodeRunRequest| {
        let started = Arc::clone(&s);
        async move {
            let in_flight = call(&request.host, "slow", json!({"n": 1}));
            started.notified().await;
            drop(in_flight);
            Err(ContractError::InvalidLimit {
                limit: "backend",
                reason: "backend exploded".into(),
            })
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    let text = result.text();
    assert!(text.contains("backend exploded"), "{text}");
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 39 (a panicking runtime): a runtime whose run future panics while a call is in flight
/// is treated like a rejecting one: the call is cancelled, committed and logged before
/// `run_code` returns a `CODE_RUN_FAILED` error.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b39_a_panicking_runtime_still_drains_its_calls() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let s = Arc::clone(&started);
    let runtime = scripted(move |request: CodeRunRequest| {
        let started = Arc::clone(&s);
        async move {
            let in_flight = call(&request.host, "slow", json!({"n": 1}));
            started.notified().await;
            drop(in_flight);
            panic!("backend exploded");
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(
        result.text(),
        "Error: code run failed: the code runtime panicked: backend exploded"
    );
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 49: an outer call cancelled before dispatch never reaches the runtime.
#[tokio::test(flavor = "current_thread")]
async fn b49_pre_aborted_outer_call() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async { completed(Some(json!(1)), &[]) }),
        vec![],
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = h.execute(h.outer().with_cancellation(cancel)).await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::AbortedBeforeDispatch));
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(h.runtime.runs(), 0);
}

/// 50: the outer call is cancelled mid-run, then the program calls a tool: the binding
/// rejects without dispatching, and the outer result is `ABORTED`.
#[tokio::test(flavor = "current_thread")]
async fn b50_a_binding_call_after_the_outer_abort_is_not_dispatched() {
    let seen = Log::default();
    let outer_cancel = CancellationToken::new();
    let rejection = Log::default();
    let (c, r) = (outer_cancel.clone(), rejection.clone());
    let runtime = scripted(move |request: CodeRunRequest| {
        let (outer_cancel, rejection) = (c.clone(), r.clone());
        async move {
            outer_cancel.cancel();
            request.cancel.cancelled().await;
            let answer = call(&request.host, "echo", json!({"text": "late"})).await;
            rejection.push(answer.unwrap_err());
            completed(Some(json!("finished anyway")), &[])
        }
    });
    let h = harness(runtime, vec![echo(&seen)]);
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_eq!(
        rejection.entries(),
        ["run_code run is over (tool call aborted); echo not dispatched"]
    );
    assert!(seen.entries().is_empty());
    assert!(h.sink.events().is_empty());
}

/// 50, abort is final: a tool body cancels the outer call's token; the program's next
/// binding call is rejected without being prepared or dispatched (its body never runs, no
/// event), and the outer result is `ABORTED`. Deterministic: nothing waits for the
/// cancellation to travel.
#[tokio::test(flavor = "current_thread")]
async fn b50_the_call_after_a_body_cancelled_the_outer_call_never_runs() {
    let outer_cancel = CancellationToken::new();
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "cancel_outer", json!({})).await;
            answers.push(format!("{first:?}"));
            // Made at once, without waiting for the run token: the abort is already final.
            let next = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{next:?}"));
            completed(Some(json!("finished anyway")), &[])
        }
    });
    let h = harness(runtime, abort_tools(&outer_cancel, &bodies));
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted), "{result:?}");
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_eq!(bodies.load(Ordering::SeqCst), 0);
    assert_eq!(
        answers.entries(),
        [
            // The body finished after its own token was cancelled: `ABORTED`.
            r#"Err("tool call aborted")"#,
            r#"Err("run_code run is over (tool call aborted); counted not dispatched")"#
        ]
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// 50, queued: a call submitted before the abort and still queued behind the cancelling
/// call is abandoned, never prepared or dispatched.
#[tokio::test(flavor = "current_thread")]
async fn b50_a_call_queued_behind_the_abort_is_abandoned() {
    let outer_cancel = CancellationToken::new();
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "cancel_outer", json!({}));
            let queued = call(&request.host, "counted", json!({}));
            let (first, queued) = tokio::join!(first, queued);
            answers.push(format!("{first:?}"));
            answers.push(format!("{queued:?}"));
            completed(None, &[])
        }
    });
    let h = harness(runtime, abort_tools(&outer_cancel, &bodies));
    let prepared = Log::default();
    let p = prepared.clone();
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let p = p.clone();
        async move {
            p.push(request.execution().call_id().to_owned());
            None
        }
    });
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted), "{result:?}");
    assert_eq!(bodies.load(Ordering::SeqCst), 0);
    assert_eq!(prepared.entries(), ["call-1:code:1"]);
    assert_eq!(
        answers.entries()[1],
        r#"Err("run_code run is over (tool call aborted); counted tool call abandoned")"#
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// The run-scoped token (the one the runtime is handed) cancelled by the runtime itself:
/// the next binding call is rejected without being prepared or dispatched.
#[tokio::test(flavor = "current_thread")]
async fn a_binding_call_after_the_run_token_is_cancelled_never_runs() {
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{first:?}"));
            request.cancel.cancel();
            let next = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{next:?}"));
            failed(FailureKind::Abort, "run aborted", &[])
        }
    });
    let h = harness(runtime, abort_tools(&CancellationToken::new(), &bodies));
    let result = h.run().await;
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(bodies.load(Ordering::SeqCst), 1);
    assert_eq!(
        answers.entries(),
        [
            r#"Ok(String("counted"))"#,
            r#"Err("run_code run is over (tool call aborted); counted not dispatched")"#
        ]
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// A6.5: a binding whose commit landed before the run ended, but which the program reads
/// only afterwards, rejects with `result discarded`.
#[tokio::test(flavor = "current_thread")]
async fn a6_5_a_result_read_after_the_run_is_discarded() {
    let committed = Arc::new(Notify::new());
    let unread: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (c, slot) = (Arc::clone(&committed), Arc::clone(&unread));
    let runtime = scripted(move |request: CodeRunRequest| {
        let (committed, slot) = (Arc::clone(&c), Arc::clone(&slot));
        async move {
            let pending = request.host.call(
                "tools",
                "echo",
                JsonValue::new(json!({"text": "x"})).unwrap(),
            );
            // Settled and committed, but not read before the program returns.
            committed.notified().await;
            *slot.lock().unwrap() = Some(pending);
            completed(None, &[])
        }
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    let c = Arc::clone(&committed);
    h.pipeline
        .on_result(move |exec, _result| {
            if exec.call_id() == "call-1:code:1" {
                c.notify_one();
            }
        })
        .keep();
    let result = h.run().await;
    assert_eq!(result.text(), NO_OUTPUT);
    assert_eq!(h.sink.settles().len(), 1);
    assert!(!h.sink.settles()[0].is_error);
    let pending = unread.lock().unwrap().take().unwrap();
    assert_eq!(
        tokio::time::timeout(HANG_GUARD, pending)
            .await
            .unwrap()
            .map_err(|e| (e.message, e.code)),
        Err((
            "run_code run is over (run_code settled); echo result discarded".to_owned(),
            Some("ABORTED".into())
        ))
    );
}
