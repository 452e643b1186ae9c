//! The bridge's scheduler: overlap, barriers, the parallel cap, stage order, commit order
//! and abandonment (the reference implementation's Code Mode scenarios 17–25).

use super::*;

/// 17: three concurrency-safe calls under `Promise.all` are all in flight at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s17_three_safe_calls_are_in_flight_at_once() {
    let gauge = Arc::new(Gauge::default());
    let barrier = Arc::new(Barrier::new(3));
    let (g, b) = (Arc::clone(&gauge), Arc::clone(&barrier));
    let safe_read = tool("safe_read", true, move |args, _ctx| {
        let (gauge, barrier) = (Arc::clone(&g), Arc::clone(&b));
        async move {
            gauge.enter();
            // Released only once all three bodies are in flight together.
            barrier.wait().await;
            gauge.exit();
            Ok(Value::String(format!(
                "safe_read:{}",
                text_arg(&args, "key")
            )))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "safe_read", json!({"key": "a"})),
            call(&host, "safe_read", json!({"key": "b"})),
            call(&host, "safe_read", json!({"key": "c"})),
        );
        let joined = [a, b, c]
            .into_iter()
            .map(|r| r.unwrap().as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join(",");
        completed(Some(Value::String(joined)), &[])
    });
    let h = harness(runtime, vec![safe_read]);
    let result = h.run().await;
    assert_eq!(result.text(), "safe_read:a,safe_read:b,safe_read:c");
    assert_eq!(gauge.peak(), 3);
    let summary = h.sink.summary();
    let started: Vec<&String> = summary
        .iter()
        .filter(|e| e.starts_with("started"))
        .collect();
    let settled: Vec<&String> = summary
        .iter()
        .filter(|e| e.starts_with("settled"))
        .collect();
    assert_eq!(
        started,
        [
            "started call-1:code:1",
            "started call-1:code:2",
            "started call-1:code:3"
        ]
    );
    assert_eq!(
        settled,
        [
            "settled call-1:code:1",
            "settled call-1:code:2",
            "settled call-1:code:3"
        ]
    );
}

/// 18: safe r1, r2, exclusive w, safe r3 → w waits for r1/r2 to drain; r3 waits for w.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_an_exclusive_call_is_a_barrier() {
    let log = Log::default();
    let reads = Arc::new(Gauge::default());
    let writer_active = Arc::new(AtomicUsize::new(0));
    let violations = Log::default();
    let pair = Arc::new(Barrier::new(2));
    let read = {
        let (log, reads, writer_active, violations, pair) = (
            log.clone(),
            Arc::clone(&reads),
            Arc::clone(&writer_active),
            violations.clone(),
            Arc::clone(&pair),
        );
        tool("read", true, move |args, _ctx| {
            let (log, reads, writer_active, violations, pair) = (
                log.clone(),
                Arc::clone(&reads),
                Arc::clone(&writer_active),
                violations.clone(),
                Arc::clone(&pair),
            );
            async move {
                let id = text_arg(&args, "id");
                log.push(format!("start {id}"));
                if writer_active.load(Ordering::SeqCst) != 0 {
                    violations.push(format!("{id} started while the writer ran"));
                }
                reads.enter();
                if id != "r3" {
                    // r1 and r2 overlap: neither finishes until both are in flight.
                    pair.wait().await;
                }
                yield_many().await;
                if writer_active.load(Ordering::SeqCst) != 0 {
                    violations.push(format!("the writer started while {id} ran"));
                }
                reads.exit();
                log.push(format!("end {id}"));
                Ok(Value::String(id))
            }
        })
    };
    let write = {
        let (log, reads, writer_active, violations) = (
            log.clone(),
            Arc::clone(&reads),
            Arc::clone(&writer_active),
            violations.clone(),
        );
        tool("write", false, move |_args, _ctx| {
            let (log, reads, writer_active, violations) = (
                log.clone(),
                Arc::clone(&reads),
                Arc::clone(&writer_active),
                violations.clone(),
            );
            async move {
                log.push("start w");
                if reads.active() != 0 {
                    violations.push(format!("w started with {} reads in flight", reads.active()));
                }
                writer_active.store(1, Ordering::SeqCst);
                yield_many().await;
                writer_active.store(0, Ordering::SeqCst);
                log.push("end w");
                Ok(Value::String("w".into()))
            }
        })
    };
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (r1, r2, w, r3) = tokio::join!(
            call(&host, "read", json!({"id": "r1"})),
            call(&host, "read", json!({"id": "r2"})),
            call(&host, "write", json!({})),
            call(&host, "read", json!({"id": "r3"})),
        );
        completed(
            Some(json!([outcome(r1), outcome(r2), outcome(w), outcome(r3)])),
            &[],
        )
    });
    let h = harness(runtime, vec![read, write]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["r1", "r2", "w", "r3"]));
    assert!(
        violations.entries().is_empty(),
        "{:?}",
        violations.entries()
    );
    assert_eq!(reads.peak(), 2);
    // w starts after both reads ended; r3 after w ended.
    let start_w = log.position("start w");
    assert!(log.position("end r1") < start_w && log.position("end r2") < start_w);
    assert!(log.position("end w") < log.position("start r3"));
    assert!(log.position("start r1") < log.position("end r1"));
    assert!(
        log.position("start r2") < log.position("end r1"),
        "r1 and r2 overlap"
    );
}

