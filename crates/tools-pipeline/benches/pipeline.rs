//! Benchmarks of scenarios a, a2, b, b2, c and e2 (described in `docs/benchmarks.md`, "What
//! is measured") through `Pipeline::execute`, beside the bare baseline: the same no-op body
//! called through `tower::service_fn` with the same argument clone.
//!
//! The no-op body never waits, so every call completes in one poll: futures are polled
//! with a no-op waker, without an executor, for the baseline and the pipeline alike.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tools_pipeline::{
    DispatchNext, DispatchRequest, Pipeline, PostNext, PostRequest, PreNext, PreRequest, ToolCall,
    from_fn,
};
use tools_registry::{CallInfo, Registry, ToolDefinition, define_tool};
use tools_schema::{Params, ToolArgs};
use tower::{Service, service_fn};

#[path = "../../tools-registry/benches/common/tools.rs"]
mod tools;
use tools::{catalog, noop};

#[path = "../../tools-schema/benches/common/nested.rs"]
mod nested;

fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the benchmark body never waits"),
    }
}

/// Polls every future once per round until all are ready (a join without an executor).
fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut cx = Context::from_waker(Waker::noop());
    let mut left = futures.len();
    while left > 0 {
        for (future, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_none()
                && let Poll::Ready(value) = future.as_mut().poll(&mut cx)
            {
                *slot = Some(value);
                left -= 1;
            }
        }
    }
    out.into_iter().map(|v| v.unwrap()).collect()
}

fn nested_tool() -> ToolDefinition {
    define_tool::<nested::NestedArgs, String>("nested", "Takes NESTED_SPEC arguments.")
        .body(|_args: nested::NestedArgs, _ctx| async { Ok("ok".to_owned()) })
        .build()
        .unwrap()
}

