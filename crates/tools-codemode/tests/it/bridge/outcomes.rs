//! What a run's binding calls produce: values, content and identity, denials, contexts,
//! images, failures, cancellation, cards and the settle log (the reference
//! implementation's Code Mode scenarios 26–50).

use super::*;

/// 26: two sequential echo calls: value, content, arguments, identity, settle events.
#[tokio::test(flavor = "current_thread")]
async fn b26_sequential_calls_value_content_identity_and_events() {
    let seen = Log::default();
    let identities = Arc::new(Mutex::new(Vec::new()));
    let ids = Arc::clone(&identities);
    let whoami = tool("whoami", false, move |_args, ctx| {
        let ids = Arc::clone(&ids);
        async move {
            let call = ctx.call();
            ids.lock().unwrap().push((
                call.call_id.to_string(),
                call.root_call_id.to_string(),
                call.parent,
                call.agent.as_ref().map(AgentScope::key),
            ));
            Ok(Value::String("me".into()))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let first = call(&host, "echo", json!({"text": "one"})).await.unwrap();
        let log = format!("saw {}", first.as_str().unwrap());
        let second = call(&host, "echo", json!({"text": "two"})).await.unwrap();
        call(&host, "whoami", json!({})).await.unwrap();
        completed(Some(second), &[&log])
    });
    let h = harness(runtime, vec![echo(&seen), whoami]);
    let result = h.run().await;

    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        value_of(&result),
        json!({"logs": ["saw echo:one"], "result": "echo:two"})
    );
    assert_eq!(
        result.content(),
        [ContentBlock::text("saw echo:one\necho:two")]
    );
    assert_eq!(result.meta(), None);
    assert!(result.contexts().is_empty());
    assert!(!result.concludes_turn());
    assert_eq!(
        seen.entries(),
        [
            r#"call-1:code:1 root=call-1 args={"text":"one"}"#,
            r#"call-1:code:2 root=call-1 args={"text":"two"}"#
        ]
    );

    // The binding map: one namespace `tools`, sorted names, no `run_code`.
    let namespaces = h.runtime.namespaces.lock().unwrap().clone();
    assert_eq!(namespaces.len(), 1);
    assert_eq!(namespaces[0].global, "tools");
    assert_eq!(namespaces[0].names, ["echo", "whoami"]);
    assert_eq!(
        namespaces[0].error_class,
        Some(ErrorClass::tool_call_error())
    );

    // Sub-call identity (A5): the parent token is the outer execution's token.
    let outer = h.token_of("call-1");
    assert_eq!(h.parent_of("call-1"), None);
    for n in 1..=3 {
        assert_eq!(h.parent_of(&format!("call-1:code:{n}")), Some(outer));
    }
    assert_eq!(
        *identities.lock().unwrap(),
        [(
            "call-1:code:3".to_owned(),
            "call-1".to_owned(),
            Some(outer),
            Some(h.agent.key())
        )]
    );

    // Events (A8): start and settle per call, the full field set.
    let events = h.sink.events();
    assert_eq!(events.len(), 6);
    let Event::Started(start) = &events[0] else {
        panic!("expected a start event first: {events:?}");
    };
    assert_eq!(&*start.root_call_id, "call-1");
    assert_eq!(&*start.parent_call_id, "call-1");
    assert_eq!(&*start.sub_call_id, "call-1:code:1");
    assert_eq!(start.name, "echo");
    assert_eq!(start.arguments, json!({"text": "one"}));
    let settled = h.sink.settles();
    let expected = [("call-1:code:1", "one"), ("call-1:code:2", "two")];
    for (event, (id, text)) in settled.iter().zip(expected) {
        assert_eq!(&*event.root_call_id, "call-1");
        assert_eq!(&*event.parent_call_id, "call-1");
        assert_eq!(&*event.sub_call_id, id);
        assert_eq!(event.name, "echo");
        assert_eq!(event.arguments, json!({ "text": text }));
        assert!(!event.is_error);
        assert_eq!(event.content, [ContentBlock::text(format!("echo:{text}"))]);
    }
    assert_eq!(
        h.sink.summary(),
        [
            "started call-1:code:1",
            "settled call-1:code:1",
            "started call-1:code:2",
            "settled call-1:code:2",
            "started call-1:code:3",
            "settled call-1:code:3"
        ]
    );
}

