//! End to end on QuickJS: real TypeScript programs through the bridge.

use super::*;

use tools_codemode::RuntimeLimits;
use tools_quickjs::QuickJsRuntime;

fn quickjs_harness(tools: Vec<ToolDefinition>) -> Harness {
    quickjs_harness_with(tools, RuntimeLimits::default())
}

fn quickjs_harness_with(tools: Vec<ToolDefinition>, limits: RuntimeLimits) -> Harness {
    let runtime = QuickJsRuntime::new(limits).unwrap();
    real_harness(Arc::new(runtime), tools)
}

async fn run_program(h: &Harness, code: &str) -> ToolResult {
    h.execute(outer_call(code, "Run a TypeScript program").with_agent(h.agent.clone()))
        .await
}

/// `deep_args`: the depth of its `value` argument plus one (the arguments object).
fn deep_args() -> ToolDefinition {
    tool("deep_args", false, |args, _ctx| {
        let (depth, _) = depth_and_leaf(&args["value"]);
        async move { Ok(Value::String(format!("args depth {}", depth + 1))) }
    })
}

/// A program sending arguments of `args` levels, then returning `result` levels.
fn depth_program(args: usize, result: usize) -> String {
    format!(
        r#"
        const nest = (n) => {{ let v = "leaf"; for (let i = 0; i < n; i++) v = [v]; return v; }};
        try {{ console.log(await tools.deep_args({{ value: nest({}) }})); }}
        catch (e) {{ console.log(`refused: ${{e.message}}`); }}
        return nest({result});
        "#,
        args - 1
    )
}

/// The one limit end to end, with the runtime at its default (512, the pipeline's):
/// 512 levels cross on both sides; 513 is refused inside the sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_the_depth_limit_at_the_default() {
    let h = quickjs_harness(vec![deep_args()]);
    let result = run_program(&h, &depth_program(512, 512)).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.value().unwrap().depth(), 513);
    assert_eq!(value_of(&result)["logs"], json!(["args depth 512"]));

    let result = run_program(&h, &depth_program(513, 513)).await;
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    let text = result.text();
    assert!(
        text.starts_with("Error: code run failed (invalid-output): "),
        "{text}"
    );
    assert!(
        text.contains("refused: binding arguments must be lossless JSON: ")
            && text.contains("nesting exceeds the depth limit of 512"),
        "{text}"
    );
}

/// A runtime configured past the default lets 600 levels through; the bridge holds
/// them to the one limit and names the side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_the_bridge_holds_a_raised_runtime_to_the_depth_limit() {
    let limits = RuntimeLimits {
        max_json_depth: 10_000,
        ..RuntimeLimits::default()
    };
    let h = quickjs_harness_with(vec![deep_args()], limits);
    let result = run_program(&h, &depth_program(600, 600)).await;
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(
        result.text(),
        "Error: code run failed (invalid-output): program result nesting exceeds the depth \
         limit of 512\nCaptured output:\nrefused: arguments of tools.deep_args nest deeper \
         than the depth limit of 512"
    );
    let result = run_program(&h, &depth_program(512, 512)).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(value_of(&result)["logs"], json!(["args depth 512"]));
}

/// 50 on QuickJS, whose program runs on its own thread: once a body cancelled the
/// outer call, the program's next binding call never reaches its body. (A regression
/// guard only: the engine thread is rarely fast enough to have shown the old lag; the
/// deterministic proofs are the scripted `b50_*` tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_b50_abort_is_final() {
    let outer_cancel = CancellationToken::new();
    let bodies = Arc::new(AtomicUsize::new(0));
    let h = quickjs_harness(abort_tools(&outer_cancel, &bodies));
    let program = r#"
        try { await tools.cancel_outer({}); } catch (e) { console.log(`first: ${e.message}`); }
        try { await tools.counted({}); } catch (e) { console.log(`next: ${e.message}`); }
        return "finished";
        "#;
    let call = outer_call(program, "Cancel, then call again")
        .with_agent(h.agent.clone())
        .with_cancellation(outer_cancel.clone());
    let result = h.execute(call).await;
    assert!(result.is_error(), "{result:?}");
    // The run either completes (the success becomes `ABORTED`) or sees its token first
    // and fails as `abort`: both are the abort; the second body never runs either way.
    assert!(
        matches!(
            result.error_code(),
            Some(ErrorCode::Aborted | ErrorCode::CodeRunFailed)
        ),
        "{result:?}"
    );
    assert_eq!(bodies.load(Ordering::SeqCst), 0);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_a_typescript_program_calls_echo_twice() {
    let seen = Log::default();
    let h = quickjs_harness(vec![echo(&seen)]);
    let result = run_program(
        &h,
        r#"
        const first: string = await tools.echo({ text: "one" });
        console.log(`saw ${first}`);
        return await tools.echo({ text: "two" });
        "#,
    )
    .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.text(), "saw echo:one\necho:two");
    assert_eq!(
        value_of(&result),
        json!({"logs": ["saw echo:one"], "result": "echo:two"})
    );
    assert_eq!(
        seen.entries(),
        [
            r#"call-1:code:1 root=call-1 args={"text":"one"}"#,
            r#"call-1:code:2 root=call-1 args={"text":"two"}"#
        ]
    );
    assert_eq!(h.sink.settles().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_promise_all_overlaps_safe_calls() {
    let gauge = Arc::new(Gauge::default());
    let barrier = Arc::new(Barrier::new(3));
    let (g, b) = (Arc::clone(&gauge), Arc::clone(&barrier));
    let safe_read = tool("safe_read", true, move |args, _ctx| {
        let (gauge, barrier) = (Arc::clone(&g), Arc::clone(&b));
        async move {
            gauge.enter();
            barrier.wait().await;
            gauge.exit();
            Ok(Value::String(format!(
                "safe_read:{}",
                text_arg(&args, "key")
            )))
        }
    });
    let h = quickjs_harness(vec![safe_read]);
    let result = run_program(
        &h,
        r#"
        const keys: string[] = ["a", "b", "c"];
        const values = await Promise.all(keys.map((key) => tools.safe_read({ key })));
        return values.join(",");
        "#,
    )
    .await;
    assert_eq!(result.text(), "safe_read:a,safe_read:b,safe_read:c");
    assert_eq!(gauge.peak(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qjs_a_failed_call_is_a_typed_tool_call_error() {
    let broken = tool("broken", false, |_args, _ctx| async {
        Err(ToolError::new("deliberate failure"))
    });
    let h = quickjs_harness(vec![broken]);
    let result = run_program(
        &h,
        r#"
        try {
          await tools.broken({});
          return "not reached";
        } catch (e) {
          if (!(e instanceof ToolCallError)) throw e;
          return { name: e.name, toolName: e.toolName, message: e.message };
        }
        "#,
    )
    .await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"name": "ToolCallError", "toolName": "broken", "message": "deliberate failure"})
    );
    assert_eq!(
        result.text(),
        "{\n  \"name\": \"ToolCallError\",\n  \"toolName\": \"broken\",\n  \"message\": \"deliberate failure\"\n}"
    );
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert!(settled[0].is_error);
}
