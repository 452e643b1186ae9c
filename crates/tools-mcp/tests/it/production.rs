//! The gateway as a platform team runs it: the audit log, limits and pinned tools, through
//! the whole front with the fake upstream server.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tools_mcp::gateway::{Gateway, GatewayConfig};

use crate::support::{
    TestClient, call_front, code_of, connect, fake_server_script, guarded, http_client, names,
};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tools-mcp-prod-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn config(dir: &Path, extra: &str) -> GatewayConfig {
    let text = format!(
        r#"
[servers.fake]
command = ["python3", {script:?}]
env = {{ FAKE_MCP_MODE = "rug_pull" }}

[audit]
path = "audit.jsonl"

[pins]
path = "pins.json"
{extra}
"#,
        script = fake_server_script()
    );
    GatewayConfig::parse(&text, &dir.join("gateway.toml")).unwrap()
}

fn audit_lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_has_its_audit_line_before_its_result_and_limits_refuse_at_once() {
    let dir = scratch("audit");
    let config = config(
        &dir,
        r#"
[limits]
"fake__echo" = { rate = "3/h" }
"#,
    );
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    for n in 1..=3 {
        let r = call_front(&c, "fake__echo", json!({"text": format!("hi {n}")})).await;
        assert_eq!(r.is_error, Some(false), "{r:?}");
        // The line is there as soon as the result is.
        let lines = audit_lines(&dir);
        assert_eq!(lines.len(), n);
        let line = &lines[n - 1];
        assert_eq!(line["tool"], "fake__echo");
        assert_eq!(line["server"], "fake");
        assert_eq!(line["decision"], "allow");
        assert_eq!(line["code"], Value::Null);
        assert!(line["duration_ms"].as_f64().unwrap() >= 0.0);
        assert_eq!(
            line["bytes_in"],
            json!(format!("{{\"text\":\"hi {n}\"}}").len())
        );
        assert_eq!(line["args_sha256"].as_str().unwrap().len(), 64);
        assert!(line.get("arguments").is_none(), "arguments are opt-in");
    }
    let limited = call_front(&c, "fake__echo", json!({"text": "one more"})).await;
    assert_eq!(
        code_of(&limited).as_deref(),
        Some("RATE_LIMITED"),
        "{limited:?}"
    );
    let text = limited.content[0].as_text().unwrap().text.clone();
    assert!(
        text.contains("3 calls per 1h") && text.contains("retry after"),
        "{text}"
    );
    let lines = audit_lines(&dir);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["decision"], "limited");
    assert_eq!(lines[3]["code"], "RATE_LIMITED");
    // A denied call is one line too.
    let unknown = call_front(&c, "fake__nope", json!({})).await;
    assert_eq!(code_of(&unknown).as_deref(), Some("UNKNOWN_TOOL"));
    assert_eq!(audit_lines(&dir).len(), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_changes_is_withheld_until_approved_and_stays_withheld_across_restarts() {
    let dir = scratch("pins");
    let config = config(&dir, "");
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    assert!(names(&c).await.contains(&"fake__echo".to_owned()));
    let pins: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pins.json")).unwrap()).unwrap();
    assert!(
        pins["tools"]["fake__echo"]["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // The server re-aims `echo` and says its list changed.
    let pulled = call_front(&c, "fake__rug_pull", json!({})).await;
    assert_eq!(pulled.is_error, Some(false), "{pulled:?}");
    let withheld = loop {
        let r = call_front(&c, "fake__echo", json!({"text": "x"})).await;
        if code_of(&r).as_deref() == Some("TOOL_CHANGED") {
            break r;
        }
        guarded(tokio::time::sleep(std::time::Duration::from_millis(20))).await;
    };
    let text = withheld.content[0].as_text().unwrap().text.clone();
    assert!(
        text.contains("(description)") && text.contains("pins approve fake__echo"),
        "{text}"
    );
    assert!(!names(&c).await.contains(&"fake__echo".to_owned()));
    let lines = audit_lines(&dir);
    assert_eq!(lines.last().unwrap()["decision"], "withheld");

    // Approved, and the gateway reloaded: listed and callable again.
    let approved =
        tools_mcp::pins::approve(&dir.join("pins.json"), &["fake__echo".into()]).unwrap();
    assert_eq!(approved, ["fake__echo: approved (description)"]);
    guarded(gateway.reload(&config)).await;
    assert!(names(&c).await.contains(&"fake__echo".to_owned()));
    let r = call_front(&c, "fake__echo", json!({"text": "back"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    drop(c);
    drop(gateway);

    // A restart against a server whose `echo` changed while the gateway was down.
    let text = format!(
        "[servers.fake]\ncommand = [\"python3\", {:?}]\nenv = {{ FAKE_MCP_ECHO_DESCRIPTION = \"Changed while down.\" }}\n[pins]\npath = \"pins.json\"\n",
        fake_server_script()
    );
    let restarted = GatewayConfig::parse(&text, &dir.join("gateway.toml")).unwrap();
    let gateway = guarded(Gateway::start(&restarted)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let listed = names(&c).await;
    assert!(!listed.contains(&"fake__echo".to_owned()), "{listed:?}");
    assert!(listed.contains(&"fake__crash".to_owned()), "{listed:?}");
    let r = call_front(&c, "fake__echo", json!({"text": "x"})).await;
    assert_eq!(code_of(&r).as_deref(), Some("TOOL_CHANGED"), "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_callers_need_a_token_and_a_principal_rule_tells_them_apart() {
    let dir = scratch("auth");
    let digest = |t: &str| tools_mcp::auth::hex_digest(t);
    let text = format!(
        r#"
[servers.fake]
command = ["python3", {script:?}]

[auth]
tokens = [{{ principal = "alice", sha256 = "{a}", scopes = ["tools"] }}, {{ principal = "bob", sha256 = "{b}" }}]

[[policy.rules]]
tool = "fake__echo"
principal = "alice"
decision = "allow"
"#,
        script = fake_server_script(),
        a = digest("token-a"),
        b = digest("token-b"),
    );
    let config = GatewayConfig::parse(&text, &dir.join("gateway.toml")).unwrap();
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let listener = gateway.bind("127.0.0.1:0", false).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let gateway = std::sync::Arc::new(gateway);
    {
        let (gateway, stop) = (std::sync::Arc::clone(&gateway), shutdown.clone());
        tokio::spawn(async move {
            gateway
                .serve_http_on(listener, &tools_mcp::HttpOptions::default(), stop)
                .await
        });
    }
    let health = guarded(http_client().get(format!("{base}/healthz")).send())
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let post = |token: Option<&str>, body: String, session: Option<String>| {
        let mut request = http_client()
            .post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        async move {
            let response = guarded(request.send()).await.unwrap();
            let (status, headers) = (response.status(), response.headers().clone());
            (status, headers, guarded(response.text()).await.unwrap())
        }
    };
    let init = crate::support::INITIALIZE.to_owned();
    let (status, headers, _) = post(None, init.clone(), None).await;
    assert_eq!(status, 401);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer resource_metadata=\"")
            && challenge.contains("/.well-known/oauth-protected-resource/mcp"),
        "{challenge}"
    );
    let (status, headers, _) = post(Some("wrong"), init.clone(), None).await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    let metadata = guarded(
        http_client()
            .get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
            .send(),
    )
    .await
    .unwrap();
    let metadata: Value = guarded(metadata.json()).await.unwrap();
    assert_eq!(metadata["resource"], format!("{base}/mcp"));

    // Alice and Bob each open a session; the policy lets only Alice call `echo`.
    let mut sessions = Vec::new();
    for token in ["token-a", "token-b"] {
        let (status, headers, _) = post(Some(token), init.clone(), None).await;
        assert_eq!(status, 200);
        let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
        let (status, _, _) = post(Some(token), initialized, Some(session.clone())).await;
        assert!(status.is_success(), "{status}");
        sessions.push(session);
    }
    let echo = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake__echo","arguments":{"text":"hi"}}}"#.to_owned();
    let (_, _, alice) = post(Some("token-a"), echo.clone(), Some(sessions[0].clone())).await;
    assert!(alice.contains("\"isError\":false"), "{alice}");
    let (_, _, bob) = post(Some("token-b"), echo.clone(), Some(sessions[1].clone())).await;
    assert!(
        bob.contains("DENIED") && bob.contains("allowed only to principal"),
        "{bob}"
    );
    // Bob cannot use Alice's session.
    let (status, _, _) = post(Some("token-b"), echo, Some(sessions[0].clone())).await;
    assert_eq!(status, 403);
    shutdown.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_resources_and_prompts_pass_through_under_the_policy_and_audit() {
    let dir = scratch("resources");
    let text = format!(
        r#"
[servers.fake]
command = ["python3", {script:?}]
env = {{ FAKE_MCP_MODE = "resources" }}

[policy]
deny = ["fake__fake://secret/*"]

[audit]
path = "audit.jsonl"
"#,
        script = fake_server_script()
    );
    let config = GatewayConfig::parse(&text, &dir.join("gateway.toml")).unwrap();
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let resources = guarded(c.client.list_all_resources()).await.unwrap();
    let listed: Vec<(String, String)> = resources
        .iter()
        .map(|r| (r.uri.clone(), r.name.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            ("fake://notes/1".to_owned(), "fake__note1".to_owned()),
            ("fake://secret/1".to_owned(), "fake__secret1".to_owned())
        ]
    );
    let templates = guarded(c.client.list_all_resource_templates())
        .await
        .unwrap();
    assert_eq!(templates[0].uri_template, "fake://notes/{id}");
    let read = |uri: &str| {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let client = c.client.peer().clone();
        async move { guarded(client.read_resource(params)).await }
    };
    let note = read("fake://notes/1").await.unwrap();
    assert!(serde_json::to_string(&note).unwrap().contains("note 1"));
    // Through the template, never listed by URI.
    let note = read("fake://notes/7").await.unwrap();
    assert!(serde_json::to_string(&note).unwrap().contains("note 7"));
    let denied = read("fake://secret/1").await.unwrap_err().to_string();
    assert!(denied.contains("denied by the gateway policy"), "{denied}");
    let unknown = read("other://x").await.unwrap_err().to_string();
    assert!(unknown.contains("no upstream server lists"), "{unknown}");
    let prompts = guarded(c.client.list_all_prompts()).await.unwrap();
    assert_eq!(prompts[0].name, "fake__greet");
    let mut params = rmcp::model::GetPromptRequestParams::new("fake__greet");
    params.arguments = json!({"who": "ann"}).as_object().cloned();
    let prompt = guarded(c.client.peer().get_prompt(params)).await.unwrap();
    assert!(
        serde_json::to_string(&prompt)
            .unwrap()
            .contains("Hello ann")
    );
    let kinds: Vec<(String, String)> = audit_lines(&dir)
        .iter()
        .map(|l| {
            (
                l["kind"].as_str().unwrap_or("call").to_owned(),
                l["decision"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let pairs = |k: &str, d: &str| (k.to_owned(), d.to_owned());
    assert_eq!(
        kinds,
        [
            pairs("resource", "allow"),
            pairs("resource", "allow"),
            pairs("resource", "deny"),
            pairs("prompt", "allow")
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