/// Sub-call ids under outer call ids of every length and script: each is the outer id,
/// `:code:` and the sub-call's number (the lane reuses one buffer for them all).
#[tokio::test(flavor = "current_thread")]
async fn sub_call_ids_extend_outer_ids_of_any_length_and_script() {
    for outer_id in [
        "c".to_owned(),
        "appel-é-ünïcode-✓".to_owned(),
        "x".repeat(89),
        "y".repeat(90),
        "z".repeat(300),
    ] {
        let seen = Log::default();
        let runtime = scripted(|request: CodeRunRequest| async move {
            for text in ["one", "two"] {
                call(&request.host, "echo", json!({ "text": text }))
                    .await
                    .unwrap();
            }
            completed(None, &[])
        });
        let h = harness(runtime, vec![echo(&seen)]);
        let outer = ToolCall::new(
            outer_id.as_str(),
            RUN_CODE,
            json!({"code": "return 1", "description": "ids"}),
        )
        .unwrap()
        .with_agent(h.agent.clone());
        let result = h.execute(outer).await;
        assert!(!result.is_error(), "{result:?}");
        let ids: Vec<String> = h
            .sink
            .settles()
            .iter()
            .map(|event| event.sub_call_id.to_string())
            .collect();
        assert_eq!(
            ids,
            [format!("{outer_id}:code:1"), format!("{outer_id}:code:2")]
        );
    }
}

/// A tool that concludes the turn.
fn finisher() -> ToolDefinition {
    tool("finish", false, |_args, ctx| async move {
        ctx.conclude_turn();
        Ok(Value::String("finished".into()))
    })
}

/// 28: a sub-call concluding the turn concludes the outer call; not when post-execute
/// blocked it and the program caught the failure.
#[tokio::test(flavor = "current_thread")]
async fn b28_a_concluding_sub_call_concludes_the_outer_call() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "finish", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let h = harness(scripted(program), vec![finisher()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("finished"));
    assert!(result.concludes_turn());

    let h = harness(scripted(program), vec![finisher()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::block("finish is blocked here"))
    });
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "finish is blocked here"})
    );
    assert!(!result.concludes_turn());
}

/// 30: a failing tool and a pre-execute denial reject the binding with their messages.
#[tokio::test(flavor = "current_thread")]
async fn b30_failures_and_denials_reject_the_binding() {
    let broken = tool("broken", false, |_args, _ctx| async {
        Err(ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            "deliberate failure",
        ))
    });
    let guarded = tool("guarded", false, |_args, _ctx| async {
        Ok(Value::String("should not run".into()))
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let a = call(&host, "broken", json!({})).await;
        let b = call(&host, "guarded", json!({})).await;
        completed(Some(json!([outcome(a), outcome(b)])), &[])
    });
    let h = harness(runtime, vec![broken, guarded]);
    on_sub_pre(&h.pipeline, |request: PreRequest| async move {
        (request.execution().name().as_str() == "guarded")
            .then(|| Ok(PreDecision::Deny("not on my watch".into())))
    });
    let result = h.run().await;
    let value = value_of(&result);
    // Only the message reaches the program: no code, no `Error: ` prefix.
    assert_eq!(value["result"][0], json!({"error": "deliberate failure"}));
    let denial = value["result"][1]["error"].as_str().unwrap();
    assert!(denial.contains("not on my watch"), "{denial}");
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 2);
    assert!(settled.iter().all(|e| e.is_error));
}

