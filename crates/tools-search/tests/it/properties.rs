//! Properties over arbitrary input: searching never panics and returns at most `limit`
//! hits, in range, best first with ties in build order; regex mode never panics; two
//! builds of the same entries answer alike.

use proptest::prelude::*;
use serde_json::{Value, json};
use tools_search::{Entry, Hit, MAX_LIMIT, SearchIndex};

#[derive(Clone, Debug)]
struct Tool {
    name: String,
    namespace: Option<String>,
    description: String,
    parameters: Value,
}

const WORDS: &str = "(get|list|file|read|weather|issue|send|the|of|Data|HTTP|v2|ünïcode|日本|🙂)";

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(WORDS, 0..6).prop_map(|w| w.join(" "))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        words().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("properties".to_owned()),
                        Just("items".to_owned()),
                        Just("description".to_owned()),
                        Just("anyOf".to_owned()),
                        "[a-zA-Z_]{1,8}"
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn tool() -> impl Strategy<Value = Tool> {
    (
        "[a-zA-Z0-9_.\\-]{1,24}|\\PC{0,12}",
        prop::option::of("[a-z_]{0,10}"),
        prop_oneof![words(), "\\PC{0,40}"],
        json_value(),
    )
        .prop_map(|(name, namespace, description, parameters)| Tool {
            name,
            namespace,
            description,
            parameters,
        })
}

fn build(tools: &[Tool]) -> SearchIndex {
    SearchIndex::build(tools.iter().map(|t| Entry {
        name: &t.name,
        namespace: t.namespace.as_deref(),
        description: &t.description,
        parameters: &t.parameters,
    }))
}

fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        words(),
        "\\PC{0,60}",
        any::<String>(),
        "[ \\t\\x00_.-]{0,8}"
    ]
}

fn limit() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..8, Just(MAX_LIMIT), any::<usize>()]
}

fn well_ordered(hits: &[Hit], len: usize, limit: usize) {
    assert!(hits.len() <= limit.min(MAX_LIMIT));
    for hit in hits {
        assert!(hit.index < len);
        assert!(hit.score.is_finite() && hit.score > 0.0, "{hit:?}");
    }
    for pair in hits.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        assert!(
            a.score > b.score || (a.score == b.score && a.index < b.index),
            "{a:?} before {b:?}"
        );
    }
}

proptest! {
    #[test]
    fn search_never_panics_and_orders_its_hits(
        tools in prop::collection::vec(tool(), 0..24),
        query in query(),
        limit in limit(),
    ) {
        let index = build(&tools);
        match index.search(&query, limit) {
            Ok(hits) => well_ordered(&hits, tools.len(), limit),
            Err(err) => {
                assert_eq!(err.code(), tools_error::ErrorCode::InvalidArgs);
                assert!(query.trim().is_empty() || query.chars().count() > tools_search::MAX_QUERY_CHARS);
            }
        }
    }

    #[test]
    fn regex_never_panics_and_puts_names_first(
        tools in prop::collection::vec(tool(), 0..16),
        pattern in prop_oneof!["[a-z().*+?|^$\\[\\]{}\\\\0-9,]{0,24}", "\\PC{0,30}", any::<String>()],
        limit in limit(),
    ) {
        let index = build(&tools);
        if let Ok(hits) = index.search_regex(&pattern, limit) {
            assert!(hits.len() <= limit.min(MAX_LIMIT));
            assert!(hits.iter().all(|h| h.index < tools.len()));
            assert!(hits.iter().all(|h| h.score == 1.0 || h.score == 0.5));
            // Names first, then the rest, each group in build order, no tool twice.
            let key = |h: &Hit| (h.score != 1.0, h.index);
            assert!(hits.windows(2).all(|w| key(&w[0]) < key(&w[1])));
            let mut seen: Vec<usize> = hits.iter().map(|h| h.index).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), hits.len());
        }
    }

    #[test]
    fn two_builds_of_the_same_entries_answer_alike(
        tools in prop::collection::vec(tool(), 0..24),
        queries in prop::collection::vec(words(), 1..6),
    ) {
        let (a, b) = (build(&tools), build(&tools));
        assert_eq!(a.len(), b.len());
        assert_eq!(a.heap_bytes() > 0, b.heap_bytes() > 0);
        for query in &queries {
            assert_eq!(a.search(query, 20), b.search(query, 20));
            assert_eq!(a.search_regex(query, 20), b.search_regex(query, 20));
        }
    }
}
