//! Spans of MCP requests, named and attributed as the OpenTelemetry MCP semantic
//! conventions say, and the W3C trace context they carry in `params._meta` (`traceparent`,
//! `tracestate`, unprefixed).
//!
//! - The server side of a `tools/call` is a `server` span `tools/call {tool}` with
//!   `mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id` and `gen_ai.tool.name`; its
//!   parent is the trace context the client put in `_meta`, when there is one (feature
//!   `otel`). The call's `execute_tool` span (see `tools_pipeline::trace`) is its child.
//! - The client side of a call of an imported tool is a `client` span `tools/call {tool}`;
//!   its context goes to the server in the request's `_meta` (feature `otel`).
//!
//! Without the feature the spans are plain `tracing` spans and no context is read or
//! written. [`Exporter`] sends them to an OTLP/HTTP receiver.

use rmcp::model::RequestMetaObject;

/// The server span of a `tools/call` of `tool`, a child of the trace context in `meta`.
pub(crate) fn server_span(
    tool: &str,
    session: Option<&str>,
    request_id: &str,
    meta: &RequestMetaObject,
) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp_server_request",
        "otel.name" = format!("tools/call {tool}"),
        "otel.kind" = "server",
        "otel.status_code" = tracing::field::Empty,
        "mcp.method.name" = "tools/call",
        "mcp.session.id" = session,
        "jsonrpc.request.id" = request_id,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
        "error.type" = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        context::adopt(&span, meta);
    }
    #[cfg(not(feature = "otel"))]
    let _ = meta;
    span
}

/// The client span of a `tools/call` of `tool` on the upstream `server`.
pub(crate) fn client_span(server: &str, tool: &str) -> tracing::Span {
    tracing::info_span!(
        "mcp_client_request",
        "otel.name" = format!("tools/call {tool}"),
        "otel.kind" = "client",
        "otel.status_code" = tracing::field::Empty,
        "mcp.method.name" = "tools/call",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
        "server.address" = server,
        "jsonrpc.request.id" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    )
}

/// Marks `span` failed with `error_type`.
pub(crate) fn record_error(span: &tracing::Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
}

/// Writes `span`'s trace context into `meta` (`traceparent`, `tracestate`).
pub(crate) fn inject(span: &tracing::Span, meta: &mut RequestMetaObject) {
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        context::inject(span, meta);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, meta);
}

#[cfg(feature = "otel")]
mod context {
    use std::collections::HashMap;

    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt as _;
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use rmcp::model::RequestMetaObject;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// Makes the context in `meta`, if valid, the parent of `span`.
    pub(super) fn adopt(span: &tracing::Span, meta: &RequestMetaObject) {
        let Some(parent) = meta.0.get_traceparent() else {
            return;
        };
        let mut carrier = HashMap::with_capacity(2);
        carrier.insert("traceparent".to_owned(), parent.to_owned());
        if let Some(state) = meta.0.get_tracestate() {
            carrier.insert("tracestate".to_owned(), state.to_owned());
        }
        let cx = TraceContextPropagator::new().extract(&carrier);
        if cx.span().span_context().is_valid() {
            let _ = span.set_parent(cx);
        }
    }

    /// Writes `span`'s context into `meta`.
    pub(super) fn inject(span: &tracing::Span, meta: &mut RequestMetaObject) {
        let mut carrier: HashMap<String, String> = HashMap::with_capacity(2);
        TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
        if let Some(parent) = carrier.remove("traceparent") {
            meta.0.set_traceparent(parent);
        }
        if let Some(state) = carrier.remove("tracestate").filter(|s| !s.is_empty()) {
            meta.0.set_tracestate(state);
        }
    }
}

/// Where the gateway sends its spans (`[otel]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtelConfig {
    /// The OTLP/HTTP endpoint's base (`http://127.0.0.1:4318`; `/v1/traces` is added),
    /// or `None` for the `OTEL_EXPORTER_OTLP_*` environment variables' choice.
    pub endpoint: Option<String>,
    /// The `service.name` of the spans (default `tools-mcp-gateway`).
    pub service_name: String,
    /// Whether each `execute_tool` span carries the call's arguments and result
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`); off by default, since
    /// they may hold secrets.
    pub capture_content: bool,
}

impl Default for OtelConfig {
    fn default() -> OtelConfig {
        OtelConfig {
            endpoint: None,
            service_name: "tools-mcp-gateway".to_owned(),
            capture_content: false,
        }
    }
}

/// A running OTLP exporter: the `tracing` layer that feeds it, and the provider to flush
/// at the end.
#[cfg(feature = "otel")]
#[derive(Debug)]
pub struct Exporter {
    provider: opentelemetry_sdk::trace::SdkTracerProvider,
}

#[cfg(feature = "otel")]
impl Exporter {
    /// Starts exporting spans as `config` says, and returns the `tracing` layer to add to
    /// the subscriber.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] when the exporter cannot be built (a malformed endpoint).
    pub fn start<S>(
        config: &OtelConfig,
    ) -> Result<(Exporter, impl tracing_subscriber::Layer<S> + use<S>), crate::Error>
    where
        S: tracing::Subscriber + Send + Sync + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use opentelemetry::trace::TracerProvider as _;
        use opentelemetry_otlp::WithExportConfig as _;
        let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http();
        if let Some(endpoint) = &config.endpoint {
            builder =
                builder.with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')));
        }
        let exporter = builder.build().map_err(|e| crate::Error::Config {
            path: "[otel]".to_owned(),
            message: format!("the OTLP exporter cannot start: {e}"),
        })?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(config.service_name.clone())
            .build();
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("tools-mcp");
        let layer = tracing_opentelemetry::layer().with_tracer(tracer);
        Ok((Exporter { provider }, layer))
    }

    /// Sends the spans still buffered and stops.
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "the OTLP exporter did not shut down cleanly");
        }
    }
}

/// Without the `otel` feature there is no exporter; this stands in for it.
#[cfg(not(feature = "otel"))]
#[derive(Debug)]
pub struct Exporter(());

#[cfg(not(feature = "otel"))]
impl Exporter {
    /// Nothing to flush.
    pub fn shutdown(self) {}
}
