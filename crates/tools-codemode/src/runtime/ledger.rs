//! The output ledger: exact JSON byte accounting of a run's logs plus its completion value
//! or failure message, against one cap.
//!
//! The ledger counts what `serde_json` would write for the log array (`[]`, one `,` between
//! entries, each entry its escaped string) plus the compact JSON of the completion value or
//! the JSON string of the failure message; the envelope around them is not counted. A run
//! exactly at the cap succeeds. Crossing it ends the run with `output-limit` /
//! `outer output exceeded <cap> bytes`, the logs trimmed to a prefix (the last entry possibly
//! cut, at a code-point boundary) that fits together with that message.

use std::fmt::{self, Write as _};

use serde_json::Value;
use tools_json::JsonValue;

use super::{CodeRunFailure, CodeRunResult, FailureKind};

/// The size of `text` as a JSON string, quotes included, as `serde_json` writes it.
pub fn json_string_len(text: &str) -> usize {
    // Most text needs no escape at all: a counting pass the compiler vectorises finds out,
    // and only text with escapes pays for the exact sum.
    let special = text.bytes().filter(|&byte| needs_escape(byte)).count();
    if special == 0 {
        return 2 + text.len();
    }
    2 + text.bytes().map(escaped_byte_len).sum::<usize>()
}

/// Whether `serde_json` escapes this byte inside a string.
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The share of one UTF-8 byte in the size of a JSON string as `serde_json` escapes it: a
/// character that needs no escape costs its UTF-8 length, one byte at a time, so the count
/// runs over bytes (a loop the compiler vectorises) and never decodes characters.
fn escaped_byte_len(byte: u8) -> usize {
    match byte {
        b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
        0..=0x1f => 6,
        _ => 1,
    }
}

/// Counts bytes written through `fmt::Write` without storing them.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The size of the compact JSON text of `value` (the text of `serde_json::to_string`),
/// counted without writing it and without recursion.
pub fn json_value_len(value: &Value) -> usize {
    json_value_len_within(value, usize::MAX).unwrap_or(usize::MAX)
}

/// As [`json_value_len`], stopping early: `None` once the size exceeds `limit`.
pub fn json_value_len_within(value: &Value, limit: usize) -> Option<usize> {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>),
        Object(serde_json::map::Iter<'a>),
    }
    let mut total = 0usize;
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            match value {
                Value::Null => total += 4,
                Value::Bool(true) => total += 4,
                Value::Bool(false) => total += 5,
                Value::Number(number) => {
                    let mut counter = Counter(0);
                    // Writing into a counter cannot fail.
                    let _ = write!(counter, "{number}");
                    total += counter.0;
                }
                Value::String(text) => total += json_string_len(text),
                Value::Array(items) => {
                    // `[` + `]` + one comma between items.
                    total += 2 + items.len().saturating_sub(1);
                    stack.push(Frame::Array(items.iter()));
                }
                Value::Object(map) => {
                    // `{` + `}` + one comma between members.
                    total += 2 + map.len().saturating_sub(1);
                    stack.push(Frame::Object(map.iter()));
                }
            }
            if total > limit {
                return None;
            }
        }
        let Some(top) = stack.last_mut() else {
            return Some(total);
        };
        match top {
            Frame::Array(items) => match items.next() {
                Some(item) => next = Some(item),
                None => {
                    stack.pop();
                }
            },
            Frame::Object(members) => match members.next() {
                Some((key, item)) => {
                    // The key and its `:`.
                    total += json_string_len(key) + 1;
                    next = Some(item);
                }
                None => {
                    stack.pop();
                }
            },
        }
    }
}

/// The longest prefix of `text` (ending on a code-point boundary) whose escaped size,
/// quotes excluded, is at most `room`.
fn fitting_prefix(text: &str, room: usize) -> &str {
    // Without escapes in the first `room` bytes, each byte costs one: cut at `room`.
    let window = &text.as_bytes()[..text.len().min(room)];
    if !window.iter().any(|&byte| needs_escape(byte)) {
        if text.len() <= room {
            return text;
        }
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        return &text[..cut];
    }
    let mut used = 0usize;
    for (index, byte) in text.bytes().enumerate() {
        used += escaped_byte_len(byte);
        if used > room {
            // A character that does not fit whole is left out whole.
            let mut cut = index;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            return &text[..cut];
        }
    }
    text
}

/// The message of an `output-limit` failure.
pub fn output_limit_message(cap: usize) -> String {
    format!("outer output exceeded {cap} bytes")
}

