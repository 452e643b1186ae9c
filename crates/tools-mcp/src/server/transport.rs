//! The transports an [`McpServer`] serves on: stdio, streamable HTTP, or any rmcp transport.
//!
//! The streamable-HTTP front is rmcp's [`StreamableHttpService`] with its guards set
//! (`Host` and `Origin`, against DNS rebinding and cross-origin pages), its sessions bounded
//! ([`super::sessions`]), and a middleware that answers what rmcp answers otherwise: a
//! refused session as `503` with a JSON-RPC error, a session's `DELETE` as `200` (`404`
//! for a session that is not open). The middleware also answers `/healthz`, `/readyz` and,
//! with authentication on, the RFC 9728 metadata document, and checks every other
//! request's credential ([`crate::auth`]) before rmcp sees it: the principal goes into the
//! request's extensions, and a session is used only by the principal that opened it.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header, uri::Authority};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::RoleServer;
use rmcp::service::{RunningService, ServiceExt};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::sessions::{BoundedSessions, OPENER, REFUSAL, Refusal};
use super::{McpServer, McpSession};
use crate::Error;
use crate::auth::{AuthError, Authenticator};
use tools_runtime::hooks::Principal;

/// The header of a streamable-HTTP session's id.
const SESSION_HEADER: &str = "mcp-session-id";

/// The loopback hosts whose origins are always accepted (any port, `http` or `https`).
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// How [`McpServer::serve_http`], [`McpServer::router`] and [`McpServer::http_service`]
/// serve streamable HTTP.
///
/// The defaults: sessions on (so `list_changed`, elicitation and progress reach the client
/// between requests), at most [`DEFAULT_MAX_SESSIONS`] of them, each closed after
/// [`DEFAULT_SESSION_IDLE_TIMEOUT`] without activity; the endpoint `/mcp` (where every MCP
/// client looks); only loopback `Host` headers and loopback `Origin` headers accepted (the
/// DNS-rebinding guards the MCP transport specification requires).
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Serve without sessions: every request stands alone, so several gateways can sit
    /// behind a load balancer with no affinity. Progress and elicitation still work within
    /// one request (the response becomes an event stream); `list_changed` cannot be sent.
    pub stateless: bool,
    /// The path of the endpoint.
    pub path: String,
    /// The `Host` values accepted (hostnames, which match any port, or `host:port`);
    /// `None`, or an empty list, keeps rmcp's loopback default (`localhost`, `127.0.0.1`,
    /// `::1`). A gateway behind a load balancer lists its public names here, and the
    /// loopback names too if it should still answer them. A request with another `Host`
    /// is refused with `403`.
    ///
    /// Each name listed here is also an accepted `Origin` host, with either scheme: a page
    /// served under the gateway's own public name calls it from that origin. A hostname
    /// accepts `http://name` and `https://name` on any port, `name:port` only that port.
    pub allowed_hosts: Option<Vec<String>>,
    /// The `Origin` values accepted besides the loopback ones and those of
    /// [`HttpOptions::allowed_hosts`]: each `scheme://host` (the scheme's default port
    /// only: 80 for `http`, 443 for `https`), `scheme://host:port`, or `scheme://host:*`
    /// (any port), with the scheme `http` or `https`. An entry of another form is ignored
    /// with a warning (it accepts nothing; see [`HttpOptions::check_origin`]); `null` is
    /// never accepted.
    ///
    /// A request without `Origin` (every non-browser client) is accepted; a request whose
    /// `Origin` is neither loopback (`http` or `https`, any port, of `localhost`,
    /// `127.0.0.1` or `[::1]`) nor accepted here, `Origin: null` included, is refused with
    /// `403`, whatever its method.
    pub allowed_origins: Vec<String>,
    /// The most sessions open at once (default [`DEFAULT_MAX_SESSIONS`]). An `initialize`
    /// that would open one more is refused with `503 Service Unavailable` and a JSON-RPC
    /// error (`-32603`, "Too many open sessions…"), as the MCP Python SDK's server does;
    /// the open sessions are unaffected. A session frees its slot when it closes: the
    /// client's `DELETE` (before it is answered), its idle timeout, or the server's
    /// shutdown. `0` refuses every session. Unused when [`HttpOptions::stateless`].
    pub max_sessions: usize,
    /// How long a session may go without a request or a message of its own before it is
    /// closed (rmcp's session keep-alive; default [`DEFAULT_SESSION_IDLE_TIMEOUT`]);
    /// `None`: never. Its id then answers `404` and the client has to initialize again.
    /// Unused when [`HttpOptions::stateless`].
    pub session_idle_timeout: Option<Duration>,
    /// Who may call: `None` serves every request that passes the `Host` and `Origin`
    /// guards (loopback use); with an [`Authenticator`], every request but `/healthz`,
    /// `/readyz` and the metadata document needs a credential it accepts, and its
    /// principal reaches every hook ([`tools_runtime::hooks::Execution::principal`]).
    pub auth: Option<Authenticator>,
}

