//! One depth limit (`MAX_JSON_DEPTH`) on every side of a run: program result, sub-call
//! arguments, tool outputs.

use super::*;

// One depth limit (`MAX_JSON_DEPTH`, the pipeline's 512) on every side: program result,
// sub-call arguments, tool outputs. Values are built with a raised boundary limit, as a
// runtime configured past the default would hand them over.

/// A `JsonValue` admitted whatever its depth.
fn deep_json(value: Value) -> JsonValue {
    JsonValue::with_limits(value, &tools_json::Limits::default().with_max_depth(10_000)).unwrap()
}

/// `{"value": [[…"leaf"…]]}` nesting exactly `depth` containers (the object included).
fn args_of_depth(depth: usize) -> JsonValue {
    // Not `json!`: it serialises embedded values recursively.
    deep_json(Value::Object(
        [("value".to_owned(), nested(depth - 1))]
            .into_iter()
            .collect(),
    ))
}

/// 46, under the one limit: arguments nesting 511 and 512 levels cross intact to the tool
/// and into the start and settle events; 513 and 600 are refused in the host, named, before
/// numbering: nothing is prepared, dispatched or logged.
#[tokio::test(flavor = "current_thread")]
async fn b46_arguments_cross_up_to_the_depth_limit() {
    assert_eq!(MAX_JSON_DEPTH, 512);
    let seen = Log::default();
    let s = seen.clone();
    let deep = tool("deep", false, move |args, ctx| {
        let (depth, leaf) = depth_and_leaf(&args["value"]);
        s.push(format!("{} {} {leaf}", ctx.call().call_id, depth + 1));
        async { Ok(Value::String("ok".into())) }
    });
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            for depth in [511, 512, 513, 600] {
                let answer = request
                    .host
                    .call("tools", "deep", args_of_depth(depth))
                    .await;
                answers.push(format!(
                    "{depth}: {:?}",
                    answer.map(|v| v.to_string()).map_err(|e| format!(
                        "{}: {}",
                        e.code.unwrap_or_default(),
                        e.message
                    ))
                ));
            }
            completed(None, &[])
        }
    });
    let h = harness(runtime, vec![deep]);
    let result = h.run().await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        answers.entries(),
        [
            r#"511: Ok("\"ok\"")"#,
            r#"512: Ok("\"ok\"")"#,
            r#"513: Err("INVALID_ARGS: arguments of tools.deep nest deeper than the depth limit of 512")"#,
            r#"600: Err("INVALID_ARGS: arguments of tools.deep nest deeper than the depth limit of 512")"#,
        ]
    );
    assert_eq!(
        seen.entries(),
        [r#"call-1:code:1 511 "leaf""#, r#"call-1:code:2 512 "leaf""#]
    );
    assert_eq!(
        h.sink.summary(),
        [
            "started call-1:code:1",
            "settled call-1:code:1",
            "started call-1:code:2",
            "settled call-1:code:2"
        ]
    );
    let settles = h.sink.settles();
    assert_eq!(
        depth_and_leaf(&settles[1].arguments["value"]),
        (511, json!("leaf"))
    );
}

/// A tool returning `[[…"leaf"…]]` of `args.depth` containers (`nested`); its
/// output schema accepts any value; `max_depth` raises its own output limit.
fn deep_output_tool(name: &str, max_depth: Option<usize>) -> ToolDefinition {
    let output = OutputDecl::text(json!({}));
    let output = match max_depth {
        Some(depth) => output.with_max_depth(depth),
        None => output,
    };
    ToolDefinition::builder(name, "returns a deep value")
        .parameters(json!({"type": "object", "properties": {"depth": {"type": "integer"}}}))
        .output(output)
        .body(|args: JsonValue, _ctx: RunContext| {
            let depth = args["depth"].as_u64().unwrap_or(0);
            async move { Ok(nested(usize::try_from(depth).unwrap())) }
        })
        .build()
        .unwrap()
}

