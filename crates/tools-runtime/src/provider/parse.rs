//! A model response's tool calls, per wire.

use serde_json::Value;
use tools_json::{ErrorCode, JsonValue, Limits};
use tools_pipeline::{ToolCall, ToolResult};

use super::{Declarations, ModelCall, Provider};
use crate::Error;

/// How much of arguments that cannot be read is quoted back to the model.
const EXCERPT: usize = 200;

pub(super) fn calls(
    provider: Provider,
    response: &Value,
    declarations: Option<&Declarations>,
) -> Result<Vec<ModelCall>, Error> {
    let bad = |message: String| Error::ProviderResponse { provider, message };
    let mut out = Vec::new();
    match provider {
        Provider::OpenAiResponses => {
            let items = response
                .get("output")
                .unwrap_or(response)
                .as_array()
                .ok_or_else(|| bad("expected `output`, a list of items".into()))?;
            for (i, item) in items.iter().enumerate() {
                if item.get("type").and_then(Value::as_str) != Some("function_call") {
                    continue;
                }
                let call_id = text(item, "call_id")
                    .ok_or_else(|| bad(format!("output[{i}] has no `call_id`")))?;
                let name =
                    text(item, "name").ok_or_else(|| bad(format!("output[{i}] has no `name`")))?;
                let arguments = item.get("arguments").unwrap_or(&Value::Null);
                out.push(from_text(call_id, name, arguments, declarations));
            }
        }
        Provider::OpenAiChat => {
            let message = response.pointer("/choices/0/message").unwrap_or(response);
            let calls = match message.get("tool_calls") {
                None | Some(Value::Null) => return Ok(out),
                Some(Value::Array(calls)) => calls,
                Some(_) => return Err(bad("`tool_calls` is not a list".into())),
            };
            for (i, call) in calls.iter().enumerate() {
                let call_id =
                    text(call, "id").ok_or_else(|| bad(format!("tool_calls[{i}] has no `id`")))?;
                let function = call.get("function").unwrap_or(&Value::Null);
                let name = text(function, "name")
                    .ok_or_else(|| bad(format!("tool_calls[{i}] has no `function.name`")))?;
                let arguments = function.get("arguments").unwrap_or(&Value::Null);
                out.push(from_text(call_id, name, arguments, declarations));
            }
        }
        Provider::Anthropic => {
            let blocks = response
                .get("content")
                .unwrap_or(response)
                .as_array()
                .ok_or_else(|| bad("expected `content`, a list of blocks".into()))?;
            for (i, block) in blocks.iter().enumerate() {
                if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                    continue;
                }
                let call_id =
                    text(block, "id").ok_or_else(|| bad(format!("content[{i}] has no `id`")))?;
                let name = text(block, "name")
                    .ok_or_else(|| bad(format!("content[{i}] has no `name`")))?;
                let input = block.get("input").unwrap_or(&Value::Null);
                out.push(from_value(call_id, name, input, declarations));
            }
        }
    }
    Ok(out)
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A call's arguments once read: the lossless snapshot the wire's text was parsed into
/// (handed to the pipeline as it is: no second copy and no second check), or a value the
/// pipeline takes across the lossless boundary itself.
enum Arguments {
    Snapshot(JsonValue),
    Wire(Value),
}

/// A call whose arguments are JSON text (OpenAI).
fn from_text(
    call_id: String,
    name: String,
    arguments: &Value,
    declarations: Option<&Declarations>,
) -> ModelCall {
    let parsed = match arguments {
        // An empty string is how some models send "no arguments".
        Value::String(text) if text.trim().is_empty() => {
            Ok(Arguments::Wire(Value::Object(serde_json::Map::new())))
        }
        Value::String(text) => JsonValue::parse(text)
            .map(Arguments::Snapshot)
            .map_err(|e| invalid(&name, &format!("{e}"), text)),
        // Some gateways send the object itself.
        Value::Object(_) => Ok(Arguments::Wire(arguments.clone())),
        other => Err(invalid(
            &name,
            "arguments must be a JSON object",
            &other.to_string(),
        )),
    };
    finish(call_id, name, parsed, declarations)
}

/// A call whose arguments are a JSON value already (Anthropic): copied out of the
/// response once and checked once.
fn from_value(
    call_id: String,
    name: String,
    input: &Value,
    declarations: Option<&Declarations>,
) -> ModelCall {
    let checked = JsonValue::new(input.clone())
        .map(Arguments::Snapshot)
        .map_err(|e| invalid(&name, &format!("{e}"), &input.to_string()));
    finish(call_id, name, checked, declarations)
}

fn finish(
    call_id: String,
    name: String,
    arguments: Result<Arguments, ToolResult>,
    declarations: Option<&Declarations>,
) -> ModelCall {
    let strict = declarations.and_then(|d| d.strict_form(&name));
    let call = arguments.and_then(|arguments| {
        let call = match (arguments, strict) {
            (Arguments::Snapshot(args), None) => ToolCall::from_json(call_id.as_str(), &name, args),
            // Decoded under a strict schema: mapped back in place (the snapshot is not
            // shared yet, so taking its value copies nothing). Removing `null` members
            // leaves a lossless, canonical value lossless, canonical and no deeper, so
            // taking it across the boundary again cannot fail.
            (Arguments::Snapshot(args), Some(strict)) => {
                let mut args = args.into_value();
                strict.restore(&mut args);
                match JsonValue::with_limits_at(args, &Limits::default(), "arguments") {
                    Ok(args) => ToolCall::from_json(call_id.as_str(), &name, args),
                    Err(e) => return Err(invalid(&name, &format!("{e}"), "")),
                }
            }
            (Arguments::Wire(mut args), strict) => {
                if let Some(strict) = strict {
                    strict.restore(&mut args);
                }
                ToolCall::new(call_id.as_str(), &name, args)
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
