//! An iterative JSON text parser producing `serde_json::Value`.
//!
//! `serde_json`'s deserializer recurses once per nesting level (with `unbounded_depth` and
//! the recursion limit disabled it overflows a small thread stack a few thousand levels
//! down). This parser keeps an explicit stack of open containers instead, so any depth is
//! safe, and it is held to `serde_json`'s own behaviour:
//!
//! - it accepts and rejects exactly the texts `serde_json::from_str::<Value>` does;
//! - it yields the same value: numbers and strings are converted by `serde_json` itself
//!   (each number or escaped string lexeme is handed to it whole), object keys keep their
//!   first position and the last duplicate's value (`preserve_order`'s `insert`);
//! - a rejection carries `serde_json`'s message, with the same line and column.

use serde_json::{Map, Value};

use crate::deep::drop_deep;

/// What went wrong, spelled as `serde_json` spells it.
#[derive(Clone, Copy)]
enum Code {
    EofWhileParsingList,
    EofWhileParsingObject,
    EofWhileParsingValue,
    ExpectedColon,
    ExpectedListCommaOrEnd,
    ExpectedObjectCommaOrEnd,
    ExpectedSomeIdent,
    ExpectedSomeValue,
    InvalidNumber,
    KeyMustBeAString,
    TrailingComma,
    TrailingCharacters,
}

impl Code {
    fn message(self) -> &'static str {
        match self {
            Code::EofWhileParsingList => "EOF while parsing a list",
            Code::EofWhileParsingObject => "EOF while parsing an object",
            Code::EofWhileParsingValue => "EOF while parsing a value",
            Code::ExpectedColon => "expected `:`",
            Code::ExpectedListCommaOrEnd => "expected `,` or `]`",
            Code::ExpectedObjectCommaOrEnd => "expected `,` or `}`",
            Code::ExpectedSomeIdent => "expected ident",
            Code::ExpectedSomeValue => "expected value",
            Code::InvalidNumber => "invalid number",
            Code::KeyMustBeAString => "key must be a string",
            Code::TrailingComma => "trailing comma",
            Code::TrailingCharacters => "trailing characters",
        }
    }
}

/// A parse failure: the message without its position, and the byte index the position is
/// computed from (`serde_json` reports the index just past the offending byte, or the end
/// of the text).
struct Failure {
    message: String,
    index: usize,
    /// The text nests deeper than the parser's limit (see [`parse_text_within`]); the
    /// message and index are then unused.
    too_deep: bool,
}

impl Failure {
    fn new(code: Code, index: usize) -> Failure {
        Failure {
            message: code.message().to_owned(),
            index,
            too_deep: false,
        }
    }

    fn too_deep() -> Failure {
        Failure {
            message: String::new(),
            index: 0,
            too_deep: true,
        }
    }

    /// `<message> at line <l> column <c>`, as `serde_json` writes a syntax error.
    fn render(&self, text: &str) -> String {
        let index = self.index.min(text.len());
        let before = &text.as_bytes()[..index];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let line = 1 + before[..line_start].iter().filter(|&&b| b == b'\n').count();
        format!(
            "{} at line {line} column {}",
            self.message,
            index - line_start
        )
    }
}

/// An open container. Its elements or members so far wait in [`Open`]'s lists, from the
/// index it holds on, and become its `Vec` or `Map` when it closes: built at their final
/// size, with no growing (each growth of a `Map` moved its entries and rebuilt its hash
/// table; on the e2 arguments that was a quarter of the parse).
enum Frame {
    Array(usize),
    /// The start of its members and the key whose value is being parsed.
    Object(usize, String),
}

/// The open containers and their contents so far. A container opened later closes
/// earlier, so each one's contents are the tail of a list.
#[derive(Default)]
struct Open {
    frames: Vec<Frame>,
    items: Vec<Value>,
    members: Vec<(String, Value)>,
}

/// The most open containers, elements and members a thread keeps room for between parses:
/// at most 50 KiB per thread (32, 72 and 96 bytes each on 64-bit targets), and more than
/// the arguments of a tool call usually need.
const KEPT: usize = 256;

thread_local! {
    static OPEN: std::cell::RefCell<Open> = std::cell::RefCell::default();
}

impl Open {
    /// Empties the lists (after a failure they hold the finished children of containers
    /// left open, which may be deep).
    fn clear(&mut self) {
        self.frames.clear();
        if !self.items.is_empty() {
            drop_deep(Value::Array(self.items.drain(..).collect()));
        }
        if !self.members.is_empty() {
            let values = self.members.drain(..).map(|(_, value)| value).collect();
            drop_deep(Value::Array(values));
        }
    }

