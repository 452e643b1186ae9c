//! Result views: how a UI shows a completed call.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ContentBlock, Error, FileDiff, ReadFileLine, SearchFileMatches, SearchLineMatch, WebSource,
    lang_for_path,
};

/// How a UI shows a completed call: one of six cards, tagged by `card`. It replaces the
/// pending view.
///
/// The union is closed (see [`ToolCallView`](crate::ToolCallView)). `search` cards are
/// further tagged by `shape` (`matches` or `paths`) and `web` cards by `kind` (`search` or
/// `fetch`). A missing `title` keeps the pending title.
///
/// # Stable format
///
/// ```json
/// {"card": "generic", "title"?: "…", "content"?: [block]}
/// {"card": "terminal", "title"?: "…", "output"?: "…", "exitCode"?: n, "signal"?: "SIGTERM"}
/// {"card": "diff", "title"?: "…", "diffs": [diff]}
/// {"card": "search", "shape": "matches", "title"?: "…", "files": [{"path", "matches": [{"lineNumber", "line"}]}], "truncated": bool, "total": n}
/// {"card": "search", "shape": "paths", "title"?: "…", "paths": ["…"], "truncated": bool, "total": n}
/// {"card": "read", "title"?: "…", "path": "…", "offset": n, "lines": [{"number", "text"}], "totalLines": n, "lang"?: "…", "content"?: [block]}
/// {"card": "web", "kind": "search", "title"?: "…", "sources": [source], "answer"?: "…", "truncated": bool}
/// {"card": "web", "kind": "fetch", "title"?: "…", "url": "…", "statusCode": n, "truncated": bool}
/// ```
///
/// Reading back checks each card's rules (line numbering of a read window, a search's
/// total); a view that breaks them is an error, and the caller shows
/// [`ToolResultView::fallback`] instead.
///
/// # Examples
///
/// ```
/// use tools_presentation::{ToolResultView, TerminalResultView};
/// use serde_json::json;
///
/// let view: ToolResultView = TerminalResultView::new().with_output("hi\n").with_exit_code(0).into();
/// assert_eq!(view.to_json(), json!({"card": "terminal", "output": "hi\n", "exitCode": 0}));
/// assert!(ToolResultView::from_json(&json!({"card": "chart"})).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "lowercase")]
pub enum ToolResultView {
    /// The default card: a replacement title and reformatted content.
    Generic(GenericResultView),
    /// A finished shell command.
    Terminal(TerminalResultView),
    /// An applied file change.
    Diff(DiffResultView),
    /// A content or path search.
    Search(SearchResultView),
    /// A window of a file's lines.
    Read(ReadResultView),
    /// A web search or fetch.
    Web(WebResultView),
}

/// Which card a result view is, without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultCard {
    /// [`ToolResultView::Generic`].
    Generic,
    /// [`ToolResultView::Terminal`].
    Terminal,
    /// [`ToolResultView::Diff`].
    Diff,
    /// [`ToolResultView::Search`].
    Search,
    /// [`ToolResultView::Read`].
    Read,
    /// [`ToolResultView::Web`].
    Web,
}

impl ToolResultView {
    /// The generic fallback for a result without a view: no title (the pending one stays)
    /// and no content (the UI shows the raw result content).
    pub fn fallback() -> ToolResultView {
        ToolResultView::Generic(GenericResultView::new())
    }

    /// The replacement title, if any.
    pub fn title(&self) -> Option<&str> {
        match self {
            ToolResultView::Generic(view) => view.title(),
            ToolResultView::Terminal(view) => view.title(),
            ToolResultView::Diff(view) => view.title(),
            ToolResultView::Search(view) => view.title(),
            ToolResultView::Read(view) => view.title(),
            ToolResultView::Web(view) => view.title(),
        }
    }

    /// Which card this is.
    pub fn card(&self) -> ResultCard {
        match self {
            ToolResultView::Generic(_) => ResultCard::Generic,
            ToolResultView::Terminal(_) => ResultCard::Terminal,
            ToolResultView::Diff(_) => ResultCard::Diff,
            ToolResultView::Search(_) => ResultCard::Search,
            ToolResultView::Read(_) => ResultCard::Read,
            ToolResultView::Web(_) => ResultCard::Web,
        }
    }

