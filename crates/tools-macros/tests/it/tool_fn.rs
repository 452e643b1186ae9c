//! `#[tool]` on an `async fn`: the generated builder, its schemas, and its body.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_registry::{
    CallInfo, ExecutionToken, JsonValue, RunContext, ToolDefinition, ToolError, ToolName, tool,
};
use tools_schema::{ToolArgs, ToolSchema};

#[derive(Deserialize, ToolArgs)]
struct ReadArgs {
    /// Absolute path.
    path: String,
}

/// Read a file.
///
/// Returns its text.
#[tool(concurrent)]
async fn read_file(args: ReadArgs, _ctx: RunContext) -> Result<String, ToolError> {
    Ok(format!("text of {}", args.path))
}

/// What `stat` returns.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
struct Stat {
    size: u64,
}

/// Size of a file.
#[tool(name = "stat-file")]
pub(crate) async fn stat(args: ReadArgs) -> Result<Stat, ToolError> {
    Ok(Stat {
        size: args.path.len() as u64,
    })
}

/// The current call's id.
#[tool]
async fn whoami(ctx: RunContext) -> Result<String, ToolError> {
    Ok(ctx.call().call_id.to_string())
}

/// Always the same.
#[tool]
async fn constant() -> Result<bool, ToolError> {
    Ok(true)
}

#[test]
fn the_function_becomes_a_typed_tool() {
    let read = read_file().unwrap();
    assert_eq!(read.name().as_str(), "read_file");
    assert_eq!(read.description(), "Read a file.\n\nReturns its text.");
    assert_eq!(
        read.parameters().to_string(),
        r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute path."}},"required":["path"]}"#
    );
    assert_eq!(
        read.output().schema().as_json().to_string(),
        r#"{"type":"string"}"#
    );
    let args = JsonValue::new(json!({"path": "/a"})).unwrap();
    assert!(read.is_concurrency_safe(&args));

    let stat = stat().unwrap();
    assert_eq!(stat.name().as_str(), "stat-file");
    assert!(!stat.is_concurrency_safe(&args));
    assert_eq!(
        stat.output().schema().as_json().to_string(),
        concat!(
            r#"{"type":"object","description":"What `stat` returns.","additionalProperties":false,"#,
            r#""properties":{"size":{"type":"integer","minimum":0}},"#,
            r#""required":["size"]}"#
        )
    );
    for tool in [whoami().unwrap(), constant().unwrap()] {
        assert_eq!(
            tool.parameters().to_string(),
            r#"{"type":"object","properties":{}}"#
        );
    }
}

/// Runs a definition's body on `args` with a detached context whose call id is `c7`.
fn run(def: &ToolDefinition, args: Value) -> Result<Value, ToolError> {
    let args = JsonValue::new(args).unwrap();
    let call = CallInfo {
        call_id: "c7".into(),
        root_call_id: "c7".into(),
        tool: ToolName::new(def.name().as_str()).unwrap(),
        token: ExecutionToken::mint(),
        agent: None,
        parent: None,
        arguments: args.clone(),
    };
    let ctx = RunContext::detached(Arc::new(call), CancellationToken::new());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(def.call(args, ctx))
}

#[test]
fn the_body_gets_typed_arguments_and_its_context() {
    assert_eq!(
        run(&read_file().unwrap(), json!({"path": "/a"})).unwrap(),
        json!("text of /a")
    );
    assert_eq!(
        run(&stat().unwrap(), json!({"path": "/ab"})).unwrap(),
        json!({"size": 3})
    );
    assert_eq!(run(&whoami().unwrap(), json!({})).unwrap(), json!("c7"));
    assert_eq!(
        run(&constant().unwrap(), json!({"x": 1})).unwrap(),
        json!(true)
    );
    let invalid = run(&read_file().unwrap(), json!({"path": 1})).unwrap_err();
    assert!(invalid.to_string().contains("path"), "{invalid}");
}
