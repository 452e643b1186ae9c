//! Tool search on the wires (docs/decisions.md, entry 35): what a request declares for a
//! scope with deferred tools, the search calls of a model response, their answers, and the
//! tools a provider's own search loaded.
//!
//! - OpenAI Responses: the declared tools, then every deferred tool with
//!   `defer_loading: true` (inside a `namespace` per tool namespace), then a `tool_search`
//!   tool with `execution: "client"`; a `tool_search_call` is answered with a
//!   `tool_search_output` carrying the tools found, which are loaded in the scope.
//! - Anthropic Messages: the declared tools, every deferred tool with
//!   `defer_loading: true`, and a `search_tools` tool whose `tool_result` is one
//!   `tool_reference` block per tool found.
//! - OpenAI Chat Completions (no native search): the declared and loaded tools and a
//!   `search_tools` function whose result lists the tools found with their schemas; they
//!   are declared from the next request on.
//!
//! A host that picks the provider's own search ([`SearchOffer::Provider`]: Anthropic's
//! regex or BM25 search tool, OpenAI's hosted `tool_search`) gets that tool passed through
//! untouched, and the tools the provider's search returned are loaded in the scope when the
//! response is run, so their calls pass.

use serde_json::{Map, Value, json};
use tools_pipeline::ToolResult;
use tools_registry::{SEARCH_TOOLS, ToolDefinition, ToolName, ToolSpec, View};

use super::{Declarations, Provider};

/// How many tools a search returns when the model does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// The search a request offers for a scope's deferred tools.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum SearchOffer {
    /// The runtime's own search (BM25 over the scope's deferred tools), run by
    /// [`ToolRuntime::run_turn`](crate::ToolRuntime::run_turn).
    #[default]
    Client,
    /// The provider's own search tool, declared as given (for example
    /// `{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}` for
    /// Anthropic, `{"type": "tool_search"}` for OpenAI Responses). The deferred tools are
    /// declared with `defer_loading: true`; what the provider's search returns is loaded in
    /// the scope when the response is run.
    Provider(Value),
}

/// One search a model asked for in a step, and what it found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchStep {
    /// The call id of the search call.
    pub call_id: String,
    /// The query as the model wrote it (empty when it gave none).
    pub query: String,
    /// The tools found, best first; each is now loaded in the scope.
    pub found: Vec<ToolName>,
    /// Why the search failed (a bad query), when it did.
    pub error: Option<String>,
}

/// The parameters of the `search_tools` function and of the client `tool_search` tool.
fn search_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the tool should do, in a few words (for example: weather forecast for a city)."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": tools_search::MAX_LIMIT,
                "description": "How many tools to return (default 5)."
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// The description of the search tool.
fn search_description(view: &View) -> String {
    let count = view.deferred().count();
    format!(
        "Search the {count} tools that are not listed yet by what they do; the tools found become callable from your next step. Use it when no listed tool fits the task."
    )
}

/// The `search_tools` function as a tool projection (Chat Completions, Anthropic).
pub(super) fn search_spec(view: &View) -> Option<ToolSpec> {
    let parameters = tools_json::JsonValue::try_from(search_parameters()).ok()?;
    Some(ToolSpec {
        name: ToolName::new(SEARCH_TOOLS).ok()?,
        description: search_description(view).into(),
        parameters,
    })
}

/// Whether a request for `view` offers a search: the scope has deferred tools and no tool
/// of its own is named `search_tools`.
pub(super) fn offers(view: &View) -> bool {
    view.has_deferred() && view.get(SEARCH_TOOLS).is_none()
}

