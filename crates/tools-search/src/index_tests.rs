//! Unit tests of `index.rs`: building, ranking, ties, regex mode and bad input.

use serde_json::{Value, json};

use super::*;
use crate::MAX_PATTERN_CHARS;

struct Tool {
    name: &'static str,
    namespace: Option<&'static str>,
    description: &'static str,
    parameters: Value,
}

fn tool(name: &'static str, description: &'static str) -> Tool {
    Tool {
        name,
        namespace: None,
        description,
        parameters: json!({}),
    }
}

fn entries(tools: &[Tool]) -> impl Iterator<Item = Entry<'_>> {
    tools.iter().map(|t| Entry {
        name: t.name,
        namespace: t.namespace,
        description: t.description,
        parameters: &t.parameters,
    })
}

fn catalog() -> Vec<Tool> {
    vec![
        Tool {
            name: "get_weatherForecast",
            namespace: Some("weather"),
            description: "Daily forecast for the coming days.",
            parameters: json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name."},
                "days": {"type": "integer", "description": "How many days."}
            }}),
        },
        tool("read_file", "Read a text file from the local disk."),
        tool(
            "write_file",
            "Write text to a file on the local disk, replacing it.",
        ),
        tool(
            "list_directory",
            "List the files and folders in a directory.",
        ),
        tool(
            "send_email",
            "Send an email message to one or more recipients.",
        ),
        tool(
            "search_issues",
            "Search the issues of a repository by text.",
        ),
        tool("create_issue", "Open a new issue in a repository."),
        Tool {
            name: "query",
            namespace: Some("postgres"),
            description: "Run a read-only SQL statement.",
            parameters: json!({"properties": {"sql": {"description": "The SQL text."}}}),
        },
    ]
}

fn index(tools: &[Tool]) -> SearchIndex {
    SearchIndex::build(entries(tools))
}

fn names(tools: &[Tool], hits: &[Hit]) -> Vec<&'static str> {
    hits.iter().map(|h| tools[h.index].name).collect()
}

#[test]
fn the_index_is_send_sync_and_debuggable() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<SearchIndex>();
    let tools = catalog();
    let index = index(&tools);
    assert_eq!(index.len(), 8);
    assert!(!index.is_empty());
    assert!(format!("{index:?}").starts_with("SearchIndex { len: 8, terms: "));
    assert!(SearchIndex::default().is_empty());
}

#[test]
fn ranking_finds_the_tool_by_name_description_and_parameters() {
    let tools = catalog();
    let index = index(&tools);
    let top = |query: &str| names(&tools, &index.search(query, 3).unwrap())[0];
    assert_eq!(top("weather forecast for Paris"), "get_weatherForecast");
    assert_eq!(
        top("how many days will it rain in my city"),
        "get_weatherForecast"
    );
    assert_eq!(top("read a file"), "read_file");
    assert_eq!(top("write_file"), "write_file");
    assert_eq!(top("emailing someone"), "send_email");
    assert_eq!(top("run SQL on postgres"), "query");
    assert_eq!(top("open an issue"), "create_issue");
    // Words of the name weigh more than the same words in a description.
    assert_eq!(top("search issues"), "search_issues");
    // Every hit shares a word with the query, and scores fall.
    let hits = index.search("file", 50).unwrap();
    assert_eq!(
        names(&tools, &hits),
        ["read_file", "write_file", "list_directory"]
    );
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn an_exact_name_wins_over_its_words_elsewhere() {
    let tools = vec![
        tool(
            "file_read_helper",
            "Read a file, read it again, read file metadata.",
        ),
        tool("read_file", "Open something."),
    ];
    let index = index(&tools);
    let hits = index.search("read_file", 5).unwrap();
    assert_eq!(names(&tools, &hits), ["read_file", "file_read_helper"]);
}

#[test]
fn ties_are_ordered_by_build_position() {
    let tools: Vec<Tool> = (0..60).map(|_| tool("same_tool", "Identical.")).collect();
    let index = index(&tools);
    let hits = index.search("identical", 50).unwrap();
    assert_eq!(hits.len(), MAX_LIMIT);
    assert!(hits.iter().enumerate().all(|(i, h)| h.index == i));
    assert!(hits.iter().all(|h| h.score == hits[0].score));
    let hits = index.search("same tool", 3).unwrap();
    assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [0, 1, 2]);
    // The same entries give the same results, build after build.
    let again = SearchIndex::build(entries(&tools));
    assert_eq!(again.search("same tool", 7), index.search("same tool", 7));
}

