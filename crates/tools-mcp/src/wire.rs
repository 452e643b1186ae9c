//! Between the runtime's types and MCP's: a definition as an MCP `Tool`, a result as a
//! `CallToolResult`, and back for imported tools.
//!
//! rmcp's protocol types are built from their JSON form (they are `#[non_exhaustive]` and
//! deserialize exactly what the wire carries), so the shapes below are the wire's.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Map, Value, json};
use tools_json::ErrorCode;
use tools_runtime::{
    ToolDefinition, ToolError, ToolResult, presentation::ContentBlock, tools::Code,
};

/// The `_meta` key of an error result's machine code (`"DENIED"`, `"INVALID_ARGS"`, …).
pub const CODE_META_KEY: &str = "code";
/// The `_meta` key listing what of a tool's foreign schema is not validated (paths into
/// its `inputSchema`/`outputSchema`), on tools whose schemas are not fully enforced.
pub const UNENFORCED_META_KEY: &str = "tool-runtime/unenforced";
/// The property that carries a value whose schema is not an object (MCP's
/// `structuredContent` and `outputSchema` are objects; the Python SDK's convention).
pub const WRAPPED_RESULT_KEY: &str = "result";

/// The annotation on an output schema this crate wrapped (`{"result": …}`), so an importer
/// of a served runtime unwraps it and a chain of gateways stays transparent.
pub const WRAPPED_MARKER: &str = "x-tool-runtime-wrapped";

/// The inner schema of an output schema marked [`WRAPPED_MARKER`], if `schema` is one.
pub(crate) fn wrapped_inner(schema: &Map<String, Value>) -> Option<&Value> {
    if schema.get(WRAPPED_MARKER) != Some(&Value::Bool(true))
        || schema.get("required") != Some(&json!([WRAPPED_RESULT_KEY]))
    {
        return None;
    }
    schema
        .get("properties")?
        .as_object()?
        .get(WRAPPED_RESULT_KEY)
}

/// How a tool's value is carried as `structuredContent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Structured {
    /// No output contract (`{}`): content only.
    None,
    /// An object schema: the value itself.
    Object,
    /// Any other schema: `{"result": value}`.
    Wrapped,
}

/// How `def`'s values are carried.
pub(crate) fn structured_of(def: &ToolDefinition) -> Structured {
    let schema = def.output().schema().as_json();
    match schema.as_object() {
        Some(map) if map.is_empty() => Structured::None,
        Some(map) if map.get("type").and_then(Value::as_str) == Some("object") => {
            Structured::Object
        }
        _ => Structured::Wrapped,
    }
}

/// The MCP tool of `def`, under `description` (the `run_code` description carries its SDK).
pub(crate) fn tool_of(def: &ToolDefinition, description: &str) -> Tool {
    let mut tool = Map::new();
    tool.insert("name".into(), Value::String(def.name().as_str().to_owned()));
    if !description.trim().is_empty() {
        tool.insert("description".into(), Value::String(description.to_owned()));
    }
    let input = match def.parameters().as_value() {
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("object") => {
            Value::Object(map.clone())
        }
        // MCP requires an object schema; anything else is said as "any object".
        _ => json!({"type": "object"}),
    };
    tool.insert("inputSchema".into(), input);
    let output = def.output().schema().as_json();
    match structured_of(def) {
        Structured::None => {}
        Structured::Object => {
            tool.insert("outputSchema".into(), output.clone());
        }
        Structured::Wrapped => {
            tool.insert(
                "outputSchema".into(),
                json!({
                    "type": "object",
                    "properties": {WRAPPED_RESULT_KEY: output},
                    "required": [WRAPPED_RESULT_KEY],
                    WRAPPED_MARKER: true
                }),
            );
        }
    }
    let annotations = annotations_of(def);
    if !annotations.is_empty() {
        tool.insert("annotations".into(), Value::Object(annotations));
    }
    if !def.is_fully_validated() {
        let mut paths: Vec<Value> = Vec::new();
        if let Some(params) = def.foreign_parameters() {
            paths.extend(
                params
                    .unenforced()
                    .iter()
                    .map(|v| json!(format!("inputSchema{}", suffix(&v.path.to_string())))),
            );
        }
        paths.extend(
            def.output()
                .schema()
                .unenforced()
                .iter()
                .map(|v| json!(format!("outputSchema{}", suffix(&v.path.to_string())))),
        );
        tool.insert("_meta".into(), json!({UNENFORCED_META_KEY: paths}));
    }
    // Every field above has the wire's type, so this cannot fail; a failure would be a bug
    // here, and still yields a tool (named, any arguments) rather than a panic.
    serde_json::from_value(Value::Object(tool)).unwrap_or_else(|_| {
        Tool::new(
            def.name().as_str().to_owned(),
            String::new(),
            Arc::new(JsonObject::new()),
        )
    })
}

