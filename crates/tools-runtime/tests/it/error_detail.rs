//! A failed call's error carries what programs need beside the message: the violations of a
//! schema check as data, and the cause of a tool's own failure.

use serde::Deserialize;
use serde_json::json;
use tools_runtime::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Order {
    items: Vec<Item>,
}

#[derive(Deserialize, ToolArgs)]
struct Item {
    qty: u32,
}

fn runtime() -> ToolRuntime {
    let runtime = ToolRuntime::new();
    let order =
        define_tool::<Order, u32>("order", "Count the items.")
            .body(|args: Order, _ctx| async move {
                Ok(args.items.iter().map(|item| item.qty).sum::<u32>())
            })
            .build()
            .unwrap();
    runtime.register(order).unwrap().keep();
    let raw = ToolDefinition::builder("count", "Count, wrongly.")
        .output(OutputDecl::text(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        ))
        .body(|_args, _ctx| async move { Ok(json!({"n": "many"})) })
        .build()
        .unwrap();
    runtime.register(raw).unwrap().keep();
    let failing = ToolDefinition::builder("read", "Read a file that is not there.")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async move {
            let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
            Err(ToolError::custom("ENOENT", "notes.txt does not exist").with_source(io))
        })
        .build()
        .unwrap();
    runtime.register(failing).unwrap().keep();
    runtime
}

#[tokio::test]
async fn invalid_arguments_carry_their_violations_as_data() {
    let runtime = runtime();
    let call = ToolCall::new("c1", "order", json!({"items": [{"qty": 1}, {}]})).unwrap();
    let result = runtime.execute(call).await;
    let error = result.error().expect("the call fails");
    assert_eq!(result.error_code(), Some(ErrorCode::InvalidArgs));
    let violations = error.violations().expect("the violations are data");
    assert_eq!(violations[0]["pointer"], json!("/items/1/qty"));
    assert_eq!(violations[0]["path"], json!("items[1].qty"));
    assert!(
        error.message().contains("items[1]"),
        "the message still names them: {}",
        error.message()
    );
}

#[tokio::test]
async fn invalid_output_carries_its_violations_as_data() {
    let runtime = runtime();
    let result = runtime
        .execute(ToolCall::new("c1", "count", json!({})).unwrap())
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::InvalidToolOutput));
    let violations = result.error().and_then(ToolError::violations).unwrap();
    assert_eq!(violations[0]["pointer"], json!("/n"));
    assert_eq!(violations[0]["path"], json!("value.n"));
}

#[tokio::test]
async fn a_tool_failure_keeps_its_cause() {
    let runtime = runtime();
    let result = runtime
        .execute(ToolCall::new("c1", "read", json!({})).unwrap())
        .await;
    let error = result.error().expect("the call fails");
    assert_eq!(error.message(), "notes.txt does not exist");
    let cause = std::error::Error::source(error).map(ToString::to_string);
    assert_eq!(cause.as_deref(), Some("no such file"));
    // The model reads the message only.
    assert_eq!(result.text(), "Error: notes.txt does not exist");
}
