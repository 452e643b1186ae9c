//! Group B: the typed helper.

use serde::Deserialize;
use serde_json::json;
use tools_json::JsonValue;
use tools_registry::{ErrorCode, Registry, define_tool};
use tools_schema::{Params, ToolArgs, ToolSchema};

use crate::support::run_with;

#[derive(Deserialize, ToolArgs)]
struct TypedEcho {
    text: String,
    uppercase: Option<bool>,
}

#[test]
fn b01_b02_typed_echo_compiles_and_runs() {
    let def = define_tool::<TypedEcho, String>("typed-echo", "echo")
        .body(|args: TypedEcho, _ctx| async move {
            Ok(if args.uppercase == Some(true) {
                args.text.to_uppercase()
            } else {
                args.text
            })
        })
        .build()
        .unwrap();
    assert_eq!(def.parameters()["required"], json!(["text"]));
    let registry = Registry::new();
    registry.register(def).unwrap().keep();
    assert_eq!(
        run_with(
            &registry,
            "typed-echo",
            None,
            json!({"text": "hello", "uppercase": true})
        ),
        "HELLO"
    );
}

#[derive(Deserialize, ToolArgs)]
struct ReaderArgs {
    path: String,
}

#[test]
fn b03_invalid_arguments_fail_inside_the_body_with_invalid_args() {
    let def = define_tool::<ReaderArgs, String>("reader", "read")
        .body(|args: ReaderArgs, _ctx| async move { Ok(format!("read {}", args.path)) })
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.register(def.clone()).unwrap().keep();
    assert_eq!(
        run_with(&registry, "reader", None, json!({})),
        "Error: invalid arguments: path: required property is missing"
    );
    assert_eq!(
        run_with(&registry, "reader", None, json!({"path": "/x"})),
        "read /x"
    );

    // The error carries the code.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let args = JsonValue::new(json!({})).unwrap();
    let call = std::sync::Arc::new(crate::support::call_info("reader", args.clone(), None));
    let ctx =
        tools_registry::RunContext::detached(call, tokio_util::sync::CancellationToken::new());
    let err = runtime.block_on(def.call(args, ctx)).unwrap_err();
    assert_eq!(
        err.code().and_then(tools_registry::Code::known),
        Some(ErrorCode::InvalidArgs)
    );
}

#[test]
fn b04_the_typed_helper_checks_its_timeout_and_schemas() {
    let zero = define_tool::<ReaderArgs, String>("t", "d")
        .body(|_a: ReaderArgs, _c| async { Ok(String::new()) })
        .timeout(std::time::Duration::ZERO)
        .build()
        .unwrap_err();
    assert!(
        zero.to_string()
            .contains("timeout must be a positive duration")
    );
    let kept = define_tool::<ReaderArgs, String>("t", "d")
        .body(|_a: ReaderArgs, _c| async { Ok(String::new()) })
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap();
    assert_eq!(kept.timeout(), Some(std::time::Duration::from_secs(30)));
    // A hand-written parameter map (the escape hatch) is compiled, and refused, at build.
    #[derive(Deserialize)]
    struct Weird {}
    impl ToolArgs for Weird {
        fn tool_params() -> Params {
            Params::from_json(json!({"n": {"type": "weird"}}))
        }
    }
    let bad = define_tool::<Weird, String>("t", "d")
        .body(|_a: Weird, _c| async { Ok(String::new()) })
        .build()
        .unwrap_err();
    assert_eq!(bad.code(), Some(ErrorCode::UnsupportedSchema));
}

