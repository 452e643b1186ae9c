//! Text helpers shared by both renderers: JavaScript white space, literals, number digits,
//! descriptions, and the tool order.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Number, Value};

/// JavaScript's `\s` set (what `String.prototype.trim` and `/\s+/` use).
///
/// Differs from [`char::is_whitespace`]: it includes U+FEFF and excludes U+0085 (NEL).
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Collapses every run of JavaScript white space to one space and trims both ends.
pub(crate) fn collapse_js_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if is_js_whitespace(c) {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
    out
}

/// A property's doc text: its `description`, then its bounds and `format` in parentheses
/// (`Lines to read. (minimum: 1, maximum: 500)`), so that the model reading the SDK sees
/// what validation will hold the value to. Bounds are not types in TypeScript or Python, so
/// they are stated, not typed. `None` when there is neither.
pub(crate) fn description_of(schema: &Value) -> Option<Cow<'_, str>> {
    let description = schema.get("description").and_then(Value::as_str);
    let Some(map) = schema.as_object() else {
        return description.map(Cow::Borrowed);
    };
    let mut note = String::new();
    // The bounds of docs/decisions.md, entry 28, then the `format` annotation.
    for key in tools_json::BOUND_KEYWORDS.iter().copied().chain(["format"]) {
        let Some(value) = map.get(key) else { continue };
        if !note.is_empty() {
            note.push_str(", ");
        }
        note.push_str(key);
        note.push_str(": ");
        match value {
            // `format` reads better bare; a pattern keeps its quotes.
            Value::String(s) if key == "format" => note.push_str(s),
            other => note.push_str(&other.to_string()),
        }
    }
    match (description, note.is_empty()) {
        (description, true) => description.map(Cow::Borrowed),
        (None, false) => Some(Cow::Owned(format!("({note})"))),
        (Some(text), false) => Some(Cow::Owned(format!("{text} ({note})"))),
    }
}

/// A string as a JSON (and so JavaScript and Python) string literal.
pub(crate) fn json_string(s: &str) -> String {
    // Serializing a `str` cannot fail; the fallback keeps the function total anyway.
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// A number the way JavaScript's `String(n)` prints it, except that integers stored as
/// integers keep every digit (JavaScript would round those above 2^53).
pub(crate) fn js_number(number: &Number) -> String {
    if number.is_f64() {
        let f = number.as_f64().unwrap_or(0.0);
        ryu_js::Buffer::new().format(f).to_owned()
    } else {
        number.to_string()
    }
}

/// The largest integer JavaScript represents exactly (2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A number for a Python literal: like JavaScript, except that an integral value outside
/// ±(2^53 − 1) prints its exact decimal digits (`1e21` → `1000000000000000000000`).
pub(crate) fn py_number(number: &Number) -> String {
    if number.is_f64() {
        let f = number.as_f64().unwrap_or(0.0);
        if f.is_finite() && f.fract() == 0.0 && f.abs() > MAX_SAFE_INTEGER {
            format!("{f:.0}")
        } else {
            ryu_js::Buffer::new().format(f).to_owned()
        }
    } else {
        number.to_string()
    }
}

/// Whether a number can be a `Literal[...]` member for Python type checkers: an integer
/// (PEP 586 allows no floats) within ±(2^63 − 1) (mypy refuses larger ones, and `-2^63`,
/// which it reads as the negation of an out-of-range `2^63`).
pub(crate) fn is_literal_int(number: &Number) -> bool {
    if let Some(i) = number.as_i64() {
        return i != i64::MIN;
    }
    if number.is_u64() {
        return false;
    }
    // 2^63 is exactly representable, so the comparison is exact.
    number
        .as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9_223_372_036_854_775_808.0)
}

