//! Recall of the search on the evaluation set, and the tokens deferral saves:
//!
//! ```text
//! cargo run --release -p tools-search --example eval [CATALOG.jsonl REQUESTS.jsonl]
//! ```
//!
//! The files default to `eval/catalog.jsonl` and `eval/requests.jsonl` beside the crate's
//! manifest. The index is built over the catalog in file order; each request's query is
//! searched (limit [`MAX_LIMIT`]) and its expected tool's rank gives recall@1, recall@5
//! and the mean reciprocal rank (0 when the tool is not among the hits). The same figures
//! are given for the linear-scan baseline (`common::Baseline`).
//!
//! Tokens are counted with OpenAI's o200k_base encoding (`tiktoken-rs`): without deferral,
//! a request carries every catalog tool declared in the Chat Completions function shape
//! `{"type":"function","function":{"name","description","parameters"}}` (the `tools`
//! array as JSON); with deferral, it carries the declaration of one `search_tools`
//! function, plus, after a search, the declarations of the top 5 hits (mean over the
//! requests).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_macros,
    missing_docs
)]

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use tools_search::{MAX_LIMIT, SearchIndex};

#[allow(dead_code, unreachable_pub)]
mod common;
use common::{Baseline, Tool, eval_dir, load_catalog, load_requests};

/// How many hits a search returns to the model in the deferred request.
const LOADED: usize = 5;

/// A tool in the Chat Completions function shape.
fn declaration(tool: &Tool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}

/// The one tool a deferred request declares up front.
fn search_tools() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "search_tools",
            "description": "Find tools by describing the task; the best matches are loaded for you to call.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do."},
                    "limit": {"type": "integer", "description": "How many tools to load (default 5)."}
                },
                "required": ["query"]
            }
        }
    })
}

#[derive(Default)]
struct Recall {
    at1: usize,
    at5: usize,
    reciprocal: f64,
}

impl Recall {
    fn add(&mut self, rank: Option<usize>) {
        if let Some(rank) = rank {
            self.at1 += usize::from(rank == 0);
            self.at5 += usize::from(rank < 5);
            self.reciprocal += 1.0 / (rank + 1) as f64;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (catalog_path, requests_path) = match args.as_slice() {
        [c, r] => (PathBuf::from(c), PathBuf::from(r)),
        [] => (
            eval_dir().join("catalog.jsonl"),
            eval_dir().join("requests.jsonl"),
        ),
        _ => panic!("usage: eval [CATALOG.jsonl REQUESTS.jsonl]"),
    };
    let catalog = load_catalog(&catalog_path).unwrap_or_else(|e| panic!("{e}"));
    let requests = load_requests(&requests_path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !requests.is_empty(),
        "no request in {}",
        requests_path.display()
    );

    let index = SearchIndex::build(catalog.iter().map(Tool::entry));
    let baseline = Baseline::build(&catalog);
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, tool) in catalog.iter().enumerate() {
        positions.entry(tool.name.as_str()).or_default().push(i);
    }
    let missing = requests
        .iter()
        .filter(|r| !positions.contains_key(r.expected.as_str()))
        .count();

    let bpe = tiktoken_rs::o200k_base().expect("o200k_base ships inside tiktoken-rs");
    let tokens = |value: &Value| bpe.encode_ordinary(&value.to_string()).len();
    let all: Vec<Value> = catalog.iter().map(declaration).collect();
    let without = tokens(&Value::Array(all));
    let search_only = tokens(&Value::Array(vec![search_tools()]));

    let mut ours = Recall::default();
    let mut theirs = Recall::default();
    let mut refused = 0usize;
    let mut with_total = 0usize;
    for request in &requests {
        let expected = positions
            .get(request.expected.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let hits: Vec<usize> = match index.search(&request.query, MAX_LIMIT) {
            Ok(hits) => hits.into_iter().map(|h| h.index).collect(),
            Err(_) => {
                refused += 1;
                Vec::new()
            }
        };
        let rank = hits.iter().position(|i| expected.contains(i));
        if std::env::var_os("EVAL_MISSES").is_some() && rank.is_none_or(|r| r >= 5) {
            let top: Vec<&str> = hits
                .iter()
                .take(5)
                .filter_map(|&i| catalog.get(i))
                .map(|t| t.name.as_str())
                .collect();
            eprintln!(
                "MISS {:?} expected {} (rank {rank:?}) top {top:?}",
                request.query, request.expected
            );
        }
        ours.add(rank);
        let scanned = baseline.search(&request.query, MAX_LIMIT);
        theirs.add(scanned.iter().position(|i| expected.contains(i)));

        let mut loaded = vec![search_tools()];
        loaded.extend(
            hits.iter()
                .take(LOADED)
                .filter_map(|&i| catalog.get(i))
                .map(declaration),
        );
        with_total += tokens(&Value::Array(loaded));
    }
    let n = requests.len() as f64;
    let with_mean = with_total as f64 / n;
    let rate = |count: usize| count as f64 / n;

    println!(
        "catalog: {} tools ({}); requests: {} ({} expect a tool not in the catalog, {} refused)",
        catalog.len(),
        catalog_path.display(),
        requests.len(),
        missing,
        refused
    );
    println!("{:<24} {:>12} {:>12}", "", "tools-search", "linear scan");
    println!(
        "{:<24} {:>12.3} {:>12.3}",
        "recall@1",
        rate(ours.at1),
        rate(theirs.at1)
    );
    println!(
        "{:<24} {:>12.3} {:>12.3}",
        "recall@5",
        rate(ours.at5),
        rate(theirs.at5)
    );
    println!(
        "{:<24} {:>12.3} {:>12.3}",
        "MRR (top 50)",
        ours.reciprocal / n,
        theirs.reciprocal / n
    );
    println!("tokens per request (o200k_base):");
    println!("  {:<36} {:>10}", "without deferral (every tool)", without);
    println!(
        "  {:<36} {:>10}",
        "search_tools declaration alone", search_only
    );
    println!(
        "  {:<36} {:>10.1}",
        "with deferral (+ top 5, mean)", with_mean
    );
    println!(
        "  {:<36} {:>10.1}",
        "saved (x fewer)",
        without as f64 / with_mean
    );
    let line = json!({
        "catalog_tools": catalog.len(),
        "requests": requests.len(),
        "expected_missing": missing,
        "refused": refused,
        "recall_at_1": rate(ours.at1),
        "recall_at_5": rate(ours.at5),
        "mrr": ours.reciprocal / n,
        "baseline_recall_at_1": rate(theirs.at1),
        "baseline_recall_at_5": rate(theirs.at5),
        "baseline_mrr": theirs.reciprocal / n,
        "tokenizer": "o200k_base",
        "tokens_without_deferral": without,
        "tokens_search_tools_only": search_only,
        "tokens_with_deferral_mean": with_mean,
        "token_ratio": without as f64 / with_mean,
    });
    println!("{line}");
}
