//! Metrics. (The per-call span is tested in `tests/spans.rs`, a binary of its own.)

use serde_json::json;
use tools_json::ErrorCode;
use tools_registry::{OutputDecl, ToolDefinition, ToolError};
use tools_runtime::{ToolCall, ToolRuntime, metrics::Metrics};

fn tool(name: &str, fail: bool) -> ToolDefinition {
    ToolDefinition::builder(name, "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_a, _c| async move {
            if fail {
                Err(ToolError::custom("BOOM", "boom"))
            } else {
                Ok(json!("ok"))
            }
        })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn metrics_count_calls_errors_by_code_and_latency() {
    let runtime = ToolRuntime::new();
    runtime.register(tool("good", false)).unwrap().keep();
    runtime.register(tool("bad", true)).unwrap().keep();
    let metrics = Metrics::new();
    runtime.on_execute(metrics.clone()).keep();
    for name in ["good", "good", "bad", "ghost"] {
        let _ = runtime
            .execute(ToolCall::new("c", name, json!({})).unwrap())
            .await;
    }
    let snapshot = metrics.snapshot();
    assert_eq!(snapshot["good"].calls, 2);
    assert!(snapshot["good"].errors.is_empty());
    assert_eq!(snapshot["bad"].errors.get("BOOM"), Some(&1));
    assert_eq!(
        snapshot["ghost"]
            .errors
            .get(ErrorCode::UnknownTool.as_str()),
        Some(&1)
    );
    assert_eq!(snapshot["good"].buckets.iter().sum::<u64>(), 2);
}