/// The default of [`HttpOptions::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1_000;

/// The default of [`HttpOptions::session_idle_timeout`]: 5 minutes, rmcp's own default.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            path: "/mcp".to_owned(),
            allowed_hosts: None,
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            auth: None,
        }
    }
}

impl HttpOptions {
    /// Whether `origin` is an entry of [`HttpOptions::allowed_origins`] that accepts
    /// something: `http://` or `https://`, a host, an optional port or `:*`, nothing else
    /// (no path, not even `/`, no user, not `null`).
    ///
    /// # Errors
    ///
    /// What is wrong with it.
    pub fn check_origin(origin: &str) -> Result<(), String> {
        origin_entry(origin).map(|_| ())
    }

    /// Every `Origin` accepted, as rmcp's allow-list entries (each with a port or `:*`,
    /// so rmcp's matching of portless entries never applies).
    fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = LOOPBACK
            .iter()
            .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:*")))
            .collect();
        for host in self.allowed_hosts.iter().flatten() {
            origins.extend(host_origins(host));
        }
        for entry in &self.allowed_origins {
            match origin_entry(entry) {
                Ok(entry) => origins.push(entry),
                Err(why) => {
                    tracing::warn!(origin = %entry, %why, "ignored an allowed origin: it accepts nothing");
                }
            }
        }
        origins
    }
}

/// `text` as an rmcp allow-list entry with an explicit port (or `:*`).
fn origin_entry(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Err("the origin `null` is never accepted".to_owned());
    }
    let (base, any_port) = match text.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (text, false),
    };
    let malformed = || format!("{text:?} is not an origin like `https://app.example[:port]`");
    let uri: axum::http::Uri = base.parse().map_err(|_| malformed())?;
    let scheme = uri.scheme_str().map(str::to_ascii_lowercase);
    let default_port = match scheme.as_deref() {
        Some("http") => 80,
        Some("https") => 443,
        _ => return Err(format!("{text:?} is not an http:// or https:// origin")),
    };
    let authority = uri.authority().ok_or_else(malformed)?;
    let bare = uri.path_and_query().is_none_or(|p| p.as_str() == "/")
        && !base.ends_with('/')
        && !authority.as_str().contains('@')
        && !authority.host().is_empty();
    if !bare || (any_port && authority.port().is_some()) {
        return Err(malformed());
    }
    let host = authority.host().to_ascii_lowercase();
    let scheme = scheme.unwrap_or_default();
    Ok(match (any_port, authority.port_u16()) {
        (true, _) => format!("{scheme}://{host}:*"),
        (false, port) => format!("{scheme}://{host}:{}", port.unwrap_or(default_port)),
    })
}

/// The origins of an allowed `Host` entry: `http` and `https`, its port or any.
fn host_origins(host: &str) -> Vec<String> {
    let host = host.trim();
    let (name, port) = match host.parse::<Authority>() {
        Ok(authority) if !authority.as_str().contains('@') => {
            (authority.host().to_owned(), authority.port_u16())
        }
        // A bare IPv6 address (`::1`), as rmcp's host list takes it.
        _ => match host.parse::<std::net::Ipv6Addr>() {
            Ok(ip) => (format!("[{ip}]"), None),
            Err(_) => return Vec::new(),
        },
    };
    if name.is_empty() {
        return Vec::new();
    }
    let port = port.map_or_else(|| "*".to_owned(), |p| p.to_string());
    ["http", "https"]
        .map(|scheme| format!("{scheme}://{name}:{port}"))
        .to_vec()
}

