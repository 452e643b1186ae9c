//! A scripted binding host shared by the runtime tests: every tool name has one behaviour,
//! and every call is recorded.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Barrier, Notify};
use tokio_util::sync::CancellationToken;
use tools_codemode::{
    BindingError, BindingFuture, BindingHost, BindingNamespace, CodeRunRequest, CodeRunResult,
    CodeRuntime, ErrorClass,
};
use tools_json::{ErrorCode, JsonValue, Limits};

/// The tool names of the default `tools` namespace.
pub(crate) const TOOLS: &[&str] = &[
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
pub(crate) type Call = (String, String, String);

/// The scripted host.
pub(crate) struct Host {
    pub(crate) calls: Mutex<Vec<Call>>,
    pub(crate) barrier: Arc<Barrier>,
    pub(crate) cancel: CancellationToken,
    pub(crate) started: Arc<Notify>,
}

impl Host {
    pub(crate) fn new() -> Arc<Host> {
        Arc::new(Host {
            calls: Mutex::new(Vec::new()),
            barrier: Arc::new(Barrier::new(3)),
            cancel: CancellationToken::new(),
            started: Arc::new(Notify::new()),
        })
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

fn deep_value(value: Value) -> JsonValue {
    JsonValue::with_limits(value, &Limits::default().with_max_depth(20_000)).unwrap()
}

impl BindingHost for Host {
    fn call(&self, global: &str, name: &str, args: JsonValue) -> BindingFuture {
        self.calls
            .lock()
            .unwrap()
            .push((global.to_owned(), name.to_owned(), args.to_string()));
        match name {
            "echo" => {
                let mut map = serde_json::Map::new();
                map.insert("echoed".into(), tools_json::clone_deep(args.as_value()));
                let value = deep_value(Value::Object(map));
                BindingFuture::ready(Ok(value))
            }
            "identity" => BindingFuture::ready(Ok(args)),
            "fail" => BindingFuture::new(async {
                Err(BindingError::with_code(ErrorCode::Denied, "nope"))
            }),
            "failRaw" => BindingFuture::new(async { Err("raw-nope".into()) }),
            "never" => BindingFuture::new(std::future::pending()),
            "slow" => BindingFuture::new(async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                Ok(deep_value(Value::from("slow-done")))
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
            "big" => {
                BindingFuture::new(async { Ok(JsonValue::parse("9007199254740993").unwrap()) })
            }
            "exactBig" => {
                BindingFuture::new(async { Ok(JsonValue::parse("1152921504606846976").unwrap()) })
            }
            "__proto__" => {
                BindingFuture::new(async { Ok(deep_value(Value::from("proto-tool-ok"))) })
            }
            "constructor" => {
                BindingFuture::new(async { Ok(deep_value(Value::from("constructor-ok"))) })
            }
            other => {
                let message = format!("unknown tool {other:?}");
                BindingFuture::new(async move { Err(message.into()) })
            }
        }
    }
}

/// The default namespaces: `tools` with `ToolCallError` / `toolName`.
pub(crate) fn tools() -> Vec<BindingNamespace> {
    vec![BindingNamespace::new(
        "tools",
        TOOLS.iter().copied(),
        Some(ErrorClass::tool_call_error()),
    )]
}

/// Runs `program` against the default namespaces and a fresh host.
pub(crate) async fn run(runtime: &dyn CodeRuntime, program: &str) -> (CodeRunResult, Arc<Host>) {
    let host = Host::new();
    let request = CodeRunRequest::new(program, tools(), host.clone());
    let result = runtime
        .run(request)
        .await
        .expect("the run is not a contract error");
    (result, host)
}

/// The completion value as compact JSON (`None` when there is none).
pub(crate) fn value_text(result: &CodeRunResult) -> Option<String> {
    result
        .value
        .as_ref()
        .map(|v| tools_json::to_compact_string(v.as_value()))
}

/// The failure as `(kind, message)`.
pub(crate) fn failure(result: &CodeRunResult) -> Option<(&'static str, String)> {
    result
        .error
        .as_ref()
        .map(|e| (e.kind.as_str(), e.message.clone()))
}

/// Asserts a successful run and returns its value text.
pub(crate) fn success(result: &CodeRunResult) -> String {
    assert!(result.error.is_none(), "the run failed: {:?}", result.error);
    value_text(result).unwrap_or_default()
}
