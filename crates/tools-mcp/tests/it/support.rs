//! Shared helpers: tools, an rmcp test client, and a connection over an in-process pipe.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, ServiceExt};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer};
use serde::Deserialize;
use serde_json::json;
use tools_mcp::{McpServer, McpSession};
use tools_runtime::prelude::*;

/// Fails a test that would otherwise wait forever; never needed for it to pass.
pub(crate) const GUARD: Duration = Duration::from_secs(20);

/// The fake MCP server of `tests/data` (a standard-library Python script) as a child.
pub(crate) fn fake_server() -> tools_mcp::ServerSpec {
    tools_mcp::ServerSpec::command("python3", [fake_server_script()])
}

/// The path of the fake MCP server's script.
pub(crate) fn fake_server_script() -> String {
    let script: std::path::PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "data",
        "fake_mcp_server.py",
    ]
    .iter()
    .collect();
    script.display().to_string()
}

/// Awaits `f` under the guard.
pub(crate) async fn guarded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("timed out (test guard)")
}

#[derive(Deserialize, ToolArgs)]
pub(crate) struct AddArgs {
    /// First.
    pub(crate) a: i64,
    /// Second.
    pub(crate) b: i64,
}

/// `add`: read-only, typed, integer output.
pub(crate) fn add() -> ToolDefinition {
    define_tool::<AddArgs, i64>("add", "Add two integers.")
        .read_only()
        .body(|args: AddArgs, _ctx| async move { Ok(args.a.saturating_add(args.b)) })
        .build()
        .unwrap()
}

/// What the test client saw.
#[derive(Clone, Default)]
pub(crate) struct Seen {
    pub(crate) progress: Arc<Mutex<Vec<f64>>>,
    pub(crate) list_changed: Arc<tokio::sync::Notify>,
    /// How many `notifications/tools/list_changed` arrived.
    pub(crate) list_changes: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) elicitations: Arc<Mutex<Vec<serde_json::Value>>>,
}

/// An rmcp client that records notifications and answers elicitations with `answer`
/// (`None`: it does not declare elicitation).
#[derive(Clone)]
pub(crate) struct TestClient {
    pub(crate) seen: Seen,
    pub(crate) answer: Option<(ElicitationAction, Option<serde_json::Value>)>,
}

impl TestClient {
    pub(crate) fn plain() -> TestClient {
        TestClient {
            seen: Seen::default(),
            answer: None,
        }
    }

    pub(crate) fn answering(
        action: ElicitationAction,
        content: Option<serde_json::Value>,
    ) -> TestClient {
        TestClient {
            seen: Seen::default(),
            answer: Some((action, content)),
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = if self.answer.is_some() {
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("test-client", "1"))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.progress.lock().unwrap().push(params.progress);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen
            .list_changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.seen.list_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.seen
            .elicitations
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
        let (action, content) = self.answer.clone().expect("no elicitation declared");
        let mut result: ElicitResult =
            serde_json::from_value(json!({"action": "decline"})).unwrap();
        result.action = action;
        result.content = content;
        Ok(result)
    }
}

/// A session of `server` and a connected client over an in-process pipe.
pub(crate) struct Connected {
    pub(crate) client: RunningService<RoleClient, TestClient>,
    _server: RunningService<RoleServer, McpSession>,
}

pub(crate) async fn connect(server: &McpServer, client: TestClient) -> Connected {
    let (a, b) = tokio::io::duplex(1 << 20);
    let serving = {
        let server = server.clone();
        tokio::spawn(async move { server.serve(a).await })
    };
    let client = guarded(client.serve(b)).await.unwrap();
    let server = guarded(serving).await.unwrap().unwrap();
    Connected {
        client,
        _server: server,
    }
}

/// Serves `server` over streamable HTTP on a loopback port until `shutdown` is cancelled;
/// the endpoint's URL.
pub(crate) async fn serve_http_front(
    server: &McpServer,
    options: tools_mcp::HttpOptions,
    shutdown: &tokio_util::sync::CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (server, stop) = (server.clone(), shutdown.clone());
    tokio::spawn(async move { server.serve_http(listener, &options, stop).await });
    url
}

/// An HTTP client for requests written by hand (no proxy, whatever the environment says).
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// The `initialize` request of a client that has not opened a session yet.
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// POSTs `initialize` to `url`, with the `Origin` header `origin` if any; the response,
/// its body read to the end.
pub(crate) async fn initialize(
    url: &str,
    origin: Option<&str>,
) -> (reqwest::StatusCode, reqwest::header::HeaderMap, String) {
    let mut request = http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = guarded(request.send()).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let body = guarded(response.text()).await.unwrap();
    (status, headers, body)
}

/// A runtime built over a registry the test keeps, for importing into.
pub(crate) fn host() -> (ToolRuntime, tools_runtime::tools::Registry) {
    let registry = tools_runtime::tools::Registry::new();
    let runtime = ToolRuntime::builder()
        .pipeline(tools_runtime::hooks::Pipeline::new(registry.clone()))
        .build()
        .unwrap();
    (runtime, registry)
}

/// The error code a front's result carries in its `_meta`.
pub(crate) fn code_of(result: &rmcp::model::CallToolResult) -> Option<String> {
    result
        .meta
        .as_ref()
        .and_then(|m| m.get(tools_mcp::CODE_META_KEY))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// Calls `name` with `args` (an object) through the connected client.
pub(crate) async fn call_front(
    c: &Connected,
    name: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    guarded(
        c.client.call_tool(
            rmcp::model::CallToolRequestParams::new(name.to_owned())
                .with_arguments(args.as_object().cloned().unwrap()),
        ),
    )
    .await
    .unwrap()
}

/// The names of the tools the connected client sees.
pub(crate) async fn names(c: &Connected) -> Vec<String> {
    guarded(c.client.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}
