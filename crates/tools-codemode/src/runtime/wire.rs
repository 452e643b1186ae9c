//! The JSON-Lines wire shared by the child-process runtimes: an iterative JSON parser for
//! frames (any depth, no recursion, integer tokens that no exact number can hold are flagged
//! instead of rounded), string quoting, and the host's `reply` frame. The Python host reads
//! its child's fd-3 lines with it; the confined QuickJS worker reads the host's stdin lines.

use serde_json::{Map, Number, Value};
use tools_json::drop_deep;

/// A parsed line.
#[derive(Debug)]
pub struct Parsed {
    /// The value; a flagged integer is `null` in it.
    pub value: Value,
    /// Whether an integer token could not be held exactly (beyond `i64`/`u64` and not an
    /// exact double), or a number overflowed to infinity.
    pub lossy_number: bool,
}

/// A container being parsed.
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, Option<String>),
}

/// Drops partial results without deep recursion.
fn abandon(stack: Vec<Open>) {
    for open in stack {
        match open {
            Open::Array(items) => drop_deep(Value::Array(items)),
            Open::Object(map, _) => drop_deep(Value::Object(map)),
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    lossy_number: bool,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.pos += 1)
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        self.text[self.pos..].starts_with(word).then(|| {
            self.pos += word.len();
            value
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + 4)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        self.pos += 4;
        Some(code)
    }

    /// A string; the cursor is on its opening quote. Lone surrogates are refused.
    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(byte) = self.peek() {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.pos += 1;
                    let escape = self.peek()?;
                    self.pos += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                self.expect(b'\\')?;
                                self.expect(b'u')?;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return None;
                                }
                                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                high
                            };
                            out.push(char::from_u32(code)?);
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }

    /// A number token, checked against the JSON grammar.
    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                }
            }
            _ => return None,
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.pos += 1;
            let digits = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == digits {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integral = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            let digits = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == digits {
                return None;
            }
        }
        let token = &self.text[start..self.pos];
        if integral {
            if token == "-0" {
                return Number::from_f64(-0.0).map(Value::Number);
            }
            if let Ok(small) = token.parse::<i64>() {
                return Some(Value::from(small));
            }
            if let Ok(large) = token.parse::<u64>() {
                return Some(Value::from(large));
            }
        }
        let double: f64 = token.parse().ok()?;
        let exact = double.is_finite()
            && (!integral || format!("{:.0}", double.abs()) == token.trim_start_matches('-'));
        if !exact {
            self.lossy_number = true;
            return Some(Value::Null);
        }
        Number::from_f64(double).map(Value::Number)
    }
}

/// Parses one line of JSON text; `None` when it is not JSON (or nests deeper than
/// `max_depth`).
pub fn parse(text: &str, max_depth: usize) -> Option<Parsed> {
    let mut cursor = Cursor {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        lossy_number: false,
    };
    let mut stack: Vec<Open> = Vec::new();
    let parsed = parse_into(&mut cursor, &mut stack, max_depth);
    match parsed {
        Some(value) => Some(Parsed {
            value,
            lossy_number: cursor.lossy_number,
        }),
        None => {
            abandon(stack);
            None
        }
    }
}

fn parse_into(cursor: &mut Cursor<'_>, stack: &mut Vec<Open>, max_depth: usize) -> Option<Value> {
    loop {
        cursor.skip_ws();
        let mut value = match cursor.peek()? {
            b'{' | b'[' if stack.len() >= max_depth => return None,
            b'{' => {
                cursor.pos += 1;
                cursor.skip_ws();
                if cursor.expect(b'}').is_some() {
                    Value::Object(Map::new())
                } else {
                    let key = cursor.string()?;
                    cursor.skip_ws();
                    cursor.expect(b':')?;
                    stack.push(Open::Object(Map::new(), Some(key)));
                    continue;
                }
            }
            b'[' => {
                cursor.pos += 1;
                cursor.skip_ws();
                if cursor.expect(b']').is_some() {
                    Value::Array(Vec::new())
                } else {
                    stack.push(Open::Array(Vec::new()));
                    continue;
                }
            }
            b'"' => Value::String(cursor.string()?),
            b't' => cursor.literal("true", Value::Bool(true))?,
            b'f' => cursor.literal("false", Value::Bool(false))?,
            b'n' => cursor.literal("null", Value::Null)?,
            _ => cursor.number()?,
        };
        loop {
            match stack.last_mut() {
                None => {
                    cursor.skip_ws();
                    if cursor.pos != cursor.bytes.len() {
                        drop_deep(value);
                        return None;
                    }
                    return Some(value);
                }
                Some(Open::Array(items)) => items.push(value),
                Some(Open::Object(map, key)) => {
                    map.insert(key.take()?, value);
                }
            }
            cursor.skip_ws();
            match (cursor.peek()?, stack.last_mut()?) {
                (b',', Open::Array(_)) => {
                    cursor.pos += 1;
                    break;
                }
                (b',', Open::Object(_, key)) => {
                    cursor.pos += 1;
                    cursor.skip_ws();
                    *key = Some(cursor.string()?);
                    cursor.skip_ws();
                    cursor.expect(b':')?;
                    break;
                }
                (b']', Open::Array(_)) | (b'}', Open::Object(..)) => {
                    cursor.pos += 1;
                    value = match stack.pop()? {
                        Open::Array(items) => Value::Array(items),
                        Open::Object(map, _) => Value::Object(map),
                    };
                }
                _ => return None,
            }
        }
    }
}