/// 19: with a cap of 2, the third safe call waits for a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_the_parallel_cap_holds() {
    let gauge = Arc::new(Gauge::default());
    let log = Log::default();
    let (started, _) = watch::channel(0_usize);
    let started = Arc::new(started);
    let (g, l, s) = (Arc::clone(&gauge), log.clone(), Arc::clone(&started));
    let read = tool("read", true, move |args, _ctx| {
        let (gauge, log, started) = (Arc::clone(&g), l.clone(), Arc::clone(&s));
        async move {
            let id = text_arg(&args, "id");
            gauge.enter();
            log.push(format!("start {id}"));
            started.send_modify(|n| *n += 1);
            // Hold the slot until two bodies have been in flight, then give a wrong
            // scheduler every chance to start a third.
            let mut seen = started.subscribe();
            seen.wait_for(|n| *n >= 2).await.unwrap();
            yield_many().await;
            log.push(format!("end {id}"));
            gauge.exit();
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "read", json!({"id": "a"})),
            call(&host, "read", json!({"id": "b"})),
            call(&host, "read", json!({"id": "c"})),
        );
        completed(Some(json!([outcome(a), outcome(b), outcome(c)])), &[])
    });
    let h = harness_with(runtime, vec![read], |config| {
        config.with_max_parallel_sub_calls(std::num::NonZeroUsize::new(2).unwrap())
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["a", "b", "c"]));
    assert_eq!(gauge.peak(), 2, "{:?}", log.entries());
    let start_c = log.position("start c");
    assert!(
        log.position("end a") < start_c || log.position("end b") < start_c,
        "{:?}",
        log.entries()
    );
}

/// 20: a tool unregistered after the bindings were enumerated rejects as unknown; its body
/// never runs.
#[tokio::test(flavor = "current_thread")]
async fn s20_an_unregistered_tool_rejects_as_unknown() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let ephemeral = tool("ephemeral", true, move |_args, _ctx| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok(Value::String("ran".into())) }
    });
    let registration: Arc<Mutex<Option<tools_registry::Registration>>> = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&registration);
    let runtime = scripted(move |request: CodeRunRequest| {
        let slot = Arc::clone(&slot);
        async move {
            let names = request.namespaces[0].names.clone();
            assert_eq!(names, ["echo", "ephemeral"]);
            // Unregister between enumeration and the call.
            drop(slot.lock().unwrap().take());
            let answer = call(&request.host, "ephemeral", json!({})).await;
            completed(Some(outcome(answer)), &[])
        }
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    *registration.lock().unwrap() = Some(h.registry.register(ephemeral).unwrap());
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "unknown tool \"ephemeral\""})
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert!(settled[0].is_error);
}

