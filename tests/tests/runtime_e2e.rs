//! End-to-end tests of the workspace through `ToolRuntime` only: registration, per-agent
//! restriction, hooks and observers, a 50-call mixed batch, cancellation mid-batch, the
//! timeout policy, and the Code Mode collapse.
//!
//! Synchronisation uses gates and `tokio::task::yield_now` loops, never sleeps; timers run
//! on paused time, so nothing depends on the machine's speed.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tools_json::ErrorCode;
use tools_pipeline::testing::InvariantChecker;
use tools_pipeline::{
    PostDecision, PostNext, PostRequest, PreDecision, PreNext, PreRequest, ToolContext, from_fn,
};
use tools_presentation::ContentBlock;
use tools_registry::{
    ExecutionToken, JsonValue, OutputDecl, RunContext, ToolDefinition, ToolError, define_tool,
};
use tools_runtime::{
    BatchEvent, ExecutionMode, HookOptions, PresentationMode, ToolCall, ToolFilter, ToolResult,
    ToolRuntime,
};
use tools_schema::ToolArgs;

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

/// A shared, ordered log.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Gates keyed by id: a body waits on its id until the test opens it (opening first is
/// remembered).
#[derive(Clone, Default)]
struct Gates(Arc<Mutex<HashMap<String, Arc<Notify>>>>);

impl Gates {
    fn gate(&self, id: &str) -> Arc<Notify> {
        Arc::clone(self.0.lock().unwrap().entry(id.to_owned()).or_default())
    }

    async fn wait(&self, id: &str) {
        self.gate(id).notified().await;
    }

    fn open(&self, id: &str) {
        self.gate(id).notify_one();
    }
}

/// Lets every task on the current thread run until nothing more can progress.
async fn settle() {
    for _ in 0..200 {
        tokio::task::yield_now().await;
    }
}

fn text_tool<F, Fut>(name: &str, parallel: bool, body: F) -> ToolDefinition
where
    F: Fn(JsonValue, RunContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let builder = ToolDefinition::builder(name, format!("the {name} tool"))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(body);
    let builder = if parallel {
        builder.concurrency(|_| true)
    } else {
        builder
    };
    builder.build().unwrap()
}

fn id_of(args: &JsonValue) -> String {
    match args.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args).unwrap()
}

fn texts(results: &[ToolResult]) -> Vec<String> {
    results.iter().map(ToolResult::text).collect()
}

fn checked_runtime(builder: tools_runtime::RuntimeBuilder) -> (ToolRuntime, InvariantChecker) {
    let runtime = builder.build().unwrap();
    let checker = InvariantChecker::install(runtime.pipeline());
    (runtime, checker)
}

