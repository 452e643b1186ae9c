//! A fixed number of benchmark-scenario calls in a loop, for counting instructions with
//! `valgrind --tool=callgrind`: on a shared VM wall-clock times drift by tens of percent
//! between runs, instruction counts do not. See `docs/benchmarks.md`.
//!
//! ```text
//! cargo build --release -p tools-runtime --example hot_loop
//! valgrind --tool=callgrind target/release/examples/hot_loop a 20000
//! ```
//!
//! Modes (each prints the wall time per call, which under callgrind means nothing):
//! - `a`: `Pipeline::execute` of `noop`, polled without an executor (scenario a);
//! - `e2`: the same with `NESTED_SPEC` parameters and `NESTED_ARGS` (scenario e2);
//! - `clone`: only the clone (and drop) of `NESTED_ARGS`, e2's bare baseline;
//! - `wire_openai`, `wire_anthropic`: e2's call as a host gets it, parsed from one model
//!   response (`Provider::parse`: arguments as text, or as a value) and executed;
//! - `turn_openai`, `turn_anthropic`: `ToolRuntime::run_turn` of one response with four
//!   such calls (parse, batch, result messages), awaited by `block_on` on a 1-worker
//!   runtime as `#[tokio::main]` awaits its main future, per call (`N` counts turns);
//!   `turn1_openai`, `turn1_anthropic`: the same with one call; `turnp_openai`: four calls
//!   of a concurrency-safe `nested` (each is spawned, as they may overlap);
//! - `host_openai`, `host_anthropic`: `turn_*` with the response read from its body text
//!   (`serde_json::from_str`) for each turn and lent to `run_turn`, as a host that keeps
//!   it does; `host_openai_owned`, `host_anthropic_owned`: the same, handing it over;
//! - `join`: 1 000 `ToolRuntime::execute` futures joined on a 1-worker runtime, per call;
//! - `batch`: 1 000 calls through `ToolRuntime::run_batch` on a 1-worker runtime, per call;
//! - `e3`: compiling `NESTED_SPEC` (scenario e3), per compile; `e3_json`: the same, then
//!   reading its model-facing JSON (which the DSL builds on first read);
//! - `e1`, `e1b`: validating `NESTED_ARGS` (e1b: with `items[3].qty = "four"`) against the
//!   compiled `NESTED_SPEC` (scenarios e1 and e1b);
//! - `register`: defining (compiling) and registering `N` catalog tools, per tool;
//! - `f1`, `f2`, `f3`, `f4`: one `run_code` of scenario f1 (100 sequential `noop` sub-calls
//!   from an in-process fake runtime), f2 (the same 100 issued at once, `noop`
//!   concurrency-safe), f3 (100 sequential `noop` sub-calls through
//!   QuickJS) or f4 (`return 100`) on a 2-worker runtime, per run.
//!
//! `N` counts calls (compiles for `e3`), or batches of 1 000 for `join` and `batch`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::disallowed_macros
)]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_pipeline::Pipeline;
use tools_registry::{Registry, define_tool};
use tools_runtime::{ToolCall, ToolRuntime, provider::Provider};

#[path = "../../tools-registry/benches/common/tools.rs"]
mod tools;

#[path = "../../tools-schema/benches/common/nested.rs"]
mod nested;

#[path = "../benches/common/fake_runtime.rs"]
mod fake_runtime;
use fake_runtime::{F3_PROGRAM, FakeRuntime, sub_call_args};

/// Polls a future that never waits to its output.
fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the scenario's body never waits"),
    }
}

fn pipeline() -> Pipeline {
    let registry = Registry::new();
    registry.register(tools::noop()).unwrap().keep();
    let nested = define_tool::<nested::NestedArgs, String>("nested", "Takes NESTED_SPEC.")
        .body(|_args: nested::NestedArgs, _ctx| async { Ok("ok".to_owned()) })
        .build()
        .unwrap();
    registry.register(nested).unwrap().keep();
    Pipeline::new(registry)
}

