//! Exposure through the whole pipeline (docs/decisions.md, entry 35): a deferred tool that
//! was not loaded, a hidden tool, a code-only and a native-only one, each refused with
//! `UNKNOWN_TOOL` where its exposure says, before any hook runs; the host reaches them all.

use serde_json::json;
use tools_pipeline::ToolCall;
use tools_registry::{ErrorCode, ExecutionToken, Exposure, ToolDefinition};

use crate::support::{Log, call, call_as, pre_hook, setup, t_builder};

fn exposed(name: &str, exposure: Exposure) -> ToolDefinition {
    t_builder(name).exposure(exposure).build().unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn exposures_refuse_model_calls_and_admit_the_host() {
    let (registry, pipeline) = setup();
    for (name, exposure) in [
        ("deferred", Exposure::Deferred),
        ("hidden", Exposure::Hidden),
        ("code_only", Exposure::CodeOnly),
        ("native_only", Exposure::NativeOnly),
    ] {
        registry.register(exposed(name, exposure)).unwrap().keep();
    }
    let hooks = Log::default();
    let seen = hooks.clone();
    pipeline
        .on_pre_execute(pre_hook(move |r| {
            seen.push(r.execution().name().to_string());
            None
        }))
        .keep();

    let refused = pipeline.execute(call("deferred", json!({}))).await;
    assert_eq!(refused.error_code(), Some(ErrorCode::UnknownTool));
    assert!(
        refused.text().contains("search_tools"),
        "{}",
        refused.text()
    );
    for name in ["hidden", "code_only"] {
        let refused = pipeline.execute(call(name, json!({}))).await;
        assert_eq!(refused.error_code(), Some(ErrorCode::UnknownTool), "{name}");
    }
    assert_eq!(
        pipeline
            .execute(call("native_only", json!({})))
            .await
            .text(),
        "ran:native_only"
    );
    // A run_code sub-call: native-only and hidden refused, deferred and code-only reached.
    let sub = |name: &str| {
        ToolCall::new("sub", name, json!({}))
            .unwrap()
            .with_parent(ExecutionToken::mint())
    };
    for (name, ran) in [
        ("deferred", true),
        ("code_only", true),
        ("native_only", false),
        ("hidden", false),
    ] {
        let result = pipeline.execute(sub(name)).await;
        assert_eq!(
            result.error_code().is_none(),
            ran,
            "{name}: {}",
            result.text()
        );
    }
    // The host reaches every one.
    for name in ["deferred", "hidden", "code_only", "native_only"] {
        let result = pipeline.execute(call(name, json!({})).from_host()).await;
        assert_eq!(result.text(), format!("ran:{name}"));
    }
    // Refused calls never reached a hook.
    assert_eq!(
        hooks.entries(),
        [
            "native_only",
            "deferred",
            "code_only",
            "deferred",
            "hidden",
            "code_only",
            "native_only"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn loading_in_a_scope_admits_its_model_calls_only() {
    let (registry, pipeline) = setup();
    registry
        .register(exposed("deferred", Exposure::Deferred))
        .unwrap()
        .keep();
    let (a, b) = (registry.scope(), registry.scope());
    a.load(["deferred"]).unwrap();
    assert_eq!(
        pipeline
            .execute(call_as("deferred", json!({}), &a))
            .await
            .text(),
        "ran:deferred"
    );
    let other = pipeline.execute(call_as("deferred", json!({}), &b)).await;
    assert_eq!(other.error_code(), Some(ErrorCode::UnknownTool));
    a.unload(["deferred"]);
    let unloaded = pipeline.execute(call_as("deferred", json!({}), &a)).await;
    assert_eq!(unloaded.error_code(), Some(ErrorCode::UnknownTool));
}
