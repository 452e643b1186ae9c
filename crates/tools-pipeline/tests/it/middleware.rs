//! Stock tower middleware in the execute waterfall: `tower::timeout`, `tower::retry`,
//! `tower::limit`, and a `tracing`-based metrics layer. Time is paused where a timer is
//! involved, so nothing depends on the machine's speed.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::json;
use tools_pipeline::{DispatchRequest, ErrorCode, ToolResult, layer};
use tools_registry::{RunContext, ToolError};
use tower::{Layer, Service};

use crate::support::{Log, call, setup, tool_with};

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn tower_timeout_yields_tool_timeout() {
    let (registry, pipeline) = setup();
    registry
        .register(tool_with("sleepy", |_a, _c| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(json!("late"))
        }))
        .unwrap()
        .keep();
    pipeline
        .on_execute(layer(tower::timeout::TimeoutLayer::new(
            Duration::from_secs(1),
        )))
        .keep();
    let result = pipeline.execute(call("sleepy", json!({}))).await;
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    // Fast tools are unaffected.
    assert_eq!(
        pipeline
            .execute(call("echo", json!({"text": "quick"})))
            .await
            .text(),
        "quick"
    );
}

/// Retries a failed result (or a wrapper's error) up to `left` more times.
#[derive(Clone)]
struct RetryFailures {
    left: usize,
}

impl tower::retry::Policy<DispatchRequest, ToolResult, ToolError> for RetryFailures {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _req: &mut DispatchRequest,
        result: &mut Result<ToolResult, ToolError>,
    ) -> Option<Self::Future> {
        // A wrapper's error (`tower::timeout`'s elapsed) counts as a failure too.
        let failed = result.as_ref().map_or(true, ToolResult::is_error);
        if failed && self.left > 0 {
            self.left -= 1;
            Some(std::future::ready(()))
        } else {
            None
        }
    }

    fn clone_request(&mut self, req: &DispatchRequest) -> Option<DispatchRequest> {
        Some(req.clone())
    }
}

/// Installs `tower::retry` with [`RetryFailures`] as the next execute wrapper.
fn retry_failures(pipeline: &tools_pipeline::Pipeline, left: usize) {
    pipeline
        .on_execute(layer(tower::retry::RetryLayer::new(RetryFailures { left })))
        .keep();
}

#[tokio::test(flavor = "current_thread")]
async fn tower_retry_reruns_the_body() {
    let (registry, pipeline) = setup();
    let attempts = Arc::new(Mutex::new(0));
    let a = Arc::clone(&attempts);
    registry
        .register(tool_with("flaky", move |_args, _c| {
            let attempt = {
                let mut n = a.lock().unwrap();
                *n += 1;
                *n
            };
            async move {
                if attempt < 3 {
                    Err(ToolError::new(format!("attempt {attempt} failed")))
                } else {
                    Ok(json!(format!("succeeded on attempt {attempt}")))
                }
            }
        }))
        .unwrap()
        .keep();
    retry_failures(&pipeline, 5);
    let result = pipeline.execute(call("flaky", json!({}))).await;
    assert_eq!(result.text(), "succeeded on attempt 3");
    assert_eq!(*attempts.lock().unwrap(), 3);
}

/// A body's token is made only when the body asks for it. The first attempt never asks:
/// the timeout that drops it cancels the token without making it, and the token made
/// afterwards is born cancelled. The retry's body gets a token of its own, not cancelled.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_retry_after_a_timeout_runs_with_a_fresh_token() {
    let (registry, pipeline) = setup();
    let contexts: Arc<Mutex<Vec<RunContext>>> = Arc::default();
    let c = Arc::clone(&contexts);
    registry
        .register(tool_with("slow_once", move |_args, ctx| {
            let attempt = {
                let mut all = c.lock().unwrap();
                all.push(ctx.clone());
                all.len()
            };
            async move {
                if attempt == 1 {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                let cancelled = ctx.cancellation().is_cancelled();
                Ok(json!(format!("attempt {attempt}: cancelled={cancelled}")))
            }
        }))
        .unwrap()
        .keep();
    retry_failures(&pipeline, 1);
    pipeline
        .on_execute(layer(tower::timeout::TimeoutLayer::new(
            Duration::from_secs(1),
        )))
        .keep();
    let result = pipeline.execute(call("slow_once", json!({}))).await;
    assert_eq!(result.text(), "attempt 2: cancelled=false");
    let all = contexts.lock().unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0].is_cancelled());
    assert!(all[0].cancellation().is_cancelled());
    assert!(!all[1].is_cancelled());
    assert!(!all[1].cancellation().is_cancelled());
}

