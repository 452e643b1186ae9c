//! Tool search through `declare` and `run_turn` (docs/decisions.md, entry 35): searches
//! load what they find in their own scope only, run before the step's other calls, never
//! return what the scope may not see, refuse bad queries clearly, and a provider's own
//! search tool is passed through with what it found loaded.

use serde_json::{Value, json};
use tools_runtime::provider::{Provider, SearchOffer};
use tools_runtime::tools::{AgentScope, Exposure, OutputDecl, ToolFilter};
use tools_runtime::{CancellationToken, ErrorCode, ToolDefinition, ToolRuntime};

fn tool(name: &str, description: &str, exposure: Exposure) -> ToolDefinition {
    let reply = format!("{name} ran");
    ToolDefinition::builder(name, description)
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(Value::String(reply)) }
        })
        .exposure(exposure)
        .build()
        .unwrap()
}

fn runtime() -> ToolRuntime {
    let runtime = ToolRuntime::new();
    for (name, description, exposure) in [
        ("get_time", "The local time in a city.", Exposure::Direct),
        (
            "get_weather",
            "The current weather in a city.",
            Exposure::Deferred,
        ),
        ("send_mail", "Send an email message.", Exposure::Deferred),
    ] {
        runtime
            .register(tool(name, description, exposure))
            .unwrap()
            .keep();
    }
    runtime
}

fn chat_calls(calls: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    json!({"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]})
}

fn declared(runtime: &ToolRuntime, provider: Provider, agent: &AgentScope) -> Vec<String> {
    runtime
        .declare(provider, Some(agent), false, &SearchOffer::Client)
        .tools()
        .iter()
        .map(|t| {
            t.pointer("/function/name")
                .or_else(|| t.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

async fn turn(
    runtime: &ToolRuntime,
    provider: Provider,
    response: &Value,
    agent: &AgentScope,
) -> tools_runtime::provider::TurnStep {
    let declarations = runtime.declare(provider, Some(agent), false, &SearchOffer::Client);
    runtime
        .run_turn(
            provider,
            response,
            Some(&declarations),
            Some(agent),
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn a_search_loads_in_its_scope_and_runs_before_the_steps_calls() {
    let runtime = runtime();
    let (a, b) = (runtime.scope(), runtime.scope());
    assert_eq!(
        declared(&runtime, Provider::OpenAiChat, &a),
        ["get_time", "search_tools"]
    );
    // The search and a call of what it finds, in one step: the search runs first.
    let response = chat_calls(&[
        ("s1", "search_tools", json!({"query": "weather"})),
        ("c1", "get_weather", json!({})),
    ]);
    let step = turn(&runtime, Provider::OpenAiChat, &response, &a).await;
    assert_eq!(step.searches.len(), 1);
    assert_eq!(step.searches[0].found.len(), 1);
    assert_eq!(step.searches[0].found[0].as_str(), "get_weather");
    assert_eq!(step.results[1].text(), "get_weather ran");
    assert_eq!(
        declared(&runtime, Provider::OpenAiChat, &a),
        ["get_time", "get_weather", "search_tools"]
    );
    // Another conversation did not load it.
    assert_eq!(
        declared(&runtime, Provider::OpenAiChat, &b),
        ["get_time", "search_tools"]
    );
    let other = turn(
        &runtime,
        Provider::OpenAiChat,
        &chat_calls(&[("c2", "get_weather", json!({}))]),
        &b,
    )
    .await;
    assert_eq!(other.results[0].error_code(), Some(ErrorCode::UnknownTool));
    assert!(other.results[0].text().contains("search_tools"));
}

#[tokio::test]
async fn searches_never_return_what_the_scope_may_not_see() {
    let runtime = runtime();
    let agent = runtime.scope();
    agent
        .restrict(ToolFilter::deny(["send_mail"]))
        .unwrap()
        .keep();
    let step = turn(
        &runtime,
        Provider::OpenAiChat,
        &chat_calls(&[(
            "s1",
            "search_tools",
            json!({"query": "send an email message"}),
        )]),
        &agent,
    )
    .await;
    assert!(step.searches[0].found.is_empty());
    assert!(
        step.messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("No tool matched")
    );
}

#[tokio::test]
async fn bad_queries_are_clear_errors() {
    let runtime = runtime();
    let agent = runtime.scope();
    let long = "weather ".repeat(1_250);
    let response = chat_calls(&[
        ("empty", "search_tools", json!({"query": "   "})),
        ("long", "search_tools", json!({"query": long})),
        ("none", "search_tools", json!({})),
        (
            "limit",
            "search_tools",
            json!({"query": "weather", "limit": 0}),
        ),
    ]);
    let step = turn(&runtime, Provider::OpenAiChat, &response, &agent).await;
    for (result, search) in step.results.iter().zip(&step.searches) {
        assert_eq!(
            result.error_code(),
            Some(ErrorCode::InvalidArgs),
            "{}",
            result.text()
        );
        assert!(search.error.is_some() && search.found.is_empty());
    }
    assert!(
        step.results[1].text().contains("1000"),
        "{}",
        step.results[1].text()
    );
    // A Responses search with a bad query gets an output without tools.
    let response = json!({"output": [{"type": "tool_search_call", "call_id": "ts", "execution": "client", "arguments": {"query": ""}}]});
    let step = turn(&runtime, Provider::OpenAiResponses, &response, &agent).await;
    assert_eq!(step.messages[0]["type"], "tool_search_output");
    assert_eq!(step.messages[0]["tools"], json!([]));
    assert!(step.searches[0].error.is_some());
}

#[tokio::test]
async fn the_providers_own_search_is_passed_through_and_what_it_found_loaded() {
    let runtime = runtime();
    let agent = runtime.scope();
    let server_tool =
        json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"});
    let declarations = runtime.declare(
        Provider::Anthropic,
        Some(&agent),
        false,
        &SearchOffer::Provider(server_tool.clone()),
    );
    assert!(!declarations.offers_search());
    assert_eq!(declarations.tools().last(), Some(&server_tool));
    assert!(
        declarations
            .tools()
            .iter()
            .all(|t| t["name"] != "search_tools")
    );
    let response = json!({"content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {"pattern": "weather"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    ]});
    let step = runtime
        .run_turn(
            Provider::Anthropic,
            &response,
            Some(&declarations),
            Some(&agent),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(step.results[0].text(), "get_weather ran");
    let wire: Vec<String> = runtime
        .wire_schemas(Some(&agent))
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(wire, ["get_time", "get_weather"], "loaded in the scope");
}

#[tokio::test]
async fn without_deferred_tools_nothing_changes() {
    let runtime = ToolRuntime::new();
    runtime
        .register(tool("get_time", "The local time.", Exposure::Direct))
        .unwrap()
        .keep();
    let agent = runtime.scope();
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        let declared = runtime.declare(provider, Some(&agent), true, &SearchOffer::Client);
        let plain = provider.declare(&runtime.wire_schemas(Some(&agent)), true);
        assert_eq!(declared.tools(), plain.tools());
        assert!(!declared.offers_search());
    }
}
