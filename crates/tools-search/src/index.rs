//! The index: BM25 postings over the tools' terms, and the tools' text for regex mode.
//!
//! Ranking is BM25 exactly as the `bm25` crate (Michael-JB/bm25, the one codex-rs uses)
//! defines it: its term weight tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl)) with k1 = 1.2
//! and b = 0.75, and its inverse document frequency ln(1 + (N − n + 0.5) / (n + 0.5)). A
//! unit test builds the crate's own `SearchEngine` over the same terms and checks that
//! every score agrees. The crate is not used at run time: measured on a 10 000-tool
//! catalog (`eval/` grown by copies), its `Embedder` alone takes 120 to 150 ms, since it
//! re-tokenizes each tool's text into owned strings and counts them in a SipHash map, and
//! its `SearchEngine` takes 230 to 320 ms to build and 1 to 5 ms per query, since it scores
//! every matching tool through hash lookups and sorts them all, with ties in `HashMap`
//! order. The budgets are 100 ms and 100 µs. So the index interns each distinct word once,
//! computes the crate's weights itself, and keeps its own postings lists (term → the tools
//! that have it, in build order, the IDF multiplied in): a query adds up the postings of
//! its own terms, touches only the tools that share one, and keeps the best `limit` in a
//! short sorted list, ties in build order.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

use foldhash::fast::RandomState;

use crate::analyze::Analyzer;
use crate::document::{MAX_TERMS, Piece, tool_terms, tool_text};
use crate::{Entry, Error, Hit, MAX_LIMIT, MAX_QUERY_CHARS, pattern};

/// BM25's term-frequency saturation (the usual 1.2, `bm25`'s default).
const K1: f32 = 1.2;

/// BM25's length normalisation (the usual 0.75, `bm25`'s default).
const B: f32 = 0.75;

/// The most tools one index holds (a tool's position is kept in 32 bits); later entries
/// are left out.
const MAX_ENTRIES: usize = u32::MAX as usize;

/// The score one tool gets from one term.
#[derive(Clone, Copy, Debug, Default)]
struct Posting {
    /// The tool's position in build order.
    doc: u32,
    /// The term's BM25 weight in the tool times the term's inverse document frequency.
    weight: f32,
}

/// Where one tool's regex text ends in [`SearchIndex::text`]: the name runs from the
/// previous tool's `end` to `name_end`, the rest of its text from there to `end`.
#[derive(Clone, Copy, Debug)]
struct Span {
    name_end: usize,
    end: usize,
}

/// The terms met while building: each distinct word's term (catalogs repeat their words,
/// so each is lowercased and stemmed once) and each term's number.
struct Vocab<'a> {
    analyzer: Analyzer,
    words: HashMap<&'a str, Option<u32>, RandomState>,
    terms: HashMap<Box<str>, u32, RandomState>,
}

impl<'a> Vocab<'a> {
    fn new() -> Vocab<'a> {
        Vocab {
            analyzer: Analyzer::new(),
            words: HashMap::default(),
            terms: HashMap::default(),
        }
    }

    /// The term number of a word; `None` for a stop word.
    fn word(&mut self, word: &'a str) -> Option<u32> {
        if let Some(&id) = self.words.get(word) {
            return id;
        }
        let id = self.analyzer.term(word).map(|term| self.intern(term));
        self.words.insert(word, id);
        id
    }

    /// The number of a term, given a new one if it is new.
    fn intern(&mut self, term: String) -> u32 {
        let next = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        *self.terms.entry(term.into_boxed_str()).or_insert(next)
    }
}