#[test]
fn bad_queries_are_refused_with_invalid_args() {
    let tools = catalog();
    let index = index(&tools);
    for empty in ["", " ", "\t\n  "] {
        let err = index.search(empty, 5).unwrap_err();
        assert_eq!(err, Error::EmptyQuery);
        assert_eq!(err.code(), tools_error::ErrorCode::InvalidArgs);
        assert!(err.to_string().contains("query is empty"));
    }
    let long = "a".repeat(MAX_QUERY_CHARS + 1);
    let err = index.search(&long, 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the search query has 1001 characters; at most 1000 are allowed"
    );
    assert_eq!(err.code(), tools_error::ErrorCode::InvalidArgs);
    let err = index.search(&"é".repeat(10_000), 5).unwrap_err();
    assert!(err.to_string().contains("10000 characters"));
    // At the limit, characters (not bytes) count.
    assert!(index.search(&"é".repeat(MAX_QUERY_CHARS), 5).is_ok());
}

#[test]
fn queries_without_words_find_nothing() {
    let tools = catalog();
    let index = index(&tools);
    for query in ["?!", "--- ...", "\0\0\0", "the of and to", "🙂"] {
        assert_eq!(index.search(query, 5), Ok(Vec::new()), "{query:?}");
    }
    assert_eq!(index.search("zebra", 5), Ok(Vec::new()));
}

#[test]
fn limits_are_clamped() {
    let tools: Vec<Tool> = (0..80).map(|_| tool("t", "common word")).collect();
    let index = index(&tools);
    assert_eq!(index.search("common", 0), Ok(Vec::new()));
    assert_eq!(index.search("common", usize::MAX).unwrap().len(), MAX_LIMIT);
    assert_eq!(index.search("common", 3).unwrap().len(), 3);
    assert_eq!(index.search_regex("common", 0), Ok(Vec::new()));
    assert_eq!(
        index.search_regex("common", usize::MAX).unwrap().len(),
        MAX_LIMIT
    );
    // An empty index answers, and still checks the query.
    let empty = SearchIndex::default();
    assert_eq!(empty.search("anything", 5), Ok(Vec::new()));
    assert_eq!(empty.search("", 5), Err(Error::EmptyQuery));
}

