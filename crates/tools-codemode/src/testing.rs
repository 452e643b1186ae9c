//! A scripted binding host for testing a [`CodeRuntime`]: every tool name has one
//! behaviour, and every call is recorded. The runtime crates (`tools-quickjs`,
//! `tools-sandbox`) run their contract tests against it; an engine of your own can too.
//!
//! These are test helpers: [`run`] and [`success`] fail the test by panicking, as
//! assertions do.
#![allow(clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{
    BindingError, BindingFuture, BindingHost, BindingNamespace, CodeRunRequest, CodeRunResult,
    CodeRuntime, ErrorClass,
};
use serde_json::Value;
use tokio::sync::{Barrier, Notify};
use tokio_util::sync::CancellationToken;
use tools_json::{ErrorCode, JsonValue, Limits};

/// The tool names of the default `tools` namespace: `echo` (answers `{echoed: args}`),
/// `identity`, `fail` (a `Denied` error), `failRaw` (an error without a code), `never`
/// (pending for ever), `slow` (1.5 s), `gate` (waits at a three-party barrier), `cancel`
/// (cancels [`Host::cancel`], then pends), `started` (notifies [`Host::started`]), `big`
/// and `exactBig` (integers beyond 2^53), `__proto__` and `constructor`.
pub const TOOLS: &[&str] = &[
    "echo",
    "identity",
    "fail",
    "failRaw",
    "never",
    "slow",
    "gate",
    "cancel",
    "started",
    "big",
    "exactBig",
    "__proto__",
    "constructor",
];

/// One recorded call: global, name, and the arguments as compact JSON.
pub type Call = (String, String, String);

/// The scripted host.
#[derive(Debug)]
pub struct Host {
    /// Every call so far, in arrival order.
    pub calls: Mutex<Vec<Call>>,
    /// The barrier `gate` calls wait at (three parties).
    pub barrier: Arc<Barrier>,
    /// The token a `cancel` call cancels.
    pub cancel: CancellationToken,
    /// Notified by every `started` call.
    pub started: Arc<Notify>,
}

impl Host {
    /// A host with no call recorded.
    pub fn new() -> Arc<Host> {
        Arc::new(Host {
            calls: Mutex::new(Vec::new()),
            barrier: Arc::new(Barrier::new(3)),
            cancel: CancellationToken::new(),
            started: Arc::new(Notify::new()),
        })
    }

    /// A copy of the calls so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn deep_value(value: Value) -> Result<JsonValue, BindingError> {
    JsonValue::with_limits(value, &Limits::default().with_max_depth(20_000))
        .map_err(|error| BindingError::from(error.to_string()))
}

fn parsed(text: &str) -> Result<JsonValue, BindingError> {
    JsonValue::parse(text).map_err(|error| BindingError::from(error.to_string()))
}

impl BindingHost for Host {
    fn call(&self, global: &str, name: &str, args: JsonValue) -> BindingFuture {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((global.to_owned(), name.to_owned(), args.to_string()));
        match name {
            "echo" => {
                let mut map = serde_json::Map::new();
                map.insert("echoed".into(), tools_json::clone_deep(args.as_value()));
                BindingFuture::ready(deep_value(Value::Object(map)))
            }
            "identity" => BindingFuture::ready(Ok(args)),
            "fail" => BindingFuture::new(async {
                Err(BindingError::with_code(ErrorCode::Denied, "nope"))
            }),
            "failRaw" => BindingFuture::new(async { Err("raw-nope".into()) }),
            "never" => BindingFuture::new(std::future::pending()),
            "slow" => BindingFuture::new(async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                deep_value(Value::from("slow-done"))
            }),
            "gate" => {
                let barrier = Arc::clone(&self.barrier);
                BindingFuture::new(async move {
                    barrier.wait().await;
                    Ok(args)
                })
            }
            "cancel" => {
                self.cancel.cancel();
                BindingFuture::new(std::future::pending())
            }
            "started" => {
                self.started.notify_one();
                BindingFuture::new(async { Ok(JsonValue::null()) })
            }
            "big" => BindingFuture::new(async { parsed("9007199254740993") }),
            "exactBig" => BindingFuture::new(async { parsed("1152921504606846976") }),
            "__proto__" => BindingFuture::new(async { deep_value(Value::from("proto-tool-ok")) }),
            "constructor" => {
                BindingFuture::new(async { deep_value(Value::from("constructor-ok")) })
            }
            other => {
                let message = format!("unknown tool {other:?}");
                BindingFuture::new(async move { Err(message.into()) })
            }
        }
    }
}

/// The default namespaces: `tools` with `ToolCallError` / `toolName`.
pub fn tools() -> Vec<BindingNamespace> {
    vec![BindingNamespace::new(
        "tools",
        TOOLS.iter().copied(),
        Some(ErrorClass::tool_call_error()),
    )]
}

/// Runs `program` against the default namespaces and a fresh host.
pub async fn run(runtime: &dyn CodeRuntime, program: &str) -> (CodeRunResult, Arc<Host>) {
    let host = Host::new();
    let request = CodeRunRequest::new(program, tools(), host.clone());
    let result = runtime
        .run(request)
        .await
        .expect("the run is not a contract error");
    (result, host)
}

/// The completion value as compact JSON (`None` when there is none).
pub fn value_text(result: &CodeRunResult) -> Option<String> {
    result
        .value
        .as_ref()
        .map(|v| tools_json::to_compact_string(v.as_value()))
}

/// The failure as `(kind, message)`.
pub fn failure(result: &CodeRunResult) -> Option<(&'static str, String)> {
    result
        .error
        .as_ref()
        .map(|e| (e.kind.as_str(), e.message.clone()))
}

/// Asserts a successful run and returns its value text.
pub fn success(result: &CodeRunResult) -> String {
    assert!(result.error.is_none(), "the run failed: {:?}", result.error);
    value_text(result).unwrap_or_default()
}