// ---------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, ToolArgs)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[tokio::test(flavor = "current_thread")]
async fn registered_tools_are_shown_run_validated_and_removed_with_their_handle() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let add = define_tool::<AddArgs, i64>("add", "Add two integers.")
        .body(|args: AddArgs, _ctx| async move { Ok(args.a + args.b) })
        .concurrency(|_: &AddArgs| true)
        .build()
        .unwrap();
    let add_registration = runtime.register(add).unwrap();
    runtime
        .register(text_tool("echo", false, |args, _ctx| async move {
            Ok(args.get("text").cloned().unwrap_or(json!("")))
        }))
        .unwrap()
        .keep();

    let schemas = runtime.schemas(None);
    let mut names: Vec<String> = schemas.iter().map(|s| s.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["add", "echo"]);
    let add_schema = schemas.iter().find(|s| s.name.as_str() == "add").unwrap();
    assert_eq!(
        add_schema.parameters.to_string(),
        // Derived from `AddArgs`: an `i64` carries its range, so an integer it cannot hold
        // is an argument violation, not a deserialization failure.
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""a":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"#,
            r#""b":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}},"#,
            r#""required":["a","b"]}"#
        )
    );
    assert_eq!(add_schema.to_openai_json()["function"]["name"], "add");

    let sum = runtime
        .execute(call("c1", "add", json!({"a": 2, "b": 40})))
        .await;
    assert!(!sum.is_error(), "{sum:?}");
    assert_eq!(sum.text(), "42");
    assert_eq!(sum.value().map(|v| v.as_value().clone()), Some(json!(42)));

    let invalid = runtime
        .execute(call("c2", "add", json!({"a": "two"})))
        .await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InvalidArgs));
    assert!(invalid.text().contains("a:"), "{}", invalid.text());

    assert_eq!(
        runtime.execution_mode(&call("c3", "add", json!({"a": 1, "b": 2}))),
        ExecutionMode::Parallel
    );
    assert_eq!(
        runtime.execution_mode(&call("c4", "echo", json!({}))),
        ExecutionMode::Exclusive
    );
    // Invalid arguments make a typed tool's call exclusive.
    assert_eq!(
        runtime.execution_mode(&call("c5", "add", json!({"a": "x"}))),
        ExecutionMode::Exclusive
    );

    drop(add_registration);
    let gone = runtime
        .execute(call("c6", "add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(gone.error_code(), Some(ErrorCode::UnknownTool));
    let names: Vec<String> = runtime
        .schemas(None)
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["echo"]);
    assert_eq!(checker.published(), 3);
    checker.assert_clean();
}

// ---------------------------------------------------------------------------------------
// Restriction per agent
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread")]
async fn a_restricted_agent_sees_unknown_tool_while_another_runs_it() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    runtime
        .register(text_tool("shell", false, move |_args, _ctx| {
            r.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("ran")) }
        }))
        .unwrap()
        .keep();
    runtime
        .register(text_tool("read", true, |_args, _ctx| async {
            Ok(json!("read"))
        }))
        .unwrap()
        .keep();
    let restricted = runtime.scope();
    let trusted = runtime.scope();
    let mask = runtime
        .restrict(&restricted, ToolFilter::deny(["shell"]))
        .unwrap();

    let names = |agent| -> Vec<String> {
        let mut names: Vec<String> = runtime
            .schemas(Some(agent))
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&restricted), ["read"]);
    assert_eq!(names(&trusted), ["read", "shell"]);

    let results = runtime
        .run_batch(
            vec![
                call("c1", "shell", json!({})).with_agent(restricted.clone()),
                call("c2", "shell", json!({})).with_agent(trusted.clone()),
                call("c3", "read", json!({})).with_agent(restricted.clone()),
            ],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(results[0].error_code(), Some(ErrorCode::UnknownTool));
    assert_eq!(results[0].text(), "Error: unknown tool \"shell\"");
    assert_eq!(results[1].text(), "ran");
    assert_eq!(results[2].text(), "read");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the trusted call ran");

    // A child agent of the restricted one inherits its mask.
    let child = runtime.child_scope(&restricted);
    let from_child = runtime
        .execute(call("c4", "shell", json!({})).with_agent(child))
        .await;
    assert_eq!(from_child.error_code(), Some(ErrorCode::UnknownTool));

    // Dropping the mask lifts the restriction.
    drop(mask);
    let lifted = runtime
        .execute(call("c5", "shell", json!({})).with_agent(restricted.clone()))
        .await;
    assert_eq!(lifted.text(), "ran");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    checker.assert_clean();
}