    /// Closes the innermost container, which must be an array.
    fn close_array(&mut self) -> Value {
        let start = match self.frames.pop() {
            Some(Frame::Array(start)) => start,
            _ => self.items.len(),
        };
        Value::Array(self.items.drain(start.min(self.items.len())..).collect())
    }

    /// Closes the innermost container, which must be an object. `serde_json`'s map
    /// (`preserve_order`): a repeated key keeps its first position and takes the last
    /// value.
    fn close_object(&mut self) -> Value {
        let start = match self.frames.pop() {
            Some(Frame::Object(start, _)) => start,
            _ => self.members.len(),
        };
        let members = self.members.drain(start.min(self.members.len())..);
        let mut map = Map::with_capacity(members.len());
        for (key, value) in members {
            if let Some(replaced) = map.insert(key, value) {
                drop_deep(replaced);
            }
        }
        Value::Object(map)
    }
}

/// Where the parser is in the grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must start here.
    Value,
    /// After `[`: a first element or `]`.
    FirstElement,
    /// After `{`: a first key or `}`.
    FirstKey,
    /// A value was completed; what follows depends on the enclosing container.
    AfterValue,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_whitespace(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.at) {
            if matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                self.at += 1;
            } else {
                return Some(b);
            }
        }
        None
    }

    /// A failure at the byte under the cursor (or at the end).
    fn fail_here(&self, code: Code) -> Failure {
        Failure::new(code, self.at + 1)
    }

    fn ident(&mut self, rest: &[u8]) -> Result<(), Failure> {
        for &expected in rest {
            match self.bytes.get(self.at) {
                None => return Err(Failure::new(Code::EofWhileParsingValue, self.at)),
                Some(&b) => {
                    self.at += 1;
                    if b != expected {
                        return Err(Failure::new(Code::ExpectedSomeIdent, self.at));
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses a string starting at the opening quote under the cursor.
    fn string(&mut self) -> Result<String, Failure> {
        let start = self.at;
        let mut cursor = start + 1;
        let mut plain = true;
        let end = loop {
            match self.bytes.get(cursor) {
                None => break None,
                Some(b'"') => break Some(cursor),
                Some(b'\\') => {
                    plain = false;
                    // `\uXXXX` takes its four bytes whatever they are (a quote among
                    // them is an invalid escape, not the end of the string).
                    cursor += if self.bytes.get(cursor + 1) == Some(&b'u') {
                        6
                    } else {
                        2
                    };
                }
                Some(&b) => {
                    if b < 0x20 {
                        plain = false;
                    }
                    cursor += 1;
                }
            }
        };
        match end {
            Some(end) if plain => {
                self.at = end + 1;
                Ok(self.text[start + 1..end].to_owned())
            }
            Some(end) => {
                let lexeme = &self.text[start..=end];
                let parsed = serde_json::from_str::<String>(lexeme)
                    .map_err(|error| relocate(&error, lexeme, start))?;
                self.at = end + 1;
                Ok(parsed)
            }
            // Unterminated: `serde_json` reports the first problem on the way to the end.
            None => {
                let rest = &self.text[start..];
                Err(match serde_json::from_str::<String>(rest) {
                    Err(error) => relocate(&error, rest, start),
                    Ok(_) => Failure::new(Code::EofWhileParsingValue, self.text.len()),
                })
            }
        }
    }

    /// Parses a number starting at the cursor (a `-` or a digit).
    fn number(&mut self) -> Result<Value, Failure> {
        let start = self.at;
        let len = self.bytes.len();
        let mut i = start;
        let byte = |i: usize| self.bytes.get(i).copied();
        // A failure at byte `i` (reported just past it), or at the end.
        let bad = |i: usize, eof: bool| {
            if eof {
                Failure::new(Code::EofWhileParsingValue, len)
            } else {
                Failure::new(Code::InvalidNumber, i + 1)
            }
        };
        let negative = byte(i) == Some(b'-');
        if negative {
            i += 1;
        }
        match byte(i) {
            None => return Err(bad(i, true)),
            Some(b'0') => {
                i += 1;
                if let Some(b'0'..=b'9') = byte(i) {
                    return Err(bad(i, false));
                }
            }
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = byte(i) {
                    i += 1;
                }
            }
            Some(_) => return Err(bad(i, false)),
        }
        // One digit or more from `i`: the index past them.
        let digits = |mut i: usize| match byte(i) {
            Some(b'0'..=b'9') => {
                while let Some(b'0'..=b'9') = byte(i) {
                    i += 1;
                }
                Ok(i)
            }
            None => Err(bad(i, true)),
            Some(_) => Err(bad(i, false)),
        };
        let integral_digits = i - start - usize::from(negative);
        let mut integral = true;
        if byte(i) == Some(b'.') {
            integral = false;
            i = digits(i + 1)?;
        }
        if let Some(b'e' | b'E') = byte(i) {
            integral = false;
            i += 1;
            if let Some(b'+' | b'-') = byte(i) {
                i += 1;
            }
            i = digits(i)?;
        }
        let lexeme = &self.text[start..i];
        // The common numbers are read directly, as `serde_json` reads them: an integer
        // that fits 18 digits as an integer (`-0` is left to it), a float that is finite
        // when correctly rounded as a float (`float_roundtrip` rounds correctly too).
        let direct = if integral {
            (integral_digits <= 18)
                .then(|| lexeme.parse::<i64>().ok())
                .flatten()
                .filter(|&n| n != 0 || !negative)
                .map(Value::from)
        } else {
            lexeme
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        };
        if let Some(value) = direct {
            self.at = i;
            return Ok(value);
        }
        // What is left (wide integers, `-0`, floats out of range): `serde_json` converts
        // it exactly, or refuses it.
        let value = serde_json::from_str::<Value>(lexeme)
            .map_err(|error| relocate(&error, lexeme, start))?;
        self.at = i;
        Ok(value)
    }
}

/// Moves a `serde_json` error about `lexeme` (which starts at byte `start` of the text) to
/// the index it has in the whole text.
fn relocate(error: &serde_json::Error, lexeme: &str, start: usize) -> Failure {
    let text = error.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(message, _)| message)
        .to_owned();
    // Line `l`, column `c` of the lexeme: `c` bytes past the start of its line `l`.
    let mut line_start = 0;
    for _ in 1..error.line() {
        match lexeme.as_bytes()[line_start..]
            .iter()
            .position(|&b| b == b'\n')
        {
            Some(at) => line_start += at + 1,
            None => break,
        }
    }
    Failure {
        message,
        index: start + line_start + error.column(),
        too_deep: false,
    }
}

/// Parses JSON text into a `Value` without recursion; errors read like `serde_json`'s.
#[cfg(test)]
pub(crate) fn parse_text(text: &str) -> Result<Value, String> {
    parse_text_within(text, usize::MAX).map_err(|error| match error {
        TextError::Malformed(message) => message,
        TextError::TooDeep => String::new(),
    })
}

/// Why text did not parse under a depth limit.
#[derive(Debug)]
pub(crate) enum TextError {
    /// Not JSON: `serde_json`'s message, with its line and column.
    Malformed(String),
    /// A container opens deeper than the limit, in a well-formed prefix of the text.
    TooDeep,
}

/// Parses JSON text whose containers nest at most `limit` deep (the first container is at
/// depth 1). The parser stops at the first container that would exceed the limit: every
/// byte before it is well formed, so the text's brackets (outside strings) nest that deep
/// too, whatever follows.
pub(crate) fn parse_text_within(text: &str, limit: usize) -> Result<Value, TextError> {
    // The thread's lists, taken for this parse and put back empty, so that a thread
    // parsing text after text grows them once, not per text; lists grown past `KEPT` are
    // not kept. A fresh set when they cannot be had: taken already (which nothing here
    // does) or, in a thread-local destructor, gone (`try_with`, which does not panic).
    let mut open = OPEN
        .try_with(|kept| {
            kept.try_borrow_mut()
                .map(|mut kept| std::mem::take(&mut *kept))
                .ok()
        })
        .ok()
        .flatten()
        .unwrap_or_default();
    let result = run(text, &mut open, limit);
    open.clear();
    let small = [
        open.frames.capacity(),
        open.items.capacity(),
        open.members.capacity(),
    ];
    if small.iter().all(|&capacity| capacity <= KEPT) {
        // Nothing is kept while the thread's locals are being destroyed.
        let _ = OPEN.try_with(|kept| {
            if let Ok(mut kept) = kept.try_borrow_mut() {
                *kept = open;
            }
        });
    }
    result.map_err(|failure| {
        if failure.too_deep {
            TextError::TooDeep
        } else {
            TextError::Malformed(failure.render(text))
        }
    })
}

fn run(text: &str, open: &mut Open, limit: usize) -> Result<Value, Failure> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut state = State::Value;
    // The value just completed, to be placed into the enclosing container.
    let mut done: Option<Value> = None;
    loop {
        match state {
            State::Value => {
                let Some(b) = p.skip_whitespace() else {
                    return Err(p.fail_here(Code::EofWhileParsingValue));
                };
                let value = match b {
                    b'n' => {
                        p.at += 1;
                        p.ident(b"ull")?;
                        Value::Null
                    }
                    b't' => {
                        p.at += 1;
                        p.ident(b"rue")?;
                        Value::Bool(true)
                    }
                    b'f' => {
                        p.at += 1;
                        p.ident(b"alse")?;
                        Value::Bool(false)
                    }
                    b'-' | b'0'..=b'9' => p.number()?,
                    b'"' => Value::String(p.string()?),
                    // Every enclosing container is on the stack (an object from its first
                    // key on, which comes before any of its values).
                    b'[' | b'{' if open.frames.len() >= limit => {
                        return Err(Failure::too_deep());
                    }
                    b'[' => {
                        p.at += 1;
                        open.frames.push(Frame::Array(open.items.len()));
                        state = State::FirstElement;
                        continue;
                    }
                    b'{' => {
                        p.at += 1;
                        state = State::FirstKey;
                        continue;
                    }
                    _ => return Err(p.fail_here(Code::ExpectedSomeValue)),
                };
                done = Some(value);
                state = State::AfterValue;
            }
            State::FirstElement => match p.skip_whitespace() {
                None => return Err(p.fail_here(Code::EofWhileParsingList)),
                Some(b']') => {
                    p.at += 1;
                    done = Some(open.close_array());
                    state = State::AfterValue;
                }
                Some(_) => state = State::Value,
            },
            State::FirstKey => match p.skip_whitespace() {
                None => return Err(p.fail_here(Code::EofWhileParsingObject)),
                Some(b'}') => {
                    p.at += 1;
                    done = Some(Value::Object(Map::new()));
                    state = State::AfterValue;
                }
                Some(b'"') => {
                    let key = p.string()?;
                    colon(&mut p)?;
                    open.frames.push(Frame::Object(open.members.len(), key));
                    state = State::Value;
                }
                Some(_) => return Err(p.fail_here(Code::KeyMustBeAString)),
            },
            State::AfterValue => {
                let Some(value) = done.take() else {
                    return Err(p.fail_here(Code::ExpectedSomeValue));
                };
                match open.frames.last_mut() {
                    None => {
                        if p.skip_whitespace().is_some() {
                            drop_deep(value);
                            return Err(p.fail_here(Code::TrailingCharacters));
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array(_)) => {
                        open.items.push(value);
                        match p.skip_whitespace() {
                            None => return Err(p.fail_here(Code::EofWhileParsingList)),
                            Some(b']') => {
                                p.at += 1;
                                done = Some(open.close_array());
                            }
                            Some(b',') => {
                                p.at += 1;
                                match p.skip_whitespace() {
                                    None => return Err(p.fail_here(Code::EofWhileParsingValue)),
                                    Some(b']') => return Err(p.fail_here(Code::TrailingComma)),
                                    Some(_) => state = State::Value,
                                }
                            }
                            Some(_) => return Err(p.fail_here(Code::ExpectedListCommaOrEnd)),
                        }
                    }
                    Some(Frame::Object(_, key)) => {
                        open.members.push((std::mem::take(key), value));
                        match p.skip_whitespace() {
                            None => return Err(p.fail_here(Code::EofWhileParsingObject)),
                            Some(b'}') => {
                                p.at += 1;
                                done = Some(open.close_object());
                            }
                            Some(b',') => {
                                p.at += 1;
                                match p.skip_whitespace() {
                                    None => return Err(p.fail_here(Code::EofWhileParsingValue)),
                                    Some(b'"') => {
                                        let next = p.string()?;
                                        colon(&mut p)?;
                                        if let Some(Frame::Object(_, key)) = open.frames.last_mut()
                                        {
                                            *key = next;
                                        }
                                        state = State::Value;
                                    }
                                    Some(b'}') => return Err(p.fail_here(Code::TrailingComma)),
                                    Some(_) => return Err(p.fail_here(Code::KeyMustBeAString)),
                                }
                            }
                            Some(_) => {
                                return Err(p.fail_here(Code::ExpectedObjectCommaOrEnd));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The `:` after an object key.
fn colon(p: &mut Parser<'_>) -> Result<(), Failure> {
    match p.skip_whitespace() {
        Some(b':') => {
            p.at += 1;
            Ok(())
        }
        Some(_) => Err(p.fail_here(Code::ExpectedColon)),
        None => Err(p.fail_here(Code::EofWhileParsingObject)),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
