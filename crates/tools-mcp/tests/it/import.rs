//! The client import: a served runtime imported over loopback HTTP, and a child-process
//! server (a standard-library Python script) that changes its tools, hangs and dies.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_mcp::{ErrorKind, HttpOptions, ImportOptions, ImportedServer, McpServer, ServerSpec};
use tools_registry::{Change, Progress};
use tools_runtime::prelude::*;
use tools_runtime::{ToolRuntime, tools::ExecutionMode};

use crate::support::{add, fake_server, guarded};

/// Serves `runtime`'s scope over HTTP on a loopback port of its own; the URL of `/mcp`.
async fn serve(runtime: &ToolRuntime, shutdown: &CancellationToken) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = McpServer::new(runtime.clone(), runtime.scope());
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        server
            .serve_http(listener, &HttpOptions::default(), shutdown)
            .await
    });
    format!("http://{addr}/mcp")
}

/// Waits until `registry` registers `name`.
async fn registered(registry: &tools_runtime::tools::Registry, name: &str) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let listener = registry.on_change(move |change| {
        if let Change::ToolRegistered { name, .. } = change {
            let _ = tx.send(name.as_str().to_owned());
        }
    });
    if registry.get(name, None).is_none() {
        guarded(async {
            while let Some(seen) = rx.recv().await {
                if seen == name {
                    break;
                }
            }
        })
        .await;
    }
    drop(listener);
}

