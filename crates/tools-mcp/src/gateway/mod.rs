//! The gateway: upstream MCP servers imported into one runtime, the configured policy and
//! budgets applied, and the result served to any MCP client.

mod audit_hook;
mod config;
mod path;
mod policy;
mod search;
mod sections;
mod upstreams;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tools_registry::{Exposure, SEARCH_TOOLS};
use tools_runtime::ToolRuntime;
use tools_runtime::hooks::{Hooked, Pipeline};
use tools_runtime::tools::{AgentScope, Registration, Registry};

pub use config::{
    ArgumentRule, Decision, GatewayConfig, IdentityRule, Language, Pattern, PolicyConfig,
    ServerConfig, UpstreamConfig, Who,
};

use crate::auth::Authenticator;
use crate::{Error, HttpOptions, ImportOptions, ImportedServer, McpServer};

/// A running gateway: the runtime, its imported servers, its policy, and the MCP front
/// over the served scope. Dropping it disconnects every upstream server.
#[derive(Debug)]
pub struct Gateway {
    runtime: ToolRuntime,
    agent: AgentScope,
    servers: Arc<Vec<ImportedServer>>,
    front: McpServer,
    auth: Option<Authenticator>,
    policy: policy::SharedPolicy,
    limits: Arc<arc_swap::ArcSwap<crate::limits::Limits>>,
    audit: Option<crate::audit::AuditLog>,
    pins: Option<crate::pins::Pins>,
    _hooks: Vec<Hooked>,
    /// The deferral rules and `search_tools`, when anything is deferred.
    _deferral: Vec<Registration>,
}

