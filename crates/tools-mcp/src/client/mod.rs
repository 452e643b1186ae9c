//! The client import: an MCP server's tools registered as ordinary tool definitions.
//!
//! Each tool of the server becomes a [`ToolDefinition`] named `<server>__<tool>` (the
//! original name is what reaches the server), so guards, hooks, approval, timeouts, batch
//! scheduling and Code Mode apply to it like to any other tool:
//!
//! - its `inputSchema` is a foreign schema (docs/decisions.md, entry 27): shown verbatim,
//!   validated by every keyword the subset enforces, marked when not fully validated;
//! - its `outputSchema`, when it has one, is the output contract (also foreign) and the
//!   value is the server's `structuredContent`; without one the value is the server's
//!   `content` array and the model sees those blocks unchanged (images too);
//! - `readOnlyHint: true` makes it concurrency-safe; every hint is kept
//!   ([`ToolDefinition::hints`]), so a host can map `destructiveHint` to `ask` with a
//!   pre-execute hook;
//! - every request to the server has a deadline: the handshake, each listing of the tools
//!   (at the start and after `list_changed`), and each call, through the tool's timeout
//!   budget ([`ImportOptions::call_timeout`] unless customised);
//! - cancelling the call (its token, its budget) drops the request and sends
//!   `notifications/cancelled`; the server's progress reaches the body's
//!   [`RunContext::report_progress`];
//! - a child's response that breaks the transport's limits (a line over 16 MiB, nesting
//!   over 127 levels, not a valid message) ends its call at once with
//!   `INVALID_TOOL_OUTPUT` (see `transport.rs`), and so does a result of more content
//!   blocks than [`ImportOptions::max_content_blocks`] (counted by the transport's scan
//!   before the message is parsed, and again before any block is converted);
//! - `notifications/tools/list_changed` re-syncs the tools; a server that exits fails every
//!   in-flight call with `MCP_SERVER_UNAVAILABLE`, and [`ImportedServer::restart`] (or
//!   [`ImportOptions::auto_restart`]) reconnects it; [`ImportedServer::start`] keeps
//!   retrying a server that cannot be brought up, in the background.

mod handler;
mod http;
mod name;
mod options;
mod passthrough;
mod scan;
mod tool;
mod transport;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::service::{RunningService, ServiceExt};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;
use tools_runtime::{
    ToolDefinition,
    tools::{Registration, Registry},
};

pub use name::{SEPARATOR, check_server_name, exposed_name, split_exposed_name};
pub use options::{
    Customize, DEFAULT_CALL_TIMEOUT, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_LIST_TIMEOUT,
    DEFAULT_MAX_CONTENT_BLOCKS, ImportOptions, ServerSpec,
};
pub use passthrough::Offers;
pub use tool::ImportedTool;

use crate::Error;
use handler::{Routed, Routes, Upstream};
use rmcp::transport::IntoTransport;
use transport::ChildProcess;

/// An MCP server whose tools are registered in a [`Registry`]. Dropping it unregisters its
/// tools and disconnects the server (a child process is killed); a call still running ends
/// with `MCP_SERVER_UNAVAILABLE`.
///
/// # Examples
///
/// ```no_run
/// use tools_mcp::{ImportOptions, ImportedServer, ServerSpec};
/// use tools_runtime::ToolRuntime;
/// use tools_runtime::hooks::Pipeline;
/// use tools_runtime::tools::Registry;
///
/// # async fn import() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new();
/// let runtime = ToolRuntime::builder()
///     .pipeline(Pipeline::new(registry.clone()))
///     .build()?;
/// let time = ImportedServer::connect(
///     "time",
///     ServerSpec::command("uvx", ["mcp-server-time"]),
///     &registry,
///     ImportOptions::new(),
/// )
/// .await?;
/// assert!(time.tool_names().iter().any(|n| n == "time__get_current_time"));
/// # Ok(()) }
/// ```
pub struct ImportedServer {
    inner: Arc<Inner>,
}

impl Drop for ImportedServer {
    fn drop(&mut self) {
        self.inner.stop.cancel();
        let registered = std::mem::take(&mut *lock(&self.inner.state));
        drop(registered);
        // Dropping the service cancels it; a call holding the lock keeps it a moment longer.
        if let Ok(mut conn) = self.inner.conn.try_write() {
            drop(conn.take());
        }
    }
}

pub(crate) struct Inner {
    name: String,
    spec: ServerSpec,
    registry: Registry,
    options: ImportOptions,
    routes: Arc<Routes>,
    conn: tokio::sync::RwLock<Option<RunningService<RoleClient, Upstream>>>,
    restart: tokio::sync::Mutex<()>,
    state: Mutex<Registered>,
    /// Why the server is not up, while [`ImportedServer::start`]'s retries run.
    unavailable: Mutex<Option<String>>,
    stop: CancellationToken,
}

