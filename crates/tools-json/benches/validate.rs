//! Benchmarks of scenarios e1 and e1b (described in `docs/benchmarks.md`, "What is
//! measured"): validating `NESTED_ARGS` against the compiled `NESTED_SPEC`, written here as
//! raw JSON Schema, beside the bare baseline (the same tool body called through
//! `tower::service_fn` with the same argument clone, no validation).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tools_json::{CompiledSchema, JsonValue};
use tower::{Service, service_fn};

const NESTED_SCHEMA: &str = include_str!("fixtures/nested_schema.json");
const NESTED_ARGS: &str = include_str!("fixtures/nested_args.json");

/// Polls a future that is ready at once (the no-op body never waits).
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

fn bench(c: &mut Criterion) {
    let schema_json: Value = serde_json::from_str(NESTED_SCHEMA).unwrap();
    let schema = CompiledSchema::compile(&schema_json).unwrap();
    let args = JsonValue::parse(NESTED_ARGS).unwrap();
    let mut bad = args.as_value().clone();
    bad["items"][3]["qty"] = Value::from("four");

    assert!(schema.validate(&args, "").is_empty());
    let violations = schema.validate(&bad, "");
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].path.to_string(), "items[3].qty");

    let mut body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
    c.bench_function("baseline", |b| {
        b.iter(|| now(body.call(black_box(args.as_value().clone()))))
    });
    c.bench_function("e1", |b| b.iter(|| schema.validate(black_box(&args), "")));
    c.bench_function("e1b", |b| b.iter(|| schema.validate(black_box(&bad), "")));
    c.bench_function("e1_is_valid", |b| {
        b.iter(|| schema.is_valid(black_box(&args)))
    });
    c.bench_function("lossless_boundary_nested_args", |b| {
        b.iter(|| JsonValue::new(black_box(args.as_value().clone())))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
