//! A catalog like an agent's (several MCP servers' tools), searched the way a model would;
//! hostile schemas and queries; one index shared by threads.

use std::sync::Arc;

use serde_json::{Value, json};
use tools_search::{Entry, Error, Hit, MAX_LIMIT, MAX_PATTERN_CHARS, MAX_QUERY_CHARS, SearchIndex};

struct Tool {
    name: &'static str,
    namespace: Option<&'static str>,
    description: &'static str,
    parameters: Value,
}

fn catalog() -> Vec<Tool> {
    let t = |namespace, name, description, parameters| Tool {
        name,
        namespace: Some(namespace),
        description,
        parameters,
    };
    vec![
        t(
            "github",
            "create_pull_request",
            "Create a new pull request to merge one branch into another.",
            json!({"type": "object", "properties": {"head": {"type": "string", "description": "The branch with the changes."}, "base": {"type": "string", "description": "The branch to merge into."}, "title": {"type": "string"}}}),
        ),
        t(
            "github",
            "list_commits",
            "List the commits of a branch, newest first.",
            json!({"type": "object", "properties": {"sha": {"type": "string", "description": "Branch name or commit SHA."}}}),
        ),
        t(
            "github",
            "get_file_contents",
            "Get the contents of a file or directory from a repository.",
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "Path to the file."}}}),
        ),
        t(
            "slack",
            "postMessage",
            "Post a message to a Slack channel.",
            json!({"type": "object", "properties": {"channelId": {"type": "string", "description": "The channel to post to."}, "text": {"type": "string"}}}),
        ),
        t(
            "slack",
            "listChannels",
            "List the public channels of the workspace.",
            json!({}),
        ),
        t(
            "calendar",
            "createEvent",
            "Schedule a meeting or event on the user's calendar.",
            json!({"type": "object", "properties": {"attendees": {"type": "array", "items": {"type": "object", "properties": {"email": {"type": "string", "description": "An attendee's email address."}}}}, "start": {"type": "string", "description": "Start time, ISO 8601."}}}),
        ),
        t(
            "postgres",
            "query",
            "Run a read-only SQL query against the database.",
            json!({"type": "object", "properties": {"sql": {"type": "string", "description": "The SQL statement."}}}),
        ),
        t(
            "filesystem",
            "read_text_file",
            "Read the complete contents of a text file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer", "description": "Only the first N lines."}}}),
        ),
        t(
            "filesystem",
            "move_file",
            "Move or rename a file or directory.",
            json!({"type": "object", "properties": {"source": {"type": "string"}, "destination": {"type": "string"}}}),
        ),
        t(
            "weather",
            "get_weatherForecast-v2",
            "Forecast for the next days at a location.",
            json!({"type": "object", "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}}}),
        ),
    ]
}

fn build(tools: &[Tool]) -> SearchIndex {
    SearchIndex::build(tools.iter().map(|t| Entry {
        name: t.name,
        namespace: t.namespace,
        description: t.description,
        parameters: &t.parameters,
    }))
}

fn top(tools: &[Tool], hits: &[Hit]) -> &'static str {
    hits.first()
        .map(|h| tools[h.index].name)
        .unwrap_or("<none>")
}

#[test]
fn a_model_finds_the_tool_it_describes() {
    let tools = catalog();
    let index = build(&tools);
    let cases = [
        (
            "open a pull request from my feature branch",
            "create_pull_request",
        ),
        ("show recent commits", "list_commits"),
        ("send a message to the team channel", "postMessage"),
        ("list the slack channels", "listChannels"),
        ("schedule a meeting with alice@example.com", "createEvent"),
        ("run a SQL query", "query"),
        ("read a text file", "read_text_file"),
        ("rename a file", "move_file"),
        ("weather forecast", "get_weatherForecast-v2"),
        ("get_weatherForecast-v2", "get_weatherForecast-v2"),
        ("postMessage", "postMessage"),
        ("latitude longitude", "get_weatherForecast-v2"),
    ];
    for (query, expected) in cases {
        let hits = index.search(query, 5).unwrap();
        assert_eq!(top(&tools, &hits), expected, "{query}");
    }
}

