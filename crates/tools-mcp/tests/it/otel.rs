//! OpenTelemetry across the gateway: the `tools-mcp` binary exports to an OTLP/HTTP receiver
//! this test starts on loopback (decoding the protocol's own messages), and the span tree of
//! a `run_code` with two sub-calls runs from the client's trace context, through the
//! gateway, to the upstream server's `_meta`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use crate::support::{fake_server_script, guarded, http_client};

/// The spans the receiver got.
type Received = Arc<Mutex<Vec<Span>>>;

/// An OTLP/HTTP receiver (protobuf) on a loopback port: its base URL.
async fn receiver(received: Received) -> String {
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let received = Arc::clone(&received);
            async move {
                let request = ExportTraceServiceRequest::decode(body).unwrap();
                let mut spans = received.lock().unwrap();
                for resource in request.resource_spans {
                    for scope in resource.scope_spans {
                        spans.extend(scope.spans);
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    ExportTraceServiceResponse::default().encode_to_vec(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => Some(s.clone()),
            AnyValue::IntValue(i) => Some(i.to_string()),
            other => Some(format!("{other:?}")),
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_code_with_two_sub_calls_is_one_trace_from_the_client_to_the_upstream() {
    let dir = std::env::temp_dir().join(format!("tools-mcp-otel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let received: Received = Arc::default();
    let endpoint = receiver(Arc::clone(&received)).await;
    let meta_log = dir.join("meta.jsonl");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "mode = \"both\"\n[servers.fake]\ncommand = [\"python3\", {:?}]\nenv = {{ FAKE_MCP_META_LOG = {:?} }}\n[otel]\nendpoint = {endpoint:?}\n",
            fake_server_script(),
            meta_log.display().to_string()
        ),
    )
    .unwrap();
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_tools-mcp"))
        .args(["gateway", "--config"])
        .arg(&config)
        .args(["--http", "127.0.0.1:0", "--stateless"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = gateway.stderr.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stderr).lines();
        loop {
            let line = lines
                .next()
                .expect("the gateway exited before listening")
                .unwrap();
            if let Some(rest) = line.strip_prefix("tools-mcp: listening on ") {
                let url = rest.split_whitespace().next().unwrap().to_owned();
                // Keep draining stderr so the gateway never blocks on it.
                std::thread::spawn(move || lines.for_each(drop));
                return url;
            }
        }
    });
    let url = guarded(url).await.unwrap();

    // The client's own trace context.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let client_span = "00f067aa0ba902b7";
    let code = "const a = await tools.fake__echo({text: \"one\"});\n\
                const b = await tools.fake__echo({text: \"two\"});\n\
                return [a, b];";
    let request = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "run_code",
            "arguments": {"description": "echo twice", "code": code},
            "_meta": {"traceparent": format!("00-{trace_id}-{client_span}-01")}
        }
    });
    let response = guarded(
        http_client()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(request.to_string())
            .send(),
    )
    .await
    .unwrap();
    let body = guarded(response.text()).await.unwrap();
    assert!(body.contains("\"isError\":false"), "{body}");

    // SIGINT to the gateway this test started: it flushes its spans as it exits.
    let interrupted = Command::new("kill")
        .args(["-INT", &gateway.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = guarded(tokio::task::spawn_blocking(move || gateway.wait()))
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");

    let spans = received.lock().unwrap().clone();
    let by_id: HashMap<String, &Span> = spans.iter().map(|s| (hex(&s.span_id), s)).collect();
    let named = |name: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == name).collect() };
    let parent_of = |span: &Span| by_id.get(&hex(&span.parent_span_id)).copied();
    let summary: Vec<String> = spans
        .iter()
        .map(|s| format!("{} <- {}", s.name, hex(&s.parent_span_id)))
        .collect();

    let server = named("tools/call run_code");
    assert_eq!(server.len(), 1, "{summary:?}");
    let server = server[0];
    assert_eq!(
        hex(&server.trace_id),
        trace_id,
        "the client's trace goes on"
    );
    assert_eq!(hex(&server.parent_span_id), client_span, "{summary:?}");
    assert_eq!(
        attribute(server, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        attribute(server, "jsonrpc.request.id").as_deref(),
        Some("7")
    );

    let run = named("execute_tool run_code");
    assert_eq!(run.len(), 1, "{summary:?}");
    let run = run[0];
    assert_eq!(
        parent_of(run).map(|s| s.name.as_str()),
        Some("tools/call run_code")
    );
    assert_eq!(
        attribute(run, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attribute(run, "gen_ai.tool.name").as_deref(),
        Some("run_code")
    );

    let subs = named("execute_tool fake__echo");
    assert_eq!(subs.len(), 2, "{summary:?}");
    let mut clients = Vec::new();
    for sub in &subs {
        assert_eq!(hex(&sub.trace_id), trace_id);
        assert_eq!(
            parent_of(sub).map(|s| hex(&s.span_id)),
            Some(hex(&run.span_id))
        );
        assert!(attribute(sub, "gen_ai.tool.call.id").is_some());
        assert_eq!(
            attribute(sub, "gen_ai.tool.call.arguments"),
            None,
            "content is opt-in"
        );
        let client: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id == sub.span_id)
            .collect();
        assert_eq!(client.len(), 1, "{summary:?}");
        assert_eq!(client[0].name, "tools/call echo");
        clients.push(hex(&client[0].span_id));
    }

    // The upstream got each client span's context in `_meta`.
    let metas: Vec<Value> = std::fs::read_to_string(&meta_log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut parents: Vec<String> = metas
        .iter()
        .map(|m| {
            let parent = m["traceparent"].as_str().unwrap();
            let parts: Vec<&str> = parent.split('-').collect();
            assert_eq!(parts[1], trace_id, "{parent}");
            parts[2].to_owned()
        })
        .collect();
    parents.sort();
    clients.sort();
    assert_eq!(parents, clients);
    let _ = std::fs::remove_dir_all(&dir);
}
