//! Group D, evaluation side: guards run after pre-execute, are monotonic, and follow the
//! global → chain (farthest first) order.

use serde_json::json;
use tools_pipeline::{HookOptions, PostDecision, PreDecision, Prepared};
use tools_registry::CallInfo;

use crate::support::{Log, call, call_as, post_hook, pre_hook, setup, t};

#[tokio::test(flavor = "current_thread")]
async fn d01_scoped_guards_deny_even_when_pre_execute_allows() {
    let (registry, pipeline) = setup();
    let body = Log::default();
    let b = body.clone();
    registry
        .register(crate::support::tool_with("t", move |args, _c| {
            b.push("body");
            assert!(args.is_object());
            async { Ok(json!("ran:t")) }
        }))
        .unwrap()
        .keep();
    let (a, other) = (registry.scope(), registry.scope());
    let deny = |_: &CallInfo| Some("terminal policy".to_owned());
    let first = a.guard(deny).unwrap();
    a.guard(deny).unwrap().keep();
    pipeline
        .on_pre_execute_with(
            HookOptions::new().scope(&a).prepend(),
            pre_hook(|_| Some(Ok(PreDecision::Allow))),
        )
        .keep();
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &a)).await.text(),
        "Error: terminal policy"
    );
    assert_eq!(
        pipeline
            .execute(call_as("t", json!({}), &other))
            .await
            .text(),
        "ran:t"
    );
    assert_eq!(body.entries().len(), 1);
    drop(first);
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &a)).await.text(),
        "Error: terminal policy"
    );
    a.dispose();
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &a)).await.text(),
        "ran:t"
    );
    assert_eq!(body.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn d02_d05_the_first_reason_in_order_denies() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    registry.guard(|_: &CallInfo| None).keep();
    let global = registry.guard(|_: &CallInfo| Some("global denial".to_owned()));
    assert_eq!(
        pipeline.execute(call("t", json!({}))).await.text(),
        "Error: global denial"
    );
    let p = registry.scope();
    let c = registry.child_scope(&p);
    p.guard(|_: &CallInfo| Some("p".to_owned())).unwrap().keep();
    c.guard(|_: &CallInfo| Some("c".to_owned())).unwrap().keep();
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &c)).await.text(),
        "Error: global denial"
    );
    drop(global);
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &c)).await.text(),
        "Error: p"
    );
    assert_eq!(
        pipeline.execute(call_as("t", json!({}), &p)).await.text(),
        "Error: p"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn d06_guard_denials_reach_post_execute_and_throwing_guards_do_not() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    let post = Log::default();
    let p = post.clone();
    pipeline
        .on_post_execute(post_hook(move |r| {
            p.push(r.result().text());
            Ok(PostDecision::accept())
        }))
        .keep();
    let results = Log::default();
    let r = results.clone();
    pipeline.on_result(move |_e, _r| r.push("result")).keep();
    let denial = registry.guard(|_: &CallInfo| Some("guarded".to_owned()));
    assert_eq!(
        pipeline.execute(call("t", json!({}))).await.text(),
        "Error: guarded"
    );
    assert_eq!(post.entries(), ["Error: guarded"]);
    drop(denial);
    let _throws = registry.guard(|_: &CallInfo| -> Option<String> { panic!("guard broke") });
    let thrown = pipeline.execute(call("t", json!({}))).await;
    assert_eq!(thrown.text(), "Error: panicked: guard broke");
    assert_eq!(
        post.entries().len(),
        1,
        "a throwing guard skips post-execute"
    );
    assert_eq!(results.entries().len(), 2, "one publication per call");
}

#[tokio::test(flavor = "current_thread")]
async fn guards_of_the_view_apply_to_a_name_it_does_not_have_and_are_the_calls_snapshot() {
    let (registry, pipeline) = setup();
    registry.register(t("t")).unwrap().keep();
    // Without a guard an unknown name is UNKNOWN_TOOL; with one, the guard's reason wins,
    // as it does for a known tool.
    assert!(
        pipeline
            .execute(call("missing", json!({})))
            .await
            .text()
            .contains("unknown tool")
    );
    let global = registry.guard(|_: &CallInfo| Some("global denial".to_owned()));
    for name in ["missing", "t"] {
        assert_eq!(
            pipeline.execute(call(name, json!({}))).await.text(),
            "Error: global denial"
        );
    }
    // A call decided before the guard went away still runs the guards of its view.
    let decided = pipeline.decide(call("t", json!({}))).await;
    drop(global);
    let Prepared::Settled(pending) = pipeline.resume(decided, None).await else {
        panic!("the guard of the call's view did not deny it");
    };
    assert_eq!(
        pipeline.complete(pending).await.text(),
        "Error: global denial"
    );
    assert_eq!(pipeline.execute(call("t", json!({}))).await.text(), "ran:t");
}