/// The declarations of a request for `view`'s scope when it has deferred tools:
/// [`Provider::declare`] over the declared tools (and, for Chat Completions, the loaded
/// ones), the `search_tools` function where the wire takes one, and every deferred tool
/// (Responses and Anthropic), whose declarations then get `defer_loading: true`
/// (Responses: inside a `namespace` per tool namespace, then the `tool_search` tool).
pub(super) fn declare(
    provider: Provider,
    view: &View,
    strict: bool,
    offer: &SearchOffer,
) -> Declarations {
    let chat = provider == Provider::OpenAiChat;
    let client = chat || *offer == SearchOffer::Client;
    let mut specs: Vec<ToolSpec> = if chat {
        view.wire_schemas().to_vec()
    } else {
        // The loaded tools stay among the deferred ones (declared with `defer_loading`),
        // so the declarations are the same before and after a search.
        view.wire_schemas()
            .iter()
            .filter(|spec| !view.is_loaded(spec.name.as_str()))
            .cloned()
            .collect()
    };
    if client
        && provider != Provider::OpenAiResponses
        && let Some(spec) = search_spec(view)
    {
        specs.push(spec);
    }
    let direct = specs.len();
    let deferred: Vec<&ToolDefinition> = if chat {
        Vec::new()
    } else {
        view.deferred().collect()
    };
    specs.extend(deferred.iter().map(|def| ToolSpec::of(def)));
    let mut declarations = provider.declare(&specs, strict);
    declarations.search = client;
    let tail = declarations
        .tools
        .split_off(direct.min(declarations.tools.len()));
    let mut namespaces: Vec<(String, Vec<Value>)> = Vec::new();
    for (mut declared, def) in tail.into_iter().zip(&deferred) {
        if let Some(map) = declared.as_object_mut() {
            map.insert("defer_loading".into(), Value::Bool(true));
        }
        match (provider, def.namespace()) {
            (Provider::OpenAiResponses, Some(ns)) => {
                match namespaces.iter_mut().find(|(name, _)| name == ns) {
                    Some((_, list)) => list.push(declared),
                    None => namespaces.push((ns.to_owned(), vec![declared])),
                }
            }
            _ => declarations.tools.push(declared),
        }
    }
    for (name, list) in namespaces {
        declarations.tools.push(json!({
            "type": "namespace",
            "name": name,
            "description": format!("Tools of {name}."),
            "tools": list,
        }));
    }
    match offer {
        SearchOffer::Client if provider == Provider::OpenAiResponses => {
            declarations.tools.push(json!({
                "type": "tool_search",
                "execution": "client",
                "description": search_description(view),
                "parameters": search_parameters(),
            }));
        }
        SearchOffer::Provider(tool) if !chat => declarations.tools.push(tool.clone()),
        _ => {}
    }
    declarations
}

/// A loaded function as a `tool_search_output` carries it (Responses): its declaration
/// (the strict form when it has one) without `defer_loading`.
fn loaded_function(def: &ToolDefinition, declarations: &Declarations) -> Value {
    let name = declarations.wire_name(def.name().as_str());
    let declared = declarations.tools().iter().find_map(|tool| {
        if tool.get("name").and_then(Value::as_str) == Some(name)
            && tool.get("type").and_then(Value::as_str) == Some("function")
        {
            return Some(tool.clone());
        }
        tool.get("tools")
            .and_then(Value::as_array)?
            .iter()
            .find(|inner| inner.get("name").and_then(Value::as_str) == Some(name))
            .cloned()
    });
    let mut declared = declared.unwrap_or_else(|| {
        json!({
            "type": "function",
            "name": name,
            "description": def.description(),
            "parameters": tools_json::clone_deep(def.parameters().as_value()),
            "strict": false,
        })
    });
    if let Some(map) = declared.as_object_mut() {
        map.remove("defer_loading");
    }
    declared
}

/// The query and limit of a search call's arguments, or why they are unusable.
pub(super) fn arguments(arguments: &Value) -> Result<(String, usize), String> {
    let object = match arguments {
        Value::Object(map) => map,
        Value::String(text) => {
            return match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => arguments_of(&map),
                _ => Err("the search arguments must be a JSON object with a `query`".into()),
            };
        }
        _ => return Err("the search arguments must be a JSON object with a `query`".into()),
    };
    arguments_of(object)
}

fn arguments_of(object: &Map<String, Value>) -> Result<(String, usize), String> {
    let query = match object.get("query") {
        Some(Value::String(query)) => query.clone(),
        Some(_) => return Err("`query` must be a string".into()),
        None => return Err("the search needs a `query`".into()),
    };
    let limit = match object.get("limit") {
        None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
            _ => return Err("`limit` must be a positive integer".into()),
        },
    };
    Ok((query, limit))
}

/// Runs one search of `view` and returns what it found (not loaded yet).
pub(super) fn run<'v>(
    view: &'v View,
    arguments: &Value,
) -> Result<(String, Vec<&'v ToolDefinition>), (String, String)> {
    let (query, limit) = self::arguments(arguments).map_err(|e| (String::new(), e))?;
    match view.search(&query, limit) {
        Ok(found) => Ok((query, found)),
        Err(error) => Err((query, error.to_string())),
    }
}

