//! The `pattern` keyword: ECMA-262 regular expressions, matched in linear time.
//!
//! JSON Schema says a `pattern` is an ECMA-262 regular expression, searched for (not
//! anchored) in the string. Two engines serve that here, each for what it does best:
//!
//! - **`regress`** (an ECMA-262 engine, run with the `u` flag, as JSON Schema's own test
//!   suite assumes) decides whether a pattern is valid ECMA-262 syntax. It is a
//!   backtracking engine, so it is never used to match a value: `^(\w+\s?)*$` against 26
//!   word characters and a `!` took 3.5 s in a measurement on this project's machine, and
//!   a model chooses the value.
//! - **`regex`** (Rust's linear-time engine) matches. A valid pattern is rewritten into its
//!   syntax with ECMA-262's meaning made explicit: `\d`, `\w` and `\b` are ASCII, `\s` is
//!   ECMA-262's own whitespace and line-terminator set, `.` excludes the four line
//!   terminators, every literal is written as a code point, groups do not capture, and
//!   `\u` surrogate pairs are joined. Matching then costs time linear in the value.
//!
//! Constructs with no linear-time meaning are refused with the reason, never matched by
//! the backtracker: backreferences, lookahead and lookbehind, and inline modifiers
//! (`(?i:…)`, whose case folding differs between the engines). A property test holds
//! the rewrite to `regress`'s answers on generated patterns and strings
//! (`tests/it/pattern.rs`).

use std::fmt;

/// A class that matches nothing (a lone surrogate can never occur in a Rust string).
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";
/// ECMA-262 `.` without the `s` flag: anything but a line terminator.
const DOT: &str = r"[^\x{A}\x{D}\x{2028}\x{2029}]";
/// ECMA-262 `\s`: WhiteSpace and LineTerminator.
const SPACE: &str = r"[\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
/// ECMA-262 `\S`.
const NOT_SPACE: &str = r"[^\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
/// The compiled-program size limit of one pattern (a schema is data: it must not be able
/// to claim unbounded memory at registration).
const SIZE_LIMIT: usize = 2 << 20;

/// A compiled `pattern`.
#[derive(Clone)]
pub(crate) struct Pattern {
    regex: regex::Regex,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern")
            .field(&self.regex.as_str())
            .finish()
    }
}

/// Why a `pattern` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// Not ECMA-262 syntax (`regress`'s message).
    Syntax(String),
    /// Valid ECMA-262 that has no linear-time match.
    Unsupported(&'static str),
    /// Larger than the compiled-size limit, or a count the matcher cannot represent.
    TooLarge(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Syntax(message) => {
                write!(f, "is not an ECMA-262 regular expression ({message})")
            }
            PatternError::Unsupported(what) => write!(
                f,
                "uses {what}, which cannot be matched in linear time and is not supported"
            ),
            PatternError::TooLarge(message) => write!(f, "is too large to compile ({message})"),
        }
    }
}

impl Pattern {
    /// Checks `source` as ECMA-262 (`u` flag) and compiles its linear-time form.
    pub(crate) fn new(source: &str) -> Result<Pattern, PatternError> {
        regress::Regex::with_flags(source, "u").map_err(|e| PatternError::Syntax(e.to_string()))?;
        let translated = translate(source)?;
        let regex = regex::RegexBuilder::new(&translated)
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| PatternError::TooLarge(last_line(&e.to_string())))?;
        Ok(Pattern { regex })
    }

    /// Whether `text` contains a match (JSON Schema's unanchored search).
    ///
    /// `find`, not `is_match`: with the ASCII `(?-u:\B)` in a Unicode pattern, `regex`
    /// 1.12's `is_match` answered `false` where `find` (and ECMA-262) found a match
    /// (`(?:(?-u:\B)|\P{L})` on `"aéa\u{2028}a"`, found by the property test). `find`
    /// reports no empty match inside a code point, which is ECMA-262's answer.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.find(text).is_some()
    }

    /// The rewritten pattern (for tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn rewritten(&self) -> &str {
        self.regex.as_str()
    }
}

fn last_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim()
        .to_owned()
}