/// A JSON-RPC error without a request id, as the whole response.
fn json_rpc_error(status: StatusCode, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// What the front's middleware works with.
struct Gate {
    sessions: Arc<BoundedSessions>,
    auth: Option<Authenticator>,
    /// The endpoint's path (the resource's path when none is configured).
    path: String,
}

/// The path of the RFC 9728 metadata document (the resource's path follows it).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

impl Gate {
    /// The protected resource's URI and the URL of its metadata document.
    fn resource(&self, auth: &Authenticator, request: &Request) -> (String, String) {
        let resource = auth.config().resource.clone().unwrap_or_else(|| {
            let host = request
                .headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}{}", self.path)
        });
        let metadata = match resource.parse::<axum::http::Uri>() {
            Ok(uri) => {
                let scheme = uri.scheme_str().unwrap_or("http");
                let authority = uri.authority().map_or("localhost", Authority::as_str);
                let path = uri.path().trim_end_matches('/');
                format!("{scheme}://{authority}{METADATA_PATH}{path}")
            }
            Err(_) => METADATA_PATH.to_owned(),
        };
        (resource, metadata)
    }

    /// The answer to a request whose credential was refused.
    fn challenge(&self, auth: &Authenticator, request: &Request, error: &AuthError) -> Response {
        let (_, metadata) = self.resource(auth, request);
        let (status, challenge) = match error {
            AuthError::Missing => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\""),
            ),
            AuthError::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata}\"",
                    why.replace(['"', '\\'], "'")
                ),
            ),
            AuthError::Unavailable(why) => {
                tracing::warn!(%why, "a token could not be checked");
                return json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, -32_603, why);
            }
        };
        let mut response = json_rpc_error(status, -32_001, &format!("Unauthorized: {error}"));
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// A plain-text answer.
fn text(status: StatusCode, body: &'static str) -> Response {
    (status, body).into_response()
}