#[test]
fn regex_mode_reads_names_then_everything_else() {
    let tools = catalog();
    let index = build(&tools);
    let names = |hits: Vec<Hit>| {
        hits.into_iter()
            .map(|h| tools[h.index].name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(index.search_regex("branch", 10).unwrap()),
        // No name has it: descriptions and parameters, in build order.
        ["create_pull_request", "list_commits"]
    );
    assert_eq!(
        names(index.search_regex("file|branch", 10).unwrap()),
        // Names first (build order), then descriptions and parameters.
        [
            "get_file_contents",
            "read_text_file",
            "move_file",
            "create_pull_request",
            "list_commits"
        ]
    );
    assert_eq!(
        names(index.search_regex("(?i)^SLACK$", 10).unwrap()),
        ["postMessage", "listChannels"]
    );
    assert_eq!(
        names(index.search_regex(r"iso\s+8601", 10).unwrap()),
        ["createEvent"]
    );
    // Anthropic's limit: 200 characters.
    assert!(
        index
            .search_regex(&"x".repeat(MAX_PATTERN_CHARS), 5)
            .is_ok()
    );
    assert!(matches!(
        index.search_regex(&"x".repeat(MAX_PATTERN_CHARS + 1), 5),
        Err(Error::PatternTooLong {
            chars: 201,
            max: 200
        })
    ));
    let err = index.search_regex("(foo", 5).unwrap_err();
    assert!(err.to_string().contains("unclosed group"), "{err}");
}

#[test]
fn hostile_schemas_and_text_are_indexed_within_bounds() {
    // Deep, wide, cyclic-looking and non-object parameters, and a huge description.
    let mut deep = json!({"description": "the bottom"});
    for _ in 0..2_000 {
        let mut inner = serde_json::Map::new();
        inner.insert("items".to_owned(), deep);
        deep = Value::Object(inner);
    }
    let wide: serde_json::Map<String, Value> = (0..20_000)
        .map(|i| (format!("field{i}"), json!({"description": "wide"})))
        .collect();
    let huge = "lorem ipsum ".repeat(200_000);
    let params = [
        deep,
        json!({"properties": wide}),
        json!(42),
        json!(null),
        json!([1, {"properties": 3}]),
    ];
    let index = SearchIndex::build(
        params
            .iter()
            .enumerate()
            .map(|(i, p)| Entry {
                name: ["deep", "wide", "number", "null", "array"][i],
                namespace: None,
                // A huge description fills the tool's term budget before its parameters.
                description: if i == 2 { &huge } else { "lorem" },
                parameters: p,
            })
            .chain([Entry {
                name: "\0weird\u{202e}name\n",
                namespace: Some(""),
                description: "",
                parameters: &json!({}),
            }]),
    );
    assert_eq!(index.len(), 6);
    assert_eq!(index.search("lorem", 50).unwrap().len(), 5);
    assert_eq!(index.search("ipsum", 50).unwrap().len(), 1);
    // Property names past the item budget are not read.
    assert_eq!(index.search_regex("^field0$", 5).unwrap().len(), 1);
    assert_eq!(index.search_regex("^field19999$", 5).unwrap(), Vec::new());
    assert_eq!(index.search("weird name", 5).unwrap()[0].index, 5);
    // The bounded text keeps memory near the input's size or below.
    assert!(
        index.heap_bytes() < 5 * 70 * 1024 + 1_000_000,
        "{}",
        index.heap_bytes()
    );
    // Dropping a 2 000-deep value recursively is serde_json's business; unwind it here.
    let [mut deep, ..] = params;
    while let Some(next) = deep.get_mut("items").map(Value::take) {
        deep = next;
    }
}

#[test]
fn hostile_queries_answer_quickly_or_are_refused() {
    let tools = catalog();
    let index = build(&tools);
    let started = std::time::Instant::now();
    for query in [
        "a".repeat(10_000),
        "file ".repeat(MAX_QUERY_CHARS / 5),
        "\0".repeat(MAX_QUERY_CHARS),
        "🙂".repeat(MAX_QUERY_CHARS),
        "ǅ̈Ꙁ".repeat(300),
        (0..MAX_QUERY_CHARS)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect(),
    ] {
        match index.search(&query, usize::MAX) {
            Ok(hits) => assert!(hits.len() <= MAX_LIMIT),
            Err(err) => assert!(matches!(err, Error::QueryTooLong { .. }), "{err}"),
        }
    }
    for pattern in [
        "(a*)*b",
        "(a|aa)*$",
        ".*.*.*.*.*=",
        r"\w+\s*\w+\s*\w+$",
        "(?s).*",
    ] {
        assert!(index.search_regex(pattern, usize::MAX).is_ok(), "{pattern}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn one_index_serves_many_threads() {
    let tools = catalog();
    let index = Arc::new(build(&tools));
    let expected = index.search("file", 5).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let index = Arc::clone(&index);
            std::thread::spawn(move || {
                (0..200)
                    .map(|_| index.search("file", 5).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        for hits in thread.join().unwrap() {
            assert_eq!(hits, expected);
        }
    }
}
