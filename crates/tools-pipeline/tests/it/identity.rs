//! Group K: arguments, identity, snapshots.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{HookOptions, PreDecision, ToolCall};
use tools_registry::{CallInfo, ExecutionToken};

use crate::support::{Log, call, call_as, setup, t, tool_with};

#[tokio::test(flavor = "current_thread")]
async fn k01_tokens_are_per_execution_and_arguments_are_copies() {
    let (registry, pipeline) = setup();
    registry.register(t("danger")).unwrap().keep();
    let got = Arc::new(Mutex::new(None));
    let g = Arc::clone(&got);
    registry
        .register(tool_with("safe", move |args, ctx| {
            *g.lock().unwrap() = Some((args.as_value().clone(), ctx.call().token));
            async { Ok(json!("safe")) }
        }))
        .unwrap()
        .keep();
    let a = registry.scope();
    a.guard(|call: &CallInfo| (call.tool.as_str() == "danger").then(|| "danger".to_owned()))
        .unwrap()
        .keep();
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let t1 = Arc::clone(&tokens);
    pipeline
        .on_pre_execute(crate::support::pre_hook(move |r| {
            t1.lock().unwrap().push(r.execution().token());
            None
        }))
        .keep();
    let scoped = Log::default();
    let s = scoped.clone();
    pipeline
        .on_result_with(HookOptions::new().scope(&a), move |_e, _r| s.push("scoped"))
        .keep();

    let denied = pipeline.execute(call_as("danger", json!({}), &a)).await;
    assert_eq!(denied.text(), "Error: danger");
    let input = json!({"source": true});
    let call = call_as("safe", input.clone(), &a);
    let safe = pipeline.execute(call.clone()).await;
    assert_eq!(safe.text(), "safe");
    assert_eq!(
        call.arguments(),
        Some(&input),
        "the caller's call is untouched"
    );
    let (body_args, body_token) = got.lock().unwrap().clone().unwrap();
    assert_eq!(body_args, input);
    let tokens = tokens.lock().unwrap().clone();
    assert_eq!(tokens.len(), 2);
    assert_ne!(tokens[0], tokens[1]);
    assert_eq!(tokens[1], body_token, "all phases share one token");
    assert_eq!(scoped.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn k02_lossy_arguments_reach_observers_only() {
    let (_registry, pipeline) = setup();
    let registry = pipeline.registry().clone();
    let a = registry.scope();
    let pre = Log::default();
    let p = pre.clone();
    pipeline
        .on_pre_execute(crate::support::pre_hook(move |_| {
            p.push("pre");
            None
        }))
        .keep();
    let parent = ExecutionToken::mint();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    pipeline
        .on_result_with(HookOptions::new().scope(&a), move |exec, _r| {
            s.lock().unwrap().push((
                exec.arguments_ok(),
                exec.parent(),
                exec.arguments().is_null(),
            ));
        })
        .keep();
    let global = Log::default();
    let gl = global.clone();
    pipeline.on_result(move |_e, _r| gl.push("global")).keep();
    let signal = CancellationToken::new();
    let with_agent = pipeline
        .execute(
            call_as("echo", json!({"x": [-0.0]}), &a)
                .with_parent(parent)
                .with_cancellation(signal),
        )
        .await;
    assert!(with_agent.text().contains("losslessly JSON-serializable"));
    let without = pipeline.execute(call("echo", json!({"x": -0.0}))).await;
    assert!(without.is_error());
    assert!(pre.entries().is_empty());
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [(false, Some(parent), true)]
    );
    assert_eq!(global.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn k03_root_call_ids() {
    let (_registry, pipeline) = setup();
    let roots = Arc::new(Mutex::new(Vec::new()));
    let r = Arc::clone(&roots);
    pipeline
        .on_result(move |exec, _| {
            r.lock()
                .unwrap()
                .push((exec.call_id().to_owned(), exec.root_call_id().to_owned()))
        })
        .keep();
    let _ = pipeline
        .execute(ToolCall::new("c1", "echo", json!({})).unwrap())
        .await;
    let _ = pipeline
        .execute(
            ToolCall::new("c2", "echo", json!({}))
                .unwrap()
                .with_root_call_id("R"),
        )
        .await;
    assert_eq!(
        roots.lock().unwrap().as_slice(),
        [
            ("c1".to_owned(), "c1".to_owned()),
            ("c2".to_owned(), "R".to_owned())
        ]
    );
    let _ = PreDecision::Allow;
}

#[tokio::test(flavor = "current_thread")]
async fn empty_names_are_refused_when_a_call_is_built() {
    assert_eq!(
        ToolCall::new("c", "", json!({})).unwrap_err(),
        tools_pipeline::Error::EmptyName
    );
}

#[tokio::test(flavor = "current_thread")]
async fn classify_snapshots_the_arguments_once_and_prepare_reports_a_refusal_unchanged() {
    use tools_registry::ExecutionMode;
    let (_registry, pipeline) = setup();

    // Lossless arguments: the snapshot replaces the wire form and the call runs on it.
    let mut ok = call("echo", json!({"x": 1.0}));
    let mode = pipeline.classify(&mut ok);
    assert_eq!(mode, pipeline.execution_mode(&ok));
    assert!(ok.arguments().is_none());
    assert_eq!(ok.json_arguments().unwrap().to_string(), r#"{"x":1}"#);
    // Classifying again neither converts nor changes anything.
    assert_eq!(pipeline.classify(&mut ok), mode);
    let result = pipeline.execute(ok).await;
    assert!(!result.is_error(), "{}", result.text());

    // Refused arguments: exclusive, and the same error result as an unclassified call.
    let mut refused = call("echo", json!({"x": [-0.0]}));
    assert_eq!(pipeline.classify(&mut refused), ExecutionMode::Exclusive);
    assert_eq!(pipeline.execution_mode(&refused), ExecutionMode::Exclusive);
    assert!(refused.arguments().is_none() && refused.json_arguments().is_none());
    let classified = pipeline.execute(refused).await;
    let plain = pipeline.execute(call("echo", json!({"x": [-0.0]}))).await;
    assert!(classified.is_error());
    assert_eq!(classified.text(), plain.text());
    assert!(
        classified.text().contains("arguments.x[0]"),
        "{}",
        classified.text()
    );
}
