//! The crate's error type.

/// Everything that can go wrong in `tools-presentation`.
///
/// Presentation never fails a tool call: these errors come back from the constructors that
/// check a view's rules and from reading a view back from JSON, and a caller that gets one
/// shows the generic fallback instead (see [`ToolCallView::fallback`](crate::ToolCallView::fallback)
/// and [`ToolResultView::fallback`](crate::ToolResultView::fallback)). No error carries an
/// [`ErrorCode`](tools_json::ErrorCode): presentation problems never reach the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// JSON that is not a value of the stable format: an unknown `card` (or `shape`, or web
    /// `kind`), a missing or mistyped field, or a broken rule of the view.
    #[error("not a valid {what}: {message}")]
    Malformed {
        /// What was being read (`tool call view`, `tool result view`, `content block`, …).
        what: &'static str,
        /// What is wrong, in words.
        message: String,
    },
    /// A read window whose first requested line is 0 (lines are 1-based).
    #[error("the read window of {path} starts at line 0; lines are numbered from 1")]
    ReadOffsetZero {
        /// The file of the window.
        path: String,
    },
    /// A read window line numbered 0, not after the previous line, before the window's
    /// offset, or past the file's last line.
    #[error(
        "the read window of {path} (offset {offset}, {total_lines} lines in the file) has line {number} out of place: numbers must be 1-based, strictly increasing, at least the offset and at most the file's line count"
    )]
    ReadLineOutOfPlace {
        /// The file of the window.
        path: String,
        /// The window's first requested line.
        offset: u32,
        /// The file's line count.
        total_lines: u32,
        /// The offending line number.
        number: u32,
    },
    /// A search card whose `total` disagrees with what it retained: `total` must equal the
    /// retained count when the card is not truncated, and be at least that count when it is.
    #[error(
        "a search card retaining {retained} results cannot report a total of {total} when truncated is {truncated}"
    )]
    SearchTotal {
        /// The reported total.
        total: u64,
        /// The number of matches (or paths) the card carries.
        retained: u64,
        /// The card's truncated flag.
        truncated: bool,
    },
    /// A search match numbered line 0 (lines are 1-based).
    #[error("a search match in {path} is on line 0; lines are numbered from 1")]
    SearchLineZero {
        /// The file of the match.
        path: String,
    },
    /// A content block that is not `text` or `reasoning` must carry its own string `type`.
    #[error(
        "a content block needs a string `type` other than \"text\" and \"reasoning\", found {found}"
    )]
    BlockType {
        /// The `type` found, as JSON (`null` when absent).
        found: String,
    },
}

impl Error {
    pub(crate) fn malformed(what: &'static str, message: impl std::fmt::Display) -> Error {
        Error::Malformed {
            what,
            message: message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_facts() {
        let err = Error::SearchTotal {
            total: 2,
            retained: 3,
            truncated: true,
        };
        assert_eq!(
            err.to_string(),
            "a search card retaining 3 results cannot report a total of 2 when truncated is true"
        );
        let err = Error::ReadLineOutOfPlace {
            path: "a.rs".into(),
            offset: 3,
            total_lines: 9,
            number: 2,
        };
        assert!(
            err.to_string()
                .contains("a.rs (offset 3, 9 lines in the file) has line 2")
        );
    }

    #[test]
    fn the_error_stays_small() {
        assert!(std::mem::size_of::<Error>() <= 8 * std::mem::size_of::<usize>());
    }
}