/// The log side of a run's output, metered against the cap as entries arrive.
///
/// # Examples
///
/// ```
/// use tools_codemode::{FailureKind, OutputLedger};
/// use tools_json::JsonValue;
///
/// // `["abc"]` is 7 bytes and `"xy"` 4: exactly 11 fits.
/// let mut ledger = OutputLedger::new(11);
/// assert!(ledger.push("abc"));
/// let result = ledger.complete(Some(JsonValue::parse(r#""xy""#).unwrap()));
/// assert!(result.error.is_none());
///
/// let mut ledger = OutputLedger::new(10);
/// assert!(ledger.push("abc"));
/// let result = ledger.complete(Some(JsonValue::parse(r#""xy""#).unwrap()));
/// let error = result.error.unwrap();
/// assert_eq!(error.kind, FailureKind::OutputLimit);
/// assert_eq!(error.message, "outer output exceeded 10 bytes");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputLedger {
    cap: usize,
    logs: Vec<String>,
    used: usize,
    exceeded: bool,
}

impl OutputLedger {
    /// An empty ledger (`[]`, 2 bytes used) for a cap in bytes.
    pub fn new(cap: usize) -> OutputLedger {
        OutputLedger {
            cap,
            logs: Vec::new(),
            used: 2,
            exceeded: false,
        }
    }

    /// The cap in bytes.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The bytes the log array takes so far (`serde_json::to_string(logs).len()`).
    pub fn used(&self) -> usize {
        self.used
    }

    /// Whether an entry crossed the cap; later entries are dropped.
    pub fn is_exceeded(&self) -> bool {
        self.exceeded
    }

    /// The entries kept so far.
    pub fn logs(&self) -> &[String] {
        &self.logs
    }

    /// Appends one entry. Returns `false` once the cap is crossed: the crossing entry is
    /// kept as the prefix that still fits (if any), and the run must end with
    /// `output-limit`.
    pub fn push(&mut self, text: &str) -> bool {
        if self.exceeded {
            return false;
        }
        let separator = usize::from(!self.logs.is_empty());
        let cost = separator + json_string_len(text);
        if self.used.saturating_add(cost) <= self.cap {
            self.logs.push(text.to_owned());
            self.used += cost;
            return true;
        }
        self.exceeded = true;
        let room = self.cap.saturating_sub(self.used + separator + 2);
        let prefix = fitting_prefix(text, room);
        if !prefix.is_empty() {
            self.used += separator + json_string_len(prefix);
            self.logs.push(prefix.to_owned());
        }
        false
    }

    /// The result of a run that completed with `value` (`None` for `undefined` / `None`),
    /// or an `output-limit` failure when logs plus value exceed the cap.
    pub fn complete(self, value: Option<JsonValue>) -> CodeRunResult {
        if self.exceeded {
            return self.output_limit();
        }
        let room = self.cap.saturating_sub(self.used);
        let fits = match &value {
            None => true,
            Some(value) => json_value_len_within(value.as_value(), room).is_some(),
        };
        if !fits {
            return self.output_limit();
        }
        CodeRunResult {
            value,
            logs: self.logs,
            error: None,
        }
    }

    /// The result of a failed run, or an `output-limit` failure when logs plus the failure
    /// message exceed the cap (an `output-limit` failure passed in is rebuilt the same way).
    pub fn fail(self, failure: CodeRunFailure) -> CodeRunResult {
        if self.exceeded || failure.kind == FailureKind::OutputLimit {
            return self.output_limit();
        }
        let room = self.cap.saturating_sub(self.used);
        if json_string_len(&failure.message) > room {
            return self.output_limit();
        }
        CodeRunResult {
            value: None,
            logs: self.logs,
            error: Some(failure),
        }
    }

    /// The `output-limit` result: the logs trimmed so that they and the fixed diagnostic
    /// fit the cap (the diagnostic alone is delivered even when the cap is smaller).
    fn output_limit(self) -> CodeRunResult {
        let message = output_limit_message(self.cap);
        let budget = self.cap.saturating_sub(json_string_len(&message));
        let logs = trim_logs(self.logs, budget);
        CodeRunResult {
            value: None,
            logs,
            error: Some(CodeRunFailure::new(FailureKind::OutputLimit, message)),
        }
    }
}