/// Imports `spec` as `name` into `registry` (under the test guard).
async fn import(
    name: &str,
    spec: ServerSpec,
    registry: &tools_runtime::tools::Registry,
    options: ImportOptions,
) -> ImportedServer {
    guarded(ImportedServer::connect(name, spec, registry, options))
        .await
        .unwrap()
}

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new("c1", name, args).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_runtime_imports_as_ordinary_tools() {
    let upstream = ToolRuntime::new();
    upstream.register(add()).unwrap().keep();
    let reached = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&reached);
    upstream
        .register(
            ToolDefinition::builder("pick", "A tool whose schema is outside the subset.")
                .parameters(json!({
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer", "maximum": 9},
                        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
                    },
                    "required": ["n"]
                }))
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(move |_args, _ctx| {
                    *count.lock().unwrap() += 1;
                    async { Ok(json!("picked")) }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let shutdown = CancellationToken::new();
    let url = serve(&upstream, &shutdown).await;

    let (host, registry) = crate::support::host();
    let imported = import("up", ServerSpec::url(url), &registry, ImportOptions::new()).await;
    assert_eq!(imported.tool_names(), ["up__add", "up__pick"]);

    // A read-only tool is concurrency-safe; the hints travel.
    let def = host.get("up__add", None).unwrap();
    assert_eq!(def.hints().read_only, Some(true));
    assert_eq!(
        host.execution_mode(&call("up__add", json!({"a": 1, "b": 2}))),
        ExecutionMode::Parallel
    );
    assert!(def.is_fully_validated());
    let result = host.execute(call("up__add", json!({"a": 2, "b": 3}))).await;
    // The front wrapped the integer as `{"result": 5}` and marked it; the import unwraps.
    assert_eq!(result.value().unwrap().as_value(), &json!(5));
    assert_eq!(def.output().schema().as_json()["type"], "integer");

    // The foreign schema reaches the model verbatim and is enforced as far as the subset goes.
    let pick = host.get("up__pick", None).unwrap();
    assert!(!pick.is_fully_validated());
    assert!(
        pick.parameters().as_value()["properties"]["either"]
            .get("anyOf")
            .is_some()
    );
    let refused = host.execute(call("up__pick", json!({"n": 10}))).await;
    assert_eq!(refused.error_code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        *reached.lock().unwrap(),
        0,
        "refused before reaching the server"
    );
    let ok = host
        .execute(call("up__pick", json!({"n": 1, "either": true})))
        .await;
    assert_eq!(ok.text(), "picked");
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_and_progress_cross_the_import() {
    let upstream = ToolRuntime::new();
    let (cancelled_tx, cancelled_rx) = tokio::sync::oneshot::channel::<()>();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let slots = Arc::new(Mutex::new((Some(started_tx), Some(cancelled_tx))));
    upstream
        .register(
            ToolDefinition::builder("wait", "Report progress, then wait until cancelled.")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(move |_args, ctx| {
                    let slots = Arc::clone(&slots);
                    async move {
                        ctx.report_progress(Progress::new(1.0).with_message("started"));
                        if let Some(tx) = slots.lock().unwrap().0.take() {
                            let _ = tx.send(());
                        }
                        ctx.cancellation().cancelled().await;
                        if let Some(tx) = slots.lock().unwrap().1.take() {
                            let _ = tx.send(());
                        }
                        Ok(json!("stopped"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let shutdown = CancellationToken::new();
    let url = serve(&upstream, &shutdown).await;
    let (host, registry) = crate::support::host();
    let _imported = import("up", ServerSpec::url(url), &registry, ImportOptions::new()).await;

    let token = CancellationToken::new();
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&progress);
    let (arrived_tx, arrived_rx) = tokio::sync::oneshot::channel::<()>();
    let arrived_tx = Mutex::new(Some(arrived_tx));
    let running = {
        let host = host.clone();
        let call = call("up__wait", json!({}))
            .with_cancellation(token.clone())
            .with_progress(Arc::new(move |p: Progress| {
                sink.lock().unwrap().push(p);
                if let Some(tx) = arrived_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            }));
        tokio::spawn(async move { host.execute(call).await })
    };
    guarded(started_rx).await.unwrap();
    // The server's progress crossed both fronts before the call is cancelled.
    guarded(arrived_rx).await.unwrap();
    token.cancel();
    let result = guarded(running).await.unwrap();
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    // The server's body saw its own token cancelled: notifications/cancelled crossed.
    guarded(cancelled_rx).await.unwrap();
    let progress = progress.lock().unwrap();
    assert_eq!(progress.len(), 1, "{progress:?}");
    assert_eq!(progress[0].message.as_deref(), Some("started"));
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_resyncs_and_dropping_the_import_unregisters() {
    let upstream = ToolRuntime::new();
    upstream.register(add()).unwrap().keep();
    let shutdown = CancellationToken::new();
    let url = serve(&upstream, &shutdown).await;
    let (host, registry) = crate::support::host();
    let imported = import("up", ServerSpec::url(url), &registry, ImportOptions::new()).await;
    let later = ToolDefinition::builder("later", "Registered later.")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("late")) })
        .build()
        .unwrap();
    upstream.register(later).unwrap().keep();
    registered(&registry, "up__later").await;
    assert_eq!(
        host.execute(call("up__later", json!({}))).await.text(),
        "late"
    );
    drop(imported);
    assert!(host.get("up__add", None).is_none());
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_process_server_imports_changes_and_is_validated() {
    let (host, registry) = crate::support::host();
    let imported = import("fake", fake_server(), &registry, ImportOptions::new()).await;
    assert_eq!(
        imported.tool_names(),
        ["fake__echo", "fake__crash", "fake__add_tool", "fake__slow"]
    );
    let echo = host.get("fake__echo", None).unwrap();
    // `default` is outside the subset: kept for the model, not enforced, and said so.
    assert!(!echo.is_fully_validated());
    assert_eq!(
        echo.parameters().as_value()["properties"]["text"]["default"],
        "x"
    );
    let empty = host.execute(call("fake__echo", json!({"text": ""}))).await;
    assert_eq!(empty.error_code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        host.execute(call("fake__echo", json!({"text": "hi"})))
            .await
            .text(),
        "hi"
    );

    assert_eq!(
        host.execute(call("fake__add_tool", json!({}))).await.text(),
        "added"
    );
    registered(&registry, "fake__extra").await;
    assert_eq!(
        host.execute(call("fake__extra", json!({}))).await.text(),
        "extra"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_fails_its_calls_and_restarts() {
    let (host, registry) = crate::support::host();
    let imported = import("fake", fake_server(), &registry, ImportOptions::new()).await;
    let died = host.execute(call("fake__crash", json!({}))).await;
    assert_eq!(
        died.code().map(|c| c.as_str().to_owned()).as_deref(),
        Some("MCP_SERVER_UNAVAILABLE"),
        "{}",
        died.text()
    );
    let still = host
        .execute(call("fake__echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        still.code().map(|c| c.as_str().to_owned()).as_deref(),
        Some("MCP_SERVER_UNAVAILABLE")
    );
    guarded(imported.restart()).await.unwrap();
    assert_eq!(
        host.execute(call("fake__echo", json!({"text": "back"})))
            .await
            .text(),
        "back"
    );

    // With automatic restart, the next call reconnects by itself.
    let (auto_host, auto_registry) = crate::support::host();
    let _auto = import(
        "fake",
        fake_server(),
        &auto_registry,
        ImportOptions::new().auto_restart(true),
    )
    .await;
    let died = auto_host.execute(call("fake__crash", json!({}))).await;
    assert!(died.is_error());
    assert_eq!(
        auto_host
            .execute(call("fake__echo", json!({"text": "again"})))
            .await
            .text(),
        "again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_sends_notifications_cancelled_to_the_child() {
    let dir = std::env::temp_dir().join(format!("tools-mcp-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("cancelled.log");
    let _ = std::fs::remove_file(&log);
    let (host, registry) = crate::support::host();
    let _imported = import(
        "fake",
        fake_server().with_env("FAKE_MCP_CANCEL_LOG", log.display().to_string()),
        &registry,
        ImportOptions::new(),
    )
    .await;
    let token = CancellationToken::new();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let running = {
        let host = host.clone();
        let call = call("fake__slow", json!({}))
            .with_cancellation(token.clone())
            .with_progress(Arc::new(move |_p: Progress| {
                if let Some(tx) = started_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            }));
        tokio::spawn(async move { host.execute(call).await })
    };
    // The server has the request once its progress for it arrives.
    guarded(started_rx).await.unwrap();
    token.cancel();
    let result = guarded(running).await.unwrap();
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    guarded(async {
        loop {
            if std::fs::read_to_string(&log).is_ok_and(|s| !s.trim().is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn server_names_that_break_reversibility_are_refused() {
    let (_host, registry) = crate::support::host();
    let error = ImportedServer::connect("a__b", fake_server(), &registry, ImportOptions::new())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidServerName);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_http_front_serves_calls_without_sessions() {
    let upstream = ToolRuntime::new();
    upstream.register(add()).unwrap().keep();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let server = McpServer::new(upstream.clone(), upstream.scope());
    let options = HttpOptions {
        stateless: true,
        ..HttpOptions::default()
    };
    let stop = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, &options, stop).await });
    let (host, registry) = crate::support::host();
    let imported = import("up", ServerSpec::url(url), &registry, ImportOptions::new()).await;
    assert_eq!(imported.tool_names(), ["up__add"]);
    for (a, b) in [(1, 2), (40, 2)] {
        let result = host.execute(call("up__add", json!({"a": a, "b": b}))).await;
        assert_eq!(result.value().unwrap().as_value(), &json!(a + b));
    }
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_progress_update_before_the_result_arrives_before_it() {
    #[derive(serde::Deserialize, ToolArgs)]
    struct Steps {
        n: u32,
    }
    let upstream = ToolRuntime::new();
    upstream
        .register(
            define_tool::<Steps, u32>("steps", "Report n steps, then answer at once.")
                .body(|args: Steps, ctx| async move {
                    for i in 1..=args.n {
                        ctx.report_progress(Progress::new(f64::from(i)));
                    }
                    Ok(args.n)
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let shutdown = CancellationToken::new();
    let url = serve(&upstream, &shutdown).await;
    let (host, registry) = crate::support::host();
    let _imported = import("up", ServerSpec::url(url), &registry, ImportOptions::new()).await;
    // rmcp handles notifications in spawned tasks; the import routes progress in its
    // transport's receive path, so no update can lose the race with the response.
    for _ in 0..30 {
        let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
        let sink = Arc::clone(&seen);
        let call =
            call("up__steps", json!({"n": 4})).with_progress(Arc::new(move |p: Progress| {
                sink.lock().unwrap().push(p.progress)
            }));
        let result = host.execute(call).await;
        assert_eq!(result.value().unwrap().as_value(), &json!(4));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    }
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_times_the_call_out_and_cancels_it_upstream() {
    let dir = std::env::temp_dir().join(format!("tools-mcp-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("cancelled.log");
    let _ = std::fs::remove_file(&log);
    let (host, registry) = crate::support::host();
    let _imported = import(
        "fake",
        fake_server().with_env("FAKE_MCP_CANCEL_LOG", log.display().to_string()),
        &registry,
        ImportOptions::new().customize(|tool, builder| {
            if tool.original_name() == "slow" {
                builder.timeout(std::time::Duration::from_millis(50))
            } else {
                builder
            }
        }),
    )
    .await;
    assert_eq!(
        host.get("fake__slow", None).unwrap().timeout(),
        Some(std::time::Duration::from_millis(50))
    );
    // `slow` never answers: only the budget ends the call.
    let result = guarded(host.execute(call("fake__slow", json!({})))).await;
    assert_eq!(result.error_code(), Some(ErrorCode::ToolTimeout));
    guarded(async {
        loop {
            if std::fs::read_to_string(&log).is_ok_and(|s| !s.trim().is_empty()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_server_imports_deferred_with_its_name_as_namespace() {
    let (host, registry) = crate::support::host();
    let options = ImportOptions::new().exposure(tools_runtime::tools::Exposure::Deferred);
    let _imported = import("fake", fake_server(), &registry, options).await;
    let view = registry.view(None);
    let deferred: Vec<&str> = view.deferred().map(|d| d.name().as_str()).collect();
    assert_eq!(
        deferred,
        ["fake__echo", "fake__crash", "fake__add_tool", "fake__slow"]
    );
    assert!(view.deferred().all(|d| d.namespace() == Some("fake")));
    assert!(
        view.wire_schemas().is_empty(),
        "nothing declared before a search"
    );
    // A model's call waits for a search; the host reaches the tool.
    let refused = host
        .execute(call("fake__echo", json!({"text": "hi"})))
        .await;
    assert_eq!(refused.error_code(), Some(ErrorCode::UnknownTool));
    let found = view.search("echo the text", 5).unwrap();
    assert_eq!(found.first().map(|d| d.name().as_str()), Some("fake__echo"));
    let by_host = host
        .execute(call("fake__echo", json!({"text": "hi"})).from_host())
        .await;
    assert_eq!(by_host.text(), "hi");
}