/// 32: a pre-execute listener that fails: the program sees its message; neither the body
/// nor post-execute runs; the settle event is an error.
#[tokio::test(flavor = "current_thread")]
async fn b32_a_failing_pre_execute_listener() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let gated = tool("gated", false, move |_args, _ctx| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok(Value::String("ran".into())) }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let answer = call(&request.host, "gated", json!({})).await;
        completed(Some(outcome(answer)), &[])
    });
    let h = harness(runtime, vec![gated]);
    on_sub_pre(&h.pipeline, |_request: PreRequest| async {
        Some(Err::<PreDecision, ToolError>("gate exploded".into()))
    });
    let posts = Arc::new(AtomicUsize::new(0));
    let p = Arc::clone(&posts);
    on_sub_post(&h.pipeline, move |_request: PostRequest| {
        p.fetch_add(1, Ordering::SeqCst);
        async { Ok(PostDecision::accept()) }
    });
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "gate exploded"})
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(posts.load(Ordering::SeqCst), 0);
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert!(settled[0].is_error);
    assert_eq!(
        settled[0].content,
        [ContentBlock::text("Error: gate exploded")]
    );
}

/// 35: contexts added by post-execute reach the outer result in order with their sources,
/// also when the program later fails.
#[tokio::test(flavor = "current_thread")]
async fn b35_contexts_are_forwarded_in_order_and_survive_a_failure() {
    let add_context = |pipeline: &Pipeline| {
        on_sub_post(pipeline, |request: PostRequest| async move {
            let id = request.execution().call_id().to_owned();
            Ok(PostDecision::accept().with_contexts(vec![
                ToolContext::text(format!("ctx:{id}")).with_source("policy"),
            ]))
        });
    };
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        call(&host, "echo", json!({"text": "a"})).await.unwrap();
        call(&host, "echo", json!({"text": "b"})).await.unwrap();
        completed(None, &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    add_context(&h.pipeline);
    let result = h.run().await;
    assert!(!result.is_error());
    assert_eq!(
        context_texts(&result),
        ["ctx:call-1:code:1", "ctx:call-1:code:2"]
    );
    assert!(
        result
            .contexts()
            .iter()
            .all(|c| c.source.as_deref() == Some("policy"))
    );

    let runtime = scripted(|request: CodeRunRequest| async move {
        call(&request.host, "echo", json!({"text": "a"}))
            .await
            .unwrap();
        failed(FailureKind::Exception, "Error: later failure", &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    add_context(&h.pipeline);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(context_texts(&result), ["ctx:call-1:code:1"]);
}

/// A tool rendering its value as a text block and an image block.
fn picture() -> ToolDefinition {
    ToolDefinition::builder("picture", "returns a picture")
        .output(OutputDecl::new(
            json!({"type": "string"}),
            |_args, value| {
                Ok(vec![
                    ContentBlock::text(value.as_str().unwrap_or_default()),
                    ContentBlock::from_json(
                        &json!({"type": "image", "attachment": {"id": "img-1"}}),
                    )
                    .unwrap(),
                ])
            },
        ))
        .body(|_args, _ctx| async { Ok(Value::String("a cat".into())) })
        .build()
        .unwrap()
}

/// 36: an image result is forwarded once as a context from `tools-code-mode` with all its
/// blocks; not when post-execute blocks or replaces it.
#[tokio::test(flavor = "current_thread")]
async fn b36_image_results_are_forwarded_as_a_context() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "picture", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let h = harness(scripted(program), vec![picture()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("a cat"));
    assert_eq!(result.contexts().len(), 1);
    let context = &result.contexts()[0];
    assert_eq!(context.source.as_deref(), Some(IMAGE_CONTEXT_SOURCE));
    assert_eq!(IMAGE_CONTEXT_SOURCE, "tools-code-mode");
    assert_eq!(
        context.content,
        [
            ContentBlock::text("a cat"),
            ContentBlock::from_json(&json!({"type": "image", "attachment": {"id": "img-1"}}))
                .unwrap()
        ]
    );

    let h = harness(scripted(program), vec![picture()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::block("no pictures"))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"error": "no pictures"}));
    assert!(result.contexts().is_empty());

    let h = harness(scripted(program), vec![picture()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::accept_content(vec![ContentBlock::text(
            "[picture withheld]",
        )]))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("a cat"));
    assert!(result.contexts().is_empty());
}

/// 37: a failed run becomes a `CODE_RUN_FAILED` error result with the captured output.
#[tokio::test(flavor = "current_thread")]
async fn b37_failed_runs_render_with_their_captured_output() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(
                FailureKind::Timeout,
                "compute budget exhausted (300ms busy)",
                &["got this far"],
            )
        }),
        vec![],
    );
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(result.code().unwrap().as_str(), "CODE_RUN_FAILED");
    let text = result.text();
    assert!(text.contains("code run failed (timeout)"), "{text}");
    assert!(
        text.contains("compute budget exhausted (300ms busy)"),
        "{text}"
    );
    assert!(text.contains("got this far"), "{text}");

    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(
                FailureKind::OutputLimit,
                "outer output exceeded 8 bytes",
                &["captured before failure"],
            )
        }),
        vec![],
    );
    let result = h.run().await;
    assert_eq!(
        result.content(),
        [ContentBlock::text(
            "Error: code run failed (output-limit): outer output exceeded 8 bytes\nCaptured output:\ncaptured before failure"
        )]
    );
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));

    // Without logs there is no captured-output section.
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(FailureKind::WorkerExit, "worker exited with code 7", &[])
        }),
        vec![],
    );
    assert_eq!(
        h.run().await.text(),
        "Error: code run failed (worker-exit): worker exited with code 7"
    );
}

