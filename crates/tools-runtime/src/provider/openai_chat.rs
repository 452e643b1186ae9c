//! The OpenAI Chat Completions wire: `tools[].function`, the message's `tool_calls`, and
//! `role: tool` messages (then a `user` message with the images, which a `tool` message
//! cannot carry, and the step's contexts).

use serde_json::{Value, json};
use tools_pipeline::ToolResult;

use super::parse::{self, NULL};
use super::render::{self, Part};
use super::strict::Dialect;
use super::{Declarations, ModelCall, Wire};
use crate::Error;

/// OpenAI Chat Completions.
pub(super) struct OpenAiChat;

impl Wire for OpenAiChat {
    const STRICT: Dialect = Dialect::OPENAI;

    fn tool(name: &str, description: &str, schema: Value, strict: Option<bool>) -> Value {
        let mut out = json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        });
        super::add_strict(out["function"].as_object_mut(), strict);
        out
    }

    fn calls(
        response: parse::Part<'_>,
        declarations: Option<&Declarations>,
        bad: impl Fn(String) -> Error,
    ) -> Result<Vec<ModelCall>, Error> {
        let mut out = Vec::new();
        let mut message = parse::pointer_or_self(response, "/choices/0/message");
        let calls = match parse::take(&mut message, "tool_calls") {
            None => return Ok(out),
            Some(calls) if calls.is_null() => return Ok(out),
            Some(calls) => {
                parse::items(calls).ok_or_else(|| bad("`tool_calls` is not a list".into()))?
            }
        };
        for (i, mut call) in calls.enumerate() {
            let call_id = parse::take_text(&mut call, "id")
                .ok_or_else(|| bad(format!("tool_calls[{i}] has no `id`")))?;
            let mut function = parse::take(&mut call, "function").unwrap_or(NULL);
            let name = parse::take_text(&mut function, "name")
                .ok_or_else(|| bad(format!("tool_calls[{i}] has no `function.name`")))?;
            let arguments = parse::take(&mut function, "arguments").unwrap_or(NULL);
            out.push(parse::from_text(call_id, name, arguments, declarations));
        }
        Ok(out)
    }

    fn messages(calls: &[ModelCall], results: &[ToolResult]) -> Vec<Value> {
        let contexts = render::contexts(results);
        // A `tool` message carries text only: images follow in the closing user message.
        let mut trailing: Vec<Value> = Vec::new();
        let mut out: Vec<Value> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let parts = render::parts(result.content());
                let images: Vec<Value> = parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Image { media_type, data } => Some(json!({
                            "type": "image_url",
                            "image_url": {"url": render::data_url(media_type, data)}
                        })),
                        Part::Text(_) => None,
                    })
                    .collect();
                if !images.is_empty() {
                    trailing.push(json!({
                        "type": "text",
                        "text": format!("Images from tool call {}:", call.call_id)
                    }));
                    trailing.extend(images);
                }
                json!({"role": "tool", "tool_call_id": call.call_id, "content": render::text_of(&parts)})
            })
            .collect();
        trailing.extend(contexts.iter().map(part));
        if !trailing.is_empty() {
            out.push(json!({"role": "user", "content": trailing}));
        }
        out
    }
}

/// A part as a Chat Completions user content part.
fn part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => {
            json!({"type": "image_url", "image_url": {"url": render::data_url(media_type, data)}})
        }
    }
}