impl Gateway {
    /// Builds the runtime `config` describes, installs the policy, and imports every server
    /// with [`ImportedServer::start`], all at once: it returns when each server is up or
    /// its first attempt failed, which takes at most `[upstream] handshake_timeout` plus
    /// `list_timeout`. A server that is not up is logged with the reason and retried in
    /// the background; its tools appear (and every client session gets
    /// `notifications/tools/list_changed`) when it comes up. One server never keeps the
    /// gateway from serving the others.
    ///
    /// When anything is deferred ([`GatewayConfig::defers`]), the deferred tools are
    /// registered as [`Exposure::Deferred`] (a server's `deferred = true` on its
    /// definitions, the top-level globs as a rule of the registry), and `search_tools` is
    /// registered beside them: each MCP session's searches load what they find into that
    /// session's own scope.
    ///
    /// # Errors
    ///
    /// [`Error::Runtime`] (the code runtime of the language cannot start, e.g. Python
    /// without its sandbox, or a deferral rule the registry refuses),
    /// [`Error::InvalidServerName`].
    pub async fn start(config: &GatewayConfig) -> Result<Gateway, Error> {
        // The runtime is built over a registry the gateway keeps: the policy and the imports
        // work on it directly.
        let registry = Registry::builder().default_mode(config.mode).build();
        let pipeline = Pipeline::new(registry.clone());
        let deferral = deferral(config, &registry, &pipeline)?;
        let mut builder = ToolRuntime::builder().pipeline(pipeline);
        if let Some(n) = config.concurrency {
            builder = builder.max_parallel_tool_calls(n).max_parallel_sub_calls(n);
        }
        if let Some(bytes) = config.output_budget {
            builder = builder.output_budget(tools_runtime::budget::OutputBudget::bytes(bytes));
        }
        if config.mode.offers_run_code() {
            builder = builder.code_runtime(code_runtime(config.language)?);
        }
        let runtime = builder.build()?;
        let auth = match &config.auth {
            None => None,
            Some(auth) => {
                let auth = Authenticator::new(auth.clone())?;
                // A JWKS that is down is said now; JWTs get 503 until its keys can be had.
                if let Err(why) = auth.refresh().await {
                    tracing::warn!(%why, "JWTs cannot be checked until the JWKS can be fetched");
                }
                Some(auth)
            }
        };
        let shared_policy: policy::SharedPolicy =
            Arc::new(arc_swap::ArcSwap::from_pointee(config.policy.clone()));
        let mut hooks = Vec::new();
        let audit = match &config.audit {
            None => None,
            Some(audit) => {
                let log = crate::audit::AuditLog::open(audit.clone())?;
                let state = audit_hook::Audit::new(
                    log.clone(),
                    Arc::clone(&shared_policy),
                    registry.clone(),
                );
                // First of the pre-execute hooks, so the start of every call is noted.
                hooks.push(runtime.on_pre_execute_with(
                    tools_runtime::hooks::HookOptions::new().prepend(),
                    state.hook(),
                ));
                hooks.push(runtime.on_result(move |exec, result| state.observe(exec, result)));
                Some(log)
            }
        };
        let limits = Arc::new(arc_swap::ArcSwap::from_pointee(crate::limits::Limits::new(
            config.limits.clone(),
        )));
        hooks.push(runtime.on_execute(crate::limits::hook(Arc::clone(&limits))));
        if config.otel.as_ref().is_some_and(|o| o.capture_content) {
            hooks.push(runtime.on_result(record_content));
        }
        hooks.push(
            runtime.on_pre_execute(policy::hook(Arc::clone(&shared_policy), registry.clone())),
        );
        let budgets = Arc::new(config.clone());
        let pins = config
            .pins
            .as_ref()
            .map(|(path, on_change)| crate::pins::Pins::open(path, *on_change));
        if let Some(pins) = &pins {
            hooks.push(runtime.on_pre_execute(pins.hook()));
        }
        let upstream = config.upstream;
        let mut starting = tokio::task::JoinSet::new();
        for (index, server) in config.servers.iter().enumerate() {
            let budgets = Arc::clone(&budgets);
            let deferred = server.deferred;
            let mut options = ImportOptions::new();
            if let Some(pins) = &pins {
                options = options.pins(pins.clone());
            }
            let options = options
                .auto_restart(server.restart)
                .handshake_timeout(upstream.handshake_timeout)
                .list_timeout(upstream.list_timeout)
                .call_timeout(upstream.call_timeout)
                .max_content_blocks(upstream.max_content_blocks)
                .exposure(if deferred {
                    Exposure::Deferred
                } else {
                    Exposure::Direct
                })
                .customize(
                    move |tool, builder| match budgets.budget_of(tool.exposed_name()) {
                        Some(budget) => builder.timeout(budget),
                        None => builder,
                    },
                );
            let (name, spec, registry) =
                (server.name.clone(), server.spec.clone(), registry.clone());
            starting.spawn(async move {
                let started = ImportedServer::start(&name, spec, &registry, options).await;
                (index, started)
            });
        }
        let mut started = Vec::with_capacity(config.servers.len());
        while let Some(joined) = starting.join_next().await {
            let (index, server) = joined.map_err(|e| Error::Serve {
                message: format!("starting an upstream server failed: {e}"),
            })?;
            started.push((index, server?));
        }
        started.sort_by_key(|(index, _)| *index);
        let servers: Arc<Vec<ImportedServer>> =
            Arc::new(started.into_iter().map(|(_, server)| server).collect());
        let agent = runtime.scope();
        let upstreams = upstreams::Upstreams::new(
            Arc::clone(&servers),
            Arc::clone(&shared_policy),
            registry.clone(),
            audit.clone(),
        );
        let front = McpServer::new(runtime.clone(), agent.clone())
            .with_info("tools-mcp-gateway", env!("CARGO_PKG_VERSION"))
            .with_passthrough(Arc::new(upstreams));
        Ok(Gateway {
            runtime,
            agent,
            servers,
            front,
            auth,
            policy: shared_policy,
            limits,
            audit,
            pins,
            _hooks: hooks,
            _deferral: deferral,
        })
    }

