//! The Anthropic Messages wire: `tools[].input_schema`, `tool_use` blocks in `content`
//! (arguments as a JSON value), and one `user` message of `tool_result` blocks followed by
//! the step's contexts.

use serde_json::{Value, json};
use tools_pipeline::ToolResult;

use super::parse::{self, NULL};
use super::render::{self, Part};
use super::strict::Dialect;
use super::{Declarations, ModelCall, Wire};
use crate::Error;

/// Anthropic Messages.
pub(super) struct Anthropic;

impl Wire for Anthropic {
    const STRICT: Dialect = Dialect::ANTHROPIC;

    fn tool(name: &str, description: &str, schema: Value, strict: Option<bool>) -> Value {
        let mut out = json!({
            "name": name,
            "description": description,
            "input_schema": schema,
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
        let blocks = parse::items(parse::pointer_or_self(response, "/content"))
            .ok_or_else(|| bad("expected `content`, a list of blocks".into()))?;
        for (i, mut block) in blocks.enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                continue;
            }
            let call_id = parse::take_text(&mut block, "id")
                .ok_or_else(|| bad(format!("content[{i}] has no `id`")))?;
            let name = parse::take_text(&mut block, "name")
                .ok_or_else(|| bad(format!("content[{i}] has no `name`")))?;
            let input = parse::take(&mut block, "input").unwrap_or(NULL);
            out.push(parse::from_value(call_id, name, input, declarations));
        }
        Ok(out)
    }

    fn messages(calls: &[ModelCall], results: &[ToolResult]) -> Vec<Value> {
        if calls.is_empty() {
            return Vec::new();
        }
        let contexts = render::contexts(results);
        let mut content: Vec<Value> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let parts = render::parts(result.content());
                json!({
                    "type": "tool_result",
                    "tool_use_id": call.call_id,
                    "content": parts.iter().map(part).collect::<Vec<_>>(),
                    "is_error": result.is_error(),
                })
            })
            .collect();
        // Tool results first, then everything else of the step (the API's rule).
        content.extend(contexts.iter().map(part));
        vec![json!({"role": "user", "content": content})]
    }
}

/// A part as an Anthropic content block.
fn part(part: &Part<'_>) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data}
        }),
    }
}
