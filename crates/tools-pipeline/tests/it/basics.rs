//! Group F: execution basics and the output contract.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_json::JsonValue;
use tools_pipeline::{ErrorCode, Pipeline, ToolResult};
use tools_registry::{OutputDecl, Registry, ToolDefinition, ToolError};

use crate::support::{call, setup, t, tool_with};

#[tokio::test(flavor = "current_thread")]
async fn f01_a_call_returns_value_and_content_and_observers_see_the_same_result() {
    let (_registry, pipeline) = setup();
    let seen: Arc<Mutex<Vec<ToolResult>>> = Arc::default();
    let sink = Arc::clone(&seen);
    pipeline
        .on_result(move |_exec, result| sink.lock().unwrap().push(result.clone()))
        .keep();
    let result = pipeline.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        result.to_json(),
        json!({"isError": false, "value": "hi", "content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(seen.lock().unwrap().as_slice(), [result]);
}

fn with_meta(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name, "meta")
        .output(
            OutputDecl::text(json!({"type": "string"}))
                .with_presentation_meta(|_a, _v| Ok(json!({"card": true}))),
        )
        .body(|_a, _c| async { Ok(json!("ok")) })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn f02_f03_presentation_meta_only_for_top_level_calls() {
    let (registry, pipeline) = setup();
    registry.register(with_meta("meta")).unwrap().keep();
    let direct = pipeline.execute(call("meta", json!({}))).await;
    assert_eq!(
        direct.meta().map(|m| m.as_value().clone()),
        Some(json!({"card": true}))
    );
    let parent = direct.is_error();
    assert!(!parent);
    let nested = pipeline
        .execute(call("meta", json!({})).with_parent(tools_registry::ExecutionToken::mint()))
        .await;
    assert!(nested.meta().is_none());
    let plain = pipeline.execute(call("echo", json!({}))).await;
    assert!(plain.to_json().get("meta").is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn f04_invalid_and_lossy_values_are_invalid_tool_output() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("lossy", |_a, _c| async { Ok(json!(-0.0)) }))
        .unwrap()
        .keep();
    registry
        .register(tool_with("number", |_a, _c| async { Ok(json!(42)) }))
        .unwrap()
        .keep();
    let lossy = pipeline.execute(call("lossy", json!({}))).await;
    assert_eq!(lossy.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(
        lossy.text().contains("not lossless JSON"),
        "{}",
        lossy.text()
    );
    assert!(lossy.value().is_none());
    let number = pipeline.execute(call("number", json!({}))).await;
    assert_eq!(number.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(
        number.text().contains("value: must be a string"),
        "{}",
        number.text()
    );
    assert_eq!(
        number.text(),
        "Error: tool \"number\" returned invalid output: value: must be a string"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn f05_f06_failing_projections_are_invalid_tool_output() {
    let (registry, pipeline) = setup();
    let exploding = ToolDefinition::builder("render", "d")
        .output(OutputDecl::new(json!({"type": "string"}), |_a, _v| {
            Err(ToolError::new("renderer exploded"))
        }))
        .body(|_a, _c| async { Ok(json!("x")) })
        .build()
        .unwrap();
    let panicking_meta = ToolDefinition::builder("meta", "d")
        .output(
            OutputDecl::text(json!({"type": "string"}))
                .with_presentation_meta(|_a, _v| panic!("metadata exploded")),
        )
        .body(|_a, _c| async { Ok(json!("x")) })
        .build()
        .unwrap();
    let lossy_meta = ToolDefinition::builder("lossy_meta", "d")
        .output(
            OutputDecl::text(json!({"type": "string"}))
                .with_presentation_meta(|_a, _v| Ok(json!({"n": -0.0}))),
        )
        .body(|_a, _c| async { Ok(json!("x")) })
        .build()
        .unwrap();
    for def in [exploding, panicking_meta, lossy_meta] {
        registry.register(def).unwrap().keep();
    }
    let render = pipeline.execute(call("render", json!({}))).await;
    assert_eq!(render.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(render.text().contains("renderer exploded"));
    let meta = pipeline.execute(call("meta", json!({}))).await;
    assert!(meta.text().contains("metadata exploded"), "{}", meta.text());
    assert!(meta.value().is_none());
    let lossy = pipeline.execute(call("lossy_meta", json!({}))).await;
    assert_eq!(lossy.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(lossy.text().starts_with("Error:"));
}

#[tokio::test(flavor = "current_thread")]
async fn f07_f08_unknown_tools_and_body_errors() {
    let (registry, pipeline) = setup();
    let unknown = pipeline.execute(call("nope", json!({}))).await;
    assert_eq!(
        unknown.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: unknown tool \"nope\""}],
               "error": {"message": "unknown tool \"nope\"", "info": {"code": "UNKNOWN_TOOL"}}})
    );
    registry
        .register(tool_with("exploding", |_a, _c| async {
            Err(ToolError::new("exploded"))
        }))
        .unwrap()
        .keep();
    registry
        .register(tool_with("full", |_a, _c| async {
            Err(ToolError::custom("ENOSPC", "disk full"))
        }))
        .unwrap()
        .keep();
    let plain = pipeline.execute(call("exploding", json!({}))).await;
    assert_eq!(
        plain.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: exploded"}], "error": {"message": "exploded"}})
    );
    let coded = pipeline.execute(call("full", json!({}))).await;
    assert_eq!(
        coded.code().map(tools_registry::Code::as_str),
        Some("ENOSPC")
    );
    assert_eq!(coded.text(), "Error: disk full");
}

#[tokio::test(flavor = "current_thread")]
async fn f09_a_panicking_body_is_an_error_result() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("kaboom", |_a, _c| async {
            if true {
                panic!("kaboom");
            }
            Ok(Value::Null)
        }))
        .unwrap()
        .keep();
    registry
        .register(tool_with("opaque", |_a, _c| async {
            if true {
                std::panic::panic_any(42_u8);
            }
            Ok(Value::Null)
        }))
        .unwrap()
        .keep();
    let kaboom = pipeline.execute(call("kaboom", json!({}))).await;
    assert!(kaboom.is_error());
    assert_eq!(kaboom.text(), "Error: panicked: kaboom");
    let opaque = pipeline.execute(call("opaque", json!({}))).await;
    assert!(
        opaque.text().contains("a panic without a message"),
        "{}",
        opaque.text()
    );
    // The pipeline is still usable.
    assert_eq!(
        pipeline
            .execute(call("echo", json!({"text": "after"})))
            .await
            .text(),
        "after"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_pipeline_is_a_tower_service_that_never_fails() {
    use tower::ServiceExt;
    let (_registry, pipeline) = setup();
    let result: ToolResult = Pipeline::clone(&pipeline)
        .oneshot(call("echo", json!({"text": "svc"})))
        .await
        .unwrap();
    assert_eq!(result.text(), "svc");
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Pipeline>();
    assert_send_sync::<ToolResult>();
}

#[tokio::test(flavor = "current_thread")]
async fn raw_tools_receive_arguments_unvalidated_and_typed_tools_validate() {
    let registry = Registry::new();
    registry.register(crate::support::echo()).unwrap().keep();
    registry.register(t("raw")).unwrap().keep();
    let pipeline = crate::support::checked(registry);
    let raw = pipeline
        .execute(call("raw", json!({"anything": [1, 2]})))
        .await;
    assert_eq!(raw.text(), "ran:raw");
    let typed = pipeline.execute(call("echo", json!({"text": 5}))).await;
    assert_eq!(typed.error_code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        typed.text(),
        "Error: invalid arguments: text: must be a string"
    );
    let ok = pipeline.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(ok.value(), Some(&JsonValue::new(json!("x")).unwrap()));
}