// ---------------------------------------------------------------------------------------
// Hooks and observers
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread")]
async fn pre_and_post_hooks_and_an_observer_see_every_call_of_a_batch() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let bodies = Log::default();
    let b = bodies.clone();
    runtime
        .register(text_tool("echo", true, move |args, _ctx| {
            let text = args.get("text").cloned().unwrap_or(json!(""));
            b.push(text.as_str().unwrap_or_default());
            async move { Ok(text) }
        }))
        .unwrap()
        .keep();

    // Pre-execute: refuse a word (the body never runs).
    let deny = runtime.on_pre_execute(from_fn(|request: PreRequest, next: PreNext| async move {
        if request.execution().arguments().get("text") == Some(&json!("forbidden")) {
            return Ok(PreDecision::Deny("policy: forbidden word".into()));
        }
        next.run(request).await
    }));
    // A pre-execute hook scoped to one agent.
    let agent_a = runtime.scope();
    let agent_b = runtime.scope();
    let scoped = Log::default();
    let s = scoped.clone();
    runtime
        .on_pre_execute_with(
            HookOptions::new().scope(&agent_a),
            from_fn(move |request: PreRequest, next: PreNext| {
                s.push(request.execution().call_id());
                async move { next.run(request).await }
            }),
        )
        .keep();
    // Post-execute: upper-case successful content and add a context; log every call.
    let posts = Log::default();
    let p = posts.clone();
    runtime
        .on_post_execute(from_fn(move |request: PostRequest, next: PostNext| {
            p.push(request.execution().call_id());
            async move {
                if request.result().is_error() {
                    return next.run(request).await;
                }
                let upper = request.result().text().to_uppercase();
                Ok(
                    PostDecision::accept_content(vec![ContentBlock::text(upper)])
                        .with_contexts(vec![ToolContext::text("checked by post hook")]),
                )
            }
        }))
        .keep();
    // The observer sees the very results the caller gets, in the model's order.
    let observed: Arc<Mutex<Vec<(String, ToolResult)>>> = Arc::default();
    let o = Arc::clone(&observed);
    runtime
        .on_result(move |exec, result| {
            o.lock()
                .unwrap()
                .push((exec.call_id().to_owned(), result.clone()));
        })
        .keep();

    let calls = vec![
        call("c1", "echo", json!({"text": "hello"})).with_agent(agent_a.clone()),
        call("c2", "echo", json!({"text": "forbidden"})).with_agent(agent_b.clone()),
        call("c3", "echo", json!({"text": "world"})).with_agent(agent_b.clone()),
    ];
    let results = runtime.run_batch(calls, CancellationToken::new()).await;
    assert_eq!(
        texts(&results),
        ["HELLO", "Error: policy: forbidden word", "WORLD"]
    );
    // Content was replaced, the value was not.
    assert_eq!(
        results[0].value().map(|v| v.as_value().clone()),
        Some(json!("hello"))
    );
    assert_eq!(
        results[0].contexts(),
        [ToolContext::text("checked by post hook")]
    );
    assert!(results[1].contexts().is_empty());
    assert_eq!(bodies.entries(), ["hello", "world"]);
    assert_eq!(
        scoped.entries(),
        ["c1"],
        "the scoped hook sees agent A only"
    );
    assert_eq!(
        posts.entries(),
        ["c1", "c2", "c3"],
        "denials are post-executed"
    );
    let observed = observed.lock().unwrap().clone();
    let ids: Vec<&str> = observed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    for ((_, seen), returned) in observed.iter().zip(&results) {
        assert_eq!(seen, returned);
    }

    // Dropping the deny hook's handle removes it for later calls.
    drop(deny);
    let allowed = runtime
        .execute(call("c4", "echo", json!({"text": "forbidden"})))
        .await;
    assert_eq!(allowed.text(), "FORBIDDEN");
    assert_eq!(checker.published(), 4);
    checker.assert_clean();
}

// ---------------------------------------------------------------------------------------
// A batch of 50 mixed calls
// ---------------------------------------------------------------------------------------

/// What the bodies of the 50-call batch observed.
#[derive(Default)]
struct Overlap {
    active: AtomicUsize,
    max_active: AtomicUsize,
    exclusive_running: AtomicBool,
    violations: Mutex<Vec<String>>,
}

impl Overlap {
    fn violation(&self, what: String) {
        self.violations.lock().unwrap().push(what);
    }
}

