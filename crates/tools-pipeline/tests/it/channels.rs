//! A call's own channels: its progress sink and its approval service (`ToolCall::with_progress`,
//! `ToolCall::with_approval`), and foreign parameter schemas checked before the body.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_pipeline::{ApprovalOutcome, ApprovalRequest, ErrorCode, PreDecision};
use tools_registry::{OutputDecl, Progress, ToolDefinition};

use crate::support::{call, call_as, pre_hook, setup, tool_with};

fn reporting() -> ToolDefinition {
    tool_with("steps", |_args, ctx| async move {
        for step in 1..=3 {
            ctx.report_progress(Progress::new(f64::from(step)).with_total(3.0));
        }
        Ok(Value::String("done".into()))
    })
}

#[tokio::test(flavor = "current_thread")]
async fn progress_reaches_the_callers_sink_in_order() {
    let (registry, pipeline) = setup();
    registry.register(reporting()).unwrap().keep();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let result = pipeline
        .execute(
            call("steps", json!({})).with_progress(Arc::new(move |p: Progress| {
                sink.lock().unwrap().push(p);
            })),
        )
        .await;
    assert_eq!(result.text(), "done");
    let seen = seen.lock().unwrap();
    let steps: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    assert!(seen.iter().all(|p| p.total == Some(3.0)));
}

#[tokio::test(flavor = "current_thread")]
async fn progress_without_a_sink_is_dropped() {
    let (registry, pipeline) = setup();
    registry.register(reporting()).unwrap().keep();
    assert_eq!(
        pipeline.execute(call("steps", json!({}))).await.text(),
        "done"
    );
}

fn ask_everything(pipeline: &tools_pipeline::Pipeline) {
    pipeline
        .on_pre_execute(pre_hook(|_| {
            Some(Ok(PreDecision::Ask(Some("sure?".into()))))
        }))
        .keep();
}

#[tokio::test(flavor = "current_thread")]
async fn the_calls_approval_answers_in_place_of_the_pipelines() {
    let (registry, pipeline) = setup();
    ask_everything(&pipeline);
    pipeline.set_approval(Some(Arc::new(|_r: ApprovalRequest| async {
        Ok(ApprovalOutcome::Rejected)
    })));
    let agent = registry.scope();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&asked);
    let own = Arc::new(move |r: ApprovalRequest| {
        log.lock()
            .unwrap()
            .push(format!("{}:{:?}", r.tool, r.reason));
        async { Ok(ApprovalOutcome::AllowedOnce) }
    });
    let allowed = pipeline
        .execute(call_as("echo", json!({"text": "hi"}), &agent).with_approval(own))
        .await;
    assert_eq!(allowed.text(), "hi");
    assert_eq!(*asked.lock().unwrap(), ["echo:Some(\"sure?\")"]);
    // Without its own service the call is asked through the pipeline's, which refuses.
    let refused = pipeline
        .execute(call_as("echo", json!({"text": "hi"}), &agent))
        .await;
    assert_eq!(refused.error_code(), Some(ErrorCode::ApprovalDenied));
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_by_the_calls_approval_is_approval_denied() {
    let (registry, pipeline) = setup();
    ask_everything(&pipeline);
    let agent = registry.scope();
    for outcome in [
        ApprovalOutcome::Rejected,
        ApprovalOutcome::Cancelled,
        ApprovalOutcome::Unavailable,
    ] {
        let own = Arc::new(move |_r: ApprovalRequest| async move { Ok(outcome) });
        let result = pipeline
            .execute(call_as("echo", json!({}), &agent).with_approval(own))
            .await;
        assert_eq!(
            result.error_code(),
            Some(ErrorCode::ApprovalDenied),
            "{outcome:?}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn foreign_parameters_are_validated_before_the_body() {
    let (registry, pipeline) = setup();
    let ran: Arc<Mutex<u32>> = Arc::default();
    let count = Arc::clone(&ran);
    let tool = ToolDefinition::builder("convert", "foreign schema")
        .foreign_parameters(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "default": 5},
                "when": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            },
            "required": ["n"]
        }))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            *count.lock().unwrap() += 1;
            async { Ok(json!("ok")) }
        })
        .build()
        .unwrap();
    assert!(!tool.is_fully_validated());
    registry.register(tool).unwrap().keep();
    let bad = pipeline
        .execute(call("convert", json!({"n": 0, "when": 3})))
        .await;
    assert_eq!(bad.error_code(), Some(ErrorCode::InvalidArgs));
    assert!(bad.text().contains("n"), "{}", bad.text());
    assert_eq!(*ran.lock().unwrap(), 0);
    // `anyOf` is not enforced: any value passes there; what the subset enforces is.
    let good = pipeline
        .execute(call("convert", json!({"n": 2, "when": 3})))
        .await;
    assert_eq!(good.text(), "ok");
    assert_eq!(*ran.lock().unwrap(), 1);
}
