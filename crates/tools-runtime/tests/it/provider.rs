//! Provider adapters: declarations (strict and not) and result messages against golden
//! files, parsing edge cases, and one turn end to end per provider.

use std::path::PathBuf;

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use tools_runtime::prelude::*;
use tools_runtime::{
    ToolContext, ToolRuntime,
    presentation::ContentBlock,
    provider::{ModelCall, NotStrict, Provider},
};

#[derive(Deserialize, ToolArgs)]
struct ReadArgs {
    /// The file.
    path: String,
    /// First line (1-based).
    #[tool(minimum = 1)]
    offset: Option<u32>,
}

/// `read` (strict everywhere; Anthropic's declaration leaves `minimum` and `maximum` out,
/// the runtime enforces them), `tag` (a free-form map: never strict) and `shout`.
fn runtime() -> ToolRuntime {
    let runtime = ToolRuntime::new();
    let read = define_tool::<ReadArgs, String>("read", "Read a file.")
        .body(|args: ReadArgs, ctx| async move {
            ctx.defer_context(ToolContext::text(format!("{} was read.", args.path)));
            Ok(format!(
                "contents of {} from {}",
                args.path,
                args.offset.unwrap_or(1)
            ))
        })
        .build()
        .unwrap();
    runtime.register(read).unwrap().keep();
    let tag = ToolDefinition::builder("tag", "Tag things.")
        .parameters(json!({"type": "object", "properties": {"labels": {"type": "object"}}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("tagged")) })
        .build()
        .unwrap();
    runtime.register(tag).unwrap().keep();
    let shout = ToolDefinition::builder("shout", "Answer with an image and text.")
        .parameters(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        .output(OutputDecl::new(
            json!({"type": "string"}),
            |_args, _value| {
                Ok(vec![
                    ContentBlock::text("HELLO"),
                    ContentBlock::from_json(
                        &json!({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
                    )
                    .unwrap(),
                ])
            },
        ))
        .body(|_a, _c| async { Ok(json!("HELLO")) })
        .build()
        .unwrap();
    runtime.register(shout).unwrap().keep();
    runtime
}

fn golden(name: &str, actual: &Value) {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "data",
        "provider",
        name,
    ]
    .iter()
    .collect();
    let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(text, expected, "{name} differs from its golden file");
}

const PROVIDERS: [(Provider, &str); 3] = [
    (Provider::OpenAiResponses, "responses"),
    (Provider::OpenAiChat, "chat"),
    (Provider::Anthropic, "anthropic"),
];

#[test]
fn declarations_match_their_golden_files() {
    let runtime = runtime();
    let schemas = runtime.wire_schemas(None);
    for (provider, name) in PROVIDERS {
        let strict = provider.declare(&schemas, true);
        golden(
            &format!("{name}_tools_strict.json"),
            &Value::Array(strict.tools().to_vec()),
        );
        let plain = provider.declare(&schemas, false);
        golden(
            &format!("{name}_tools.json"),
            &Value::Array(plain.tools().to_vec()),
        );
        assert!(plain.refused().is_empty());
        let refused: Vec<&str> = strict.refused().iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(refused, ["tag"]);
        assert!(strict.is_strict("read"));
        let left_out: &[(String, &str)] = match provider {
            Provider::Anthropic => &[
                ("properties.offset".to_owned(), "minimum"),
                ("properties.offset".to_owned(), "maximum"),
            ],
            _ => &[],
        };
        assert_eq!(strict.left_out("read"), left_out);
        let tag = &strict.refused().iter().find(|(t, _)| t == "tag").unwrap().1;
        assert_eq!(
            tag,
            &NotStrict::FreeFormObject {
                path: "properties.labels".into()
            }
        );
        assert_eq!(
            tag.to_string(),
            "`properties.labels` is an object with no declared properties (a map)"
        );
        assert!(strict.is_strict("shout"));
    }
}

fn response(provider: Provider, calls: &[(&str, &str, &str)]) -> Value {
    match provider {
        Provider::OpenAiResponses => json!({"output": calls.iter().map(|(id, name, args)| json!({
            "type": "function_call", "call_id": id, "name": name, "arguments": args
        })).collect::<Vec<_>>()}),
        Provider::OpenAiChat => json!({"choices": [{"message": {"role": "assistant", "tool_calls":
            calls.iter().map(|(id, name, args)| json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": args}
            })).collect::<Vec<_>>()}}]}),
        _ => json!({"content": calls.iter().map(|(id, name, args)| json!({
            "type": "tool_use", "id": id, "name": name,
            "input": serde_json::from_str::<Value>(args).unwrap_or(json!({"raw": args}))
        })).collect::<Vec<_>>()}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_renders_one_result_per_call_in_order_then_the_contexts() {
    let runtime = runtime();
    for (provider, name) in PROVIDERS {
        let declarations = provider.declare(&runtime.wire_schemas(None), true);
        let recorded = response(
            provider,
            &[
                ("c1", "read", r#"{"path": "/a", "offset": null}"#),
                ("c2", "shout", "{}"),
                ("c3", "nope", "{}"),
                ("c4", "read", r#"{"path": 7}"#),
            ],
        );
        let step = runtime
            .run_turn(
                provider,
                &recorded,
                Some(&declarations),
                None,
                CancellationToken::new(),
            )
            .await
            .unwrap();
        let ids: Vec<&str> = step.calls.iter().map(|c| c.call_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
        // Strict everywhere: strict decoding sends `null` for an omitted optional property,
        // which is mapped back.
        assert!(declarations.is_strict("read"), "{name}");
        assert_eq!(step.results[0].text(), "contents of /a from 1", "{name}");
        assert_eq!(step.results[2].error_code(), Some(ErrorCode::UnknownTool));
        assert_eq!(step.results[3].error_code(), Some(ErrorCode::InvalidArgs));
        golden(
            &format!("{name}_results.json"),
            &Value::Array(step.messages),
        );
    }
}

#[test]
fn arguments_that_are_not_json_are_invalid_args_quoting_a_bounded_excerpt() {
    let long = format!("{{\"path\": \"{}", "é".repeat(500));
    for provider in [Provider::OpenAiResponses, Provider::OpenAiChat] {
        let calls = provider
            .parse(
                response(provider, &[("c1", "read", &long), ("c2", "read", "")]),
                None,
            )
            .unwrap();
        let Err(result) = &calls[0].call else {
            panic!("parsed")
        };
        assert_eq!(result.error_code(), Some(ErrorCode::InvalidArgs));
        let text = result.text();
        assert!(text.contains(&"é".repeat(180)), "{text}");
        assert!(!text.contains(&"é".repeat(201)), "{text}");
        assert!(text.contains("more bytes"), "{text}");
        // An empty string is no arguments.
        assert!(calls[1].call.is_ok());
    }
}

#[test]
fn parsed_arguments_reach_the_pipeline_as_the_one_snapshot_they_were_read_into() {
    let runtime = runtime();
    for (provider, name) in PROVIDERS {
        let recorded = response(
            provider,
            &[("c1", "read", r#"{"path": "/a", "offset": 2.0}"#)],
        );
        let calls = provider.parse(&recorded, None).unwrap();
        let Ok(call) = &calls[0].call else {
            panic!("{name}: not parsed")
        };
        // Read once into a canonical lossless snapshot, handed on as it is: the pipeline
        // neither copies it back into a wire value nor checks it again.
        let snapshot = call.json_arguments().unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            snapshot.to_string(),
            r#"{"path":"/a","offset":2}"#,
            "{name}"
        );
        assert!(call.arguments().is_none(), "{name}");
        // Under a strict declaration the value is mapped back first, and is a snapshot
        // again.
        let declarations = provider.declare(&runtime.wire_schemas(None), true);
        if declarations.is_strict("read") {
            let strict = response(
                provider,
                &[("c1", "read", r#"{"path": "/a", "offset": null}"#)],
            );
            let calls = provider.parse(&strict, Some(&declarations)).unwrap();
            let Ok(call) = &calls[0].call else {
                panic!("{name}: not parsed")
            };
            let snapshot = call.json_arguments().unwrap_or_else(|| panic!("{name}"));
            assert_eq!(snapshot.as_value(), &json!({"path": "/a"}), "{name}");
        }
    }
}

#[test]
fn responses_of_another_shape_are_errors_not_panics() {
    let bad = [
        (
            Provider::OpenAiResponses,
            json!({"output": [{"type": "function_call", "name": "x"}]}),
        ),
        (Provider::OpenAiResponses, json!({"output": 3})),
        (
            Provider::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": {}}}]}),
        ),
        (Provider::Anthropic, json!({"content": "text"})),
    ];
    for (provider, response) in bad {
        let error = provider.parse(&response, None).unwrap_err();
        assert!(
            matches!(error, tools_runtime::Error::ProviderResponse { .. }),
            "{error}"
        );
    }
    // No tool calls: an empty step.
    let calls = Provider::OpenAiChat
        .parse(
            json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}),
            None,
        )
        .unwrap();
    assert!(calls.is_empty());
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        // Floats the lossless boundary rewrites (1.0) or refuses (-0.0).
        prop::sample::select(vec![1.0, -0.0, 0.5]).prop_map(|n| json!(n)),
        "[a-z_]{0,6}".prop_map(Value::String),
        // Argument text: JSON, or not.
        prop::sample::select(vec![
            r#"{"path": "/a", "n": 1.0}"#,
            "{",
            "",
            "[1]",
            r#"{"x": -0.0}"#,
            "function_call",
            "tool_use",
        ])
        .prop_map(|text| Value::String(text.into())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("(type|id|call_id|name|input|arguments|output|content|tool_calls|function|choices|message|[a-z]{1,3})", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// What a parse gave, comparable: each call's id, name, and arguments (snapshot or wire
/// value) or its result's code and text.
type Parsed = Vec<(
    String,
    String,
    Result<(Option<Value>, Option<Value>), (Option<ErrorCode>, String)>,
)>;

fn summary(calls: &[ModelCall]) -> Parsed {
    calls
        .iter()
        .map(
            |ModelCall {
                 call_id,
                 name,
                 call,
             }| {
                let call = match call {
                    Ok(call) => Ok((
                        call.json_arguments().map(|args| args.as_value().clone()),
                        call.arguments().cloned(),
                    )),
                    Err(result) => Err((result.error_code(), result.text())),
                };
                (call_id.clone(), name.clone(), call)
            },
        )
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A response handed over parses exactly as the same response borrowed: the same
    /// calls, arguments and results, or the same error. Responses of any shape, and
    /// well-formed ones whose calls carry any arguments (as text or as a value).
    #[test]
    fn an_owned_response_parses_as_the_borrowed_one(
        noise in json_value(),
        calls in prop::collection::vec(("[a-z]{0,3}", json_value(), any::<bool>()), 0..4),
    ) {
        let mut responses = vec![(Provider::OpenAiResponses, noise.clone())];
        responses.push((Provider::OpenAiChat, noise.clone()));
        responses.push((Provider::Anthropic, noise));
        for (provider, _) in PROVIDERS {
            let blocks: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args, as_text))| {
                    let id = format!("c{i}");
                    let text = if *as_text {
                        Value::String(tools_json::to_compact_string(args))
                    } else {
                        args.clone()
                    };
                    match provider {
                        Provider::OpenAiResponses => json!({
                            "type": "function_call", "call_id": id, "name": name, "arguments": text,
                        }),
                        Provider::OpenAiChat => json!({
                            "id": id, "type": "function",
                            "function": {"name": name, "arguments": text},
                        }),
                        _ => json!({"type": "tool_use", "id": id, "name": name, "input": args}),
                    }
                })
                .collect();
            let response = match provider {
                Provider::OpenAiResponses => json!({"output": blocks}),
                Provider::OpenAiChat => {
                    json!({"choices": [{"message": {"role": "assistant", "tool_calls": blocks}}]})
                }
                _ => json!({"content": blocks}),
            };
            responses.push((provider, response));
        }
        for (provider, response) in responses {
            let borrowed = provider.parse(&response, None).map(|calls| summary(&calls));
            let owned = provider.parse(response.clone(), None).map(|calls| summary(&calls));
            match (borrowed, owned) {
                (Ok(borrowed), Ok(owned)) => prop_assert_eq!(borrowed, owned),
                (Err(borrowed), Err(owned)) => {
                    prop_assert_eq!(borrowed.to_string(), owned.to_string());
                }
                (borrowed, owned) => {
                    prop_assert!(false, "{:?} against {:?}", borrowed.is_ok(), owned.is_ok());
                }
            }
        }
    }

    /// Whatever a response holds, parsing answers (calls or an error) and never panics;
    /// every call it yields has the id and name the response gave.
    #[test]
    fn parsing_any_json_never_panics(response in json_value()) {
        for (provider, _) in PROVIDERS {
            if let Ok(calls) = provider.parse(&response, None) {
                for ModelCall { call_id, name, call } in calls {
                    if let Ok(call) = call {
                        prop_assert_eq!(call.call_id(), call_id.as_str());
                        prop_assert_eq!(call.name(), name.as_str());
                    }
                }
            }
        }
    }
}
