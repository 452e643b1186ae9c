//! Benchmarks of the registry's part of scenarios a2 and d (described in
//! `docs/benchmarks.md`, "What is measured"): the lookup an `execute()` makes costs the
//! same with 200 tools as with 1, and `schemas()` with 200 tools is a shared projection
//! built once per change. The bare baseline is the no-op body called through
//! `tower::service_fn` with the same argument clone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tools_registry::{Registry, ToolFilter};
use tower::{Service, service_fn};

#[path = "common/tools.rs"]
mod tools;
use tools::{catalog, noop};

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

/// The no-op tool of the scenarios.
/// Catalog tool `i` of scenario d.
fn bench(c: &mut Criterion) {
    let one = Registry::new();
    one.register(noop()).unwrap().keep();
    let many = Registry::new();
    for i in 0..199 {
        many.register(catalog(i)).unwrap().keep();
    }
    many.register(noop()).unwrap().keep();
    let agent = many.scope();
    agent
        .restrict(ToolFilter::deny(["tool_000"]))
        .unwrap()
        .keep();
    let huge = Registry::new();
    for i in 0..1999 {
        huge.register(catalog(i)).unwrap().keep();
    }
    huge.register(noop()).unwrap().keep();
    let two = Registry::new();
    two.register(catalog(0)).unwrap().keep();
    two.register(noop()).unwrap().keep();
    let catalog200 = Registry::new();
    for i in 0..200 {
        catalog200.register(catalog(i)).unwrap().keep();
    }
    assert_eq!(catalog200.schemas(None).len(), 200);
    assert!(many.get("noop", Some(&agent)).is_some());

    let args = json!({"text": "hello", "n": 1});
    let mut body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
    c.bench_function("baseline", |b| {
        b.iter(|| now(body.call(black_box(args.clone()))))
    });
    c.bench_function("a2_lookup_1_tool", |b| {
        b.iter(|| one.view(None).get(black_box("noop")).is_some())
    });
    c.bench_function("a2_lookup_2_tools", |b| {
        b.iter(|| two.view(None).get(black_box("noop")).is_some())
    });
    c.bench_function("a2_lookup_2000_tools", |b| {
        b.iter(|| huge.view(None).get(black_box("noop")).is_some())
    });
    c.bench_function("a2_lookup_200_tools", |b| {
        b.iter(|| many.view(None).get(black_box("noop")).is_some())
    });
    c.bench_function("a2_lookup_200_tools_scoped_masked", |b| {
        b.iter(|| many.view(Some(&agent)).get(black_box("noop")).is_some())
    });
    c.bench_function("d_schemas_200_tools", |b| {
        b.iter(|| catalog200.schemas(black_box(None)))
    });
    c.bench_function("d_schemas_200_tools_after_a_change", |b| {
        b.iter(|| {
            // A registration and its disposal: two changes, then the projection is rebuilt.
            drop(catalog200.register(noop()).unwrap());
            catalog200.schemas(black_box(None))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