/// The search index over one scope's deferred tools: BM25 over their names, namespaces,
/// descriptions and parameters, and a regex mode over the same text.
///
/// Built once ([`SearchIndex::build`]), immutable afterwards, `Send + Sync`: share it (in
/// an `Arc`) and query it from any number of threads at once.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_search::{Entry, SearchIndex};
///
/// let none = json!({});
/// let index = SearchIndex::build([
///     Entry { name: "read_file", namespace: None, description: "Read a file.", parameters: &none },
///     Entry { name: "send_email", namespace: Some("mail"), description: "Send a message.", parameters: &none },
/// ]);
/// let hits = index.search("email someone", 5)?;
/// assert_eq!(hits.len(), 1);
/// assert_eq!(hits[0].index, 1);
/// # Ok::<(), tools_search::Error>(())
/// ```
pub struct SearchIndex {
    /// How many tools the index holds.
    len: usize,
    /// Term → term number.
    terms: HashMap<Box<str>, u32, RandomState>,
    /// Term number → where its postings start in `postings` (one more entry than terms).
    offsets: Vec<usize>,
    /// Every term's postings, term by term, each list in build order.
    postings: Vec<Posting>,
    /// Every tool's regex text, tool after tool: its name, then the rest (see [`Span`]).
    text: String,
    /// Per tool, where its text ends.
    spans: Vec<Span>,
}

