//! Helpers shared by the behaviour tests.

use std::path::PathBuf;

use serde_json::{Map, Value};
use tools_codemode_sdk::{Language, ToolSdkSchema};

/// The crate's test data (`tests/data/`: golden files and vendored suites, copied into the
/// repository with their source noted in each folder's README).
pub(crate) fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Parses JSON text with key order kept and no recursion cap.
pub(crate) fn parse(text: &str) -> Value {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut de).expect("fixture JSON parses")
}

/// Reads a JSON file of the crate's test data.
pub(crate) fn read_data(relative: &str) -> Value {
    let path = data_dir().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(&text)
}

/// An object from `(key, value)` pairs, without `json!` (which clones embedded values
/// recursively).
pub(crate) fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<_, _>>(),
    )
}

/// A tool for the SDK.
pub(crate) fn tool(
    name: &str,
    description: &str,
    parameters: Value,
    output: Value,
) -> ToolSdkSchema {
    ToolSdkSchema::new(name, description, parameters, output)
}

/// The TypeScript declarations of a tool set.
pub(crate) fn ts(tools: &[ToolSdkSchema]) -> String {
    Language::TypeScript.render_declarations(tools)
}

/// The Python declarations of a tool set.
pub(crate) fn py(tools: &[ToolSdkSchema]) -> String {
    Language::Python.render_declarations(tools)
}

/// A tool with an empty open parameter map and the given output.
pub(crate) fn output_tool(name: &str, output: Value) -> ToolSdkSchema {
    tool(
        name,
        "",
        serde_json::json!({"type": "object", "properties": {}}),
        output,
    )
}

/// A tool with the given parameters and a string output.
pub(crate) fn args_tool(name: &str, parameters: Value) -> ToolSdkSchema {
    tool(name, "", parameters, serde_json::json!({"type": "string"}))
}

/// A closed object schema (`additionalProperties: false`).
pub(crate) fn closed(properties: Value, required: Value) -> Value {
    serde_json::json!({"type": "object", "additionalProperties": false, "properties": properties, "required": required})
}

/// An open object schema.
pub(crate) fn open(properties: Value, required: Value) -> Value {
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}
