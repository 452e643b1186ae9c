//! The gateway: upstream MCP servers imported into one runtime, the configured policy and
//! budgets applied, and the result served to any MCP client.

mod config;
mod path;
mod policy;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tools_runtime::ToolRuntime;
use tools_runtime::hooks::{Hooked, Pipeline};
use tools_runtime::tools::{AgentScope, Registry};

pub use config::{
    ArgumentRule, Decision, GatewayConfig, Language, Pattern, PolicyConfig, ServerConfig,
    UpstreamConfig,
};

use crate::{Error, HttpOptions, ImportOptions, ImportedServer, McpServer};

/// A running gateway: the runtime, its imported servers, its policy, and the MCP front
/// over the served scope. Dropping it disconnects every upstream server.
#[derive(Debug)]
pub struct Gateway {
    runtime: ToolRuntime,
    agent: AgentScope,
    servers: Vec<ImportedServer>,
    front: McpServer,
    _policy: Hooked,
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
    /// # Errors
    ///
    /// [`Error::Runtime`] (the code runtime of the language cannot start, e.g. Python
    /// without its sandbox), [`Error::InvalidServerName`].
    pub async fn start(config: &GatewayConfig) -> Result<Gateway, Error> {
        // The runtime is built over a registry the gateway keeps: the policy and the imports
        // work on it directly.
        let registry = Registry::builder().default_mode(config.mode).build();
        let mut builder = ToolRuntime::builder().pipeline(Pipeline::new(registry.clone()));
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
        let policy = runtime.on_pre_execute(policy::hook(config.policy.clone(), registry.clone()));
        let budgets = Arc::new(config.clone());
        let upstream = config.upstream;
        let mut starting = tokio::task::JoinSet::new();
        for (index, server) in config.servers.iter().enumerate() {
            let budgets = Arc::clone(&budgets);
            let options = ImportOptions::new()
                .auto_restart(server.restart)
                .handshake_timeout(upstream.handshake_timeout)
                .list_timeout(upstream.list_timeout)
                .call_timeout(upstream.call_timeout)
                .max_content_blocks(upstream.max_content_blocks)
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
        let servers: Vec<ImportedServer> = started.into_iter().map(|(_, server)| server).collect();
        let agent = runtime.scope();
        let front = McpServer::new(runtime.clone(), agent.clone())
            .with_info("tools-mcp-gateway", env!("CARGO_PKG_VERSION"));
        Ok(Gateway {
            runtime,
            agent,
            servers,
            front,
            _policy: policy,
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

    /// Serves streamable HTTP at `addr` (endpoint `/mcp`) until `shutdown` is cancelled.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`]: the address cannot be bound, or the server fails.
    pub async fn serve_http(
        &self,
        addr: &str,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Serve {
                message: format!("cannot listen on {addr}: {e}"),
            })?;
        self.front.serve_http(listener, options, shutdown).await
    }
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
