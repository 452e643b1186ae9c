//! What the index reads of one tool: its terms for BM25 and its text for regex mode.
//!
//! Parameter schemas come from anywhere (an MCP server's, a model-written one) and may be
//! deep, wide or hostile: they are walked breadth-first with an explicit queue, to a
//! bounded depth and a bounded number of schema nodes, never by recursion.

use std::collections::VecDeque;

use serde_json::Value;

use crate::Entry;
use crate::analyze::{compound, split_words};

/// How many times each word of a tool's name counts, against once for every other word: a
/// query word found in the name weighs more than the same word in a description. BM25
/// saturates repeated terms (k1 = 1.2), so three occurrences weigh about 1.6 times one.
pub(crate) const NAME_REPEAT: usize = 3;

/// The deepest schema level whose property names and descriptions are read (the
/// parameters object is level 0, its properties level 1).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 8;

/// The most property names, descriptions and subschemas read from one tool's parameters.
pub(crate) const MAX_SCHEMA_ITEMS: usize = 1024;

/// The most terms indexed for one tool (the name's come first, then the namespace's, the
/// description's and the parameters'): a huge description does not make a huge posting.
pub(crate) const MAX_TERMS: usize = 4096;

/// The most bytes of one tool's text (namespace, description, parameter names and
/// descriptions, one per line) kept for regex mode; the name is always kept whole.
pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024;

