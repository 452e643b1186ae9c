//! Issue 15's acceptance: tower layers keep their state through hook changes, stock layers
//! fit (`RateLimit`, whose service is not `Clone`), a `tower::timeout` that drops a body
//! cancels its token, a batch call's own token cancels it, a late body is `TOOL_TIMEOUT`,
//! and denials carry their codes. Time is paused wherever a timer is involved.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_json::ErrorCode;
use tools_pipeline::{
    DispatchNext, DispatchRequest, PreDecision, PreNext, PreRequest, ToolError, from_fn,
    from_fn_with_state, layer,
};
use tools_registry::{OutputDecl, ToolDefinition};
use tools_runtime::{
    ToolCall, ToolRuntime,
    approval::{ApprovalOutcome, ApprovalRequest},
};

use crate::support::settle;

/// A tool whose body counts how many bodies run at once (and the most ever seen), yielding
/// a few times in between so that overlapping bodies would be seen.
fn counted(name: &str, active: &Arc<AtomicUsize>, most: &Arc<AtomicUsize>) -> ToolDefinition {
    let (active, most) = (Arc::clone(active), Arc::clone(most));
    ToolDefinition::builder(name, "counts overlapping bodies")
        .output(OutputDecl::text(json!({"type": "string"})))
        .concurrency(|_| true)
        .body(move |_args, _ctx| {
            let (active, most) = (Arc::clone(&active), Arc::clone(&most));
            async move {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                for _ in 0..5 {
                    tokio::task::yield_now().await;
                }
                active.fetch_sub(1, Ordering::SeqCst);
                Ok(json!("ok"))
            }
        })
        .build()
        .unwrap()
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({})).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrency_limit_holds_while_other_hooks_come_and_go() {
    let runtime = ToolRuntime::new();
    let (active, most) = (Arc::default(), Arc::default());
    runtime
        .register(counted("work", &active, &most))
        .unwrap()
        .keep();
    runtime
        .on_execute(layer(tower::limit::ConcurrencyLimitLayer::new(1)))
        .keep();

    let mut calls = tokio::task::JoinSet::new();
    for round in 0..8 {
        for i in 0..8 {
            let runtime = runtime.clone();
            calls.spawn(async move {
                runtime
                    .execute(call(&format!("c{round}-{i}"), "work"))
                    .await
            });
        }
        // Unrelated hooks added and removed while those calls run: none of this may
        // re-create the limit's semaphore.
        let pass = runtime.on_execute(from_fn(|req, next| async move { next.run(req).await }));
        let pre = runtime.on_pre_execute(from_fn(|req, next| async move { next.run(req).await }));
        tokio::task::yield_now().await;
        drop(pass);
        pre.keep();
    }
    // And a whole batch of parallel-safe calls through the same limit.
    let batch: Vec<ToolCall> = (0..16).map(|i| call(&format!("b{i}"), "work")).collect();
    let batch = runtime.run_batch(batch, CancellationToken::new());
    assert!(batch.await.iter().all(|r| !r.is_error()));
    while let Some(result) = calls.join_next().await {
        assert!(!result.unwrap().is_error());
    }
    assert_eq!(most.load(Ordering::SeqCst), 1, "two bodies ran at once");
}