fn overlap_tools(runtime: &ToolRuntime, overlap: &Arc<Overlap>) {
    let o = Arc::clone(overlap);
    runtime
        .register(text_tool("r", true, move |args, _ctx| {
            let (o, id) = (Arc::clone(&o), id_of(&args));
            async move {
                let now = o.active.fetch_add(1, Ordering::SeqCst) + 1;
                o.max_active.fetch_max(now, Ordering::SeqCst);
                for _ in 0..3 {
                    if o.exclusive_running.load(Ordering::SeqCst) {
                        o.violation(format!("r{id} ran beside an exclusive body"));
                    }
                    tokio::task::yield_now().await;
                }
                o.active.fetch_sub(1, Ordering::SeqCst);
                Ok(json!(id))
            }
        }))
        .unwrap()
        .keep();
    let o = Arc::clone(overlap);
    runtime
        .register(text_tool("w", false, move |args, _ctx| {
            let (o, id) = (Arc::clone(&o), id_of(&args));
            async move {
                if o.active.fetch_add(1, Ordering::SeqCst) != 0 {
                    o.violation(format!("w{id} started beside other bodies"));
                }
                o.exclusive_running.store(true, Ordering::SeqCst);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                    if o.active.load(Ordering::SeqCst) != 1 {
                        o.violation(format!("another body started during w{id}"));
                    }
                }
                o.exclusive_running.store(false, Ordering::SeqCst);
                o.active.fetch_sub(1, Ordering::SeqCst);
                Ok(json!(id))
            }
        }))
        .unwrap()
        .keep();
}

/// Runs 50 mixed calls (cap 8) and checks order, events and exclusivity; returns the
/// largest number of bodies seen running at once.
async fn fifty_mixed_calls() -> usize {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder().max_parallel_tool_calls(8));
    let overlap = Arc::new(Overlap::default());
    overlap_tools(&runtime, &overlap);
    let calls: Vec<ToolCall> = (0..50)
        .map(|i| {
            let name = if i % 7 == 3 || i % 11 == 0 { "w" } else { "r" };
            call(&format!("c{i}"), name, json!({"id": i}))
        })
        .collect();
    let exclusive = calls.iter().filter(|c| c.name() == "w").count();
    assert!((5..45).contains(&exclusive), "a real mix: {exclusive}");

    let mut batch = runtime.start_batch(calls, CancellationToken::new());
    let mut started = Vec::new();
    let mut settled = Vec::new();
    while let Some(event) = batch.next_event().await {
        match event {
            BatchEvent::Started { index } => started.push(index),
            BatchEvent::Settled { index, result } => {
                assert!(
                    started.contains(&index),
                    "{index} settled before it started"
                );
                assert_eq!(result.text(), index.to_string());
                settled.push(index);
            }
        }
    }
    let results = batch.results().await.unwrap();
    let expected: Vec<String> = (0..50).map(|i: usize| i.to_string()).collect();
    assert_eq!(texts(&results), expected, "results in the model's order");
    assert!(results.iter().all(|r| !r.is_error()));
    assert_eq!(started, (0..50).collect::<Vec<_>>(), "started in order");
    assert_eq!(settled, (0..50).collect::<Vec<_>>(), "published in order");
    let violations = overlap.violations.lock().unwrap().clone();
    assert!(violations.is_empty(), "{violations:?}");
    let max = overlap.max_active.load(Ordering::SeqCst);
    assert!((1..=8).contains(&max), "the cap holds: {max}");
    assert_eq!(checker.published(), 50);
    checker.assert_clean();
    max
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_mixed_calls_on_two_workers_keep_order_and_exclusivity() {
    fifty_mixed_calls().await;
}

#[tokio::test(flavor = "current_thread")]
async fn fifty_mixed_calls_overlap_their_parallel_bodies() {
    // On one thread the interleaving is deterministic: parallel bodies that yield do overlap.
    let max = fifty_mixed_calls().await;
    assert!(max > 1, "parallel bodies never overlapped");
}

