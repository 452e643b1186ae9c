//! Code Mode through the whole runtime: configuration rules (the reference implementation's
//! Code Mode scenarios 11, 52 and 56), the wire and SDK per mode (its scenarios 1, 12, 13),
//! and `run_code` programs on the embedded runtimes.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_json::ErrorCode;
use tools_quickjs::QuickJsRuntime;
use tools_registry::{OutputDecl, ToolDefinition, ToolError};
use tools_runtime::{
    Error, ToolCall, ToolRuntime,
    codemode::{DispatchSettled, DispatchSink, DispatchStarted, RuntimeLimits},
    tools::PresentationMode,
};

fn quickjs() -> Arc<QuickJsRuntime> {
    Arc::new(QuickJsRuntime::new(RuntimeLimits::default()).unwrap())
}

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo", "Echo the text back, prefixed.")
        .parameters(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }))
        .output(OutputDecl::text(json!({"type": "string"})))
        .concurrency(|_| true)
        .body(|args, _ctx| async move {
            let text = args.get("text").and_then(|t| t.as_str()).unwrap_or("");
            Ok(json!(format!("echo:{text}")))
        })
        .build()
        .unwrap()
}

fn code_runtime(mode: PresentationMode) -> ToolRuntime {
    let runtime = ToolRuntime::builder()
        .mode(mode)
        .code_runtime(quickjs())
        .build()
        .unwrap();
    runtime.register(echo()).unwrap().keep();
    runtime
}

fn run_code(id: &str, code: &str) -> ToolCall {
    ToolCall::new(
        id,
        "run_code",
        json!({"code": code, "description": "Echo two words"}),
    )
    .unwrap()
}

fn names(runtime: &ToolRuntime) -> Vec<String> {
    runtime
        .wire_schemas(None)
        .iter()
        .map(|schema| schema.name.as_str().to_owned())
        .collect()
}

#[test]
fn a_code_mode_without_a_code_runtime_is_refused_at_build_time() {
    for mode in [PresentationMode::Code, PresentationMode::Both] {
        let err = ToolRuntime::builder().mode(mode).build().err();
        assert_eq!(err, Some(Error::CodeRuntimeRequired { mode }));
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("requires a code runtime"), "{text}");
    }
    let err = ToolRuntime::builder()
        .max_parallel_sub_calls(0)
        .build()
        .err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("max_parallel_sub_calls must be a positive integer")
    );
    assert!(ToolRuntime::builder().build().is_ok(), "native needs none");
}

#[test]
fn declaring_code_for_a_scope_needs_a_code_runtime() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let err = runtime.present_as(&scope, PresentationMode::Both).err();
    assert_eq!(
        err,
        Some(Error::CodeRuntimeRequired {
            mode: PresentationMode::Both
        })
    );
    assert!(runtime.present_as(&scope, PresentationMode::Native).is_ok());
}

#[test]
fn the_wire_and_the_sdk_follow_the_mode() {
    let native = ToolRuntime::builder()
        .code_runtime(quickjs())
        .build()
        .unwrap();
    native.register(echo()).unwrap().keep();
    assert_eq!(names(&native), ["echo"]);
    assert_eq!(native.sdk_section(None), "", "no SDK in native mode");

    let code = code_runtime(PresentationMode::Code);
    assert_eq!(names(&code), ["run_code"]);
    let sdk = code.sdk_section(None);
    assert!(sdk.contains("declare const tools: {"), "{sdk}");
    assert!(sdk.contains("echo: {"), "{sdk}");
    assert!(!sdk.contains("run_code:"), "{sdk}");
    assert_eq!(sdk, code.sdk_section(None), "byte-identical when unchanged");
    let schema = &code.wire_schemas(None)[0];
    assert!(schema.description.contains("Execute a TypeScript program"));
    assert_eq!(
        schema.parameters.as_value()["properties"]["code"]["description"],
        json!("The program: the body of an async TypeScript function.")
    );
    assert_eq!(
        schema.parameters.as_value()["required"],
        json!(["code", "description"])
    );

    assert!(
        code.code_only_section(None)
            .contains("`run_code` is the only tool you can call directly")
    );
    assert_eq!(native.code_only_section(None), "");

    let both = code_runtime(PresentationMode::Both);
    assert_eq!(names(&both), ["echo", "run_code"]);
    assert_eq!(
        both.code_only_section(None),
        "",
        "native tools stay callable"
    );
    assert!(both.sdk_section(None).contains("echo: {"));
}