/// The front's middleware: see the module's doc.
async fn guard(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path == "/healthz" {
        return text(StatusCode::OK, "ok\n");
    }
    if path == "/readyz" {
        return match &gate.auth {
            Some(auth) if !auth.is_ready() => text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the issuer's keys are not fetched\n",
            ),
            _ => text(StatusCode::OK, "ready\n"),
        };
    }
    let mut principal: Option<Arc<Principal>> = None;
    if let Some(auth) = &gate.auth {
        if path == METADATA_PATH || path.starts_with(&format!("{METADATA_PATH}/")) {
            let (resource, _) = gate.resource(auth, &request);
            let body = auth.metadata(&resource).to_string();
            return (
                StatusCode::OK,
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body,
            )
                .into_response();
        }
        let credentials = request.headers().get_all(header::AUTHORIZATION);
        match auth
            .authenticate(credentials.iter().map(HeaderValue::as_bytes))
            .await
        {
            Ok(who) => principal = Some(Arc::new(who)),
            Err(error) => return gate.challenge(auth, &request, &error),
        }
    }
    let sessions = &gate.sessions;
    if let Some(id) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
        && !sessions.may_use(id, principal.as_deref())
    {
        return json_rpc_error(
            StatusCode::FORBIDDEN,
            -32_600,
            "Forbidden: this session was opened by another principal",
        );
    }
    if let Some(principal) = &principal {
        request.extensions_mut().insert(Arc::clone(principal));
    }
    let deleted = (request.method() == Method::DELETE)
        .then(|| request.headers().get(SESSION_HEADER))
        .flatten()
        .and_then(|id| id.to_str().ok())
        .map(|id| sessions.is_open(id));
    let refusal = Refusal::default();
    let mut response = OPENER
        .scope(principal, REFUSAL.scope(refusal.clone(), next.run(request)))
        .await;
    if refusal.is_marked() {
        return json_rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32_603,
            &format!(
                "Too many open sessions: the server has reached its limit of {} sessions; try again when one has ended",
                sessions.max()
            ),
        );
    }
    // rmcp answers a session's DELETE with 202, which the MCP Python SDK reports as a
    // failed termination (it reads 200 and 204), and closing a session that is not open
    // is no error to it.
    if let Some(was_open) = deleted
        && response.status() == StatusCode::ACCEPTED
    {
        if !was_open {
            return json_rpc_error(StatusCode::NOT_FOUND, -32_600, "Session not found");
        }
        *response.status_mut() = StatusCode::OK;
    }
    response
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

    /// rmcp's service with the guards and limits of `options`, and its session manager.
    fn streamable(
        &self,
        options: &HttpOptions,
        shutdown: CancellationToken,
    ) -> (
        StreamableHttpService<McpSession, BoundedSessions>,
        Arc<Gate>,
    ) {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!options.stateless)
            .with_cancellation_token(shutdown)
            .with_allowed_origins(options.origins())
            .enforce_origin_validation();
        // An empty list would be rmcp's "any host": it stays the loopback default.
        if let Some(hosts) = options.allowed_hosts.as_ref().filter(|h| !h.is_empty()) {
            config = config.with_allowed_hosts(hosts.clone());
        }
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = options.session_idle_timeout;
        let sessions = Arc::new(BoundedSessions::new(local, options.max_sessions));
        let server = self.clone();
        let service =
            StreamableHttpService::new(move || Ok(server.session()), Arc::clone(&sessions), config);
        let gate = Arc::new(Gate {
            sessions,
            auth: options.auth.clone(),
            path: options.path.clone(),
        });
        (service, gate)
    }

    /// The streamable-HTTP endpoint as a tower service that answers on every path (an
    /// [`axum::Router`]): mount it in any axum or hyper server (in axum, with
    /// `nest_service` or `fallback_service`). Each MCP session gets its own
    /// [`McpSession`]; all serve this scope. Cancelling `shutdown` ends every session.
    /// It is rmcp's `StreamableHttpService` with the guards and limits of `options` (see
    /// [`HttpOptions`]).
    pub fn http_service(&self, options: &HttpOptions, shutdown: CancellationToken) -> axum::Router {
        let (service, gate) = self.streamable(options, shutdown);
        axum::Router::new()
            .fallback_service(service)
            .layer(axum::middleware::from_fn_with_state(gate, guard))
    }

    /// An axum router with the endpoint at `options.path` (as [`McpServer::http_service`]).
    pub fn router(&self, options: &HttpOptions, shutdown: CancellationToken) -> axum::Router {
        let (service, gate) = self.streamable(options, shutdown);
        axum::Router::new()
            .route_service(&options.path, service)
            .layer(axum::middleware::from_fn_with_state(gate, guard))
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
        // Every answer goes out at once: without TCP_NODELAY, the second write of an event
        // stream waits for the client's delayed ACK (40 ms on Linux) under Nagle's algorithm.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::warn!(error = %e, "TCP_NODELAY could not be set on a connection");
            }
        });
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .map_err(|e| Error::Serve {
                message: e.to_string(),
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn origin_entries_get_an_explicit_port() {
        for (text, entry) in [
            ("https://app.example", "https://app.example:443"),
            ("http://app.example", "http://app.example:80"),
            ("HTTPS://App.Example:8443", "https://app.example:8443"),
            ("https://app.example:*", "https://app.example:*"),
            ("http://[::1]:3000", "http://[::1]:3000"),
            (" https://app.example ", "https://app.example:443"),
        ] {
            assert_eq!(origin_entry(text).as_deref(), Ok(entry), "{text}");
        }
    }

    #[test]
    fn origin_entries_that_accept_nothing_are_refused() {
        for text in [
            "null",
            "NULL",
            "*",
            "",
            "app.example",
            "ftp://app.example",
            "https://app.example/",
            "https://app.example/path",
            "https://app.example//",
            "https://app.example?q",
            "https://user@app.example",
            "https://app.example:8443:*",
            "https://",
        ] {
            assert!(origin_entry(text).is_err(), "{text:?} accepted");
            assert!(
                HttpOptions::check_origin(text).is_err(),
                "{text:?} accepted"
            );
        }
    }

    #[test]
    fn allowed_hosts_are_origins_with_either_scheme() {
        assert_eq!(
            host_origins("gw.example"),
            ["http://gw.example:*", "https://gw.example:*"]
        );
        assert_eq!(
            host_origins("gw.example:8080"),
            ["http://gw.example:8080", "https://gw.example:8080"]
        );
        assert_eq!(host_origins("::1"), ["http://[::1]:*", "https://[::1]:*"]);
        assert_eq!(
            host_origins("[::1]:80"),
            ["http://[::1]:80", "https://[::1]:80"]
        );
        assert!(host_origins("").is_empty());
        assert!(host_origins("a b").is_empty());
        let options = HttpOptions {
            allowed_hosts: Some(vec!["gw.example".into()]),
            allowed_origins: vec!["https://app.example".into(), "null".into()],
            ..HttpOptions::default()
        };
        let origins = options.origins();
        assert!(origins.contains(&"http://localhost:*".to_owned()));
        assert!(origins.contains(&"https://gw.example:*".to_owned()));
        assert!(origins.contains(&"https://app.example:443".to_owned()));
        assert!(!origins.iter().any(|o| o.contains("null")));
    }
}
