//! Group I: pre-execute decisions and approval.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{
    ApprovalOutcome, ApprovalRequest, HookOptions, PostDecision, PreDecision, ToolError,
};

use crate::support::{Log, call, call_as, post_hook, pre_hook, setup, t};

#[tokio::test(flavor = "current_thread")]
async fn i01_a_denial_still_reaches_post_execute() {
    let (_registry, pipeline) = setup();
    pipeline
        .on_pre_execute(pre_hook(|_| {
            Some(Ok(PreDecision::Deny("denied by policy".into())))
        }))
        .keep();
    let seen = Log::default();
    let s = seen.clone();
    pipeline
        .on_post_execute(post_hook(move |r| {
            s.push(format!("post saw {}", r.result().text()));
            Ok(PostDecision::accept())
        }))
        .keep();
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(result.text(), "Error: denied by policy");
    assert_eq!(seen.entries(), ["post saw Error: denied by policy"]);
}

#[tokio::test(flavor = "current_thread")]
async fn i02_ask_without_an_approval_service_is_a_denial() {
    let (_registry, pipeline) = setup();
    let hook = pipeline.on_pre_execute(pre_hook(|_| {
        Some(Ok(PreDecision::Ask(Some("needs approval".into()))))
    }));
    assert_eq!(
        pipeline.execute(call("echo", json!({}))).await.text(),
        "Error: needs approval"
    );
    drop(hook);
    let _hook = pipeline.on_pre_execute(pre_hook(|_| Some(Ok(PreDecision::Ask(None)))));
    assert_eq!(
        pipeline.execute(call("echo", json!({}))).await.text(),
        "Error: tool \"echo\" requires approval (no approval service is installed)"
    );
}

fn approval(
    outcome: ApprovalOutcome,
    requests: Arc<Mutex<Vec<ApprovalRequest>>>,
) -> Arc<dyn tools_pipeline::Approval> {
    Arc::new(move |request: ApprovalRequest| {
        requests.lock().unwrap().push(request);
        async move { Ok::<_, ToolError>(outcome) }
    })
}