    /// The view in its stable JSON format.
    pub fn to_json(&self) -> Value {
        // Every key is a string and every number finite: serialisation cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a view back from its stable JSON format, checking every card's rules.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for an unknown `card`, `shape` or web `kind`, a missing or
    /// mistyped field, or a broken rule. Show [`ToolResultView::fallback`] instead.
    pub fn from_json(value: &Value) -> Result<ToolResultView, Error> {
        ToolResultView::deserialize(value).map_err(|e| Error::malformed("tool result view", e))
    }

    /// Reads a view back from JSON text, with the workspace's depth limit for the JSON the
    /// view carries (see [`ToolCallView::from_json_str`](crate::ToolCallView::from_json_str)).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for text that is not JSON or not a view.
    pub fn from_json_str(text: &str) -> Result<ToolResultView, Error> {
        let value =
            crate::parse_view_text(text).map_err(|e| Error::malformed("tool result view", e))?;
        ToolResultView::from_json(&value)
    }
}

impl Default for ToolResultView {
    /// [`ToolResultView::fallback`].
    fn default() -> Self {
        ToolResultView::fallback()
    }
}

impl TryFrom<Value> for ToolResultView {
    type Error = Error;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        ToolResultView::from_json(&value)
    }
}

impl TryFrom<&Value> for ToolResultView {
    type Error = Error;

    fn try_from(value: &Value) -> Result<Self, Self::Error> {
        ToolResultView::from_json(value)
    }
}

macro_rules! into_result_view {
    ($($view:ty => $variant:ident ($wrap:expr)),* $(,)?) => {$(
        impl From<$view> for ToolResultView {
            fn from(view: $view) -> Self {
                ToolResultView::$variant($wrap(view))
            }
        }
    )*};
}

into_result_view! {
    GenericResultView => Generic(std::convert::identity),
    TerminalResultView => Terminal(std::convert::identity),
    DiffResultView => Diff(std::convert::identity),
    SearchResultView => Search(std::convert::identity),
    SearchMatchesView => Search(SearchResultView::Matches),
    SearchPathsView => Search(SearchResultView::Paths),
    ReadResultView => Read(std::convert::identity),
    WebResultView => Web(std::convert::identity),
    WebSearchView => Web(WebResultView::Search),
    WebFetchView => Web(WebResultView::Fetch),
}

/// Builder methods shared by every result view: the optional replacement title.
macro_rules! title_methods {
    ($view:ty) => {
        impl $view {
            /// The same view with a replacement title.
            #[must_use]
            pub fn with_title(mut self, title: impl Into<String>) -> Self {
                self.title = Some(title.into());
                self
            }

            /// The replacement title, if any.
            pub fn title(&self) -> Option<&str> {
                self.title.as_deref()
            }
        }
    };
}

/// The default completed card: an optional replacement title and UI-facing content.
///
/// Without `content` the UI shows the raw result content; with an empty `content` it shows
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenericResultView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<Vec<ContentBlock>>,
}

title_methods!(GenericResultView);

impl GenericResultView {
    /// A card with neither title nor content.
    pub fn new() -> GenericResultView {
        GenericResultView::default()
    }

    /// The same card with this content.
    #[must_use]
    pub fn with_content(mut self, content: impl IntoIterator<Item = ContentBlock>) -> Self {
        self.content = Some(content.into_iter().collect());
        self
    }

    /// The content, if any.
    pub fn content(&self) -> Option<&[ContentBlock]> {
        self.content.as_deref()
    }
}

/// The completed state of a terminal card: captured output and how the process ended.
///
/// `exit_code` and `signal` exclude each other: the builder methods keep only the last one
/// set. A view read back with both prefers the signal ([`TerminalResultView::exit`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalResultView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
}

title_methods!(TerminalResultView);

/// How a terminal's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TerminalExit<'a> {
    /// It exited with this code.
    Code(i64),
    /// A signal (such as `SIGTERM`) ended it.
    Signal(&'a str),
}

impl TerminalResultView {
    /// A card with no output and no exit status.
    pub fn new() -> TerminalResultView {
        TerminalResultView::default()
    }

