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
#[path = "index_tests.rs"]
mod tests;