#[test]
fn b05_typed_presenters_validate_softly() {
    use tools_presentation::{
        GenericCallView, GenericResultView, RawResult, ToolCallKind, ToolCallView, ToolResultView,
        TypedPresenter,
    };
    #[derive(Deserialize, ToolArgs)]
    struct OpenArgs {
        path: String,
    }
    struct Open;
    impl TypedPresenter for Open {
        type Args = OpenArgs;
        fn present_call(&self, args: &OpenArgs) -> Option<ToolCallView> {
            Some(
                GenericCallView::new(format!("Open {}", args.path))
                    .with_kind(ToolCallKind::Read)
                    .into(),
            )
        }
        fn present_result(&self, args: &OpenArgs, result: &RawResult) -> Option<ToolResultView> {
            Some(
                GenericResultView::new()
                    .with_title(format!("Opened {}", args.path))
                    .with_content(result.content.clone())
                    .into(),
            )
        }
    }
    let def = define_tool::<OpenArgs, String>("open", "open")
        .body(|a: OpenArgs, _c| async move { Ok(a.path) })
        .presenter(Open)
        .build()
        .unwrap();
    assert_eq!(
        def.present_call(&json!({"path": "/a"}))
            .map(|v| v.title().to_owned()),
        Some("Open /a".into())
    );
    assert!(def.present_call(&json!({})).is_none());
    assert!(
        def.present_result(&json!({"wrong": 1}), &RawResult::text("x"))
            .is_none()
    );
    assert!(
        def.present_result(&json!({"path": "/a"}), &RawResult::text("x"))
            .is_some()
    );
    let plain = crate::support::echo();
    assert!(plain.present_call(&json!({})).is_none());
}

#[derive(Deserialize, serde::Serialize, ToolSchema)]
#[serde(deny_unknown_fields)]
struct Slice {
    text: String,
    lines: u32,
}

#[test]
fn typed_render_and_meta_see_typed_arguments_and_values() {
    let def = define_tool::<ReaderArgs, Slice>("slice", "read a slice")
        .render(|args: &ReaderArgs, out| {
            vec![tools_presentation::ContentBlock::text(format!(
                "{}: {} lines",
                args.path,
                out.value().lines
            ))]
        })
        .presentation_meta(
            |args: &ReaderArgs, out| json!({"path": args.path, "lines": out.value().lines}),
        )
        .body(|_a: ReaderArgs, _c| async {
            Ok(Slice {
                text: "a\nb".into(),
                lines: 2,
            })
        })
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.register(def.clone()).unwrap().keep();
    assert_eq!(
        run_with(&registry, "slice", None, json!({"path": "/f"})),
        "/f: 2 lines"
    );
    let args = JsonValue::new(json!({"path": "/f"})).unwrap();
    let value = JsonValue::new(json!({"text": "a\nb", "lines": 2})).unwrap();
    let meta = def
        .output()
        .presentation_meta(&args, &value)
        .unwrap()
        .unwrap();
    assert_eq!(meta, json!({"path": "/f", "lines": 2}));
    // A value that breaks the output schema cannot be rendered typed.
    let bad = JsonValue::new(json!({"text": 1})).unwrap();
    assert!(def.output().render(&args, &bad).is_err());
}

#[test]
fn b06_args_errors_join_every_violation() {
    #[derive(Deserialize, Debug, ToolArgs)]
    #[allow(dead_code)]
    struct Ab {
        a: String,
        b: Option<f64>,
    }
    let def = define_tool::<Ab, String>("ab", "d")
        .body(|_a: Ab, _c| async { Ok(String::new()) })
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.register(def).unwrap().keep();
    assert_eq!(
        run_with(&registry, "ab", None, json!({"b": "x"})),
        "Error: invalid arguments: a: required property is missing; b: must be a number"
    );
}

#[test]
fn a_compiled_schema_is_shown_the_model_only_once_asked_for_and_then_shared() {
    use tools_registry::{OutputDecl, ToolDefinition};
    use tools_schema::{Schema, params};

    let compiled = params()
        .required("path", Schema::string().describe("Where."))
        .optional("limit", Schema::integer().minimum(1))
        .compile()
        .unwrap();
    // The DSL compiles the validator alone: its JSON Schema is built on first read.
    assert!(!compiled.is_json_rendered());
    let def = ToolDefinition::builder("reader", "read a file")
        .parameters_compiled(compiled.clone())
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async move { Ok(json!("ok")) })
        .build()
        .unwrap();
    let registry = Registry::new();
    registry.register(def.clone()).unwrap().keep();
    // Registering and running a call build nothing the model would see.
    assert_eq!(
        run_with(&registry, "reader", None, json!({"path": "/a"})),
        "ok"
    );
    assert!(!compiled.is_json_rendered());
    // Projecting the tool builds it, once, and the definition shows that very value.
    let schemas = registry.schemas(None);
    assert!(compiled.is_json_rendered());
    assert_eq!(
        schemas[0].parameters.as_value(),
        &json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where."},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["path"]
        })
    );
    assert!(JsonValue::ptr_eq(def.parameters(), compiled.json()));
}
