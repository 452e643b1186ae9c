//! A bounded, streaming scan of one JSON-RPC line: how deep it nests; at its top level, its
//! `id` and whether it is a request (`method`) or a response (`result` or `error`); and how
//! many items the array `result.content` (a tool result's content blocks) holds so far. It
//! keeps a few bytes of state whatever the line's length, so a line too long to buffer, too
//! deep to parse, or of too many content blocks to convert can still be answered by its id
//! before it is parsed.
//!
//! The scan is lexical: it tracks strings (and their escapes) and brackets, nothing else.
//! It never fails; on malformed input its findings are simply absent or partial, and the
//! caller treats a line it cannot attribute as dropped.

use rmcp::model::RequestId;

/// The longest `id` kept (a longer one is unusable, and such a line cannot be attributed).
const MAX_ID: usize = 128;
/// The longest top-level key compared (the keys of interest are shorter).
const MAX_KEY: usize = 8;

/// What the scan is looking at in the top-level object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Top {
    /// Before the line's first `{` (or the line is not an object).
    Before,
    /// Expecting a key (after `{` or `,`).
    Key,
    /// Inside a key string.
    InKey,
    /// After a key, before its `:`.
    Colon,
    /// After `:`, before the value's first byte.
    Value,
    /// Inside the value of a key.
    InValue,
    /// The top-level object closed (or was never an object).
    Done,
}

/// Which top-level key's value is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Id,
    Method,
    Result,
    Error,
    Other,
}

/// The id's value, as it is being captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IdCapture {
    None,
    String,
    Number,
}

/// The streaming scan of one line; [`Scan::reset`] before the next.
#[derive(Debug)]
pub(super) struct Scan {
    depth: usize,
    max_depth: usize,
    in_string: bool,
    escaped: bool,
    top: Top,
    key_buf: Vec<u8>,
    key_overflow: bool,
    key: Key,
    capture: IdCapture,
    id_buf: Vec<u8>,
    id_overflow: bool,
    id: Option<RequestId>,
    id_seen: bool,
    method: bool,
    response: bool,
    /// The keys of the top-level `result` object, while it is read (`Before` otherwise).
    result: Top,
    result_key_buf: Vec<u8>,
    result_key_overflow: bool,
    /// Whether the `result` key being read, or whose value is being read, is `content`.
    result_key_content: bool,
    /// Inside the array `result.content`.
    in_content: bool,
    /// Whether the next byte of `result.content` that is not whitespace starts an item.
    item_next: bool,
    content_items: usize,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            depth: 0,
            max_depth: 0,
            in_string: false,
            escaped: false,
            top: Top::Before,
            key_buf: Vec::with_capacity(MAX_KEY),
            key_overflow: false,
            key: Key::Other,
            capture: IdCapture::None,
            id_buf: Vec::with_capacity(MAX_ID),
            id_overflow: false,
            id: None,
            id_seen: false,
            method: false,
            response: false,
            result: Top::Before,
            result_key_buf: Vec::with_capacity(MAX_KEY),
            result_key_overflow: false,
            result_key_content: false,
            in_content: false,
            item_next: false,
            content_items: 0,
        }
    }
}

impl Scan {
    /// Forgets the line scanned so far.
    pub(super) fn reset(&mut self) {
        let mut key_buf = std::mem::take(&mut self.key_buf);
        let mut id_buf = std::mem::take(&mut self.id_buf);
        let mut result_key_buf = std::mem::take(&mut self.result_key_buf);
        key_buf.clear();
        id_buf.clear();
        result_key_buf.clear();
        *self = Scan {
            key_buf,
            id_buf,
            result_key_buf,
            ..Scan::default()
        };
    }

    /// How many items the array `result.content` held so far (every array of that key, if
    /// it is repeated). A key spelled with escapes is not recognized.
    pub(super) fn content_items(&self) -> usize {
        self.content_items
    }

    /// The deepest nesting seen so far (`{}` and `[]` count 1 each).
    pub(super) fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The top-level `id`, once its value has been read whole (a string or an integer).
    pub(super) fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// Whether a top-level `method` key was seen (a request or a notification).
    pub(super) fn has_method(&self) -> bool {
        self.method
    }

