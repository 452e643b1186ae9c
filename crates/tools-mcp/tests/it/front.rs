//! The server front: tools/list, tools/call, errors, progress, cancellation, list_changed
//! and elicitation, seen from an MCP client.

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, ClientRequest, ElicitationAction, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::{HttpOptions, McpServer};
use tools_registry::Progress;
use tools_runtime::prelude::*;
use tools_runtime::{ToolRuntime, tools::PresentationMode};

use crate::support::{
    TestClient, add, connect, guarded, http_client, initialize, serve_http_front,
};

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

use crate::support::code_of as code;

fn served() -> (ToolRuntime, McpServer) {
    let runtime = ToolRuntime::new();
    runtime.register(add()).unwrap().keep();
    let agent = runtime.scope();
    let server = McpServer::new(runtime.clone(), agent);
    (runtime, server)
}

#[tokio::test]
async fn tools_list_carries_schemas_and_hints() {
    let (_runtime, server) = served();
    let c = connect(&server, TestClient::plain()).await;
    let tools = guarded(c.client.list_all_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(tool["name"], "add");
    assert_eq!(tool["description"], "Add two integers.");
    assert_eq!(tool["inputSchema"]["required"], json!(["a", "b"]));
    // A non-object output is wrapped, as the Python SDK does.
    assert_eq!(tool["outputSchema"]["required"], json!(["result"]));
    assert_eq!(
        tool["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn a_call_runs_through_the_pipeline_and_returns_structured_content() {
    let (runtime, server) = served();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    runtime
        .on_result(move |exec, _result| log.lock().unwrap().push(exec.call_id().to_owned()))
        .keep();
    let c = connect(&server, TestClient::plain()).await;
    let result = guarded(c.client.call_tool(
        CallToolRequestParams::new("add").with_arguments(args(json!({"a": 2, "b": 3}))),
    ))
    .await
    .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content, Some(json!({"result": 5})));
    assert_eq!(result.content[0].as_text().unwrap().text, "5");
    let ids = seen.lock().unwrap().clone();
    assert_eq!(ids.len(), 1);
    assert!(ids[0].starts_with("mcp-"), "{ids:?}");
}

#[tokio::test]
async fn errors_are_results_with_their_code_in_meta() {
    let (runtime, server) = served();
    runtime
        .on_pre_execute(from_fn(|req: PreRequest, next: PreNext| async move {
            if req.execution().info().arguments.as_value()["a"] == json!(13) {
                return Ok(PreDecision::Deny("13 is unlucky".into()));
            }
            next.run(req).await
        }))
        .keep();
    let c = connect(&server, TestClient::plain()).await;
    let call =
        |a: Value| CallToolRequestParams::new("add").with_arguments(args(json!({"a": a, "b": 1})));
    let invalid = guarded(c.client.call_tool(call(json!("x")))).await.unwrap();
    assert_eq!(invalid.is_error, Some(true));
    assert_eq!(code(&invalid).as_deref(), Some("INVALID_ARGS"));
    let denied = guarded(c.client.call_tool(call(json!(13)))).await.unwrap();
    assert_eq!(code(&denied).as_deref(), Some("DENIED"));
    assert!(
        denied.content[0]
            .as_text()
            .unwrap()
            .text
            .contains("13 is unlucky")
    );
    let unknown = guarded(c.client.call_tool(CallToolRequestParams::new("nope")))
        .await
        .unwrap();
    assert_eq!(code(&unknown).as_deref(), Some("UNKNOWN_TOOL"));
    assert_eq!(unknown.structured_content, None);
}

#[derive(serde::Deserialize, ToolArgs)]
struct Steps {
    n: u32,
}

#[tokio::test]
async fn progress_reaches_a_client_that_sent_a_token_before_the_result() {
    let (runtime, server) = served();
    runtime
        .register(
            define_tool::<Steps, String>("steps", "Report progress.")
                .body(|args: Steps, ctx| async move {
                    for i in 1..=args.n {
                        ctx.report_progress(
                            Progress::new(f64::from(i)).with_total(f64::from(args.n)),
                        );
                    }
                    // Not increasing: dropped, as MCP requires.
                    ctx.report_progress(Progress::new(1.0));
                    Ok("done".to_owned())
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let client = TestClient::plain();
    let seen = client.seen.clone();
    let c = connect(&server, client).await;
    let mut params = CallToolRequestParams::new("steps").with_arguments(args(json!({"n": 4})));
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    ));
    params.meta = Some(meta);
    let result = guarded(c.client.call_tool(params)).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"result": "done"})));
    // The front flushes progress before it answers; the client handles notifications in
    // order, so they are all in by the time the response is.
    assert_eq!(*seen.progress.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

#[tokio::test]
async fn cancellation_cancels_the_calls_token() {
    let (runtime, server) = served();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    runtime
        .register(
            ToolDefinition::builder("wait", "Wait until cancelled.")
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(move |_args, ctx| {
                    let started = started_tx.lock().unwrap().take();
                    async move {
                        if let Some(started) = started {
                            let _ = started.send(());
                        }
                        ctx.cancellation().cancelled().await;
                        Ok(json!("stopped"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<Option<ErrorCode>>();
    let done_tx = Arc::new(Mutex::new(Some(done_tx)));
    runtime
        .on_result(move |_exec, result| {
            if let Some(tx) = done_tx.lock().unwrap().take() {
                let _ = tx.send(result.error_code());
            }
        })
        .keep();
    let c = connect(&server, TestClient::plain()).await;
    let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new("wait"),
    ));
    let handle = guarded(
        c.client
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options()),
    )
    .await
    .unwrap();
    guarded(started_rx).await.unwrap();
    guarded(handle.cancel(Some("test".into()))).await.unwrap();
    assert_eq!(guarded(done_rx).await.unwrap(), Some(ErrorCode::Aborted));
    // The session goes on.
    let after = guarded(c.client.call_tool(
        CallToolRequestParams::new("add").with_arguments(args(json!({"a": 1, "b": 1}))),
    ))
    .await
    .unwrap();
    assert!(matches!(after.structured_content, Some(ref v) if v["result"] == 2));
    let _ = ServerResult::empty(());
}

#[tokio::test]
async fn registry_changes_notify_list_changed() {
    let (runtime, server) = served();
    let client = TestClient::plain();
    let seen = client.seen.clone();
    let c = connect(&server, client).await;
    // The session is initialized once a request has been answered.
    guarded(c.client.list_all_tools()).await.unwrap();
    let later = ToolDefinition::builder("later", "Registered later.")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("hi")) })
        .build()
        .unwrap();
    runtime.register(later).unwrap().keep();
    guarded(seen.list_changed.notified()).await;
    let names: Vec<String> = guarded(c.client.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["add", "later"]);
}

fn ask_for_add(runtime: &ToolRuntime) {
    runtime
        .on_pre_execute(from_fn(|_req: PreRequest, _next: PreNext| async move {
            Ok(PreDecision::Ask(Some("adding is serious".into())))
        }))
        .keep();
}

#[tokio::test]
async fn ask_goes_to_a_client_that_declares_elicitation() {
    let (runtime, server) = served();
    ask_for_add(&runtime);
    let call = || CallToolRequestParams::new("add").with_arguments(args(json!({"a": 1, "b": 2})));

    let yes = TestClient::answering(ElicitationAction::Accept, Some(json!({"approve": true})));
    let asked = yes.seen.clone();
    let c = connect(&server, yes).await;
    let allowed = guarded(c.client.call_tool(call())).await.unwrap();
    assert_eq!(allowed.structured_content, Some(json!({"result": 3})));
    let forms = asked.elicitations.lock().unwrap().clone();
    assert_eq!(forms.len(), 1);
    assert_eq!(forms[0]["mode"], "form");
    assert!(
        forms[0]["message"]
            .as_str()
            .unwrap()
            .contains("adding is serious")
    );
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );

    for answer in [
        TestClient::answering(ElicitationAction::Accept, Some(json!({"approve": false}))),
        TestClient::answering(ElicitationAction::Decline, None),
        TestClient::answering(ElicitationAction::Cancel, None),
        // No elicitation and no approval service on the runtime.
        TestClient::plain(),
    ] {
        let c = connect(&server, answer).await;
        let refused = guarded(c.client.call_tool(call())).await.unwrap();
        assert_eq!(code(&refused).as_deref(), Some("APPROVAL_DENIED"));
    }
}

