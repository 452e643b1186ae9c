//! The QuickJS runtime against the reference implementation's code runtime scenarios (its
//! Code Mode scenarios 57–78): values, logs, failures, budgets, aborts and memory. The
//! bindings, ambient authority and the runtime's lifecycle are in `quickjs_bindings.rs`.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tools_codemode::{CodeRunRequest, CodeRuntime, Language, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;

use tools_codemode::testing::{Host, failure, run, success, tools};

pub(crate) fn runtime() -> QuickJsRuntime {
    QuickJsRuntime::new(RuntimeLimits {
        wall: Duration::from_secs(60),
        ..RuntimeLimits::default()
    })
    .unwrap()
}

pub(crate) fn runtime_with(limits: RuntimeLimits) -> QuickJsRuntime {
    QuickJsRuntime::new(limits).unwrap()
}

fn capped(max_output_bytes: usize) -> QuickJsRuntime {
    runtime_with(RuntimeLimits {
        max_output_bytes,
        ..RuntimeLimits::default()
    })
}

#[tokio::test]
async fn descriptors() {
    let runtime = runtime();
    assert_eq!(runtime.language(), Language::TypeScript);
    assert_eq!(runtime.isolation(), "embedded-thread");
}

#[tokio::test]
async fn returns_every_json_kind_exactly() {
    let runtime = runtime();
    let (result, _) = run(
        &runtime,
        r#"return { s: "x€\n", i: -3, f: 2.5, t: true, n: null, a: [1, [2, {}]], o: { ["__proto__"]: 1, "b c": [] }, big: 2 ** 60, huge: 1e300, whole: 4.0 };"#,
    )
    .await;
    assert_eq!(
        success(&result),
        r#"{"s":"x€\n","i":-3,"f":2.5,"t":true,"n":null,"a":[1,[2,{}]],"o":{"__proto__":1,"b c":[]},"big":1152921504606846976,"huge":1e+300,"whole":4}"#
    );
}

#[tokio::test]
async fn undefined_is_no_value_and_null_is_a_value() {
    let runtime = runtime();
    for program in ["return;", "return undefined;", "const x = 1;", ""] {
        let (result, _) = run(&runtime, program).await;
        assert!(result.error.is_none(), "{program}: {:?}", result.error);
        assert_eq!(result.value, None, "{program}");
    }
    let (result, _) = run(&runtime, "return null;").await;
    assert_eq!(success(&result), "null");
}

#[tokio::test]
async fn a_typescript_program_with_types_runs() {
    let runtime = runtime();
    let program = "interface Point { x: number; y: number }\n\
        type Pair<T> = [T, T];\n\
        const p: Point = { x: 1, y: 2 };\n\
        const pair: Pair<number> = [p.x, p.y] as Pair<number>;\n\
        console.log(\"point\", p);\n\
        console.warn(\"careful\");\n\
        return pair[0]! + pair[1];";
    let (result, _) = run(&runtime, program).await;
    assert_eq!(success(&result), "3");
    assert_eq!(result.logs, ["point { x: 1, y: 2 }", "careful"]);
}

#[tokio::test]
async fn the_five_console_methods_log_one_entry_per_call() {
    let runtime = runtime();
    let program = r#"
        console.log("a", 1, -0, 1e21, true, null, undefined);
        console.info([1, "s", [2, [3, [4, [5, [6]]]]]]);
        console.warn({ f() {}, g: Symbol("s"), h: 10n, "k-k": "v" });
        console.error(new Error("boom").message);
        console.debug(Object.create(null), [], {});
    "#;
    let (result, _) = run(&runtime, program).await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(
        result.logs,
        [
            "a 1 -0 1e+21 true null undefined",
            "[ 1, 's', [ 2, [ 3, [ 4, [ 5, [Array] ] ] ] ] ]",
            "{ f: [Function: f], g: Symbol(s), h: 10n, 'k-k': 'v' }",
            "boom",
            "[Object: null prototype] {} [] {}",
        ]
    );
}