/// Orders tool names as JavaScript's `<` does: by UTF-16 code units.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The indices of `names` in JavaScript string order, stable for equal names.
pub(crate) fn sorted_order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<usize> {
    let names: Vec<&str> = names.collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| cmp_utf16(names[a], names[b]));
    order
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bounds_and_format_follow_the_description() {
        let schema =
            json!({"type": "integer", "description": "Lines.", "minimum": 1, "maximum": 500});
        assert_eq!(
            description_of(&schema).as_deref(),
            Some("Lines. (minimum: 1, maximum: 500)")
        );
        let schema = json!({"type": "string", "pattern": "^a|b$", "format": "uri", "minLength": 1});
        assert_eq!(
            description_of(&schema).as_deref(),
            Some(r#"(minLength: 1, pattern: "^a|b$", format: uri)"#)
        );
        assert_eq!(description_of(&json!({"type": "string"})), None);
        assert_eq!(
            description_of(&json!({"description": "d"})).as_deref(),
            Some("d")
        );
        let ts = crate::json_schema_to_ts(
            &json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
            0,
        );
        assert!(ts.contains("/** (minimum: 1) */"), "{ts}");
        let tool = crate::ToolSdkSchema::new(
            "t",
            "T.",
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 2, "description": "N."}}}),
            json!({"type": "null"}),
        );
        let py = crate::Language::Python.render_declarations(&[tool]);
        assert!(py.contains("# N. (minimum: 2)"), "{py}");
    }

    fn n(v: Value) -> Number {
        v.as_number().cloned().unwrap()
    }

    #[test]
    fn js_whitespace_differs_from_rust_on_nel_and_bom() {
        assert!(is_js_whitespace('\u{FEFF}'));
        assert!(!'\u{FEFF}'.is_whitespace());
        assert!(!is_js_whitespace('\u{85}'));
        assert!('\u{85}'.is_whitespace());
    }

    #[test]
    fn collapsing_folds_runs_and_trims() {
        assert_eq!(collapse_js_whitespace("  a \n\t b\u{FEFF} "), "a b");
        assert_eq!(collapse_js_whitespace(" \u{85} "), "\u{85}");
        assert_eq!(collapse_js_whitespace(" \t "), "");
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(js_number(&n(json!(1e21))), "1e+21");
        assert_eq!(js_number(&n(json!(1e-7))), "1e-7");
        assert_eq!(js_number(&n(json!(100.0))), "100");
        assert_eq!(js_number(&n(json!(0.1))), "0.1");
        assert_eq!(
            js_number(&n(json!(1_152_921_504_606_846_976u64))),
            "1152921504606846976"
        );
        assert_eq!(js_number(&n(json!(-3))), "-3");
    }

    #[test]
    fn python_numbers_keep_exact_digits_beyond_the_safe_range() {
        assert_eq!(py_number(&n(json!(1e21))), "1000000000000000000000");
        assert_eq!(
            py_number(&n(json!(1.234_567_890_123_456_8e20))),
            "123456789012345683968"
        );
        assert_eq!(py_number(&n(json!(-1e21))), "-1000000000000000000000");
        assert_eq!(
            py_number(&n(json!(9_007_199_254_740_991.0))),
            "9007199254740991"
        );
        assert_eq!(py_number(&n(json!(2.5e-8))), "2.5e-8");
        assert!(!is_literal_int(&n(json!(1.5))));
        assert!(is_literal_int(&n(json!(2.0))));
        assert!(is_literal_int(&n(json!(-2))));
        assert!(is_literal_int(&n(json!(i64::MAX))));
        assert!(!is_literal_int(&n(json!(i64::MIN))));
        assert!(!is_literal_int(&n(json!(9_223_372_036_854_775_808u64))));
        assert!(!is_literal_int(&n(json!(1e21))));
    }

    #[test]
    fn utf16_order_differs_from_code_point_order_above_the_bmp() {
        let astral = "\u{1F600}";
        let private = "\u{E000}";
        assert!(astral > private);
        assert_eq!(cmp_utf16(astral, private), Ordering::Less);
        assert_eq!(
            sorted_order(["b", "a", "b", "a"].into_iter()),
            vec![1, 3, 0, 2]
        );
    }
}