#[tokio::test]
async fn without_elicitation_the_hosts_approval_service_answers() {
    let runtime = ToolRuntime::builder()
        .approval(|_r: ApprovalRequest| async { Ok(ApprovalOutcome::AllowedOnce) })
        .build()
        .unwrap();
    runtime.register(add()).unwrap().keep();
    ask_for_add(&runtime);
    let server = McpServer::new(runtime.clone(), runtime.scope());
    let c = connect(&server, TestClient::plain()).await;
    let result = guarded(c.client.call_tool(
        CallToolRequestParams::new("add").with_arguments(args(json!({"a": 1, "b": 2}))),
    ))
    .await
    .unwrap();
    assert_eq!(result.structured_content, Some(json!({"result": 3})));
}

#[tokio::test]
async fn code_mode_lists_run_code_with_the_sdk_in_its_description() {
    let js = tools_runtime::codemode::QuickJsRuntime::new(
        tools_runtime::codemode::RuntimeLimits::default(),
    )
    .unwrap();
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_runtime(Arc::new(js))
        .build()
        .unwrap();
    runtime.register(add()).unwrap().keep();
    let server = McpServer::new(runtime.clone(), runtime.scope());
    let c = connect(&server, TestClient::plain()).await;
    let tools = guarded(c.client.list_all_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "run_code");
    let description = tools[0].description.as_deref().unwrap();
    assert!(description.contains("  add: {"), "{description}");
    let result = guarded(c.client.call_tool(
        CallToolRequestParams::new("run_code").with_arguments(args(json!({
            "description": "add twice",
            "code": "const x = await tools.add({a: 1, b: 2}); return await tools.add({a: x, b: 10});"
        }))),
    ))
    .await
    .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content.unwrap()["result"], json!(13));
}

