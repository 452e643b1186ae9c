//! Registration, validation and removal, and restriction per agent.

use super::*;

// ---------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, ToolArgs)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[tokio::test(flavor = "current_thread")]
async fn registered_tools_are_shown_run_validated_and_removed_with_their_handle() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let add = define_tool::<AddArgs, i64>("add", "Add two integers.")
        .body(|args: AddArgs, _ctx| async move { Ok(args.a + args.b) })
        .concurrency(|_: &AddArgs| true)
        .build()
        .unwrap();
    let add_registration = runtime.register(add).unwrap();
    runtime
        .register(text_tool("echo", false, |args, _ctx| async move {
            Ok(args.get("text").cloned().unwrap_or(json!("")))
        }))
        .unwrap()
        .keep();

    let schemas = runtime.schemas(None);
    let mut names: Vec<String> = schemas.iter().map(|s| s.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["add", "echo"]);
    let add_schema = schemas.iter().find(|s| s.name.as_str() == "add").unwrap();
    assert_eq!(
        add_schema.parameters.to_string(),
        // Derived from `AddArgs`: an `i64`'s full range is not written (every integer the
        // lossless boundary admits outside it is refused when the arguments are parsed,
        // still as INVALID_ARGS), so strict modes keep the tool.
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""a":{"type":"integer"},"#,
            r#""b":{"type":"integer"}},"#,
            r#""required":["a","b"]}"#
        )
    );
    assert_eq!(add_schema.to_openai_json()["function"]["name"], "add");

    let sum = runtime
        .execute(call("c1", "add", json!({"a": 2, "b": 40})))
        .await;
    assert!(!sum.is_error(), "{sum:?}");
    assert_eq!(sum.text(), "42");
    assert_eq!(sum.value().map(|v| v.as_value().clone()), Some(json!(42)));

    let invalid = runtime
        .execute(call("c2", "add", json!({"a": "two"})))
        .await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InvalidArgs));
    assert!(invalid.text().contains("a:"), "{}", invalid.text());

    assert_eq!(
        runtime.execution_mode(&call("c3", "add", json!({"a": 1, "b": 2}))),
        ExecutionMode::Parallel
    );
    assert_eq!(
        runtime.execution_mode(&call("c4", "echo", json!({}))),
        ExecutionMode::Exclusive
    );
    // Invalid arguments make a typed tool's call exclusive.
    assert_eq!(
        runtime.execution_mode(&call("c5", "add", json!({"a": "x"}))),
        ExecutionMode::Exclusive
    );

    drop(add_registration);
    let gone = runtime
        .execute(call("c6", "add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(gone.error_code(), Some(ErrorCode::UnknownTool));
    let names: Vec<String> = runtime
        .schemas(None)
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["echo"]);
    assert_eq!(checker.published(), 3);
    checker.assert_clean();
}

// ---------------------------------------------------------------------------------------
// Restriction per agent
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "current_thread")]
async fn a_restricted_agent_sees_unknown_tool_while_another_runs_it() {
    let (runtime, checker) = checked_runtime(ToolRuntime::builder());
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    runtime
        .register(text_tool("shell", false, move |_args, _ctx| {
            r.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("ran")) }
        }))
        .unwrap()
        .keep();
    runtime
        .register(text_tool("read", true, |_args, _ctx| async {
            Ok(json!("read"))
        }))
        .unwrap()
        .keep();
    let restricted = runtime.scope();
    let trusted = runtime.scope();
    let mask = runtime
        .restrict(&restricted, ToolFilter::deny(["shell"]))
        .unwrap();

    let names = |agent| -> Vec<String> {
        let mut names: Vec<String> = runtime
            .schemas(Some(agent))
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&restricted), ["read"]);
    assert_eq!(names(&trusted), ["read", "shell"]);

    let results = runtime
        .run_batch(
            vec![
                call("c1", "shell", json!({})).with_agent(restricted.clone()),
                call("c2", "shell", json!({})).with_agent(trusted.clone()),
                call("c3", "read", json!({})).with_agent(restricted.clone()),
            ],
            CancellationToken::new(),
        )
        .await;
    assert_eq!(results[0].error_code(), Some(ErrorCode::UnknownTool));
    assert_eq!(results[0].text(), "Error: unknown tool \"shell\"");
    assert_eq!(results[1].text(), "ran");
    assert_eq!(results[2].text(), "read");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the trusted call ran");

    // A child agent of the restricted one inherits its mask.
    let child = runtime.child_scope(&restricted);
    let from_child = runtime
        .execute(call("c4", "shell", json!({})).with_agent(child))
        .await;
    assert_eq!(from_child.error_code(), Some(ErrorCode::UnknownTool));

    // Dropping the mask lifts the restriction.
    drop(mask);
    let lifted = runtime
        .execute(call("c5", "shell", json!({})).with_agent(restricted.clone()))
        .await;
    assert_eq!(lifted.text(), "ran");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    checker.assert_clean();
}
