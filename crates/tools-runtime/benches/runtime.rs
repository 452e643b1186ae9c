//! Benchmarks of scenarios c and a2 (described in `docs/benchmarks.md`, "What is measured")
//! through `ToolRuntime`: 1 000 concurrent calls on the multi-threaded tokio runtime with
//! one and with two worker threads, reported per call, two ways:
//! - `c_split_execute_*`: `execute()` calls split into one join per worker, each join its
//!   own task (scenario c on both cores: one join is one task, which runs on one worker at
//!   a time); the bare baseline, the no-op body through `tower::service_fn` with the same
//!   argument clone, is split the same way;
//! - `c_batch_scheduler_*`: the 1 000 calls as one `run_batch` turn, beside the baseline
//!   spawned once per call.
//!
//! And one `execute()` with 200 tools registered (a2).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::join_all;
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
        // Scenario c on both cores: the 1 000 calls split into one join per worker, each
        // join a task of its own (one task can only run on one worker at a time, and a
        // spawn per call measures the spawn). The baseline is split the same way.
        c.bench_function(&format!("baseline_split_{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                time_split(&rt, iters, workers, |calls| {
                    let args = args.clone();
                    async move {
                        let each = calls.map(|_| body.oneshot(args.clone()));
                        join_all(each).await.iter().all(Result::is_ok)
                    }
                })
            })
        });
        c.bench_function(&format!("c_split_execute_{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                time_split(&rt, iters, workers, |calls| {
                    // One runtime handle per worker's join, as a host keeps one per task.
                    let (runtime, args) = (runtime.clone(), args.clone());
                    async move {
                        let each = calls.map(|i| {
                            let call = ToolCall::new(i.to_string(), "noop", args.clone());
                            runtime.execute(call.unwrap())
                        });
                        join_all(each).await.iter().all(|r| !r.is_error())
                    }
                })
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

/// The time per call of `iters` rounds of `CALLS` calls as `workers` joins, each spawned
/// as its own task: `join` makes the join of one share of the call numbers, which reports
/// whether every call succeeded.
fn time_split<F, Fut>(rt: &tokio::runtime::Runtime, iters: u64, workers: usize, join: F) -> Duration
where
    F: Fn(std::ops::Range<u32>) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let workers = u32::try_from(workers).unwrap();
    let per = CALLS / workers;
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        rt.block_on(async {
            let drivers: Vec<_> = (0..workers)
                .map(|w| tokio::spawn(join(w * per..(w + 1) * per)))
                .collect();
            for driver in drivers {
                assert!(driver.await.unwrap());
            }
        });
        total += start.elapsed();
    }
    total / CALLS
}

criterion_group!(benches, bench);
criterion_main!(benches);