impl SearchIndex {
    /// Builds the index over `entries`; a hit's [`Hit::index`] is the entry's position in
    /// this order.
    ///
    /// Each tool is indexed as its name (split into words at `_`, `-`, `.`, camelCase and
    /// letters/digits, each word counted three times, plus the whole lowercased name), its
    /// namespace (split the same way), its description, and its parameters' property
    /// names and descriptions (nested ones too, to a bounded depth). Words are lowercased,
    /// English stop words dropped and the rest stemmed. Never fails: a schema that is not an
    /// object, or is huge or deeply nested, is read as far as the bounds allow.
    pub fn build<'a>(entries: impl IntoIterator<Item = Entry<'a>>) -> SearchIndex {
        let mut vocab = Vocab::new();
        // Every tool's term numbers, tool after tool, and where each tool's end.
        let mut all_terms: Vec<u32> = Vec::new();
        let mut ends: Vec<usize> = Vec::new();
        let mut text = String::new();
        let mut spans = Vec::new();
        for entry in entries.into_iter().take(MAX_ENTRIES) {
            let start = all_terms.len();
            tool_terms(&entry, |piece| {
                let room = MAX_TERMS.saturating_sub(all_terms.len().saturating_sub(start));
                if room == 0 {
                    return;
                }
                match piece {
                    Piece::Word(word, repeat) => {
                        if let Some(id) = vocab.word(word) {
                            all_terms.extend(std::iter::repeat_n(id, repeat.min(room)));
                        }
                    }
                    Piece::Whole(whole) => all_terms.push(vocab.intern(whole)),
                }
            });
            ends.push(all_terms.len());
            text.push_str(entry.name);
            let name_end = text.len();
            tool_text(&entry, &mut text);
            spans.push(Span {
                name_end,
                end: text.len(),
            });
        }
        let len = ends.len();
        let avgdl = if len == 0 {
            0.0
        } else {
            (all_terms.len() as f64 / len as f64) as f32
        };

        // Each tool's terms sorted in place, so that its distinct terms are runs: a first
        // pass counts the tools each term is in, a second writes the postings.
        let mut df = vec![0u32; vocab.terms.len()];
        let mut start = 0usize;
        for &end in &ends {
            if let Some(terms) = all_terms.get_mut(start..end) {
                terms.sort_unstable();
                for run in terms.chunk_by(|a, b| a == b) {
                    if let Some(count) = run.first().and_then(|&id| df.get_mut(id as usize)) {
                        *count = count.saturating_add(1);
                    }
                }
            }
            start = end;
        }
        let idfs: Vec<f32> = df.iter().map(|&frequency| idf(len, frequency)).collect();
        let mut offsets = Vec::with_capacity(df.len().saturating_add(1));
        let mut at = 0usize;
        offsets.push(at);
        for &count in &df {
            at = at.saturating_add(count as usize);
            offsets.push(at);
        }
        drop(df);
        let mut fill: Vec<usize> = offsets.clone();
        let mut postings = vec![Posting::default(); at];
        let mut start = 0usize;
        for (doc, &end) in ends.iter().enumerate() {
            let Ok(doc) = u32::try_from(doc) else { break };
            let terms = all_terms.get(start..end).unwrap_or_default();
            start = end;
            for run in terms.chunk_by(|a, b| a == b) {
                let Some(&id) = run.first() else { continue };
                let id = id as usize;
                if let Some(slot) = fill.get_mut(id)
                    && let Some(posting) = postings.get_mut(*slot)
                {
                    let weight = term_weight(run.len(), terms.len(), avgdl);
                    *posting = Posting {
                        doc,
                        weight: idfs.get(id).copied().unwrap_or(0.0) * weight,
                    };
                    *slot = slot.saturating_add(1);
                }
            }
        }
        drop(all_terms);
        let mut terms = vocab.terms;
        terms.shrink_to_fit();
        text.shrink_to_fit();
        SearchIndex {
            len,
            terms,
            offsets,
            postings,
            text,
            spans,
        }
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The tools that best match `query`, best first: BM25 over the words of the query
    /// (split, lowercased, stemmed and without stop words like the tools' text; a query
    /// word repeated counts once), ties in build order. At most `limit` hits, clamped to
    /// [`MAX_LIMIT`]; only tools that share a word with the query.
    ///
    /// A query with no word left to search by (only punctuation or stop words) finds
    /// nothing; it is not an error.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyQuery`] for an empty or white-space-only query,
    /// [`Error::QueryTooLong`] past [`MAX_QUERY_CHARS`].
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        if query.trim().is_empty() {
            return Err(Error::EmptyQuery);
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(Error::QueryTooLong {
                chars,
                max: MAX_QUERY_CHARS,
            });
        }
        let limit = limit.min(MAX_LIMIT);
        if limit == 0 || self.len == 0 {
            return Ok(Vec::new());
        }
        let mut words = Vec::new();
        Analyzer::new().query(query, &mut words);
        let mut ids: Vec<u32> = words
            .iter()
            .filter_map(|word| self.terms.get(word.as_str()))
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();

        let mut scores = vec![0f32; self.len];
        let mut touched: Vec<u32> = Vec::new();
        for id in ids {
            for posting in self.postings_of(id) {
                if let Some(score) = scores.get_mut(posting.doc as usize) {
                    if *score == 0.0 {
                        touched.push(posting.doc);
                    }
                    *score += posting.weight;
                }
            }
        }
        // The best `limit` hits, best first: a short sorted list that a candidate enters
        // only when it beats the last one.
        let mut hits: Vec<Hit> = Vec::with_capacity(limit.saturating_add(1));
        for doc in touched {
            let Some(&score) = scores.get(doc as usize) else {
                continue;
            };
            let hit = Hit {
                index: doc as usize,
                score,
            };
            if score.partial_cmp(&0.0) != Some(Ordering::Greater)
                || (hits.len() == limit
                    && hits
                        .last()
                        .is_some_and(|last| rank(&hit, last) != Ordering::Less))
            {
                continue;
            }
            let at = hits.partition_point(|kept| rank(kept, &hit) == Ordering::Less);
            hits.insert(at, hit);
            hits.truncate(limit);
        }
        Ok(hits)
    }

    /// The tools whose text matches the regular expression `pattern` (Rust `regex` syntax,
    /// case-insensitive, matched in linear time): first those whose name matches (score
    /// 1.0), then those where only the namespace, description or a parameter name or
    /// description matches (score 0.5), each group in build order. `^` and `$` match at
    /// the start and end of each of those fields. At most `limit` hits, clamped to
    /// [`MAX_LIMIT`].
    ///
    /// # Errors
    ///
    /// [`Error::EmptyPattern`], [`Error::PatternTooLong`] past
    /// [`MAX_PATTERN_CHARS`](crate::MAX_PATTERN_CHARS), [`Error::InvalidPattern`] with the
    /// `regex` crate's explanation, [`Error::PatternTooLarge`] past
    /// [`PATTERN_SIZE_LIMIT`](crate::PATTERN_SIZE_LIMIT).
    pub fn search_regex(&self, pattern: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        let regex = pattern::compile(pattern)?;
        let limit = limit.min(MAX_LIMIT);
        let mut hits = Vec::new();
        if limit == 0 {
            return Ok(hits);
        }
        for (index, name, _) in self.fields() {
            if hits.len() == limit {
                return Ok(hits);
            }
            if regex.is_match(name) {
                hits.push(Hit { index, score: 1.0 });
            }
        }
        for (index, name, rest) in self.fields() {
            if hits.len() == limit {
                break;
            }
            if !regex.is_match(name) && regex.is_match(rest) {
                hits.push(Hit { index, score: 0.5 });
            }
        }
        Ok(hits)
    }

    /// Approximately how many heap bytes the index holds: its postings, term table and
    /// text (what a tool costs in memory is this divided by [`SearchIndex::len`]).
    pub fn heap_bytes(&self) -> usize {
        let terms = self.terms.capacity();
        let table = if terms == 0 {
            0
        } else {
            // hashbrown: a power-of-two number of buckets at most 7/8 full, each an entry
            // and a control byte.
            let buckets = terms.saturating_mul(8).div_ceil(7).next_power_of_two();
            buckets.saturating_mul(std::mem::size_of::<(Box<str>, u32)>() + 1)
        };
        let strings: usize = self.terms.keys().map(|term| term.len()).sum();
        table
            .saturating_add(strings)
            .saturating_add(self.offsets.capacity() * std::mem::size_of::<usize>())
            .saturating_add(self.postings.capacity() * std::mem::size_of::<Posting>())
            .saturating_add(self.text.capacity())
            .saturating_add(self.spans.capacity() * std::mem::size_of::<Span>())
    }

    /// The postings of term `id`.
    fn postings_of(&self, id: u32) -> &[Posting] {
        let id = id as usize;
        let (Some(&start), Some(&end)) = (self.offsets.get(id), self.offsets.get(id + 1)) else {
            return &[];
        };
        self.postings.get(start..end).unwrap_or_default()
    }

    /// Each tool's position, name and other text, in build order.
    fn fields(&self) -> impl Iterator<Item = (usize, &str, &str)> {
        let mut start = 0;
        self.spans.iter().enumerate().map(move |(index, span)| {
            let name = self.text.get(start..span.name_end).unwrap_or_default();
            let rest = self.text.get(span.name_end..span.end).unwrap_or_default();
            start = span.end;
            (index, name, rest)
        })
    }
}