#[derive(Default)]
struct Registered {
    tools: Vec<ImportedTool>,
    registrations: Vec<Registration>,
    warnings: Vec<String>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// How long closing a replaced connection may take before it is left to finish alone.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

impl ImportedServer {
    /// Starts (or reaches) the server, completes the MCP handshake, lists its tools and
    /// registers them; then keeps them in sync with the server's `list_changed`. A tool the
    /// server lists twice is registered once (its first listing) and the others are
    /// reported ([`ImportedServer::warnings`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidServerName`], [`Error::Connect`] (start, handshake or its time
    /// limit), [`Error::Upstream`] (`tools/list` failed or took longer than its limit),
    /// [`Error::Register`].
    pub async fn connect(
        name: &str,
        spec: ServerSpec,
        registry: &Registry,
        options: ImportOptions,
    ) -> Result<ImportedServer, Error> {
        let server = ImportedServer::new(name, spec, registry, options)?;
        if let Some(refused) = attempt(&server.inner).await? {
            return Err(refused);
        }
        server.watch_list_changes();
        Ok(server)
    }

    /// Like [`ImportedServer::connect`], but a server that cannot be brought up (it does not
    /// start, its handshake or its `tools/list` fails or passes its deadline) does not fail
    /// the import: it is marked unavailable ([`ImportedServer::unavailable`], and a warning
    /// logged with the reason) and retried in the background with backoff
    /// ([`ImportOptions::retry_backoff`]) until it comes up or the import is dropped; its
    /// tools are registered when it does. A tool that cannot be registered is reported
    /// ([`ImportedServer::warnings`]) and the others are.
    ///
    /// Returns after the first attempt, which takes at most the handshake and list limits.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidServerName`] only.
    pub async fn start(
        name: &str,
        spec: ServerSpec,
        registry: &Registry,
        options: ImportOptions,
    ) -> Result<ImportedServer, Error> {
        let server = ImportedServer::new(name, spec, registry, options)?;
        server.watch_list_changes();
        if let Err(error) = attempt(&server.inner).await {
            server.inner.mark_unavailable(&error);
            retry_in_background(&server.inner);
        }
        Ok(server)
    }

    fn new(
        name: &str,
        spec: ServerSpec,
        registry: &Registry,
        options: ImportOptions,
    ) -> Result<ImportedServer, Error> {
        check_server_name(name)?;
        Ok(ImportedServer {
            inner: Arc::new(Inner {
                name: name.to_owned(),
                spec,
                registry: registry.clone(),
                options,
                routes: Arc::new(Routes::default()),
                conn: tokio::sync::RwLock::new(None),
                restart: tokio::sync::Mutex::new(()),
                state: Mutex::new(Registered::default()),
                unavailable: Mutex::new(None),
                stop: CancellationToken::new(),
            }),
        })
    }

    /// The server's name (the prefix of its tools' exposed names).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// How the server is reached.
    pub fn spec(&self) -> &ServerSpec {
        &self.inner.spec
    }

    /// The imported tools, as last listed.
    pub fn tools(&self) -> Vec<ImportedTool> {
        lock(&self.inner.state).tools.clone()
    }

    /// The exposed names of the imported tools, as last listed.
    pub fn tool_names(&self) -> Vec<String> {
        lock(&self.inner.state)
            .tools
            .iter()
            .map(|t| t.exposed_name().to_owned())
            .collect()
    }

    /// What the last listing could not import as listed: a tool name listed more than once
    /// (the first listing is kept), a tool the registry refused. Each is also logged.
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.inner.state).warnings.clone()
    }

    /// Why the server is not up, while [`ImportedServer::start`] retries it in the
    /// background; `None` once it is up (and for an import made by
    /// [`ImportedServer::connect`]).
    pub fn unavailable(&self) -> Option<String> {
        lock(&self.inner.unavailable).clone()
    }

    /// Whether the connection is open.
    pub async fn is_connected(&self) -> bool {
        self.inner.peer().await.is_some()
    }

    /// Lists the server's tools again and replaces the registered ones.
    ///
    /// # Errors
    ///
    /// [`Error::Upstream`] when the server is not connected or `tools/list` fails or takes
    /// longer than its limit (the registered tools stay); [`Error::Register`] for the first
    /// tool that could not be registered (the others are).
    pub async fn resync(&self) -> Result<(), Error> {
        resync(&self.inner).await?.map_or(Ok(()), Err)
    }

    /// Disconnects the server (a child is killed) and connects it again, then re-syncs.
    /// In-flight calls of the old connection fail with `MCP_SERVER_UNAVAILABLE`.
    ///
    /// # Errors
    ///
    /// As [`ImportedServer::connect`].
    pub async fn restart(&self) -> Result<(), Error> {
        attempt(&self.inner).await?.map_or(Ok(()), Err)
    }

    /// Disconnects the server and unregisters its tools.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        let service = self.inner.conn.write().await.take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(CLOSE_GRACE).await;
        }
        let registered = std::mem::take(&mut *lock(&self.inner.state));
        drop(registered);
    }

    /// A task that re-syncs on every `list_changed`, until the import is dropped.
    fn watch_list_changes(&self) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let routes = Arc::clone(&self.inner.routes);
        let stop = self.inner.stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = routes.changed.notified() => {}
                }
                let Some(inner) = weak.upgrade() else { break };
                if let Err(error) = resync(&inner).await {
                    tracing::warn!(server = %inner.name, %error, "re-sync after list_changed failed");
                }
            }
        });
    }
}

