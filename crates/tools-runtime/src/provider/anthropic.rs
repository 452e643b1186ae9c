//! The Anthropic Messages wire: `tools[].input_schema`, `tool_use` blocks in `content`
//! (arguments as a JSON value), and one `user` message of `tool_result` blocks followed by
//! the step's contexts.

use serde_json::{Value, json};
use tools_pipeline::ToolResult;

use super::parse;
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
        super::add_strict(out.as_object_mut(), strict);
        out
    }

    fn calls(
        response: parse::Part<'_>,
        declarations: Option<&Declarations>,
        bad: impl Fn(String) -> Error,
    ) -> Result<Vec<ModelCall>, Error> {
        let items = parse::CallItems {
            list: "/content",
            name: "content",
            holds: "a list of blocks",
            kind: "tool_use",
            id: "id",
            arguments: "input",
        };
        parse::typed_calls(response, &items, parse::from_value, declarations, bad)
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