/// An atom of the ECMA-262 pattern: one code point (possibly a lone surrogate) or a
/// ready-made piece of `regex` syntax (a class or an assertion).
enum Atom {
    Char(u32),
    Text(String),
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn next(&mut self) -> Result<char, PatternError> {
        let c = self.peek(0).ok_or_else(truncated)?;
        self.at += 1;
        Ok(c)
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn hex(&mut self, digits: usize) -> Result<u32, PatternError> {
        let mut value = 0u32;
        for _ in 0..digits {
            let digit = self.next()?.to_digit(16).ok_or_else(truncated)?;
            value = value * 16 + digit;
        }
        Ok(value)
    }
}

/// An inconsistency between the rewrite and `regress`'s grammar (never expected: the
/// pattern was validated first). Reported rather than panicking.
fn truncated() -> PatternError {
    PatternError::Syntax("unexpected end of pattern".into())
}

/// Rewrites a valid ECMA-262 pattern into `regex` syntax with the same matches.
fn translate(source: &str) -> Result<String, PatternError> {
    let mut reader = Reader {
        chars: source.chars().collect(),
        at: 0,
    };
    let mut out = String::with_capacity(source.len() * 2);
    while let Some(c) = reader.peek(0) {
        reader.at += 1;
        match c {
            '\\' => match escape(&mut reader, false)? {
                Atom::Char(code) => push_literal(&mut out, code),
                Atom::Text(text) => out.push_str(&text),
            },
            '[' => class(&mut reader, &mut out)?,
            '(' => group(&mut reader, &mut out)?,
            '.' => out.push_str(DOT),
            ')' | '|' | '*' | '+' | '?' | '^' | '$' => out.push(c),
            '{' => {
                // A quantifier (a lone brace is a syntax error with the `u` flag).
                out.push('{');
                loop {
                    let c = reader.next()?;
                    out.push(c);
                    if c == '}' {
                        break;
                    }
                }
            }
            other => push_literal(&mut out, u32::from(other)),
        }
    }
    Ok(out)
}

fn group(reader: &mut Reader, out: &mut String) -> Result<(), PatternError> {
    if reader.peek(0) != Some('?') {
        out.push_str("(?:");
        return Ok(());
    }
    match (reader.peek(1), reader.peek(2)) {
        (Some(':'), _) => {
            reader.at += 2;
            out.push_str("(?:");
            Ok(())
        }
        (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
            Err(PatternError::Unsupported("a lookaround assertion"))
        }
        (Some('<'), _) => {
            // A named group: its name is irrelevant to whether the pattern matches.
            while reader.next()? != '>' {}
            out.push_str("(?:");
            Ok(())
        }
        _ => Err(PatternError::Unsupported("an inline modifier group")),
    }
}

fn escape(reader: &mut Reader, in_class: bool) -> Result<Atom, PatternError> {
    let text = |s: &str| Ok(Atom::Text(s.to_owned()));
    let c = reader.next()?;
    match c {
        'd' => text("[0-9]"),
        'D' => text("[^0-9]"),
        'w' => text("[0-9A-Za-z_]"),
        'W' => text("[^0-9A-Za-z_]"),
        's' => text(SPACE),
        'S' => text(NOT_SPACE),
        'b' if in_class => Ok(Atom::Char(8)),
        'b' => text(r"(?-u:\b)"),
        'B' => text(r"(?-u:\B)"),
        '1'..='9' | 'k' => Err(PatternError::Unsupported("a backreference")),
        '0' => Ok(Atom::Char(0)),
        't' => Ok(Atom::Char(9)),
        'n' => Ok(Atom::Char(10)),
        'v' => Ok(Atom::Char(11)),
        'f' => Ok(Atom::Char(12)),
        'r' => Ok(Atom::Char(13)),
        'c' => Ok(Atom::Char(u32::from(reader.next()?) % 32)),
        'x' => Ok(Atom::Char(reader.hex(2)?)),
        'u' => unicode_escape(reader).map(Atom::Char),
        'p' | 'P' => {
            let mut name = String::new();
            if reader.next()? != '{' {
                return Err(truncated());
            }
            loop {
                match reader.next()? {
                    '}' => break,
                    c => name.push(c),
                }
            }
            Ok(Atom::Text(format!("\\{c}{{{name}}}")))
        }
        other => Ok(Atom::Char(u32::from(other))),
    }
}

/// `\uXXXX` (joining a surrogate pair written as two escapes) or `\u{X…}`.
fn unicode_escape(reader: &mut Reader) -> Result<u32, PatternError> {
    if reader.peek(0) == Some('{') {
        reader.at += 1;
        let mut value = 0u32;
        loop {
            match reader.next()? {
                '}' => return Ok(value),
                c => {
                    let digit = c.to_digit(16).ok_or_else(truncated)?;
                    value = value.saturating_mul(16).saturating_add(digit);
                }
            }
        }
    }
    let high = reader.hex(4)?;
    if (0xD800..0xDC00).contains(&high)
        && reader.peek(0) == Some('\\')
        && reader.peek(1) == Some('u')
    {
        let saved = reader.at;
        reader.at += 2;
        if let Ok(low) = reader.hex(4)
            && (0xDC00..0xE000).contains(&low)
        {
            return Ok(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
        }
        reader.at = saved;
    }
    Ok(high)
}

fn class(reader: &mut Reader, out: &mut String) -> Result<(), PatternError> {
    out.push('[');
    if reader.peek(0) == Some('^') {
        reader.at += 1;
        out.push('^');
    }
    // Keeps the class non-empty in `regex` syntax (`[]` matches nothing in ECMA-262).
    out.push_str(NEVER);
    loop {
        let c = reader.next()?;
        if c == ']' {
            break;
        }
        let low = class_atom(reader, c)?;
        let is_range = reader.peek(0) == Some('-') && reader.peek(1).is_some_and(|n| n != ']');
        match low {
            Atom::Char(low) if is_range => {
                reader.at += 1;
                let c = reader.next()?;
                match class_atom(reader, c)? {
                    Atom::Char(high) => push_range(out, low, high),
                    // A class escape as a range end is a syntax error with the `u` flag.
                    Atom::Text(_) => return Err(truncated()),
                }
            }
            Atom::Char(code) => push_range(out, code, code),
            Atom::Text(text) => out.push_str(&text),
        }
    }
    out.push(']');
    Ok(())
}

fn class_atom(reader: &mut Reader, c: char) -> Result<Atom, PatternError> {
    if c == '\\' {
        escape(reader, true)
    } else {
        Ok(Atom::Char(u32::from(c)))
    }
}

/// A literal code point outside a class; a lone surrogate never matches.
fn push_literal(out: &mut String, code: u32) {
    if char::from_u32(code).is_none() {
        out.push_str(NEVER);
    } else if char::from_u32(code).is_some_and(|c| c.is_ascii_alphanumeric()) {
        out.extend(char::from_u32(code));
    } else {
        push_code(out, code);
    }
}

/// A class range, without the surrogate code points (which no Rust string holds).
fn push_range(out: &mut String, low: u32, high: u32) {
    let mut piece = |a: u32, b: u32| {
        if a <= b {
            push_code(out, a);
            if a != b {
                out.push('-');
                push_code(out, b);
            }
        }
    };
    if high < 0xD800 || low > 0xDFFF {
        piece(low, high);
    } else {
        if low < 0xD800 {
            piece(low, 0xD7FF);
        }
        if high > 0xDFFF {
            piece(0xE000, high);
        }
    }
}

fn push_code(out: &mut String, code: u32) {
    use fmt::Write;
    let _ = write!(out, "\\x{{{code:X}}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        match Pattern::new(pattern) {
            Ok(p) => p.is_match(text),
            Err(e) => panic!("{pattern}: {e}"),
        }
    }

    #[test]
    fn ecma_classes_are_ascii_where_ecma_says_so() {
        assert!(matches(r"^\d+$", "0123"));
        assert!(!matches(r"^\d$", "\u{0660}"));
        assert!(!matches(r"^\w$", "é"));
        assert!(matches(r"^\W$", "é"));
        assert!(matches(r"^\s$", "\u{FEFF}"));
        assert!(!matches(r"^\s$", "\u{85}"));
        assert!(!matches(r"^.$", "\u{2028}"));
        assert!(matches(r"^.$", "\u{85}"));
        assert!(!matches(r"\bé", " é"));
    }

    #[test]
    fn literals_classes_and_escapes_mean_what_ecma_says() {
        assert!(matches(r"^[\b]$", "\u{8}"));
        assert!(matches(r"^\cJ$", "\n"));
        assert!(matches(r"^\uD83D\uDE00$", "😀"));
        assert!(matches(r"^[\uD83D\uDE00-\uD83D\uDE4F]$", "😃"));
        assert!(!matches(r"\uD83D", "😀"));
        assert!(!matches(r"[]", "a"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(matches(r"^a.c$", "a[c"));
        assert!(matches(r"^[.]$", "."));
        assert!(!matches(r"^[.]$", "a"));
        assert!(matches(r"^(?<year>\d{4})-\d{2}$", "2026-12"));
        assert!(matches(r"^[a&&b]+$", "&&"));
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^\p{Letter}+$", "Straße"));
        assert!(matches(r"a||b", "zzz"));
        // Found by the property test: `regex`'s `is_match` disagreed with `find` here.
        assert!(matches(r"(\B|\P{L})", "aéa\u{2028}a"));
        assert!(!matches(r"\B", "aéa\u{2028}a"));
    }

    #[test]
    fn the_search_is_unanchored() {
        assert!(matches("a+", "xxaxx"));
        assert!(!matches("^a+$", "xxaxx"));
    }

    #[test]
    fn non_linear_constructs_are_refused_with_the_reason() {
        for (pattern, what) in [
            (r"(a)\1", "a backreference"),
            (r"(?<n>a)\k<n>", "a backreference"),
            (r"a(?=b)", "a lookaround assertion"),
            (r"(?<!a)b", "a lookaround assertion"),
            (r"(?i:a)", "an inline modifier group"),
        ] {
            assert_eq!(
                Pattern::new(pattern).map(|_| ()),
                Err(PatternError::Unsupported(what))
            );
        }
        assert!(matches!(
            Pattern::new("(?<!a"),
            Err(PatternError::Syntax(_))
        ));
        assert!(matches!(Pattern::new("a{"), Err(PatternError::Syntax(_))));
        assert!(matches!(
            Pattern::new("a{99999999999}"),
            Err(PatternError::TooLarge(_))
        ));
    }

    #[test]
    fn catastrophic_patterns_match_in_linear_time() {
        // Exponential for a backtracker; the rewrite runs it as a finite automaton.
        let p = Pattern::new(r"^(\w+\s?)*$").unwrap();
        let text = format!("{}!", "a".repeat(10_000));
        assert!(!p.is_match(&text));
        assert!(p.rewritten().contains("(?:"));
    }
}
