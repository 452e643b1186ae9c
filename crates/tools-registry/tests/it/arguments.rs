//! `ToolDefinition::check_arguments`: the argument check of a definition, run without its
//! body (the pipeline runs it before an approval is asked). It fails exactly as the body
//! would fail before it starts: same code, same message.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_json::JsonValue;
use tools_registry::{ErrorCode, OutputDecl, RunContext, ToolDefinition, ToolError, define_tool};
use tools_schema::ToolArgs;

use crate::support::call_info;

#[derive(Deserialize, ToolArgs)]
struct WriteArgs {
    path: String,
    content: String,
}

/// What the body of `def` gives `args`.
fn body_result(def: &ToolDefinition, args: &JsonValue) -> Result<Value, ToolError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = Arc::new(call_info(def.name().as_str(), args.clone(), None));
    let ctx = RunContext::detached(call, CancellationToken::new());
    runtime.block_on(def.call(args.clone(), ctx))
}

fn args(value: Value) -> JsonValue {
    JsonValue::new(value).unwrap()
}

fn code(err: &ToolError) -> Option<ErrorCode> {
    err.code().and_then(tools_registry::Code::known)
}

#[test]
fn a_typed_tool_checks_its_arguments_without_running_its_body() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    let def = define_tool::<WriteArgs, String>("write_file", "Write a file.")
        .body(move |a: WriteArgs, _ctx| {
            r.fetch_add(1, Ordering::SeqCst);
            async move { Ok(format!("{} ({} bytes)", a.path, a.content.len())) }
        })
        .build()
        .unwrap();
    for invalid in [
        json!({"path": "/work/a"}),
        json!({"path": 1, "content": null}),
        json!([]),
    ] {
        let invalid = args(invalid);
        let checked = def.check_arguments(&invalid).unwrap_err();
        assert_eq!(code(&checked), Some(ErrorCode::InvalidArgs));
        assert_eq!(runs.load(Ordering::SeqCst), 0, "the check runs no body");
        let ran = body_result(&def, &invalid).unwrap_err();
        assert_eq!(checked, ran, "the body's own failure");
    }
    assert_eq!(
        def.check_arguments(&args(json!({"path": "/work/a"})))
            .unwrap_err()
            .message(),
        "invalid arguments: content: required property is missing"
    );
    let valid = args(json!({"path": "/work/a", "content": ""}));
    assert_eq!(def.check_arguments(&valid), Ok(()));
    assert_eq!(
        body_result(&def, &valid).unwrap(),
        json!("/work/a (0 bytes)")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Valid for the parameter map, not for the type: the map allows any string `id`.
#[derive(Deserialize)]
struct Mismatched {
    id: u32,
}

impl ToolArgs for Mismatched {
    fn tool_params() -> tools_schema::Params {
        tools_schema::params().required("id", tools_schema::Schema::string())
    }
}

#[test]
fn a_typed_tool_checks_what_only_deserializing_finds_too() {
    let def = define_tool::<Mismatched, u32>("lookup", "Look an id up.")
        .body(|a: Mismatched, _ctx| async move { Ok(a.id) })
        .build()
        .unwrap();
    let args = args(json!({"id": "seven"}));
    let checked = def.check_arguments(&args).unwrap_err();
    assert_eq!(code(&checked), Some(ErrorCode::InvalidArgs));
    assert!(
        checked.message().starts_with(
            "invalid arguments: they match the schema but not the tool's argument type"
        ),
        "{checked}"
    );
    assert_eq!(checked, body_result(&def, &args).unwrap_err());
}

#[test]
fn a_foreign_schema_is_checked_without_running_the_body() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    let def = ToolDefinition::builder("convert", "An imported tool.")
        .foreign_parameters(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "when": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            },
            "required": ["n"]
        }))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            r.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("ok")) }
        })
        .build()
        .unwrap();
    let invalid = args(json!({"n": 0, "extra": true}));
    let checked = def.check_arguments(&invalid).unwrap_err();
    assert_eq!(code(&checked), Some(ErrorCode::InvalidArgs));
    assert!(
        checked.message().starts_with("invalid arguments: "),
        "{checked}"
    );
    assert_eq!(checked, body_result(&def, &invalid).unwrap_err());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // What the subset does not enforce (`anyOf`) is not checked here either.
    let valid = args(json!({"n": 2, "when": 3}));
    assert_eq!(def.check_arguments(&valid), Ok(()));
    assert_eq!(body_result(&def, &valid).unwrap(), json!("ok"));
}

#[test]
fn a_raw_tool_has_no_check_unless_it_declares_one() {
    let raw = ToolDefinition::builder("raw", "validates its own input")
        .parameters(json!({"type": "object", "required": ["x"]}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .build()
        .unwrap();
    assert_eq!(raw.check_arguments(&args(json!({}))), Ok(()));

    let declared = ToolDefinition::builder("declared", "declares its check")
        .output(OutputDecl::text(json!({"type": "string"})))
        .argument_check(|args: &JsonValue| match args.get("x") {
            Some(_) => Ok(()),
            None => Err(ToolError::with_code(ErrorCode::InvalidArgs, "x is missing")),
        })
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .build()
        .unwrap();
    let missing = declared.check_arguments(&args(json!({}))).unwrap_err();
    assert_eq!(missing.message(), "x is missing");
    assert_eq!(declared.check_arguments(&args(json!({"x": 1}))), Ok(()));

    let panicking = ToolDefinition::builder("panicking", "a broken check")
        .output(OutputDecl::text(json!({"type": "string"})))
        .argument_check(|_args: &JsonValue| -> Result<(), ToolError> { panic!("check broke") })
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .build()
        .unwrap();
    let broke = panicking.check_arguments(&args(json!({}))).unwrap_err();
    assert_eq!(broke.message(), "panicked: check broke");
}
