//! Group J: cancellation. Gates are oneshot channels: no test depends on timing.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_pipeline::{
    DispatchNext, DispatchRequest, ErrorCode, PostDecision, PostNext, PostRequest, PreDecision,
    PreNext, PreRequest, ToolContext, ToolResult, from_fn,
};
use tools_registry::ToolError;

use crate::support::{Log, call_cancellable, setup, tool_with};

/// A gate: `wait()` inside a hook, `open()` from the test.
#[derive(Clone)]
struct Gate {
    entered: Arc<Mutex<Option<oneshot::Sender<()>>>>,
    release: Arc<Mutex<Option<oneshot::Receiver<()>>>>,
}

fn gate() -> (Gate, oneshot::Receiver<()>, oneshot::Sender<()>) {
    let (entered_tx, entered_rx) = oneshot::channel();
    let (release_tx, release_rx) = oneshot::channel();
    let gate = Gate {
        entered: Arc::new(Mutex::new(Some(entered_tx))),
        release: Arc::new(Mutex::new(Some(release_rx))),
    };
    (gate, entered_rx, release_tx)
}

impl Gate {
    async fn wait(&self) {
        if let Some(entered) = self.entered.lock().unwrap().take() {
            let _ = entered.send(());
        }
        let release = self.release.lock().unwrap().take();
        if let Some(release) = release {
            let _ = release.await;
        }
    }
}

fn counting_tool(registry: &tools_registry::Registry, log: &Log) {
    let l = log.clone();
    registry
        .register(tool_with("counted", move |_a, _c| {
            l.push("body");
            async { Ok(json!("ran")) }
        }))
        .unwrap()
        .keep();
}

