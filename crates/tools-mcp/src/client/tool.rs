//! One imported tool: its listing, its definition, and the body that calls the server.

use std::sync::{Arc, Weak};

use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::{Map, Value, json};
use tools_runtime::crates::json::{CompiledSchema, ErrorCode};
use tools_runtime::crates::registry::ToolHints;
use tools_runtime::{JsonValue, OutputDecl, RegistryError, RunContext, ToolDefinition, ToolError};

use super::{Customize, Inner, exposed_name, peer_for_call};
use crate::UpstreamCode;
use crate::wire;

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

    /// The definition: foreign input schema, the output contract, the hints, and a body
    /// that calls the server through `inner`'s current connection.
    pub(super) fn definition(
        &self,
        inner: Weak<Inner>,
        customize: Option<&Customize>,
    ) -> Result<ToolDefinition, RegistryError> {
        let hints = self.hints();
        let read_only = hints.read_only == Some(true);
        let structured = self.tool.output_schema.is_some();
        let output = match &self.tool.output_schema {
            Some(schema) => OutputDecl::compiled(
                CompiledSchema::compile_foreign(&Value::Object((**schema).clone())),
                Arc::new(|_args: &JsonValue, value: &JsonValue| {
                    Ok(vec![tools_runtime::ContentBlock::text(
                        tools_runtime::crates::registry::text_of(value),
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
        .body(move |args: JsonValue, ctx: RunContext| {
            let (inner, original, server) =
                (inner.clone(), Arc::clone(&original), Arc::clone(&server));
            async move { call(inner, &server, original, args, ctx, structured).await }
        });
        if read_only {
            builder = builder.read_only();
        }
        if let Some(customize) = customize {
            builder = customize(self, builder);
        }
        builder.build()
    }
}

/// One call of the tool: the server's result, or why there is none.
async fn call(
    inner: Weak<Inner>,
    server: &str,
    original: Arc<str>,
    args: JsonValue,
    ctx: RunContext,
    structured: bool,
) -> Result<Value, ToolError> {
    let unavailable = |why: &str| {
        ToolError::custom(
            UpstreamCode::ServerUnavailable.as_str(),
            format!("MCP server {server:?} is not connected ({why}); the host can restart it"),
        )
    };
    let Some(inner) = inner.upgrade() else {
        return Err(unavailable("its import was dropped"));
    };
    let Some(peer) = peer_for_call(&inner).await else {
        return Err(unavailable("its connection is closed"));
    };
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
    let route = inner.routes.progress_for(&ctx);
    let mut params = CallToolRequestParams::new(original.to_string()).with_arguments(arguments);
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_progress_token(route.token.clone());
    params.meta = Some(meta);
    drop(inner);
    // Dropping the request (on cancellation) makes rmcp send `notifications/cancelled`.
    let answer = tokio::select! {
        answer = peer.call_tool(params) => answer,
        () = ctx.cancellation().cancelled() => {
            return Err(ToolError::with_code(ErrorCode::Aborted, "cancelled"));
        }
    };
    drop(route);
    let result = answer.map_err(|e| match e {
        rmcp::ServiceError::McpError(e) => ToolError::custom(
            UpstreamCode::ProtocolError.as_str(),
            format!("MCP server {server:?} refused the call: {}", e.message),
        ),
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
            unavailable("the connection closed during the call")
        }
        other => ToolError::custom(
            UpstreamCode::ProtocolError.as_str(),
            format!("MCP server {server:?} failed the call: {other}"),
        ),
    })?;
    if result.is_error == Some(true) {
        return Err(wire::upstream_error(&result));
    }
    if structured {
        return result.structured_content.ok_or_else(|| {
            ToolError::with_code(
                ErrorCode::InvalidToolOutput,
                format!(
                    "invalid tool output: MCP server {server:?} returned no structuredContent for a tool with an outputSchema"
                ),
            )
        });
    }
    serde_json::to_value(&result.content).map_err(|e| {
        ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            format!("invalid tool output: the content cannot be read: {e}"),
        )
    })
}