/// The JSON text of a string.
pub fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// A `reply` frame.
pub fn reply(id: &Number, result: &super::BindingOutcome) -> String {
    match result {
        Ok(value) => format!(
            "{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"value\":{}}}\n",
            tools_json::to_compact_string(value.as_value())
        ),
        Err(error) => match &error.code {
            Some(code) => format!(
                "{{\"type\":\"reply\",\"id\":{id},\"ok\":false,\"message\":{},\"code\":{}}}\n",
                quote(&error.message),
                quote(code)
            ),
            None => format!(
                "{{\"type\":\"reply\",\"id\":{id},\"ok\":false,\"message\":{}}}\n",
                quote(&error.message)
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tools_json::JsonValue;

    fn text(line: &str) -> Option<String> {
        parse(line, 100).map(|p| {
            if p.lossy_number {
                "LOSSY".to_owned()
            } else {
                tools_json::to_compact_string(&p.value)
            }
        })
    }

    #[test]
    fn parses_json() {
        assert_eq!(
            text(r#" {"a": [1, -2, 2.5, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
                .as_deref(),
            Some(r#"{"a":[1,-2,2.5,true,false,null,"x\né😀"],"b":{}}"#)
        );
        assert_eq!(text("[]").as_deref(), Some("[]"));
        assert_eq!(
            text("18446744073709551615").as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            text("-9223372036854775808").as_deref(),
            Some("-9223372036854775808")
        );
    }

    #[test]
    fn refuses_what_is_not_json() {
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "[1 2]",
            "\"\\ud800\"",
            "tru",
            "{} x",
            "\"\u{1}\"",
            "[}",
        ] {
            assert_eq!(text(bad), None, "{bad}");
        }
    }

    #[test]
    fn flags_integers_without_an_exact_number() {
        // Exact as a double: kept, as a float (the boundary keeps integers beyond u64 so).
        assert_eq!(
            text("[18446744073709551616]").as_deref(),
            Some("[1.8446744073709552e+19]")
        );
        assert_eq!(text("[18446744073709551617]").as_deref(), Some("LOSSY"));
        assert_eq!(
            text("\"18446744073709551617\"").as_deref(),
            Some("\"18446744073709551617\"")
        );
        assert_eq!(text("1e400").as_deref(), Some("LOSSY"));
        assert_eq!(text("1.5e3").as_deref(), Some("1500.0"));
    }

    #[test]
    fn negative_zero_survives_for_the_boundary_to_refuse() {
        let parsed = parse("-0", 10).map(|p| p.value);
        assert!(parsed.is_some_and(|v| JsonValue::new(v).is_err()));
    }

    #[test]
    fn deep_lines_parse_without_recursion_and_respect_the_limit() {
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        let parsed = parse(&deep, 60_000).map(|p| p.value);
        assert!(parsed.is_some_and(|v| {
            drop_deep(v);
            true
        }));
        assert!(parse(&deep, 49_999).is_none());
    }

    #[test]
    fn replies() {
        let id = Number::from(7);
        let ok = reply(&id, &Ok(JsonValue::parse("[1]").unwrap()));
        assert_eq!(
            ok,
            "{\"type\":\"reply\",\"id\":7,\"ok\":true,\"value\":[1]}\n"
        );
        let err = reply(&id, &Err("no \"x\"".into()));
        assert_eq!(
            err,
            "{\"type\":\"reply\",\"id\":7,\"ok\":false,\"message\":\"no \\\"x\\\"\"}\n"
        );
        let coded = reply(
            &id,
            &Err(crate::runtime::BindingError::with_code(
                tools_json::ErrorCode::ToolTimeout,
                "late",
            )),
        );
        assert_eq!(
            coded,
            "{\"type\":\"reply\",\"id\":7,\"ok\":false,\"message\":\"late\",\"code\":\"TOOL_TIMEOUT\"}\n"
        );
    }
}
