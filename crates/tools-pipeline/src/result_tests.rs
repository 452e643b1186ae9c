//! `ToolResult`: a text output's content made on first read, and equality over it.

use serde_json::json;
use tools_json::JsonValue;
use tools_presentation::ContentBlock;
use tools_registry::{ExecutionToken, OutputDecl, Registry, ToolDefinition};

use super::ToolResult;
use crate::{Pipeline, ToolCall};

/// A success created by the pipeline whose content is the value's text, not made yet.
fn success(value: serde_json::Value) -> ToolResult {
    let value = JsonValue::new(value).unwrap_or_else(|_| JsonValue::null());
    ToolResult::created_success(value, false, None, None, ExecutionToken::mint())
}

async fn run(output: OutputDecl, value: serde_json::Value) -> ToolResult {
    let registry = Registry::new();
    let pipeline = Pipeline::new(registry.clone());
    let tool = ToolDefinition::builder("t", "returns a fixed value")
        .output(output)
        .body(move |_args, _ctx| {
            let value = value.clone();
            async move { Ok(value) }
        })
        .build();
    let Ok(tool) = tool else {
        return ToolResult::failure(tools_registry::ToolError::new("not built"));
    };
    if let Ok(registered) = registry.register(tool) {
        registered.keep();
    }
    match ToolCall::new("c1", "t", json!({})) {
        Ok(call) => pipeline.execute(call).await,
        Err(_) => ToolResult::failure(tools_registry::ToolError::new("bad call")),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_text_output_is_rendered_when_first_read() {
    let result = run(
        OutputDecl::text(json!({"type": "object"})),
        json!({"a": [1]}),
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    // Published without its content; asking for a block type does not render it.
    assert!(result.rendered_content().is_none());
    assert!(result.has_content_of_type("text"));
    assert!(!result.has_content_of_type("image"));
    assert!(result.rendered_content().is_none());
    // Read: the value's compact text, the same on every read and in every clone.
    let copy = result.clone();
    assert_eq!(result.content(), [ContentBlock::text(r#"{"a":[1]}"#)]);
    assert!(copy.rendered_content().is_some());
    assert_eq!(copy.text(), r#"{"a":[1]}"#);
    assert_eq!(
        result.to_json()["content"],
        json!([{"type": "text", "text": "{\"a\":[1]}"}])
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_custom_render_is_rendered_and_checked_at_once() {
    let output = OutputDecl::new(json!({"type": "string"}), |_, _| {
        Ok(vec![ContentBlock::text("custom")])
    });
    let result = run(output, json!("v")).await;
    assert_eq!(
        result.rendered_content(),
        Some(&[ContentBlock::text("custom")][..])
    );
    let failing = OutputDecl::new(json!({"type": "string"}), |_, _| {
        Err(tools_registry::ToolError::new("no"))
    });
    let result = run(failing, json!("v")).await;
    assert!(result.is_error());
    assert!(
        result.text().contains("output.render failed"),
        "{}",
        result.text()
    );
}

#[test]
fn equality_reads_the_content_whether_rendered_or_not() {
    let lazy = success(json!("ok"));
    // The same outcome and provenance, with its content rendered as `text`.
    let rendered = |text: &str| {
        let content = super::Content::Blocks(vec![ContentBlock::text(text)]);
        let (outcome, token) = (lazy.0.outcome.clone(), lazy.0.provenance);
        ToolResult::build(outcome, content, None, Vec::new(), token)
    };
    assert_eq!(lazy, rendered("ok"));
    assert_ne!(lazy, rendered("other"));
    assert!(lazy.rendered_content().is_some());
    // A number renders as its JSON text.
    assert_eq!(success(json!(12)).text(), "12");
    // Rebuilt results keep the lazy content and its outcome.
    let with_meta = success(json!("m")).with_meta(JsonValue::null());
    assert_eq!(with_meta.content(), [ContentBlock::text("m")]);
}