    /// The runtime the gateway serves.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.runtime
    }

    /// The scope served to clients.
    pub fn agent(&self) -> &AgentScope {
        &self.agent
    }

    /// The imported servers.
    pub fn servers(&self) -> &[ImportedServer] {
        &self.servers
    }

    /// The MCP front.
    pub fn front(&self) -> &McpServer {
        &self.front
    }

    /// Serves one client on stdin and stdout until it disconnects.
    ///
    /// # Errors
    ///
    /// As [`McpServer::serve_stdio`].
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        self.front.serve_stdio().await
    }

    /// Puts the policy, the limits and the pins of `config` in force for the calls that
    /// start from now on (sessions stay open; calls running finish under what they started
    /// with; the new limits' counters start at zero), and lists again the servers whose
    /// tools the pins held back (a tool approved since is registered, and clients get
    /// `list_changed`). The servers, `[auth]`, `[audit]` and the pin file's path are not
    /// reloaded: they need a restart.
    pub async fn reload(&self, config: &GatewayConfig) {
        self.policy.store(Arc::new(config.policy.clone()));
        self.limits
            .store(Arc::new(crate::limits::Limits::new(config.limits.clone())));
        let Some(pins) = &self.pins else {
            return;
        };
        let on_change = config
            .pins
            .as_ref()
            .map_or_else(Default::default, |(_, c)| *c);
        if let Err(why) = pins.reload(on_change) {
            tracing::error!(%why, "the pin file cannot be read: every imported tool is withheld");
        }
        // The servers whose tools were held back list them again, against the new pins.
        let held: Vec<String> = pins.held().into_iter().map(|(name, _)| name).collect();
        for server in self.servers.iter() {
            let prefix = format!("{}{}", server.name(), crate::SEPARATOR);
            if held.iter().any(|name| name.starts_with(&prefix))
                && let Err(e) = server.resync().await
            {
                tracing::warn!(server = %server.name(), error = %e, "listing again after a reload failed");
            }
        }
    }

    /// Disconnects every upstream server gracefully, all at once: a child's input is
    /// closed and it is given a moment to exit before it is killed; an HTTP server's
    /// session is closed. The gateway serves no tools afterwards.
    pub async fn shutdown(&self) {
        let closing = self.servers.iter().map(ImportedServer::shutdown);
        futures_util::future::join_all(closing).await;
    }

    /// The pins, if `[pins]` is configured.
    pub fn pins(&self) -> Option<&crate::pins::Pins> {
        self.pins.as_ref()
    }

    /// The audit log, if `[audit]` is configured.
    pub fn audit(&self) -> Option<&crate::audit::AuditLog> {
        self.audit.as_ref()
    }

    /// Who may call over HTTP (`[auth]`), if anyone is asked.
    pub fn authenticator(&self) -> Option<&Authenticator> {
        self.auth.as_ref()
    }

    /// Binds `addr` for [`Gateway::serve_http_on`], refusing a non-loopback address when no
    /// `[auth]` is configured unless `insecure_no_auth`.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`]: the address cannot be bound, or is not loopback and nobody would
    /// be asked who calls.
    pub async fn bind(
        &self,
        addr: &str,
        insecure_no_auth: bool,
    ) -> Result<tokio::net::TcpListener, Error> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Serve {
                message: format!("cannot listen on {addr}: {e}"),
            })?;
        let local = listener.local_addr().map_err(|e| Error::Serve {
            message: format!("cannot read the address of {addr}: {e}"),
        })?;
        if self.auth.is_none() && !local.ip().is_loopback() && !insecure_no_auth {
            return Err(Error::Serve {
                message: format!(
                    "refusing to serve {local} without authentication: any process that reaches it could call every tool; configure [auth] or pass --insecure-no-auth"
                ),
            });
        }
        Ok(listener)
    }

    /// Serves streamable HTTP at `addr` (endpoint `/mcp`) until `shutdown` is cancelled,
    /// with the gateway's `[auth]` (see [`Gateway::bind`] for what is refused).
    ///
    /// # Errors
    ///
    /// [`Error::Serve`]: the address cannot be bound or is refused, or the server fails.
    pub async fn serve_http(
        &self,
        addr: &str,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let listener = self.bind(addr, false).await?;
        self.serve_http_on(listener, options, shutdown).await
    }

    /// Serves streamable HTTP on `listener` until `shutdown` is cancelled; the gateway's
    /// `[auth]` replaces any authenticator in `options`.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`]: the server fails.
    pub async fn serve_http_on(
        &self,
        listener: tokio::net::TcpListener,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let mut options = options.clone();
        if self.auth.is_some() {
            options.auth.clone_from(&self.auth);
        }
        self.front.serve_http(listener, &options, shutdown).await
    }
}

