//! The per-call `tool_call` span.
//!
//! A binary of its own: `tracing` caches each callsite's interest globally, and a test
//! binary whose other tests emit the same span on other threads without a subscriber
//! can race the scoped subscriber installed here (the span is then never recorded).

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_registry::{OutputDecl, ToolDefinition, ToolError};
use tools_runtime::{ToolCall, ToolRuntime};
use tracing_subscriber::layer::SubscriberExt;

fn tool(name: &str, fail: bool) -> ToolDefinition {
    ToolDefinition::builder(name, "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_a, _c| async move {
            if fail {
                Err(ToolError::custom("BOOM", "boom"))
            } else {
                Ok(json!("ok"))
            }
        })
        .build()
        .unwrap()
}

/// Captures closed spans named `tool_call` with their recorded fields.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<String>>>);

impl<S> tracing_subscriber::Layer<S> for Spans
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && span.name() == "tool_call"
            && let Some(fields) = span.extensions().get::<Fields>()
        {
            self.0.lock().unwrap().push(fields.0.join(" "));
        }
    }
}

#[derive(Default)]
struct Fields(Vec<String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() != "duration_us" {
            self.0.push(format!("{}={:?}", field.name(), value));
        } else {
            self.0.push("duration_us=set".to_owned());
        }
    }
}

#[test]
fn one_span_per_call_with_its_outcome() {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let runtime = ToolRuntime::new();
            runtime.register(tool("good", false)).unwrap().keep();
            runtime.register(tool("bad", true)).unwrap().keep();
            let _ = runtime
                .execute(ToolCall::new("c1", "good", json!({})).unwrap())
                .await;
            let _ = runtime
                .run_batch(
                    vec![ToolCall::new("c2", "bad", json!({})).unwrap()],
                    tokio_util::sync::CancellationToken::new(),
                )
                .await;
        });
    });
    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(spans.len(), 2, "{spans:?}");
    assert!(
        spans[0].contains("tool=\"good\"")
            && spans[0].contains("call_id=\"c1\"")
            && spans[0].contains("outcome=\"OK\"")
            && spans[0].contains("duration_us=set"),
        "{spans:?}"
    );
    assert!(
        spans[1].contains("tool=\"bad\"") && spans[1].contains("outcome=\"BOOM\""),
        "{spans:?}"
    );
}
