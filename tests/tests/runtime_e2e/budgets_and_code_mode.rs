//! The timeout policy, and the Code Mode collapse.

use super::*;

// ---------------------------------------------------------------------------------------
// Timeout
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_tool_over_its_budget_gets_tool_timeout_and_its_siblings_do_not() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let saw_cancellation = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&saw_cancellation);
    runtime
        .register(
            ToolDefinition::builder("slow", "waits for its token")
                .output(OutputDecl::text(json!({"type": "string"})))
                .timeout(Duration::from_millis(100))
                .concurrency(|_| true)
                .body(move |_args, ctx| {
                    let s = Arc::clone(&s);
                    async move {
                        ctx.cancellation().cancelled().await;
                        s.store(true, Ordering::SeqCst);
                        Ok(json!("partial"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    runtime
        .register(
            ToolDefinition::builder("stubborn", "ignores its token")
                .output(OutputDecl::text(json!({"type": "string"})))
                .timeout(Duration::from_millis(100))
                .concurrency(|_| true)
                .body(|_args, _ctx| async {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    Ok(json!("late"))
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    runtime
        .register(
            ToolDefinition::builder("fast", "answers at once")
                .output(OutputDecl::text(json!({"type": "string"})))
                .timeout(Duration::from_millis(100))
                .concurrency(|_| true)
                .body(|_args, _ctx| async { Ok(json!("fast")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();

    let started = tokio::time::Instant::now();
    let results = runtime
        .run_batch(
            vec![call("c1", "slow", json!({})), call("c2", "fast", json!({}))],
            CancellationToken::new(),
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(results[0].error_code(), Some(ErrorCode::ToolTimeout));
    assert_eq!(results[0].text(), "Error: tool call timed out after 100ms");
    assert!(
        saw_cancellation.load(Ordering::SeqCst),
        "the body's token was cancelled"
    );
    assert_eq!(results[1].text(), "fast");
    assert!(
        elapsed >= Duration::from_millis(100) && elapsed < Duration::from_millis(200),
        "{elapsed:?}"
    );

    // The policy is cooperative: it waits for a body that ignores its token.
    let started = tokio::time::Instant::now();
    let stubborn = runtime.execute(call("c3", "stubborn", json!({}))).await;
    assert_eq!(stubborn.error_code(), Some(ErrorCode::ToolTimeout));
    assert!(started.elapsed() >= Duration::from_millis(250));
    checker.assert_clean();
}

// ---------------------------------------------------------------------------------------
// Code Mode collapse
// ---------------------------------------------------------------------------------------

const ROUTE_BACK: &str = "Error: unknown tool \"write\": only `run_code` is callable directly — call `write` from inside a `run_code` program instead";

fn counted_write(runtime: &ToolRuntime) -> Arc<AtomicUsize> {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    runtime
        .register(text_tool("write", false, move |_args, _ctx| {
            r.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("written")) }
        }))
        .unwrap()
        .keep();
    runs
}

#[tokio::test(flavor = "current_thread")]
async fn under_code_mode_native_calls_are_routed_back_and_sub_calls_run() {
    let js = tools_runtime::codemode::QuickJsRuntime::new(
        tools_runtime::codemode::RuntimeLimits::default(),
    )
    .unwrap();
    let (runtime, checker) = checked_runtime_in(
        PresentationMode::Code,
        ToolRuntime::builder().code_runtime(Arc::new(js)),
    );
    let runs = counted_write(&runtime);
    let results = runtime
        .run_batch(
            vec![
                call("c1", "write", json!({})),
                call("c2", "write", json!({})).with_parent(ExecutionToken::mint()),
            ],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(results[0].error_code(), Some(ErrorCode::UnknownTool));
    assert_eq!(results[0].text(), ROUTE_BACK);
    assert_eq!(results[1].text(), "written");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the sub-call ran");
    checker.assert_clean();
}

#[tokio::test(flavor = "current_thread")]
async fn code_mode_declared_for_one_agent_collapses_only_its_calls() {
    let js = tools_runtime::codemode::QuickJsRuntime::new(
        tools_runtime::codemode::RuntimeLimits::default(),
    )
    .unwrap();
    let (runtime, checker) = checked_runtime(ToolRuntime::builder().code_runtime(Arc::new(js)));
    let runs = counted_write(&runtime);
    let coder = runtime.scope();
    let native = runtime.scope();
    let mode = runtime.present_as(&coder, PresentationMode::Code).unwrap();
    let collapsed = runtime
        .execute(call("c1", "write", json!({})).with_agent(coder.clone()))
        .await;
    assert_eq!(collapsed.text(), ROUTE_BACK);
    let direct = runtime
        .execute(call("c2", "write", json!({})).with_agent(native))
        .await;
    assert_eq!(direct.text(), "written");
    let sub = runtime
        .execute(
            call("c3", "write", json!({}))
                .with_agent(coder.clone())
                .with_parent(ExecutionToken::mint()),
        )
        .await;
    assert_eq!(sub.text(), "written");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Dropping the declaration returns the agent to the default (native) mode.
    drop(mode);
    let back = runtime
        .execute(call("c4", "write", json!({})).with_agent(coder))
        .await;
    assert_eq!(back.text(), "written");
    checker.assert_clean();
}