/// A name outside the bound namespace (a non-conforming runtime, or `run_code` itself:
/// no recursion path) is refused by the host: nothing is dispatched or logged.
#[tokio::test(flavor = "current_thread")]
async fn a_name_that_was_not_bound_never_reaches_the_pipeline() {
    let runtime = scripted(|request: CodeRunRequest| async move {
        let recursive = call(
            &request.host,
            "run_code",
            json!({"code": "", "description": "x"}),
        )
        .await;
        let forged = call(&request.host, "not_bound", json!({})).await;
        completed(Some(json!([outcome(recursive), outcome(forged)])), &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!([
            {"error": "unknown tool \"run_code\""},
            {"error": "unknown tool \"not_bound\""}
        ])
    );
    assert!(h.sink.settles().is_empty(), "nothing was dispatched");
}

/// 21: call 2's pre-execute does not enter while call 1's slow async pre-execute pends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s21_pre_execute_stages_never_overlap() {
    let stages = Log::default();
    let submitted = Arc::new(Notify::new());
    let read = tool("read", true, |args, _ctx| async move {
        Ok(Value::String(text_arg(&args, "id")))
    });
    let s = Arc::clone(&submitted);
    let runtime = scripted(move |request: CodeRunRequest| {
        let submitted = Arc::clone(&s);
        async move {
            let host = request.host;
            let first = call(&host, "read", json!({"id": "1"}));
            let second = call(&host, "read", json!({"id": "2"}));
            // Both binding calls are accepted: a concurrent scheduler could start call 2.
            submitted.notify_one();
            let (a, b) = tokio::join!(first, second);
            completed(Some(json!([outcome(a), outcome(b)])), &[])
        }
    });
    let h = harness(runtime, vec![read]);
    let (log, s) = (stages.clone(), Arc::clone(&submitted));
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let (log, submitted) = (log.clone(), Arc::clone(&s));
        async move {
            let n = sub_number(request.execution().call_id())
                .unwrap()
                .to_owned();
            log.push(format!("pre-enter {n}"));
            if n == "1" {
                submitted.notified().await;
                yield_many().await;
            }
            log.push(format!("pre-exit {n}"));
            None
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["1", "2"]));
    assert_eq!(
        stages.entries(),
        ["pre-enter 1", "pre-exit 1", "pre-enter 2", "pre-exit 2"]
    );
}

/// 22: a safe read queued behind an exclusive writer starts only after the writer's
/// post-execute finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s22_the_exclusive_barrier_lasts_through_post_execute() {
    let log = Log::default();
    let l = log.clone();
    let writer = tool("writer", false, move |_args, _ctx| {
        let log = l.clone();
        async move {
            log.push("writer body");
            Ok(Value::String("written".into()))
        }
    });
    let l = log.clone();
    let read = tool("read", true, move |_args, _ctx| {
        let log = l.clone();
        async move {
            log.push("read body");
            Ok(Value::String("read".into()))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (w, r) = tokio::join!(
            call(&host, "writer", json!({})),
            call(&host, "read", json!({}))
        );
        completed(Some(json!([outcome(w), outcome(r)])), &[])
    });
    let h = harness(runtime, vec![writer, read]);
    let l = log.clone();
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let log = l.clone();
        async move {
            log.push(format!("pre {}", request.execution().name()));
            None
        }
    });
    let l = log.clone();
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let log = l.clone();
        async move {
            let name = request.execution().name().to_string();
            log.push(format!("post-enter {name}"));
            if name == "writer" {
                yield_many().await;
            }
            log.push(format!("post-exit {name}"));
            Ok(PostDecision::accept())
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["written", "read"]));
    assert_eq!(
        log.entries(),
        [
            "pre writer",
            "writer body",
            "post-enter writer",
            "post-exit writer",
            "pre read",
            "read body",
            "post-enter read",
            "post-exit read"
        ]
    );
}

/// 23: the program returns while a sub-call's post-execute is mid-flight → exactly one
/// settle event, an error, delivered before `run_code` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_a_commit_in_progress_is_finished_and_logged_before_return() {
    let in_post = Arc::new(Notify::new());
    let read = tool("read", true, |_args, _ctx| async {
        Ok(Value::String("read".into()))
    });
    let p = Arc::clone(&in_post);
    let runtime = scripted(move |request: CodeRunRequest| {
        let in_post = Arc::clone(&p);
        async move {
            let pending = call(&request.host, "read", json!({}));
            in_post.notified().await;
            // The program returns without awaiting its call.
            drop(pending);
            completed(Some(json!("returned early")), &[])
        }
    });
    let h = harness(runtime, vec![read]);
    let p = Arc::clone(&in_post);
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let in_post = Arc::clone(&p);
        async move {
            in_post.notify_one();
            // The sub-call's caller token is the run-scoped one: it is cancelled when the
            // program settles.
            request
                .execution()
                .caller_cancellation()
                .expect("the test gives the call a token")
                .cancelled()
                .await;
            Ok(PostDecision::accept())
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("returned early"));
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert_eq!(&*settled[0].sub_call_id, "call-1:code:1");
    assert!(settled[0].is_error, "{settled:?}");
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 24: post-execute runs, and contexts are forwarded, in submission order even when the
/// bodies finish out of order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_commits_follow_submission_order() {
    let log = Log::default();
    let second_done = Arc::new(Notify::new());
    let (l, d) = (log.clone(), Arc::clone(&second_done));
    let read = tool("read", true, move |args, _ctx| {
        let (log, second_done) = (l.clone(), Arc::clone(&d));
        async move {
            let id = text_arg(&args, "id");
            if id == "1" {
                // Finish only after call 2 has finished.
                second_done.notified().await;
            }
            log.push(format!("body-end {id}"));
            if id == "2" {
                second_done.notify_one();
            }
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b) = tokio::join!(
            call(&host, "read", json!({"id": "1"})),
            call(&host, "read", json!({"id": "2"}))
        );
        completed(Some(json!([outcome(a), outcome(b)])), &[])
    });
    let h = harness(runtime, vec![read]);
    let l = log.clone();
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let log = l.clone();
        async move {
            let id = request.execution().call_id().to_owned();
            log.push(format!("post {id}"));
            Ok(PostDecision::accept().with_contexts(vec![ToolContext::text(format!("ctx:{id}"))]))
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["1", "2"]));
    assert_eq!(
        log.entries(),
        [
            "body-end 2",
            "body-end 1",
            "post call-1:code:1",
            "post call-1:code:2"
        ]
    );
    assert_eq!(
        context_texts(&result),
        ["ctx:call-1:code:1", "ctx:call-1:code:2"]
    );
}

