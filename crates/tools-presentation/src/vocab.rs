//! The shared vocabulary of the views: file locations, file diffs, numbered lines, search
//! matches and web sources.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

/// A file a call reads or changes, so a capable UI can follow along.
///
/// `path` is the path the tool operated on, as the model sees it (it may be relative; a UI
/// bridge resolves it). `line` is a 1-based line to focus, such as a read's offset.
/// Serialised as `{"path": …, "line"?: n}`; a `line` of 0 is not a line and is refused when
/// read back.
///
/// # Examples
///
/// ```
/// use tools_presentation::FileLocation;
///
/// let location = FileLocation::new("src/lib.rs").at_line(12);
/// assert_eq!(location.line.map(|n| n.get()), Some(12));
/// assert_eq!(FileLocation::new("a").at_line(0).line, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileLocation {
    /// The path the tool operated on.
    pub path: String,
    /// The 1-based line to focus, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<NonZeroU32>,
}

impl FileLocation {
    /// A location without a focus line.
    pub fn new(path: impl Into<String>) -> FileLocation {
        FileLocation {
            path: path.into(),
            line: None,
        }
    }

    /// The same location focused on a 1-based `line`; 0 is not a line and leaves the
    /// location without one.
    #[must_use]
    pub fn at_line(mut self, line: u32) -> FileLocation {
        self.line = NonZeroU32::new(line);
        self
    }
}

/// A change to one file, for an inline diff.
///
/// `old_text: None` means there is no before-image: a new file, or an overwrite whose prior
/// content the presenter could not see. Serialised as
/// `{"path": …, "oldText": string | null, "newText": …}` (`oldText` is always written; a
/// missing `oldText` reads back as `null`).
///
/// A result-time diff usually carries one hunk of the applied change with its context lines
/// (see [`FileDiff::hunks`](crate::FileDiff::hunks)), so several `FileDiff`s may share a path.
///
/// # Examples
///
/// ```
/// use tools_presentation::FileDiff;
///
/// let created = FileDiff::created("notes.md", "# Notes\n");
/// assert_eq!(created.old_text, None);
/// let edited = FileDiff::new("a.txt", Some("x\n".to_owned()), "y\n");
/// assert_eq!(edited.old_text.as_deref(), Some("x\n"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileDiff {
    /// The changed file.
    pub path: String,
    /// The text before the change, or `None` when there is no before-image.
    #[serde(default)]
    pub old_text: Option<String>,
    /// The text after the change.
    pub new_text: String,
}

impl FileDiff {
    /// A change from `old_text` (or no before-image) to `new_text`.
    pub fn new(
        path: impl Into<String>,
        old_text: Option<String>,
        new_text: impl Into<String>,
    ) -> FileDiff {
        FileDiff {
            path: path.into(),
            old_text,
            new_text: new_text.into(),
        }
    }

    /// A whole-file diff without a before-image (a new file).
    pub fn created(path: impl Into<String>, new_text: impl Into<String>) -> FileDiff {
        FileDiff::new(path, None, new_text)
    }
}

/// One numbered line of a file in a read window.
///
/// `number` is the 1-based line number in the file (a window keeps the file's numbering);
/// `text` is the line without its newline, already truncated by the tool.
/// Serialised as `{"number": n, "text": …}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadFileLine {
    /// The 1-based line number in the file.
    pub number: NonZeroU32,
    /// The line's text, without its newline.
    pub text: String,
}

impl ReadFileLine {
    /// Line `number` with this text.
    pub fn new(number: NonZeroU32, text: impl Into<String>) -> ReadFileLine {
        ReadFileLine {
            number,
            text: text.into(),
        }
    }
}

/// One matched line of a content search. Serialised as `{"lineNumber": n, "line": …}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SearchLineMatch {
    /// The 1-based line number of the match in its file.
    pub line_number: NonZeroU32,
    /// The matched line, as the tool surfaced it.
    pub line: String,
}

impl SearchLineMatch {
    /// A match on line `line_number`.
    pub fn new(line_number: NonZeroU32, line: impl Into<String>) -> SearchLineMatch {
        SearchLineMatch {
            line_number,
            line: line.into(),
        }
    }
}

/// One file's matches in a content search. Serialised as `{"path": …, "matches": [...]}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchFileMatches {
    /// The file, as the model sees its path.
    pub path: String,
    /// Its matched lines, in output order.
    pub matches: Vec<SearchLineMatch>,
}

impl SearchFileMatches {
    /// A file's group of matches.
    pub fn new(path: impl Into<String>, matches: Vec<SearchLineMatch>) -> SearchFileMatches {
        SearchFileMatches {
            path: path.into(),
            matches,
        }
    }
}

/// One citable source of a web search.
///
/// Serialised as `{"url": …, "title"?: …, "snippet"?: …, "publishedAt"?: …}`;
/// `published_at` is the provider's ISO-8601 text, passed through unparsed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebSource {
    /// The source's URL.
    pub url: String,
    /// Its title, when the provider gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A short excerpt, when the provider gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// The publication or crawl time, as the provider wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

impl WebSource {
    /// A source with only a URL.
    pub fn new(url: impl Into<String>) -> WebSource {
        WebSource {
            url: url.into(),
            title: None,
            snippet: None,
            published_at: None,
        }
    }

    /// The same source with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> WebSource {
        self.title = Some(title.into());
        self
    }

    /// The same source with a snippet.
    #[must_use]
    pub fn with_snippet(mut self, snippet: impl Into<String>) -> WebSource {
        self.snippet = Some(snippet.into());
        self
    }

    /// The same source with a publication time.
    #[must_use]
    pub fn with_published_at(mut self, published_at: impl Into<String>) -> WebSource {
        self.published_at = Some(published_at.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_always_writes_old_text_and_reads_a_missing_one_as_none() {
        let diff = FileDiff::created("a", "x");
        assert_eq!(
            serde_json::to_value(&diff).unwrap(),
            json!({"path": "a", "oldText": null, "newText": "x"})
        );
        let read: FileDiff = serde_json::from_value(json!({"path": "a", "newText": "x"})).unwrap();
        assert_eq!(read, diff);
    }

    #[test]
    fn line_zero_is_refused_when_read_back() {
        assert!(serde_json::from_value::<FileLocation>(json!({"path": "a", "line": 0})).is_err());
        assert!(
            serde_json::from_value::<SearchLineMatch>(json!({"lineNumber": 0, "line": ""}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<ReadFileLine>(json!({"number": 1.5, "text": ""})).is_err()
        );
        let location: FileLocation =
            serde_json::from_value(json!({"path": "a", "line": 3})).unwrap();
        assert_eq!(location, FileLocation::new("a").at_line(3));
    }
}