/// The result of a search call answered as a function result (Chat Completions): the
/// tools found, with their schemas, as JSON text.
pub(super) fn listing(found: &[&ToolDefinition], declarations: &Declarations) -> String {
    if found.is_empty() {
        return "No tool matched; try other words.".into();
    }
    let tools: Vec<Value> = found
        .iter()
        .map(|def| {
            json!({
                "name": declarations.wire_name(def.name().as_str()),
                "description": def.description(),
                "parameters": tools_json::clone_deep(def.parameters().as_value()),
            })
        })
        .collect();
    format!(
        "Found {} tool(s); they are callable from your next step:\n{}",
        found.len(),
        tools_json::to_compact_string(&Value::Array(tools))
    )
}

/// The `tool_search_output` item answering a client `tool_search_call` (Responses).
pub(super) fn search_output(
    call_id: &str,
    found: &[&ToolDefinition],
    declarations: &Declarations,
) -> Value {
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": found.iter().map(|def| loaded_function(def, declarations)).collect::<Vec<_>>(),
    })
}

/// The content of the `tool_result` answering a `search_tools` call (Anthropic): one
/// `tool_reference` block per tool found, or a text block when none was.
pub(super) fn references(found: &[&ToolDefinition], declarations: &Declarations) -> Value {
    if found.is_empty() {
        return json!([{"type": "text", "text": "No tool matched; try other words."}]);
    }
    Value::Array(
        found
            .iter()
            .map(|def| json!({"type": "tool_reference", "tool_name": declarations.wire_name(def.name().as_str())}))
            .collect(),
    )
}

