//! JSON text of values of any depth, without deep recursion, and parsing under the depth
//! limit.

use serde_json::Value;

use crate::limits::Limits;
use crate::parse::TextError;
use crate::{Error, Path, Violation, ViolationKind};

/// Compact JSON text of a value of any depth, without deep recursion; the same text as
/// `serde_json::to_string` (whose writer recurses per level).
pub fn to_compact_string(value: &Value) -> String {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    fn scalar(out: &mut String, value: &Value) {
        out.push_str(&serde_json::to_string(value).unwrap_or_default());
    }
    let mut out = String::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    fn open<'a>(out: &mut String, stack: &mut Vec<Frame<'a>>, value: &'a Value) {
        match value {
            Value::Array(items) => {
                out.push('[');
                stack.push(Frame::Array(items.iter(), true));
            }
            Value::Object(map) => {
                out.push('{');
                stack.push(Frame::Object(map.iter(), true));
            }
            other => scalar(out, other),
        }
    }
    open(&mut out, &mut stack, value);
    while let Some(frame) = stack.last_mut() {
        let next = match frame {
            Frame::Array(items, first) => items.next().inspect(|_| {
                if !std::mem::take(first) {
                    out.push(',');
                }
            }),
            Frame::Object(members, first) => members.next().map(|(key, item)| {
                if !std::mem::take(first) {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                item
            }),
        };
        match next {
            Some(item) => open(&mut out, &mut stack, item),
            None => {
                out.push(match stack.pop() {
                    Some(Frame::Array(..)) => ']',
                    _ => '}',
                });
            }
        }
    }
    out
}

/// Pretty JSON text with two-space indentation, where containers at depth 5 and deeper
/// (whose lines would be indented by more than ten characters) print compactly. Any depth,
/// no recursion, output linear in the value's size. `{}` and `[]` stay on one line.
///
/// # Examples
///
/// ```
/// use serde_json::json;
///
/// let text = tools_json::to_pretty_capped(&json!({"a": [1, {"b": null}], "c": {}}));
/// assert_eq!(text, "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}");
/// ```
pub fn to_pretty_capped(value: &Value) -> String {
    /// Containers at this depth and deeper print compactly.
    const COMPACT_DEPTH: usize = 5;
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    fn indent(out: &mut String, depth: usize) {
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    fn open<'a>(out: &mut String, stack: &mut Vec<Frame<'a>>, value: &'a Value, depth: usize) {
        match value {
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(_) | Value::Object(_) if depth >= COMPACT_DEPTH => {
                out.push_str(&to_compact_string(value));
            }
            Value::Array(items) => {
                out.push('[');
                stack.push(Frame::Array(items.iter(), true));
            }
            Value::Object(map) => {
                out.push('{');
                stack.push(Frame::Object(map.iter(), true));
            }
            scalar => out.push_str(&serde_json::to_string(scalar).unwrap_or_default()),
        }
    }
    let mut out = String::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    open(&mut out, &mut stack, value, 0);
    loop {
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else {
            break;
        };
        let next = match frame {
            Frame::Array(items, first) => {
                items.next().map(|item| (None, item, std::mem::take(first)))
            }
            Frame::Object(members, first) => members
                .next()
                .map(|(key, item)| (Some(key), item, std::mem::take(first))),
        };
        match next {
            Some((key, item, first)) => {
                if !first {
                    out.push(',');
                }
                out.push('\n');
                indent(&mut out, depth);
                if let Some(key) = key {
                    out.push_str(&serde_json::to_string(key).unwrap_or_default());
                    out.push_str(": ");
                }
                open(&mut out, &mut stack, item, depth);
            }
            None => {
                let close = match stack.pop() {
                    Some(Frame::Array(..)) => ']',
                    _ => '}',
                };
                out.push('\n');
                indent(&mut out, depth - 1);
                out.push(close);
            }
        }
    }
    out
}

/// Whether the container nesting of JSON text stays within `limit`, without parsing it.
/// Brackets inside strings do not count; malformed text is left to the parser.
fn text_depth_within(text: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// Parses JSON text under the depth limit.
///
/// Text that nests too deep is refused as too deep even where it is also malformed further
/// on. The parser checks the depth as it opens containers, so valid text is read in one
/// pass; only text that fails to parse is scanned for its depth, to tell the two apart.
pub(crate) fn parse_value(text: &str, limits: &Limits) -> Result<Value, Error> {
    let too_deep = || too_deep(limits.max_depth);
    match crate::parse::parse_text_within(text, limits.max_depth) {
        Ok(value) => Ok(value),
        Err(TextError::TooDeep) => Err(too_deep()),
        Err(TextError::Malformed(_)) if !text_depth_within(text, limits.max_depth) => {
            Err(too_deep())
        }
        Err(TextError::Malformed(message)) => Err(Error::Parse(message)),
    }
}

/// The refusal of text nested deeper than `limit`.
fn too_deep(limit: usize) -> Error {
    Error::NotLossless {
        violations: vec![Violation::new(
            Path::root("value"),
            ViolationKind::TooDeep { limit },
        )]
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What `parse_value` did before the parser checked the depth itself: scan the whole
    /// text for its depth, then parse it.
    fn scan_then_parse(text: &str, limits: &Limits) -> Result<Value, Error> {
        if !text_depth_within(text, limits.max_depth) {
            return Err(too_deep(limits.max_depth));
        }
        crate::parse::parse_text(text).map_err(Error::Parse)
    }

    fn same(text: &str, max_depth: usize) {
        let limits = Limits::default().with_max_depth(max_depth);
        assert_eq!(
            format!("{:?}", parse_value(text, &limits)),
            format!("{:?}", scan_then_parse(text, &limits)),
            "{text:?} at depth {max_depth}"
        );
    }

    #[test]
    fn too_deep_wins_over_a_later_or_an_earlier_syntax_error() {
        for text in [
            "[[[1]]]",
            "[[[1]]",
            "[x, [[[1]]]]",
            "{\"a\": x, \"b\": [[[1]]]}",
            "[[[x]]]",
            "[\"[[[\", 1]",
            "{\"a\": {}, \"b\": {\"c\": []}}",
            "[[]] trailing",
            "]]]",
            "",
        ] {
            for max_depth in 0..5 {
                same(text, max_depth);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Texts of brackets, strings (with escaped quotes and brackets inside), numbers,
        /// separators and stray letters: valid, malformed and deep in every mix.
        #[test]
        fn the_one_pass_parse_answers_as_the_scan_then_parse_did(
            tokens in proptest::collection::vec(
                prop::sample::select(vec![
                    "[", "]", "{", "}", "\"k\"", "\"[\\\"{\"", ":", ",", "1", "-0", "x", " ",
                ]),
                0..24,
            ),
            max_depth in 0usize..6,
        ) {
            same(&tokens.concat(), max_depth);
        }

        #[test]
        fn nested_valid_text_is_refused_exactly_past_the_limit(
            depth in 0usize..12,
            max_depth in 0usize..12,
            object in any::<bool>(),
        ) {
            let (open, close) = if object { ("{\"a\":", "}") } else { ("[", "]") };
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            same(&text, max_depth);
            prop_assert_eq!(parse_value(&text, &Limits::default().with_max_depth(max_depth)).is_ok(), depth <= max_depth);
        }
    }
}