#[tokio::test]
async fn deep_values_cross_both_ways() {
    // Past the default limit (512, the pipeline's): standalone, a runtime may raise it.
    let runtime = runtime_with(RuntimeLimits {
        max_json_depth: 10_000,
        ..RuntimeLimits::default()
    });
    let program = r#"
        let v = "leaf";
        for (let i = 0; i < 5000; i++) v = [v];
        const back = await tools.identity(v);
        let depth = 0;
        let cursor = back;
        while (Array.isArray(cursor)) { cursor = cursor[0]; depth++; }
        if (depth !== 5000 || cursor !== "leaf") throw new Error("lost depth " + depth);
        return back;
    "#;
    let (result, host) = run(&runtime, program).await;
    let text = success(&result);
    assert_eq!(result.value.as_ref().unwrap().depth(), 5000);
    assert!(text.starts_with("[[[[\"leaf\"]") || text.starts_with("[[[["));
    assert!(text.contains("[\"leaf\"]]") && text.ends_with("]]]]"));
    assert_eq!(text.len(), 5000 * 2 + "\"leaf\"".len());
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn a_large_array_returns_exactly() {
    let runtime = runtime();
    let (result, _) = run(
        &runtime,
        "return Array.from({ length: 50000 }, (_, i) => i);",
    )
    .await;
    let value = result.value.unwrap();
    assert_eq!(value.as_array().unwrap().len(), 50_000);
    assert_eq!(value[49_999], 49_999);
}

#[tokio::test]
async fn integers_beyond_doubles_are_refused_not_rounded() {
    let runtime = runtime();
    let program = r#"
        const exact = await tools.exactBig({});
        try { await tools.big({}); return "rounded"; }
        catch (e) { return { exact, typed: e instanceof ToolCallError, message: e.message }; }
    "#;
    let (result, _) = run(&runtime, program).await;
    let text = success(&result);
    assert!(text.contains(r#""exact":1152921504606846976"#), "{text}");
    assert!(text.contains(r#""typed":true"#), "{text}");
    assert!(
        text.contains("binding resolution must be lossless JSON"),
        "{text}"
    );
}

#[tokio::test]
async fn exceptions_carry_the_stack_and_keep_earlier_logs() {
    let runtime = runtime();
    let (result, _) = run(
        &runtime,
        "console.log(\"before\");\nthrow new Error(\"kaboom\");",
    )
    .await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.starts_with("Error: kaboom\n"), "{message}");
    assert!(message.contains("program.ts:2"), "{message}");
    assert_eq!(result.logs, ["before"]);
    assert_eq!(result.value, None);

    let (result, _) = run(&runtime, "throw \"xy\";").await;
    assert_eq!(failure(&result), Some(("exception", "xy".to_owned())));
    let (result, _) = run(&runtime, "throw { toString() { throw 1; } };").await;
    assert_eq!(
        failure(&result),
        Some((
            "exception",
            "program threw an unrenderable value".to_owned()
        ))
    );
    let (result, _) = run(&runtime, "return (1 +;").await;
    assert_eq!(failure(&result).unwrap().0, "exception");
}

#[tokio::test]
async fn the_stack_trace_limit_is_made_a_number_when_set_and_still_applies() {
    // The prelude's own `Error.stackTraceLimit` accessor converts a value when it is set
    // (the engine would convert it, running the program's code, every time an error is
    // built, where a stop could be swallowed; see `engine/stop.rs`).
    let runtime = runtime();
    let (result, _) = run(
        &runtime,
        "let conversions = 0;\n\
         (Error as any).stackTraceLimit = { valueOf() { conversions++; return 1; } };\n\
         function a() { throw new Error(\"x\"); }\n\
         function b() { a(); }\n\
         const frames: number[] = [];\n\
         for (let i = 0; i < 3; i++) {\n\
           try { b(); } catch (e) { frames.push((e as Error).stack!.split(\"\\n\").filter((l) => l.includes(\" at \")).length); }\n\
         }\n\
         (Error as any).stackTraceLimit = 10;\n\
         let deep = 0;\n\
         try { b(); } catch (e) { deep = (e as Error).stack!.split(\"\\n\").filter((l) => l.includes(\" at \")).length; }\n\
         return [conversions, frames, deep, typeof (Error as any).stackTraceLimit];",
    )
    .await;
    assert_eq!(success(&result), r#"[1,[1,1,1],3,"number"]"#);
}

#[tokio::test]
async fn non_erasable_typescript_fails_before_the_engine() {
    let runtime = runtime();
    let (result, host) = run(&runtime, "await tools.echo({});\nenum E { A }\nreturn E.A;").await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.contains("enum"), "{message}");
    assert!(message.contains("program.ts:2:"), "{message}");
    assert!(host.calls().is_empty(), "nothing ran");
}

#[tokio::test]
async fn completions_that_are_not_lossless_json_are_invalid_output() {
    let runtime = runtime();
    let programs = [
        "return { f: () => 1 };",
        "return new Date(0);",
        "return -0;",
        "return [NaN];",
        "return 1n;",
        "return [1, , 3];",
        "const a = []; a.push(a); return a;",
        "return Symbol('s');",
        "return new Proxy({}, {});",
        "const a = [1]; a.extra = 2; return a;",
        "return Object.create({ looks: 'plain' });",
        "return { get x() { throw new Error('getter'); } };",
        "return '\\ud800';",
    ];
    for program in programs {
        let (result, _) = run(&runtime, program).await;
        let (kind, message) = failure(&result).unwrap();
        assert_eq!(kind, "invalid-output", "{program}");
        // The message names where the value is not JSON: `$` or a path below it.
        assert!(
            message.starts_with("program completion must be lossless JSON: $"),
            "{program}: {message}"
        );
        assert_eq!(result.value, None, "{program}");
    }
    // Shared (acyclic) references are fine.
    let (result, _) = run(&runtime, "const o = { a: 1 }; return [o, o];").await;
    assert_eq!(success(&result), r#"[{"a":1},{"a":1}]"#);
}

#[tokio::test]
async fn the_output_ledger_is_exact_at_the_cap() {
    let cases = [
        (7, "return \"€\";", true),
        (6, "return \"€\";", false),
        (11, "console.log(\"abc\"); return \"xy\";", true),
        (10, "console.log(\"abc\"); return \"xy\";", false),
        (11, "console.log(\"abc\"); throw \"xy\";", true),
        (10, "console.log(\"abc\"); throw \"xy\";", false),
        (64, "return \"x\".repeat(10000);", false),
    ];
    for (cap, program, fits) in cases {
        let (result, _) = run(&capped(cap), program).await;
        let over = failure(&result).filter(|(kind, _)| *kind == "output-limit");
        if fits {
            assert!(over.is_none(), "cap {cap}: {program}: {:?}", result.error);
        } else {
            assert_eq!(
                over.map(|(_, message)| message),
                Some(format!("outer output exceeded {cap} bytes")),
                "cap {cap}: {program}"
            );
            assert_eq!(result.value, None);
        }
    }
}

#[tokio::test]
async fn logs_over_the_cap_are_trimmed_to_a_fitting_prefix() {
    let (result, _) = run(
        &capped(300),
        "for (let i = 0; i < 1000; i++) console.log('line ' + i);",
    )
    .await;
    assert_eq!(failure(&result).unwrap().0, "output-limit");
    assert!(!result.logs.is_empty());
    assert_eq!(result.logs[0], "line 0");
    let bytes = serde_json::to_string(&result.logs).unwrap().len();
    assert!(bytes < 300, "{bytes}");

    let (result, _) = run(
        &capped(96),
        "console.log('start-' + 'x'.repeat(100000)); console.log('never');",
    )
    .await;
    assert_eq!(result.logs.len(), 1);
    assert!(result.logs[0].starts_with("start-"));

    let (result, _) = run(&capped(64), "throw new Error('m'.repeat(1000000));").await;
    assert_eq!(
        failure(&result),
        Some(("output-limit", "outer output exceeded 64 bytes".to_owned()))
    );
    assert!(result.logs.is_empty());
}

#[tokio::test]
async fn an_endless_log_flood_ends_at_the_cap() {
    let (result, _) = run(&capped(10_000), "for (;;) console.log('flood');").await;
    assert_eq!(
        failure(&result),
        Some((
            "output-limit",
            "outer output exceeded 10000 bytes".to_owned()
        ))
    );
}

fn compute(millis: u64) -> QuickJsRuntime {
    runtime_with(RuntimeLimits {
        compute: Duration::from_millis(millis),
        ..RuntimeLimits::default()
    })
}

#[tokio::test]
async fn the_compute_budget_stops_a_hot_loop_and_cannot_be_caught() {
    let runtime = compute(200);
    for program in [
        "for (;;) {}",
        "for (;;) { try { for (;;) {} } catch {} }",
        "tools.never({}); for (;;) {}",
        "while (true) { try { JSON.stringify([1]); } finally { continue; } }",
    ] {
        let (result, _) = run(&runtime, program).await;
        assert_eq!(
            failure(&result),
            Some((
                "timeout",
                "compute budget exhausted (200ms busy)".to_owned()
            )),
            "{program}"
        );
    }
}

#[tokio::test]
async fn waiting_for_a_binding_costs_no_compute() {
    let runtime = compute(1000);
    let (result, _) = run(&runtime, "return await tools.slow({});").await;
    assert_eq!(success(&result), "\"slow-done\"");
}

#[tokio::test]
async fn the_wall_clock_ceiling_ends_a_run_waiting_forever() {
    let runtime = runtime_with(RuntimeLimits {
        wall: Duration::from_millis(300),
        ..RuntimeLimits::default()
    });
    let (result, _) = run(&runtime, "console.log('waiting'); await tools.never({});").await;
    assert_eq!(
        failure(&result),
        Some(("timeout", "wall-clock ceiling reached (300ms)".to_owned()))
    );
    assert_eq!(result.logs, ["waiting"]);
    let (result, _) = run(&runtime, "await new Promise(() => {});").await;
    assert_eq!(failure(&result).unwrap().0, "timeout");
}

#[tokio::test]
async fn the_token_aborts_a_running_program() {
    let runtime = runtime();
    let host = Host::new();
    let request = CodeRunRequest::new("tools.cancel({}); for (;;) {}", tools(), host.clone())
        .with_cancel(host.cancel.clone());
    let result = runtime.run(request).await.unwrap();
    assert_eq!(failure(&result), Some(("abort", "run aborted".to_owned())));
}

#[tokio::test]
async fn a_pre_aborted_run_starts_nothing() {
    let runtime = runtime();
    let host = Host::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let request =
        CodeRunRequest::new("await tools.echo({});", tools(), host.clone()).with_cancel(cancel);
    let result = runtime.run(request).await.unwrap();
    assert_eq!(failure(&result), Some(("abort", "run aborted".to_owned())));
    assert!(host.calls().is_empty());
    assert!(result.logs.is_empty());
}

#[tokio::test]
async fn the_memory_cap_ends_the_run_and_the_next_run_works() {
    let runtime = runtime_with(RuntimeLimits {
        memory_bytes: 16 * 1024 * 1024,
        ..RuntimeLimits::default()
    });
    let (result, _) = run(
        &runtime,
        "const hoard = []; for (;;) hoard.push(new Array(100000).fill(1));",
    )
    .await;
    assert_eq!(
        failure(&result),
        Some((
            "worker-exit",
            "memory limit exceeded (16777216 bytes)".to_owned()
        ))
    );
    let (result, _) = run(&runtime, "return 'fine';").await;
    assert_eq!(success(&result), "\"fine\"");
}