/// A violation path rooted at `schema` as a suffix (`schema.properties.x` → `.properties.x`).
fn suffix(path: &str) -> &str {
    path.strip_prefix("schema").unwrap_or(path)
}

/// The MCP annotations of `def`'s hints.
fn annotations_of(def: &ToolDefinition) -> Map<String, Value> {
    let hints = def.hints();
    let mut out = Map::new();
    if let Some(title) = &hints.title {
        out.insert("title".into(), Value::String(title.clone()));
    }
    for (key, hint) in [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ] {
        if let Some(hint) = hint {
            out.insert(key.into(), Value::Bool(hint));
        }
    }
    out
}

/// The MCP result of a call: the model-facing content, then every deferred context's
/// content; a success carries `structuredContent` per `structured`; a failure is
/// `isError: true` with its code in `_meta`.
pub(crate) fn result_of(result: &ToolResult, structured: Structured) -> CallToolResult {
    let mut content: Vec<Value> = result.content().iter().map(block_json).collect();
    for context in result.contexts() {
        content.extend(context.content.iter().map(block_json));
    }
    let mut out = Map::new();
    if let Some(error) = result.error() {
        if content.is_empty() {
            content.push(json!({"type": "text", "text": error.message()}));
        }
        out.insert("isError".into(), Value::Bool(true));
        if let Some(code) = error.code() {
            out.insert("_meta".into(), json!({CODE_META_KEY: code.as_str()}));
        }
    } else if let Some(value) = result.value() {
        out.insert("isError".into(), Value::Bool(false));
        match structured {
            Structured::None => {}
            Structured::Object => {
                out.insert("structuredContent".into(), value.as_value().clone());
            }
            Structured::Wrapped => {
                out.insert(
                    "structuredContent".into(),
                    json!({WRAPPED_RESULT_KEY: value.as_value()}),
                );
            }
        }
    }
    out.insert("content".into(), Value::Array(content));
    // Required from protocol 2026-07-28 on; rmcp removes it for peers on older versions.
    out.insert("resultType".into(), Value::String("complete".into()));
    let text = result.text();
    serde_json::from_value(Value::Object(out)).unwrap_or_else(|_| {
        // A block rmcp cannot read (a custom block type): the text of the result instead.
        let mut fallback = CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)]);
        fallback.is_error = Some(result.is_error());
        fallback
    })
}

/// One content block as MCP JSON: text as text, reasoning as text, other blocks verbatim
/// when MCP knows their type, else as their JSON text.
fn block_json(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text(text) | ContentBlock::Reasoning(text) => {
            json!({"type": "text", "text": text})
        }
        ContentBlock::Other(other) => {
            let object = Value::Object(other.as_object().clone());
            if serde_json::from_value::<rmcp::model::ContentBlock>(object.clone()).is_ok() {
                object
            } else {
                json!({"type": "text", "text": object.to_string()})
            }
        }
        // A block kind added later: its JSON as text.
        other => json!({"type": "text", "text": serde_json::to_string(other).unwrap_or_default()}),
    }
}

/// The error of an upstream result with `isError: true`: its text content as the message,
/// and the code of its `_meta` when it carries one (a chained gateway's), else none.
pub(crate) fn upstream_error(result: &CallToolResult) -> ToolError {
    let message = text_of_blocks(result);
    let message = if message.is_empty() {
        "the MCP tool reported an error without a message".to_owned()
    } else {
        message
    };
    let code = result
        .meta
        .as_ref()
        .and_then(|meta| meta.get(CODE_META_KEY))
        .and_then(Value::as_str)
        .map(code_of);
    match code {
        Some(Code::Known(code)) => ToolError::with_code(code, message),
        Some(Code::Custom(code)) => ToolError::custom(code, message),
        None => ToolError::new(message),
    }
}

/// A wire code as the runtime's own when it is one.
fn code_of(code: &str) -> Code {
    ErrorCode::ALL
        .into_iter()
        .find(|known| known.as_str() == code)
        .map_or_else(|| Code::Custom(code.into()), Code::Known)
}

/// The text blocks of an MCP result, joined by newlines.
pub(crate) fn text_of_blocks(result: &CallToolResult) -> String {
    let mut out = String::new();
    for block in &result.content {
        if let Some(text) = block.as_text() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text.text);
        }
    }
    out
}

/// The content of an upstream result as the runtime's blocks (text as text, everything
/// else verbatim).
pub(crate) fn blocks_of(content: &Value) -> Vec<ContentBlock> {
    let Some(items) = content.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            ContentBlock::from_json(item).unwrap_or_else(|_| ContentBlock::text(item.to_string()))
        })
        .collect()
}