#[tokio::test(flavor = "current_thread")]
async fn j01_j02_j03_cancelled_while_pre_execute_waits() {
    for (ending, expected) in [
        (
            "next",
            json!({"isError": true, "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}], "error": {"message": "tool call aborted before dispatch", "info": {"code": "ABORTED_BEFORE_DISPATCH"}}}),
        ),
        (
            "deny",
            json!({"isError": true, "content": [{"type": "text", "text": "Error: policy denied the call"}], "error": {"message": "policy denied the call", "info": {"code": "DENIED"}}}),
        ),
        (
            "throw",
            json!({"isError": true, "content": [{"type": "text", "text": "Error: gate interrupted"}], "error": {"message": "gate interrupted"}}),
        ),
    ] {
        let (registry, pipeline) = setup();
        let body = Log::default();
        counting_tool(&registry, &body);
        let (g, entered, release) = gate();
        pipeline
            .on_pre_execute(from_fn(move |r: PreRequest, next: PreNext| {
                let g = g.clone();
                async move {
                    g.wait().await;
                    match ending {
                        "next" => next.run(r).await,
                        "deny" => Ok(PreDecision::Deny("policy denied the call".into())),
                        _ => Err("gate interrupted".into()),
                    }
                }
            }))
            .keep();
        let caller = CancellationToken::new();
        let task = tokio::spawn({
            let pipeline = pipeline.clone();
            let caller = caller.clone();
            async move {
                pipeline
                    .execute(call_cancellable("counted", json!({}), &caller))
                    .await
            }
        });
        entered.await.unwrap();
        caller.cancel();
        release.send(()).unwrap();
        let result = task.await.unwrap();
        assert_eq!(result.to_json(), expected, "{ending}");
        assert!(body.entries().is_empty());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn j04_j05_a_cancelled_or_precancelled_token_skips_the_body() {
    let (registry, pipeline) = setup();
    let body = Log::default();
    counting_tool(&registry, &body);
    let hook = pipeline.on_execute(from_fn(
        |req: DispatchRequest, next: DispatchNext| async move {
            let aborted = CancellationToken::new();
            aborted.cancel();
            next.run(req.with_cancellation(aborted)).await
        },
    ));
    let result = pipeline
        .execute(crate::support::call("counted", json!({})))
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::AbortedBeforeDispatch));
    drop(hook);
    let (g, entered, release) = gate();
    let _hook = pipeline.on_execute(from_fn(move |req: DispatchRequest, next: DispatchNext| {
        let g = g.clone();
        async move {
            let replacement = CancellationToken::new();
            g.wait().await;
            next.run(req.with_cancellation(replacement)).await
        }
    }));
    let caller = CancellationToken::new();
    let task = tokio::spawn({
        let (pipeline, caller) = (pipeline.clone(), caller.clone());
        async move {
            pipeline
                .execute(call_cancellable("counted", json!({}), &caller))
                .await
        }
    });
    entered.await.unwrap();
    caller.cancel();
    release.send(()).unwrap();
    assert_eq!(
        task.await.unwrap().error_code(),
        Some(ErrorCode::AbortedBeforeDispatch)
    );
    assert!(body.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn j06_an_authored_success_overtaken_by_cancellation_keeps_its_contexts() {
    let (registry, pipeline) = setup();
    let body = Log::default();
    counting_tool(&registry, &body);
    let (g, entered, release) = gate();
    pipeline
        .on_execute(from_fn(
            move |_req: DispatchRequest, _next: DispatchNext| {
                let g = g.clone();
                async move {
                    g.wait().await;
                    Ok(
                        ToolResult::success(JsonValue::new(json!("authored")).unwrap())
                            .with_contexts(vec![ToolContext::text("wrapper")]),
                    )
                }
            },
        ))
        .keep();
    let caller = CancellationToken::new();
    let task = tokio::spawn({
        let (pipeline, caller) = (pipeline.clone(), caller.clone());
        async move {
            pipeline
                .execute(call_cancellable("counted", json!({}), &caller))
                .await
        }
    });
    entered.await.unwrap();
    caller.cancel();
    release.send(()).unwrap();
    let result = task.await.unwrap();
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(result.contexts(), [ToolContext::text("wrapper")]);
    assert!(body.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn j07_j08_cancellation_after_the_body_is_aborted_with_contexts() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("deferring", |_a, ctx| {
            ctx.defer_context(ToolContext::text("child"));
            async { Ok(json!("done")) }
        }))
        .unwrap()
        .keep();
    let (g, entered, release) = gate();
    pipeline
        .on_post_execute(from_fn(move |r: PostRequest, next: PostNext| {
            let g = g.clone();
            async move {
                let decision = next.run(r).await?;
                g.wait().await;
                Ok(decision.with_contexts(vec![ToolContext::text("post")]))
            }
        }))
        .keep();
    let caller = CancellationToken::new();
    let task = tokio::spawn({
        let (pipeline, caller) = (pipeline.clone(), caller.clone());
        async move {
            pipeline
                .execute(call_cancellable("deferring", json!({}), &caller))
                .await
        }
    });
    entered.await.unwrap();
    caller.cancel();
    release.send(()).unwrap();
    let result = task.await.unwrap();
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    assert_eq!(
        result.contexts(),
        [ToolContext::text("child"), ToolContext::text("post")]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn j10_j11_failures_survive_a_later_cancellation() {
    let (registry, pipeline) = setup();
    let caller = CancellationToken::new();
    let c = caller.clone();
    registry
        .register(tool_with("cooperative", move |_a, ctx| {
            let c = c.clone();
            async move {
                c.cancel();
                ctx.cancellation().cancelled().await;
                Err(ToolError::custom("TOOL_FAILURE", "tool failed"))
            }
        }))
        .unwrap()
        .keep();
    let result = pipeline
        .execute(call_cancellable("cooperative", json!({}), &caller))
        .await;
    assert_eq!(result.text(), "Error: tool failed");
    assert_eq!(
        result.code().map(tools_pipeline::Code::as_str),
        Some("TOOL_FAILURE")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn j12_j13_a_started_body_is_awaited_and_the_wrapper_token_is_not_cancelled() {
    let (registry, pipeline) = setup();
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let release_rx = Arc::new(Mutex::new(Some(release_rx)));
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    registry
        .register(tool_with("slow", move |_a, ctx| {
            let release = release_rx.lock().unwrap().take();
            let started = started_tx.lock().unwrap().take();
            async move {
                ctx.defer_context(ToolContext::text("nested"));
                if let Some(started) = started {
                    let _ = started.send(());
                }
                ctx.cancellation().cancelled().await;
                if let Some(release) = release {
                    let _ = release.await;
                }
                Ok(json!("stopped"))
            }
        }))
        .unwrap()
        .keep();
    let replacement = CancellationToken::new();
    let r = replacement.clone();
    pipeline
        .on_execute(from_fn(move |req: DispatchRequest, next: DispatchNext| {
            let r = r.clone();
            async move { next.run(req.with_cancellation(r)).await }
        }))
        .keep();
    let caller = CancellationToken::new();
    let mut task = tokio::spawn({
        let (pipeline, caller) = (pipeline.clone(), caller.clone());
        async move {
            pipeline
                .execute(call_cancellable("slow", json!({}), &caller))
                .await
        }
    });
    started_rx.await.unwrap();
    caller.cancel();
    // The body has seen the cancellation but is held: the call is still pending.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(futures_poll_pending(&mut task).await);
    release_tx.send(()).unwrap();
    let result = task.await.unwrap();
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    assert_eq!(result.contexts(), [ToolContext::text("nested")]);
    assert!(!replacement.is_cancelled());
}

/// Whether the task is still pending after one poll.
async fn futures_poll_pending(task: &mut tokio::task::JoinHandle<ToolResult>) -> bool {
    std::future::poll_fn(|cx| match std::pin::Pin::new(&mut *task).poll(cx) {
        std::task::Poll::Pending => std::task::Poll::Ready(true),
        std::task::Poll::Ready(_) => std::task::Poll::Ready(false),
    })
    .await
}

use std::future::Future as _;

#[tokio::test(flavor = "current_thread")]
async fn j14_a_precancelled_call_runs_no_hook_and_publishes_once() {
    let (registry, pipeline) = setup();
    let phases = Log::default();
    let body = Log::default();
    counting_tool(&registry, &body);
    let (p1, p2, p3, p4) = (
        phases.clone(),
        phases.clone(),
        phases.clone(),
        phases.clone(),
    );
    pipeline
        .on_pre_execute(crate::support::pre_hook(move |_| {
            p1.push("pre");
            None
        }))
        .keep();
    pipeline
        .on_execute(from_fn(move |r: DispatchRequest, n: DispatchNext| {
            p2.push("around");
            async move { n.run(r).await }
        }))
        .keep();
    pipeline
        .on_post_execute(crate::support::post_hook(move |_| {
            p3.push("post");
            Ok(PostDecision::accept())
        }))
        .keep();
    let seen = Arc::new(Mutex::new(None::<(JsonValue, ToolResult)>));
    let s = Arc::clone(&seen);
    pipeline
        .on_result(move |exec, result| {
            p4.push("result");
            *s.lock().unwrap() = Some((exec.arguments().clone(), result.clone()));
        })
        .keep();
    let caller = CancellationToken::new();
    caller.cancel();
    let result = pipeline
        .execute(call_cancellable(
            "counted",
            json!({"nested": {"value": 1}}),
            &caller,
        ))
        .await;
    assert_eq!(
        result.to_json(),
        json!({"isError": true, "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}],
               "error": {"message": "tool call aborted before dispatch", "info": {"code": "ABORTED_BEFORE_DISPATCH"}}})
    );
    assert_eq!(phases.entries(), ["result"]);
    assert!(body.entries().is_empty());
    let (args, observed) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(args.as_value(), &json!({"nested": {"value": 1}}));
    assert_eq!(observed, result);
}

#[tokio::test(flavor = "current_thread")]
async fn j15_lossy_arguments_win_over_everything() {
    let (_registry, pipeline) = setup();
    let caller = CancellationToken::new();
    caller.cancel();
    let results = Log::default();
    let r = results.clone();
    pipeline.on_result(move |_e, _r| r.push("result")).keep();
    let result = pipeline
        .execute(call_cancellable("missing", json!({"x": -0.0}), &caller))
        .await;
    assert!(result.is_error());
    assert!(
        result
            .text()
            .starts_with("Error: tool execution arguments must be losslessly JSON-serializable"),
        "{}",
        result.text()
    );
    assert_eq!(result.code(), None);
    assert_eq!(results.entries().len(), 1);
}

/// The body's token is a child of the caller's (or of a wrapper's token descending from
/// it): a cancellation reaches the body at once, inside the very poll that cancelled, not
/// at the body's next poll (Code Mode relies on it: a run's sub-calls are driven inside
/// one poll of the `run_code` body).
#[tokio::test(flavor = "current_thread")]
async fn j16_the_callers_cancellation_reaches_the_body_token_at_once() {
    for with_wrapper in [false, true] {
        let (registry, pipeline) = setup();
        let caller = CancellationToken::new();
        let seen = Log::default();
        let (c, s) = (caller.clone(), seen.clone());
        registry
            .register(tool_with("self_cancel", move |_a, ctx| {
                let before = ctx.is_cancelled();
                c.cancel();
                s.push(format!("before={before} after={}", ctx.is_cancelled()));
                async { Ok(json!("done")) }
            }))
            .unwrap()
            .keep();
        if with_wrapper {
            pipeline
                .on_execute(from_fn(
                    |req: DispatchRequest, next: DispatchNext| async move {
                        let child = req.cancellation().child_token();
                        next.run(req.with_cancellation(child)).await
                    },
                ))
                .keep();
        }
        let result = pipeline
            .execute(call_cancellable("self_cancel", json!({}), &caller))
            .await;
        assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
        assert_eq!(
            seen.entries(),
            ["before=false after=true"],
            "{with_wrapper}"
        );
    }
}
