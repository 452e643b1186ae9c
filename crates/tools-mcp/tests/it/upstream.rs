//! Upstreams never stall the gateway: every upstream request has a deadline, a server that
//! cannot be brought up is served without and retried, a server that lists a name twice
//! keeps its first listing, and a response the transport cannot deliver ends its call as
//! `INVALID_TOOL_OUTPUT` at once. The misbehaving server is the fake Python server in one
//! of its modes; every deadline a test passes on is generous, and assertions are on codes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tools_mcp::gateway::{Gateway, GatewayConfig};
use tools_mcp::{ErrorKind, ImportOptions, ImportedServer, McpServer};
use tools_runtime::prelude::*;
use tools_runtime::{ToolResult, ToolRuntime};

use crate::support::{
    Connected, Seen, TestClient, call_front, code_of, connect, fake_server, fake_server_script,
    guarded, names,
};

/// Bounds a test whose failure mode is a call that waits for its (large) budget: longer
/// than that budget, so a timeout shows as the wrong code rather than as this guard.
const LONG_GUARD: Duration = Duration::from_secs(300);

async fn long_guarded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LONG_GUARD, f)
        .await
        .expect("timed out (hang guard)")
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("c1", name, args).unwrap()
}

/// A gateway configuration; `{script}` in `text` is the fake server's path.
fn gateway_config(text: &str) -> GatewayConfig {
    let text = text.replace("{script}", &format!("{:?}", fake_server_script()));
    GatewayConfig::parse(&text, Path::new("/tmp/gateway.toml")).unwrap()
}

/// A fresh directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tools-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn code(result: &ToolResult) -> Option<String> {
    result.code().map(|c| c.as_str().to_owned())
}

/// The client's tool list once it holds `name` (waiting for `list_changed` until it does).
async fn listed_with(c: &Connected, seen: &Seen, name: &str) -> Vec<String> {
    loop {
        let listed = names(c).await;
        if listed.iter().any(|n| n == name) {
            return listed;
        }
        guarded(seen.list_changed.notified()).await;
    }
}

