//! Group M: `finalize_content` and final materialization.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_pipeline::PreDecision;
use tools_presentation::ContentBlock;
use tools_registry::{OutputDecl, PresentationMode, Registry, ToolDefinition};

use crate::support::{call, pre_hook};

fn finalized(
    name: &str,
    calls: Arc<Mutex<Vec<(String, bool)>>>,
    replace: Option<&'static str>,
) -> ToolDefinition {
    ToolDefinition::builder(name, "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("")) })
        .finalize_content(move |call, result| {
            calls
                .lock()
                .unwrap()
                .push((call.tool.to_string(), result.is_error));
            replace.map(|text| vec![ContentBlock::text(text)])
        })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn m01_the_finalizer_captured_at_creation_runs_even_after_disposal() {
    let registry = Registry::new();
    let calls = Arc::default();
    let registration = Arc::new(Mutex::new(Some(
        registry
            .register(finalized(
                "bounded",
                Arc::clone(&calls),
                Some("bounded failure"),
            ))
            .unwrap(),
    )));
    let pipeline = crate::support::checked(registry);
    let r = Arc::clone(&registration);
    pipeline
        .on_pre_execute(pre_hook(move |_| {
            drop(r.lock().unwrap().take());
            Some(Err(tools_registry::ToolError::custom(
                "POLICY_FAILED",
                "policy failed",
            )))
        }))
        .keep();
    let result = pipeline.execute(call("bounded", json!({}))).await;
    assert_eq!(
        result.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "bounded failure"}], "error": {"message": "policy failed", "info": {"code": "POLICY_FAILED"}}})
    );
    assert_eq!(
        calls.lock().unwrap().as_slice(),
        [("bounded".to_owned(), true)]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn m02_m03_none_keeps_the_content_and_a_panic_is_an_error_once() {
    let registry = Registry::new();
    let calls = Arc::new(Mutex::new(Vec::new()));
    registry
        .register(finalized("keeps", Arc::clone(&calls), None))
        .unwrap()
        .keep();
    let panics = Arc::new(Mutex::new(0));
    let p = Arc::clone(&panics);
    registry
        .register(
            ToolDefinition::builder("violates", "d")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(|_a, _c| async { Ok(json!("x")) })
                .finalize_content(move |_c, _r| {
                    *p.lock().unwrap() += 1;
                    panic!("finalizer violated its total contract")
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let pipeline = crate::support::checked(registry);
    let kept = pipeline.execute(call("keeps", json!({}))).await;
    assert_eq!(
        kept.to_json(),
        json!({"isError": false, "value": "", "content": [{"type": "text", "text": ""}]})
    );
    assert_eq!(calls.lock().unwrap().len(), 1);
    let violated = pipeline.execute(call("violates", json!({}))).await;
    assert!(violated.is_error());
    assert!(
        violated
            .text()
            .contains("finalizer violated its total contract"),
        "{}",
        violated.text()
    );
    assert_eq!(*panics.lock().unwrap(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn m05_no_finalizer_for_unknown_or_collapsed_calls_unless_precancelled() {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    let calls = Arc::new(Mutex::new(Vec::new()));
    registry
        .register(finalized("fin", Arc::clone(&calls), None))
        .unwrap()
        .keep();
    let pipeline = crate::support::checked(registry);
    let collapsed = pipeline.execute(call("fin", json!({}))).await;
    assert_eq!(
        collapsed.error_code(),
        Some(tools_pipeline::ErrorCode::UnknownTool)
    );
    assert!(
        collapsed
            .text()
            .contains("only `run_code` is callable directly"),
        "{}",
        collapsed.text()
    );
    assert!(calls.lock().unwrap().is_empty());
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let aborted = pipeline
        .execute(call("fin", json!({})).with_cancellation(token))
        .await;
    assert_eq!(
        aborted.error_code(),
        Some(tools_pipeline::ErrorCode::AbortedBeforeDispatch)
    );
    assert_eq!(calls.lock().unwrap().len(), 1);
    // A sub-call with a parent is exempt from the collapse.
    let nested = pipeline
        .execute(call("fin", json!({})).with_parent(tools_registry::ExecutionToken::mint()))
        .await;
    assert!(!nested.is_error());
    let _ = PreDecision::Allow;
}