/// A model response with `calls` calls of `nested` with `NESTED_ARGS`: OpenAI Chat
/// (arguments as text) or Anthropic (arguments as a value), with ids of the providers'
/// lengths (29 and 30 bytes).
fn nested_response(openai: bool, calls: usize) -> (Provider, Value) {
    if openai {
        let calls: Vec<Value> = (0..calls)
            .map(|i| {
                json!({"id": format!("call_{i:024}"), "type": "function",
                    "function": {"name": "nested", "arguments": nested::NESTED_ARGS}})
            })
            .collect();
        let message = json!({"role": "assistant", "tool_calls": calls});
        (
            Provider::OpenAiChat,
            json!({"choices": [{"message": message}]}),
        )
    } else {
        let input: Value = serde_json::from_str(nested::NESTED_ARGS).unwrap();
        let blocks: Vec<Value> = (0..calls)
            .map(|i| {
                json!({"type": "tool_use", "id": format!("toolu_{i:024}"), "name": "nested",
                    "input": input})
            })
            .collect();
        (Provider::Anthropic, json!({"content": blocks}))
    }
}

fn code_runs(mode: &str, n: usize) -> Duration {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let code_runtime: std::sync::Arc<dyn tools_runtime::codemode::CodeRuntime> = if mode == "f1"
        || mode == "f2"
    {
        std::sync::Arc::new(FakeRuntime {
            joined: mode == "f2",
            args: sub_call_args(),
        })
    } else {
        std::sync::Arc::new(
            tools_quickjs::QuickJsRuntime::new(tools_runtime::codemode::RuntimeLimits::default())
                .unwrap(),
        )
    };
    let runtime = ToolRuntime::builder()
        .mode(tools_runtime::tools::PresentationMode::Code)
        .code_runtime(code_runtime)
        .build()
        .unwrap();
    // As the Code Mode bench: `noop` is concurrency-safe in f2 only.
    runtime
        .register(tools::noop_with(mode == "f2"))
        .unwrap()
        .keep();
    let code = if mode == "f4" {
        "return 100"
    } else {
        F3_PROGRAM
    };
    let started = Instant::now();
    for i in 0..n {
        let call = ToolCall::new(
            i.to_string(),
            "run_code",
            json!({"code": code, "description": "bench"}),
        )
        .unwrap();
        let result = rt.block_on(runtime.execute(call));
        assert_eq!(
            result.value().map(|v| v.as_value().clone()),
            Some(json!({"logs": [], "result": 100}))
        );
    }
    started.elapsed()
}