/// Registers `held` (a body that logs its `id` argument into `entered` and waits for
/// `gate`) behind a concurrency limit of one.
fn limited_held_tool(
    runtime: &ToolRuntime,
    gate: &Arc<tokio::sync::Notify>,
    entered: &Arc<Mutex<Vec<String>>>,
) {
    let (g, e) = (Arc::clone(gate), Arc::clone(entered));
    runtime
        .register(
            ToolDefinition::builder("held", "waits for the test")
                .output(OutputDecl::text(json!({"type": "string"})))
                .concurrency(|_| true)
                .body(move |args, _ctx| {
                    let (g, e) = (Arc::clone(&g), Arc::clone(&e));
                    let id = args.get("id").cloned().unwrap_or(Value::Null).to_string();
                    async move {
                        e.lock().unwrap().push(id);
                        g.notified().await;
                        Ok(json!("ok"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    runtime
        .on_execute(layer(tower::limit::ConcurrencyLimitLayer::new(1)))
        .keep();
}

#[tokio::test(flavor = "current_thread")]
async fn a_layer_registered_before_a_hook_change_is_the_same_service_after_it() {
    let runtime = ToolRuntime::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let entered = Arc::new(Mutex::new(Vec::<String>::new()));
    limited_held_tool(&runtime, &gate, &entered);
    let spawn_held = |id: u64| {
        let runtime = runtime.clone();
        tokio::spawn(async move {
            let call = ToolCall::new(format!("c{id}"), "held", json!({ "id": id })).unwrap();
            runtime.execute(call).await
        })
    };
    let first = spawn_held(1);
    settle().await;
    // A hook change while the first body holds the only permit.
    runtime
        .on_post_execute(from_fn(|req, next| async move { next.run(req).await }))
        .keep();
    let second = spawn_held(2);
    settle().await;
    assert_eq!(
        *entered.lock().unwrap(),
        ["1"],
        "the second body ran beside the first"
    );
    gate.notify_one();
    assert!(!first.await.unwrap().is_error());
    settle().await;
    assert_eq!(*entered.lock().unwrap(), ["1", "2"]);
    gate.notify_one();
    assert!(!second.await.unwrap().is_error());
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_cancelled_while_it_waits_on_a_limit_stops_waiting() {
    let runtime = ToolRuntime::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    limited_held_tool(&runtime, &gate, &Arc::default());
    let holder = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.execute(call("c1", "held")).await }
    });
    settle().await;
    let cancel = CancellationToken::new();
    let waiter = tokio::spawn({
        let runtime = runtime.clone();
        let call = call("c2", "held").with_cancellation(cancel.clone());
        async move { runtime.execute(call).await }
    });
    settle().await;
    cancel.cancel();
    // The bound turns a regression (the call waits for the permit) into a failure.
    let waited = tokio::time::timeout(Duration::from_secs(60), waiter)
        .await
        .expect("the cancelled call still waits on the limit")
        .unwrap();
    assert_eq!(
        waited.error_code(),
        Some(ErrorCode::AbortedBeforeDispatch),
        "{waited:?}"
    );
    gate.notify_one();
    assert!(!holder.await.unwrap().is_error());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_rate_limit_fits_and_keeps_its_window() {
    let runtime = ToolRuntime::new();
    let (active, most) = (Arc::default(), Arc::default());
    runtime
        .register(counted("work", &active, &most))
        .unwrap()
        .keep();
    // `RateLimit`'s service is not `Clone`: it fits all the same.
    runtime
        .on_execute(layer(tower::limit::RateLimitLayer::new(
            2,
            Duration::from_secs(10),
        )))
        .keep();
    let start = tokio::time::Instant::now();
    for i in 0..2 {
        assert!(
            !runtime
                .execute(call(&format!("c{i}"), "work"))
                .await
                .is_error()
        );
    }
    assert!(start.elapsed() < Duration::from_secs(10));
    // A hook change does not reset the window.
    runtime
        .on_execute(from_fn(|req, next| async move { next.run(req).await }))
        .keep();
    assert!(!runtime.execute(call("c2", "work")).await.is_error());
    assert!(
        start.elapsed() >= Duration::from_secs(10),
        "the third call went through inside the window"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_tower_timeout_that_drops_the_body_cancels_its_token() {
    let runtime = ToolRuntime::new();
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let s = Arc::clone(&seen);
    runtime
        .register(
            ToolDefinition::builder("slow", "sleeps a minute")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(move |_args, ctx| {
                    *s.lock().unwrap() = Some(ctx.cancellation().clone());
                    async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(json!("late"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    runtime
        .on_execute(layer(tower::timeout::TimeoutLayer::new(
            Duration::from_secs(1),
        )))
        .keep();
    let result = runtime.execute(call("c1", "slow")).await;
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    let token = seen.lock().unwrap().clone().unwrap();
    assert!(
        token.is_cancelled(),
        "the dropped body's token was not cancelled"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_body_that_settles_after_its_deadline_is_a_timeout() {
    let runtime = ToolRuntime::new();
    runtime
        .register(
            ToolDefinition::builder("late", "returns after its budget, in one poll")
                .output(OutputDecl::text(json!({"type": "string"})))
                .timeout(Duration::from_millis(100))
                .body(|_args, _ctx| async {
                    // The clock passes the deadline and the body is ready in the same poll
                    // that would see the timer: the body's result must not win.
                    tokio::time::advance(Duration::from_millis(150)).await;
                    Ok(json!("too late"))
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    for i in 0..20 {
        let result = runtime.execute(call(&format!("c{i}"), "late")).await;
        assert_eq!(
            result.error_code(),
            Some(ErrorCode::ToolTimeout),
            "{result:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_calls_own_token_cancels_it_and_only_it() {
    let runtime = ToolRuntime::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let st = Arc::clone(&started);
    runtime
        .register(
            ToolDefinition::builder("wait", "waits for its token")
                .output(OutputDecl::text(json!({"type": "string"})))
                .concurrency(|_| true)
                .body(move |args, ctx| {
                    let st = Arc::clone(&st);
                    let waits = args.get("wait") == Some(&json!(true));
                    async move {
                        if waits {
                            st.notify_one();
                            ctx.cancellation().cancelled().await;
                        }
                        Ok(json!("finished"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let own = CancellationToken::new();
    let calls = vec![
        ToolCall::new("c1", "wait", json!({"wait": true}))
            .unwrap()
            .with_cancellation(own.clone()),
        ToolCall::new("c2", "wait", json!({"wait": false})).unwrap(),
    ];
    let batch = CancellationToken::new();
    let running = runtime.start_batch(calls, batch.clone());
    started.notified().await;
    own.cancel();
    // The bound only turns a regression (the call never sees its token) into a failure
    // instead of a hang; a passing run never comes near it.
    let results = tokio::time::timeout(Duration::from_secs(60), running.results())
        .await
        .expect("the call's own token never reached its body")
        .unwrap();
    assert_eq!(results[0].error_code(), Some(ErrorCode::Aborted));
    assert_eq!(results[1].text(), "finished");
    assert!(!batch.is_cancelled());

    // A token cancelled before the batch starts: the call never runs.
    let own = CancellationToken::new();
    own.cancel();
    let calls = vec![
        ToolCall::new("c3", "wait", json!({"wait": false}))
            .unwrap()
            .with_cancellation(own),
    ];
    let results = runtime.run_batch(calls, CancellationToken::new()).await;
    assert_eq!(
        results[0].error_code(),
        Some(ErrorCode::AbortedBeforeDispatch)
    );
}

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo", "echo")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn denials_carry_denied_and_refused_approvals_approval_denied() {
    async fn policy(req: PreRequest, next: PreNext) -> Result<PreDecision, ToolError> {
        match req.execution().call_id() {
            "deny" => Ok(PreDecision::Deny("not here".into())),
            "ask" => Ok(PreDecision::Ask(Some("may I?".into()))),
            _ => next.run(req).await,
        }
    }
    let check = |runtime: ToolRuntime| async move {
        let scope = runtime.scope();
        let run = |id: &str| {
            runtime.execute(
                ToolCall::new(id, "echo", json!({}))
                    .unwrap()
                    .with_agent(scope.clone()),
            )
        };
        (run("deny").await, run("ask").await, run("guarded").await)
    };

    // No approval service: the ask is unanswerable.
    let runtime = ToolRuntime::new();
    runtime.register(echo()).unwrap().keep();
    runtime.on_pre_execute(from_fn(policy)).keep();
    runtime
        .guard(|call: &tools_registry::CallInfo| {
            (&*call.call_id == "guarded").then(|| "guard says no".to_owned())
        })
        .keep();
    let (deny, ask, guarded) = check(runtime).await;
    assert_eq!(deny.error_code(), Some(ErrorCode::Denied));
    assert_eq!(deny.text(), "Error: not here");
    assert_eq!(ask.error_code(), Some(ErrorCode::ApprovalDenied));
    assert_eq!(guarded.error_code(), Some(ErrorCode::Denied));
    assert_eq!(guarded.text(), "Error: guard says no");

    // Each refusal of an approval service, and its failure.
    for (answer, text) in [
        (Ok(ApprovalOutcome::Rejected), "the user rejected"),
        (Ok(ApprovalOutcome::Unavailable), "no approval channel"),
        (Ok(ApprovalOutcome::Cancelled), "was cancelled"),
        (Err("the approval UI crashed"), "the approval UI crashed"),
    ] {
        let runtime = ToolRuntime::builder()
            .approval(move |_req: ApprovalRequest| async move { answer.map_err(ToolError::new) })
            .build()
            .unwrap();
        runtime.register(echo()).unwrap().keep();
        runtime.on_pre_execute(from_fn(policy)).keep();
        let (_, ask, _) = check(runtime).await;
        assert_eq!(ask.error_code(), Some(ErrorCode::ApprovalDenied), "{text}");
        assert!(ask.text().contains(text), "{}", ask.text());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn hooks_with_state_and_hooks_that_short_circuit() {
    async fn count(
        calls: Arc<AtomicUsize>,
        req: DispatchRequest,
        next: DispatchNext,
    ) -> Result<tools_runtime::ToolResult, ToolError> {
        calls.fetch_add(1, Ordering::SeqCst);
        next.run(req).await
    }
    let runtime = ToolRuntime::new();
    runtime.register(echo()).unwrap().keep();
    let calls = Arc::new(AtomicUsize::new(0));
    runtime
        .on_execute(from_fn_with_state(Arc::clone(&calls), count))
        .keep();
    // A hook that fails with a coded error keeps the code.
    let failing = runtime.on_execute(from_fn(|_req: DispatchRequest, _next| async {
        Err(ToolError::with_code(ErrorCode::ToolTimeout, "gave up"))
    }));
    let result = runtime.execute(call("c1", "echo")).await;
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    drop(failing);
    assert_eq!(runtime.execute(call("c2", "echo")).await.text(), "ok");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
