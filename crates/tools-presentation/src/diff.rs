//! Building diff cards from before/after text, on the `similar` crate.

use std::time::Duration;

use similar::{Algorithm, TextDiff};

use crate::FileDiff;

/// How [`FileDiff::hunks`] compares two texts.
///
/// The default shows three lines of context around each change and runs the diff to
/// completion, so the same inputs always give the same cards (presenters run again on
/// replay and must depend only on their inputs). A timeout bounds the time spent on very
/// large, very different texts at the price of that determinism: past it the diff is still
/// correct, but may be coarser.
///
/// # Examples
///
/// ```
/// use tools_presentation::DiffOptions;
///
/// let before = "a\nb\nc\nd\ne\n";
/// let after = "a\nb\nC\nd\ne\n";
/// let diffs = DiffOptions::new().with_context_lines(1).file_diffs("f.txt", Some(before), after);
/// assert_eq!(diffs.len(), 1);
/// assert_eq!(diffs[0].old_text.as_deref(), Some("b\nc\nd\n"));
/// assert_eq!(diffs[0].new_text, "b\nC\nd\n");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    context_lines: usize,
    timeout: Option<Duration>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            context_lines: 3,
            timeout: None,
        }
    }
}

impl DiffOptions {
    /// Three lines of context, no timeout.
    pub fn new() -> DiffOptions {
        DiffOptions::default()
    }

    /// The same options with `lines` lines of unchanged context around each change.
    #[must_use]
    pub fn with_context_lines(mut self, lines: usize) -> DiffOptions {
        self.context_lines = lines;
        self
    }

    /// The same options with a time budget for the comparison (see the type's docs).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> DiffOptions {
        self.timeout = Some(timeout);
        self
    }

    /// The diffs that show the change of `path` from `before` to `after`.
    ///
    /// - No before-image (`None`): one whole-file diff without old text.
    /// - Equal texts: no diff at all.
    /// - Otherwise one [`FileDiff`] per hunk, in file order: the changed lines with the
    ///   context lines around them, old text and new text each with their line endings.
    ///   Hunks whose contexts touch are merged.
    pub fn file_diffs(&self, path: &str, before: Option<&str>, after: &str) -> Vec<FileDiff> {
        let Some(before) = before else {
            return vec![FileDiff::created(path, after)];
        };
        if before == after {
            return Vec::new();
        }
        let mut config = TextDiff::configure();
        config.algorithm(Algorithm::Myers);
        if let Some(timeout) = self.timeout {
            config.timeout(timeout);
        }
        let diff = config.diff_lines(before, after);
        let old: Vec<&str> = diff.iter_old_slices().collect();
        let new: Vec<&str> = diff.iter_new_slices().collect();
        diff.grouped_ops(self.context_lines)
            .iter()
            .filter_map(|group| {
                let (first, last) = (group.first()?, group.last()?);
                let old_text = old
                    .get(first.old_range().start..last.old_range().end)?
                    .concat();
                let new_text = new
                    .get(first.new_range().start..last.new_range().end)?
                    .concat();
                Some(FileDiff::new(path, Some(old_text), new_text))
            })
            .collect()
    }
}

impl FileDiff {
    /// The diffs that show the change of `path` from `before` (or no before-image) to
    /// `after`, with three lines of context: see [`DiffOptions::file_diffs`].
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_presentation::FileDiff;
    ///
    /// let created = FileDiff::hunks("new.txt", None, "hello\n");
    /// assert_eq!(created, vec![FileDiff::created("new.txt", "hello\n")]);
    /// assert!(FileDiff::hunks("same.txt", Some("x\n"), "x\n").is_empty());
    /// ```
    pub fn hunks(path: &str, before: Option<&str>, after: &str) -> Vec<FileDiff> {
        DiffOptions::default().file_diffs(path, before, after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize, changed: &[usize]) -> String {
        (1..=n)
            .map(|i| {
                if changed.contains(&i) {
                    format!("line {i} changed\n")
                } else {
                    format!("line {i}\n")
                }
            })
            .collect()
    }

    #[test]
    fn distant_changes_give_separate_hunks_with_context() {
        let before = numbered(30, &[]);
        let after = numbered(30, &[5, 25]);
        let diffs = FileDiff::hunks("f", Some(&before), &after);
        assert_eq!(diffs.len(), 2);
        assert_eq!(
            diffs[0].old_text.as_deref(),
            Some("line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n")
        );
        assert_eq!(
            diffs[0].new_text,
            "line 2\nline 3\nline 4\nline 5 changed\nline 6\nline 7\nline 8\n"
        );
        assert!(diffs[1].new_text.contains("line 25 changed\n"));
        assert!(diffs.iter().all(|d| d.path == "f"));
    }

    #[test]
    fn close_changes_merge_into_one_hunk() {
        let before = numbered(30, &[]);
        let after = numbered(30, &[10, 14]);
        assert_eq!(FileDiff::hunks("f", Some(&before), &after).len(), 1);
    }

    #[test]
    fn an_empty_before_image_is_not_a_missing_one() {
        let diffs = FileDiff::hunks("f", Some(""), "x\n");
        assert_eq!(diffs, vec![FileDiff::new("f", Some(String::new()), "x\n")]);
    }

    #[test]
    fn a_missing_final_newline_is_kept() {
        let diffs = FileDiff::hunks("f", Some("a\nb"), "a\nc");
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].old_text.as_deref(), Some("a\nb"));
        assert_eq!(diffs[0].new_text, "a\nc");
    }

    #[test]
    fn zero_context_shows_only_changed_lines() {
        let diffs = DiffOptions::new().with_context_lines(0).file_diffs(
            "f",
            Some("a\nb\nc\n"),
            "a\nB\nc\n",
        );
        assert_eq!(diffs, vec![FileDiff::new("f", Some("b\n".into()), "B\n")]);
    }
}
