//! A body dropped by a wrapper (`tower::timeout`) is reported through `tracing`, and its
//! token is cancelled (docs/decisions.md, entry 25).
//!
//! A binary of its own: `tracing` caches each callsite's interest globally, and other tests
//! emitting the same event on other threads without a subscriber could race the scoped
//! subscriber installed here.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{ErrorCode, Pipeline, ToolCall, layer};
use tools_registry::{OutputDecl, Registry, ToolDefinition};
use tracing_subscriber::layer::SubscriberExt;

/// Captures the message of every `WARN` event.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut message = Message(String::new());
            event.record(&mut message);
            self.0.lock().unwrap().push(message.0);
        }
    }
}

#[test]
fn a_body_dropped_by_a_wrapper_is_reported_and_its_token_cancelled() {
    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let s = Arc::clone(&seen);
    let registry = Registry::new();
    registry
        .register(
            ToolDefinition::builder("slow", "sleeps a minute")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(move |_args, ctx| {
                    *s.lock().unwrap() = Some(ctx.cancellation().clone());
                    async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(json!("late"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let pipeline = Pipeline::new(registry);
    pipeline
        .on_execute(layer(tower::timeout::TimeoutLayer::new(
            Duration::from_secs(1),
        )))
        .keep();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let result = tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(pipeline.execute(ToolCall::new("c1", "slow", json!({})).unwrap()))
    });
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    assert!(seen.lock().unwrap().as_ref().unwrap().is_cancelled());
    let warnings = warnings.0.lock().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("\"slow\" (c1): the running body was dropped before it settled")),
        "{warnings:?}"
    );
}