/// The client `tool_search_call` items of a Responses response: `(call_id, arguments)`.
pub(super) fn responses_search_calls(response: &Value) -> Vec<(String, Value)> {
    output_items(response)
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("tool_search_call"))
        .filter(|item| item.get("execution").and_then(Value::as_str) != Some("server"))
        .filter_map(|item| {
            let id = item
                .get("call_id")
                .or_else(|| item.get("id"))
                .and_then(Value::as_str)?;
            Some((
                id.to_owned(),
                item.get("arguments").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// The tool names a provider's own search returned in a response: the tools of
/// `tool_search_output` items (Responses) and the `tool_reference`s of
/// `tool_search_tool_result` blocks (Anthropic).
pub(super) fn provider_loaded(provider: Provider, response: &Value) -> Vec<String> {
    let mut names = Vec::new();
    match provider {
        Provider::OpenAiResponses => {
            for item in output_items(response).filter(|item| {
                item.get("type").and_then(Value::as_str) == Some("tool_search_output")
            }) {
                for tool in item
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    collect_function_names(tool, &mut names);
                }
            }
        }
        Provider::Anthropic => {
            let blocks = response
                .get("content")
                .and_then(Value::as_array)
                .or_else(|| response.as_array());
            for block in blocks.into_iter().flatten().filter(|b| {
                b.get("type").and_then(Value::as_str) == Some("tool_search_tool_result")
            }) {
                let references = block
                    .pointer("/content/tool_references")
                    .and_then(Value::as_array);
                for reference in references.into_iter().flatten() {
                    if let Some(name) = reference.get("tool_name").and_then(Value::as_str) {
                        names.push(name.to_owned());
                    }
                }
            }
        }
        Provider::OpenAiChat => {}
    }
    names
}

fn collect_function_names(tool: &Value, names: &mut Vec<String>) {
    match tool.get("type").and_then(Value::as_str) {
        Some("function") => {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                names.push(name.to_owned());
            }
        }
        Some("namespace") => {
            for inner in tool
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                collect_function_names(inner, names);
            }
        }
        _ => {}
    }
}

/// The items of a Responses response (its `output`, or the response when it is a list).
fn output_items(response: &Value) -> impl Iterator<Item = &Value> {
    response
        .get("output")
        .and_then(Value::as_array)
        .or_else(|| response.as_array())
        .into_iter()
        .flatten()
}

/// Writes the answers of a step's searches into its result messages: a Responses
/// `tool_search_output` per client search, before the other items; the content of the
/// Anthropic `tool_result` (its `tool_reference` blocks) or of the Chat Completions tool
/// message (the listing) of each `search_tools` call. A failed search keeps the error
/// text the render gave it (Responses: an output without tools, the error in the step).
pub(super) fn answer(
    provider: Provider,
    answers: &[(String, Result<Vec<ToolDefinition>, String>)],
    declarations: &Declarations,
    messages: &mut Vec<Value>,
) {
    for (call_id, outcome) in answers {
        let found: Vec<&ToolDefinition> = match outcome {
            Ok(found) => found.iter().collect(),
            Err(_) => Vec::new(),
        };
        match provider {
            // A `search_tools` function call was answered by its `function_call_output`;
            // the `tool_search_call` items are answered here.
            Provider::OpenAiResponses
                if !messages.iter().any(|m| {
                    m.get("type").and_then(Value::as_str) == Some("function_call_output")
                        && m.get("call_id").and_then(Value::as_str) == Some(call_id)
                }) =>
            {
                let at = messages
                    .iter()
                    .take_while(|m| {
                        m.get("type").and_then(Value::as_str) == Some("tool_search_output")
                    })
                    .count();
                messages.insert(at, search_output(call_id, &found, declarations));
            }
            Provider::Anthropic if outcome.is_ok() => {
                let blocks = messages
                    .iter_mut()
                    .filter_map(|m| m.get_mut("content").and_then(Value::as_array_mut))
                    .flatten();
                for block in blocks {
                    if block.get("tool_use_id").and_then(Value::as_str) == Some(call_id)
                        && let Some(map) = block.as_object_mut()
                    {
                        map.insert("content".into(), references(&found, declarations));
                    }
                }
            }
            Provider::OpenAiChat if outcome.is_ok() => {
                for message in messages.iter_mut() {
                    if message.get("tool_call_id").and_then(Value::as_str) == Some(call_id)
                        && let Some(map) = message.as_object_mut()
                    {
                        map.insert(
                            "content".into(),
                            Value::String(listing(&found, declarations)),
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// The success placeholder of an answered search call: its value lists the names found.
pub(super) fn answered(found: &[&ToolDefinition]) -> ToolResult {
    let names: Vec<Value> = found
        .iter()
        .map(|def| Value::String(def.name().to_string()))
        .collect();
    match tools_json::JsonValue::try_from(json!({"found": names})) {
        Ok(value) => ToolResult::success(value),
        Err(_) => ToolResult::success(tools_json::JsonValue::null()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_arguments_are_read_or_refused_clearly() {
        assert_eq!(
            arguments(&json!({"query": "weather"})),
            Ok(("weather".into(), 5))
        );
        assert_eq!(
            arguments(&json!(r#"{"query": "mail", "limit": 2}"#)),
            Ok(("mail".into(), 2))
        );
        assert!(arguments(&json!({})).unwrap_err().contains("query"));
        assert!(
            arguments(&json!({"query": 3}))
                .unwrap_err()
                .contains("string")
        );
        assert!(
            arguments(&json!({"query": "x", "limit": 0}))
                .unwrap_err()
                .contains("limit")
        );
        assert!(arguments(&json!({"query": "x", "limit": -1})).is_err());
        assert!(arguments(&json!("not json")).is_err());
        assert!(arguments(&Value::Null).is_err());
    }

    #[test]
    fn provider_searches_are_read_from_both_wires() {
        let responses = json!({"output": [
            {"type": "tool_search_call", "id": "ts_1", "call_id": "call_s", "execution": "client", "arguments": {"query": "w"}, "status": "completed"},
            {"type": "tool_search_output", "execution": "server", "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "namespace", "name": "crm", "tools": [{"type": "function", "name": "crm__find"}]}
            ]}
        ]});
        assert_eq!(
            responses_search_calls(&responses),
            [("call_s".to_owned(), json!({"query": "w"}))]
        );
        assert_eq!(
            provider_loaded(Provider::OpenAiResponses, &responses),
            ["get_weather", "crm__find"]
        );
        let anthropic = json!({"content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {"pattern": "weather"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]
            }}
        ]});
        assert_eq!(
            provider_loaded(Provider::Anthropic, &anthropic),
            ["get_weather"]
        );
        assert!(provider_loaded(Provider::OpenAiChat, &anthropic).is_empty());
    }
}