// ---------------------------------------------------------------------------------------
// Cancellation mid-batch
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread")]
async fn cancelling_a_batch_drains_started_calls_and_aborts_the_rest() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let (gates, log) = (Gates::default(), Log::default());
    let (g, l) = (gates.clone(), log.clone());
    // `p`: a cooperative call stops on cancellation with its own error; a stubborn one
    // waits for its gate whatever happens.
    runtime
        .register(text_tool("p", true, move |args, ctx| {
            let (g, l, id) = (g.clone(), l.clone(), id_of(&args));
            let cooperative = args.get("cooperative") == Some(&json!(true));
            l.push(format!("start-{id}"));
            async move {
                if cooperative {
                    ctx.cancellation().cancelled().await;
                    l.push(format!("stopped-{id}"));
                    return Err(ToolError::custom("STOPPED", "stopped on cancellation"));
                }
                g.wait(&id).await;
                l.push(format!("end-{id}"));
                Ok(json!(id))
            }
        }))
        .unwrap()
        .keep();
    let l = log.clone();
    runtime
        .register(text_tool("x", false, move |args, _ctx| {
            l.push(format!("x-{}", id_of(&args)));
            async { Ok(json!("x")) }
        }))
        .unwrap()
        .keep();
    let published = Log::default();
    let p = published.clone();
    runtime
        .on_result(move |exec, _result| {
            p.push(exec.call_id());
        })
        .keep();

    let cancel = CancellationToken::new();
    let mut batch = runtime.start_batch(
        vec![
            call("c0", "p", json!({"id": 0})),
            call("c1", "p", json!({"id": 1, "cooperative": true})),
            call("c2", "x", json!({"id": 2})),
            call("c3", "p", json!({"id": 3})),
            call("c4", "p", json!({"id": 4})),
        ],
        cancel.clone(),
    );
    settle().await;
    assert_eq!(
        log.entries(),
        ["start-0", "start-1"],
        "the exclusive x waits for both"
    );

    cancel.cancel();
    settle().await;
    assert_eq!(log.entries(), ["start-0", "start-1", "stopped-1"]);
    assert!(
        published.entries().is_empty(),
        "nothing is published while c0 is still running"
    );

    gates.open("0");
    let mut events = Vec::new();
    while let Some(event) = batch.next_event().await {
        events.push(match event {
            BatchEvent::Started { index } => format!("start:{index}"),
            BatchEvent::Settled { index, .. } => format!("settle:{index}"),
        });
    }
    let results = batch.results().await.unwrap();
    assert_eq!(
        log.entries(),
        ["start-0", "start-1", "stopped-1", "end-0"],
        "no call started after the cancellation"
    );
    assert_eq!(
        events,
        [
            "start:0", "start:1", "settle:0", "settle:1", "settle:2", "settle:3", "settle:4"
        ],
        "exactly one result per call"
    );
    assert_eq!(results.len(), 5);
    // A started body that succeeded anyway is aborted; a failure keeps its own code.
    assert_eq!(results[0].error_code(), Some(ErrorCode::Aborted));
    assert_eq!(results[1].code().map(|c| c.as_str()), Some("STOPPED"));
    for result in &results[2..] {
        assert_eq!(result.error_code(), Some(ErrorCode::AbortedBeforeDispatch));
    }
    // Unstarted calls never enter the pipeline.
    assert_eq!(published.entries(), ["c0", "c1"]);
    assert_eq!(checker.published(), 2);
    checker.assert_clean();
}

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
    let js = tools_runtime::QuickJsRuntime::new(tools_runtime::RuntimeLimits::default()).unwrap();
    let (runtime, checker) = checked_runtime(
        ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .code_runtime(Arc::new(js)),
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
    let js = tools_runtime::QuickJsRuntime::new(tools_runtime::RuntimeLimits::default()).unwrap();
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
