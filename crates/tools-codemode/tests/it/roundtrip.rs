//! Property: any lossless JSON value a TypeScript program passes to a tool, and gets back
//! from it, survives the whole trip (QuickJS → host → pipeline → tool → pipeline → QuickJS
//! → `run_code` value) exactly, up to the canonical form (integral floats are integers).

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_codemode::{CodeModeConfig, RuntimeLimits, install};
use tools_json::JsonValue;
use tools_pipeline::{Pipeline, ToolCall};
use tools_quickjs::QuickJsRuntime;
use tools_registry::{OutputDecl, PresentationMode, Registry, ToolDefinition};

/// Finite, non-negative-zero numbers, as JavaScript holds them exactly: integers in the
/// safe range and arbitrary finite doubles.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-(1i64 << 53) + 1..(1i64 << 53)).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite and not -0", |f| f.is_finite()
                && !(*f == 0.0 && f.is_sign_negative()))
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn setup() -> (tokio::runtime::Runtime, Pipeline) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    registry
        .register(
            ToolDefinition::builder("echo", "Returns its `value` argument.")
                .output(OutputDecl::text(json!({})))
                .body(|args, _ctx| async move {
                    Ok(args.get("value").cloned().unwrap_or(Value::Null))
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let pipeline = Pipeline::new(registry);
    let runtime = QuickJsRuntime::new(RuntimeLimits::default()).unwrap();
    install(
        &pipeline,
        &CodeModeConfig::new().with_runtime(Arc::new(runtime)),
    )
    .unwrap();
    (rt, pipeline)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_value_sent_to_a_tool_and_returned_is_unchanged(value in json_value()) {
        let (rt, pipeline) = setup();
        let text = serde_json::to_string(&value).unwrap();
        // JSON.parse, not a literal: an object literal would treat `__proto__` specially.
        let literal = serde_json::to_string(&text).unwrap();
        let code = format!("return await tools.echo({{ value: JSON.parse({literal}) }});");
        let call = ToolCall::new("call-1", "run_code", json!({"code": code, "description": "Round trip a value"})).unwrap();
        let result = rt.block_on(pipeline.execute(call));
        prop_assert!(!result.is_error(), "{}", result.text());
        let expected = JsonValue::new(value).unwrap();
        let got = result.value().and_then(|v| v.get("result")).cloned();
        prop_assert_eq!(got.as_ref(), Some(expected.as_value()));
    }
}