/// Waits until the file at `path` has a line.
async fn written(path: &Path) {
    guarded(async {
        while !std::fs::read_to_string(path).is_ok_and(|s| !s.trim().is_empty()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upstream_does_not_keep_the_gateway_from_serving_the_others() {
    let config = gateway_config(
        r#"
[upstream]
list_timeout = "2s"

[servers.stalled]
command = ["python3", {script}]
env = { FAKE_MCP_MODE = "stall_list" }

[servers.healthy]
command = ["python3", {script}]
"#,
    );
    assert_eq!(config.upstream.list_timeout, Duration::from_secs(2));
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let client = TestClient::plain();
    let seen = client.seen.clone();
    // `initialize` is answered…
    let c = connect(gateway.front(), client).await;
    // …and the healthy server's tools are listed (should the machine be so slow that its
    // own first listing missed the deadline, it is retried and announced).
    let listed = listed_with(&c, &seen, "healthy__echo").await;
    assert!(
        !listed.iter().any(|n| n.starts_with("stalled__")),
        "{listed:?}"
    );
    let stalled = gateway
        .servers()
        .iter()
        .find(|s| s.name() == "stalled")
        .unwrap();
    let why = stalled.unavailable().unwrap();
    assert!(why.contains("tools/list"), "{why}");
    let echoed = call_front(&c, "healthy__echo", json!({"text": "hi"})).await;
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    assert_eq!(echoed.content[0].as_text().unwrap().text, "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_comes_up_later_is_imported_and_announced() {
    let dir = scratch("later");
    let ready = dir.join("ready");
    let (host, registry) = crate::support::host();
    let front = McpServer::new(host.clone(), host.scope());
    let client = TestClient::plain();
    let seen = client.seen.clone();
    let c = connect(&front, client).await;
    assert!(names(&c).await.is_empty());
    let spec = fake_server()
        .with_env("FAKE_MCP_MODE", "stall_list")
        .with_env("FAKE_MCP_READY_FILE", ready.display().to_string());
    let options = ImportOptions::new()
        .list_timeout(Duration::from_secs(1))
        .retry_backoff(Duration::from_millis(50), Duration::from_millis(200));
    // `connect` fails at the deadline, naming the listing.
    let refused = guarded(ImportedServer::connect(
        "late",
        spec.clone(),
        &registry,
        options.clone(),
    ))
    .await
    .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Upstream);
    assert!(refused.to_string().contains("tools/list"), "{refused}");
    // `start` returns with the server unavailable, and keeps trying.
    let late = guarded(ImportedServer::start("late", spec, &registry, options))
        .await
        .unwrap();
    assert!(late.unavailable().is_some());
    assert!(late.tool_names().is_empty());
    std::fs::write(&ready, "").unwrap();
    let listed = listed_with(&c, &seen, "late__echo").await;
    assert!(listed.iter().any(|n| n == "late__slow"), "{listed:?}");
    assert_eq!(late.unavailable(), None);
    assert_eq!(
        host.execute(call("late__echo", json!({"text": "up"})))
            .await
            .text(),
        "up"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_server_never_answers_ends_at_the_default_budget() {
    let dir = scratch("stall-call");
    let log = dir.join("cancelled.log");
    let config = gateway_config(&format!(
        r#"
[upstream]
call_timeout = "500ms"

[budgets]
"fake__slow" = "1m"

[servers.fake]
command = ["python3", {{script}}]
env = {{ FAKE_MCP_MODE = "stall_call", FAKE_MCP_CANCEL_LOG = {:?} }}
"#,
        log.display().to_string()
    ));
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let registry = gateway.runtime();
    // The default budget, and a `[budgets]` pattern over it.
    assert_eq!(
        registry.get("fake__echo", None).unwrap().timeout(),
        Some(Duration::from_millis(500))
    );
    assert_eq!(
        registry.get("fake__slow", None).unwrap().timeout(),
        Some(Duration::from_secs(60))
    );
    let c = connect(gateway.front(), TestClient::plain()).await;
    let stalled = call_front(&c, "fake__echo", json!({"text": "hi"})).await;
    assert_eq!(stalled.is_error, Some(true));
    assert_eq!(
        code_of(&stalled).as_deref(),
        Some("TOOL_TIMEOUT"),
        "{stalled:?}"
    );
    // The server was told.
    written(&log).await;

    // The library's option is the same budget.
    let (host, registry) = crate::support::host();
    let _fake = guarded(ImportedServer::connect(
        "fake",
        fake_server().with_env("FAKE_MCP_MODE", "stall_call"),
        &registry,
        ImportOptions::new().call_timeout(Duration::from_millis(500)),
    ))
    .await
    .unwrap();
    let result = guarded(host.execute(call("fake__echo", json!({"text": "hi"})))).await;
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_listed_twice_is_imported_once_and_the_others_still_work() {
    let config = gateway_config(
        r#"
[servers.dup]
command = ["python3", {script}]
env = { FAKE_MCP_MODE = "duplicate_names" }

[servers.other]
command = ["python3", {script}]
"#,
    );
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let client = TestClient::plain();
    let seen = client.seen.clone();
    let c = connect(gateway.front(), client).await;
    let listed = listed_with(&c, &seen, "other__echo").await;
    let listed = if listed.iter().any(|n| n == "dup__echo") {
        listed
    } else {
        listed_with(&c, &seen, "dup__echo").await
    };
    assert_eq!(listed.iter().filter(|n| *n == "dup__echo").count(), 1);
    let dup = gateway
        .servers()
        .iter()
        .find(|s| s.name() == "dup")
        .unwrap();
    assert_eq!(dup.unavailable(), None);
    let warnings = dup.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("\"dup\"") && warnings[0].contains("\"echo\""),
        "{warnings:?}"
    );
    // The first listing is the one imported.
    let echo = gateway.runtime().get("dup__echo", None).unwrap();
    assert_eq!(echo.description(), "Echo the text.");
    for name in ["other__echo", "dup__echo"] {
        let echoed = call_front(&c, name, json!({"text": "both"})).await;
        assert_eq!(echoed.is_error, Some(false), "{name}: {echoed:?}");
    }

    // The library's `connect` imports it too.
    let (_host, registry) = crate::support::host();
    let imported = guarded(ImportedServer::connect(
        "dup",
        fake_server().with_env("FAKE_MCP_MODE", "duplicate_names"),
        &registry,
        ImportOptions::new(),
    ))
    .await
    .unwrap();
    assert_eq!(
        imported.tool_names(),
        ["dup__echo", "dup__crash", "dup__add_tool", "dup__slow"]
    );
    assert_eq!(imported.warnings().len(), 1);
}

/// Calls `<server>__huge` and `<server>__deep` (a result past the transport's line limit,
/// one nested past its depth limit) and asserts each ends as `INVALID_TOOL_OUTPUT` naming
/// its limit; `label` says which case failed.
async fn assert_past_limits_are_invalid_output(host: &ToolRuntime, server: &str, label: &str) {
    for (tool, limit) in [("huge", "16777216 bytes"), ("deep", "127 levels")] {
        let result =
            long_guarded(host.execute(call(&format!("{server}__{tool}"), json!({})))).await;
        assert_eq!(
            code(&result).as_deref(),
            Some("INVALID_TOOL_OUTPUT"),
            "{label}, {tool}: {}",
            result.text()
        );
        assert!(result.text().contains(limit), "{label}: {}", result.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_past_the_transport_limits_are_invalid_output_at_once() {
    let (host, registry) = crate::support::host();
    let _fake = guarded(ImportedServer::connect(
        "fake",
        fake_server().with_env("FAKE_MCP_MODE", "huge_result,deep_result"),
        &registry,
        // A timeout would be TOOL_TIMEOUT: the wrong code, not a slow pass.
        ImportOptions::new().call_timeout(Duration::from_secs(120)),
    ))
    .await
    .unwrap();
    assert_past_limits_are_invalid_output(&host, "fake", "stdio").await;
    // The connection is still good.
    assert_eq!(
        guarded(host.execute(call("fake__echo", json!({"text": "after"}))))
            .await
            .text(),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_front_reports_an_oversize_result_as_invalid_output() {
    let config = gateway_config(
        r#"
[upstream]
call_timeout = "120s"

[servers.fake]
command = ["python3", {script}]
env = { FAKE_MCP_MODE = "huge_result" }
"#,
    );
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let huge = long_guarded(
        c.client
            .call_tool(CallToolRequestParams::new("fake__huge").with_arguments(Default::default())),
    )
    .await
    .unwrap();
    assert_eq!(huge.is_error, Some(true));
    assert_eq!(
        code_of(&huge).as_deref(),
        Some("INVALID_TOOL_OUTPUT"),
        "{huge:?}"
    );
}

/// Serves `runtime`'s scope over streamable HTTP on a loopback port; the URL of `/mcp`.
async fn serve_http(
    runtime: &ToolRuntime,
    stateless: bool,
    shutdown: &tokio_util::sync::CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::new(runtime.clone(), runtime.scope());
    let options = tools_mcp::HttpOptions {
        stateless,
        ..tools_mcp::HttpOptions::default()
    };
    let stop = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, &options, stop).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_events_past_the_transport_limits_are_invalid_output_at_once() {
    let upstream = ToolRuntime::new();
    upstream.register(crate::support::add()).unwrap().keep();
    upstream
        .register(
            ToolDefinition::builder("huge", "A result over 16 MiB.")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(|_args, _ctx| async { Ok(json!("x".repeat(17 << 20))) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let deep = json!({ "v": deep });
    upstream
        .register(
            ToolDefinition::builder("deep", "A result nested 200 deep.")
                .output(OutputDecl::new(
                    json!({"type": "object"}),
                    |_args, _value| {
                        Ok(vec![tools_runtime::presentation::ContentBlock::text(
                            "deep",
                        )])
                    },
                ))
                .body(move |_args, _ctx| {
                    let deep = deep.clone();
                    async move { Ok(deep) }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    // A stateful front numbers its events (a dropped event is resumed past, not reported);
    // a stateless one ends the stream.
    for stateless in [false, true] {
        let shutdown = tokio_util::sync::CancellationToken::new();
        let url = serve_http(&upstream, stateless, &shutdown).await;
        let (host, registry) = crate::support::host();
        let _up = guarded(ImportedServer::connect(
            "up",
            tools_mcp::ServerSpec::url(url),
            &registry,
            ImportOptions::new().call_timeout(Duration::from_secs(120)),
        ))
        .await
        .unwrap();
        let label = format!("events, stateless {stateless}");
        assert_past_limits_are_invalid_output(&host, "up", &label).await;
        let added = guarded(host.execute(call("up__add", json!({"a": 1, "b": 2})))).await;
        assert_eq!(added.value().unwrap().as_value(), &json!(3));
        shutdown.cancel();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_bodies_past_the_transport_limits_are_invalid_output_at_once() {
    use tokio::io::AsyncBufReadExt;
    let mut server = tokio::process::Command::new("python3")
        .arg(fake_server_script())
        .env("FAKE_MCP_MODE", "http,huge_result,deep_result")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut port = String::new();
    let stdout = server.stdout.take().unwrap();
    guarded(tokio::io::BufReader::new(stdout).read_line(&mut port))
        .await
        .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let (host, registry) = crate::support::host();
    let _up = guarded(ImportedServer::connect(
        "up",
        tools_mcp::ServerSpec::url(url),
        &registry,
        ImportOptions::new().call_timeout(Duration::from_secs(120)),
    ))
    .await
    .unwrap();
    assert_past_limits_are_invalid_output(&host, "up", "JSON bodies").await;
    let echoed = guarded(host.execute(call("up__echo", json!({"text": "after"})))).await;
    assert_eq!(echoed.text(), "after");
    let _ = server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_past_the_content_block_bound_is_invalid_output() {
    let (host, registry) = crate::support::host();
    let _fake = guarded(ImportedServer::connect(
        "fake",
        fake_server().with_env("FAKE_MCP_MODE", "many_blocks"),
        &registry,
        ImportOptions::new().max_content_blocks(10_000),
    ))
    .await
    .unwrap();
    let many = guarded(host.execute(call("fake__many", json!({"count": 20_000})))).await;
    assert_eq!(
        code(&many).as_deref(),
        Some("INVALID_TOOL_OUTPUT"),
        "{}",
        many.text()
    );
    // Answered by the transport's scan, before the message was parsed.
    assert!(
        many.text()
            .contains("answered, but its result has more content blocks than the limit of 10000"),
        "{}",
        many.text()
    );
    // At the bound the result is delivered, every block of it.
    let at = guarded(host.execute(call("fake__many", json!({"count": 10_000})))).await;
    assert!(!at.is_error(), "{}", at.text());
    assert_eq!(at.content().len(), 10_000);
    // The connection is still good.
    assert_eq!(
        guarded(host.execute(call("fake__echo", json!({"text": "after"}))))
            .await
            .text(),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_bounds_content_blocks_per_its_configuration() {
    let config = gateway_config(
        r#"
[upstream]
max_content_blocks = 100

[servers.fake]
command = ["python3", {script}]
env = { FAKE_MCP_MODE = "many_blocks" }
"#,
    );
    assert_eq!(config.upstream.max_content_blocks, 100);
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let past = call_front(&c, "fake__many", json!({"count": 101})).await;
    assert_eq!(past.is_error, Some(true));
    assert_eq!(
        code_of(&past).as_deref(),
        Some("INVALID_TOOL_OUTPUT"),
        "{past:?}"
    );
    let text = past.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("limit of 100 "), "{text}");
    let at = call_front(&c, "fake__many", json!({"count": 100})).await;
    assert_eq!(at.is_error, Some(false), "{at:?}");
    assert_eq!(at.content.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_results_past_the_content_block_bound_are_invalid_output() {
    use tokio::io::AsyncBufReadExt;
    // Events of a response stream: counted before rmcp parses them.
    let upstream = ToolRuntime::new();
    upstream
        .register(
            ToolDefinition::builder("many", "A result of 20 000 content blocks.")
                .output(OutputDecl::new(json!({}), |_args, _value| {
                    Ok(vec![
                        tools_runtime::presentation::ContentBlock::text("x");
                        20_000
                    ])
                }))
                .body(|_args, _ctx| async { Ok(json!(null)) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    for stateless in [false, true] {
        let shutdown = tokio_util::sync::CancellationToken::new();
        let url = serve_http(&upstream, stateless, &shutdown).await;
        let (host, registry) = crate::support::host();
        let _up = guarded(ImportedServer::connect(
            "up",
            tools_mcp::ServerSpec::url(url),
            &registry,
            ImportOptions::new().max_content_blocks(10_000),
        ))
        .await
        .unwrap();
        let result = guarded(host.execute(call("up__many", json!({})))).await;
        assert_eq!(
            code(&result).as_deref(),
            Some("INVALID_TOOL_OUTPUT"),
            "stateless {stateless}: {}",
            result.text()
        );
        assert!(
            result.text().contains(
                "answered, but its result has more content blocks than the limit of 10000"
            ),
            "{}",
            result.text()
        );
        shutdown.cancel();
    }
    // A JSON body, which rmcp parses itself: counted when the result is converted.
    let mut server = tokio::process::Command::new("python3")
        .arg(fake_server_script())
        .env("FAKE_MCP_MODE", "http,many_blocks")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut port = String::new();
    let stdout = server.stdout.take().unwrap();
    guarded(tokio::io::BufReader::new(stdout).read_line(&mut port))
        .await
        .unwrap();
    let (host, registry) = crate::support::host();
    let _up = guarded(ImportedServer::connect(
        "up",
        tools_mcp::ServerSpec::url(format!("http://127.0.0.1:{}/mcp", port.trim())),
        &registry,
        ImportOptions::new().max_content_blocks(10_000),
    ))
    .await
    .unwrap();
    let result = guarded(host.execute(call("up__many", json!({"count": 20_000})))).await;
    assert_eq!(
        code(&result).as_deref(),
        Some("INVALID_TOOL_OUTPUT"),
        "{}",
        result.text()
    );
    assert!(
        result
            .text()
            .contains("returned 20000 content blocks, more than the limit of 10000"),
        "{}",
        result.text()
    );
    let at = guarded(host.execute(call("up__many", json!({"count": 10_000})))).await;
    assert_eq!(at.content().len(), 10_000, "{}", at.text());
    let _ = server.kill().await;
}
