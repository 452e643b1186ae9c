//! Benchmarks of scenarios c and a2 (`shared/bench/scenarios.md`) through `ToolRuntime`:
//! 1 000 concurrent calls on the multi-threaded tokio runtime with one and with two worker
//! threads, both as spawned `execute()` calls and through the batch scheduler, reported per
//! call; and one `execute()` with 200 tools registered. The bare baseline is the no-op body
//! through `tower::service_fn` with the same argument clone, spawned the same way.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_runtime::{ToolCall, ToolRuntime};
use tower::{ServiceExt, service_fn};

#[path = "../../tools-registry/benches/common/tools.rs"]
mod tools;
use tools::{catalog, noop};

fn tokio_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

const CALLS: u32 = 1000;

fn bench(c: &mut Criterion) {
    let args = json!({"text": "hello", "n": 1});
    let runtime = ToolRuntime::builder()
        .max_parallel_tool_calls(1000)
        .build()
        .unwrap();
    runtime.register(noop()).unwrap().keep();
    let a2 = ToolRuntime::new();
    for i in 0..199 {
        a2.register(catalog(i)).unwrap().keep();
    }
    a2.register(noop()).unwrap().keep();

    for workers in [1usize, 2] {
        let rt = tokio_runtime(workers);
        let body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
        c.bench_function(&format!("baseline_spawned_{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    rt.block_on(async {
                        let handles: Vec<_> = (0..CALLS)
                            .map(|_| tokio::spawn(body.oneshot(args.clone())))
                            .collect();
                        for h in handles {
                            black_box(h.await.unwrap().unwrap());
                        }
                    });
                    total += start.elapsed();
                }
                total / CALLS
            })
        });
        c.bench_function(&format!("c_spawned_execute_{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    rt.block_on(async {
                        let handles: Vec<_> = (0..CALLS)
                            .map(|i| {
                                let runtime = runtime.clone();
                                let call =
                                    ToolCall::new(i.to_string(), "noop", args.clone()).unwrap();
                                tokio::spawn(async move { runtime.execute(call).await })
                            })
                            .collect();
                        for h in handles {
                            assert!(!h.await.unwrap().is_error());
                        }
                    });
                    total += start.elapsed();
                }
                total / CALLS
            })
        });
        c.bench_function(&format!("c_batch_scheduler_{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let calls: Vec<ToolCall> = (0..CALLS)
                        .map(|i| ToolCall::new(i.to_string(), "noop", args.clone()).unwrap())
                        .collect();
                    let start = Instant::now();
                    let results = rt.block_on(runtime.run_batch(calls, CancellationToken::new()));
                    total += start.elapsed();
                    assert_eq!(results.len(), CALLS as usize);
                }
                total / CALLS
            })
        });
    }
    let rt = tokio_runtime(1);
    c.bench_function("a2_runtime_execute_200_tools", |b| {
        let mut id = 0u64;
        b.iter(|| {
            id += 1;
            let call = ToolCall::new(id.to_string(), "noop", black_box(&args).clone()).unwrap();
            rt.block_on(a2.execute(call))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
