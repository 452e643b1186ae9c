//! `search_tools`: the gateway's search over its deferred tools (`deferred = true`, the
//! top-level `deferred` globs). It is a registered tool like any other, so the policy, the
//! audit, the limits and the pins see its calls; its body searches the calling scope's view
//! ([`View::search`]) and loads what it found into that scope ([`AgentScope::load`]), which
//! makes the MCP front send `notifications/tools/list_changed` to that session alone.
//!
//! [`View::search`]: tools_runtime::tools::View::search
//! [`AgentScope::load`]: tools_runtime::tools::AgentScope::load

use serde_json::{Value, json};
use tools_registry::{ErrorCode, SEARCH_TOOLS, ToolHints};
use tools_runtime::presentation::ContentBlock;
use tools_runtime::tools::{OutputDecl, Registry, RegistryError};
use tools_runtime::{JsonValue, RunContext, ToolDefinition, ToolError};

/// How many tools a search returns when the call gives no `limit`.
pub(crate) const DEFAULT_LIMIT: u64 = 5;

/// The definition of `search_tools`. `registry` gives the registry the tool is registered
/// in, while it lives (the tool is stored in it, so it must not own it).
pub(crate) fn definition(
    registry: impl Fn() -> Option<Registry> + Send + Sync + 'static,
) -> Result<ToolDefinition, RegistryError> {
    let max_limit = tools_search::MAX_LIMIT;
    let max_chars = tools_search::MAX_QUERY_CHARS;
    let parameters = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": max_chars,
                "description": "A few words describing the tool you need (what it does, what it works on)."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": max_limit,
                "default": DEFAULT_LIMIT,
                "description": "The most tools to return (default 5)."
            }
        },
        "required": ["query"]
    });
    let output = json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"}
                    },
                    "required": ["name", "description"]
                }
            }
        },
        "required": ["tools"]
    });
    let description = "Search the tools that are not listed yet by what they do. The tools found are \
         loaded: from now on they are listed and can be called directly. The result names each \
         tool found, best match first, one per line with the first line of its description.";
    ToolDefinition::builder(SEARCH_TOOLS, description)
        .parameters(parameters)
        .output(OutputDecl::new(output, |_args, value| {
            Ok(vec![ContentBlock::text(render(value.as_value()))])
        }))
        .hints(
            ToolHints::new()
                .with_title("Search tools")
                .with_destructive(false)
                .with_idempotent(true)
                .with_open_world(false),
        )
        .body(move |args: JsonValue, ctx: RunContext| {
            let registry = registry();
            let agent = ctx.call().agent.clone();
            async move {
                let (query, limit) = arguments(args.as_value())?;
                let registry = registry
                    .ok_or_else(|| ToolError::new("the gateway is shutting down: nothing to search"))?;
                let view = registry.view(agent.as_ref());
                let found: Vec<Value> = view
                    .search(&query, limit)
                    .map_err(|e| ToolError::with_code(ErrorCode::InvalidArgs, e.to_string()))?
                    .into_iter()
                    .map(|def| {
                        json!({
                            "name": def.name().as_str(),
                            "description": def.description().lines().next().unwrap_or_default().trim(),
                        })
                    })
                    .collect();
                let names = found.iter().filter_map(|t| t["name"].as_str());
                let loaded = match &agent {
                    Some(agent) => agent.load(names),
                    None => registry.load(names),
                };
                loaded.map_err(|e| ToolError::new(format!("the tools found could not be loaded: {e}")))?;
                Ok(json!({ "tools": found }))
            }
        })
        .build()
}

/// The query and the limit of a call, or why they are not acceptable.
fn arguments(args: &Value) -> Result<(String, usize), ToolError> {
    let invalid = |message: String| ToolError::with_code(ErrorCode::InvalidArgs, message);
    let query = match args.get("query") {
        Some(Value::String(query)) => query.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "invalid arguments: `query` must be a string, not {other}"
            )));
        }
        None => {
            return Err(invalid(
                "invalid arguments: `query` is required: a few words describing the tool you need"
                    .into(),
            ));
        }
    };
    let max = tools_search::MAX_LIMIT;
    let limit = match args.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(limit) => limit
            .as_u64()
            .filter(|n| (1..=max as u64).contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "invalid arguments: `limit` must be an integer from 1 to {max}, not {limit}"
                ))
            })?,
    };
    Ok((query, usize::try_from(limit).unwrap_or(max)))
}

/// The text of a result: one line per tool found, `name: first line of its description`.
fn render(value: &Value) -> String {
    let tools = value["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if tools.is_empty() {
        return "No tool matches the query: try other words.".to_owned();
    }
    tools
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            match tool["description"].as_str().unwrap_or_default() {
                "" => name.to_owned(),
                description => format!("{name}: {description}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_before_any_search() {
        assert_eq!(
            arguments(&json!({"query": "read a file"})).unwrap(),
            ("read a file".to_owned(), 5)
        );
        assert_eq!(
            arguments(&json!({"query": "x", "limit": 50})).unwrap().1,
            50
        );
        for (args, needle) in [
            (json!({}), "`query` is required"),
            (json!({"query": 3}), "`query` must be a string"),
            (json!({"query": "x", "limit": 0}), "from 1 to 50"),
            (json!({"query": "x", "limit": 51}), "from 1 to 50"),
            (json!({"query": "x", "limit": 2.5}), "from 1 to 50"),
            (json!({"query": "x", "limit": "5"}), "from 1 to 50"),
        ] {
            let error = arguments(&args).unwrap_err();
            assert_eq!(error.code().map(|c| c.as_str()), Some("INVALID_ARGS"));
            assert!(
                error.message().contains(needle),
                "{args}: {}",
                error.message()
            );
        }
    }

    #[test]
    fn the_text_names_each_tool_on_its_own_line() {
        let value = json!({"tools": [
            {"name": "a__read", "description": "Read a file."},
            {"name": "b__bare", "description": ""},
        ]});
        assert_eq!(render(&value), "a__read: Read a file.\nb__bare");
        assert!(render(&json!({"tools": []})).starts_with("No tool matches"));
    }
}