/// The longest prefix of `logs` whose JSON array fits `budget` bytes, the last entry
/// possibly cut at a code-point boundary.
fn trim_logs(mut logs: Vec<String>, budget: usize) -> Vec<String> {
    if budget < 2 {
        return Vec::new();
    }
    let mut used = 2usize;
    for index in 0..logs.len() {
        let separator = usize::from(index > 0);
        let cost = separator + json_string_len(&logs[index]);
        if used + cost <= budget {
            used += cost;
            continue;
        }
        let room = budget.saturating_sub(used + separator + 2);
        let keep = fitting_prefix(&logs[index], room).len();
        if keep > 0 && used + separator + 2 <= budget {
            logs[index].truncate(keep);
            logs.truncate(index + 1);
        } else {
            logs.truncate(index);
        }
        break;
    }
    logs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn value(text: &str) -> JsonValue {
        JsonValue::parse(text).unwrap_or_else(|_| JsonValue::null())
    }

    #[test]
    fn string_sizes_match_serde_json() {
        for text in [
            "",
            "abc",
            "€",
            "\"\\",
            "\u{1}\u{1f}\u{7f}",
            "\n\r\t\u{8}\u{c}",
            "😀",
        ] {
            let expected = serde_json::to_string(text).map(|s| s.len()).unwrap_or(0);
            assert_eq!(json_string_len(text), expected, "{text:?}");
        }
    }

    #[test]
    fn value_sizes_match_serde_json() {
        let value = json!({"a": [1, -2, 2.5, 1e300, true, false, null, "x\"y"], "": {}, "b": []});
        let expected = serde_json::to_string(&value).map(|s| s.len()).unwrap_or(0);
        assert_eq!(json_value_len(&value), expected);
        assert_eq!(json_value_len_within(&value, expected), Some(expected));
        assert_eq!(json_value_len_within(&value, expected - 1), None);
    }

    #[test]
    fn deep_values_are_metered_without_recursion() {
        let mut deep = Value::Null;
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(json_value_len(&deep), 200_004);
        tools_json::drop_deep(deep);
    }

    #[test]
    fn exactly_at_the_cap_succeeds_and_one_over_fails() {
        // `[]` + `"€"` = 2 + 5.
        assert!(
            OutputLedger::new(7)
                .complete(Some(value("\"€\"")))
                .error
                .is_none()
        );
        let failed = OutputLedger::new(6).complete(Some(value("\"€\"")));
        assert_eq!(failed.error.map(|e| e.kind), Some(FailureKind::OutputLimit));

        let mut ledger = OutputLedger::new(11);
        assert!(ledger.push("abc"));
        let failure = CodeRunFailure::new(FailureKind::Exception, "xy");
        assert_eq!(ledger.fail(failure.clone()).error, Some(failure.clone()));
        let mut ledger = OutputLedger::new(10);
        assert!(ledger.push("abc"));
        let result = ledger.fail(failure);
        assert_eq!(
            result.error.map(|e| e.message),
            Some("outer output exceeded 10 bytes".to_owned())
        );
    }

    #[test]
    fn no_value_costs_nothing_and_null_costs_four() {
        assert!(OutputLedger::new(2).complete(None).error.is_none());
        assert!(
            OutputLedger::new(6)
                .complete(Some(JsonValue::null()))
                .error
                .is_none()
        );
        assert!(
            OutputLedger::new(5)
                .complete(Some(JsonValue::null()))
                .error
                .is_some()
        );
    }

    #[test]
    fn a_crossing_entry_is_cut_at_a_code_point_boundary() {
        let mut ledger = OutputLedger::new(96);
        let huge = format!("start-{}", "€".repeat(1000));
        assert!(!ledger.push(&huge));
        assert!(!ledger.push("later"));
        let result = ledger.complete(None);
        assert_eq!(result.logs.len(), 1);
        assert!(result.logs[0].starts_with("start-"));
        let message = "outer output exceeded 96 bytes";
        let total = serde_json::to_string(&result.logs)
            .map(|s| s.len())
            .unwrap_or(0)
            + json_string_len(message);
        assert!(total <= 96, "{total}");
        assert_eq!(result.error.map(|e| e.message), Some(message.to_owned()));
    }

    #[test]
    fn the_diagnostic_alone_is_delivered_under_a_tiny_cap() {
        let mut ledger = OutputLedger::new(4);
        assert!(!ledger.push("hello"));
        let result = ledger.complete(None);
        assert!(result.logs.is_empty());
        assert_eq!(
            result.error.map(|e| e.message),
            Some("outer output exceeded 4 bytes".to_owned())
        );
    }

    #[test]
    fn a_prefix_keeps_whole_characters_and_whole_escapes() {
        assert_eq!(fitting_prefix("aé", 2), "a");
        assert_eq!(fitting_prefix("aé", 3), "aé");
        assert_eq!(fitting_prefix("a\nb", 2), "a");
        assert_eq!(fitting_prefix("a\nb", 3), "a\n");
        assert_eq!(fitting_prefix("x\u{1}", 6), "x");
        assert_eq!(fitting_prefix("😀x", 3), "");
        assert_eq!(fitting_prefix("😀x", 4), "😀");
    }

    #[test]
    fn many_small_entries_keep_a_fitting_prefix() {
        let mut ledger = OutputLedger::new(300);
        let mut accepted = 0;
        for i in 0..1000 {
            if ledger.push(&format!("line {i}")) {
                accepted += 1;
            }
        }
        assert!(accepted > 0 && accepted < 1000);
        let result = ledger.complete(None);
        assert!(!result.logs.is_empty());
        let bytes = serde_json::to_string(&result.logs)
            .map(|s| s.len())
            .unwrap_or(0);
        assert!(bytes + json_string_len("outer output exceeded 300 bytes") <= 300);
        assert_eq!(result.logs[0], "line 0");
    }
}