impl std::fmt::Debug for ImportedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedServer")
            .field("name", &self.inner.name)
            .field("spec", &self.inner.spec)
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// The open connection's peer, if any.
    pub(crate) async fn peer(&self) -> Option<Peer<RoleClient>> {
        let conn = self.conn.read().await;
        let service = conn.as_ref()?;
        (!service.is_transport_closed()).then(|| service.peer().clone())
    }

    fn mark_unavailable(&self, error: &Error) {
        tracing::warn!(server = %self.name, %error, "MCP server unavailable; retrying in the background");
        *lock(&self.unavailable) = Some(error.to_string());
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the server and completes the handshake within `limit`; its transport answers a
/// response of more than `max_blocks` content blocks locally, before parsing it.
async fn open(
    name: &str,
    spec: &ServerSpec,
    routes: &Arc<Routes>,
    limit: Duration,
    max_blocks: usize,
) -> Result<RunningService<RoleClient, Upstream>, Error> {
    let failed = |message: String| Error::Connect {
        server: name.to_owned(),
        message,
    };
    let handler = Upstream {
        routes: Arc::clone(routes),
    };
    let connecting = async {
        match spec {
            ServerSpec::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                command.envs(env.iter().map(|(k, v)| (k, v)));
                if let Some(cwd) = cwd {
                    command.current_dir(cwd);
                }
                let transport = ChildProcess::spawn(command, Arc::clone(routes), name, max_blocks)
                    .map_err(|e| failed(format!("could not start {program:?}: {e}")))?;
                handler
                    .serve(Routed::new(transport, Arc::clone(routes)))
                    .await
                    .map_err(|e| failed(e.to_string()))
            }
            ServerSpec::Url { url } => {
                #[cfg(feature = "tls")]
                {
                    // ring as the process's rustls provider unless the host chose one.
                    let _ = rustls::crypto::ring::default_provider().install_default();
                }
                let client = http::Bounded::new(Arc::clone(routes), name, max_blocks)
                    .map_err(|e| failed(format!("could not build the HTTP client: {e}")))?;
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    client,
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.as_str(),
                    ),
                );
                let transport = IntoTransport::<RoleClient, _, _>::into_transport(transport);
                handler
                    .serve(Routed::new(transport, Arc::clone(routes)))
                    .await
                    .map_err(|e| failed(e.to_string()))
            }
        }
    };
    tokio::time::timeout(limit, connecting)
        .await
        .map_err(|_| failed(format!("no MCP handshake within {limit:?}")))?
}

