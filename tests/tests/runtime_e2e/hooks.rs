//! Pre- and post-execute hooks and an observer over a batch.

use super::*;

// ---------------------------------------------------------------------------------------
// Hooks and observers
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread")]
async fn pre_and_post_hooks_and_an_observer_see_every_call_of_a_batch() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let bodies = Log::default();
    let b = bodies.clone();
    runtime
        .register(text_tool("echo", true, move |args, _ctx| {
            let text = args.get("text").cloned().unwrap_or(json!(""));
            b.push(text.as_str().unwrap_or_default());
            async move { Ok(text) }
        }))
        .unwrap()
        .keep();

    // Pre-execute: refuse a word (the body never runs).
    let deny = runtime.on_pre_execute(from_fn(|request: PreRequest, next: PreNext| async move {
        if request.execution().arguments().get("text") == Some(&json!("forbidden")) {
            return Ok(PreDecision::Deny("policy: forbidden word".into()));
        }
        next.run(request).await
    }));
    // A pre-execute hook scoped to one agent.
    let agent_a = runtime.scope();
    let agent_b = runtime.scope();
    let scoped = Log::default();
    let s = scoped.clone();
    runtime
        .on_pre_execute_with(
            HookOptions::new().scope(&agent_a),
            from_fn(move |request: PreRequest, next: PreNext| {
                s.push(request.execution().call_id());
                async move { next.run(request).await }
            }),
        )
        .keep();
    // Post-execute: upper-case successful content and add a context; log every call.
    let posts = Log::default();
    let p = posts.clone();
    runtime
        .on_post_execute(from_fn(move |request: PostRequest, next: PostNext| {
            p.push(request.execution().call_id());
            async move {
                if request.result().is_error() {
                    return next.run(request).await;
                }
                let upper = request.result().text().to_uppercase();
                Ok(
                    PostDecision::accept_content(vec![ContentBlock::text(upper)])
                        .with_contexts(vec![ToolContext::text("checked by post hook")]),
                )
            }
        }))
        .keep();
    // The observer sees the very results the caller gets, in the model's order.
    let observed: Arc<Mutex<Vec<(String, ToolResult)>>> = Arc::default();
    let o = Arc::clone(&observed);
    runtime
        .on_result(move |exec, result| {
            o.lock()
                .unwrap()
                .push((exec.call_id().to_owned(), result.clone()));
        })
        .keep();

    let calls = vec![
        call("c1", "echo", json!({"text": "hello"})).with_agent(agent_a.clone()),
        call("c2", "echo", json!({"text": "forbidden"})).with_agent(agent_b.clone()),
        call("c3", "echo", json!({"text": "world"})).with_agent(agent_b.clone()),
    ];
    let results = runtime.run_batch(calls, CancellationToken::new()).await;
    assert_eq!(
        texts(&results),
        ["HELLO", "Error: policy: forbidden word", "WORLD"]
    );
    // Content was replaced, the value was not.
    assert_eq!(
        results[0].value().map(|v| v.as_value().clone()),
        Some(json!("hello"))
    );
    assert_eq!(
        results[0].contexts(),
        [ToolContext::text("checked by post hook")]
    );
    assert!(results[1].contexts().is_empty());
    assert_eq!(bodies.entries(), ["hello", "world"]);
    assert_eq!(
        scoped.entries(),
        ["c1"],
        "the scoped hook sees agent A only"
    );
    assert_eq!(
        posts.entries(),
        ["c1", "c2", "c3"],
        "denials are post-executed"
    );
    let observed = observed.lock().unwrap().clone();
    let ids: Vec<&str> = observed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    for ((_, seen), returned) in observed.iter().zip(&results) {
        assert_eq!(seen, returned);
    }

    // Dropping the deny hook's handle removes it for later calls.
    drop(deny);
    let allowed = runtime
        .execute(call("c4", "echo", json!({"text": "forbidden"})))
        .await;
    assert_eq!(allowed.text(), "FORBIDDEN");
    assert_eq!(checker.published(), 4);
    checker.assert_clean();
}
