//! Results as result messages: what every wire's rendering shares. Each wire writes its own
//! messages (`Wire::messages`, in the wire's file): one per call in the model's order, then
//! the step's contexts (and images where a tool result cannot carry them), from the
//! [`Part`]s of each result's content ([`parts`]) and of the step's contexts ([`contexts`]).

use std::borrow::Cow;

use serde_json::Value;
use tools_pipeline::ToolResult;
use tools_presentation::ContentBlock;

/// One piece of a result or context, as the wires see it, borrowed from the result: a
/// tool's text and an image's data are copied once, into the message that carries them.
pub(super) enum Part<'a> {
    Text(Cow<'a, str>),
    Image { media_type: &'a str, data: &'a str },
}

/// The parts of a result's (or a context's) content.
pub(super) fn parts(blocks: &[ContentBlock]) -> Vec<Part<'_>> {
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
pub(super) fn text_of(parts: &[Part<'_>]) -> String {
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

/// An image as a `data:` URL.
pub(super) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// The parts of every context of the step's results, in the results' order.
pub(super) fn contexts(results: &[ToolResult]) -> Vec<Part<'_>> {
    results
        .iter()
        .flat_map(|r| r.contexts().iter().flat_map(|c| parts(&c.content)))
        .collect()
}
