//! One step of an Anthropic Messages turn, replayed from a recorded response (no network):
//! the tools declared in strict mode where they can be, the response's parallel `tool_use`
//! blocks run through the runtime (one with arguments that are not lossless JSON, one of a
//! tool that does not exist), and the request that would be sent next printed as JSON.
//!
//! `cargo run -p tools-runtime --example anthropic_turn`
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
    let runtime = common::runtime()?;
    let agent = runtime.scope();
    let provider = Provider::Anthropic;
    let declarations = provider.declare(&runtime.wire_schemas(Some(&agent)), true);
    for (tool, why) in declarations.refused() {
        eprintln!("{tool} is declared without strict mode: {why}");
    }
    let response: Value = serde_json::from_str(include_str!("turns/anthropic.json"))?;
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
    let mut messages = vec![json!({
        "role": "user",
        "content": "What is the weather in Paris and in Oslo, and what is 12.5 EUR in NOK?"
    })];
    messages.push(json!({"role": "assistant", "content": response["content"]}));
    messages.extend(step.messages);
    let request = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": messages,
        "tools": declarations.tools(),
    });
    println!("{}", serde_json::to_string_pretty(&request)?);
    Ok(())
}
