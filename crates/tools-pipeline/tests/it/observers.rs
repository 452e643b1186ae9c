//! Group N: result observers.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_pipeline::{
    DispatchNext, DispatchRequest, HookOptions, PreDecision, ToolResult, from_fn,
};
use tools_registry::ToolError;

use crate::support::{Log, call, call_as, setup, t, tool_with};

#[tokio::test(flavor = "current_thread")]
async fn n01_a_panicking_observer_is_isolated() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    let a = registry.scope();
    pipeline
        .on_execute_with(
            HookOptions::new().prepend(),
            from_fn(|r: DispatchRequest, n: DispatchNext| async move {
                let _ = n.run(r).await?;
                Ok(ToolResult::failure_with_content(
                    ToolError::new("outer failure"),
                    vec![tools_presentation::ContentBlock::text("outer failure")],
                ))
            }),
        )
        .keep();
    let records = Log::default();
    let r1 = records.clone();
    pipeline
        .on_result_with(HookOptions::new().scope(&a), move |_e, r| {
            r1.push(format!("{}", r.is_error()))
        })
        .keep();
    pipeline
        .on_result(|_e, _r| panic!("observer exploded"))
        .keep();
    let r2 = records.clone();
    pipeline
        .on_result(move |_e, r| r2.push(format!("{}", r.is_error())))
        .keep();
    let result = pipeline.execute(call_as("t", json!({}), &a)).await;
    assert_eq!(result.text(), "outer failure");
    assert_eq!(records.entries(), ["true", "true"]);
}

#[tokio::test(flavor = "current_thread")]
async fn n02_exactly_one_publication_per_path() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("fails", |_a, _c| async {
            Err(ToolError::new("x"))
        }))
        .unwrap()
        .keep();
    let published: Arc<Mutex<Vec<ToolResult>>> = Arc::default();
    let p = Arc::clone(&published);
    pipeline
        .on_result(move |_e, r| p.lock().unwrap().push(r.clone()))
        .keep();
    let deny = Arc::new(Mutex::new(false));
    let d = Arc::clone(&deny);
    pipeline
        .on_pre_execute(crate::support::pre_hook(move |_| {
            if *d.lock().unwrap() {
                Some(Ok(PreDecision::Deny("denied".into())))
            } else {
                None
            }
        }))
        .keep();
    let cancelled = tokio_util::sync::CancellationToken::new();
    cancelled.cancel();
    let mut returned = Vec::new();
    returned.push(pipeline.execute(call("echo", json!({"text": "ok"}))).await);
    returned.push(pipeline.execute(call("fails", json!({}))).await);
    returned.push(pipeline.execute(call("nope", json!({}))).await);
    returned.push(
        pipeline
            .execute(call("echo", json!({})).with_cancellation(cancelled))
            .await,
    );
    returned.push(pipeline.execute(call("echo", json!({"x": -0.0}))).await);
    *deny.lock().unwrap() = true;
    returned.push(pipeline.execute(call("echo", json!({}))).await);
    assert_eq!(published.lock().unwrap().as_slice(), returned.as_slice());
}