/// The current weather, as a fixed sample.
#[tool(read_only)]
async fn weather(_args: NoArgs) -> Result<String, ToolError> {
    Ok("sunny".to_owned())
}

#[tokio::test]
async fn a_read_only_tool_written_once_is_listed_read_only() {
    let runtime = ToolRuntime::new();
    runtime.register(weather().unwrap()).unwrap().keep();
    let call = ToolCall::new("c", "weather", json!({})).unwrap();
    assert_eq!(
        runtime.execution_mode(&call),
        tools_runtime::tools::ExecutionMode::Parallel
    );
    let server = McpServer::new(runtime.clone(), runtime.scope());
    let c = connect(&server, TestClient::plain()).await;
    let tools = guarded(c.client.list_all_tools()).await.unwrap();
    let tool = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(tool["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(
        tool["description"],
        "The current weather, as a fixed sample."
    );
}

#[tokio::test]
async fn an_elicited_session_approval_is_not_asked_again_in_the_served_scope() {
    let (runtime, server) = served();
    ask_for_add(&runtime);
    let yes = TestClient::answering(
        ElicitationAction::Accept,
        Some(json!({"approve": true, "session": true})),
    );
    let asked = yes.seen.clone();
    let c = connect(&server, yes).await;
    for _ in 0..3 {
        let result = guarded(c.client.call_tool(
            CallToolRequestParams::new("add").with_arguments(args(json!({"a": 1, "b": 2}))),
        ))
        .await
        .unwrap();
        assert_eq!(result.structured_content, Some(json!({"result": 3})));
    }
    assert_eq!(asked.elicitations.lock().unwrap().len(), 1);
    // Other arguments are another key: asked again.
    guarded(c.client.call_tool(
        CallToolRequestParams::new("add").with_arguments(args(json!({"a": 2, "b": 2}))),
    ))
    .await
    .unwrap();
    assert_eq!(asked.elicitations.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn each_session_is_its_own_child_scope_of_the_served_one() {
    let js = tools_runtime::codemode::QuickJsRuntime::new(
        tools_runtime::codemode::RuntimeLimits::default(),
    )
    .unwrap();
    let runtime = ToolRuntime::builder()
        .code_runtime(Arc::new(js))
        .build()
        .unwrap();
    runtime.register(add()).unwrap().keep();
    ask_for_add(&runtime);
    let served = runtime.scope();
    // What the served scope declares, every session sees.
    runtime
        .present_as(&served, PresentationMode::Both)
        .unwrap()
        .keep();
    let server = McpServer::new(runtime.clone(), served);
    let call = || CallToolRequestParams::new("add").with_arguments(args(json!({"a": 1, "b": 2})));

    let first = TestClient::answering(
        ElicitationAction::Accept,
        Some(json!({"approve": true, "session": true})),
    );
    let first_asked = first.seen.clone();
    let a = connect(&server, first).await;
    let names: Vec<String> = guarded(a.client.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["add", "run_code"]);
    for _ in 0..2 {
        guarded(a.client.call_tool(call())).await.unwrap();
    }
    assert_eq!(first_asked.elicitations.lock().unwrap().len(), 1);

    // Another client's session is not covered by the first one's answer.
    let second = TestClient::answering(ElicitationAction::Accept, Some(json!({"approve": true})));
    let second_asked = second.seen.clone();
    let b = connect(&server, second).await;
    guarded(b.client.call_tool(call())).await.unwrap();
    assert_eq!(second_asked.elicitations.lock().unwrap().len(), 1);
}

/// The session id a successful `initialize` over HTTP opened.
fn session_of(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("mcp-session-id")
        .expect("no session id")
        .to_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_front_refuses_foreign_origins() {
    let (_runtime, server) = served();
    let shutdown = CancellationToken::new();
    let options = HttpOptions {
        allowed_hosts: Some(vec![
            "gw.example".into(),
            "127.0.0.1".into(),
            "localhost".into(),
        ]),
        allowed_origins: vec!["https://app.example".into()],
        ..HttpOptions::default()
    };
    let url = serve_http_front(&server, options, &shutdown).await;
    for (origin, accepted) in [
        // Non-browser clients send none.
        (None, true),
        // Loopback, any port, http or https.
        (Some("http://localhost:5173"), true),
        (Some("http://127.0.0.1"), true),
        (Some("https://[::1]:8443"), true),
        // Configured: an origin (its scheme's default port), an allowed host (any port).
        (Some("https://app.example"), true),
        (Some("https://app.example:443"), true),
        (Some("http://gw.example:8080"), true),
        // Everything else.
        (Some("http://evil.example"), false),
        (Some("null"), false),
        (Some("http://localhost.evil.example"), false),
        (Some("https://app.example:8443"), false),
        (Some("http://app.example"), false),
        (Some("not an origin"), false),
    ] {
        let (status, _headers, body) = initialize(&url, origin).await;
        if accepted {
            assert_eq!(status, 200, "{origin:?}: {body}");
        } else {
            assert_eq!(status, 403, "{origin:?}: {body}");
            assert!(body.contains("Origin"), "{origin:?}: {body}");
        }
    }
    // Every method is guarded, not only POST.
    let (_, headers, _) = initialize(&url, None).await;
    let deleted = guarded(
        http_client()
            .delete(&url)
            .header("mcp-session-id", session_of(&headers))
            .header("origin", "http://evil.example")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(deleted.status(), 403);
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_front_bounds_its_open_sessions() {
    let (_runtime, server) = served();
    let shutdown = CancellationToken::new();
    let options = HttpOptions {
        max_sessions: 3,
        ..HttpOptions::default()
    };
    let url = serve_http_front(&server, options, &shutdown).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let (status, headers, body) = initialize(&url, None).await;
        assert_eq!(status, 200, "{body}");
        sessions.push(session_of(&headers));
    }
    let (status, headers, body) = initialize(&url, None).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        headers.get("content-type").unwrap().to_str().unwrap(),
        "application/json"
    );
    assert!(headers.get("mcp-session-id").is_none());
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], Value::Null);
    assert_eq!(error["error"]["code"], -32603);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("limit of 3 sessions"), "{message}");
    // Ending a session frees its slot at once; the MCP Python SDK reads only 200 and 204
    // as a successful termination.
    let deleted = guarded(
        http_client()
            .delete(&url)
            .header("mcp-session-id", &sessions[0])
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(deleted.status(), 200);
    let (status, headers, body) = initialize(&url, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(!sessions.contains(&session_of(&headers)));
    let (status, _, _) = initialize(&url, None).await;
    assert_eq!(status, 503);
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_and_frees_its_slot() {
    let (_runtime, server) = served();
    let shutdown = CancellationToken::new();
    let options = HttpOptions {
        max_sessions: 1,
        session_idle_timeout: Some(std::time::Duration::from_millis(100)),
        ..HttpOptions::default()
    };
    let url = serve_http_front(&server, options, &shutdown).await;
    let (status, headers, body) = initialize(&url, None).await;
    assert_eq!(status, 200, "{body}");
    let first = session_of(&headers);
    // Refused while the first one lives, accepted once it has expired.
    guarded(async {
        loop {
            let (status, _, body) = initialize(&url, None).await;
            if status == 200 {
                break;
            }
            assert_eq!(status, 503, "{body}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    // The expired session is gone: its id is unknown.
    let gone = guarded(
        http_client()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &first)
            .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(gone.status(), 404);
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_answers_200_and_an_unknown_one_404() {
    let (_runtime, server) = served();
    let shutdown = CancellationToken::new();
    let url = serve_http_front(&server, HttpOptions::default(), &shutdown).await;
    let (status, headers, body) = initialize(&url, None).await;
    assert_eq!(status, 200, "{body}");
    let session = session_of(&headers);
    let delete = || {
        guarded(
            http_client()
                .delete(&url)
                .header("mcp-session-id", &session)
                .send(),
        )
    };
    // What the MCP Python SDK reads as a successful termination (200 or 204).
    assert_eq!(delete().await.unwrap().status(), 200);
    assert_eq!(delete().await.unwrap().status(), 404);
    shutdown.cancel();
}