    /// Whether a top-level `result` or `error` key was seen (a response).
    pub(super) fn has_response(&self) -> bool {
        self.response
    }

    /// Scans `bytes`, the next part of the line (without its newline).
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            self.string_byte(b);
            return;
        }
        if self.depth == 2 || (self.in_content && self.depth == 3) {
            self.result_byte(b);
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 {
                    match self.top {
                        Top::Key => {
                            self.top = Top::InKey;
                            self.key_buf.clear();
                            self.key_overflow = false;
                        }
                        Top::Value => self.value_starts(b),
                        _ => {}
                    }
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && self.top == Top::Before {
                    self.top = if b == b'{' { Top::Key } else { Top::Done };
                } else if self.depth == 1 && self.top == Top::Value {
                    self.value_starts(b);
                }
                self.depth = self.depth.saturating_add(1);
                self.max_depth = self.max_depth.max(self.depth);
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.value_ends();
                    self.top = Top::Done;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.top == Top::Colon => self.top = Top::Value,
            b',' if self.depth == 1 && self.top == Top::InValue => {
                self.value_ends();
                self.top = Top::Key;
            }
            b' ' | b'\t' | b'\r' | b'\n' if self.depth == 1 && self.top == Top::InValue => {
                self.number_ends();
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ if self.depth == 1 => match self.top {
                Top::Value => self.value_starts(b),
                Top::InValue if self.capture == IdCapture::Number => self.push_id(b),
                _ => {}
            },
            _ => {}
        }
    }

    /// A byte outside strings directly inside the `result` object (depth 2), or directly
    /// inside `result.content` (depth 3), before it changes the depth.
    fn result_byte(&mut self, b: u8) {
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            return;
        }
        if self.depth == 3 {
            match b {
                b',' => self.item_next = true,
                b']' => self.in_content = false,
                _ if self.item_next => {
                    self.item_next = false;
                    self.content_items = self.content_items.saturating_add(1);
                }
                _ => {}
            }
            return;
        }
        match (self.result, b) {
            (Top::Before | Top::Done, _) => {}
            (_, b'}') => self.result = Top::Done,
            (Top::Key, b'"') => {
                self.result = Top::InKey;
                self.result_key_buf.clear();
                self.result_key_overflow = false;
            }
            (Top::Colon, b':') => self.result = Top::Value,
            (Top::Value, _) => {
                self.result = Top::InValue;
                if b == b'[' && self.result_key_content {
                    self.in_content = true;
                    self.item_next = true;
                }
            }
            (Top::InValue, b',') => self.result = Top::Key,
            _ => {}
        }
    }

    fn string_byte(&mut self, b: u8) {
        let top_level = self.depth == 1;
        let result_key = self.depth == 2 && self.result == Top::InKey;
        if self.escaped {
            self.escaped = false;
            if top_level {
                self.string_content(b);
            } else if result_key {
                self.result_key_content(b);
            }
            return;
        }
        match b {
            b'\\' => {
                self.escaped = true;
                if top_level {
                    self.string_content(b);
                } else if result_key {
                    self.result_key_content(b);
                }
            }
            b'"' if result_key => {
                self.in_string = false;
                self.result_key_content =
                    !self.result_key_overflow && self.result_key_buf == b"content";
                self.result = Top::Colon;
            }
            b'"' => {
                self.in_string = false;
                if top_level {
                    match self.top {
                        Top::InKey => {
                            self.key = match (self.key_overflow, self.key_buf.as_slice()) {
                                (false, b"id") => Key::Id,
                                (false, b"method") => Key::Method,
                                (false, b"result") => Key::Result,
                                (false, b"error") => Key::Error,
                                _ => Key::Other,
                            };
                            self.top = Top::Colon;
                        }
                        Top::InValue if self.capture == IdCapture::String => {
                            self.capture = IdCapture::None;
                            if !self.id_overflow && self.id.is_none() {
                                let mut quoted = Vec::with_capacity(self.id_buf.len() + 2);
                                quoted.push(b'"');
                                quoted.extend_from_slice(&self.id_buf);
                                quoted.push(b'"');
                                self.id = serde_json::from_slice::<String>(&quoted)
                                    .ok()
                                    .map(|s| RequestId::String(s.into()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ if top_level => self.string_content(b),
            _ if result_key => self.result_key_content(b),
            _ => {}
        }
    }

    /// A byte of a key of the `result` object.
    fn result_key_content(&mut self, b: u8) {
        if self.result_key_buf.len() < MAX_KEY {
            self.result_key_buf.push(b);
        } else {
            self.result_key_overflow = true;
        }
    }

    /// A byte inside a top-level string (a key, or a string value).
    fn string_content(&mut self, b: u8) {
        match self.top {
            Top::InKey => {
                if self.key_buf.len() < MAX_KEY {
                    self.key_buf.push(b);
                } else {
                    self.key_overflow = true;
                }
            }
            Top::InValue if self.capture == IdCapture::String => self.push_id(b),
            _ => {}
        }
    }

    /// The first byte of a top-level value.
    fn value_starts(&mut self, b: u8) {
        self.top = Top::InValue;
        match self.key {
            Key::Method => self.method = true,
            Key::Result => {
                self.response = true;
                if b == b'{' {
                    self.result = Top::Key;
                }
            }
            Key::Error => self.response = true,
            Key::Other => {}
            Key::Id => {
                // Only the first `id` counts; a repeated key is not attributed again.
                if self.id_seen {
                    return;
                }
                self.id_seen = true;
                self.id_buf.clear();
                self.id_overflow = false;
                match b {
                    b'"' => self.capture = IdCapture::String,
                    b'-' | b'0'..=b'9' => {
                        self.capture = IdCapture::Number;
                        self.push_id(b);
                    }
                    _ => {}
                }
            }
        }
    }

    fn push_id(&mut self, b: u8) {
        if self.id_buf.len() < MAX_ID {
            self.id_buf.push(b);
        } else {
            self.id_overflow = true;
        }
    }

    /// A top-level value ended (`,` or `}`).
    fn value_ends(&mut self) {
        self.number_ends();
        self.capture = IdCapture::None;
    }

    fn number_ends(&mut self) {
        if self.capture != IdCapture::Number {
            return;
        }
        self.capture = IdCapture::None;
        if self.id_overflow || self.id.is_some() {
            return;
        }
        self.id = std::str::from_utf8(&self.id_buf)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .map(RequestId::Number);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn scan(line: &str) -> Scan {
        let mut scan = Scan::default();
        scan.feed(line.as_bytes());
        scan
    }

    fn scan_in_pieces(line: &str, piece: usize) -> Scan {
        let mut scan = Scan::default();
        for chunk in line.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan
    }

    #[test]
    fn the_id_and_the_kind_are_found_wherever_the_keys_are() {
        let s = scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":99,"method":"x"}}"#);
        assert_eq!(s.id(), Some(&RequestId::Number(7)));
        assert!(s.has_response() && !s.has_method());
        let s = scan(r#"{"result":{"a":[1,{"id":3}]},"jsonrpc":"2.0","id":"r-\"1\""}"#);
        assert_eq!(s.id(), Some(&RequestId::String("r-\"1\"".into())));
        assert!(s.has_response());
        let s = scan(r#" { "method" : "roots/list" , "id" : -12 } "#);
        assert_eq!(s.id(), Some(&RequestId::Number(-12)));
        assert!(s.has_method() && !s.has_response());
        let s = scan(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#);
        assert_eq!(s.id(), None);
        // A string `"id"` inside a value is not the key.
        let s = scan(r#"{"error":{"message":"id"},"x":"\"id\":5"}"#);
        assert_eq!(s.id(), None);
        assert!(s.has_response());
    }

    #[test]
    fn ids_that_cannot_be_attributed_are_absent() {
        for line in [
            r#"{"id":null,"result":{}}"#,
            r#"{"id":1.5,"result":{}}"#,
            r#"{"id":{"n":1},"result":{}}"#,
            r#"[{"id":1,"result":{}}]"#,
            r#"{"id":99999999999999999999999,"result":{}}"#,
            "not json",
        ] {
            assert_eq!(scan(line).id(), None, "{line}");
        }
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(MAX_ID + 1));
        assert_eq!(scan(&long).id(), None);
    }

    #[test]
    fn the_first_id_wins() {
        let s = scan(r#"{"id":1,"id":2,"result":{}}"#);
        assert_eq!(s.id(), Some(&RequestId::Number(1)));
    }

    #[test]
    fn depth_counts_nested_containers_outside_strings() {
        assert_eq!(scan(r#"{"a":"[[[[{{{{"}"#).max_depth(), 1);
        assert_eq!(scan(r#"{"a":[[[]],{"b":{}}]}"#).max_depth(), 4);
        let deep = format!(
            r#"{{"id":3,"result":{}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let s = scan(&deep);
        assert_eq!(s.max_depth(), 501);
        assert_eq!(s.id(), Some(&RequestId::Number(3)));
    }

    #[test]
    fn a_line_fed_in_pieces_scans_like_the_whole() {
        let line = r#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a\"b"}]},"id":"abc\\u0041"}"#;
        for piece in 1..8 {
            let s = scan_in_pieces(line, piece);
            assert_eq!(s.id(), Some(&RequestId::String("abc\\u0041".into())));
            assert!(s.has_response());
            assert_eq!(s.max_depth(), 4);
        }
        let number = r#"{"result":{},"id":1234}"#;
        for piece in 1..5 {
            assert_eq!(
                scan_in_pieces(number, piece).id(),
                Some(&RequestId::Number(1234))
            );
        }
    }

    #[test]
    fn the_items_of_result_content_are_counted() {
        for (line, items) in [
            (r#"{"id":1,"result":{"content":[]}}"#, 0),
            (r#"{"id":1,"result":{"content":[ ]}}"#, 0),
            (
                r#"{"id":1,"result":{"content":[{"type":"text","text":"a,b]"},{"t":[1,2,{}]}]}}"#,
                2,
            ),
            (
                r#"{"result" : { "x" : [1,2] , "content" : [ 1 , "a" , [3,4] , {} ] } }"#,
                4,
            ),
            // Other arrays, deeper `content` keys, other top-level keys: not counted.
            (
                r#"{"result":{"structuredContent":{"content":[1,2,3]},"x":{"content":[1]}}}"#,
                0,
            ),
            (r#"{"params":{"content":[1,2]},"error":{"content":[1]}}"#, 0),
            (r#"{"result":[{"content":[1,2]}]}"#, 0),
            (r#"{"result":{"contents":[1,2],"conten":[1]}}"#, 0),
            (r#"{"result":{"x":""content":[1,2]"}}"#, 0),
            // A repeated key counts every array.
            (r#"{"result":{"content":[1],"content":[2,3]}}"#, 3),
        ] {
            assert_eq!(scan(line).content_items(), items, "{line}");
            for piece in 1..6 {
                assert_eq!(
                    scan_in_pieces(line, piece).content_items(),
                    items,
                    "{line} in pieces of {piece}"
                );
            }
        }
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":5,"result":{{"content":[{}],"isError":false}}}}"#,
            vec![r#"{"type":"text","text":"x"}"#; 1000].join(",")
        );
        let s = scan(&many);
        assert_eq!(s.content_items(), 1000);
        assert_eq!(s.id(), Some(&RequestId::Number(5)));
    }

    #[test]
    fn reset_forgets_the_line() {
        let mut s = scan(r#"{"id":1,"result":[[["#);
        s.reset();
        s.feed(br#"{"method":"x"}"#);
        assert_eq!(s.id(), None);
        assert!(s.has_method() && !s.has_response());
        assert_eq!(s.max_depth(), 1);
        let mut s = scan(r#"{"id":1,"result":{"content":[1,2,"#);
        s.reset();
        s.feed(br#"{"id":2,"result":{"content":[1]}}"#);
        assert_eq!(s.content_items(), 1);
    }
}
