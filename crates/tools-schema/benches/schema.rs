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
use serde::Deserialize;
use serde_json::Value;
use tools_json::JsonValue;
use tools_schema::{ArgsSchema, Params, Schema, params};
use tower::{Service, service_fn};

const NESTED_ARGS: &str = include_str!("../../tools-json/benches/fixtures/nested_args.json");

/// `NESTED_SPEC` of `shared/bench/scenarios.md`, in the author DSL.
fn nested_spec() -> Params {
    params()
        .required("id", Schema::string())
        .required("name", Schema::string())
        .required("count", Schema::integer())
        .optional("ratio", Schema::number())
        .optional("enabled", Schema::boolean())
        .required(
            "mode",
            Schema::string().enum_values(["fast", "slow", "auto"]),
        )
        .optional("tags", Schema::array(Schema::string()))
        .optional("scores", Schema::array(Schema::number()))
        .optional("matrix", Schema::array(Schema::array(Schema::integer())))
        .optional(
            "owner",
            Schema::closed_object()
                .required("id", Schema::string())
                .optional("email", Schema::string())
                .optional(
                    "roles",
                    Schema::array(Schema::string().enum_values(["admin", "dev", "ops"])),
                ),
        )
        .optional(
            "items",
            Schema::array(
                Schema::closed_object()
                    .required("sku", Schema::string())
                    .required("qty", Schema::integer())
                    .optional("price", Schema::number())
                    .optional(
                        "attrs",
                        Schema::open_object().optional("color", Schema::string()),
                    ),
            ),
        )
        .optional("metadata", Schema::json())
        .optional(
            "note",
            Schema::one_of([Schema::from(Schema::string()), Schema::null().into()]),
        )
        .optional("limit", Schema::integer())
        .optional("offset", Schema::integer())
        .optional("sort", Schema::string().enum_values(["asc", "desc"]))
        .optional(
            "filters",
            Schema::array(
                Schema::closed_object()
                    .required("field", Schema::string())
                    .required("op", Schema::string().enum_values(["eq", "ne", "lt", "gt"]))
                    .optional(
                        "value",
                        Schema::one_of([
                            Schema::from(Schema::string()),
                            Schema::number().into(),
                            Schema::boolean().into(),
                        ]),
                    ),
            ),
        )
        .optional("createdAfter", Schema::string())
        .optional(
            "flags",
            Schema::open_object()
                .optional("a", Schema::boolean())
                .optional("b", Schema::boolean()),
        )
        .optional("version", Schema::integer().constant(2))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct NestedArgs {
    id: String,
    name: String,
    count: i64,
    ratio: Option<f64>,
    enabled: Option<bool>,
    mode: String,
    tags: Option<Vec<String>>,
    scores: Option<Vec<f64>>,
    matrix: Option<Vec<Vec<i64>>>,
    owner: Option<Owner>,
    items: Option<Vec<Item>>,
    metadata: Option<Value>,
    note: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
    sort: Option<String>,
    filters: Option<Vec<Filter>>,
    created_after: Option<String>,
    flags: Option<Flags>,
    version: Option<i64>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Owner {
    id: String,
    email: Option<String>,
    roles: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Item {
    sku: String,
    qty: i64,
    price: Option<f64>,
    attrs: Option<Attrs>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Attrs {
    color: Option<String>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Filter {
    field: String,
    op: String,
    value: Option<Value>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Flags {
    a: Option<bool>,
    b: Option<bool>,
}

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
    c.bench_function("typed_parse", |b| {
        b.iter(|| schema.parse(black_box(&args)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
