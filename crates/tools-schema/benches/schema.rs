//! Benchmarks of scenario e3 (compiling `NESTED_SPEC` with the author DSL) and of typed
//! argument parsing (validate + deserialize `NESTED_ARGS` into a Rust struct), beside the
//! bare baseline (the same tool body through `tower::service_fn`, same argument clone).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tools_json::JsonValue;
use tools_schema::ArgsSchema;
use tower::{Service, service_fn};

#[path = "common/nested.rs"]
mod nested;
use nested::{NESTED_ARGS, NestedArgs, nested_spec};

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
    let spec = nested_spec();
    let schema = ArgsSchema::<NestedArgs>::new(&spec).unwrap();
    let compiled_text = schema.schema().as_json().to_string();
    let fixture: Value = serde_json::from_str(include_str!(
        "../../tools-json/benches/fixtures/nested_schema.json"
    ))
    .unwrap();
    assert_eq!(
        compiled_text,
        fixture.to_string(),
        "the DSL compiles to the e1 fixture"
    );
    let args = JsonValue::parse(NESTED_ARGS).unwrap();
    assert!(schema.parse(&args).is_ok());
    tools_schema::testing::check_args_type(&schema).unwrap();

    let mut body = service_fn(|_args: Value| async { Ok::<_, Infallible>("ok") });
    c.bench_function("baseline", |b| {
        b.iter(|| now(body.call(black_box(args.as_value().clone()))))
    });
    c.bench_function("e3", |b| b.iter(|| black_box(&spec).compile().unwrap()));
    // e3 with the model-facing JSON Schema built as well (what the first projection of a
    // newly compiled tool pays): the DSL defers that JSON to its first read.
    c.bench_function("e3_json", |b| {
        b.iter(|| {
            let compiled = black_box(&spec).compile().unwrap();
            black_box(compiled.as_json());
            compiled
        })
    });
    c.bench_function("typed_parse", |b| {
        b.iter(|| schema.parse(black_box(&args)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
