//! The client import: an MCP server's tools registered as ordinary tool definitions.
//!
//! Each tool of the server becomes a [`ToolDefinition`] named `<server>__<tool>` (the
//! original name is what reaches the server), so guards, hooks, approval, timeouts, batch
//! scheduling and Code Mode apply to it like to any other tool:
//!
//! - its `inputSchema` is a foreign schema (decision 26): shown verbatim, validated by
//!   every keyword the subset enforces, marked when not fully validated;
//! - its `outputSchema`, when it has one, is the output contract (also foreign) and the
//!   value is the server's `structuredContent`; without one the value is the server's
//!   `content` array and the model sees those blocks unchanged (images too);
//! - `readOnlyHint: true` makes it concurrency-safe; every hint is kept
//!   ([`ToolDefinition::hints`]), so a host can map `destructiveHint` to `ask` with a
//!   pre-execute hook;
//! - cancelling the call (its token, a timeout budget) drops the request, and rmcp sends
//!   `notifications/cancelled`; the server's progress reaches the body's
//!   [`RunContext::report_progress`];
//! - `notifications/tools/list_changed` re-syncs the tools; a server that exits fails every
//!   in-flight call with `MCP_SERVER_UNAVAILABLE`, and [`ImportedServer::restart`] (or
//!   [`ImportOptions::auto_restart`]) reconnects it.

mod handler;
mod name;
mod tool;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::service::{RunningService, ServiceExt};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;
use tools_runtime::{AgentScope, Registration, Registry, ToolDefinition};

pub use name::{SEPARATOR, check_server_name, exposed_name, split_exposed_name};
pub use tool::ImportedTool;

use crate::Error;
use handler::{Routed, Routes, Upstream};
use rmcp::transport::IntoTransport;

/// How to reach an MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerSpec {
    /// A child process speaking MCP on its stdin and stdout (stderr is inherited).
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: Vec<(String, String)>,
        /// Its working directory (default: ours).
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint (`http://`; `https://` needs the `tls` feature).
    Url {
        /// The endpoint's URL.
        url: String,
    },
}

impl ServerSpec {
    /// A child process: `program` with `args`.
    pub fn command(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> ServerSpec {
        ServerSpec::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// A streamable-HTTP endpoint.
    pub fn url(url: impl Into<String>) -> ServerSpec {
        ServerSpec::Url { url: url.into() }
    }

    /// The same child process with `key=value` added to its environment (no effect on a URL).
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> ServerSpec {
        if let ServerSpec::Command { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The same child process started in `dir` (no effect on a URL).
    #[must_use]
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> ServerSpec {
        if let ServerSpec::Command { cwd, .. } = &mut self {
            *cwd = Some(dir.into());
        }
        self
    }
}

/// Adjusts an imported tool's definition before it is registered: add a timeout, hints, a
/// presenter (see [`ImportOptions::customize`]).
pub type Customize = Arc<
    dyn Fn(
            &ImportedTool,
            tools_runtime::crates::registry::DefinitionBuilder,
        ) -> tools_runtime::crates::registry::DefinitionBuilder
        + Send
        + Sync,
>;

/// How an [`ImportedServer`] imports.
#[derive(Clone)]
#[must_use]
pub struct ImportOptions {
    scope: Option<AgentScope>,
    customize: Option<Customize>,
    auto_restart: bool,
    handshake_timeout: Duration,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            scope: None,
            customize: None,
            auto_restart: false,
            handshake_timeout: Duration::from_secs(30),
        }
    }
}

impl ImportOptions {
    /// Global registration, no customisation, no automatic restart, a 30 s handshake limit.
    pub fn new() -> ImportOptions {
        ImportOptions::default()
    }

    /// Registers the tools into `scope` instead of globally.
    pub fn into_scope(mut self, scope: AgentScope) -> ImportOptions {
        self.scope = Some(scope);
        self
    }

    /// Adjusts each definition before registration.
    pub fn customize(
        mut self,
        customize: impl Fn(
            &ImportedTool,
            tools_runtime::crates::registry::DefinitionBuilder,
        ) -> tools_runtime::crates::registry::DefinitionBuilder
        + Send
        + Sync
        + 'static,
    ) -> ImportOptions {
        self.customize = Some(Arc::new(customize));
        self
    }

    /// Reconnects a server found disconnected when a call arrives (once per call).
    pub fn auto_restart(mut self, on: bool) -> ImportOptions {
        self.auto_restart = on;
        self
    }

    /// How long starting a server and its MCP handshake may take.
    pub fn handshake_timeout(mut self, limit: Duration) -> ImportOptions {
        self.handshake_timeout = limit;
        self
    }
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("scope", &self.scope)
            .field("customize", &self.customize.is_some())
            .field("auto_restart", &self.auto_restart)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish()
    }
}

/// An MCP server whose tools are registered in a [`Registry`]. Dropping it unregisters its
/// tools and disconnects the server (a child process is killed); a call still running ends
/// with `MCP_SERVER_UNAVAILABLE`.
///
/// # Examples
///
/// ```no_run
/// use tools_mcp::{ImportOptions, ImportedServer, ServerSpec};
/// use tools_runtime::ToolRuntime;
///
/// # async fn import() -> Result<(), tools_mcp::Error> {
/// let runtime = ToolRuntime::new();
/// let time = ImportedServer::connect(
///     "time",
///     ServerSpec::command("uvx", ["mcp-server-time"]),
///     runtime.registry(),
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
    stop: CancellationToken,
}