/// 40: a call without an owning agent dispatches but logs nothing.
#[tokio::test(flavor = "current_thread")]
async fn b40_no_agent_no_events() {
    let seen = Log::default();
    let runtime = scripted(|request: CodeRunRequest| async move {
        let answer = call(&request.host, "echo", json!({"text": "x"})).await;
        completed(Some(outcome(answer)), &[])
    });
    let h = harness(runtime, vec![echo(&seen)]);
    let result = h
        .execute(outer_call("return 1", "Echo without an agent"))
        .await;
    assert_eq!(value_of(&result)["result"], json!("echo:x"));
    assert_eq!(seen.entries().len(), 1);
    assert!(h.sink.events().is_empty());
}

/// 41: without a runtime, `run_code` is an error result, not a crash.
#[tokio::test(flavor = "current_thread")]
async fn b41_no_runtime_is_an_error_result() {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    let pipeline = Pipeline::new(registry.clone());
    install(&pipeline, &CodeModeConfig::new()).unwrap();
    let result = tokio::time::timeout(
        HANG_GUARD,
        pipeline.execute(outer_call("return 1", "Return one")),
    )
    .await
    .unwrap();
    assert!(result.is_error());
    assert!(
        result.text().contains("requires a code runtime"),
        "{}",
        result.text()
    );
}

/// 42: the call card, and a blank description.
#[tokio::test(flavor = "current_thread")]
async fn b42_call_card_and_blank_description() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async { completed(None, &[]) }),
        vec![],
    );
    let definition = h.registry.get(RUN_CODE, Some(&h.agent)).unwrap();
    let card = definition
        .present_call(&json!({"code": "return 1;", "description": "Count TODO comments per file"}))
        .unwrap();
    assert_eq!(
        card.to_json(),
        json!({
            "card": "generic",
            "title": "Count TODO comments per file",
            "kind": "execute",
            "rawInput": "return 1;"
        })
    );
    // No result presenter: the generic fallback renders the durable content.
    let raw = tools_presentation::RawResult::text("x");
    assert!(definition.present_result(&json!({}), &raw).is_none());

    let result = h
        .execute(outer_call("return 1;", "   ").with_agent(h.agent.clone()))
        .await;
    assert!(result.is_error());
    assert!(
        result.text().contains("invalid description"),
        "{}",
        result.text()
    );
    assert_eq!(h.runtime.runs(), 0);
}

