//! Benchmarks of scenarios f1–f4 (described in `docs/benchmarks.md`, "What is measured"):
//! one `run_code` call in mode `code` through `ToolRuntime`, on the multi-threaded tokio
//! runtime with two workers.
//!
//! - f1: an in-process fake code runtime whose "program" awaits 100 sequential `noop`
//!   sub-calls and returns their count;
//! - f2: as f1 with the 100 sub-calls issued at once (a join) and `noop` concurrency-safe
//!   (at most 10 overlapping bodies, the default `max_parallel_sub_calls`);
//! - f3: the embedded TypeScript runtime (QuickJS) running the scenario's program of 100
//!   sequential `await tools.noop(..)`;
//! - f4: the embedded runtime running `return 100` (cold start of one run).
//!
//! Each scenario is measured twice: awaited by `block_on` on the bench thread (as the main
//! task of `#[tokio::main]` awaits it), and awaited in a task spawned on a worker (`_spawned`,
//! as an agent loop running in its own task awaits it).
//!
//! The bare baseline is the no-op body through `tower::service_fn` with the same argument
//! clone, called 100 times in a row (`baseline_100_sequential`, the baseline of f1, f3 and
//! f4) and 100 times joined (`baseline_100_joined`, the baseline of f2).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::join_all;
use serde_json::{Value, json};
use tools_quickjs::QuickJsRuntime;
use tools_runtime::{
    ToolCall, ToolRuntime,
    codemode::{CodeRuntime, RuntimeLimits},
    tools::PresentationMode,
};
use tower::{ServiceExt, service_fn};

#[path = "../../tools-registry/benches/common/tools.rs"]
mod tools;
use tools::noop_with;

#[path = "common/fake_runtime.rs"]
mod fake_runtime;
use fake_runtime::{F3_PROGRAM, FakeRuntime, sub_call_args};

fn tokio_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

fn code_mode(code_runtime: Arc<dyn CodeRuntime>, concurrent: bool) -> ToolRuntime {
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_runtime(code_runtime)
        .build()
        .unwrap();
    runtime.register(noop_with(concurrent)).unwrap().keep();
    runtime
}

fn run_code(id: u64, code: &str) -> ToolCall {
    ToolCall::new(
        id.to_string(),
        "run_code",
        json!({"code": code, "description": "bench"}),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = tokio_runtime(2);
    let args = sub_call_args();
    let fake = |joined| -> Arc<dyn CodeRuntime> {
        Arc::new(FakeRuntime {
            joined,
            args: Arc::clone(&args),
        })
    };
    let quickjs = || -> Arc<dyn CodeRuntime> {
        Arc::new(QuickJsRuntime::new(RuntimeLimits::default()).unwrap())
    };
    let scenarios = [
        (
            "f1_fake_runtime_100_sequential",
            code_mode(fake(false), false),
            "f1",
        ),
        (
            "f2_fake_runtime_100_joined",
            code_mode(fake(true), true),
            "f2",
        ),
        (
            "f3_quickjs_100_sequential",
            code_mode(quickjs(), false),
            F3_PROGRAM,
        ),
        (
            "f4_quickjs_return_100",
            code_mode(quickjs(), false),
            "return 100",
        ),
    ];

    let mut id = 0u64;
    for (name, runtime, code) in &scenarios {
        id += 1;
        let result = rt.block_on(runtime.execute(run_code(id, code)));
        assert_eq!(
            result.value().map(|v| v.as_value().clone()),
            Some(json!({"logs": [], "result": 100})),
            "{name}: {}",
            result.text()
        );
    }

    let mut group = c.benchmark_group("codemode");
    let body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
    group.bench_function("baseline_100_sequential", |b| {
        b.iter(|| {
            rt.block_on(async {
                for a in args.iter() {
                    black_box(body.oneshot(black_box(a).clone()).await.unwrap());
                }
            })
        })
    });
    group.bench_function("baseline_100_joined", |b| {
        b.iter(|| {
            rt.block_on(async {
                let calls = args.iter().map(|a| body.oneshot(black_box(a).clone()));
                for outcome in join_all(calls).await {
                    black_box(outcome.unwrap());
                }
            })
        })
    });
    for (name, runtime, code) in &scenarios {
        // A run takes hundreds of microseconds (f1, f2, f4) to milliseconds (f3): fewer samples.
        let quickjs = name.starts_with("f3") || name.starts_with("f4");
        group.sample_size(if quickjs { 20 } else { 50 });
        // Awaited by `block_on` on the bench thread, like the main task of `#[tokio::main]`.
        group.bench_function(*name, |b| {
            b.iter(|| {
                id += 1;
                let result = rt.block_on(runtime.execute(run_code(id, code)));
                assert!(!result.is_error(), "{}", result.text());
                result
            })
        });
        // Awaited in a task spawned on a worker thread, like an agent loop in its own task.
        group.bench_function(format!("{name}_spawned"), |b| {
            b.iter(|| {
                id += 1;
                let (runtime, call) = (runtime.clone(), run_code(id, code));
                let result = rt
                    .block_on(rt.spawn(async move { runtime.execute(call).await }))
                    .unwrap();
                assert!(!result.is_error(), "{}", result.text());
                result
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
