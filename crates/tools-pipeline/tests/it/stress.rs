//! Stress: 10 000 concurrent calls on the multi-threaded runtime with random cancellation
//! and randomly panicking hooks; every call gets exactly one result and nothing is left
//! running.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{DispatchNext, DispatchRequest, PostDecision, PreDecision, from_fn};

use crate::support::{call, post_hook, pre_hook, setup, tool_with};

/// A small deterministic generator (no timing, no global state).
fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    }
}

#[test]
fn ten_thousand_concurrent_calls_each_publish_exactly_one_result() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let (registry, pipeline) = setup();
        registry
            .register(tool_with("work", |args, ctx| async move {
                // Cooperative: yield a few times, stop early when cancelled.
                for _ in 0..args["spins"].as_u64().unwrap_or(0) {
                    if ctx.is_cancelled() {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                Ok(json!("done"))
            }))
            .unwrap()
            .keep();
        pipeline
            .on_pre_execute(pre_hook(|r| {
                let n = r.execution().arguments()["n"].as_u64().unwrap_or(0);
                n.is_multiple_of(97)
                    .then(|| panic!("pre hook panics for {n}"))
            }))
            .keep();
        pipeline
            .on_execute(from_fn(
                |r: DispatchRequest, next: DispatchNext| async move {
                    let n = r.execution().arguments()["n"].as_u64().unwrap_or(0);
                    if n.is_multiple_of(89) {
                        panic!("wrapper panics for {n}");
                    }
                    next.run(r).await
                },
            ))
            .keep();
        pipeline
            .on_post_execute(post_hook(|r| {
                let n = r.execution().arguments()["n"].as_u64().unwrap_or(0);
                if n.is_multiple_of(83) {
                    panic!("post hook panics for {n}");
                }
                Ok(PostDecision::accept())
            }))
            .keep();
        let published = Arc::new(AtomicUsize::new(0));
        let p = Arc::clone(&published);
        pipeline
            .on_result(move |_e, _r| {
                p.fetch_add(1, Ordering::SeqCst);
            })
            .keep();

        let mut next = lcg(7);
        let mut handles = Vec::with_capacity(10_000);
        let mut tokens = Vec::new();
        for n in 0..10_000u64 {
            let token = CancellationToken::new();
            let spins = next() % 4;
            let roll = next() % 10;
            if roll == 0 {
                token.cancel();
            } else if roll == 1 {
                tokens.push(token.clone());
            }
            let pipeline = pipeline.clone();
            let call = call("work", json!({"n": n, "spins": spins})).with_cancellation(token);
            handles.push(tokio::spawn(async move { pipeline.execute(call).await }));
        }
        for token in tokens {
            token.cancel();
        }
        let mut errors = 0;
        for handle in handles {
            let result = handle.await.expect("no task panicked");
            if result.is_error() {
                errors += 1;
            }
        }
        assert_eq!(published.load(Ordering::SeqCst), 10_000);
        assert!(errors > 0 && errors < 10_000, "{errors}");
        let _ = PreDecision::Allow;
    });
    runtime.shutdown_background();
    // Every spawned task was awaited above; the pipeline itself spawns none.
}