/// 25: the program throws while exclusive w1 is in flight and w2 is queued → w2 is
/// abandoned without events.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s25_queued_calls_are_abandoned_when_the_run_is_over() {
    let started = Arc::new(Notify::new());
    let log = Log::default();
    let (s, l) = (Arc::clone(&started), log.clone());
    let writer = tool("writer", false, move |args, ctx| {
        let (started, log) = (Arc::clone(&s), l.clone());
        async move {
            let n = text_arg(&args, "n");
            log.push(format!("start {n}"));
            started.notify_one();
            ctx.cancellation().cancelled().await;
            log.push(format!("cancelled {n}"));
            Ok(Value::String(format!("late {n}")))
        }
    });
    let w2_future: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (s, slot) = (Arc::clone(&started), Arc::clone(&w2_future));
    let runtime = scripted(move |request: CodeRunRequest| {
        let (started, slot) = (Arc::clone(&s), Arc::clone(&slot));
        async move {
            let host = request.host;
            let w1 = host.call(
                "tools",
                "writer",
                JsonValue::new(json!({"n": "1"})).unwrap(),
            );
            let w2 = host.call(
                "tools",
                "writer",
                JsonValue::new(json!({"n": "2"})).unwrap(),
            );
            started.notified().await;
            *slot.lock().unwrap() = Some(w2);
            drop(w1);
            failed(FailureKind::Exception, "Error: boom", &["before the throw"])
        }
    });
    let h = harness(runtime, vec![writer]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Error: code run failed (exception): Error: boom\nCaptured output:\nbefore the throw"
    );
    assert_eq!(log.entries(), ["start 1", "cancelled 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    let w2 = w2_future.lock().unwrap().take().unwrap();
    let rejection = tokio::time::timeout(HANG_GUARD, w2).await.unwrap();
    assert_eq!(
        rejection.map_err(|e| e.message),
        Err("run_code run is over (run_code settled); writer tool call abandoned".to_owned())
    );
}

/// 29: three non-concurrency-safe calls under `Promise.all` never overlap and run in
/// submission order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_exclusive_calls_run_alone_in_order() {
    let gauge = Arc::new(Gauge::default());
    let log = Log::default();
    let (g, l) = (Arc::clone(&gauge), log.clone());
    let write = tool("write", false, move |args, _ctx| {
        let (gauge, log) = (Arc::clone(&g), l.clone());
        async move {
            gauge.enter();
            let id = text_arg(&args, "id");
            log.push(format!("start {id}"));
            yield_many().await;
            log.push(format!("end {id}"));
            gauge.exit();
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "write", json!({"id": "a"})),
            call(&host, "write", json!({"id": "b"})),
            call(&host, "write", json!({"id": "c"})),
        );
        completed(Some(json!([outcome(a), outcome(b), outcome(c)])), &[])
    });
    let h = harness(runtime, vec![write]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["a", "b", "c"]));
    assert_eq!(gauge.peak(), 1);
    assert_eq!(
        log.entries(),
        ["start a", "end a", "start b", "end b", "start c", "end c"]
    );
}
