//! Group L: deferred contexts and the turn conclusion.

use serde_json::json;
use tools_json::JsonValue;
use tools_pipeline::{
    DispatchNext, DispatchRequest, PostDecision, PostNext, PostRequest, ToolContext, ToolResult,
    from_fn,
};
use tools_registry::ToolError;

use crate::support::{call, post_hook, setup, tool_with};

#[tokio::test(flavor = "current_thread")]
async fn l01_deferred_then_wrapper_then_post_contexts() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("composite", |_a, ctx| {
            ctx.defer_context(ToolContext::text("nested-1"));
            ctx.defer_context(ToolContext::text("nested-2"));
            async { Ok(json!("done")) }
        }))
        .unwrap()
        .keep();
    pipeline
        .on_execute(from_fn(|r: DispatchRequest, n: DispatchNext| async move {
            let out = n.run(r).await?;
            let mut contexts = out.contexts().to_vec();
            contexts.push(ToolContext::text("wrapper"));
            Ok(out.with_contexts(contexts))
        }))
        .keep();
    pipeline
        .on_post_execute(from_fn(|r: PostRequest, n: PostNext| async move {
            Ok(n.run(r)
                .await?
                .with_contexts(vec![ToolContext::text("post")]))
        }))
        .keep();
    let result = pipeline.execute(call("composite", json!({}))).await;
    let texts: Vec<String> = result
        .contexts()
        .iter()
        .map(|c| c.content[0].as_text().unwrap().to_owned())
        .collect();
    assert_eq!(texts, ["nested-1", "nested-2", "wrapper", "post"]);
}

#[tokio::test(flavor = "current_thread")]
async fn l02_a_failing_body_keeps_its_contexts_and_a_block_replaces_them() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("failing-composite", |_a, ctx| {
            ctx.defer_context(ToolContext::text("nested"));
            async { Err(ToolError::new("outer failure")) }
        }))
        .unwrap()
        .keep();
    let result = pipeline.execute(call("failing-composite", json!({}))).await;
    assert!(result.is_error());
    assert_eq!(result.contexts(), [ToolContext::text("nested")]);
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::block("no")
            .with_contexts(vec![ToolContext::text("block-only").with_source("blocker")]))
    }));
    let blocked = pipeline.execute(call("failing-composite", json!({}))).await;
    assert_eq!(
        blocked.contexts(),
        [ToolContext::text("block-only").with_source("blocker")]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn l03_l04_only_a_successful_result_concludes_the_turn() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("terminal", |_a, ctx| {
            ctx.conclude_turn();
            async { Ok(json!("bye")) }
        }))
        .unwrap()
        .keep();
    let concluded = pipeline.execute(call("terminal", json!({}))).await;
    assert!(concluded.concludes_turn());
    assert_eq!(concluded.to_json()["concludesTurn"], json!(true));
    let hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_value(json!("other")))
    }));
    assert!(
        pipeline
            .execute(call("terminal", json!({})))
            .await
            .concludes_turn(),
        "a value replacement keeps it"
    );
    drop(hook);
    let hook = pipeline.on_post_execute(post_hook(|_| Ok(PostDecision::block("blocked"))));
    assert!(
        !pipeline
            .execute(call("terminal", json!({})))
            .await
            .concludes_turn()
    );
    drop(hook);
    // An authored success cannot forge it.
    let _hook = pipeline.on_execute(crate::support::short_circuit(ToolResult::success(
        JsonValue::new(json!("x")).unwrap(),
    )));
    assert!(
        !pipeline
            .execute(call("echo", json!({})))
            .await
            .concludes_turn()
    );
}
