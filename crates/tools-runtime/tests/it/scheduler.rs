//! Catalogue group P: the batch scheduler.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_json::ErrorCode;
use tools_pipeline::{
    PostNext, PostRequest, PreDecision, PreNext, PreRequest, ToolContext, from_fn,
};
use tools_runtime::{BatchEvent, ToolRuntime, tools::PresentationMode};

use crate::support::{Gates, Log, call, gated, instant, runtime_with_cap, settle};

fn texts(results: &[tools_runtime::ToolResult]) -> Vec<String> {
    results.iter().map(|r| r.text()).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn p01_parallel_bodies_overlap() {
    let runtime = runtime_with_cap(10);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    let batch = runtime.start_batch(
        vec![call(1, "p", "1"), call(2, "p", "2"), call(3, "p", "3")],
        CancellationToken::new(),
    );
    settle().await;
    assert_eq!(
        log.entries(),
        ["1", "2", "3"],
        "all three started before any release"
    );
    for id in ["1", "2", "3"] {
        gates.release(id);
    }
    assert_eq!(
        texts(&batch.results().await.unwrap()),
        ["done-1", "done-2", "done-3"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p02_an_exclusive_call_is_a_barrier() {
    let runtime = runtime_with_cap(10);
    let log = Log::default();
    runtime
        .register(instant("r", true, &log, "r", true))
        .unwrap()
        .keep();
    runtime
        .register(instant("w", false, &log, "w", false))
        .unwrap()
        .keep();
    let results = runtime
        .run_batch(
            vec![call(1, "r", "A1"), call(2, "w", "A2"), call(3, "r", "A3")],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(texts(&results), ["A1", "A2", "A3"]);
    assert_eq!(
        log.entries(),
        ["r-start-A1", "r-end-A1", "w-A2", "r-start-A3", "r-end-A3"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p03_calls_are_classified_right_before_they_start() {
    let runtime = runtime_with_cap(10);
    let (gates, log) = (Gates::default(), Log::default());
    let first = runtime
        .register(gated("x", true, &gates, &log, ""))
        .unwrap();
    let holder = Arc::new(Mutex::new(Some(first)));
    let (r, g, l) = (runtime.clone(), gates.clone(), log.clone());
    runtime
        .register(
            tools_registry::ToolDefinition::builder("replace", "swap x for an exclusive x")
                .output(tools_registry::OutputDecl::text(json!({"type": "string"})))
                .body(move |_a, _c| {
                    drop(holder.lock().unwrap().take());
                    r.register(gated("x", false, &g, &l, "")).unwrap().keep();
                    async { Ok(json!("replaced")) }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let batch = runtime.start_batch(
        vec![
            call(0, "replace", "r"),
            call(1, "x", "1"),
            call(2, "x", "2"),
        ],
        CancellationToken::new(),
    );
    settle().await;
    assert_eq!(
        log.entries(),
        ["1"],
        "x(1) runs alone on the exclusive replacement"
    );
    gates.release("1");
    settle().await;
    assert_eq!(log.entries(), ["1", "2"]);
    gates.release("2");
    assert_eq!(
        texts(&batch.results().await.unwrap()),
        ["replaced", "done-1", "done-2"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p04_a_replacement_made_by_an_observer_applies_to_later_starts() {
    let runtime = runtime_with_cap(2);
    let (gates, log) = (Gates::default(), Log::default());
    let parallel = Arc::new(Mutex::new(Some(
        runtime
            .register(gated("x", true, &gates, &log, "old-"))
            .unwrap(),
    )));
    let (r, g, l) = (runtime.clone(), gates.clone(), log.clone());
    runtime
        .on_result(move |exec, _res| {
            if exec.call_id() == "c1"
                && let Some(old) = parallel.lock().unwrap().take()
            {
                drop(old);
                r.register(gated("x", false, &g, &l, "new-"))
                    .unwrap()
                    .keep();
            }
        })
        .keep();
    let batch = runtime.start_batch(
        vec![call(1, "x", "1"), call(2, "x", "2"), call(3, "x", "3")],
        CancellationToken::new(),
    );
    settle().await;
    assert_eq!(log.entries(), ["old-1", "old-2"]);
    gates.release("1");
    settle().await;
    assert_eq!(
        log.entries(),
        ["old-1", "old-2"],
        "the exclusive replacement waits for x(2)"
    );
    gates.release("2");
    settle().await;
    assert_eq!(log.entries(), ["old-1", "old-2", "new-3"]);
    gates.release("3");
    assert_eq!(
        texts(&batch.results().await.unwrap()),
        ["done-1", "done-2", "done-3"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p05_p07_results_are_published_in_the_models_order() {
    let runtime = runtime_with_cap(2);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    let calls = (1..=4).map(|i| call(i, "p", &i.to_string())).collect();
    let mut batch = runtime.start_batch(calls, CancellationToken::new());
    settle().await;
    assert_eq!(log.entries(), ["1", "2"], "cap 2");
    gates.release("2");
    settle().await;
    // The second body finished: its slot is free, so the third starts; its result waits
    // for the first one's commit.
    assert_eq!(log.entries(), ["1", "2", "3"]);
    gates.release("1");
    settle().await;
    assert_eq!(log.entries(), ["1", "2", "3", "4"]);
    gates.release("3");
    gates.release("4");
    let mut events = Vec::new();
    while let Some(event) = batch.next_event().await {
        events.push(match event {
            BatchEvent::Started { index } => format!("call:{index}"),
            BatchEvent::Settled { index, .. } => format!("result:{index}"),
        });
    }
    assert_eq!(
        events,
        [
            "call:0", "call:1", "call:2", "result:0", "result:1", "call:3", "result:2", "result:3"
        ]
    );
    assert_eq!(
        texts(&batch.results().await.unwrap()),
        ["done-1", "done-2", "done-3", "done-4"]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p08_a_cap_of_one_is_serial() {
    let runtime = runtime_with_cap(1);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    let batch = runtime.start_batch(
        vec![call(1, "p", "1"), call(2, "p", "2")],
        CancellationToken::new(),
    );
    settle().await;
    assert_eq!(log.entries(), ["1"]);
    gates.release("1");
    settle().await;
    assert_eq!(log.entries(), ["1", "2"]);
    gates.release("2");
    batch.results().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn p06_caps_must_be_positive() {
    let err = ToolRuntime::builder()
        .max_parallel_tool_calls(0)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "max_parallel_tool_calls must be a positive integer"
    );
    assert!(
        ToolRuntime::builder()
            .max_parallel_sub_calls(0)
            .build()
            .is_err()
    );
    assert_eq!(ToolRuntime::new().config().max_parallel_tool_calls(), 10);
    assert_eq!(ToolRuntime::new().config().max_parallel_sub_calls(), 10);
}

#[tokio::test(flavor = "current_thread")]
async fn p09_p10_pre_and_post_run_in_order_and_contexts_follow() {
    let runtime = runtime_with_cap(10);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    let stages = Log::default();
    let s = stages.clone();
    runtime
        .on_pre_execute(from_fn(move |r: PreRequest, n: PreNext| {
            s.push(format!("pre:{}", r.execution().call_id()));
            async move { n.run(r).await }
        }))
        .keep();
    let s = stages.clone();
    runtime
        .on_post_execute(from_fn(move |r: PostRequest, n: PostNext| {
            s.push(format!("post:{}", r.execution().call_id()));
            let id = r.execution().call_id().to_owned();
            async move {
                Ok(n.run(r)
                    .await?
                    .with_contexts(vec![ToolContext::text(format!("ctx-{id}"))]))
            }
        }))
        .keep();
    let batch = runtime.start_batch(
        (1..=3).map(|i| call(i, "p", &i.to_string())).collect(),
        CancellationToken::new(),
    );
    settle().await;
    for id in ["3", "2", "1"] {
        gates.release(id);
        settle().await;
    }
    let results = batch.results().await.unwrap();
    assert_eq!(
        stages.entries(),
        [
            "pre:c1", "pre:c2", "pre:c3", "post:c1", "post:c2", "post:c3"
        ]
    );
    let contexts: Vec<String> = results
        .iter()
        .map(|r| r.contexts()[0].content[0].as_text().unwrap().to_owned())
        .collect();
    assert_eq!(contexts, ["ctx-c1", "ctx-c2", "ctx-c3"]);
}

#[tokio::test(flavor = "current_thread")]
async fn p11_denials_and_failures_are_results_in_place() {
    let runtime = runtime_with_cap(10);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    runtime
        .on_pre_execute(from_fn(|r: PreRequest, n: PreNext| async move {
            match r.execution().call_id() {
                "c2" => Ok(PreDecision::Deny("blocked by policy".into())),
                "c3" => Err("pre exploded".into()),
                _ => n.run(r).await,
            }
        }))
        .keep();
    let posts = Log::default();
    let p = posts.clone();
    runtime
        .on_post_execute(from_fn(move |r: PostRequest, n: PostNext| {
            p.push(r.execution().call_id().to_owned());
            async move { n.run(r).await }
        }))
        .keep();
    let batch = runtime.start_batch(
        (1..=3).map(|i| call(i, "p", &i.to_string())).collect(),
        CancellationToken::new(),
    );
    settle().await;
    assert_eq!(log.entries(), ["1"]);
    gates.release("1");
    let results = batch.results().await.unwrap();
    assert_eq!(posts.entries(), ["c1", "c2"]);
    assert_eq!(results[0].text(), "done-1");
    assert!(results[1].text().contains("blocked by policy"));
    assert!(results[2].text().contains("pre exploded"));
}

#[tokio::test(flavor = "current_thread")]
async fn p12_p13_a_cancelled_batch_starts_no_body() {
    let runtime = runtime_with_cap(10);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let results = runtime
        .run_batch(vec![call(1, "p", "1"), call(2, "p", "2")], cancel)
        .await;
    assert!(
        results
            .iter()
            .all(|r| r.error_code() == Some(ErrorCode::AbortedBeforeDispatch))
    );
    assert!(log.entries().is_empty());

    let cancel = CancellationToken::new();
    let c = cancel.clone();
    runtime
        .on_pre_execute(from_fn(move |r: PreRequest, n: PreNext| {
            c.cancel();
            async move { n.run(r).await }
        }))
        .keep();
    let results = runtime
        .run_batch(vec![call(1, "p", "1"), call(2, "p", "2")], cancel)
        .await;
    assert!(
        results
            .iter()
            .all(|r| r.error_code() == Some(ErrorCode::AbortedBeforeDispatch))
    );
    assert!(log.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn p14_p15_cancellation_drains_started_calls_and_aborts_the_rest() {
    let runtime = runtime_with_cap(2);
    let (gates, log) = (Gates::default(), Log::default());
    runtime
        .register(gated("p", true, &gates, &log, ""))
        .unwrap()
        .keep();
    runtime
        .register(gated("x", false, &gates, &log, "x"))
        .unwrap()
        .keep();
    let cancel = CancellationToken::new();
    let batch = runtime.start_batch(
        vec![
            call(1, "p", "1"),
            call(2, "p", "2"),
            call(3, "x", "3"),
            call(4, "p", "4"),
        ],
        cancel.clone(),
    );
    settle().await;
    assert_eq!(log.entries(), ["1", "2"]);
    cancel.cancel();
    gates.release("1");
    gates.release("2");
    let results = batch.results().await.unwrap();
    assert_eq!(log.entries(), ["1", "2"], "the exclusive x never runs");
    // The gated bodies ignore cancellation and return successes, which the caller's
    // cancellation turns into ABORTED (the bodies had started).
    assert_eq!(results[0].error_code(), Some(ErrorCode::Aborted));
    assert_eq!(results[1].error_code(), Some(ErrorCode::Aborted));
    assert_eq!(
        results[2].error_code(),
        Some(ErrorCode::AbortedBeforeDispatch)
    );
    assert_eq!(
        results[3].error_code(),
        Some(ErrorCode::AbortedBeforeDispatch)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn p17_a_native_call_under_code_mode_is_collapsed() {
    let js = tools_quickjs::QuickJsRuntime::new(tools_runtime::codemode::RuntimeLimits::default())
        .unwrap();
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_runtime(std::sync::Arc::new(js))
        .build()
        .unwrap();
    let log = Log::default();
    runtime
        .register(instant("write", false, &log, "w", false))
        .unwrap()
        .keep();
    let results = runtime
        .run_batch(vec![call(1, "write", "1")], CancellationToken::new())
        .await;
    assert_eq!(results[0].error_code(), Some(ErrorCode::UnknownTool));
    assert!(log.entries().is_empty());
}

#[test]
fn fifty_mixed_calls_on_two_worker_threads_keep_their_order() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tools = runtime_with_cap(8);
        let log = Log::default();
        tools
            .register(instant("r", true, &log, "r", true))
            .unwrap()
            .keep();
        tools
            .register(instant("w", false, &log, "w", false))
            .unwrap()
            .keep();
        let calls: Vec<_> = (0..50)
            .map(|i| call(i, if i % 7 == 3 { "w" } else { "r" }, &i.to_string()))
            .collect();
        let results = tools.run_batch(calls, CancellationToken::new()).await;
        let expected: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        assert_eq!(texts(&results), expected);
        // Every exclusive body ran with nothing else in flight: its entry is surrounded
        // only by complete start/end pairs.
        let entries = log.entries();
        let mut open = 0i32;
        for entry in &entries {
            if entry.starts_with("r-start") {
                open += 1;
            } else if entry.starts_with("r-end") {
                open -= 1;
            } else {
                assert_eq!(open, 0, "an exclusive call overlapped: {entries:?}");
            }
        }
    });
}

/// A call that runs alone is dispatched on the scheduler's own task; calls that overlap are
/// spawned, so that they use every worker. Awaited by `block_on`, as `#[tokio::main]` awaits
/// its main future: the driver runs on the calling thread, a spawned task never does.
#[test]
fn a_call_that_runs_alone_is_dispatched_in_place_and_parallel_ones_are_spawned() {
    use std::thread::ThreadId;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let here = std::thread::current().id();
    let threads: Arc<Mutex<Vec<(String, ThreadId)>>> = Arc::default();
    let tools = runtime_with_cap(8);
    for (name, safe) in [("r", true), ("w", false)] {
        let threads = Arc::clone(&threads);
        let tool = tools_runtime::ToolDefinition::builder(name, "records its thread")
            .output(tools_registry::OutputDecl::text(json!({"type": "string"})))
            .concurrency(move |_| safe)
            .body(move |args, _ctx| {
                let id = args.as_value()["id"].as_str().unwrap_or("").to_owned();
                threads
                    .lock()
                    .unwrap()
                    .push((id, std::thread::current().id()));
                async { Ok(json!("ok")) }
            })
            .build()
            .unwrap();
        tools.register(tool).unwrap().keep();
    }
    let on = |id: &str| {
        let threads = threads.lock().unwrap();
        threads
            .iter()
            .find(|(t, _)| t == id)
            .map(|(_, thread)| *thread)
    };
    // One call, an exclusive call between others, and the last call once nothing else
    // runs: in place.
    let calls = vec![call(1, "r", "lone")];
    rt.block_on(tools.run_batch(calls, CancellationToken::new()));
    let calls = vec![call(1, "w", "w1"), call(2, "w", "w2")];
    rt.block_on(tools.run_batch(calls, CancellationToken::new()));
    assert_eq!(on("lone"), Some(here));
    assert_eq!(on("w1"), Some(here));
    assert_eq!(on("w2"), Some(here));
    // Two concurrency-safe calls that may overlap: both spawned (the second starts while
    // the first is in flight).
    let calls = vec![call(1, "r", "p1"), call(2, "r", "p2")];
    let results = rt.block_on(tools.run_batch(calls, CancellationToken::new()));
    assert!(results.iter().all(|r| !r.is_error()));
    assert_ne!(on("p1"), Some(here));
    assert!(on("p1").is_some());
}
