//! Content blocks and the raw result a presenter sees.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::Error;

/// One block of tool content, as the harness carries it: `{"type": "text", "text": …}`,
/// `{"type": "reasoning", "text": …}`, or any other object with a string `type` (an image
/// reference, a block a plugin added).
///
/// Blocks of a type this crate does not model are kept verbatim in
/// [`ContentBlock::Other`], so a view read back from a log and written again loses nothing.
/// A UI mapping (such as the ACP one) shows only text blocks and drops the others.
///
/// # Examples
///
/// ```
/// use tools_presentation::ContentBlock;
/// use serde_json::json;
///
/// let block: ContentBlock = serde_json::from_value(json!({"type": "text", "text": "hi"}))?;
/// assert_eq!(block.as_text(), Some("hi"));
///
/// let image = json!({"type": "image", "attachment": {"id": "a1"}});
/// let block: ContentBlock = serde_json::from_value(image.clone())?;
/// assert_eq!(block.block_type(), "image");
/// assert_eq!(serde_json::to_value(&block)?, image);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text visible to the user.
    Text(String),
    /// Reasoning (thinking) text, distinct from visible text.
    Reasoning(String),
    /// Any other block, kept as its JSON object.
    Other(OtherBlock),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text(text.into())
    }

    /// A reasoning block.
    pub fn reasoning(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Reasoning(text.into())
    }

    /// The text of a text block; `None` for every other block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(text) => Some(text),
            ContentBlock::Reasoning(_) | ContentBlock::Other(_) => None,
        }
    }

    /// The block's `type`: `"text"`, `"reasoning"`, or the other block's own.
    pub fn block_type(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Reasoning(_) => "reasoning",
            ContentBlock::Other(other) => other.block_type(),
        }
    }

    /// Reads a block from JSON.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] when `value` is not an object with a string `type`, or is a
    /// `text`/`reasoning` block without a string `text`.
    pub fn from_json(value: &Value) -> Result<ContentBlock, Error> {
        ContentBlock::deserialize(value).map_err(|e| Error::malformed("content block", e))
    }
}

impl From<OtherBlock> for ContentBlock {
    fn from(block: OtherBlock) -> Self {
        ContentBlock::Other(block)
    }
}

/// A content block of a type other than `text` and `reasoning`, kept as its JSON object.
///
/// The object always has a string `type` that is neither `"text"` nor `"reasoning"` (those
/// are [`ContentBlock::Text`] and [`ContentBlock::Reasoning`]), so every block has exactly
/// one representation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtherBlock(Map<String, Value>);

impl OtherBlock {
    /// Wraps a JSON object as a block.
    ///
    /// # Errors
    ///
    /// [`Error::BlockType`] when `object` has no string `type`, or its type is `text` or
    /// `reasoning`.
    pub fn new(object: Map<String, Value>) -> Result<OtherBlock, Error> {
        match object.get("type") {
            Some(Value::String(t)) if t != "text" && t != "reasoning" => Ok(OtherBlock(object)),
            found => Err(Error::BlockType {
                found: found.map_or_else(|| "null".to_owned(), Value::to_string),
            }),
        }
    }

    /// The block's `type`.
    pub fn block_type(&self) -> &str {
        self.0
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The whole JSON object, `type` included.
    pub fn as_object(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The whole JSON object, `type` included.
    pub fn into_object(self) -> Map<String, Value> {
        self.0
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ContentBlock::Text(text) | ContentBlock::Reasoning(text) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", self.block_type())?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            ContentBlock::Other(other) => other.0.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut object = Map::<String, Value>::deserialize(deserializer)?;
        let text_of = |object: &mut Map<String, Value>, kind: &str| match object.remove("text") {
            Some(Value::String(text)) => Ok(text),
            _ => Err(D::Error::custom(format!(
                "a {kind} block needs a string `text`"
            ))),
        };
        match object.get("type").and_then(Value::as_str) {
            Some("text") => Ok(ContentBlock::Text(text_of(&mut object, "text")?)),
            Some("reasoning") => Ok(ContentBlock::Reasoning(text_of(&mut object, "reasoning")?)),
            _ => OtherBlock::new(object)
                .map(ContentBlock::Other)
                .map_err(D::Error::custom),
        }
    }
}

/// A completed call's result as a presenter and a UI bridge see it: the model-facing
/// content, the error flag, and the replayable `meta` the tool projected (the reference's
/// `presentationMeta`, persisted with the result so a replay reproduces the card).
///
/// Serialised as `{"content": [...], "isError": bool, "meta"?: any}`.
///
/// # Examples
///
/// ```
/// use tools_presentation::{ContentBlock, RawResult};
/// use serde_json::json;
///
/// let result = RawResult::new(vec![ContentBlock::text("ok")]).with_meta(json!({"n": 1}));
/// assert!(!result.is_error);
/// assert_eq!(result.meta, Some(json!({"n": 1})));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RawResult {
    /// The result content, as the model saw it.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// The tool's replayable presentation payload, if it has one (a JSON `null` payload
    /// is kept as `Some(Value::Null)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub meta: Option<Value>,
}

/// A present key is `Some`, even when its value is `null`.
fn present_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl RawResult {
    /// A successful result with this content.
    pub fn new(content: Vec<ContentBlock>) -> RawResult {
        RawResult {
            content,
            is_error: false,
            meta: None,
        }
    }

    /// A failed result with this content.
    pub fn error(content: Vec<ContentBlock>) -> RawResult {
        RawResult {
            content,
            is_error: true,
            meta: None,
        }
    }

    /// A successful result of one text block.
    pub fn text(text: impl Into<String>) -> RawResult {
        RawResult::new(vec![ContentBlock::text(text)])
    }

    /// The same result with this `meta` payload.
    #[must_use]
    pub fn with_meta(mut self, meta: Value) -> RawResult {
        self.meta = Some(meta);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_reasoning_blocks_have_one_shape() {
        for (block, json) in [
            (
                ContentBlock::text("a"),
                json!({"type": "text", "text": "a"}),
            ),
            (
                ContentBlock::reasoning("b"),
                json!({"type": "reasoning", "text": "b"}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&block).unwrap(), json);
            assert_eq!(ContentBlock::from_json(&json).unwrap(), block);
        }
    }

    #[test]
    fn malformed_blocks_are_errors() {
        for bad in [
            json!({"type": "text"}),
            json!({"type": "text", "text": 1}),
            json!({"type": "reasoning", "text": null}),
            json!({"text": "no type"}),
            json!({"type": 3}),
            json!("text"),
            json!([]),
        ] {
            assert!(ContentBlock::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn other_blocks_cannot_impersonate_known_types() {
        let mut map = Map::new();
        map.insert("type".into(), json!("text"));
        assert_eq!(
            OtherBlock::new(map),
            Err(Error::BlockType {
                found: "\"text\"".into()
            })
        );
        assert_eq!(
            OtherBlock::new(Map::new()),
            Err(Error::BlockType {
                found: "null".into()
            })
        );
    }

    #[test]
    fn raw_results_serialize_in_camel_case() {
        let result = RawResult::error(vec![ContentBlock::text("x")]);
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"content": [{"type": "text", "text": "x"}], "isError": true})
        );
    }
}
