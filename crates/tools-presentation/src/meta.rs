//! Narrowing a tool's replayable `meta` payload back into a view, and the highlighting
//! table for read windows.
//!
//! A tool projects the structured facts of its result (diffs, a read window, search hits,
//! web sources) into `meta`, which is persisted with the result; its presenter narrows the
//! payload back into a view on the live path and on replay alike. Narrowing is strict and
//! total: any deviation gives `None` (the generic card), never a panic.

use std::path::Path;

use serde_json::{Map, Value};

use crate::{
    FileDiff, ReadResultView, SearchFileMatches, SearchLineMatch, SearchMatchesView,
    SearchPathsView, SearchResultView, WebFetchView, WebSearchView, WebSource,
};

/// The highlighting hint for a path, from its extension (case-insensitive), or `None`
/// for an unknown extension, a dotfile (`.bashrc` has no extension) or no extension.
///
/// The names are the usual Markdown fence names (`rust`, `ts`, `py`, `bash`, …).
///
/// # Examples
///
/// ```
/// use tools_presentation::lang_for_path;
///
/// assert_eq!(lang_for_path("src/App.TSX"), Some("tsx"));
/// assert_eq!(lang_for_path("tool.py"), Some("py"));
/// assert_eq!(lang_for_path(".bashrc"), None);
/// assert_eq!(lang_for_path("foo.constructor"), None);
/// ```
pub fn lang_for_path(path: &str) -> Option<&'static str> {
    let extension = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    let lang = match extension.as_str() {
        "rs" => "rust",
        "ts" | "mts" | "cts" => "ts",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "js",
        "jsx" => "jsx",
        "py" | "pyi" => "py",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" => "scala",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "lua" => "lua",
        "sh" | "bash" | "zsh" => "bash",
        "ps1" => "powershell",
        "sql" => "sql",
        "json" | "jsonc" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "md" | "markdown" => "markdown",
        "dockerfile" => "dockerfile",
        "proto" => "protobuf",
        "zig" => "zig",
        "hs" => "haskell",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "dart" => "dart",
        "vue" => "vue",
        "svelte" => "svelte",
        _ => return None,
    };
    Some(lang)
}

fn object(value: &Value) -> Option<&Map<String, Value>> {
    value.as_object()
}

fn string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn optional_string(map: &Map<String, Value>, key: &str) -> Option<Option<String>> {
    match map.get(key) {
        None => Some(None),
        Some(value) => string(value).map(Some),
    }
}