#[derive(Default)]
struct Registered {
    tools: Vec<ImportedTool>,
    registrations: Vec<Registration>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl ImportedServer {
    /// Starts (or reaches) the server, completes the MCP handshake, lists its tools and
    /// registers them; then keeps them in sync with the server's `list_changed`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidServerName`], [`Error::Connect`] (start, handshake or its time
    /// limit), [`Error::Upstream`] (`tools/list` failed), [`Error::Register`].
    pub async fn connect(
        name: &str,
        spec: ServerSpec,
        registry: &Registry,
        options: ImportOptions,
    ) -> Result<ImportedServer, Error> {
        check_server_name(name)?;
        let routes = Arc::new(Routes::default());
        let service = open(name, &spec, &routes, options.handshake_timeout).await?;
        let inner = Arc::new(Inner {
            name: name.to_owned(),
            spec,
            registry: registry.clone(),
            options,
            routes,
            conn: tokio::sync::RwLock::new(Some(service)),
            restart: tokio::sync::Mutex::new(()),
            state: Mutex::new(Registered::default()),
            stop: CancellationToken::new(),
        });
        let server = ImportedServer { inner };
        server.resync().await?;
        server.watch_list_changes();
        Ok(server)
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

    /// Whether the connection is open.
    pub async fn is_connected(&self) -> bool {
        self.inner.peer().await.is_some()
    }

    /// Lists the server's tools again and replaces the registered ones.
    ///
    /// # Errors
    ///
    /// [`Error::Upstream`] when the server is not connected or `tools/list` fails (the
    /// registered tools stay); [`Error::Register`] for the first tool that could not be
    /// registered (the others are).
    pub async fn resync(&self) -> Result<(), Error> {
        resync(&self.inner).await
    }

    /// Disconnects the server (a child is killed) and connects it again, then re-syncs.
    /// In-flight calls of the old connection fail with `MCP_SERVER_UNAVAILABLE`.
    ///
    /// # Errors
    ///
    /// As [`ImportedServer::connect`].
    pub async fn restart(&self) -> Result<(), Error> {
        restart(&self.inner).await
    }

    /// Disconnects the server and unregisters its tools.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        if let Some(mut service) = self.inner.conn.write().await.take() {
            let _ = service.close().await;
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
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the server and completes the handshake within `limit`.
async fn open(
    name: &str,
    spec: &ServerSpec,
    routes: &Arc<Routes>,
    limit: Duration,
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
                let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| failed(format!("could not start {program:?}: {e}")))?;
                let transport = IntoTransport::<RoleClient, _, _>::into_transport(transport);
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
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
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

async fn resync(inner: &Arc<Inner>) -> Result<(), Error> {
    let upstream = |message: String| Error::Upstream {
        server: inner.name.clone(),
        message,
    };
    let Some(peer) = inner.peer().await else {
        return Err(upstream("the server is not connected".to_owned()));
    };
    let listed = peer
        .list_all_tools()
        .await
        .map_err(|e| upstream(format!("tools/list failed: {e}")))?;
    let tools: Vec<ImportedTool> = listed
        .into_iter()
        .map(|t| ImportedTool::new(&inner.name, t))
        .collect();
    let mut definitions: Vec<(String, Result<ToolDefinition, tools_runtime::RegistryError>)> =
        Vec::with_capacity(tools.len());
    for tool in &tools {
        definitions.push((
            tool.exposed_name().to_owned(),
            tool.definition(Arc::downgrade(inner), inner.options.customize.as_ref()),
        ));
    }
    let mut state = lock(&inner.state);
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
                first_error.get_or_insert(Error::Register {
                    server: inner.name.clone(),
                    tool: exposed,
                    source,
                });
            }
        }
    }
    state.tools = tools;
    drop(state);
    first_error.map_or(Ok(()), Err)
}

async fn restart(inner: &Arc<Inner>) -> Result<(), Error> {
    let _one_at_a_time = inner.restart.lock().await;
    restart_locked(inner).await
}

/// Reconnects and re-syncs; the caller holds `inner.restart`.
async fn restart_locked(inner: &Arc<Inner>) -> Result<(), Error> {
    {
        let mut conn = inner.conn.write().await;
        if let Some(mut old) = conn.take() {
            let _ = old.close().await;
        }
        *conn = Some(
            open(
                &inner.name,
                &inner.spec,
                &inner.routes,
                inner.options.handshake_timeout,
            )
            .await?,
        );
    }
    resync(inner).await
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
    if let Err(error) = restart_locked(inner).await {
        tracing::warn!(server = %inner.name, %error, "automatic restart failed");
    }
    inner.peer().await
}
