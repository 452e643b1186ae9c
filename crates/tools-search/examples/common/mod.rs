//! What `examples/measure.rs`, `examples/eval.rs` and `benches/search.rs` share: the
//! evaluation catalog and requests (`eval/`), a deterministic synthetic catalog when they
//! are absent, the catalog grown to a size by numbered copies, and the linear-scan
//! baseline the index is measured against.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tools_search::Entry;

/// One tool of a catalog, owned.
#[derive(Clone, Debug)]
pub struct Tool {
    pub name: String,
    pub namespace: Option<String>,
    pub description: String,
    pub parameters: Value,
}

impl Tool {
    pub fn entry(&self) -> Entry<'_> {
        Entry {
            name: &self.name,
            namespace: self.namespace.as_deref(),
            description: &self.description,
            parameters: &self.parameters,
        }
    }
}

/// One evaluation request: a user's words and the name of the tool that answers them.
#[derive(Clone, Debug)]
pub struct Request {
    pub query: String,
    pub expected: String,
}

/// The folder of the evaluation set.
pub fn eval_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("eval")
}

fn lines(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

fn string(value: &Value, key: &str, path: &Path) -> Result<String, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: a line has no string {key:?}", path.display()))
}

/// Reads a catalog in the `eval/catalog.jsonl` format
/// (`{"name","namespace","description","parameters","source"}` a line).
pub fn load_catalog(path: &Path) -> Result<Vec<Tool>, String> {
    lines(path)?
        .into_iter()
        .map(|line| {
            Ok(Tool {
                name: string(&line, "name", path)?,
                namespace: line
                    .get("namespace")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                description: line
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                parameters: line.get("parameters").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

/// Reads requests in the `eval/requests.jsonl` format (`{"query","expected","source"}` a
/// line; `expected` is a tool name).
pub fn load_requests(path: &Path) -> Result<Vec<Request>, String> {
    lines(path)?
        .into_iter()
        .map(|line| {
            Ok(Request {
                query: string(&line, "query", path)?,
                expected: string(&line, "expected", path)?,
            })
        })
        .collect()
}

/// `tools` grown to `n` by numbered copies (`name_r2`, `name_r3`, … for the second, third,
/// … round), or cut to `n`.
pub fn grow(tools: &[Tool], n: usize) -> Vec<Tool> {
    let mut out: Vec<Tool> = tools.iter().take(n).cloned().collect();
    let mut round = 2usize;
    while out.len() < n && !tools.is_empty() {
        for tool in tools {
            if out.len() == n {
                break;
            }
            let mut copy = tool.clone();
            copy.name = format!("{}_r{round}", tool.name);
            out.push(copy);
        }
        round += 1;
    }
    out
}

/// A small deterministic generator (SplitMix64), so the synthetic catalog is the same on
/// every run and machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
}

const SERVERS: [&str; 24] = [
    "github",
    "gitlab",
    "slack",
    "jira",
    "linear",
    "notion",
    "gdrive",
    "gmail",
    "calendar",
    "postgres",
    "sqlite",
    "redis",
    "s3",
    "kubernetes",
    "docker",
    "stripe",
    "shopify",
    "zendesk",
    "salesforce",
    "hubspot",
    "figma",
    "sentry",
    "datadog",
    "weather",
];
const VERBS: [&str; 20] = [
    "get", "list", "create", "update", "delete", "search", "send", "fetch", "archive", "export",
    "import", "move", "copy", "assign", "close", "open", "merge", "sync", "query", "render",
];
const NOUNS: [&str; 40] = [
    "issue",
    "pull_request",
    "comment",
    "file",
    "folder",
    "message",
    "channel",
    "user",
    "team",
    "project",
    "page",
    "database",
    "table",
    "row",
    "record",
    "bucket",
    "object",
    "pod",
    "deployment",
    "container",
    "image",
    "invoice",
    "payment",
    "customer",
    "order",
    "product",
    "ticket",
    "event",
    "meeting",
    "contact",
    "deal",
    "dashboard",
    "alert",
    "metric",
    "log",
    "forecast",
    "label",
    "branch",
    "commit",
    "release",
];
const QUALIFIERS: [&str; 16] = [
    "by id",
    "in bulk",
    "with filters",
    "for the current user",
    "across workspaces",
    "from the archive",
    "by date range",
    "with pagination",
    "as markdown",
    "as JSON",
    "for a team",
    "by owner",
    "with attachments",
    "in a region",
    "by status",
    "by tag",
];
const PARAMS: [&str; 24] = [
    "id",
    "name",
    "query",
    "limit",
    "cursor",
    "owner",
    "repo",
    "path",
    "content",
    "status",
    "tags",
    "start_date",
    "end_date",
    "region",
    "channel_id",
    "user_id",
    "title",
    "body",
    "priority",
    "assignee",
    "format",
    "timeout",
    "dry_run",
    "fields",
];

/// A deterministic catalog of `n` plausible tools (24 servers, 20 verbs, 40 nouns).
pub fn synthetic(n: usize) -> Vec<Tool> {
    let mut rng = Rng(0x5EED);
    (0..n)
        .map(|i| {
            let server = SERVERS[i % SERVERS.len()];
            let verb = rng.pick(&VERBS);
            let noun = rng.pick(&NOUNS);
            let qualifier = rng.pick(&QUALIFIERS);
            let mut properties = serde_json::Map::new();
            for _ in 0..(2 + rng.next() % 4) {
                let param = rng.pick(&PARAMS);
                let what = rng.pick(&NOUNS).replace('_', " ");
                properties.insert(
                    param.to_owned(),
                    json!({"type": "string", "description": format!("The {param} of the {what}.")}),
                );
            }
            Tool {
                name: format!("{server}_{verb}_{noun}_{i}"),
                namespace: Some(server.to_owned()),
                description: format!(
                    "{} a {} {qualifier} in {server}. Returns the {} and its metadata.",
                    capitalise(verb),
                    noun.replace('_', " "),
                    noun.replace('_', " "),
                ),
                parameters: json!({"type": "object", "properties": properties}),
            }
        })
        .collect()
}

/// Deterministic requests over the synthetic vocabulary ("update the invoice by status").
pub fn synthetic_queries(n: usize) -> Vec<String> {
    let mut rng = Rng(0xC0FFEE);
    (0..n)
        .map(|_| {
            format!(
                "{} the {} {} in {}",
                rng.pick(&VERBS),
                rng.pick(&NOUNS).replace('_', " "),
                rng.pick(&QUALIFIERS),
                rng.pick(&SERVERS)
            )
        })
        .collect()
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The catalog of `n` tools the measurements use, with a word on where it came from: the
/// evaluation catalog grown by numbered copies when `eval/catalog.jsonl` is there, else the
/// synthetic one; and the queries: the evaluation requests, else synthetic ones.
pub fn workload(n: usize) -> (Vec<Tool>, Vec<String>, &'static str) {
    let dir = eval_dir();
    let catalog = load_catalog(&dir.join("catalog.jsonl"));
    let requests = load_requests(&dir.join("requests.jsonl"));
    match (catalog, requests) {
        (Ok(catalog), Ok(requests)) if !catalog.is_empty() && !requests.is_empty() => (
            grow(&catalog, n),
            requests.into_iter().map(|r| r.query).collect(),
            "eval/catalog.jsonl grown by numbered copies; eval/requests.jsonl",
        ),
        _ => (synthetic(n), synthetic_queries(500), "synthetic"),
    }
}

/// The baseline: a linear scan over each tool's lowercased text (name, namespace,
/// description, parameters as JSON), counting how many of the query's words it contains.
pub struct Baseline {
    texts: Vec<String>,
}

impl Baseline {
    pub fn build(tools: &[Tool]) -> Baseline {
        Baseline {
            texts: tools
                .iter()
                .map(|tool| {
                    format!(
                        "{} {} {} {}",
                        tool.name,
                        tool.namespace.as_deref().unwrap_or(""),
                        tool.description,
                        tool.parameters
                    )
                    .to_lowercase()
                })
                .collect(),
        }
    }

    /// The positions of the tools containing the most query words, most first, ties in
    /// catalog order; at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let query = query.to_lowercase();
        let mut words: Vec<&str> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 1)
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut found: Vec<(usize, usize)> = self
            .texts
            .iter()
            .enumerate()
            .filter_map(|(i, text)| {
                let count = words.iter().filter(|w| text.contains(**w)).count();
                (count > 0).then_some((count, i))
            })
            .collect();
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        found.truncate(limit);
        found.into_iter().map(|(_, i)| i).collect()
    }

    pub fn heap_bytes(&self) -> usize {
        self.texts.iter().map(String::capacity).sum::<usize>()
            + self.texts.capacity() * std::mem::size_of::<String>()
    }
}

/// The value at quantile `q` (0..=1) of sorted `values`.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}