#[tokio::test(flavor = "current_thread")]
async fn tower_concurrency_limit_serializes_bodies() {
    let (registry, pipeline) = setup();
    let log = Log::default();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let release_rx = Arc::new(Mutex::new(Some(release_rx)));
    let l = log.clone();
    registry
        .register(tool_with("gated", move |args, _c| {
            let id = args["id"].as_u64().unwrap_or_default();
            l.push(format!("start {id}"));
            let gate = if id == 1 {
                release_rx.lock().unwrap().take()
            } else {
                None
            };
            let l = l.clone();
            async move {
                if let Some(gate) = gate {
                    let _ = gate.await;
                }
                l.push(format!("end {id}"));
                Ok(json!("ok"))
            }
        }))
        .unwrap()
        .keep();
    pipeline
        .on_execute(layer(tower::limit::ConcurrencyLimitLayer::new(1)))
        .keep();
    let first = tokio::spawn({
        let p = pipeline.clone();
        async move { p.execute(call("gated", json!({"id": 1}))).await }
    });
    let second = tokio::spawn({
        let p = pipeline.clone();
        async move { p.execute(call("gated", json!({"id": 2}))).await }
    });
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        log.entries(),
        ["start 1"],
        "the second body waits for the permit"
    );
    release_tx.send(()).unwrap();
    assert!(!first.await.unwrap().is_error());
    assert!(!second.await.unwrap().is_error());
    assert_eq!(log.entries(), ["start 1", "end 1", "start 2", "end 2"]);
}

/// A metrics layer built on `tracing`: one event per call with the tool and the outcome.
#[derive(Clone)]
struct MetricsLayer;

#[derive(Clone)]
struct Metrics<S> {
    inner: S,
}

impl<S> Layer<S> for MetricsLayer {
    type Service = Metrics<S>;
    fn layer(&self, inner: S) -> Metrics<S> {
        Metrics { inner }
    }
}

impl<S> Service<DispatchRequest> for Metrics<S>
where
    S: Service<DispatchRequest, Response = ToolResult, Error = ToolError> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = ToolResult;
    type Error = ToolError;
    type Future = Pin<Box<dyn Future<Output = Result<ToolResult, ToolError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: DispatchRequest) -> Self::Future {
        let tool = request.execution().name().to_string();
        let future = self.inner.call(request);
        Box::pin(async move {
            let out = future.await;
            let code = match &out {
                Ok(r) => r
                    .code()
                    .map(|c| c.as_str().to_owned())
                    .unwrap_or_else(|| "OK".to_owned()),
                Err(_) => "WRAPPER_ERROR".to_owned(),
            };
            tracing::info!(tool = %tool, outcome = %code, "tool call metrics");
            out
        })
    }
}

/// Captures `tool` and `outcome` fields of events.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() != "message" {
                    self.0.push_str(&format!("{}={:?} ", field.name(), value));
                }
            }
        }
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0.trim().to_owned());
    }
}

#[test]
fn a_tracing_metrics_layer_sees_every_call() {
    use tracing_subscriber::layer::SubscriberExt;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (_registry, pipeline) = setup();
            pipeline.on_execute(layer(MetricsLayer)).keep();
            let _ = pipeline.execute(call("echo", json!({"text": "a"}))).await;
            let _ = pipeline.execute(call("nope", json!({}))).await;
        });
    });
    let events = capture.0.lock().unwrap().clone();
    assert!(
        events.contains(&"tool=echo outcome=OK".to_owned()),
        "{events:?}"
    );
    assert!(
        events.contains(&"tool=nope outcome=UNKNOWN_TOOL".to_owned()),
        "{events:?}"
    );
}
