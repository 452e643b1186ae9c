//! The server front: one agent scope of a [`ToolRuntime`] served to MCP clients.
//!
//! - `tools/list` is the scope's model-facing view ([`ToolRuntime::wire_schemas`]): native
//!   tools, `run_code` with the scope's SDK appended to its description, or both, per the
//!   scope's presentation mode. Each tool carries its output schema (an object schema as
//!   is; any other wrapped as `{"result": …}`, the Python SDK's convention) and its hints as
//!   annotations.
//! - `tools/call` is one call of that scope through the whole pipeline. The request's
//!   cancellation (`notifications/cancelled`) is the call's token; a progress token makes
//!   the body's [`tools_runtime::RunContext::report_progress`] updates
//!   `notifications/progress`; an `ask` goes to the client by elicitation when it declares
//!   that capability, else to the runtime's approval service, else it is `APPROVAL_DENIED`.
//! - `notifications/tools/list_changed` follows the registry's change events, coalesced;
//!   deferred tools loaded into a session's scope are announced to that session only.

mod approval;
mod passthrough;
mod progress;
mod sessions;
mod transport;

pub use approval::{APPROVE_FIELD, SESSION_FIELD};
pub use passthrough::{Caller, Passthrough, PassthroughFuture};
pub use transport::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, HttpOptions};

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_registry::SEARCH_TOOLS;
use tools_runtime::{
    ToolCall, ToolRuntime,
    tools::{AgentScope, Registration},
};

use crate::wire::{self, Structured};

/// What one served scope shares across its MCP sessions.
struct Front {
    runtime: ToolRuntime,
    agent: AgentScope,
    info: Implementation,
    instructions: Option<String>,
    passthrough: Option<Arc<dyn Passthrough>>,
}

/// Serves one agent scope of a [`ToolRuntime`] over MCP: stdio, streamable HTTP, or any
/// rmcp transport. Cheap to clone; every clone serves the same scope.
///
/// # Examples
///
/// ```no_run
/// use tools_mcp::McpServer;
/// use tools_runtime::ToolRuntime;
///
/// # async fn serve() -> Result<(), tools_mcp::Error> {
/// let runtime = ToolRuntime::new();
/// // … register tools, hooks, guards …
/// let agent = runtime.scope();
/// McpServer::new(runtime, agent).serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    front: Arc<Front>,
}

impl McpServer {
    /// Serves `agent`'s scope of `runtime` (its tools, masks, mode and hooks), named
    /// `tools-mcp` to clients.
    pub fn new(runtime: ToolRuntime, agent: AgentScope) -> McpServer {
        McpServer {
            front: Arc::new(Front {
                runtime,
                agent,
                info: Implementation::new("tools-mcp", env!("CARGO_PKG_VERSION")),
                instructions: None,
                passthrough: None,
            }),
        }
    }

    /// The same server under another name and version in `initialize`.
    #[must_use]
    pub fn with_info(self, name: impl Into<String>, version: impl Into<String>) -> McpServer {
        self.map(|front| front.info = Implementation::new(name.into(), version.into()))
    }

    /// The same server with instructions for the client's model in `initialize`.
    #[must_use]
    pub fn with_instructions(self, instructions: impl Into<String>) -> McpServer {
        let instructions = instructions.into();
        self.map(|front| front.instructions = Some(instructions))
    }

    /// The same server, also serving `passthrough`'s resources and prompts (and declaring
    /// both capabilities).
    #[must_use]
    pub fn with_passthrough(self, passthrough: Arc<dyn Passthrough>) -> McpServer {
        self.map(|front| front.passthrough = Some(passthrough))
    }

    fn map(self, change: impl FnOnce(&mut Front)) -> McpServer {
        let mut front = Front {
            runtime: self.front.runtime.clone(),
            agent: self.front.agent.clone(),
            info: self.front.info.clone(),
            instructions: self.front.instructions.clone(),
            passthrough: self.front.passthrough.clone(),
        };
        change(&mut front);
        McpServer {
            front: Arc::new(front),
        }
    }

    /// The runtime served.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.front.runtime
    }

    /// The scope served.
    pub fn agent(&self) -> &AgentScope {
        &self.front.agent
    }

    /// A handler for one MCP session (what a transport serves; see [`McpSession`]). Each
    /// session calls as its own child scope of the served scope: it sees the same tools,
    /// masks and mode, and what is remembered per scope (an approval "for the session",
    /// the deferred tools its searches loaded) stays with that client and ends with its
    /// session.
    pub fn session(&self) -> McpSession {
        McpSession {
            agent: self.front.runtime.child_scope(&self.front.agent),
            front: Arc::clone(&self.front),
            watch: Arc::new(Watch::default()),
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.front.info.name)
            .field("agent", &self.front.agent)
            .finish_non_exhaustive()
    }
}