impl Default for SearchIndex {
    /// An index over no tool.
    fn default() -> SearchIndex {
        SearchIndex::build([])
    }
}

impl fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchIndex")
            .field("len", &self.len)
            .field("terms", &self.terms.len())
            .field("postings", &self.postings.len())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

/// `bm25`'s term weight (its `Embedder`'s formula): tf·(k1 + 1) / (tf + k1·(1 − b +
/// b·dl/avgdl)) for a term found `tf` times in a tool of `length` terms.
fn term_weight(tf: usize, length: usize, avgdl: f32) -> f32 {
    // `bm25`'s fallback average for an empty corpus (never used here: a tool with a term
    // makes the average positive).
    let avgdl = if avgdl <= 0.0 { 256.0 } else { avgdl };
    let tf = tf as f32;
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * (length as f32 / avgdl)))
}

/// `bm25`'s inverse document frequency (its `Scorer`'s formula): ln(1 + (N − n + 0.5) /
/// (n + 0.5)) for a term found in n of N tools; always positive.
fn idf(tools: usize, frequency: u32) -> f32 {
    let n = frequency as f32;
    let numerator = tools as f32 - n + 0.5;
    let denominator = n + 0.5;
    (1.0 + numerator / denominator).ln()
}

/// Best first: higher score, then earlier in build order.
fn rank(a: &Hit, b: &Hit) -> Ordering {
    b.score.total_cmp(&a.score).then(a.index.cmp(&b.index))
}

#[cfg(test)]
mod tests {
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
}