fn runtime_batches(batch: bool, n: usize) -> Duration {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let runtime = ToolRuntime::builder()
        .max_parallel_tool_calls(1000)
        .build()
        .unwrap();
    runtime.register(tools::noop()).unwrap().keep();
    let args = json!({"text": "hello", "n": 1});
    let mut total = Duration::ZERO;
    for _ in 0..n {
        let calls: Vec<ToolCall> = (0..1000)
            .map(|i| ToolCall::new(i.to_string(), "noop", args.clone()).unwrap())
            .collect();
        let started = Instant::now();
        let results = if batch {
            rt.block_on(runtime.run_batch(calls, CancellationToken::new()))
        } else {
            rt.block_on(futures_util::future::join_all(
                calls.into_iter().map(|call| runtime.execute(call)),
            ))
        };
        total += started.elapsed();
        assert!(results.iter().all(|r| !r.is_error()));
    }
    total / 1000
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .expect("a mode: a, e2, clone, join, batch, e1 or e3");
    let n: usize = args.next().map_or(10_000, |n| n.parse().expect("a count"));
    let per_call = match mode.as_str() {
        "join" | "batch" => runtime_batches(mode == "batch", n) / u32::try_from(n).unwrap(),
        "e1" | "e1b" => {
            let schema = nested::nested_spec().compile().unwrap();
            let mut value: Value = serde_json::from_str(nested::NESTED_ARGS).unwrap();
            let expected = usize::from(mode == "e1b");
            if expected == 1 {
                value["items"][3]["qty"] = json!("four");
            }
            let started = Instant::now();
            for _ in 0..n {
                assert_eq!(
                    black_box(&schema).validate(black_box(&value), "").len(),
                    expected
                );
            }
            started.elapsed() / u32::try_from(n).unwrap()
        }
        "register" => {
            // Build and register `n` catalog tools (scenario d's shape) in a fresh registry,
            // then drop it: per tool.
            let registry = Registry::new();
            let started = Instant::now();
            for i in 0..n {
                registry.register(tools::catalog(i)).unwrap().keep();
            }
            let elapsed = started.elapsed();
            black_box(registry.schemas(None).len());
            elapsed / u32::try_from(n).unwrap()
        }
        "f1" | "f2" | "f3" | "f4" => code_runs(&mode, n) / u32::try_from(n).unwrap(),
        "e3" | "e3_json" => {
            let spec = nested::nested_spec();
            let started = Instant::now();
            for _ in 0..n {
                let compiled = black_box(&spec).compile().unwrap();
                if mode == "e3_json" {
                    black_box(compiled.as_json());
                }
                black_box(compiled);
            }
            started.elapsed() / u32::try_from(n).unwrap()
        }
        "a" | "e2" | "clone" => {
            let pipeline = pipeline();
            let (name, arguments): (&str, Value) = if mode == "a" {
                ("noop", json!({"text": "hello", "n": 1}))
            } else {
                ("nested", serde_json::from_str(nested::NESTED_ARGS).unwrap())
            };
            let started = Instant::now();
            for i in 0..n {
                if mode == "clone" {
                    black_box(black_box(&arguments).clone());
                    continue;
                }
                let call = ToolCall::new(i.to_string(), name, black_box(&arguments).clone());
                let result = now(pipeline.execute(call.unwrap()));
                assert!(!result.is_error());
                black_box(result);
            }
            started.elapsed() / u32::try_from(n).unwrap()
        }
        "wire_openai" | "wire_anthropic" => {
            // One model response's call of `nested` with `NESTED_ARGS`, parsed from the
            // provider's wire (the host's path: text for OpenAI, a value for Anthropic)
            // and executed.
            let pipeline = pipeline();
            let (provider, response) = nested_response(mode == "wire_openai", 1);
            let started = Instant::now();
            for _ in 0..n {
                let mut calls = provider.parse(black_box(&response), None).unwrap();
                let call = calls.pop().unwrap().call.unwrap();
                let result = now(pipeline.execute(call));
                assert!(!result.is_error());
                black_box(result);
            }
            started.elapsed() / u32::try_from(n).unwrap()
        }
        "turn_openai"
        | "turn_anthropic"
        | "turn1_openai"
        | "turn1_anthropic"
        | "turnp_openai"
        | "host_openai"
        | "host_anthropic"
        | "host_openai_owned"
        | "host_anthropic_owned" => {
            // One model turn as a host runs it (`ToolRuntime::run_turn` on a 1-worker
            // runtime): four calls of `nested` with `NESTED_ARGS` parsed from the response,
            // run as a batch, and their result messages rendered; per call.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            let runtime = ToolRuntime::new();
            let mut nested =
                define_tool::<nested::NestedArgs, String>("nested", "Takes NESTED_SPEC.")
                    .body(|_args: nested::NestedArgs, _ctx| async { Ok("ok".to_owned()) });
            if mode.starts_with("turnp_") {
                nested = nested.concurrency_safe();
            }
            runtime.register(nested.build().unwrap()).unwrap().keep();
            let calls = if mode.starts_with("turn1_") { 1 } else { 4 };
            let (provider, response) = nested_response(mode.contains("_openai"), calls);
            let body = response.to_string();
            let started = Instant::now();
            for _ in 0..n {
                let cancel = CancellationToken::new();
                let step = if mode.starts_with("host_") {
                    let read: Value = serde_json::from_str(black_box(&body)).unwrap();
                    if mode.ends_with("_owned") {
                        rt.block_on(runtime.run_turn(provider, read, None, None, cancel))
                    } else {
                        rt.block_on(runtime.run_turn(provider, &read, None, None, cancel))
                    }
                } else {
                    let response = black_box(&response);
                    rt.block_on(runtime.run_turn(provider, response, None, None, cancel))
                }
                .unwrap();
                assert!(step.results.iter().all(|r| !r.is_error()));
                black_box(step);
            }
            started.elapsed() / u32::try_from(n * calls).unwrap()
        }
        other => panic!("unknown mode {other:?}"),
    };
    println!("{mode}: {:.3} µs per call", per_call.as_secs_f64() * 1e6);
}
