//! One step of an OpenAI turn, replayed from a recorded response (no network): the tools
//! declared in strict mode, the response's parallel tool calls run through the runtime
//! (one with arguments that are not JSON, one of a tool that does not exist), and the
//! request that would be sent next printed as JSON on stdout.
//!
//! `cargo run -p tools-runtime --example openai_turn` (the Responses API), or with `--chat`
//! (Chat Completions).
#![allow(
    clippy::disallowed_macros,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

#[path = "turns/common.rs"]
mod common;

use serde_json::{Value, json};
use tools_runtime::{CancellationToken, provider::Provider};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let chat = std::env::args().any(|a| a == "--chat");
    let runtime = common::runtime()?;
    let agent = runtime.scope();
    let (provider, recorded) = if chat {
        (Provider::OpenAiChat, include_str!("turns/openai_chat.json"))
    } else {
        (
            Provider::OpenAiResponses,
            include_str!("turns/openai_responses.json"),
        )
    };
    let declarations = provider.declare(&runtime.wire_schemas(Some(&agent)), true);
    for (tool, why) in declarations.refused() {
        eprintln!("{tool} is declared without strict mode: {why}");
    }
    let response: Value = serde_json::from_str(recorded)?;
    let step = runtime
        .run_turn(
            provider,
            &response,
            Some(&declarations),
            Some(&agent),
            CancellationToken::new(),
        )
        .await?;
    for (call, result) in step.calls.iter().zip(&step.results) {
        eprintln!("{} {}: {}", call.call_id, call.name, result.text());
    }
    let question = "What is the weather in Paris and in Oslo, and what is 12.5 EUR in NOK?";
    let request = if chat {
        let mut messages = vec![json!({"role": "user", "content": question})];
        messages.push(response["choices"][0]["message"].clone());
        messages.extend(step.messages);
        json!({"model": "gpt-5", "messages": messages, "tools": declarations.tools()})
    } else {
        let mut input = vec![json!({"role": "user", "content": question})];
        input.extend(response["output"].as_array().cloned().unwrap_or_default());
        input.extend(step.messages);
        json!({"model": "gpt-5", "input": input, "tools": declarations.tools()})
    };
    println!("{}", serde_json::to_string_pretty(&request)?);
    Ok(())
}