/// 43: rendering of the canonical value.
#[tokio::test(flavor = "current_thread")]
async fn b43_rendering_of_the_canonical_value() {
    let cases: Vec<(Option<Value>, Vec<&str>, &str)> = vec![
        (None, vec!["a", "b"], "a\nb"),
        (Some(json!("raw text")), vec![], "raw text"),
        (Some(json!("r")), vec!["l"], "l\nr"),
        (None, vec![], NO_OUTPUT),
        (
            Some(json!({"a": [1, {}], "b": {}, "c": []})),
            vec![],
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {},\n  \"c\": []\n}",
        ),
        (Some(json!([])), vec![], "[]"),
        (Some(Value::Null), vec![], "null"),
        (Some(json!(42)), vec!["n"], "n\n42"),
    ];
    for (value, logs, expected) in cases {
        let script_value = value.clone();
        let script_logs: Vec<String> = logs.iter().map(|l| (*l).to_owned()).collect();
        let h = harness(
            scripted(move |_request: CodeRunRequest| {
                let (value, logs) = (script_value.clone(), script_logs.clone());
                async move {
                    Ok(CodeRunResult {
                        value: value.map(|v| JsonValue::new(v).unwrap()),
                        logs,
                        error: None,
                    })
                }
            }),
            vec![],
        );
        let result = h.run().await;
        assert_eq!(result.content(), [ContentBlock::text(expected)]);
        let mut canonical = json!({ "logs": logs });
        if let Some(value) = value {
            canonical["result"] = value;
        }
        assert_eq!(value_of(&result), canonical);
        assert_eq!(render_run_code_output(&canonical), expected);
    }
}

/// A tool rendering a 300-character text and a reasoning block.
fn verbose() -> ToolDefinition {
    ToolDefinition::builder("verbose", "talks a lot")
        .output(OutputDecl::new(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            |_args, _value| {
                Ok(vec![
                    ContentBlock::text("x".repeat(300)),
                    ContentBlock::reasoning("thinking it over"),
                ])
            },
        ))
        .body(|_args, _ctx| async { Ok(json!({"n": 300})) })
        .build()
        .unwrap()
}

/// 31, 45: the settle event carries the full rendered content (all block types, long text
/// untruncated) while the program gets the structured value; a log rewrite reshapes it,
/// and a failing rewrite keeps the original.
#[tokio::test(flavor = "current_thread")]
async fn b31_b45_settle_content_and_the_log_rewrite() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "verbose", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let original = vec![
        ContentBlock::text("x".repeat(300)),
        ContentBlock::reasoning("thinking it over"),
    ];

    let h = harness(scripted(program), vec![verbose()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"n": 300}));
    assert_eq!(h.sink.settles()[0].content, original);

    let h = harness_with(scripted(program), vec![verbose()], |config| {
        config.with_log_rewrite(Arc::new(|event: &DispatchSettled| {
            Ok(vec![ContentBlock::text(format!(
                "[{} blocks spilled for {}]",
                event.content.len(),
                event.sub_call_id
            ))])
        }))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"n": 300}));
    assert_eq!(
        h.sink.settles()[0].content,
        [ContentBlock::text("[2 blocks spilled for call-1:code:1]")]
    );

    let h = harness_with(scripted(program), vec![verbose()], |config| {
        config.with_log_rewrite(Arc::new(|_event: &DispatchSettled| {
            Err("spill store unavailable".to_owned())
        }))
    });
    h.run().await;
    assert_eq!(h.sink.settles()[0].content, original);
}

/// 44: a post-execute hook on `run_code` itself replaces the outer content.
#[tokio::test(flavor = "current_thread")]
async fn b44_post_execute_replaces_the_outer_content() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            completed(Some(json!("a very long output")), &["and logs"])
        }),
        vec![],
    );
    h.pipeline
        .on_post_execute(from_fn(|request: PostRequest, next: PostNext| async move {
            if request.execution().name().as_str() == RUN_CODE {
                return Ok(PostDecision::accept_content(vec![ContentBlock::text(
                    "[output spilled: preview]",
                )]));
            }
            next.run(request).await
        }))
        .keep();
    let result = h.run().await;
    assert_eq!(result.text(), "[output spilled: preview]");
    assert_eq!(
        value_of(&result),
        json!({"logs": ["and logs"], "result": "a very long output"})
    );
}
