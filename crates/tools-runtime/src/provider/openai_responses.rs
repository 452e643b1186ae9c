//! The OpenAI Responses wire: `function` tools, `function_call` items in `output`, and
//! `function_call_output` items (then a `user` message with the step's contexts).

use serde_json::{Value, json};
use tools_pipeline::ToolResult;

use super::parse;
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
        super::add_strict(out.as_object_mut(), strict);
        out
    }

    fn calls(
        response: parse::Part<'_>,
        declarations: Option<&Declarations>,
        bad: impl Fn(String) -> Error,
    ) -> Result<Vec<ModelCall>, Error> {
        let items = parse::CallItems {
            list: "/output",
            name: "output",
            holds: "a list of items",
            kind: "function_call",
            id: "call_id",
            arguments: "arguments",
        };
        parse::typed_calls(response, &items, parse::from_text, declarations, bad)
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
