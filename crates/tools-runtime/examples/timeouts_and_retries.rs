//! Timeouts, retries and metrics around tool bodies, through `ToolRuntime`.
//!
//! ```text
//! cargo run -p tools-runtime --example timeouts_and_retries
//! ```
//!
//! What it shows, with real waits of tens of milliseconds:
//!
//! - the **default timeout policy** (installed by every `ToolRuntime`): a tool declares a
//!   budget (`.timeout(..)`); when it elapses, the policy cancels the body's token, waits
//!   for the body to settle (it is cooperative, nothing is dropped mid-flight) and turns the
//!   result into `TOOL_TIMEOUT`. A cooperative body stops at once; a body that ignores its
//!   token still gets `TOOL_TIMEOUT`, but only once it returns;
//! - a **`tower::retry` policy** in the execute waterfall
//!   (`runtime.on_execute(layer(RetryLayer::new(policy)))`) that re-runs a
//!   flaky tool's body while it fails with a retryable code, with a short backoff, and gives
//!   up after three retries;
//! - the **`Metrics` layer** (installed outermost with `HookOptions::prepend`, so it sees
//!   each call's final outcome, timeouts included) and its snapshot at the end: calls,
//!   errors by code and the latency histogram per tool.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_macros)]
#![forbid(unsafe_code)]

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_runtime::{
    ToolCall, ToolDefinition, ToolError, ToolResult, ToolRuntime,
    hooks::{DispatchRequest, HookOptions, layer},
    metrics::{LATENCY_BUCKETS, Metrics},
    tools::{OutputDecl, RegistryError},
};

/// The code a flaky upstream fails with; only this one is worth retrying.
const UNAVAILABLE: &str = "UPSTREAM_UNAVAILABLE";

/// Retries a call whose result failed with [`UNAVAILABLE`], up to `left` more times, waiting
/// `backoff` before the first retry and twice as long before each next one.
///
/// Tower clones the policy for every call, so `left` counts one call's retries.
#[derive(Clone, Debug)]
struct RetryUnavailable {
    left: u32,
    backoff: Duration,
}

impl tower::retry::Policy<DispatchRequest, ToolResult, ToolError> for RetryUnavailable {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        request: &mut DispatchRequest,
        result: &mut Result<ToolResult, ToolError>,
    ) -> Option<Self::Future> {
        let Ok(result) = result else {
            return None; // a wrapper's own failure: not the tool's to retry
        };
        let retryable = result
            .code()
            .is_some_and(|code| code.as_str() == UNAVAILABLE);
        // A cancelled call (batch cancelled, or its timeout fired) is not retried.
        if !retryable || self.left == 0 || request.cancellation().is_cancelled() {
            return None;
        }
        self.left -= 1;
        let wait = self.backoff;
        self.backoff *= 2;
        println!(
            "     [retry] {} failed with {UNAVAILABLE}; retrying in {}ms ({} retries left)",
            request.execution().name(),
            wait.as_millis(),
            self.left
        );
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, request: &DispatchRequest) -> Option<DispatchRequest> {
        Some(request.clone())
    }
}

fn text_output() -> OutputDecl {
    OutputDecl::text(json!({"type": "string"}))
}

/// A tool with a 50 ms budget whose work would take 10 s; it watches its token.
fn cooperative_slow() -> Result<ToolDefinition, RegistryError> {
    ToolDefinition::builder("slow_index", "Index a large tree (cooperative).")
        .output(text_output())
        .timeout(Duration::from_millis(50))
        .body(|_args, ctx| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(10)) => Ok(json!("indexed everything")),
                () = ctx.cancellation().cancelled() => {
                    println!("     [slow_index] my token was cancelled; stopping now");
                    Ok(json!("indexed part of the tree"))
                }
            }
        })
        .build()
}

/// A tool with a 20 ms budget whose body ignores its token and takes 60 ms.
fn stubborn_slow() -> Result<ToolDefinition, RegistryError> {
    ToolDefinition::builder("stubborn", "Work that ignores cancellation.")
        .output(text_output())
        .timeout(Duration::from_millis(20))
        .body(|_args, _ctx| async {
            tokio::time::sleep(Duration::from_millis(60)).await;
            Ok(json!("done, late"))
        })
        .build()
}