/// One MCP session of an [`McpServer`]: rmcp's [`ServerHandler`]. Its registry listener
/// (for `list_changed`) lives as long as the session.
#[derive(Clone)]
pub struct McpSession {
    front: Arc<Front>,
    /// The session's own child scope of the served scope.
    agent: AgentScope,
    watch: Arc<Watch>,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("name", &self.front.info.name)
            .finish_non_exhaustive()
    }
}

/// The registry listener of one session and the task that turns its events into
/// `notifications/tools/list_changed`; both end when the session is dropped.
#[derive(Default)]
struct Watch {
    listener: Mutex<Option<Registration>>,
    stop: CancellationToken,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl McpSession {
    /// The session's own scope (a child of the served scope): what its calls run as.
    pub fn agent(&self) -> &AgentScope {
        &self.agent
    }

    /// Starts forwarding registry changes to `peer` (once per session).
    fn watch(&self, peer: rmcp::Peer<RoleServer>) {
        let mut listener = self
            .watch
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if listener.is_some() {
            return;
        }
        let changed = Arc::new(tokio::sync::Notify::new());
        let signal = Arc::clone(&changed);
        let chain = self.agent.chain();
        *listener = Some(self.front.runtime.on_change(move |change| {
            if concerns(change, &chain) {
                signal.notify_one();
            }
        }));
        let stop = self.watch.stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = changed.notified() => {
                        if peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }

    /// The `tools/list` of the scope: [`ToolRuntime::wire_schemas`] (so the deferred
    /// tools this session has loaded come last, in load order), without a tool named
    /// `search_tools` while the scope has no deferred tool.
    fn list(&self) -> ListToolsResult {
        let runtime = &self.front.runtime;
        let agent = Some(&self.agent);
        let view = runtime.view(agent);
        // `search_tools` is worth listing only while there is something to find.
        let searchable = view.has_deferred();
        let mut tools = Vec::new();
        for schema in runtime.wire_schemas(agent).iter() {
            if !searchable && schema.name.as_str() == SEARCH_TOOLS {
                continue;
            }
            let Some(def) = view.get(schema.name.as_str()) else {
                continue;
            };
            let tool = if schema.name.is_run_code() {
                let sdk = runtime.sdk_section(agent);
                wire::tool_of(def, &format!("{}\n\n{sdk}", schema.description))
            } else {
                wire::tool_of(def, &schema.description)
            };
            tools.push(tool);
        }
        ListToolsResult::with_all_items(tools)
    }

    /// One `tools/call` through the pipeline.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let runtime = &self.front.runtime;
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let call_id = format!("mcp-{}", context.id);
        let Ok(call) = ToolCall::new(call_id, &request.name, arguments) else {
            return Err(McpError::invalid_params("the tool name is empty", None));
        };
        let mut call = call
            .with_agent(self.agent.clone())
            .with_cancellation(context.ct.clone());
        if let Some(principal) = principal_of(&context) {
            call = call.with_principal(principal);
        }
        let session = session_of(&context);
        let span = crate::otel::server_span(
            &request.name,
            session.as_deref(),
            &context.id.to_string(),
            &context.meta,
        );
        if let Some(session) = session {
            call = call.with_session(session);
        }
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| progress::Forwarder::start(context.peer.clone(), token));
        if let Some(progress) = &progress {
            call = call.with_progress(progress.sink());
        }
        if approval::client_can_answer(&context.peer) {
            call = call.with_approval(approval::by_elicitation(context.peer.clone()));
        }
        let structured = runtime
            .get(&request.name, Some(&self.agent))
            .map_or(Structured::None, |def| wire::structured_of(&def));
        let result = tracing::Instrument::instrument(runtime.execute(call), span.clone()).await;
        if let Some(code) = result.code().filter(|_| result.is_error()) {
            crate::otel::record_error(&span, code.as_str());
        }
        if let Some(progress) = progress {
            progress.flush().await;
        }
        Ok(CallToolResponse::Complete(wire::result_of(
            &result, structured,
        )))
    }
}

/// The principal the HTTP front authenticated the request as (see [`HttpOptions::auth`]).
pub(crate) fn principal_of(
    context: &RequestContext<RoleServer>,
) -> Option<Arc<tools_runtime::hooks::Principal>> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| {
            parts
                .extensions
                .get::<Arc<tools_runtime::hooks::Principal>>()
        })
        .cloned()
}

