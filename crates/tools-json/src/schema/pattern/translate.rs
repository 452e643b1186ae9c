//! The rewrite of a valid ECMA-262 pattern into the syntax of `regex`, with ECMA-262's
//! meaning made explicit (see the parent module).

use std::fmt;

use super::{PatternError, SIZE_LIMIT};
use crate::PatternBound;

/// A class that matches nothing (a lone surrogate can never occur in a Rust string).
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

/// ECMA-262 `.` without the `s` flag: anything but a line terminator.
const DOT: &str = r"[^\x{A}\x{D}\x{2028}\x{2029}]";

/// ECMA-262 `\s`: WhiteSpace and LineTerminator.
const SPACE: &str = r"[\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

/// ECMA-262 `\S`.
const NOT_SPACE: &str = r"[^\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

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
pub(super) fn translate(source: &str) -> Result<String, PatternError> {
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
                // A quantifier (a lone brace is a syntax error with the `u` flag). A count
                // `regex` cannot represent (over `u32`) would repeat past any size limit.
                out.push('{');
                let mut count = 0u64;
                loop {
                    let c = reader.next()?;
                    out.push(c);
                    match c {
                        '}' => break,
                        ',' => count = 0,
                        digit => {
                            let digit = u64::from(digit.to_digit(10).ok_or_else(truncated)?);
                            count = count.saturating_mul(10).saturating_add(digit);
                            if count > u64::from(u32::MAX) {
                                return Err(PatternError::TooLarge(PatternBound::CompiledSize {
                                    limit: SIZE_LIMIT,
                                }));
                            }
                        }
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