fn u32_of(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// The file diffs of a diff `meta` payload: `{"diffs": [{"path", "oldText", "newText"}, …]}`
/// with at least one diff, each with a string `path`, an `oldText` that is a string or
/// `null` (present), and a string `newText`. Anything else gives `None`.
///
/// # Examples
///
/// ```
/// use tools_presentation::diffs_from_meta;
/// use serde_json::json;
///
/// let meta = json!({"diffs": [{"path": "a.txt", "oldText": null, "newText": "x"}]});
/// assert_eq!(diffs_from_meta(&meta).map(|d| d.len()), Some(1));
/// assert_eq!(diffs_from_meta(&json!({"diffs": []})), None);
/// ```
pub fn diffs_from_meta(meta: &Value) -> Option<Vec<FileDiff>> {
    let items = object(meta)?.get("diffs")?.as_array()?;
    if items.is_empty() {
        return None;
    }
    items
        .iter()
        .map(|item| {
            let item = object(item)?;
            let old_text = match item.get("oldText")? {
                Value::Null => None,
                other => Some(string(other)?),
            };
            Some(FileDiff::new(
                string(item.get("path")?)?,
                old_text,
                string(item.get("newText")?)?,
            ))
        })
        .collect()
}

/// The read window of a read `meta` payload:
/// `{"path", "offset", "totalLines", "lines": [{"number", "text"}], "lang"?}` with the rules
/// of [`ReadResultView::new`]. `lang` must be absent or a string; it is taken as is (absent
/// means plain text: the tool already consulted [`lang_for_path`]). Anything else gives
/// `None`; an empty window is valid.
///
/// # Examples
///
/// ```
/// use tools_presentation::read_view_from_meta;
/// use serde_json::json;
///
/// let meta = json!({"path": "a.rs", "offset": 5, "totalLines": 4, "lines": []});
/// assert_eq!(read_view_from_meta(&meta).map(|v| v.offset()), Some(5));
/// assert!(read_view_from_meta(&json!({"path": "a.rs", "offset": 0, "totalLines": 4, "lines": []})).is_none());
/// ```
pub fn read_view_from_meta(meta: &Value) -> Option<ReadResultView> {
    let map = object(meta)?;
    let path = string(map.get("path")?)?;
    let offset = u32_of(map.get("offset")?)?;
    let total_lines = u32_of(map.get("totalLines")?)?;
    let lang = optional_string(map, "lang")?;
    let lines = map
        .get("lines")?
        .as_array()?
        .iter()
        .map(|line| {
            let line = object(line)?;
            Some((u32_of(line.get("number")?)?, string(line.get("text")?)?))
        })
        .collect::<Option<Vec<_>>>()?;
    let view = ReadResultView::new(path, offset, total_lines, lines).ok()?;
    Some(view.with_lang(lang))
}

/// The search card of a search `meta` payload: `{"shape": "matches", "files": [{"path",
/// "matches": [{"lineNumber", "line"}]}], "truncated", "total"}` or `{"shape": "paths",
/// "paths": [...], "truncated", "total"}`, with 1-based line numbers and a `total` that
/// agrees with what is carried (see [`SearchMatchesView`]). Empty lists are a valid card.
///
/// # Examples
///
/// ```
/// use tools_presentation::search_view_from_meta;
/// use serde_json::json;
///
/// let meta = json!({"shape": "paths", "paths": [], "truncated": false, "total": 0});
/// assert!(search_view_from_meta(&meta).is_some());
/// ```
pub fn search_view_from_meta(meta: &Value) -> Option<SearchResultView> {
    let map = object(meta)?;
    let truncated = map.get("truncated")?.as_bool()?;
    let total = map.get("total")?.as_u64()?;
    match map.get("shape")?.as_str()? {
        "matches" => {
            let files = map
                .get("files")?
                .as_array()?
                .iter()
                .map(|file| {
                    let file = object(file)?;
                    let matches = file
                        .get("matches")?
                        .as_array()?
                        .iter()
                        .map(|m| {
                            let m = object(m)?;
                            let number = std::num::NonZeroU32::new(u32_of(m.get("lineNumber")?)?)?;
                            Some(SearchLineMatch::new(number, string(m.get("line")?)?))
                        })
                        .collect::<Option<Vec<_>>>()?;
                    Some(SearchFileMatches::new(string(file.get("path")?)?, matches))
                })
                .collect::<Option<Vec<_>>>()?;
            SearchMatchesView::new(files, truncated, total)
                .ok()
                .map(SearchResultView::Matches)
        }
        "paths" => {
            let paths = map
                .get("paths")?
                .as_array()?
                .iter()
                .map(string)
                .collect::<Option<Vec<_>>>()?;
            SearchPathsView::new(paths, truncated, total)
                .ok()
                .map(SearchResultView::Paths)
        }
        _ => None,
    }
}

/// The web search card of a web search `meta` payload: `{"sources": [{"url", "title"?,
/// "snippet"?, "publishedAt"?}], "truncated", "answer"?}`, every optional field a string
/// when present. Anything else gives `None`. (A presenter shows no web card for an error
/// result.)
///
/// # Examples
///
/// ```
/// use tools_presentation::web_search_view_from_meta;
/// use serde_json::json;
///
/// let meta = json!({"sources": [{"url": "https://a.example", "title": "A"}], "truncated": false});
/// assert_eq!(web_search_view_from_meta(&meta).map(|v| v.sources().len()), Some(1));
/// assert!(web_search_view_from_meta(&json!({"sources": [{"title": "no url"}], "truncated": false})).is_none());
/// ```
pub fn web_search_view_from_meta(meta: &Value) -> Option<WebSearchView> {
    let map = object(meta)?;
    let truncated = map.get("truncated")?.as_bool()?;
    let answer = optional_string(map, "answer")?;
    let sources = map
        .get("sources")?
        .as_array()?
        .iter()
        .map(|source| {
            let source = object(source)?;
            let mut web = WebSource::new(string(source.get("url")?)?);
            web.title = optional_string(source, "title")?;
            web.snippet = optional_string(source, "snippet")?;
            web.published_at = optional_string(source, "publishedAt")?;
            Some(web)
        })
        .collect::<Option<Vec<_>>>()?;
    let view = WebSearchView::new(sources, truncated);
    Some(match answer {
        Some(answer) => view.with_answer(answer),
        None => view,
    })
}

/// The web fetch card of a web fetch `meta` payload: `{"url", "statusCode", "truncated"}`
/// with a string URL, an HTTP status from 100 to 999 and a boolean. Anything else gives
/// `None`.
///
/// # Examples
///
/// ```
/// use tools_presentation::web_fetch_view_from_meta;
/// use serde_json::json;
///
/// let meta = json!({"url": "https://a.example/", "statusCode": 200, "truncated": true});
/// assert_eq!(web_fetch_view_from_meta(&meta).map(|v| v.status_code()), Some(200));
/// ```
pub fn web_fetch_view_from_meta(meta: &Value) -> Option<WebFetchView> {
    let map = object(meta)?;
    let url = string(map.get("url")?)?;
    let status = map
        .get("statusCode")?
        .as_u64()
        .filter(|code| (100..=999).contains(code))
        .and_then(|code| u16::try_from(code).ok())?;
    let truncated = map.get("truncated")?.as_bool()?;
    Some(WebFetchView::new(url, status, truncated))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_lang_table_uses_only_real_extensions() {
        assert_eq!(lang_for_path("a/b/c.RS"), Some("rust"));
        assert_eq!(lang_for_path("Makefile"), None);
        assert_eq!(lang_for_path(".env"), None);
        assert_eq!(lang_for_path("x.toString"), None);
        assert_eq!(lang_for_path("x.__proto__"), None);
        assert_eq!(lang_for_path(""), None);
    }

    #[test]
    fn diff_meta_needs_old_text_present() {
        assert!(diffs_from_meta(&json!({"diffs": [{"path": "a", "newText": "x"}]})).is_none());
        assert!(
            diffs_from_meta(&json!({"diffs": [{"path": "a", "oldText": 1, "newText": "x"}]}))
                .is_none()
        );
        assert!(diffs_from_meta(&json!([])).is_none());
    }

    #[test]
    fn read_meta_lang_is_taken_as_is() {
        let meta = json!({"path": "a.rs", "offset": 1, "totalLines": 1, "lines": [{"number": 1, "text": "x"}], "lang": "text"});
        assert_eq!(read_view_from_meta(&meta).unwrap().lang(), Some("text"));
        let meta = json!({"path": "a.rs", "offset": 1, "totalLines": 1, "lines": []});
        assert_eq!(read_view_from_meta(&meta).unwrap().lang(), None);
    }

    #[test]
    fn web_fetch_meta_needs_an_http_status() {
        assert!(
            web_fetch_view_from_meta(&json!({"url": "u", "statusCode": 99, "truncated": false}))
                .is_none()
        );
        assert!(
            web_fetch_view_from_meta(&json!({"url": "u", "statusCode": 200.5, "truncated": false}))
                .is_none()
        );
    }
}
