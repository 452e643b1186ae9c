#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod analyze;
mod document;
mod error;
mod index;
mod pattern;

pub use error::Error;
pub use index::SearchIndex;

/// The most characters (Unicode scalar values) a BM25 query may have.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// The most characters a regex-mode pattern may have: the limit of Anthropic's
/// `tool_search_tool_regex`.
pub const MAX_PATTERN_CHARS: usize = 200;

/// The most hits one search returns: a larger `limit` is clamped to it, and a `limit` of 0
/// returns no hits.
pub const MAX_LIMIT: usize = 50;

/// The compiled-program size limit of a regex-mode pattern, in bytes (`regex`'s
/// `size_limit`); a pattern over it is refused with [`Error::PatternTooLarge`].
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// The lazy DFA's cache size limit of a regex-mode pattern, in bytes per searching thread
/// (`regex`'s `dfa_size_limit`); past it the search goes on, slower, never failing.
pub const PATTERN_DFA_SIZE_LIMIT: usize = 2 << 20;

/// One tool as the index sees it. The index copies what it needs, so an entry only
/// borrows.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// The tool's name, as the model calls it (`get_weatherForecast`).
    pub name: &'a str,
    /// The namespace the tool comes from (an MCP server's name, say), if any.
    pub namespace: Option<&'a str>,
    /// The tool's description.
    pub description: &'a str,
    /// The tool's parameter schema (JSON Schema): its property names and descriptions are
    /// indexed, through nested `properties`, `items`, `additionalProperties`, `anyOf`,
    /// `oneOf` and `allOf`, to a bounded depth.
    pub parameters: &'a serde_json::Value,
}

/// One tool found by a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The tool's position in the order the index was built from.
    pub index: usize,
    /// How well it matches, higher first: the BM25 score in [`SearchIndex::search`]; 1.0
    /// (the name matches) or 0.5 (only other text matches) in
    /// [`SearchIndex::search_regex`].
    pub score: f32,
}
