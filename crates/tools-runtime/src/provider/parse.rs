//! A model response's tool calls: what every wire's walk shares. Each wire walks its own
//! shape (`Wire::calls`, in the wire's file) with the helpers here,
//! and makes each call with [`from_text`] (arguments as JSON text) or [`from_value`]
//! (arguments as a JSON value).
//!
//! One walk serves a borrowed response and an owned one: each part of the response is a
//! `Cow`, so that what the calls keep (ids, names, arguments) is copied out of a borrowed
//! response and moved out of an owned one. For Anthropic, whose arguments are JSON values,
//! that is a deep copy per call saved.

use std::borrow::Cow;

use serde_json::Value;
use tools_json::{ErrorCode, JsonValue, Limits};
use tools_pipeline::{ToolCall, ToolResult};

use super::{Declarations, ModelCall};

/// How much of arguments that cannot be read is quoted back to the model.
const EXCERPT: usize = 200;

/// A part of the response: borrowed from the caller's, or taken out of an owned one.
pub(super) type Part<'a> = Cow<'a, Value>;

/// A missing member, read as `null`.
pub(super) const NULL: Part<'static> = Cow::Borrowed(&Value::Null);

/// The value at the JSON pointer `pointer` in `part` when there is one (taken out of an
/// owned part), else `part` itself.
pub(super) fn pointer_or_self<'a>(part: Part<'a>, pointer: &str) -> Part<'a> {
    match part {
        Cow::Borrowed(value) => Cow::Borrowed(value.pointer(pointer).unwrap_or(value)),
        Cow::Owned(mut value) => match value.pointer_mut(pointer) {
            Some(found) => Cow::Owned(found.take()),
            None => Cow::Owned(value),
        },
    }
}

/// The member `key` of `part` (taken out of an owned part); a missing member is read as
/// `null` by the callers (`NULL`).
pub(super) fn take<'a>(part: &mut Part<'a>, key: &str) -> Option<Part<'a>> {
    match part {
        Cow::Borrowed(value) => {
            let value: &'a Value = value;
            value.get(key).map(Cow::Borrowed)
        }
        Cow::Owned(value) => value.get_mut(key).map(|member| Cow::Owned(member.take())),
    }
}

