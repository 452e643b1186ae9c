//! One imported tool: its listing, its definition, and the body that calls the server.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ServerResult, Tool,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Map, Value, json};
use tools_json::{CompiledSchema, ErrorCode};
use tools_registry::ToolHints;
use tools_runtime::{
    JsonValue, RunContext, ToolDefinition, ToolError,
    tools::{OutputDecl, RegistryError},
};

use super::{Customize, Inner, exposed_name, peer_for_call};
use crate::UpstreamCode;
use crate::wire;

/// How long sending `notifications/cancelled` may take (a server that stopped reading its
/// input fills the pipe; the call ends anyway).
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// What an imported tool's value is.
#[derive(Clone, Copy)]
enum Structured {
    /// No output schema: the server's `content` array.
    Content,
    /// The server's `structuredContent`.
    Value,
    /// The `result` of a `structuredContent` this crate's front wrapped.
    Wrapped,
}

/// One tool of an imported server, as the server lists it.
#[derive(Clone, Debug)]
pub struct ImportedTool {
    server: Arc<str>,
    exposed: Arc<str>,
    tool: Arc<Tool>,
}

impl ImportedTool {
    pub(super) fn new(server: &str, tool: Tool) -> ImportedTool {
        ImportedTool {
            server: server.into(),
            exposed: exposed_name(server, &tool.name).into(),
            tool: Arc::new(tool),
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The name the tool is registered under: `<server>__<tool>`.
    pub fn exposed_name(&self) -> &str {
        &self.exposed
    }

    /// The tool's own name (what reaches the server).
    pub fn original_name(&self) -> &str {
        &self.tool.name
    }

    /// The tool as the server listed it (schemas, annotations, `_meta`).
    pub fn listing(&self) -> &Tool {
        &self.tool
    }

    /// The server's hints, as the runtime's [`ToolHints`].
    pub fn hints(&self) -> ToolHints {
        let mut hints = ToolHints::new();
        if let Some(a) = &self.tool.annotations {
            hints.title.clone_from(&a.title);
            hints.read_only = a.read_only_hint;
            hints.destructive = a.destructive_hint;
            hints.idempotent = a.idempotent_hint;
            hints.open_world = a.open_world_hint;
        }
        if hints.title.is_none() {
            hints.title.clone_from(&self.tool.title);
        }
        hints
    }

    /// The definition: foreign input schema, the output contract, the hints, the server's
    /// name as its namespace, and a body that calls the server through `inner`'s current
    /// connection.
    pub(super) fn definition(
        &self,
        inner: Weak<Inner>,
        call_timeout: Option<Duration>,
        exposure: tools_registry::Exposure,
        customize: Option<&Customize>,
    ) -> Result<ToolDefinition, RegistryError> {
        let hints = self.hints();
        let read_only = hints.read_only == Some(true);
        let structured = match &self.tool.output_schema {
            None => Structured::Content,
            Some(schema) => match wire::wrapped_inner(schema) {
                Some(_) => Structured::Wrapped,
                None => Structured::Value,
            },
        };
        let output = match &self.tool.output_schema {
            Some(schema) => OutputDecl::compiled(
                CompiledSchema::compile_foreign(
                    &wire::wrapped_inner(schema)
                        .cloned()
                        .unwrap_or_else(|| Value::Object((**schema).clone())),
                ),
                Arc::new(|_args: &JsonValue, value: &JsonValue| {
                    Ok(vec![tools_runtime::presentation::ContentBlock::text(
                        tools_registry::text_of(value),
                    )])
                }),
            ),
            None => OutputDecl::new(json!({}), |_args, value| {
                Ok(wire::blocks_of(value.as_value()))
            }),
        };
        let original: Arc<str> = self.tool.name.as_ref().into();
        let server = Arc::clone(&self.server);
        let mut builder = ToolDefinition::builder(
            self.exposed_name(),
            self.tool.description.as_deref().unwrap_or_default(),
        )
        .foreign_parameters(Value::Object((*self.tool.input_schema).clone()))
        .output(output)
        .hints(hints)
        // The server's name groups its tools: a tool search matches it.
        .namespace(Arc::clone(&self.server))
        .body(move |args: JsonValue, ctx: RunContext| {
            let (inner, original, server) =
                (inner.clone(), Arc::clone(&original), Arc::clone(&server));
            async move {
                // The client side of the request: a child of the call's own span.
                let span = crate::otel::client_span(&server, &original);
                let result = tracing::Instrument::instrument(
                    call(
                        inner,
                        &server,
                        original,
                        args,
                        ctx,
                        structured,
                        span.clone(),
                    ),
                    span.clone(),
                )
                .await;
                if let Err(e) = &result {
                    crate::otel::record_error(&span, e.code().map_or("ERROR", |c| c.as_str()));
                }
                result
            }
        });
        if read_only {
            builder = builder.read_only();
        }
        if let Some(budget) = call_timeout {
            builder = builder.timeout(budget);
        }
        builder = builder.exposure(exposure);
        if let Some(customize) = customize {
            builder = customize(self, builder);
        }
        builder.build()
    }
}

/// One call of the tool: the server's result, or why there is none. Every wait races the
/// call's token (cancelled by its caller or by its budget), so the body settles as soon as
/// the token is cancelled.
async fn call(
    inner: Weak<Inner>,
    server: &str,
    original: Arc<str>,
    args: JsonValue,
    ctx: RunContext,
    structured: Structured,
    span: tracing::Span,
) -> Result<Value, ToolError> {
    let unavailable = |why: &str| {
        ToolError::custom(
            UpstreamCode::ServerUnavailable.as_str(),
            format!("MCP server {server:?} is not connected ({why}); the host can restart it"),
        )
    };
    let aborted = || ToolError::with_code(ErrorCode::Aborted, "cancelled");
    let arguments: Map<String, Value> = match args.as_value() {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        _ => {
            return Err(ToolError::with_code(
                ErrorCode::InvalidArgs,
                "invalid arguments: an MCP tool takes an object",
            ));
        }
    };
    let Some(inner) = inner.upgrade() else {
        return Err(unavailable("its import was dropped"));
    };
    let mut params = CallToolRequestParams::new(original.to_string()).with_arguments(arguments);
    if !span.is_disabled() {
        let mut meta = rmcp::model::RequestMetaObject::new();
        crate::otel::inject(&span, &mut meta);
        if !meta.0.is_empty() {
            params.meta = Some(meta);
        }
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let cancelled = ctx.cancellation().clone();
    // Reaching the server (an automatic restart included) and sending the request.
    let sending = async {
        let Some(peer) = peer_for_call(&inner).await else {
            return Err(unavailable("its connection is closed"));
        };
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|_| unavailable("the request could not be sent"))?;
        Ok((peer, handle))
    };
    let (peer, handle) = tokio::select! {
        biased;
        () = cancelled.cancelled() => return Err(aborted()),
        sent = sending => sent?,
    };
    // rmcp gives every request a progress token: the server's progress for it reaches the body.
    let route = inner.routes.route(handle.progress_token.clone(), &ctx);
    let routes = Arc::clone(&inner.routes);
    let max_blocks = inner.options.max_content_blocks;
    drop(inner);
    let id = handle.id.clone();
    let answer = tokio::select! {
        answer = handle.rx => answer,
        () = cancelled.cancelled() => {
            drop(route);
            let cancel: Result<CancelledNotificationParam, _> = serde_json::from_value(json!({
                "requestId": id,
                "reason": "the call was cancelled",
            }));
            if let Ok(cancel) = cancel {
                // A closed connection has nothing left to cancel; a server that does not
                // read its input cannot hold the call.
                let _ = tokio::time::timeout(CANCEL_GRACE, peer.notify_cancelled(cancel)).await;
            }
            return Err(aborted());
        }
    };
    drop(route);
    let protocol =
        |message: String| ToolError::custom(UpstreamCode::ProtocolError.as_str(), message);
    let result = match answer {
        Ok(Ok(ServerResult::CallToolResult(result))) => result,
        Ok(Ok(_)) => {
            return Err(protocol(format!(
                "MCP server {server:?} answered tools/call with something other than a result"
            )));
        }
        Ok(Err(rmcp::ServiceError::McpError(e))) => {
            if let Some(why) = routes.local_answer(&id) {
                return Err(ToolError::with_code(
                    ErrorCode::InvalidToolOutput,
                    format!(
                        "invalid tool output: MCP server {server:?} answered, but {why}; the response was dropped"
                    ),
                ));
            }
            return Err(protocol(format!(
                "MCP server {server:?} refused the call: {}",
                e.message
            )));
        }
        Ok(Err(rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)))
        | Err(_) => return Err(unavailable("the connection closed during the call")),
        Ok(Err(other)) => {
            return Err(protocol(format!(
                "MCP server {server:?} failed the call: {other}"
            )));
        }
    };
    // Checked before anything is built from the blocks: each costs far more converted
    // than the few bytes it takes on the wire.
    if result.content.len() > max_blocks {
        return Err(ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            format!(
                "invalid tool output: MCP server {server:?} returned {} content blocks, more than the limit of {max_blocks} (max_content_blocks); the result was dropped",
                result.content.len()
            ),
        ));
    }
    if result.is_error == Some(true) {
        return Err(wire::upstream_error(&result));
    }
    let missing = || {
        ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            format!(
                "invalid tool output: MCP server {server:?} returned no structuredContent for a tool with an outputSchema"
            ),
        )
    };
    match structured {
        Structured::Value => return result.structured_content.ok_or_else(missing),
        Structured::Wrapped => {
            return match result.structured_content {
                Some(Value::Object(mut map)) => {
                    map.remove(wire::WRAPPED_RESULT_KEY).ok_or_else(missing)
                }
                _ => Err(missing()),
            };
        }
        Structured::Content => {}
    }
    serde_json::to_value(&result.content).map_err(|e| {
        ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            format!("invalid tool output: the content cannot be read: {e}"),
        )
    })
}