    /// The same card with the combined captured output.
    #[must_use]
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = Some(output.into());
        self
    }

    /// The same card ended by exiting with `code` (clears any signal).
    #[must_use]
    pub fn with_exit_code(mut self, code: i64) -> Self {
        self.exit_code = Some(code);
        self.signal = None;
        self
    }

    /// The same card ended by `signal` (clears any exit code).
    #[must_use]
    pub fn with_signal(mut self, signal: impl Into<String>) -> Self {
        self.signal = Some(signal.into());
        self.exit_code = None;
        self
    }

    /// The captured output, if any.
    pub fn output(&self) -> Option<&str> {
        self.output.as_deref()
    }

    /// The exit code field as stored.
    pub fn exit_code(&self) -> Option<i64> {
        self.exit_code
    }

    /// The signal field as stored.
    pub fn signal(&self) -> Option<&str> {
        self.signal.as_deref()
    }

    /// How the process ended, the signal winning over an exit code; `None` when unknown.
    pub fn exit(&self) -> Option<TerminalExit<'_>> {
        match (&self.signal, self.exit_code) {
            (Some(signal), _) => Some(TerminalExit::Signal(signal)),
            (None, Some(code)) => Some(TerminalExit::Code(code)),
            (None, None) => None,
        }
    }
}

/// An applied file change: the hunks with their context lines, or a whole-file diff when
/// there is no before-image. Mutation tools return it even when it repeats the call's diff,
/// because the completed view replaces the pending one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffResultView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    diffs: Vec<FileDiff>,
}

title_methods!(DiffResultView);

impl DiffResultView {
    /// A card with these diffs, in file order.
    pub fn new(diffs: impl IntoIterator<Item = FileDiff>) -> DiffResultView {
        DiffResultView {
            title: None,
            diffs: diffs.into_iter().collect(),
        }
    }

    /// A card showing the change of one file from `before` (or no before-image) to
    /// `after`: the changed hunks with three lines of context, or the whole file.
    ///
    /// See [`DiffOptions`](crate::DiffOptions) for other context sizes.
    pub fn from_change(path: &str, before: Option<&str>, after: &str) -> DiffResultView {
        DiffResultView::new(FileDiff::hunks(path, before, after))
    }

    /// The diffs.
    pub fn diffs(&self) -> &[FileDiff] {
        &self.diffs
    }
}

/// A completed search, tagged by `shape`: grouped content matches or a flat path list.
///
/// Both carry `truncated` and `total` so a UI never presents a capped result as complete.
/// The card carries no text copy: a UI without a search card shows the raw content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum SearchResultView {
    /// Matched lines grouped by file (`grep`).
    Matches(SearchMatchesView),
    /// Discovered paths (`glob`).
    Paths(SearchPathsView),
}

impl SearchResultView {
    /// The replacement title, if any.
    pub fn title(&self) -> Option<&str> {
        match self {
            SearchResultView::Matches(view) => view.title(),
            SearchResultView::Paths(view) => view.title(),
        }
    }

    /// Whether the tool capped the result.
    pub fn truncated(&self) -> bool {
        match self {
            SearchResultView::Matches(view) => view.truncated(),
            SearchResultView::Paths(view) => view.truncated(),
        }
    }

    /// The number of results found before capping.
    pub fn total(&self) -> u64 {
        match self {
            SearchResultView::Matches(view) => view.total(),
            SearchResultView::Paths(view) => view.total(),
        }
    }
}