#[test]
fn a_python_runtime_gives_the_python_flavour_and_sdk() {
    let python = tools_sandbox::PythonRuntime::new(RuntimeLimits::default()).unwrap();
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_runtime(Arc::new(python))
        .build()
        .unwrap();
    runtime.register(echo()).unwrap().keep();
    let schema = &runtime.wire_schemas(None)[0];
    assert!(schema.description.contains("Execute a Python program"));
    assert!(!schema.description.contains("TypeScript"));
    let sdk = runtime.sdk_section(None);
    assert!(sdk.contains("class Tools(Protocol):"), "{sdk}");
    assert!(sdk.contains("async def echo(self, args:"), "{sdk}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_program_calls_tools_and_its_output_is_rendered() {
    let runtime = code_runtime(PresentationMode::Code);
    let program = r#"
        const one: string = await tools.echo({ text: "one" });
        console.log("saw " + one);
        return await tools.echo({ text: "two" });
    "#;
    let result = runtime.execute(run_code("call-1", program)).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.text(), "saw echo:one\necho:two");
    assert_eq!(
        result.value().map(|v| v.as_value().clone()),
        Some(json!({"logs": ["saw echo:one"], "result": "echo:two"}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sub_call_is_a_catchable_tool_call_error() {
    let runtime = code_runtime(PresentationMode::Code);
    runtime
        .register(
            ToolDefinition::builder("fail", "Always fails.")
                .output(OutputDecl::text(json!({})))
                .body(|_args, _ctx| async { Err(ToolError::new("deliberate failure")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let program = r#"
        try {
            await tools.fail({});
            return "not reached";
        } catch (e) {
            return { name: e.name, tool: e.toolName, message: e.message };
        }
    "#;
    let result = runtime.execute(run_code("call-1", program)).await;
    assert_eq!(
        result.value().map(|v| v.as_value().clone()),
        Some(
            json!({"logs": [], "result": {"name": "ToolCallError", "tool": "fail", "message": "deliberate failure"}})
        ),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_throws_is_a_code_run_failure_with_its_output() {
    let runtime = code_runtime(PresentationMode::Both);
    let program = r#"console.log("got this far"); throw new Error("kaboom");"#;
    let result = runtime.execute(run_code("call-1", program)).await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    let text = result.text();
    assert!(
        text.starts_with("Error: code run failed (exception): "),
        "{text}"
    );
    assert!(text.contains("kaboom"), "{text}");
    assert!(text.ends_with("\nCaptured output:\ngot this far"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_native_call_under_code_mode_routes_back_to_run_code() {
    let runtime = code_runtime(PresentationMode::Code);
    let result = runtime
        .execute(ToolCall::new("c1", "echo", json!({"text": "x"})).unwrap())
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::UnknownTool));
    assert!(
        result
            .text()
            .contains("only `run_code` is callable directly")
    );
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<String>>,
}

impl DispatchSink for Recorder {
    fn started(&self, event: &DispatchStarted) {
        self.events
            .lock()
            .unwrap()
            .push(format!("start {} {}", event.sub_call_id, event.name));
    }

    fn settled(&self, event: &DispatchSettled) {
        self.events.lock().unwrap().push(format!(
            "settle {} {} error={}",
            event.sub_call_id, event.name, event.is_error
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_reports_its_sub_calls_to_the_dispatch_sink() {
    let recorder = Arc::new(Recorder::default());
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_runtime(quickjs())
        .dispatch_sink(recorder.clone())
        .build()
        .unwrap();
    runtime.register(echo()).unwrap().keep();
    let agent = runtime.scope();
    let program = r#"
        const all = await Promise.all([tools.echo({ text: "a" }), tools.echo({ text: "b" })]);
        return all.join(",");
    "#;
    let result = runtime
        .execute(run_code("call-7", program).with_agent(agent))
        .await;
    assert_eq!(result.text(), "echo:a,echo:b");
    let events = recorder.events.lock().unwrap().clone();
    let at = |event: &str| {
        events
            .iter()
            .position(|e| e == event)
            .unwrap_or_else(|| panic!("{event} missing from {events:?}"))
    };
    assert_eq!(events.len(), 4, "{events:?}");
    // Starts and commits follow submission order; each call settles after it started
    // (whether call 1 settles before call 2 starts is up to the scheduler).
    assert!(at("start call-7:code:1 echo") < at("start call-7:code:2 echo"));
    assert!(
        at("settle call-7:code:1 echo error=false") < at("settle call-7:code:2 echo error=false")
    );
    assert!(at("start call-7:code:2 echo") < at("settle call-7:code:2 echo error=false"));
    assert!(at("start call-7:code:1 echo") < at("settle call-7:code:1 echo error=false"));
    drop(events);

    // Without an agent: dispatch works, nothing is logged.
    recorder.events.lock().unwrap().clear();
    let result = runtime.execute(run_code("call-8", program)).await;
    assert_eq!(result.text(), "echo:a,echo:b");
    assert!(recorder.events.lock().unwrap().is_empty());
}

/// A limit of one body at a time counts `run_code` and its sub-calls alike: the program's
/// sub-call waits for the permit its own run holds. Cancelling the outer call must still
/// end the run (the sub-call stops waiting on the layer), not leave it waiting forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_call_waiting_on_a_limit_its_run_holds_ends_with_the_outer_call() {
    let runtime = code_runtime(PresentationMode::Code);
    runtime
        .on_execute(tools_pipeline::layer(
            tower::limit::ConcurrencyLimitLayer::new(1),
        ))
        .keep();
    let reached = Arc::new(tokio::sync::Notify::new());
    let r = Arc::clone(&reached);
    runtime
        .on_pre_execute(tools_pipeline::from_fn(
            move |req: tools_pipeline::PreRequest, next: tools_pipeline::PreNext| {
                if req.execution().parent().is_some() {
                    r.notify_one();
                }
                next.run(req)
            },
        ))
        .keep();
    let cancel = tokio_util::sync::CancellationToken::new();
    let call =
        run_code("c1", "return await tools.echo({ text: 'x' });").with_cancellation(cancel.clone());
    let running = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.execute(call).await }
    });
    // The sub-call passed pre-execute: it is on its way to the limit its run holds.
    reached.notified().await;
    crate::support::settle().await;
    cancel.cancel();
    // The bound turns a regression (the run never ends) into a failure, not a hang.
    let result = tokio::time::timeout(std::time::Duration::from_secs(60), running)
        .await
        .expect("the run never ended")
        .unwrap();
    assert!(result.is_error(), "{result:?}");
}
