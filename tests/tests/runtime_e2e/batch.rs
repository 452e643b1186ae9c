//! A batch of 50 mixed calls, and cancellation mid-batch.

use super::*;

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
