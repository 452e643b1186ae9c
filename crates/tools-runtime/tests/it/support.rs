//! Fixtures: gated tools whose bodies wait for the test to release them, and a shared log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tools_registry::{OutputDecl, ToolDefinition};
use tools_runtime::ToolRuntime;

/// A shared log.
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Gates keyed by id: a body waits on its id until the test releases it.
#[derive(Clone, Default)]
pub(crate) struct Gates {
    senders: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    receivers: Arc<Mutex<HashMap<String, oneshot::Receiver<()>>>>,
}

impl Gates {
    fn pair(&self, id: &str) {
        let mut senders = self.senders.lock().unwrap();
        if !senders.contains_key(id) && !self.receivers.lock().unwrap().contains_key(id) {
            let (tx, rx) = oneshot::channel();
            senders.insert(id.to_owned(), tx);
            self.receivers.lock().unwrap().insert(id.to_owned(), rx);
        }
    }

    pub(crate) async fn wait(&self, id: &str) {
        self.pair(id);
        let receiver = self.receivers.lock().unwrap().remove(id);
        if let Some(receiver) = receiver {
            let _ = receiver.await;
        }
    }

    pub(crate) fn release(&self, id: &str) {
        self.pair(id);
        if let Some(sender) = self.senders.lock().unwrap().remove(id) {
            let _ = sender.send(());
        }
    }
}

/// A gated tool: logs `<prefix><id>` when its body starts, waits for gate `id`, returns
/// `done-<id>`.
pub(crate) fn gated(
    name: &str,
    parallel: bool,
    gates: &Gates,
    log: &Log,
    prefix: &str,
) -> ToolDefinition {
    let (gates, log, prefix) = (gates.clone(), log.clone(), prefix.to_owned());
    let builder = ToolDefinition::builder(name, "gated")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |args, _ctx| {
            let (gates, log) = (gates.clone(), log.clone());
            let id = id_of(&args);
            log.push(format!("{prefix}{id}"));
            async move {
                gates.wait(&id).await;
                Ok(Value::String(format!("done-{id}")))
            }
        });
    let builder = if parallel {
        builder.concurrency(|_| true)
    } else {
        builder
    };
    builder.build().unwrap()
}

/// An instant tool logging `<label>-start-<id>` / `<label>-end-<id>` (or just `<label>-<id>`
/// when `split` is false).
pub(crate) fn instant(
    name: &str,
    parallel: bool,
    log: &Log,
    label: &str,
    split: bool,
) -> ToolDefinition {
    let (log, label) = (log.clone(), label.to_owned());
    let builder = ToolDefinition::builder(name, "instant")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |args, _ctx| {
            let (log, label) = (log.clone(), label.clone());
            let id = id_of(&args);
            async move {
                if split {
                    log.push(format!("{label}-start-{id}"));
                    tokio::task::yield_now().await;
                    log.push(format!("{label}-end-{id}"));
                } else {
                    log.push(format!("{label}-{id}"));
                }
                Ok(Value::String(id))
            }
        });
    let builder = if parallel {
        builder.concurrency(|_| true)
    } else {
        builder
    };
    builder.build().unwrap()
}

fn id_of(args: &tools_json::JsonValue) -> String {
    match args.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Lets every spawned task run until nothing more can progress (no timing involved).
pub(crate) async fn settle() {
    for _ in 0..200 {
        tokio::task::yield_now().await;
    }
}

/// A runtime with the pipeline's invariant checker installed; the check runs when the last
/// clone is dropped, which is when the test that holds it ends.
pub(crate) fn runtime_with_cap(cap: usize) -> Checked {
    let pipeline = tools_runtime::hooks::Pipeline::new(tools_runtime::tools::Registry::new());
    let checker = tools_pipeline::testing::InvariantChecker::install(&pipeline);
    let runtime = ToolRuntime::builder()
        .max_parallel_tool_calls(cap)
        .pipeline(pipeline)
        .build()
        .unwrap();
    Checked { runtime, checker }
}

/// A runtime with its invariant checker: derefs to the runtime.
#[derive(Clone)]
pub(crate) struct Checked {
    runtime: ToolRuntime,
    #[allow(dead_code)] // held for its drop
    checker: tools_pipeline::testing::InvariantChecker,
}

impl std::ops::Deref for Checked {
    type Target = ToolRuntime;

    fn deref(&self) -> &ToolRuntime {
        &self.runtime
    }
}

pub(crate) fn call(n: usize, name: &str, id: &str) -> tools_runtime::ToolCall {
    tools_runtime::ToolCall::new(format!("c{n}"), name, json!({"id": id})).unwrap()
}
