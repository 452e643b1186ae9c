//! Group G: post-execute decisions.

use serde_json::json;
use tools_pipeline::{ErrorCode, PostDecision, ToolContext};
use tools_presentation::ContentBlock;
use tools_registry::{OutputDecl, ToolDefinition, ToolError};

use crate::support::{call, post_hook, setup, tool_with};

fn projected() -> ToolDefinition {
    ToolDefinition::builder("projected", "d")
        .parameters(json!({"type": "object", "properties": {}}))
        .output(
            OutputDecl::new(
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}),
                |_a, v| Ok(vec![ContentBlock::text(format!("render:{}", v["text"].as_str().unwrap_or_default()))]),
            )
            .with_presentation_meta(|_a, v| Ok(json!({"projected": v["text"]}))),
        )
        .body(|_a, _c| async { Ok(json!({"text": "body"})) })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn g01_accept_with_content_or_value() {
    let (registry, pipeline) = setup();
    registry.register(projected()).unwrap().keep();
    let hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_content(vec![ContentBlock::text(
            "policy content",
        )]))
    }));
    let content = pipeline.execute(call("projected", json!({}))).await;
    assert_eq!(
        content.to_json(),
        json!({"isError": false, "value": {"text": "body"}, "content": [{"type": "text", "text": "policy content"}], "meta": {"projected": "body"}})
    );
    drop(hook);
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_value(json!({"text": "policy value"}))
            .with_contexts(vec![ToolContext::text("value context").with_source("test")]))
    }));
    let value = pipeline.execute(call("projected", json!({}))).await;
    assert_eq!(
        value.to_json(),
        json!({"isError": false, "value": {"text": "policy value"}, "content": [{"type": "text", "text": "render:policy value"}],
               "meta": {"projected": "policy value"},
               "additionalContexts": [{"source": "test", "content": [{"type": "text", "text": "value context"}]}]})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn g03_g05_value_replacements_are_revalidated() {
    let (_registry, pipeline) = setup();
    let hook = pipeline.on_post_execute(post_hook(|_| Ok(PostDecision::accept_value(json!(1)))));
    let invalid = pipeline.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(invalid.value().is_none());
    drop(hook);
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_value(json!("replacement")))
    }));
    let replaced = pipeline.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(
        replaced.to_json(),
        json!({"isError": false, "value": "replacement", "content": [{"type": "text", "text": "replacement"}]})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn g04_g06_blocking() {
    let (_registry, pipeline) = setup();
    let hook =
        pipeline.on_post_execute(post_hook(|_| Ok(PostDecision::block("blocked by policy"))));
    let blocked = pipeline
        .execute(call("echo", json!({"text": "secret"})))
        .await;
    assert_eq!(
        blocked.to_json(),
        json!({"isError": true, "error": {"message": "blocked by policy"}, "content": [{"type": "text", "text": "blocked by policy"}]})
    );
    drop(hook);
    let hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::Block {
            feedback: vec![],
            contexts: vec![],
        })
    }));
    let empty = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        empty.error().unwrap().message(),
        "tool result blocked by post-execute policy"
    );
    drop(hook);
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::Block {
            feedback: vec![ContentBlock::reasoning("private rationale")],
            contexts: vec![],
        })
    }));
    let reasoning = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(reasoning.error().unwrap().message(), "[reasoning content]");
}

#[tokio::test(flavor = "current_thread")]
async fn g07_g08_value_replacement_needs_a_success_and_the_tool() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("failing", |_a, _c| async {
            Err(ToolError::new("body failed"))
        }))
        .unwrap()
        .keep();
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_value(json!("replacement")))
    }));
    let failed = pipeline.execute(call("failing", json!({}))).await;
    assert_eq!(
        failed.error().unwrap().message(),
        "a post-execute decision cannot replace the value of a failed result"
    );

    let registration = registry
        .register(tool_with("ephemeral", |_a, _c| async { Ok(json!("x")) }))
        .unwrap();
    let shared = std::sync::Arc::new(std::sync::Mutex::new(Some(registration)));
    let dispose = std::sync::Arc::clone(&shared);
    let _dispose_hook = pipeline.on_post_execute_with(
        tools_pipeline::HookOptions::new().prepend(),
        crate::support::post_hook(move |request| {
            if request.execution().name().as_str() == "ephemeral" {
                drop(dispose.lock().unwrap().take());
            }
            Ok(PostDecision::accept_value(json!("replacement")))
        }),
    );
    let gone = pipeline.execute(call("ephemeral", json!({}))).await;
    assert_eq!(gone.error_code(), Some(ErrorCode::UnknownTool));
    assert_eq!(
        gone.error().unwrap().message(),
        "unknown tool \"ephemeral\""
    );
}

#[tokio::test(flavor = "current_thread")]
async fn g09_contexts_of_blocks_and_accepts() {
    let (_registry, pipeline) = setup();
    let hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::block("rejected").with_contexts(vec![
            ToolContext::text("why it was rejected").with_source("test"),
        ]))
    }));
    let blocked = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(blocked.text(), "rejected");
    assert_eq!(
        blocked.contexts(),
        [ToolContext::text("why it was rejected").with_source("test")]
    );
    drop(hook);
    let hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept().with_contexts(vec![ToolContext::text("fyi")]))
    }));
    let accepted = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(accepted.contexts(), [ToolContext::text("fyi")]);
    drop(hook);
    let _hook = pipeline.on_post_execute(post_hook(|_| {
        Ok(PostDecision::accept_content(vec![ContentBlock::text(
            "rewritten",
        )]))
    }));
    let rewritten = pipeline.execute(call("echo", json!({}))).await;
    assert!(!rewritten.is_error());
    assert_eq!(rewritten.text(), "rewritten");
}

#[tokio::test(flavor = "current_thread")]
async fn g11_a_failing_post_hook_is_an_error_result() {
    let (_registry, pipeline) = setup();
    let _hook = pipeline.on_post_execute(post_hook(|_| Err("post hook broke".into())));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        result.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: post hook broke"}], "error": {"message": "post hook broke"}})
    );
}