/// A tool with a generous budget that answers at once.
fn quick() -> Result<ToolDefinition, RegistryError> {
    ToolDefinition::builder("quick", "Answer at once.")
        .output(text_output())
        .timeout(Duration::from_secs(1))
        .body(|_args, _ctx| async { Ok(json!("instant answer")) })
        .build()
}

/// A tool whose upstream fails `failures` times before it answers (counted across calls).
fn flaky(name: &str, failures: u32) -> Result<ToolDefinition, RegistryError> {
    let attempts = Arc::new(AtomicU32::new(0));
    let tool = name.to_owned();
    ToolDefinition::builder(name, "Fetch from a flaky upstream.")
        .parameters(json!({"type": "object", "properties": {"key": {"type": "string"}}}))
        .output(text_output())
        .body(move |args, _ctx| {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            let key = args
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let tool = tool.clone();
            async move {
                if attempt <= failures {
                    println!("     [{tool}] attempt {attempt}: upstream unavailable");
                    Err(ToolError::custom(
                        UNAVAILABLE,
                        format!("upstream unavailable (attempt {attempt})"),
                    ))
                } else {
                    println!("     [{tool}] attempt {attempt}: ok");
                    Ok(json!(format!(
                        "value of {key:?} (after {attempt} attempts)"
                    )))
                }
            }
        })
        .build()
}

async fn run(
    runtime: &ToolRuntime,
    id: &str,
    name: &str,
    args: Value,
) -> Result<(), Box<dyn Error>> {
    println!("-> {id} {name} {args}");
    let started = Instant::now();
    let result = runtime.execute(ToolCall::new(id, name, args)?).await;
    let code = result.code().map_or("none", |code| code.as_str());
    println!(
        "<- {id} {name}: {} after {}ms, code {code}: {}\n",
        if result.is_error() { "error" } else { "ok" },
        started.elapsed().as_millis(),
        result.text()
    );
    Ok(())
}

fn bucket_label(index: usize) -> String {
    match LATENCY_BUCKETS.get(index) {
        Some(bound) if *bound < Duration::from_millis(1) => format!("<={}us", bound.as_micros()),
        Some(bound) if *bound < Duration::from_secs(1) => format!("<={}ms", bound.as_millis()),
        Some(bound) => format!("<={}s", bound.as_secs()),
        None => ">600s".to_owned(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn Error>> {
    // The timeout policy is installed by default (`RuntimeBuilder::timeout_policy`).
    let runtime = ToolRuntime::new();
    for tool in [
        cooperative_slow()?,
        stubborn_slow()?,
        quick()?,
        flaky("flaky_fetch", 2)?,
        flaky("down_fetch", u32::MAX)?,
    ] {
        runtime.register(tool)?.keep();
    }

    // Metrics, outermost: one record per call, with the outcome the caller gets.
    let metrics = Metrics::new();
    runtime
        .on_execute_with(HookOptions::new().prepend(), metrics.clone())
        .keep();
    // The retry layer, appended: it sits inside the timeout policy (registered first), so
    // a tool's budget bounds all of its attempts together.
    let policy = RetryUnavailable {
        left: 3,
        backoff: Duration::from_millis(5),
    };
    runtime
        .on_execute(layer(tower::retry::RetryLayer::new(policy)))
        .keep();

    println!("1. Timeouts (the default policy)\n");
    run(&runtime, "t1", "slow_index", json!({})).await?;
    run(&runtime, "t2", "stubborn", json!({})).await?;
    run(&runtime, "t3", "quick", json!({})).await?;

    println!("2. Retries (tower::retry in the execute waterfall)\n");
    run(&runtime, "r1", "flaky_fetch", json!({"key": "weather"})).await?;
    run(&runtime, "r2", "down_fetch", json!({"key": "news"})).await?;

    println!("3. Metrics snapshot (per tool)\n");
    for (tool, stats) in metrics.snapshot() {
        let errors: Vec<String> = stats
            .errors
            .iter()
            .map(|(code, n)| format!("{code}={n}"))
            .collect();
        let latency: Vec<String> = stats
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| format!("{}: {n}", bucket_label(i)))
            .collect();
        println!(
            "  {tool:<12} calls {}, errors [{}], latency [{}]",
            stats.calls,
            errors.join(", "),
            latency.join(", ")
        );
    }
    Ok(())
}