/// Tool outputs under the one limit: 511 and 512 levels resolve the binding intact; 513
/// and 600 are refused by the pipeline (`INVALID_TOOL_OUTPUT`, naming the tool and the
/// limit), and by the bridge for a tool that raised its own output limit.
#[tokio::test(flavor = "current_thread")]
async fn tool_outputs_cross_up_to_the_depth_limit() {
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            for name in ["deep_out", "deep_raised"] {
                for depth in [511, 512, 513, 600] {
                    let answer = call(&request.host, name, json!({ "depth": depth })).await;
                    answers.push(match answer {
                        Ok(value) => format!("{name} {depth}: ok {:?}", depth_and_leaf(&value)),
                        Err(message) => format!("{name} {depth}: {message}"),
                    });
                }
            }
            completed(None, &[])
        }
    });
    let h = harness(
        runtime,
        vec![
            deep_output_tool("deep_out", None),
            deep_output_tool("deep_raised", Some(1_000)),
        ],
    );
    let result = h.run().await;
    assert!(!result.is_error(), "{result:?}");
    let answers = answers.entries();
    assert_eq!(answers[0], r#"deep_out 511: ok (511, String("leaf"))"#);
    assert_eq!(answers[1], r#"deep_out 512: ok (512, String("leaf"))"#);
    for (i, depth) in [(2, 513), (3, 600)] {
        let prefix = format!("deep_out {depth}: tool \"deep_out\" returned invalid output: ");
        assert!(answers[i].starts_with(&prefix), "{}", &answers[i][..80]);
        assert!(
            answers[i].ends_with("nesting exceeds the depth limit of 512)"),
            "{}",
            answers[i]
        );
    }
    assert_eq!(
        answers[4..],
        [
            r#"deep_raised 511: ok (511, String("leaf"))"#,
            r#"deep_raised 512: ok (512, String("leaf"))"#,
            "deep_raised 513: output of tool deep_raised nests deeper than the depth limit of 512",
            "deep_raised 600: output of tool deep_raised nests deeper than the depth limit of 512",
        ]
    );
    // Every call ran and was committed; the refused ones settle as errors.
    let settles = h.sink.settles();
    assert_eq!(settles.len(), 8);
    let errors: Vec<bool> = settles.iter().map(|s| s.is_error).collect();
    assert_eq!(
        errors,
        [false, false, true, true, false, false, false, false],
        "the bridge's refusal of a raised output happens after the commit"
    );
}

/// 48 under the one limit: a program result nesting 511 or 512 levels is `run_code`'s
/// result (its `{logs, result}` one level deeper), rendered compactly past the indentation
/// cap; 513 and 600 fail the run, named, instead of an `INVALID_TOOL_OUTPUT` blamed on
/// `run_code`.
#[tokio::test(flavor = "current_thread")]
async fn b48_program_results_cross_up_to_the_depth_limit() {
    for depth in [511, 512, 513, 600] {
        let runtime = scripted(move |_request: CodeRunRequest| async move {
            Ok(CodeRunResult {
                value: Some(deep_json(nested(depth))),
                logs: vec!["built it".to_owned()],
                error: None,
            })
        });
        let h = harness(runtime, vec![]);
        let result = h.run().await;
        if depth <= 512 {
            assert!(!result.is_error(), "{depth}: {result:?}");
            let value = result.value().unwrap();
            assert_eq!(value.depth(), depth + 1);
            assert_eq!(depth_and_leaf(&value["result"]), (depth, json!("leaf")));
            assert!(result.text().starts_with("built it\n[\n  [\n    ["));
        } else {
            assert_eq!(
                result.error_code(),
                Some(ErrorCode::CodeRunFailed),
                "{depth}"
            );
            assert_eq!(
                result.text(),
                "Error: code run failed (invalid-output): program result nesting exceeds the \
                 depth limit of 512\nCaptured output:\nbuilt it"
            );
        }
    }
}

fn assert_deep_rendering(text: &str) {
    assert!(
        text.starts_with("[\n  [\n    ["),
        "{}",
        &text[..text.len().min(80)]
    );
    assert!(text.ends_with(']'));
    assert!(text.len() < 11_000, "{}", text.len());
}

/// 48 (the rendering): a 5 000-deep value renders compactly past the indentation cap,
/// without overflowing. Through `run_code` a result is held to the depth limit (512, see
/// `b48_program_results_cross_up_to_the_depth_limit`); the render itself is total.
#[test]
fn b48_a_deep_result_renders() {
    let mut canonical = serde_json::Map::new();
    canonical.insert("logs".to_owned(), json!([]));
    canonical.insert("result".to_owned(), nested(5_000));
    assert_deep_rendering(&render_run_code_output(&Value::Object(canonical)));
}