/// `NESTED_SPEC` arguments, validated and then ignored (no struct is built).
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct ValidatedOnly(#[allow(dead_code)] serde::de::IgnoredAny);

impl ToolArgs for ValidatedOnly {
    fn tool_params() -> Params {
        nested::nested_spec()
    }
}

fn nested_validated_only() -> ToolDefinition {
    define_tool::<ValidatedOnly, String>(
        "nested_validated",
        "Validates NESTED_SPEC arguments, keeps no struct.",
    )
    .body(|_args: ValidatedOnly, _ctx| async { Ok("ok".to_owned()) })
    .build()
    .unwrap()
}

fn pipeline_with(tools: impl IntoIterator<Item = ToolDefinition>) -> Pipeline {
    let registry = Registry::new();
    for tool in tools {
        registry.register(tool).unwrap().keep();
    }
    Pipeline::new(registry)
}

fn call(name: &str, args: &Value, id: u64) -> ToolCall {
    ToolCall::new(id.to_string(), name, args.clone()).unwrap()
}

fn bench(c: &mut Criterion) {
    let args = json!({"text": "hello", "n": 1});
    let nested_args: Value = serde_json::from_str(nested::NESTED_ARGS).unwrap();
    let mut body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
    let mut id = 0u64;
    let mut next_id = move || {
        id += 1;
        id
    };

    let a = pipeline_with([noop()]);
    let first = now(a.execute(call("noop", &args, 0)));
    assert_eq!(
        first.to_json(),
        json!({"isError": false, "value": "ok", "content": [{"type": "text", "text": "ok"}]})
    );

    let a2 = pipeline_with((0..199).map(catalog).chain([noop()]));

    // b: one pass-through hook of each kind, each counted.
    let b = pipeline_with([noop()]);
    let counts = Arc::new([
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ]);
    let k = Arc::clone(&counts);
    b.on_pre_execute(from_fn(move |r: PreRequest, n: PreNext| {
        k[0].fetch_add(1, Ordering::Relaxed);
        async move { n.run(r).await }
    }))
    .keep();
    let k = Arc::clone(&counts);
    b.registry()
        .guard(move |_: &CallInfo| {
            k[1].fetch_add(1, Ordering::Relaxed);
            None
        })
        .keep();
    let k = Arc::clone(&counts);
    b.on_execute(from_fn(move |r: DispatchRequest, n: DispatchNext| {
        k[2].fetch_add(1, Ordering::Relaxed);
        async move { n.run(r).await }
    }))
    .keep();
    let k = Arc::clone(&counts);
    b.on_post_execute(from_fn(move |r: PostRequest, n: PostNext| {
        k[3].fetch_add(1, Ordering::Relaxed);
        async move { n.run(r).await }
    }))
    .keep();
    assert!(!now(b.execute(call("noop", &args, 0))).is_error());
    for (i, count) in counts.iter().take(4).enumerate() {
        assert_eq!(count.load(Ordering::Relaxed), 1, "hook {i} ran once");
    }

    let b2 = b.clone();
    let k = Arc::clone(&counts);
    b2.on_result(move |_e, _r| {
        k[4].fetch_add(1, Ordering::Relaxed);
    })
    .keep();

    let e2 = pipeline_with([nested_tool(), nested_validated_only()]);
    assert!(!now(e2.execute(call("nested", &nested_args, 0))).is_error());

    c.bench_function("baseline", |bench| {
        bench.iter(|| now(body.call(black_box(args.clone()))))
    });
    c.bench_function("a", |bench| {
        bench.iter(|| now(a.execute(call("noop", black_box(&args), next_id()))))
    });
    c.bench_function("a2", |bench| {
        bench.iter(|| now(a2.execute(call("noop", black_box(&args), next_id()))))
    });
    c.bench_function("b", |bench| {
        // b shares its pipeline with b2's observer: run b before the observer exists.
        let only_b = pipeline_with([noop()]);
        only_b
            .on_pre_execute(from_fn(|r: PreRequest, n: PreNext| async move {
                n.run(r).await
            }))
            .keep();
        only_b.registry().guard(|_: &CallInfo| None).keep();
        only_b
            .on_execute(from_fn(|r: DispatchRequest, n: DispatchNext| async move {
                n.run(r).await
            }))
            .keep();
        only_b
            .on_post_execute(from_fn(|r: PostRequest, n: PostNext| async move {
                n.run(r).await
            }))
            .keep();
        bench.iter(|| now(only_b.execute(call("noop", black_box(&args), next_id()))))
    });
    c.bench_function("b2", |bench| {
        bench.iter(|| now(b2.execute(call("noop", black_box(&args), next_id()))));
        assert!(counts[4].load(Ordering::Relaxed) > 0, "the b2 observer ran");
    });
    c.bench_function("c_1000_concurrent_per_call", |bench| {
        bench.iter_custom(|iters| {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                let calls: Vec<_> = (0..1000)
                    .map(|i| a.execute(call("noop", &args, i)))
                    .collect();
                let results = join_all(calls);
                black_box(results);
            }
            start.elapsed() / 1000
        })
    });
    // e2's bare baseline: the same body with the same argument clone (NESTED_ARGS).
    c.bench_function("baseline_nested", |bench| {
        bench.iter(|| now(body.call(black_box(nested_args.clone()))))
    });
    // e2 as a host runs it: the model's arguments arrive once and are moved into the call
    // (parsed from the wire; no deep clone per call). Building them is setup, not timed;
    // dropping them after the call is part of the call. One input per timed iteration, made
    // just before it: batches of inputs made ahead are cold in the cache, which a host that
    // has just parsed the model's response does not see (the timer's own cost, about 50 ns,
    // is in the figure).
    c.bench_function("e2", |bench| {
        bench.iter_batched(
            || nested_args.clone(),
            |arguments| {
                let call = ToolCall::new(next_id().to_string(), "nested", arguments).unwrap();
                now(e2.execute(black_box(call)))
            },
            BatchSize::PerIteration,
        )
    });
    // The like-for-like row of the first round: a deep clone of `NESTED_ARGS` per call.
    c.bench_function("e2_clone", |bench| {
        bench.iter(|| now(e2.execute(call("nested", black_box(&nested_args), next_id()))))
    });
    c.bench_function("e2_validated_untyped", |bench| {
        bench.iter(|| now(e2.execute(call("nested_validated", black_box(&nested_args), next_id()))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