/// Lists the tools (within the list limit) and registers them in place of the previous
/// ones. `Ok(Some(_))`: listed, but the first tool named there could not be registered (the
/// others are); every problem is in the warnings.
async fn resync(inner: &Arc<Inner>) -> Result<Option<Error>, Error> {
    let upstream = |message: String| Error::Upstream {
        server: inner.name.clone(),
        message,
    };
    let Some(peer) = inner.peer().await else {
        return Err(upstream("the server is not connected".to_owned()));
    };
    let limit = inner.options.list_timeout;
    // Dropping the listing at its deadline cancels its request upstream.
    let listed = tokio::time::timeout(limit, peer.list_all_tools())
        .await
        .map_err(|_| upstream(format!("no tools/list answer within {limit:?}")))?
        .map_err(|e| upstream(format!("tools/list failed: {e}")))?;
    let mut warnings = Vec::new();
    let mut names = HashSet::new();
    let mut tools: Vec<ImportedTool> = Vec::with_capacity(listed.len());
    for tool in listed {
        if !names.insert(tool.name.clone()) {
            tracing::warn!(server = %inner.name, tool = %tool.name, "the MCP server lists this tool name more than once; only its first listing is imported");
            warnings.push(format!(
                "MCP server {:?} lists the tool {:?} more than once; only its first listing is imported",
                inner.name, tool.name
            ));
            continue;
        }
        let imported = ImportedTool::new(&inner.name, tool);
        if let Some(pins) = &inner.options.pins {
            let listing = serde_json::to_value(imported.listing()).unwrap_or_default();
            if let crate::pins::Verdict::Withhold(reason) =
                pins.check(imported.exposed_name(), &listing)
            {
                warnings.push(reason);
                continue;
            }
        }
        tools.push(imported);
    }
    let mut definitions: Vec<(
        String,
        Result<ToolDefinition, tools_runtime::tools::RegistryError>,
    )> = Vec::with_capacity(tools.len());
    for tool in &tools {
        definitions.push((
            tool.exposed_name().to_owned(),
            tool.definition(
                Arc::downgrade(inner),
                inner.options.call_timeout,
                inner.options.exposure,
                inner.options.customize.as_ref(),
            ),
        ));
    }
    let mut state = lock(&inner.state);
    if inner.stop.is_cancelled() {
        // The import was dropped or shut down while listing: nothing is registered.
        return Err(upstream("the import was shut down".to_owned()));
    }
    // Listed: the server is up (cleared before its tools appear, so whoever sees them sees
    // it available).
    *lock(&inner.unavailable) = None;
    // The old registrations go first: the new ones reuse their names.
    state.registrations.clear();
    let mut first_error = None;
    for (exposed, definition) in definitions {
        let registered = definition.and_then(|def| match &inner.options.scope {
            Some(scope) => scope.register(def),
            None => inner.registry.register(def),
        });
        match registered {
            Ok(registration) => state.registrations.push(registration),
            Err(source) => {
                tracing::warn!(server = %inner.name, tool = %exposed, %source, "imported tool not registered");
                warnings.push(format!(
                    "tool {exposed:?} of MCP server {:?} could not be registered: {source}",
                    inner.name
                ));
                first_error.get_or_insert(Error::Register {
                    server: inner.name.clone(),
                    tool: exposed,
                    source,
                });
            }
        }
    }
    state.tools = tools;
    state.warnings = warnings;
    drop(state);
    Ok(first_error)
}

/// Brings the server up: replaces its connection with a new one and lists its tools, all
/// within the handshake and list limits, one attempt at a time. A connection whose listing
/// failed is closed; a listing that succeeds marks the server available.
async fn attempt(inner: &Arc<Inner>) -> Result<Option<Error>, Error> {
    let _one_at_a_time = inner.restart.lock().await;
    attempt_locked(inner).await
}

/// [`attempt`]; the caller holds `inner.restart`.
async fn attempt_locked(inner: &Arc<Inner>) -> Result<Option<Error>, Error> {
    replace_connection(inner, None).await;
    let service = open(
        &inner.name,
        &inner.spec,
        &inner.routes,
        inner.options.handshake_timeout,
        inner.options.max_content_blocks,
    )
    .await?;
    replace_connection(inner, Some(service)).await;
    let listed = resync(inner).await;
    if listed.is_err() {
        replace_connection(inner, None).await;
    }
    listed
}

/// Installs `service` as the connection; the previous one is closed in the background
/// (within [`CLOSE_GRACE`], then left to its drop).
async fn replace_connection(inner: &Inner, service: Option<RunningService<RoleClient, Upstream>>) {
    let old = std::mem::replace(&mut *inner.conn.write().await, service);
    if let Some(mut old) = old {
        tokio::spawn(async move {
            let _ = old.close_with_timeout(CLOSE_GRACE).await;
        });
    }
}

/// Retries bringing the server up, with backoff, until it is up or the import is dropped.
fn retry_in_background(inner: &Arc<Inner>) {
    let weak: Weak<Inner> = Arc::downgrade(inner);
    let stop = inner.stop.clone();
    let (first, max) = (inner.options.retry_first, inner.options.retry_max);
    tokio::spawn(async move {
        let mut wait = first;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            let Some(inner) = weak.upgrade() else { return };
            match attempt(&inner).await {
                Ok(_) => {
                    tracing::info!(server = %inner.name, tools = lock(&inner.state).tools.len(), "MCP server is up");
                    return;
                }
                Err(error) => inner.mark_unavailable(&error),
            }
            wait = wait.saturating_mul(2).min(max);
        }
    });
}

/// Reconnects when the import allows it and the connection is closed; the peer to use.
pub(crate) async fn peer_for_call(inner: &Arc<Inner>) -> Option<Peer<RoleClient>> {
    if let Some(peer) = inner.peer().await {
        return Some(peer);
    }
    if !inner.options.auto_restart {
        return None;
    }
    let _one_at_a_time = inner.restart.lock().await;
    // Another call may have restarted it meanwhile.
    if let Some(peer) = inner.peer().await {
        return Some(peer);
    }
    if let Err(error) = attempt_locked(inner).await {
        tracing::warn!(server = %inner.name, %error, "automatic restart failed");
    }
    inner.peer().await
}
