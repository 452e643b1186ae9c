//! The model-facing projection of a tool, and its shapes for common providers.

use std::sync::Arc;

use serde_json::{Map, Value};
use tools_json::JsonValue;

use crate::{ToolDefinition, ToolName};

/// What the model is told about a tool: exactly its name, description and parameter
/// schema. Nothing else of a definition (body, output, budget, classifier, presenters) can
/// reach the model through it.
///
/// Serializes as `{"name", "description", "parameters"}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: ToolName,
    /// The description.
    pub description: Arc<str>,
    /// The parameter schema (lossless JSON, shared with the definition).
    pub parameters: JsonValue,
}

impl serde::Serialize for ToolSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("ToolSpec", 3)?;
        out.serialize_field("name", self.name.as_str())?;
        out.serialize_field("description", &*self.description)?;
        out.serialize_field("parameters", &self.parameters)?;
        out.end()
    }
}

impl ToolSpec {
    /// The projection of a definition.
    pub fn of(definition: &ToolDefinition) -> ToolSpec {
        ToolSpec {
            name: definition.name().clone(),
            description: definition.description().into(),
            parameters: definition.parameters().clone(),
        }
    }

    fn shape(&self, parameters_key: &str) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("name".into(), Value::String(self.name.to_string()));
        map.insert(
            "description".into(),
            Value::String(self.description.to_string()),
        );
        // Parameters may be deeply nested: copy them without recursion.
        map.insert(
            parameters_key.into(),
            tools_json::clone_deep(self.parameters.as_value()),
        );
        map
    }

    /// The OpenAI function-tool shape:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    pub fn to_openai_json(&self) -> Value {
        let mut outer = Map::new();
        outer.insert("type".into(), Value::String("function".into()));
        outer.insert("function".into(), Value::Object(self.shape("parameters")));
        Value::Object(outer)
    }

    /// The Anthropic tool shape: `{"name", "description", "input_schema"}`.
    pub fn to_anthropic_json(&self) -> Value {
        Value::Object(self.shape("input_schema"))
    }

    /// The MCP tool shape: `{"name", "description", "inputSchema"}`.
    pub fn to_mcp_json(&self) -> Value {
        Value::Object(self.shape("inputSchema"))
    }
}
