//! Tool search on the three wires, replayed from recorded responses (no network): a scope
//! with one direct tool and deferred ones (one in a namespace), a model response whose only
//! call is a search, answered by `run_turn` (the tool found is loaded in the scope), then a
//! response calling the tool it found. Prints one JSON object on stdout: for each wire
//! (`responses`, `chat`, `anthropic`), the request after the search step and the request
//! after the call, which `cargo xtask wire-check` validates against the official SDKs.
//!
//! `cargo run -p tools-runtime --example search_turn`
#![allow(
    clippy::disallowed_macros,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use serde_json::{Value, json};
use tools_runtime::provider::{Provider, SearchOffer};
use tools_runtime::tools::{Exposure, OutputDecl};
use tools_runtime::{CancellationToken, ToolDefinition, ToolRuntime};

fn tool(
    name: &str,
    description: &str,
    exposure: Exposure,
    namespace: Option<&str>,
) -> Result<ToolDefinition, Box<dyn std::error::Error>> {
    let reply = format!("{name} ran");
    let mut builder = ToolDefinition::builder(name, description)
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
            "additionalProperties": false
        }))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(Value::String(reply)) }
        })
        .exposure(exposure);
    if let Some(namespace) = namespace {
        builder = builder.namespace(namespace);
    }
    Ok(builder.build()?)
}

fn runtime() -> Result<ToolRuntime, Box<dyn std::error::Error>> {
    let runtime = ToolRuntime::new();
    for definition in [
        tool(
            "get_time",
            "The local time in a city.",
            Exposure::Direct,
            None,
        )?,
        tool(
            "get_weather",
            "The current weather (temperature, sky) in a city.",
            Exposure::Deferred,
            None,
        )?,
        tool(
            "hotels__book_room",
            "Book a hotel room in a city.",
            Exposure::Deferred,
            Some("hotels"),
        )?,
        tool(
            "trains__timetable",
            "Train departures from a city's main station.",
            Exposure::Deferred,
            Some("trains"),
        )?,
    ] {
        runtime.register(definition)?.keep();
    }
    Ok(runtime)
}

/// The search response and the call response of one wire.
fn recorded(provider: Provider) -> (Value, Value) {
    match provider {
        Provider::OpenAiResponses => (
            json!({"output": [{
                "type": "tool_search_call", "id": "ts_1", "call_id": "call_search",
                "execution": "client", "status": "completed",
                "arguments": {"query": "weather in a city", "limit": 1}
            }]}),
            json!({"output": [{
                "type": "function_call", "id": "fc_1", "call_id": "call_weather",
                "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"
            }]}),
        ),
        Provider::OpenAiChat => (
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_search", "type": "function",
                "function": {"name": "search_tools", "arguments": "{\"query\":\"weather in a city\",\"limit\":1}"}
            }]}}]}),
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_weather", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}
            }]}}]}),
        ),
        _ => (
            json!({"role": "assistant", "content": [{
                "type": "tool_use", "id": "toolu_search", "name": "search_tools",
                "input": {"query": "weather in a city", "limit": 1}
            }]}),
            json!({"role": "assistant", "content": [{
                "type": "tool_use", "id": "toolu_weather", "name": "get_weather",
                "input": {"city": "Paris"}
            }]}),
        ),
    }
}

/// The conversation so far plus `response` and `messages`, as the wire's next request.
fn request(
    provider: Provider,
    history: &mut Vec<Value>,
    response: &Value,
    messages: Vec<Value>,
    tools: &[Value],
) -> Value {
    match provider {
        Provider::OpenAiResponses => {
            history.extend(response["output"].as_array().cloned().unwrap_or_default());
            history.extend(messages);
            json!({"model": "gpt-5.4", "input": history, "tools": tools})
        }
        Provider::OpenAiChat => {
            history.push(response["choices"][0]["message"].clone());
            history.extend(messages);
            json!({"model": "gpt-5", "messages": history, "tools": tools})
        }
        _ => {
            history.push(response.clone());
            history.extend(messages);
            json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": history, "tools": tools})
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = serde_json::Map::new();
    for (key, provider) in [
        ("responses", Provider::OpenAiResponses),
        ("chat", Provider::OpenAiChat),
        ("anthropic", Provider::Anthropic),
    ] {
        let runtime = runtime()?;
        let agent = runtime.scope();
        let question = json!({"role": "user", "content": "What is the weather in Paris?"});
        let mut history = vec![question];
        let (search, call) = recorded(provider);

        let declarations = runtime.declare(provider, Some(&agent), true, &SearchOffer::Client);
        let step = runtime
            .run_turn(
                provider,
                &search,
                Some(&declarations),
                Some(&agent),
                CancellationToken::new(),
            )
            .await?;
        for search in &step.searches {
            eprintln!("{key}: search {:?} found {:?}", search.query, search.found);
        }
        let after_search = request(
            provider,
            &mut history,
            &search,
            step.messages,
            declarations.tools(),
        );

        let declarations = runtime.declare(provider, Some(&agent), true, &SearchOffer::Client);
        let step = runtime
            .run_turn(
                provider,
                &call,
                Some(&declarations),
                Some(&agent),
                CancellationToken::new(),
            )
            .await?;
        for result in &step.results {
            eprintln!("{key}: get_weather: {}", result.text());
        }
        let after_call = request(
            provider,
            &mut history,
            &call,
            step.messages,
            declarations.tools(),
        );
        out.insert(
            key.to_owned(),
            json!({"after_search": after_search, "after_call": after_call}),
        );
    }
    println!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
    Ok(())
}
