//! The OpenAI Responses wire: `function` tools, `function_call` items in `output`, and
//! `function_call_output` items (then a `user` message with the step's contexts).

use serde_json::{Value, json};
use tools_pipeline::ToolResult;

use super::parse::{self, NULL};
use super::render::{self, Part};
use super::strict::Dialect;
use super::{Declarations, ModelCall, Wire};
use crate::Error;

/// OpenAI Responses.
pub(super) struct OpenAiResponses;

impl Wire for OpenAiResponses {
    const STRICT: Dialect = Dialect::OPENAI;

    fn tool(name: &str, description: &str, schema: Value, strict: Option<bool>) -> Value {
        let mut out = json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
        });
        if let Some(strict) = strict
            && let Some(map) = out.as_object_mut()
        {
            map.insert("strict".into(), Value::Bool(strict));
        }
        out
    }

    fn calls(
        response: parse::Part<'_>,
        declarations: Option<&Declarations>,
        bad: impl Fn(String) -> Error,
    ) -> Result<Vec<ModelCall>, Error> {
        let mut out = Vec::new();
        let items = parse::items(parse::pointer_or_self(response, "/output"))
            .ok_or_else(|| bad("expected `output`, a list of items".into()))?;
        for (i, mut item) in items.enumerate() {
            if item.get("type").and_then(Value::as_str) != Some("function_call") {
                continue;
            }
            let call_id = parse::take_text(&mut item, "call_id")
                .ok_or_else(|| bad(format!("output[{i}] has no `call_id`")))?;
            let name = parse::take_text(&mut item, "name")
                .ok_or_else(|| bad(format!("output[{i}] has no `name`")))?;
            let arguments = parse::take(&mut item, "arguments").unwrap_or(NULL);
            out.push(parse::from_text(call_id, name, arguments, declarations));
        }
        Ok(out)
    }

    fn messages(calls: &[ModelCall], results: &[ToolResult]) -> Vec<Value> {
        let contexts = render::contexts(results);
        let mut out: Vec<Value> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let parts = render::parts(result.content());
                let has_image = parts.iter().any(|p| matches!(p, Part::Image { .. }));
                let output = if has_image {
                    Value::Array(parts.iter().map(part).collect())
                } else {
                    Value::String(render::text_of(&parts))
                };
                json!({"type": "function_call_output", "call_id": call.call_id, "output": output})
            })
            .collect();
        if !contexts.is_empty() {
            out.push(json!({
                "type": "message",
                "role": "user",
                "content": contexts.iter().map(part).collect::<Vec<_>>(),
            }));
        }
        out
    }
}

/// A part as a Responses input content item.
fn part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "input_text", "text": text}),
        Part::Image { media_type, data } => {
            json!({"type": "input_image", "image_url": render::data_url(media_type, data), "detail": "auto"})
        }
    }
}