/// One piece of a parameter schema's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamText<'a> {
    /// A property name.
    Name(&'a str),
    /// A `description` string.
    Description(&'a str),
}

/// Calls `f` with the property names and descriptions of a parameter schema, breadth-first
/// (shallow ones first), through `properties`, `items` (a schema or a list of schemas),
/// `additionalProperties`, `anyOf`, `oneOf` and `allOf`, down to [`MAX_SCHEMA_DEPTH`] and
/// for at most [`MAX_SCHEMA_ITEMS`] names, descriptions and subschemas in all.
pub(crate) fn parameter_text<'a>(parameters: &'a Value, mut f: impl FnMut(ParamText<'a>)) {
    let mut budget = MAX_SCHEMA_ITEMS;
    let mut queue: VecDeque<(&'a Value, usize)> = VecDeque::new();
    queue.push_back((parameters, 0));
    while let Some((node, depth)) = queue.pop_front() {
        let Value::Object(schema) = node else {
            continue;
        };
        let mut take = || {
            let ok = budget > 0;
            budget = budget.saturating_sub(1);
            ok
        };
        let deeper = depth < MAX_SCHEMA_DEPTH;
        let child = depth.saturating_add(1);
        // One pass over the keys, in the schema's own order (no lookup per keyword).
        for (key, value) in schema {
            match (key.as_str(), value) {
                ("description", Value::String(description)) => {
                    if !take() {
                        return;
                    }
                    f(ParamText::Description(description));
                }
                ("properties", Value::Object(properties)) => {
                    for (name, sub) in properties {
                        if !take() {
                            return;
                        }
                        f(ParamText::Name(name));
                        if deeper {
                            if !take() {
                                return;
                            }
                            queue.push_back((sub, child));
                        }
                    }
                }
                ("items" | "additionalProperties", Value::Object(_)) if deeper => {
                    if !take() {
                        return;
                    }
                    queue.push_back((value, child));
                }
                ("items" | "anyOf" | "oneOf" | "allOf", Value::Array(list)) if deeper => {
                    for sub in list {
                        if !take() {
                            return;
                        }
                        queue.push_back((sub, child));
                    }
                }
                _ => {}
            }
        }
    }
}

/// One piece of a tool's indexed text, in the order [`tool_terms`] gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A word (see [`split_words`](crate::analyze::split_words)), counted `repeat` times.
    Word(&'a str, usize),
    /// A whole lowercased identifier (see [`compound`]), counted once.
    Whole(String),
}

/// The pieces of one tool's indexed text, in field order: the name's words [`NAME_REPEAT`]
/// times each and the whole lowercased name once (each white-space-separated chunk of it,
/// as a query is cut), the namespace's words and whole namespace once, then the
/// description, the parameter names and the parameter descriptions. The caller stops
/// taking terms at [`MAX_TERMS`].
pub(crate) fn tool_terms<'a>(entry: &Entry<'a>, mut piece: impl FnMut(Piece<'a>)) {
    words(entry.name, NAME_REPEAT, &mut piece);
    for whole in entry.name.split_whitespace().filter_map(compound) {
        piece(Piece::Whole(whole));
    }
    if let Some(namespace) = entry.namespace {
        words(namespace, 1, &mut piece);
        for whole in namespace.split_whitespace().filter_map(compound) {
            piece(Piece::Whole(whole));
        }
    }
    words(entry.description, 1, &mut piece);
    parameter_text(entry.parameters, |param| match param {
        ParamText::Name(text) | ParamText::Description(text) => words(text, 1, &mut piece),
    });
}

fn words<'a>(text: &'a str, repeat: usize, piece: &mut impl FnMut(Piece<'a>)) {
    split_words(text, |word| piece(Piece::Word(word, repeat)));
}

/// Appends the regex text of one tool other than its name to `out`: the namespace, the
/// description, then each parameter name and description, one per line; at most
/// [`MAX_TEXT_BYTES`] bytes (cut at a character boundary).
pub(crate) fn tool_text(entry: &Entry<'_>, out: &mut String) {
    let start = out.len();
    let limit = start.saturating_add(MAX_TEXT_BYTES);
    let push = |piece: &str, out: &mut String| {
        if out.len() >= limit {
            return;
        }
        if out.len() > start {
            out.push('\n');
        }
        let room = limit.saturating_sub(out.len());
        out.push_str(prefix_within(piece, room));
    };
    if let Some(namespace) = entry.namespace {
        push(namespace, out);
    }
    push(entry.description, out);
    parameter_text(entry.parameters, |piece| match piece {
        ParamText::Name(text) | ParamText::Description(text) => push(text, out),
    });
}

/// The longest prefix of `text` of at most `bytes` bytes that ends at a character boundary.
fn prefix_within(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pieces(parameters: &Value) -> Vec<ParamText<'_>> {
        let mut out = Vec::new();
        parameter_text(parameters, |p| out.push(p));
        out
    }

    #[test]
    fn parameters_are_read_breadth_first_through_nested_schemas() {
        let schema = json!({
            "type": "object",
            "description": "Options.",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"hour": {"description": "Hour."}}}
                },
                "unit": {"anyOf": [{"description": "Celsius."}, {"description": "Fahrenheit."}]}
            }
        });
        assert_eq!(
            pieces(&schema),
            [
                ParamText::Description("Options."),
                ParamText::Name("city"),
                ParamText::Name("days"),
                ParamText::Name("unit"),
                ParamText::Description("The city."),
                ParamText::Name("hour"),
                ParamText::Description("Celsius."),
                ParamText::Description("Fahrenheit."),
                ParamText::Description("Hour."),
            ]
        );
    }

    #[test]
    fn deep_schemas_are_cut_at_the_depth_limit() {
        // Nested by hand: `json!` would serialise (and recurse into) the inner value.
        let nest = |name: String, inner: Value| {
            let mut properties = serde_json::Map::new();
            properties.insert(name, inner);
            let mut schema = serde_json::Map::new();
            schema.insert("properties".to_owned(), Value::Object(properties));
            Value::Object(schema)
        };
        let mut schema = json!({"description": "bottom"});
        for level in 0..10_000 {
            schema = nest(format!("p{level}"), schema);
        }
        let names = pieces(&schema);
        assert_eq!(names.len(), MAX_SCHEMA_DEPTH + 1);
        assert_eq!(names.first(), Some(&ParamText::Name("p9999")));
        // serde_json drops deep values recursively; hand it over in pieces.
        let mut stack = vec![schema];
        while let Some(mut value) = stack.pop() {
            if let Some(Value::Object(props)) = value.get_mut("properties") {
                stack.extend(std::mem::take(props).into_iter().map(|(_, v)| v));
            }
        }
    }

    #[test]
    fn wide_schemas_are_cut_at_the_item_budget() {
        let properties: serde_json::Map<String, Value> = (0..5_000)
            .map(|i| (format!("p{i}"), json!({"description": "d"})))
            .collect();
        let schema = json!({"properties": properties});
        // Each property costs a name and a subschema; what was read stays within budget.
        let read = pieces(&schema);
        assert!(read.len() <= MAX_SCHEMA_ITEMS, "{}", read.len());
        assert!(read.len() >= MAX_SCHEMA_ITEMS / 3, "{}", read.len());
        assert_eq!(read.first(), Some(&ParamText::Name("p0")));
    }

    #[test]
    fn the_text_is_capped_at_a_character_boundary() {
        let long = "é".repeat(MAX_TEXT_BYTES);
        let params = json!({});
        let entry = Entry {
            name: "n",
            namespace: Some("ns"),
            description: &long,
            parameters: &params,
        };
        let mut text = String::new();
        tool_text(&entry, &mut text);
        assert!(text.len() <= MAX_TEXT_BYTES);
        assert!(text.starts_with("ns\né"));
        assert_eq!(prefix_within("aé", 2), "a");
    }

    #[test]
    fn pieces_weigh_the_name_and_keep_field_order() {
        let params = json!({"properties": {"cityName": {"description": "Which city"}}});
        let entry = Entry {
            name: "get_weather",
            namespace: Some("wx"),
            description: "Current weather",
            parameters: &params,
        };
        let mut out = Vec::new();
        tool_terms(&entry, |p| out.push(p));
        let whole = |s: &str| Piece::Whole(s.to_owned());
        assert_eq!(
            out,
            [
                Piece::Word("get", NAME_REPEAT),
                Piece::Word("weather", NAME_REPEAT),
                whole("get_weather"),
                Piece::Word("wx", 1),
                Piece::Word("Current", 1),
                Piece::Word("weather", 1),
                Piece::Word("city", 1),
                Piece::Word("Name", 1),
                Piece::Word("Which", 1),
                Piece::Word("city", 1),
            ]
        );
    }
}
