//! Fixtures: the catalogue's `t(name)` and `echo` tools, and a minimal `run` that resolves a
//! call through the registry's view, runs the body and renders the value (the full guarded
//! path is `tools-pipeline`'s).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_registry::{
    AgentScope, CallInfo, ExecutionToken, OutputDecl, Registry, RunContext, ToolDefinition,
    ToolName, define_tool,
};
use tools_schema::ToolArgs;

/// A raw tool: parameters `{type: object, properties: {}}`, output string, returns `ran:<name>`.
pub(crate) fn t(name: &str) -> ToolDefinition {
    let reply = format!("ran:{name}");
    ToolDefinition::builder(name, format!("test tool {name}"))
        .parameters(json!({"type": "object", "properties": {}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(Value::String(reply)) }
        })
        .build()
        .unwrap()
}

/// A raw tool replying `reply`.
pub(crate) fn replying(name: &str, reply: &str) -> ToolDefinition {
    let reply = reply.to_owned();
    ToolDefinition::builder(name, "replies")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            let reply = reply.clone();
            async move { Ok(Value::String(reply)) }
        })
        .build()
        .unwrap()
}

#[derive(Deserialize, ToolArgs)]
pub(crate) struct EchoArgs {
    pub(crate) text: Option<String>,
}

/// The typed `echo` fixture: `{text: string (optional)}`, output string.
pub(crate) fn echo() -> ToolDefinition {
    define_tool::<EchoArgs, String>("echo", "echo arguments back")
        .body(|args: EchoArgs, _ctx| async move { Ok(args.text.unwrap_or_default()) })
        .build()
        .unwrap()
}

/// A Code Mode transport stand-in named `run_code`.
pub(crate) fn transport() -> ToolDefinition {
    ToolDefinition::builder("run_code", "Execute a TypeScript program.")
        .output(OutputDecl::text(json!({})))
        .body(|_args, _ctx| async { Ok(json!({"logs": []})) })
        .build()
        .unwrap()
}

pub(crate) fn call_info(name: &str, args: JsonValue, agent: Option<&AgentScope>) -> CallInfo {
    CallInfo {
        call_id: "call-1".into(),
        root_call_id: "call-1".into(),
        tool: ToolName::new(name).unwrap(),
        token: ExecutionToken::mint(),
        agent: agent.cloned(),
        parent: None,
        arguments: args,
    }
}

/// Resolves `name` for `agent`, runs the body and returns the first text block, or
/// `Error: <message>` (`unknown tool "<name>"` when the view has no such tool).
pub(crate) fn run_with(
    registry: &Registry,
    name: &str,
    agent: Option<&AgentScope>,
    args: Value,
) -> String {
    let view = registry.view(agent);
    let Some(def) = view.get(name).cloned() else {
        return format!("Error: unknown tool {name:?}");
    };
    let args = JsonValue::new(args).unwrap();
    let call = Arc::new(call_info(name, args.clone(), agent));
    let ctx = RunContext::detached(call, CancellationToken::new());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    match runtime.block_on(def.call(args.clone(), ctx)) {
        Err(e) => format!("Error: {e}"),
        Ok(value) => {
            let value = JsonValue::new(value).unwrap();
            let content = def.output().render(&args, &value).unwrap();
            content
                .first()
                .and_then(|b| b.as_text())
                .unwrap_or_default()
                .to_owned()
        }
    }
}

pub(crate) fn run(registry: &Registry, name: &str, agent: Option<&AgentScope>) -> String {
    run_with(registry, name, agent, json!({}))
}

/// The visible names of a scope's view.
pub(crate) fn names(registry: &Registry, agent: Option<&AgentScope>) -> Vec<String> {
    registry
        .view(agent)
        .names()
        .map(ToString::to_string)
        .collect()
}

/// The projected names, sorted.
pub(crate) fn sorted_names(registry: &Registry, agent: Option<&AgentScope>) -> Vec<String> {
    let mut names = names(registry, agent);
    names.sort();
    names
}