/// The string member `key` of `part`.
pub(super) fn take_text(part: &mut Part<'_>, key: &str) -> Option<String> {
    match take(part, key)? {
        Cow::Borrowed(Value::String(text)) => Some(text.clone()),
        Cow::Owned(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// The elements of a list part, or `None` when it is not a list.
pub(super) fn items(part: Part<'_>) -> Option<Items<'_>> {
    match part {
        Cow::Borrowed(Value::Array(list)) => Some(Items::Borrowed(list.iter())),
        Cow::Owned(Value::Array(list)) => Some(Items::Owned(list.into_iter())),
        _ => None,
    }
}

/// The elements of a list part, each a part.
pub(super) enum Items<'a> {
    Borrowed(std::slice::Iter<'a, Value>),
    Owned(std::vec::IntoIter<Value>),
}

impl<'a> Iterator for Items<'a> {
    type Item = Part<'a>;

    fn next(&mut self) -> Option<Part<'a>> {
        match self {
            Items::Borrowed(list) => list.next().map(Cow::Borrowed),
            Items::Owned(list) => list.next().map(Cow::Owned),
        }
    }
}

/// A call's arguments once read: the lossless snapshot the wire's text was parsed into
/// (handed to the pipeline as it is: no second copy and no second check), or a value the
/// pipeline takes across the lossless boundary itself.
enum Arguments {
    Snapshot(JsonValue),
    Wire(Value),
}

/// Where a wire lists its calls: a list of typed items, the calls being those of one type.
pub(super) struct CallItems {
    /// The JSON pointer of the list (or the response itself when it is the list).
    pub(super) list: &'static str,
    /// The list's name in messages (`output`, `content`).
    pub(super) name: &'static str,
    /// What the list holds, for the message when it is missing (`a list of items`).
    pub(super) holds: &'static str,
    /// The `type` of the items that are calls.
    pub(super) kind: &'static str,
    /// The member holding the call's id.
    pub(super) id: &'static str,
    /// The member holding the arguments.
    pub(super) arguments: &'static str,
}

/// The calls among the typed items of `response` described by `items`, each made by
/// `make` ([`from_text`] or [`from_value`]) from its id, name and arguments.
pub(super) fn typed_calls(
    response: Part<'_>,
    items: &CallItems,
    make: fn(String, String, Part<'_>, Option<&Declarations>) -> ModelCall,
    declarations: Option<&Declarations>,
    bad: impl Fn(String) -> crate::Error,
) -> Result<Vec<ModelCall>, crate::Error> {
    let name = items.name;
    let list = self::items(pointer_or_self(response, items.list))
        .ok_or_else(|| bad(format!("expected `{name}`, {}", items.holds)))?;
    let mut out = Vec::new();
    for (i, mut item) in list.enumerate() {
        if item.get("type").and_then(Value::as_str) != Some(items.kind) {
            continue;
        }
        let call_id = take_text(&mut item, items.id)
            .ok_or_else(|| bad(format!("{name}[{i}] has no `{}`", items.id)))?;
        let tool = take_text(&mut item, "name")
            .ok_or_else(|| bad(format!("{name}[{i}] has no `name`")))?;
        let arguments = take(&mut item, items.arguments).unwrap_or(NULL);
        out.push(make(call_id, tool, arguments, declarations));
    }
    Ok(out)
}

/// A call whose arguments are JSON text (OpenAI).
pub(super) fn from_text(
    call_id: String,
    name: String,
    arguments: Part<'_>,
    declarations: Option<&Declarations>,
) -> ModelCall {
    let parsed = match &*arguments {
        // An empty string is how some models send "no arguments".
        Value::String(text) if text.trim().is_empty() => {
            Ok(Arguments::Wire(Value::Object(serde_json::Map::new())))
        }
        Value::String(text) => JsonValue::parse(text)
            .map(Arguments::Snapshot)
            .map_err(|e| invalid(&name, &format!("{e}"), text)),
        // Some gateways send the object itself.
        Value::Object(_) => Ok(Arguments::Wire(arguments.into_owned())),
        other => Err(invalid(
            &name,
            "arguments must be a JSON object",
            &tools_json::to_compact_string(other),
        )),
    };
    finish(call_id, name, parsed, declarations)
}

/// A call whose arguments are a JSON value already (Anthropic): moved out of an owned
/// response (copied out of a borrowed one) and checked once.
pub(super) fn from_value(
    call_id: String,
    name: String,
    input: Part<'_>,
    declarations: Option<&Declarations>,
) -> ModelCall {
    let checked =
        match JsonValue::try_with_limits_at(input.into_owned(), &Limits::default(), "value") {
            Ok(args) => Ok(Arguments::Snapshot(args)),
            Err((error, refused)) => {
                let text = tools_json::to_compact_string(&refused);
                tools_json::drop_deep(refused);
                Err(invalid(&name, &format!("{error}"), &text))
            }
        };
    finish(call_id, name, checked, declarations)
}

fn finish(
    call_id: String,
    name: String,
    arguments: Result<Arguments, ToolResult>,
    declarations: Option<&Declarations>,
) -> ModelCall {
    // A wire name made for a tool whose own name the wires refuse is a call to that tool.
    let tool = declarations.map_or(name.as_str(), |d| d.tool_name(&name));
    let strict = declarations.and_then(|d| d.strict_form(tool));
    let call = arguments.and_then(|arguments| {
        let call = match (arguments, strict) {
            (Arguments::Snapshot(args), None) => ToolCall::from_json(call_id.as_str(), tool, args),
            // Decoded under a strict schema: mapped back in place (the snapshot is not
            // shared yet, so taking its value copies nothing). Removing `null` members
            // leaves a lossless, canonical value lossless, canonical and no deeper, so
            // taking it across the boundary again cannot fail.
            (Arguments::Snapshot(args), Some(strict)) => {
                let mut args = args.into_value();
                strict.restore(&mut args);
                match JsonValue::with_limits_at(args, &Limits::default(), "arguments") {
                    Ok(args) => ToolCall::from_json(call_id.as_str(), tool, args),
                    Err(e) => return Err(invalid(&name, &format!("{e}"), "")),
                }
            }
            (Arguments::Wire(mut args), strict) => {
                if let Some(strict) = strict {
                    strict.restore(&mut args);
                }
                ToolCall::new(call_id.as_str(), tool, args)
            }
        };
        call.map_err(|_| {
            ToolResult::coded(ErrorCode::UnknownTool, "the tool call has an empty name")
        })
    });
    ModelCall {
        call_id,
        name,
        call,
    }
}

/// The `INVALID_ARGS` result of arguments that cannot be read: why, and the start of the
/// text (at most [`EXCERPT`] characters, cut on a character boundary).
fn invalid(tool: &str, why: &str, text: &str) -> ToolResult {
    let cut = text
        .char_indices()
        .nth(EXCERPT)
        .map_or(text.len(), |(i, _)| i);
    let more = if cut < text.len() {
        format!("… ({} more bytes)", text.len() - cut)
    } else {
        String::new()
    };
    ToolResult::coded(
        ErrorCode::InvalidArgs,
        format!(
            "invalid arguments for tool {tool:?}: {why}; received: {}{more}",
            &text[..cut]
        ),
    )
}