#[test]
fn regex_mode_puts_name_matches_first_in_build_order() {
    let tools = catalog();
    let index = index(&tools);
    let hits = index.search_regex("issue", 10).unwrap();
    assert_eq!(names(&tools, &hits), ["search_issues", "create_issue"]);
    assert!(hits.iter().all(|h| h.score == 1.0));
    // `file` is in three names and in list_directory's description.
    let hits = index.search_regex("FILE", 10).unwrap();
    assert_eq!(
        names(&tools, &hits),
        ["read_file", "write_file", "list_directory"]
    );
    assert_eq!(
        hits.iter().map(|h| h.score).collect::<Vec<_>>(),
        [1.0, 1.0, 0.5]
    );
    // Namespaces and parameter names and descriptions are searched; `^` anchors a field.
    assert_eq!(
        names(&tools, &index.search_regex("^postgres$", 5).unwrap()),
        ["query"]
    );
    assert_eq!(
        names(&tools, &index.search_regex("^city$", 5).unwrap()),
        ["get_weatherForecast"]
    );
    assert_eq!(
        names(&tools, &index.search_regex("^(read|write)_", 1).unwrap()),
        ["read_file"]
    );
    assert!(
        index
            .search_regex("nothing-matches-this", 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn bad_patterns_are_refused_with_invalid_args() {
    let index = index(&catalog());
    for pattern in [
        "",
        "(",
        "a{2,1}",
        "(?<=x)y",
        &"a".repeat(MAX_PATTERN_CHARS + 1),
    ] {
        let err = index.search_regex(pattern, 5).unwrap_err();
        assert_eq!(
            err.code(),
            tools_error::ErrorCode::InvalidArgs,
            "{pattern:?}"
        );
    }
    let err = index.search_regex("(a{1000}){1000}", 5).unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");
    let err = index.search_regex("[z-a]", 5).unwrap_err();
    assert!(
        err.to_string().starts_with("invalid regex pattern: "),
        "{err}"
    );
}

#[test]
fn heap_bytes_count_what_the_index_holds() {
    assert!(SearchIndex::default().heap_bytes() < 64);
    let tools = catalog();
    let small = index(&tools);
    let text: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len())
        .sum();
    assert!(small.heap_bytes() > text);
    let more: Vec<Tool> = (0..10).flat_map(|_| catalog()).collect();
    // The same words again: more postings and text, the same term table.
    assert!(index(&more).heap_bytes() > 3 * small.heap_bytes());
}

/// `bm25`'s tokenizer over text the analyzer has already made: terms joined by spaces.
#[derive(Debug, Default)]
struct Joined;

impl bm25::Tokenizer for Joined {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        input_text.split(' ').map(str::to_owned).collect()
    }
}

/// The terms the index gives one tool, as text.
fn tool_text_terms(analyzer: &Analyzer, entry: &Entry<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    tool_terms(entry, |piece| match piece {
        Piece::Word(word, repeat) => {
            if let Some(term) = analyzer.term(word) {
                out.extend(std::iter::repeat_n(term, repeat));
            }
        }
        Piece::Whole(whole) => out.push(whole),
    });
    out.truncate(MAX_TERMS);
    out
}

#[test]
fn scores_equal_the_bm25_crates_own_engine() {
    let mut tools = catalog();
    tools.push(tool(
        "read_file_v2",
        "Read a file, faster: read files in bulk.",
    ));
    tools.push(tool("archive", "Archive files and folders into one file."));
    let analyzer = Analyzer::new();
    let documents: Vec<bm25::Document<u32>> = entries(&tools)
        .enumerate()
        .map(|(i, entry)| {
            let id = u32::try_from(i).unwrap();
            bm25::Document::new(id, tool_text_terms(&analyzer, &entry).join(" "))
        })
        .collect();
    let engine = bm25::SearchEngineBuilder::<u32, u64, Joined>::with_tokenizer_and_documents(
        Joined, documents,
    )
    .k1(K1)
    .b(B)
    .build();
    let index = index(&tools);
    for query in [
        "read a file",
        "read_file",
        "weather in the city for five days",
        "search issues in a repository",
        "send an email",
        "list files and folders, then archive them",
        "SQL",
    ] {
        let mut terms = Vec::new();
        analyzer.query(query, &mut terms);
        terms.sort();
        terms.dedup();
        let expected = engine.search(&terms.join(" "), None);
        let ours = index.search(query, MAX_LIMIT).unwrap();
        assert_eq!(ours.len(), expected.len(), "{query}");
        for hit in &ours {
            let theirs = expected
                .iter()
                .find(|r| r.document.id as usize == hit.index)
                .unwrap_or_else(|| panic!("{query}: {} missing", hit.index));
            assert!(
                (theirs.score - hit.score).abs() <= 1e-5 * theirs.score.abs().max(1.0),
                "{query}: tool {} scores {} here, {} in bm25",
                hit.index,
                hit.score,
                theirs.score
            );
        }
    }
}
