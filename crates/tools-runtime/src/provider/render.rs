//! Results as each wire's result messages: one per call in the model's order, then the
//! step's contexts (and images where a tool result cannot carry them).

use std::borrow::Cow;

use serde_json::{Value, json};
use tools_pipeline::ToolResult;
use tools_presentation::ContentBlock;

use super::{ModelCall, Provider};

/// One piece of a result or context, as the wires see it, borrowed from the result: a
/// tool's text and an image's data are copied once, into the message that carries them.
enum Part<'a> {
    Text(Cow<'a, str>),
    Image { media_type: &'a str, data: &'a str },
}

fn parts(blocks: &[ContentBlock]) -> Vec<Part<'_>> {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Other(other) if other.block_type() == "image" => {
                let object = other.as_object();
                let field = |k: &str| object.get(k).and_then(Value::as_str);
                match (field("mimeType"), field("data")) {
                    (Some(media_type), Some(data)) => Part::Image { media_type, data },
                    _ => Part::Text(Cow::Owned(
                        serde_json::to_string(object).unwrap_or_default(),
                    )),
                }
            }
            ContentBlock::Other(other) => Part::Text(Cow::Owned(
                serde_json::to_string(other.as_object()).unwrap_or_default(),
            )),
            other => Part::Text(other.as_text().map_or_else(
                || Cow::Owned(serde_json::to_string(other).unwrap_or_default()),
                Cow::Borrowed,
            )),
        })
        .collect()
}

/// The text parts, joined by newlines.
fn text_of(parts: &[Part<'_>]) -> String {
    let len = parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => text.len() + 1,
            Part::Image { .. } => 0,
        })
        .sum();
    let mut out = String::with_capacity(len);
    for part in parts {
        if let Part::Text(text) = part {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

pub(super) fn messages(
    provider: Provider,
    calls: &[ModelCall],
    results: &[ToolResult],
) -> Vec<Value> {
    let pairs = calls.iter().zip(results);
    let contexts: Vec<Part<'_>> = results
        .iter()
        .flat_map(|r| r.contexts().iter().flat_map(|c| parts(&c.content)))
        .collect();
    match provider {
        Provider::OpenAiResponses => {
            let mut out: Vec<Value> = pairs
                .map(|(call, result)| {
                    let parts = parts(result.content());
                    let has_image = parts.iter().any(|p| matches!(p, Part::Image { .. }));
                    let output = if has_image {
                        Value::Array(parts.iter().map(responses_part).collect())
                    } else {
                        Value::String(text_of(&parts))
                    };
                    json!({"type": "function_call_output", "call_id": call.call_id, "output": output})
                })
                .collect();
            if !contexts.is_empty() {
                out.push(json!({
                    "type": "message",
                    "role": "user",
                    "content": contexts.iter().map(responses_part).collect::<Vec<_>>(),
                }));
            }
            out
        }
        Provider::OpenAiChat => {
            // A `tool` message carries text only: images follow in the closing user message.
            let mut trailing: Vec<Value> = Vec::new();
            let mut out: Vec<Value> = pairs
                .map(|(call, result)| {
                    let parts = parts(result.content());
                    let images: Vec<Value> = parts
                        .iter()
                        .filter_map(|p| match p {
                            Part::Image { media_type, data } => Some(json!({
                                "type": "image_url",
                                "image_url": {"url": data_url(media_type, data)}
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
                    json!({"role": "tool", "tool_call_id": call.call_id, "content": text_of(&parts)})
                })
                .collect();
            trailing.extend(contexts.iter().map(chat_part));
            if !trailing.is_empty() {
                out.push(json!({"role": "user", "content": trailing}));
            }
            out
        }
        Provider::Anthropic => {
            if calls.is_empty() {
                return Vec::new();
            }
            let mut content: Vec<Value> = pairs
                .map(|(call, result)| {
                    let parts = parts(result.content());
                    json!({
                        "type": "tool_result",
                        "tool_use_id": call.call_id,
                        "content": parts.iter().map(anthropic_part).collect::<Vec<_>>(),
                        "is_error": result.is_error(),
                    })
                })
                .collect();
            // Tool results first, then everything else of the step (the API's rule).
            content.extend(contexts.iter().map(anthropic_part));
            vec![json!({"role": "user", "content": content})]
        }
    }
}

fn responses_part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "input_text", "text": text}),
        Part::Image { media_type, data } => {
            json!({"type": "input_image", "image_url": data_url(media_type, data), "detail": "auto"})
        }
    }
}

fn chat_part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => {
            json!({"type": "image_url", "image_url": {"url": data_url(media_type, data)}})
        }
    }
}

fn anthropic_part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data}
        }),
    }
}
