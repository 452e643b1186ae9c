//! End-to-end tests of the workspace through `ToolRuntime` only: registration, per-agent
//! restriction, hooks and observers, a 50-call mixed batch, cancellation mid-batch, the
//! timeout policy, and the Code Mode collapse.
//!
//! Synchronisation uses gates and `tokio::task::yield_now` loops, never sleeps; timers run
//! on paused time, so nothing depends on the machine's speed.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod batch;
mod budgets_and_code_mode;
mod hooks;
mod registration;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tools_json::ErrorCode;
use tools_pipeline::testing::InvariantChecker;
use tools_pipeline::{
    PostDecision, PostNext, PostRequest, PreDecision, PreNext, PreRequest, ToolContext, from_fn,
};
use tools_presentation::ContentBlock;
use tools_registry::{
    ExecutionToken, JsonValue, OutputDecl, RunContext, ToolDefinition, ToolError, define_tool,
};
use tools_runtime::{
    BatchEvent, ToolCall, ToolResult, ToolRuntime,
    hooks::HookOptions,
    tools::{ExecutionMode, PresentationMode, ToolFilter},
};
use tools_schema::ToolArgs;

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

/// A shared, ordered log.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Gates keyed by id: a body waits on its id until the test opens it (opening first is
/// remembered).
#[derive(Clone, Default)]
struct Gates(Arc<Mutex<HashMap<String, Arc<Notify>>>>);

impl Gates {
    fn gate(&self, id: &str) -> Arc<Notify> {
        Arc::clone(self.0.lock().unwrap().entry(id.to_owned()).or_default())
    }

    async fn wait(&self, id: &str) {
        self.gate(id).notified().await;
    }

    fn open(&self, id: &str) {
        self.gate(id).notify_one();
    }
}

/// Lets every task on the current thread run until nothing more can progress.
async fn settle() {
    for _ in 0..200 {
        tokio::task::yield_now().await;
    }
}

fn text_tool<F, Fut>(name: &str, parallel: bool, body: F) -> ToolDefinition
where
    F: Fn(JsonValue, RunContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let builder = ToolDefinition::builder(name, format!("the {name} tool"))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(body);
    let builder = if parallel {
        builder.concurrency(|_| true)
    } else {
        builder
    };
    builder.build().unwrap()
}

fn id_of(args: &JsonValue) -> String {
    match args.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args).unwrap()
}

fn texts(results: &[ToolResult]) -> Vec<String> {
    results.iter().map(ToolResult::text).collect()
}

fn checked_runtime(builder: tools_runtime::RuntimeBuilder) -> (ToolRuntime, InvariantChecker) {
    checked_runtime_in(tools_runtime::tools::PresentationMode::Native, builder)
}

/// A runtime over a pipeline with the invariant checker installed, whose scopes default to
/// `mode`.
fn checked_runtime_in(
    mode: tools_runtime::tools::PresentationMode,
    builder: tools_runtime::RuntimeBuilder,
) -> (ToolRuntime, InvariantChecker) {
    let registry = tools_runtime::tools::Registry::builder()
        .default_mode(mode)
        .build();
    let pipeline = tools_runtime::hooks::Pipeline::new(registry);
    let checker = InvariantChecker::install(&pipeline);
    let runtime = builder.pipeline(pipeline).build().unwrap();
    (runtime, checker)
}
