//! Catalogue group Q: the timeout policy. Time is paused: the clock only moves when every
//! task waits, so nothing depends on the machine's speed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_json::ErrorCode;
use tools_pipeline::{PostNext, PostRequest, from_fn};
use tools_registry::{OutputDecl, ToolDefinition, ToolError};
use tools_runtime::{ToolCall, ToolRuntime};

fn budgeted<F, Fut>(name: &str, budget: Option<Duration>, body: F) -> ToolDefinition
where
    F: Fn(tools_json::JsonValue, tools_registry::RunContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let builder = ToolDefinition::builder(name, "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(body);
    match budget {
        Some(budget) => builder.timeout(budget).build().unwrap(),
        None => builder.build().unwrap(),
    }
}

fn cooperative(name: &str, budget: Option<Duration>) -> ToolDefinition {
    budgeted(name, budget, |_a, ctx| async move {
        ctx.cancellation().cancelled().await;
        Ok(json!("stopped cooperatively"))
    })
}

fn timed_out_shape() -> Value {
    json!({"isError": true, "content": [{"type": "text", "text": "Error: tool call timed out after 100ms"}],
           "error": {"message": "tool call timed out after 100ms", "info": {"code": "TOOL_TIMEOUT"}}})
}

fn call(name: &str) -> ToolCall {
    ToolCall::new("c1", name, json!({})).unwrap()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q01_q02_without_a_budget_nothing_changes_and_fast_tools_succeed() {
    let runtime = ToolRuntime::new();
    runtime
        .register(budgeted(
            "fast",
            Some(Duration::from_secs(10)),
            |_a, _c| async { Ok(json!("ok")) },
        ))
        .unwrap()
        .keep();
    runtime
        .register(budgeted("plain", None, |_a, _c| async { Ok(json!("ok")) }))
        .unwrap()
        .keep();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    runtime
        .on_post_execute(from_fn(move |r: PostRequest, n: PostNext| {
            s.lock().unwrap().push(r.execution().is_cancelled());
            async move { n.run(r).await }
        }))
        .keep();
    let fast = runtime.execute(call("fast")).await;
    assert_eq!(
        fast.to_json(),
        json!({"isError": false, "value": "ok", "content": [{"type": "text", "text": "ok"}]})
    );
    assert_eq!(runtime.execute(call("plain")).await.text(), "ok");
    assert_eq!(seen.lock().unwrap().as_slice(), [false, false]);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q03_the_deadline_cancels_a_cooperative_body() {
    let runtime = ToolRuntime::new();
    runtime
        .register(cooperative("coop", Some(Duration::from_millis(100))))
        .unwrap()
        .keep();
    let result = runtime.execute(call("coop")).await;
    assert_eq!(result.to_json(), timed_out_shape());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q04_a_tool_owned_abort_error_becomes_the_timeout() {
    let runtime = ToolRuntime::new();
    runtime
        .register(budgeted(
            "web",
            Some(Duration::from_millis(100)),
            |_a, ctx| async move {
                ctx.cancellation().cancelled().await;
                Err(ToolError::custom("WEB_ABORTED", "web fetch aborted"))
            },
        ))
        .unwrap()
        .keep();
    assert_eq!(
        runtime.execute(call("web")).await.to_json(),
        timed_out_shape()
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q05_a_caller_cancellation_first_stays_aborted() {
    let runtime = ToolRuntime::new();
    runtime
        .register(cooperative("coop", Some(Duration::from_millis(100))))
        .unwrap()
        .keep();
    let caller = CancellationToken::new();
    let c = caller.clone();
    let task = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.execute(call("coop").with_cancellation(c)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    caller.cancel();
    let result = task.await.unwrap();
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    assert_eq!(result.text(), "Error: tool call aborted");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q06_a_timeout_first_stands_even_if_the_caller_cancels_later() {
    let runtime = ToolRuntime::new();
    let caller = CancellationToken::new();
    let c = caller.clone();
    runtime
        .register(budgeted(
            "slow",
            Some(Duration::from_millis(100)),
            move |_a, ctx| {
                let c = c.clone();
                async move {
                    ctx.cancellation().cancelled().await;
                    // The deadline fired; now the caller cancels too; the body still succeeds.
                    c.cancel();
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Ok(json!("late success"))
                }
            },
        ))
        .unwrap()
        .keep();
    let result = runtime
        .execute(call("slow").with_cancellation(caller))
        .await;
    assert_eq!(result.to_json(), timed_out_shape());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q07_without_the_policy_a_budget_is_not_enforced() {
    let runtime = ToolRuntime::builder()
        .timeout_policy(false)
        .build()
        .unwrap();
    runtime
        .register(budgeted(
            "slowish",
            Some(Duration::from_millis(100)),
            |_a, _c| async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                Ok(json!("finished"))
            },
        ))
        .unwrap()
        .keep();
    assert_eq!(runtime.execute(call("slowish")).await.text(), "finished");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn q08_unknown_tools_pass_through() {
    let runtime = ToolRuntime::new();
    assert_eq!(
        runtime.execute(call("ghost")).await.error_code(),
        Some(ErrorCode::UnknownTool)
    );
}

#[test]
fn a_budget_beyond_the_timer_is_a_registration_error() {
    let err = ToolDefinition::builder("huge", "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("x")) })
        .timeout(Duration::from_millis(2_147_483_648))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("2147483647ms"), "{err}");
}