/// What `config` defers, in force on `registry`: the top-level `deferred` globs as a
/// registry rule, then `search_tools` declared [`Exposure::NativeOnly`] (so no glob can
/// defer the search itself, and a Code Mode program uses its SDK's own search helper
/// instead) and registered, its body reaching the registry through `pipeline`
/// without owning it. Nothing when nothing is deferred.
fn deferral(
    config: &GatewayConfig,
    registry: &Registry,
    pipeline: &Pipeline,
) -> Result<Vec<Registration>, Error> {
    if !config.defers() {
        return Ok(Vec::new());
    }
    let refused = |e: tools_runtime::tools::RegistryError| Error::Runtime(e.into());
    let mut held = Vec::new();
    if !config.deferred.is_empty() {
        let globs = config.deferred.iter().map(config::Pattern::as_str);
        held.push(
            registry
                .expose(globs, Exposure::Deferred)
                .map_err(refused)?,
        );
    }
    held.push(
        registry
            .expose([SEARCH_TOOLS], Exposure::NativeOnly)
            .map_err(refused)?,
    );
    let weak = pipeline.downgrade();
    let search = search::definition(move || weak.upgrade().map(|p| p.registry().clone()))
        .map_err(refused)?;
    held.push(registry.register(search).map_err(refused)?);
    Ok(held)
}

/// Records a call's arguments and result on its `execute_tool` span (`[otel]
/// capture_content`): the sub-call's own span, or for a call the runtime was given the
/// span it runs in.
fn record_content(exec: &tools_runtime::hooks::Execution, result: &tools_runtime::ToolResult) {
    let span = match exec.span() {
        Some(span) => span.clone(),
        None if exec.parent().is_none() => tracing::Span::current(),
        None => return,
    };
    if span.is_disabled() {
        return;
    }
    let arguments = serde_json::to_string(exec.arguments().as_value()).unwrap_or_default();
    span.record("gen_ai.tool.call.arguments", arguments);
    let result = serde_json::to_string(&result.to_json()).unwrap_or_default();
    span.record("gen_ai.tool.call.result", result);
}

/// The code runtime of `language`, if this build has its engine.
fn code_runtime(
    language: Language,
) -> Result<Arc<dyn tools_runtime::codemode::CodeRuntime>, Error> {
    let limits = tools_runtime::codemode::RuntimeLimits::default();
    let unavailable = |what: &str| Error::Serve {
        message: format!("{what} Code Mode is not built into this binary (feature missing)"),
    };
    match language {
        #[cfg(feature = "quickjs")]
        Language::Typescript => tools_runtime::codemode::QuickJsRuntime::new(limits)
            .map(|r| Arc::new(r) as Arc<dyn tools_runtime::codemode::CodeRuntime>)
            .map_err(|e| Error::Serve {
                message: format!("the TypeScript runtime cannot start: {e}"),
            }),
        #[cfg(feature = "python")]
        Language::Python => tools_runtime::codemode::PythonRuntime::new(limits)
            .map(|r| Arc::new(r) as Arc<dyn tools_runtime::codemode::CodeRuntime>)
            .map_err(|e| Error::Serve {
                message: format!("the Python runtime cannot start: {e}"),
            }),
        #[allow(unreachable_patterns)]
        other => {
            let _ = limits;
            Err(unavailable(match other {
                Language::Typescript => "TypeScript",
                Language::Python => "Python",
            }))
        }
    }
}