#[tokio::test(flavor = "current_thread")]
async fn i03_i04_the_approval_service_answers_ask() {
    let (registry, pipeline) = setup();
    let agent = registry.scope();
    pipeline
        .on_pre_execute(pre_hook(|_| {
            Some(Ok(PreDecision::Ask(Some("hook wants a human".into()))))
        }))
        .keep();
    let requests = Arc::new(Mutex::new(Vec::new()));
    pipeline.set_approval(Some(approval(
        ApprovalOutcome::AllowedOnce,
        Arc::clone(&requests),
    )));
    let caller = CancellationToken::new();
    let allowed = pipeline
        .execute(call_as("echo", json!({"text": "hi"}), &agent).with_cancellation(caller.clone()))
        .await;
    assert_eq!(allowed.text(), "hi");
    {
        let requests = requests.lock().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].agent, agent);
        assert_eq!(requests[0].tool.as_str(), "echo");
        assert_eq!(&*requests[0].call_id, "c1");
        assert_eq!(requests[0].reason.as_deref(), Some("hook wants a human"));
        caller.cancel();
        assert!(
            requests[0].cancel.is_cancelled(),
            "the approval sees the caller's token"
        );
    }
    for (outcome, text) in [
        (
            ApprovalOutcome::Rejected,
            "Error: the user rejected tool \"echo\"",
        ),
        (
            ApprovalOutcome::Cancelled,
            "Error: approval for tool \"echo\" was cancelled",
        ),
        (
            ApprovalOutcome::Unavailable,
            "Error: tool \"echo\" requires approval, but no approval channel is available",
        ),
    ] {
        pipeline.set_approval(Some(approval(outcome, Arc::default())));
        assert_eq!(
            pipeline
                .execute(call_as("echo", json!({}), &agent))
                .await
                .text(),
            text
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn i05_an_approval_needs_an_agent() {
    let (_registry, pipeline) = setup();
    pipeline
        .on_pre_execute(pre_hook(|_| Some(Ok(PreDecision::Ask(None)))))
        .keep();
    let requests = Arc::new(Mutex::new(Vec::new()));
    pipeline.set_approval(Some(approval(
        ApprovalOutcome::AllowedOnce,
        Arc::clone(&requests),
    )));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        result.text(),
        "Error: tool \"echo\" requires approval, but the call has no agent to route it through"
    );
    assert!(requests.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn i06_a_cancellation_during_approval_aborts_before_dispatch() {
    let (registry, pipeline) = setup();
    let agent = registry.scope();
    pipeline
        .on_pre_execute(pre_hook(|_| Some(Ok(PreDecision::Ask(None)))))
        .keep();
    let caller = CancellationToken::new();
    let c = caller.clone();
    pipeline.set_approval(Some(Arc::new(move |_request: ApprovalRequest| {
        // The caller cancels while the question is open; the answerer then allows.
        c.cancel();
        async { Ok::<_, ToolError>(ApprovalOutcome::AllowedOnce) }
    })));
    let result = pipeline
        .execute(call_as("echo", json!({}), &agent).with_cancellation(caller))
        .await;
    assert_eq!(
        result.error_code(),
        Some(tools_pipeline::ErrorCode::AbortedBeforeDispatch)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn i08_failing_pre_hooks_are_final_results() {
    let (_registry, pipeline) = setup();
    let post = Log::default();
    let p = post.clone();
    pipeline
        .on_post_execute(post_hook(move |_| {
            p.push("post");
            Ok(PostDecision::accept())
        }))
        .keep();
    let hook = pipeline.on_pre_execute(pre_hook(|_| Some(Err("permission hook broke".into()))));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        result.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: permission hook broke"}], "error": {"message": "permission hook broke"}})
    );
    drop(hook);
    let _hook = pipeline.on_pre_execute(pre_hook(|_| {
        Some(Err(ToolError::custom("DENIED", "denied")))
    }));
    let coded = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        coded.code().map(tools_pipeline::Code::as_str),
        Some("DENIED")
    );
    assert!(
        post.entries().is_empty(),
        "pre-execute failures skip post-execute"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn i09_scoped_pre_hooks_see_their_scope_only() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    let (a, b) = (registry.scope(), registry.scope());
    let seen = Log::default();
    let s = seen.clone();
    pipeline
        .on_pre_execute_with(
            HookOptions::new().scope(&a),
            pre_hook(move |r| {
                s.push(format!("{:?}", r.execution().agent().map(|a| a.key())));
                Some(Ok(PreDecision::Deny("scoped veto".into())))
            }),
        )
        .keep();
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &a)).await.text(),
        "Error: scoped veto"
    );
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &b)).await.text(),
        "ran:t"
    );
    assert_eq!(pipeline.execute(call("t", json!({}))).await.text(), "ran:t");
    let child = registry.child_scope(&a);
    assert_eq!(
        pipeline
            .execute(call_as("t", json!({}), &child))
            .await
            .text(),
        "Error: scoped veto"
    );
    assert_eq!(seen.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn guards_deny_after_pre_execute_and_a_panicking_guard_is_final() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    let global = registry.guard(|_: &tools_registry::CallInfo| Some("global denial".to_owned()));
    assert_eq!(
        pipeline.execute(call("t", json!({}))).await.text(),
        "Error: global denial"
    );
    drop(global);
    let _panicking =
        registry.guard(|_: &tools_registry::CallInfo| -> Option<String> { panic!("guard bug") });
    let result = pipeline.execute(call("t", json!({}))).await;
    assert_eq!(result.text(), "Error: panicked: guard bug");
    // A pre-execute denial means guards are not consulted.
    let calls = Log::default();
    let c = calls.clone();
    let _counting = registry.guard(move |_: &tools_registry::CallInfo| {
        c.push("guard");
        None
    });
    pipeline
        .on_pre_execute(pre_hook(|_| Some(Ok(PreDecision::Deny("pre".into())))))
        .keep();
    let _ = pipeline.execute(call("t", json!({}))).await;
    assert!(calls.entries().is_empty());
}
