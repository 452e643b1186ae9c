//! Deferred tools and `search_tools` through the gateway's front: a deferred server's tools
//! are not listed, a search in one MCP session loads what it finds into that session alone
//! (which is told `list_changed`), and the search is a call like any other (policy, audit,
//! bad arguments). The upstream is the fake Python server.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tools_mcp::gateway::{Gateway, GatewayConfig};

use crate::support::{
    Connected, TestClient, call_front, code_of, connect, fake_server_script, guarded, names,
};

/// A gateway configuration; `{script}` in `text` is the fake server's path, and relative
/// paths resolve against `dir`.
fn config_in(dir: &Path, text: &str) -> GatewayConfig {
    let text = text.replace("{script}", &format!("{:?}", fake_server_script()));
    GatewayConfig::parse(&text, &dir.join("gateway.toml")).unwrap()
}

fn gateway_config(text: &str) -> GatewayConfig {
    config_in(Path::new("/tmp"), text)
}

/// A fresh directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tools-mcp-search-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `search_tools`; its result, which must be a success.
async fn search(c: &Connected, args: Value) -> String {
    let r = call_front(c, "search_tools", args).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    text_of(&r)
}

/// Asserts that `result` is the refusal of a deferred tool that was not loaded.
fn assert_not_loaded(result: &CallToolResult) {
    assert_eq!(
        code_of(result).as_deref(),
        Some("UNKNOWN_TOOL"),
        "{result:?}"
    );
    let text = text_of(result);
    assert!(text.contains("search_tools"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_loads_what_it_finds_for_its_own_session_only() {
    let config = gateway_config(
        r#"
[servers.lazy]
command = ["python3", {script}]
deferred = true

[servers.eager]
command = ["python3", {script}]
"#,
    );
    assert!(config.defers());
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    // Imported tools carry their server's name as their namespace (what a search matches).
    let echo = gateway.runtime().get("lazy__echo", None).unwrap();
    assert_eq!(echo.namespace(), Some("lazy"));
    let (client_a, client_b) = (TestClient::plain(), TestClient::plain());
    let (seen_a, seen_b) = (client_a.seen.clone(), client_b.seen.clone());
    let a = connect(gateway.front(), client_a).await;
    let b = connect(gateway.front(), client_b).await;

    // Only the direct tools and the search are listed.
    let mut listed = names(&a).await;
    listed.sort();
    assert_eq!(
        listed,
        [
            "eager__add_tool",
            "eager__crash",
            "eager__echo",
            "eager__slow",
            "search_tools"
        ]
    );
    let before = names(&a).await;
    assert_not_loaded(&call_front(&a, "lazy__echo", json!({"text": "x"})).await);

    // A's search finds lazy__echo first, and only deferred tools.
    let found = search(&a, json!({"query": "echo the text", "limit": 2})).await;
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"lazy__echo: Echo the text."),
        "{found}"
    );
    assert!(lines.len() <= 2, "{found}");
    assert!(lines.iter().all(|l| l.starts_with("lazy__")), "{found}");
    let found_names: Vec<String> = lines
        .iter()
        .map(|l| l.split(':').next().unwrap().to_owned())
        .collect();

    // A is told, lists them after the tools it had (in the order found), and calls one.
    guarded(seen_a.list_changed.notified()).await;
    let after = names(&a).await;
    assert_eq!(after[..before.len()], before[..], "{after:?}");
    assert_eq!(after[before.len()..], found_names[..], "{after:?}");
    let echoed = call_front(&a, "lazy__echo", json!({"text": "found"})).await;
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    assert_eq!(text_of(&echoed), "found");

    // B still has nothing loaded, and was told nothing.
    let listed_b = names(&b).await;
    assert!(
        !listed_b.iter().any(|n| n.starts_with("lazy__")),
        "{listed_b:?}"
    );
    assert_not_loaded(&call_front(&b, "lazy__echo", json!({"text": "x"})).await);
    assert_eq!(seen_b.list_changes.load(Ordering::SeqCst), 0);

    // A search that finds nothing says so, loads nothing, and is no error.
    let nothing = search(&b, json!({"query": "zebra quantum"})).await;
    assert!(nothing.starts_with("No tool matches"), "{nothing}");
    assert!(!names(&b).await.iter().any(|n| n.starts_with("lazy__")));

    // B's own search loads for B; A's list stays as it was.
    let found_b = search(&b, json!({"query": "exit mid-call", "limit": 1})).await;
    assert_eq!(found_b, "lazy__crash: Exit mid-call.");
    guarded(seen_b.list_changed.notified()).await;
    assert!(names(&b).await.contains(&"lazy__crash".to_owned()));
    assert_not_loaded(&call_front(&b, "lazy__echo", json!({"text": "x"})).await);
    assert_eq!(names(&a).await, after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_globs_defer_matching_tools_but_never_the_search() {
    let config = gateway_config(
        r#"
deferred = ["fake__add_*", "fake__sl?w"]

[servers.fake]
command = ["python3", {script}]
"#,
    );
    assert_eq!(config.deferred.len(), 2);
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let client = TestClient::plain();
    let seen = client.seen.clone();
    let c = connect(gateway.front(), client).await;
    let mut listed = names(&c).await;
    listed.sort();
    assert_eq!(listed, ["fake__crash", "fake__echo", "search_tools"]);
    assert_not_loaded(&call_front(&c, "fake__slow", json!({})).await);

    let found = search(&c, json!({"query": "add a tool", "limit": 1})).await;
    assert_eq!(found, "fake__add_tool: Add a tool.");
    guarded(seen.list_changed.notified()).await;
    let listed = names(&c).await;
    assert_eq!(listed.last().map(String::as_str), Some("fake__add_tool"));
    assert!(!listed.contains(&"fake__slow".to_owned()), "{listed:?}");
    drop(c);
    drop(gateway);

    // `*` defers every imported tool; the search stays listed and finds them.
    let config =
        gateway_config("deferred = [\"*\"]\n[servers.fake]\ncommand = [\"python3\", {script}]\n");
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    assert_eq!(names(&c).await, ["search_tools"]);
    let found = search(&c, json!({"query": "never answers"})).await;
    assert!(found.starts_with("fake__slow: "), "{found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_is_listed_only_while_there_is_something_to_find() {
    let config = gateway_config("[servers.fake]\ncommand = [\"python3\", {script}]\n");
    assert!(!config.defers());
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let listed = names(&c).await;
    assert!(listed.contains(&"fake__echo".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"search_tools".to_owned()), "{listed:?}");
    let r = call_front(&c, "search_tools", json!({"query": "echo"})).await;
    assert_eq!(code_of(&r).as_deref(), Some("UNKNOWN_TOOL"), "{r:?}");
    drop(c);
    drop(gateway);

    // A glob that defers nothing: the search exists but is not listed, having nothing to
    // find.
    let config = gateway_config(
        "deferred = [\"nope__*\"]\n[servers.fake]\ncommand = [\"python3\", {script}]\n",
    );
    assert!(config.defers());
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let listed = names(&c).await;
    assert!(listed.contains(&"fake__echo".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"search_tools".to_owned()), "{listed:?}");
    let nothing = search(&c, json!({"query": "echo"})).await;
    assert!(nothing.starts_with("No tool matches"), "{nothing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_is_a_call_like_any_other() {
    let dir = scratch("audit");
    let config = config_in(
        &dir,
        r#"
[servers.fake]
command = ["python3", {script}]
deferred = true

[audit]
path = "audit.jsonl"
"#,
    );
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;

    // Bad arguments are tool errors that say what is wrong, never a failed request.
    let long = "tool ".repeat(2_000);
    for (args, needle) in [
        (json!({"query": ""}), "empty"),
        (json!({"query": "   "}), "empty"),
        (json!({"query": long}), "at most 1000"),
        (json!({}), "`query` is required"),
        (json!({"query": 7}), "`query` must be a string"),
        (json!({"query": "echo", "limit": 0}), "from 1 to 50"),
        (json!({"query": "echo", "limit": 51}), "from 1 to 50"),
    ] {
        let r = call_front(&c, "search_tools", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args}: {r:?}");
        assert_eq!(
            code_of(&r).as_deref(),
            Some("INVALID_ARGS"),
            "{args}: {r:?}"
        );
        let text = text_of(&r);
        assert!(text.contains(needle), "{args}: {text}");
    }
    assert!(!names(&c).await.iter().any(|n| n.starts_with("fake__")));
    let found = search(&c, json!({"query": "echo"})).await;
    assert!(found.starts_with("fake__echo: "), "{found}");

    // Every search is an audit line, the bad ones with their code.
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert!(
        lines.iter().all(|l| l["tool"] == "search_tools"),
        "{lines:?}"
    );
    assert_eq!(lines[0]["code"], "INVALID_ARGS");
    assert_eq!(lines[7]["decision"], "allow");
    assert_eq!(lines[7]["code"], Value::Null);
    drop(c);
    drop(gateway);

    // The policy governs it like any tool.
    let config = gateway_config(
        "[servers.fake]\ncommand = [\"python3\", {script}]\ndeferred = true\n[policy]\ndeny = [\"search_tools\"]\n",
    );
    let gateway = guarded(Gateway::start(&config)).await.unwrap();
    let c = connect(gateway.front(), TestClient::plain()).await;
    let r = call_front(&c, "search_tools", json!({"query": "echo"})).await;
    assert_eq!(code_of(&r).as_deref(), Some("DENIED"), "{r:?}");
    assert!(!names(&c).await.iter().any(|n| n.starts_with("fake__")));
    let _ = std::fs::remove_dir_all(&dir);
}
