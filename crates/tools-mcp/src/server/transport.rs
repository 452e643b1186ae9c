//! The transports an [`McpServer`] serves on: stdio, streamable HTTP, or any rmcp transport.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RunningService, ServiceExt};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{McpServer, McpSession};
use crate::Error;

/// How [`McpServer::serve_http`] and [`McpServer::http_service`] serve streamable HTTP.
///
/// The defaults: sessions on (so `list_changed`, elicitation and progress reach the client
/// between requests), the endpoint `/mcp` (where every MCP client looks), and only loopback
/// `Host` headers accepted (rmcp's DNS-rebinding guard).
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Serve without sessions: every request stands alone, so several gateways can sit
    /// behind a load balancer with no affinity. Progress and elicitation still work within
    /// one request (the response becomes an event stream); `list_changed` cannot be sent.
    pub stateless: bool,
    /// The path of the endpoint.
    pub path: String,
    /// The `Host` values accepted (hostnames or `host:port`); `None` keeps rmcp's loopback
    /// default. A gateway behind a load balancer lists its public names here.
    pub allowed_hosts: Option<Vec<String>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            path: "/mcp".to_owned(),
            allowed_hosts: None,
        }
    }
}

impl McpServer {
    /// Serves one MCP session on `transport` (any rmcp transport: a duplex pipe, a child's
    /// stdio, a socket) and returns the running service.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the MCP handshake fails.
    pub async fn serve<T, E, A>(
        &self,
        transport: T,
    ) -> Result<RunningService<RoleServer, McpSession>, Error>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.session()
            .serve(transport)
            .await
            .map_err(|e| Error::Serve {
                message: e.to_string(),
            })
    }

    /// Serves one MCP session on this process's stdin and stdout until the client closes
    /// them (logs belong on stderr).
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the handshake or the session fails.
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        let running = self.serve(rmcp::transport::stdio()).await?;
        running.waiting().await.map_err(|e| Error::Serve {
            message: e.to_string(),
        })?;
        Ok(())
    }

    /// The streamable-HTTP endpoint as a tower service (rmcp's `StreamableHttpService`):
    /// mount it in any axum or hyper server. Each MCP session gets its own
    /// [`McpSession`]; all serve this scope. Cancelling `shutdown` ends every session.
    pub fn http_service(
        &self,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> StreamableHttpService<McpSession, LocalSessionManager> {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!options.stateless)
            .with_cancellation_token(shutdown);
        if let Some(hosts) = &options.allowed_hosts {
            config = config.with_allowed_hosts(hosts.clone());
        }
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.session()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// An axum router with the endpoint at `options.path`.
    pub fn router(&self, options: &HttpOptions, shutdown: CancellationToken) -> axum::Router {
        axum::Router::new().route_service(&options.path, self.http_service(options, shutdown))
    }

    /// Serves streamable HTTP on `listener` until `shutdown` is cancelled.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the server fails.
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let router = self.router(options, shutdown.clone());
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .map_err(|e| Error::Serve {
                message: e.to_string(),
            })
    }
}