fn check_total(total: u64, retained: u64, truncated: bool) -> Result<(), Error> {
    let fits = if truncated {
        total >= retained
    } else {
        total == retained
    };
    if fits {
        Ok(())
    } else {
        Err(Error::SearchTotal {
            total,
            retained,
            truncated,
        })
    }
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Matched lines grouped by file, in first-seen file order.
///
/// `total` counts the matches found before capping: it equals the number of matches carried
/// when not truncated, and is at least that number when truncated. An empty search is a
/// real card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawSearchMatches")]
pub struct SearchMatchesView {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    files: Vec<SearchFileMatches>,
    truncated: bool,
    total: u64,
}

title_methods!(SearchMatchesView);

#[derive(Deserialize)]
struct RawSearchMatches {
    #[serde(default)]
    title: Option<String>,
    files: Vec<SearchFileMatches>,
    truncated: bool,
    total: u64,
}

impl TryFrom<RawSearchMatches> for SearchMatchesView {
    type Error = Error;

    fn try_from(raw: RawSearchMatches) -> Result<Self, Self::Error> {
        let view = SearchMatchesView::new(raw.files, raw.truncated, raw.total)?;
        Ok(SearchMatchesView {
            title: raw.title,
            ..view
        })
    }
}

impl SearchMatchesView {
    /// A complete (not truncated) search; the total is the number of matches.
    pub fn complete(files: Vec<SearchFileMatches>) -> SearchMatchesView {
        let total = count(files.iter().map(|f| f.matches.len()).sum());
        SearchMatchesView {
            title: None,
            files,
            truncated: false,
            total,
        }
    }

    /// A search that found `total` matches, carrying these.
    ///
    /// # Errors
    ///
    /// [`Error::SearchTotal`] when `total` disagrees with the matches carried.
    pub fn new(
        files: Vec<SearchFileMatches>,
        truncated: bool,
        total: u64,
    ) -> Result<SearchMatchesView, Error> {
        let retained = count(files.iter().map(|f| f.matches.len()).sum());
        check_total(total, retained, truncated)?;
        Ok(SearchMatchesView {
            title: None,
            files,
            truncated,
            total,
        })
    }

    /// The files with their matches.
    pub fn files(&self) -> &[SearchFileMatches] {
        &self.files
    }

    /// Whether the tool capped the result.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The number of matches found before capping.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Groups `(path, line number, line)` matches by file in first-seen order, as a
    /// complete search. Line 0 is refused.
    ///
    /// # Errors
    ///
    /// [`Error::SearchLineZero`] for a match on line 0.
    pub fn from_matches<P, L>(
        matches: impl IntoIterator<Item = (P, u32, L)>,
    ) -> Result<SearchMatchesView, Error>
    where
        P: Into<String>,
        L: Into<String>,
    {
        let mut files: Vec<SearchFileMatches> = Vec::new();
        for (path, number, line) in matches {
            let path = path.into();
            let Some(number) = NonZeroU32::new(number) else {
                return Err(Error::SearchLineZero { path });
            };
            let found = SearchLineMatch::new(number, line);
            match files.iter_mut().find(|f| f.path == path) {
                Some(file) => file.matches.push(found),
                None => files.push(SearchFileMatches::new(path, vec![found])),
            }
        }
        Ok(SearchMatchesView::complete(files))
    }
}

/// A flat list of discovered paths, in the tool's order.
///
/// `total` equals the number of paths when not truncated, and is at least that number when
/// truncated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawSearchPaths")]
pub struct SearchPathsView {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    paths: Vec<String>,
    truncated: bool,
    total: u64,
}

title_methods!(SearchPathsView);

#[derive(Deserialize)]
struct RawSearchPaths {
    #[serde(default)]
    title: Option<String>,
    paths: Vec<String>,
    truncated: bool,
    total: u64,
}

impl TryFrom<RawSearchPaths> for SearchPathsView {
    type Error = Error;

    fn try_from(raw: RawSearchPaths) -> Result<Self, Self::Error> {
        let view = SearchPathsView::new(raw.paths, raw.truncated, raw.total)?;
        Ok(SearchPathsView {
            title: raw.title,
            ..view
        })
    }
}

impl SearchPathsView {
    /// A complete (not truncated) path list.
    pub fn complete(paths: Vec<String>) -> SearchPathsView {
        let total = count(paths.len());
        SearchPathsView {
            title: None,
            paths,
            truncated: false,
            total,
        }
    }

    /// A search that found `total` paths, carrying these.
    ///
    /// # Errors
    ///
    /// [`Error::SearchTotal`] when `total` disagrees with the paths carried.
    pub fn new(paths: Vec<String>, truncated: bool, total: u64) -> Result<SearchPathsView, Error> {
        check_total(total, count(paths.len()), truncated)?;
        Ok(SearchPathsView {
            title: None,
            paths,
            truncated,
            total,
        })
    }

    /// The paths.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Whether the tool capped the result.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The number of paths found before capping.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// A window of a file's lines, for a line-numbered, highlighted code view.
///
/// Rules (checked by [`ReadResultView::new`] and when read back): `offset` is 1-based and
/// kept even when `lines` is empty; line numbers strictly increase, are at least `offset`
/// and at most `total_lines` (the file's exact line count). `lang` is a highlighting hint;
/// `content` is the model-facing text without its envelope, for a UI without a read card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawRead", rename_all = "camelCase")]
pub struct ReadResultView {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    path: String,
    offset: NonZeroU32,
    lines: Vec<ReadFileLine>,
    total_lines: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    lang: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Vec<ContentBlock>>,
}

title_methods!(ReadResultView);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRead {
    #[serde(default)]
    title: Option<String>,
    path: String,
    offset: u32,
    lines: Vec<ReadFileLine>,
    total_lines: u32,
    #[serde(default)]
    lang: Option<String>,
    #[serde(default)]
    content: Option<Vec<ContentBlock>>,
}

impl TryFrom<RawRead> for ReadResultView {
    type Error = Error;

    fn try_from(raw: RawRead) -> Result<Self, Self::Error> {
        let lines = raw.lines.into_iter().map(|l| (l.number.get(), l.text));
        let mut view = ReadResultView::new(raw.path, raw.offset, raw.total_lines, lines)?;
        view.title = raw.title;
        view.lang = raw.lang;
        view.content = raw.content;
        Ok(view)
    }
}

impl ReadResultView {
    /// A window of `path` starting at the 1-based `offset`, in a file of `total_lines`
    /// lines, with these `(number, text)` lines. The highlighting hint is taken from the
    /// path's extension ([`lang_for_path`]); change it with [`ReadResultView::with_lang`].
    ///
    /// # Errors
    ///
    /// [`Error::ReadOffsetZero`] for offset 0; [`Error::ReadLineOutOfPlace`] for a line
    /// numbered 0, not after the previous one, before `offset` or past `total_lines`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_presentation::ReadResultView;
    ///
    /// let view = ReadResultView::new("src/main.rs", 10, 40, [(10, "fn main() {"), (11, "}")])?;
    /// assert_eq!(view.lang(), Some("rust"));
    /// assert!(ReadResultView::new("a.txt", 3, 40, [(2, "before the window")]).is_err());
    /// # Ok::<(), tools_presentation::Error>(())
    /// ```
    pub fn new<T: Into<String>>(
        path: impl Into<String>,
        offset: u32,
        total_lines: u32,
        lines: impl IntoIterator<Item = (u32, T)>,
    ) -> Result<ReadResultView, Error> {
        let path = path.into();
        let Some(first) = NonZeroU32::new(offset) else {
            return Err(Error::ReadOffsetZero { path });
        };
        let mut checked = Vec::new();
        let mut previous = 0;
        for (number, text) in lines {
            let in_place = number >= offset && number > previous && number <= total_lines;
            let Some(n) = NonZeroU32::new(number).filter(|_| in_place) else {
                return Err(Error::ReadLineOutOfPlace {
                    path,
                    offset,
                    total_lines,
                    number,
                });
            };
            previous = number;
            checked.push(ReadFileLine::new(n, text));
        }
        let lang = lang_for_path(&path).map(str::to_owned);
        Ok(ReadResultView {
            title: None,
            path,
            offset: first,
            lines: checked,
            total_lines,
            lang,
            content: None,
        })
    }

    /// The same window with this highlighting hint (`None` for plain text).
    #[must_use]
    pub fn with_lang(mut self, lang: Option<String>) -> Self {
        self.lang = lang;
        self
    }

    /// The same window with fallback content for a UI without a read card.
    #[must_use]
    pub fn with_content(mut self, content: impl IntoIterator<Item = ContentBlock>) -> Self {
        self.content = Some(content.into_iter().collect());
        self
    }

    /// The file read.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The first requested line (1-based).
    pub fn offset(&self) -> u32 {
        self.offset.get()
    }

    /// The lines of the window, in file order.
    pub fn lines(&self) -> &[ReadFileLine] {
        &self.lines
    }

    /// The file's line count.
    pub fn total_lines(&self) -> u32 {
        self.total_lines
    }

    /// The highlighting hint, if any.
    pub fn lang(&self) -> Option<&str> {
        self.lang.as_deref()
    }

    /// The fallback content, if any.
    pub fn content(&self) -> Option<&[ContentBlock]> {
        self.content.as_deref()
    }
}

/// A completed web retrieval, tagged by `kind` (`search` or `fetch`, the same words as the
/// pending call's [`ToolCallKind`](crate::ToolCallKind)). The body stays in the raw content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WebResultView {
    /// A web search's sources.
    Search(WebSearchView),
    /// A fetched page's final URL and status.
    Fetch(WebFetchView),
}

impl WebResultView {
    /// The replacement title, if any.
    pub fn title(&self) -> Option<&str> {
        match self {
            WebResultView::Search(view) => view.title(),
            WebResultView::Fetch(view) => view.title(),
        }
    }
}

/// The sources a web search returned, an optional provider answer, and whether the source
/// list was cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearchView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    sources: Vec<WebSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<String>,
    truncated: bool,
}