/// The streamable-HTTP session id the request came in on.
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned)
}

/// Whether a registry change can change the view of the scope whose chain is `chain`
/// (nearest first): a change of the global layer or of a scope of the chain (other agents'
/// scopes cannot). Tools loaded or unloaded concern only the scope they were loaded in
/// (`chain[0]`): a conversation's loaded tools are its own, not its children's nor its
/// parent's, so one MCP session's search tells no other session.
fn concerns(change: &tools_registry::Change, chain: &[u64]) -> bool {
    use tools_registry::Change;
    let scope = match change {
        Change::ToolRegistered { scope, .. } | Change::ToolRemoved { scope, .. } => *scope,
        Change::RestrictionAdded { scope }
        | Change::RestrictionLifted { scope }
        | Change::ModeDeclared { scope, .. }
        | Change::ModeCleared { scope }
        | Change::ScopeDisposed { scope } => Some(*scope),
        Change::ExposureChanged { scope } => *scope,
        Change::ToolsLoaded { scope, .. } | Change::ToolsUnloaded { scope, .. } => {
            return scope.is_some() && *scope == chain.first().copied();
        }
        _ => None,
    };
    scope.is_none_or(|scope| chain.contains(&scope))
}

/// Who made the request `context` belongs to.
fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    Caller {
        principal: principal_of(context),
        session: session_of(context),
    }
}

impl McpSession {
    fn passthrough(&self) -> Result<&Arc<dyn Passthrough>, McpError> {
        self.front
            .passthrough
            .as_ref()
            .ok_or_else(McpError::method_not_found::<rmcp::model::ReadResourceRequestMethod>)
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> InitializeResult {
        let capabilities = if self.front.passthrough.is_some() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        };
        let info = InitializeResult::new(capabilities).with_server_info(self.front.info.clone());
        match &self.front.instructions {
            Some(instructions) => info.with_instructions(instructions.clone()),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(self.list())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        let caller = caller_of(&context);
        let items = self.passthrough()?.list_resources(&caller).await?;
        Ok(rmcp::model::ListResourcesResult::with_all_items(items))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        let caller = caller_of(&context);
        let items = self.passthrough()?.list_resource_templates(&caller).await?;
        Ok(rmcp::model::ListResourceTemplatesResult::with_all_items(
            items,
        ))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        let caller = caller_of(&context);
        let result = self
            .passthrough()?
            .read_resource(&request.uri, &caller)
            .await?;
        Ok(rmcp::model::ReadResourceResponse::Complete(result))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        let caller = caller_of(&context);
        let items = self.passthrough()?.list_prompts(&caller).await?;
        Ok(rmcp::model::ListPromptsResult::with_all_items(items))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        let caller = caller_of(&context);
        let result = self
            .passthrough()?
            .get_prompt(&request.name, request.arguments, &caller)
            .await?;
        Ok(rmcp::model::GetPromptResponse::Complete(result))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch(context.peer);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::sync::Arc;

    use tools_registry::{Change, ToolName};

    use super::concerns;

    #[test]
    fn loading_concerns_only_the_scope_that_loaded() {
        // A session's scope 7, a child of the served scope 3.
        let chain = [7, 3];
        let names: Arc<[ToolName]> = Arc::from(vec![ToolName::new("fake__echo").unwrap()]);
        let loaded = |scope| Change::ToolsLoaded {
            scope,
            names: Arc::clone(&names),
        };
        let unloaded = |scope| Change::ToolsUnloaded {
            scope,
            names: Arc::clone(&names),
        };
        assert!(concerns(&loaded(Some(7)), &chain));
        assert!(concerns(&unloaded(Some(7)), &chain));
        // Another session's load, the parent's own conversation, calls without an agent.
        for scope in [Some(8), Some(3), None] {
            assert!(!concerns(&loaded(scope), &chain), "{scope:?}");
            assert!(!concerns(&unloaded(scope), &chain), "{scope:?}");
        }
    }

    #[test]
    fn exposure_rules_concern_the_scopes_below_them() {
        let chain = [7, 3];
        for (scope, expected) in [
            (None, true),
            (Some(3), true),
            (Some(7), true),
            (Some(8), false),
        ] {
            assert_eq!(
                concerns(&Change::ExposureChanged { scope }, &chain),
                expected,
                "{scope:?}"
            );
        }
    }
}
