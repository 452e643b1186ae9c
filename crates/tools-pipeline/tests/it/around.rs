//! Group H: around-dispatch wrappers.

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_pipeline::{
    DispatchNext, DispatchRequest, ErrorCode, PostDecision, PostNext, PostRequest, PreDecision,
    PreNext, PreRequest, ToolContext, ToolResult, from_fn,
};
use tools_registry::{OutputDecl, ToolDefinition, ToolError};

use crate::support::{Log, call, post_hook, setup, short_circuit, tool_with};

#[tokio::test(flavor = "current_thread")]
async fn h01_the_stages_run_in_order() {
    let (registry, pipeline) = setup();
    let log = Log::default();
    let body_log = log.clone();
    registry
        .register(tool_with("traced", move |args, _c| {
            body_log.push("dispatch");
            async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) }
        }))
        .unwrap()
        .keep();
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    pipeline
        .on_pre_execute(from_fn(move |r: PreRequest, next: PreNext| {
            let log = l1.clone();
            async move {
                log.push("pre:before");
                let d = next.run(r).await;
                log.push("pre:after");
                d
            }
        }))
        .keep();
    pipeline
        .on_execute(from_fn(move |r: DispatchRequest, next: DispatchNext| {
            let log = l2.clone();
            async move {
                log.push("execute:before");
                let out = next.run(r).await;
                log.push("execute:after");
                out
            }
        }))
        .keep();
    pipeline
        .on_post_execute(from_fn(move |r: PostRequest, next: PostNext| {
            let log = l3.clone();
            async move {
                log.push("post:before");
                let d = next.run(r).await;
                log.push("post:after");
                d
            }
        }))
        .keep();
    let observed = log.clone();
    pipeline
        .on_result(move |_e, _r| observed.push("result"))
        .keep();
    let result = pipeline
        .execute(call("traced", json!({"text": "hi"})))
        .await;
    assert_eq!(result.text(), "hi");
    assert_eq!(
        log.entries(),
        [
            "pre:before",
            "pre:after",
            "execute:before",
            "dispatch",
            "execute:after",
            "post:before",
            "post:after",
            "result"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn h02_a_denial_never_reaches_the_wrappers() {
    let (_registry, pipeline) = setup();
    let log = Log::default();
    let l = log.clone();
    pipeline
        .on_pre_execute(crate::support::pre_hook(|_| {
            Some(Ok(PreDecision::Deny("nope".into())))
        }))
        .keep();
    pipeline
        .on_execute(from_fn(move |r: DispatchRequest, next: DispatchNext| {
            let log = l.clone();
            async move {
                log.push("execute");
                next.run(r).await
            }
        }))
        .keep();
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(result.text(), "Error: nope");
    assert!(log.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn h03_a_body_failure_reaches_the_wrapper_as_a_result() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("boom", |_a, _c| async {
            Err(ToolError::custom("BOOM", "kaboom"))
        }))
        .unwrap()
        .keep();
    let log = Log::default();
    let l = log.clone();
    pipeline
        .on_execute(from_fn(move |r: DispatchRequest, next: DispatchNext| {
            let log = l.clone();
            async move {
                let out = next.run(r).await?;
                log.push(format!("wrapper saw error={}", out.is_error()));
                Ok(out)
            }
        }))
        .keep();
    let result = pipeline.execute(call("boom", json!({}))).await;
    assert_eq!(result.text(), "Error: kaboom");
    assert_eq!(log.entries(), ["wrapper saw error=true"]);
}

#[tokio::test(flavor = "current_thread")]
async fn h04_h11_authored_successes_are_rerendered_and_cannot_conclude() {
    let (registry, pipeline) = setup();
    let ran = Log::default();
    let r = ran.clone();
    registry
        .register(tool_with("body", move |_a, _c| {
            r.push("ran");
            async { Ok(json!("body")) }
        }))
        .unwrap()
        .keep();
    let _hook = pipeline.on_execute(short_circuit(ToolResult::success(
        JsonValue::new(json!("short-circuited")).unwrap(),
    )));
    let result = pipeline.execute(call("body", json!({}))).await;
    assert_eq!(result.text(), "short-circuited");
    assert!(!result.concludes_turn());
    assert!(ran.entries().is_empty(), "the body never ran");
}

#[tokio::test(flavor = "current_thread")]
async fn h05_a_cached_result_of_another_tool_is_revalidated() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("string-output", |_a, _c| async {
            Ok(json!("cached"))
        }))
        .unwrap()
        .keep();
    let object_ran = Log::default();
    let o = object_ran.clone();
    registry
        .register(
            ToolDefinition::builder("object-output", "d")
                .output(OutputDecl::text(
                    json!({"type": "object", "additionalProperties": false}),
                ))
                .body(move |_a, _c| {
                    o.push("ran");
                    async { Ok(json!({})) }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let cache = std::sync::Arc::new(std::sync::Mutex::new(None::<ToolResult>));
    let c = std::sync::Arc::clone(&cache);
    pipeline
        .on_execute(from_fn(move |r: DispatchRequest, next: DispatchNext| {
            let cache = std::sync::Arc::clone(&c);
            async move {
                let cached = cache.lock().unwrap().clone();
                if let Some(cached) = cached {
                    return Ok(cached);
                }
                let out = next.run(r).await?;
                *cache.lock().unwrap() = Some(out.clone());
                Ok(out)
            }
        }))
        .keep();
    let first = pipeline.execute(call("string-output", json!({}))).await;
    assert_eq!(
        first.value().map(|v| v.as_value().clone()),
        Some(json!("cached"))
    );
    let second = pipeline.execute(call("object-output", json!({}))).await;
    assert_eq!(second.error_code(), Some(ErrorCode::InvalidToolOutput));
    assert!(object_ran.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn h06_h08_authored_failures_and_contexts_pass_through() {
    let (_registry, pipeline) = setup();
    let authored = ToolResult::failure_with_content(
        ToolError::new("wrapped failure"),
        vec![tools_presentation::ContentBlock::text("wrapper content")],
    )
    .with_meta(JsonValue::new(json!({"wrapped": true})).unwrap())
    .with_contexts(vec![
        ToolContext::text("wrapper context").with_source("test"),
    ]);
    let hook = pipeline.on_execute(short_circuit(authored.clone()));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(result.to_json(), authored.to_json());
    drop(hook);
    let with_context = ToolResult::success(JsonValue::new(json!("x")).unwrap())
        .with_contexts(vec![ToolContext::text("from around dispatch")]);
    let _hook = pipeline.on_execute(short_circuit(with_context));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        result.contexts(),
        [ToolContext::text("from around dispatch")]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn h07_h09_wrapper_failures_are_final() {
    let (registry, pipeline) = setup();
    let post = Log::default();
    let p = post.clone();
    pipeline
        .on_post_execute(post_hook(move |_| {
            p.push("post");
            Ok(PostDecision::accept())
        }))
        .keep();
    let throws = pipeline.on_execute(from_fn(|_r: DispatchRequest, _n: DispatchNext| async {
        Err::<ToolResult, _>("wrapper broke".into())
    }));
    let result = pipeline.execute(call("echo", json!({}))).await;
    assert_eq!(
        result.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: wrapper broke"}], "error": {"message": "wrapper broke"}})
    );
    assert!(
        post.entries().is_empty(),
        "a wrapper failure skips post-execute"
    );
    drop(throws);

    let registration = std::sync::Arc::new(std::sync::Mutex::new(Some(
        registry
            .register(tool_with("gone", |_a, _c| async { Ok(json!("x")) }))
            .unwrap(),
    )));
    let r = std::sync::Arc::clone(&registration);
    let _hook = pipeline.on_execute(from_fn(move |_req: DispatchRequest, _n: DispatchNext| {
        drop(r.lock().unwrap().take());
        async {
            Ok(ToolResult::success(
                JsonValue::new(json!("authored")).unwrap(),
            ))
        }
    }));
    let gone = pipeline.execute(call("gone", json!({}))).await;
    assert_eq!(gone.error_code(), Some(ErrorCode::UnknownTool));
    assert!(post.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn h10_wrappers_may_replace_the_token_and_the_body_sees_both() {
    let (registry, pipeline) = setup();
    let caller = CancellationToken::new();
    let replacement = CancellationToken::new();
    let r = replacement.clone();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None::<CancellationToken>));
    let s = std::sync::Arc::clone(&seen);
    registry
        .register(tool_with("watch", move |_a, ctx| {
            *s.lock().unwrap() = Some(ctx.cancellation().clone());
            async { Ok(json!("ok")) }
        }))
        .unwrap()
        .keep();
    let _hook = pipeline.on_execute(from_fn(move |req: DispatchRequest, next: DispatchNext| {
        let replacement = r.clone();
        async move { next.run(req.with_cancellation(replacement)).await }
    }));
    let result = pipeline
        .execute(crate::support::call_cancellable(
            "watch",
            json!({}),
            &caller,
        ))
        .await;
    assert_eq!(result.text(), "ok");
    let body_token = seen.lock().unwrap().clone().unwrap();
    assert!(!body_token.is_cancelled());
    // The body's token is neither the caller's nor the wrapper's: cancelling it affects
    // neither.
    body_token.cancel();
    assert!(!caller.is_cancelled() && !replacement.is_cancelled());
}

/// A wrapper that logs `name` on the way in.
fn logging(log: &Log, name: &'static str) -> impl tools_pipeline::Hook<DispatchRequest> {
    let log = log.clone();
    from_fn(move |r: DispatchRequest, next: DispatchNext| {
        log.push(name);
        async move { next.run(r).await }
    })
}

#[tokio::test(flavor = "current_thread")]
async fn a_conditional_wrapper_keeps_its_place_and_is_skipped_while_inactive() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use tools_pipeline::HookOptions;

    let (_registry, pipeline) = setup();
    let log = Log::default();
    let active = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&active);
    pipeline.on_execute(logging(&log, "outer")).keep();
    pipeline
        .on_execute_with(
            HookOptions::new().active_when(move || flag.load(Ordering::SeqCst)),
            logging(&log, "conditional"),
        )
        .keep();
    pipeline.on_execute(logging(&log, "inner")).keep();

    let run = |id: &str| {
        pipeline.execute(tools_pipeline::ToolCall::new(id, "echo", json!({"text": "x"})).unwrap())
    };
    assert!(!run("c1").await.is_error());
    assert_eq!(log.entries(), ["outer", "inner"]);

    // Turning the condition on needs no re-registration, and the wrapper is where it was
    // registered: between the other two.
    active.store(true, Ordering::SeqCst);
    assert!(!run("c2").await.is_error());
    assert_eq!(
        log.entries(),
        ["outer", "inner", "outer", "conditional", "inner"]
    );

    active.store(false, Ordering::SeqCst);
    assert!(!run("c3").await.is_error());
    assert_eq!(log.entries()[5..], ["outer", "inner"]);
}

#[tokio::test(flavor = "current_thread")]
async fn each_inactive_hook_is_skipped_while_its_condition_is_false() {
    use tools_pipeline::HookOptions;

    let (_registry, pipeline) = setup();
    let log = Log::default();
    let run = |id: &str| {
        pipeline.execute(tools_pipeline::ToolCall::new(id, "echo", json!({"text": "y"})).unwrap())
    };
    pipeline
        .on_execute_with(
            HookOptions::new().active_when(|| false),
            logging(&log, "never"),
        )
        .keep();
    // A waterfall of inactive hooks only: the body runs without any wrapper.
    assert_eq!(run("c1").await.text(), "y");
    assert!(log.entries().is_empty());

    // Each conditional hook is skipped while its own condition is false, whatever the
    // others' conditions.
    pipeline
        .on_execute_with(
            HookOptions::new().active_when(|| true),
            logging(&log, "always"),
        )
        .keep();
    assert_eq!(run("c2").await.text(), "y");
    assert_eq!(log.entries(), ["always"]);
}

#[derive(Clone, Debug)]
struct HookPlan {
    /// `None`: unconditional; `Some(c)`: conditional on flag `c`.
    condition: Option<usize>,
    prepend: bool,
}

fn hook_plan() -> impl proptest::strategy::Strategy<Value = HookPlan> {
    use proptest::prelude::*;
    (prop::option::of(0..3usize), any::<bool>())
        .prop_map(|(condition, prepend)| HookPlan { condition, prepend })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 64, ..Default::default() })]

    /// Whatever the mix of conditional, unconditional, appended and prepended wrappers and
    /// whatever the flags, a call runs the wrappers in their registration order, leaving
    /// out each conditional one exactly when its own condition does not hold.
    #[test]
    fn conditional_wrappers_run_in_order_when_their_condition_holds(
        plans in proptest::collection::vec(hook_plan(), 0..7),
        flag_rounds in proptest::collection::vec(proptest::collection::vec(proptest::bool::ANY, 3), 1..4),
    ) {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use tools_pipeline::HookOptions;

        const NAMES: [&str; 7] = ["h0", "h1", "h2", "h3", "h4", "h5", "h6"];
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (_registry, pipeline) = setup();
        let flags: Arc<[AtomicBool; 3]> = Arc::new(Default::default());
        let log = Log::default();
        // The model: the order the wrappers are entered when all of them run.
        let mut order: Vec<usize> = Vec::new();
        for (i, plan) in plans.iter().enumerate() {
            let mut options = HookOptions::new();
            if plan.prepend {
                options = options.prepend();
                order.insert(0, i);
            } else {
                order.push(i);
            }
            if let Some(c) = plan.condition {
                let flags = Arc::clone(&flags);
                options = options.active_when(move || flags[c].load(Ordering::SeqCst));
            }
            pipeline.on_execute_with(options, logging(&log, NAMES[i])).keep();
        }
        for (round, values) in flag_rounds.iter().enumerate() {
            for (flag, value) in flags.iter().zip(values) {
                flag.store(*value, Ordering::SeqCst);
            }
            let expected: Vec<&str> = order
                .iter()
                .filter(|&&i| plans[i].condition.is_none_or(|c| values[c]))
                .map(|&i| NAMES[i])
                .collect();
            let before = log.entries().len();
            let call = tools_pipeline::ToolCall::new(format!("c{round}"), "echo", json!({"text": "z"}))
                .unwrap();
            let result = rt.block_on(pipeline.execute(call));
            proptest::prop_assert_eq!(result.text(), "z");
            proptest::prop_assert_eq!(&log.entries()[before..], expected.as_slice());
        }
    }
}

/// The dispatch stage takes the tool prepare found unless the registry changed in between:
/// a tool replaced or removed by a wrapper before it delegates is resolved again (the new
/// body runs; a removed tool is `UNKNOWN_TOOL`), and an unrelated change also makes it look
/// again, with the same answer.
#[tokio::test(flavor = "current_thread")]
async fn h12_the_body_is_the_tool_visible_at_dispatch() {
    let (registry, pipeline) = setup();
    let first = registry
        .register(tool_with("swap", |_a, _c| async { Ok(json!("first")) }))
        .unwrap();
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(first)));
    let (r, s) = (registry.clone(), std::sync::Arc::clone(&slot));
    // 0: nothing changes; 1: replace `swap`; 2: remove it; 3: an unrelated registration.
    let step = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let at = std::sync::Arc::clone(&step);
    let _hook = pipeline.on_execute(from_fn(move |req: DispatchRequest, next: DispatchNext| {
        match at.load(std::sync::atomic::Ordering::SeqCst) {
            1 => {
                drop(s.lock().unwrap().take());
                let second = r
                    .register(tool_with("swap", |_a, _c| async { Ok(json!("second")) }))
                    .unwrap();
                *s.lock().unwrap() = Some(second);
            }
            2 => drop(s.lock().unwrap().take()),
            3 => r
                .register(tool_with("other", |_a, _c| async { Ok(json!("o")) }))
                .unwrap()
                .keep(),
            _ => {}
        }
        async move { next.run(req).await }
    }));
    let value = |result: &ToolResult| result.value().map(|v| v.as_value().clone());

    let unchanged = pipeline.execute(call("swap", json!({}))).await;
    assert_eq!(value(&unchanged), Some(json!("first")));
    step.store(1, std::sync::atomic::Ordering::SeqCst);
    let replaced = pipeline.execute(call("swap", json!({}))).await;
    assert_eq!(value(&replaced), Some(json!("second")));
    step.store(3, std::sync::atomic::Ordering::SeqCst);
    let unrelated = pipeline.execute(call("swap", json!({}))).await;
    assert_eq!(value(&unrelated), Some(json!("second")));
    step.store(2, std::sync::atomic::Ordering::SeqCst);
    let removed = pipeline.execute(call("swap", json!({}))).await;
    assert_eq!(removed.error_code(), Some(ErrorCode::UnknownTool));
}