title_methods!(WebSearchView);

impl WebSearchView {
    /// A card with these sources.
    pub fn new(sources: Vec<WebSource>, truncated: bool) -> WebSearchView {
        WebSearchView {
            title: None,
            sources,
            answer: None,
            truncated,
        }
    }

    /// The same card with the provider's answer.
    #[must_use]
    pub fn with_answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }

    /// The sources.
    pub fn sources(&self) -> &[WebSource] {
        &self.sources
    }

    /// The provider's answer, if any.
    pub fn answer(&self) -> Option<&str> {
        self.answer.as_deref()
    }

    /// Whether the source list was cut.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

/// A fetched page: the final URL after redirects, the HTTP status, and whether the body was
/// cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    url: String,
    status_code: u16,
    truncated: bool,
}

title_methods!(WebFetchView);

impl WebFetchView {
    /// A card for a fetch of `url` that answered `status_code`.
    pub fn new(url: impl Into<String>, status_code: u16, truncated: bool) -> WebFetchView {
        WebFetchView {
            title: None,
            url: url.into(),
            status_code,
            truncated,
        }
    }

    /// The final URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The HTTP status code.
    pub fn status_code(&self) -> u16 {
        self.status_code
    }

    /// Whether the body was cut.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_tags_are_written_next_to_the_card() {
        let view: ToolResultView = SearchPathsView::complete(vec!["a".into()]).into();
        assert_eq!(
            view.to_json(),
            json!({"card": "search", "shape": "paths", "paths": ["a"], "truncated": false, "total": 1})
        );
        let view: ToolResultView = WebFetchView::new("https://x", 200, false).into();
        assert_eq!(
            view.to_json(),
            json!({"card": "web", "kind": "fetch", "url": "https://x", "statusCode": 200, "truncated": false})
        );
        for view in [
            ToolResultView::from(SearchPathsView::complete(vec!["a".into()])),
            ToolResultView::from(WebFetchView::new("https://x", 200, false)),
        ] {
            assert_eq!(ToolResultView::from_json(&view.to_json()), Ok(view));
        }
    }

    #[test]
    fn search_totals_must_agree_with_what_is_carried() {
        assert!(SearchPathsView::new(vec!["a".into()], false, 2).is_err());
        assert!(SearchPathsView::new(vec!["a".into()], true, 0).is_err());
        assert!(SearchPathsView::new(vec!["a".into()], true, 5).is_ok());
        let bad = json!({"card": "search", "shape": "paths", "paths": [], "truncated": false, "total": 3});
        let err = ToolResultView::from_json(&bad).unwrap_err();
        assert!(err.to_string().contains("total of 3"), "{err}");
    }

    #[test]
    fn matches_group_by_file_in_first_seen_order() {
        let view =
            SearchMatchesView::from_matches([("b", 3, "x"), ("a", 1, "y"), ("b", 9, "z")]).unwrap();
        let paths: Vec<&str> = view.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["b", "a"]);
        assert_eq!(view.total(), 3);
        assert_eq!(
            SearchMatchesView::from_matches([("a", 0, "x")]),
            Err(Error::SearchLineZero { path: "a".into() })
        );
    }

    #[test]
    fn read_windows_keep_their_rules() {
        assert!(ReadResultView::new("a", 0, 1, Vec::<(u32, &str)>::new()).is_err());
        assert!(ReadResultView::new("a", 1, 2, [(2, "b"), (1, "a")]).is_err());
        assert!(ReadResultView::new("a", 1, 2, [(1, "a"), (1, "a")]).is_err());
        assert!(ReadResultView::new("a", 1, 2, [(3, "c")]).is_err());
        let empty = ReadResultView::new("a", 7, 3, Vec::<(u32, &str)>::new()).unwrap();
        assert_eq!(empty.offset(), 7);
    }

    #[test]
    fn terminal_exits_exclude_each_other() {
        let view = TerminalResultView::new()
            .with_exit_code(1)
            .with_signal("SIGKILL");
        assert_eq!(view.exit_code(), None);
        assert_eq!(view.exit(), Some(TerminalExit::Signal("SIGKILL")));
        let both = json!({"card": "terminal", "exitCode": 1, "signal": "SIGTERM"});
        let ToolResultView::Terminal(read) = ToolResultView::from_json(&both).unwrap() else {
            panic!("a terminal card");
        };
        assert_eq!(read.exit(), Some(TerminalExit::Signal("SIGTERM")));
        assert_eq!(read.exit_code(), Some(1));
    }
}
