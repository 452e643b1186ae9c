//! Hostile TypeScript programs against the QuickJS runtime (issue 14, "Code Mode
//! containment"): values that used to crash the host, budgets, memory bombs, floods,
//! attempts to reach the host, tampering with the intrinsics the runtime relies on, and
//! fake binding calls. Every program has its expected outcome asserted: the kind, and a
//! message fragment where the text is stable. Budgets are generous and only kinds are
//! asserted, never timing.

use std::time::Duration;

use tools_codemode::{CodeRunResult, RuntimeLimits, UNRENDERABLE_MESSAGE};
use tools_quickjs::QuickJsRuntime;

use tools_codemode::testing::{failure, run, success};

/// The memory cap of the hostile runs: small, so memory bombs end quickly.
const MEMORY: u64 = 32 * 1024 * 1024;
/// The output cap of the hostile runs.
const OUTPUT: usize = 1024 * 1024;

fn limits() -> RuntimeLimits {
    RuntimeLimits {
        compute: Duration::from_secs(2),
        wall: Duration::from_secs(60),
        memory_bytes: MEMORY,
        max_output_bytes: OUTPUT,
        ..RuntimeLimits::default()
    }
}

fn runtime() -> QuickJsRuntime {
    QuickJsRuntime::new(limits()).unwrap()
}

/// Runs `program` on a fresh hostile runtime and, where the confined worker is built, once
/// more in the sandboxed child: both must report the same outcome.
async fn hostile(program: &str) -> CodeRunResult {
    let in_process = run(&runtime(), program).await.0;

    {
        let confined = tools_sandbox::QuickJsProcessRuntime::new(
            limits(),
            tools_sandbox::QuickJsProcessOptions::new(env!("CARGO_BIN_EXE_tools-codemode-worker")),
        )
        .unwrap();
        let child = run(&confined, program).await.0;
        assert_eq!(
            (child.error.as_ref().map(|e| e.kind), &child.value),
            (in_process.error.as_ref().map(|e| e.kind), &in_process.value),
            "the confined child disagrees on {program:?}: {:?}",
            child.error
        );
    }
    in_process
}

/// Asserts the failure kind and that the message contains `fragment`.
#[track_caller]
fn fails(result: &CodeRunResult, kind: &str, fragment: &str) {
    let Some((actual, message)) = failure(result) else {
        panic!("expected {kind} ({fragment:?}), the run succeeded: {result:?}");
    };
    assert_eq!(actual, kind, "{message}");
    assert!(
        message.contains(fragment),
        "{kind}: {message:?} lacks {fragment:?}"
    );
}

/// Asserts an exception whose message is exactly `message`.
#[track_caller]
fn threw_exactly(result: &CodeRunResult, message: &str) {
    assert_eq!(
        failure(result),
        Some(("exception", message.to_owned())),
        "{result:?}"
    );
}

fn memory_message() -> String {
    format!("memory limit exceeded ({MEMORY} bytes)")
}

// --- The reproducers of issue 14: values that aborted the host. ---

#[tokio::test]
async fn a_thrown_revoked_proxy_is_an_exception() {
    let result = hostile("const r = Proxy.revocable({}, {}); r.revoke(); throw r.proxy;").await;
    threw_exactly(&result, UNRENDERABLE_MESSAGE);
}

#[tokio::test]
async fn a_thrown_proxy_whose_get_prototype_of_trap_throws_is_an_exception() {
    let result =
        hostile("throw new Proxy({}, { getPrototypeOf() { throw new Error('trap'); } });").await;
    threw_exactly(&result, "[object Object]");
}

#[tokio::test]
async fn a_rejected_revoked_proxy_is_an_exception() {
    let result =
        hostile("const r = Proxy.revocable({}, {}); r.revoke(); await Promise.reject(r.proxy);")
            .await;
    threw_exactly(&result, UNRENDERABLE_MESSAGE);
}

#[tokio::test]
async fn a_trapping_proxy_thrown_inside_then_is_an_exception() {
    let result = hostile(
        "await Promise.resolve(1).then(() => { \
           throw new Proxy({}, { getPrototypeOf() { throw 1; } }); });",
    )
    .await;
    threw_exactly(&result, "[object Object]");
}

#[tokio::test]
async fn a_proxy_whose_every_trap_throws_is_an_exception() {
    let program = r#"
        const boom = () => { throw new Error("trap"); };
        const traps = { get: boom, set: boom, has: boom, deleteProperty: boom, ownKeys: boom,
          getOwnPropertyDescriptor: boom, defineProperty: boom, getPrototypeOf: boom,
          setPrototypeOf: boom, isExtensible: boom, preventExtensions: boom, apply: boom,
          construct: boom };
        throw new Proxy(function target() {}, traps);
    "#;
    threw_exactly(&hostile(program).await, UNRENDERABLE_MESSAGE);
}

#[tokio::test]
async fn an_error_whose_prototype_is_a_revoked_proxy_is_an_exception() {
    let program = r#"
        const r = Proxy.revocable({}, {});
        const e = new Error("odd");
        Object.setPrototypeOf(e, r.proxy);
        r.revoke();
        throw e;
    "#;
    let result = hostile(program).await;
    // `name` cannot be read through the revoked prototype; the own message still shows.
    fails(&result, "exception", "Error: odd");
}

#[tokio::test]
async fn console_log_of_hostile_values_never_fails_the_run() {
    let program = r#"
        const r = Proxy.revocable({}, {}); r.revoke();
        const fnProxy = new Proxy(function f() {}, { getOwnPropertyDescriptor() { throw 1; } });
        const weird = Object.create(new Proxy({}, { getOwnPropertyDescriptor() { throw 2; } }));
        weird.a = 1;
        const getter = { get x() { throw 3; } };
        const cyclic: any = { name: "c" }; cyclic.self = cyclic;
        const e = new Error("m"); Object.defineProperty(e, "stack", { get() { throw 4; } });
        console.log(r.proxy, fnProxy, weird, getter, cyclic, Symbol("s"), 10n, e,
          Object.create(null), { toString() { throw 5; } });
        return "logged";
    "#;
    let result = hostile(program).await;
    assert_eq!(success(&result), "\"logged\"");
    assert_eq!(
        result.logs,
        [
            "[Proxy] [Proxy] { a: 1 } { x: [Getter] } { name: 'c', self: [Circular] } Symbol(s) \
          10n Error: m [Object: null prototype] {} { toString: [Function: toString] }"
        ]
    );
}

#[tokio::test]
async fn returning_a_revoked_proxy_fails_cleanly() {
    // Resolving the program's promise looks for `then` on the proxy, which throws.
    let result = hostile("const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy;").await;
    fails(&result, "exception", "TypeError: revoked proxy");
    // Nested, it reaches the conversion, which refuses proxies.
    let result =
        hostile("const r = Proxy.revocable({}, {}); r.revoke(); return { p: [r.proxy] };").await;
    fails(&result, "invalid-output", "lossless JSON");
}

#[tokio::test]
async fn returning_a_value_with_a_throwing_getter_is_invalid_output() {
    let result = hostile("return { ok: 1, get bad() { throw new Error('getter'); } };").await;
    fails(&result, "invalid-output", "lossless JSON");
}

#[tokio::test]
async fn an_array_longer_than_an_i32_crosses_nowhere_and_crashes_nothing() {
    let program = r#"
        const huge: any[] = []; huge.length = 4294967295;
        console.log(huge);
        const sent = await tools.echo({ huge }).then(() => "resolved", (e: any) => e.message);
        return { sent, huge };
    "#;
    let result = hostile(program).await;
    fails(&result, "invalid-output", "lossless JSON");
    let sent = hostile(
        "const huge: any[] = []; huge.length = 2 ** 31;\n\
         return await tools.echo({ huge }).then(() => 'resolved', (e: any) => e.message);",
    )
    .await;
    let text = success(&sent);
    assert!(
        text.contains("binding arguments must be lossless JSON: $.huge: a sparse array"),
        "{text}"
    );
}

// --- Thrown values of every kind. ---

#[tokio::test]
async fn thrown_exotic_primitives_render() {
    threw_exactly(&hostile("throw Symbol('boom');").await, "Symbol(boom)");
    threw_exactly(
        &hostile("throw 12345678901234567890n;").await,
        "12345678901234567890",
    );
    let result = hostile("throw function named() { return 1; };").await;
    fails(&result, "exception", "function named()");
}

#[tokio::test]
async fn thrown_objects_that_refuse_to_render_are_unrenderable() {
    for program in [
        "throw Object.create(null);",
        "throw { [Symbol.toPrimitive]() { throw new Error('no'); } };",
        "throw { valueOf() { throw 1; }, toString() { throw 2; } };",
        "throw { get [Symbol.toPrimitive]() { throw 3; } };",
    ] {
        threw_exactly(&hostile(program).await, UNRENDERABLE_MESSAGE);
    }
}

#[tokio::test]
async fn an_error_with_throwing_message_and_stack_getters_still_renders() {
    let program = r#"
        const e = new TypeError("hidden");
        Object.defineProperty(e, "message", { get() { throw new Error("m"); } });
        Object.defineProperty(e, "stack", { get() { throw new Error("s"); } });
        Object.defineProperty(e, "name", { get() { return Symbol("n"); } });
        throw e;
    "#;
    threw_exactly(&hostile(program).await, "Error");
}

#[tokio::test]
async fn a_thrown_cyclic_object_renders_its_string() {
    let result = hostile("const a: any = {}; a.a = a; a.toString = () => 'cyclic'; throw a;").await;
    threw_exactly(&result, "cyclic");
}

#[tokio::test]
async fn thrown_values_whose_string_would_join_a_huge_array_are_unrenderable() {
    for program in [
        "const a: any[] = []; a.length = 4294967295; throw a;",
        "const a: any[] = []; a.length = 2 ** 31; throw [[a]];",
        "const a: any[] = []; a.length = 4294967295; throw Object.create(a);",
        "const a: any[] = []; a.length = 4294967295; const e = new Error('x'); e.message = a as any; throw e;",
        "const a: any[] = []; a.length = 4294967295; const e = new Error('x'); e.message = a as any; throw [e];",
    ] {
        let result = hostile(program).await;
        let (kind, _) = failure(&result).unwrap();
        assert_eq!(kind, "exception", "{program}: {result:?}");
    }
    let sparse = hostile("const a: any[] = []; a.length = 4294967295; throw a;").await;
    threw_exactly(&sparse, UNRENDERABLE_MESSAGE);
}

#[tokio::test]
async fn running_out_of_memory_while_the_runtime_renders_a_thrown_value_is_unrenderable() {
    let program = "throw { toString() { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); } };";
    threw_exactly(&hostile(program).await, UNRENDERABLE_MESSAGE);
}

// --- Budgets. ---

#[tokio::test]
async fn a_synchronous_infinite_loop_times_out() {
    fails(&hostile("for (;;) {}").await, "timeout", "compute budget");
}

#[tokio::test]
async fn an_infinite_chain_of_promise_jobs_times_out() {
    let program = "const spin = () => { Promise.resolve().then(spin); };\n\
                   spin();\nawait new Promise(() => {});";
    fails(&hostile(program).await, "timeout", "compute budget");
}

#[tokio::test]
async fn an_infinite_loop_in_a_getter_of_the_result_times_out() {
    let result = hostile("return { get x() { for (;;) {} } };").await;
    fails(&result, "timeout", "compute budget");
}

#[tokio::test]
async fn a_promise_that_never_settles_ends_at_the_wall_ceiling() {
    let runtime = QuickJsRuntime::new(RuntimeLimits {
        wall: Duration::from_secs(1),
        ..limits()
    })
    .unwrap();
    let (result, _) = run(&runtime, "await new Promise(() => {}); return 1;").await;
    fails(&result, "timeout", "wall-clock ceiling");
}

// --- Memory. ---

#[tokio::test]
async fn array_growth_reaches_the_memory_cap() {
    let result =
        hostile("const hoard: number[][] = []; for (;;) hoard.push(new Array(100000).fill(1));")
            .await;
    fails(&result, "worker-exit", &memory_message());
}

#[tokio::test]
async fn string_doubling_ends_the_run() {
    let result = hostile("let s = 'x'; for (;;) { s = s + s; s.charCodeAt(s.length - 1); }").await;
    // Depending on where the engine gives up: the memory cap, or the string length limit.
    let (kind, message) = failure(&result).unwrap();
    assert!(
        (kind == "worker-exit" && message == memory_message())
            || (kind == "exception" && message.contains("RangeError")),
        "{kind}: {message}"
    );
}

#[tokio::test]
async fn a_caught_out_of_memory_error_still_ends_the_run() {
    let program = "try { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); }\n\
                   catch { return 'survived'; }";
    fails(&hostile(program).await, "worker-exit", &memory_message());
}

#[tokio::test]
async fn a_caught_out_of_memory_error_in_a_loop_still_ends_the_run() {
    let program = "let caught = 0;\n\
                   for (;;) {\n\
                     try { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); }\n\
                     catch (e) { caught++; }\n\
                   }";
    // In process the stop arrives as the memory cap (the engine noted the caught error).
    let in_process = run(&runtime(), program).await.0;
    fails(&in_process, "worker-exit", &memory_message());
    // Each bytecode step of this loop does heavy native work at the cap, so the engine's
    // next interrupt poll comes late (README, "The stop cannot be starved"): the in-process
    // run settles at its compute budget plus the settle grace, as a memory failure. The
    // confined child is killed at the same point by the host's busy-time meter, which knows
    // nothing of the engine's memory: a compute failure.

    {
        let confined = tools_sandbox::QuickJsProcessRuntime::new(
            limits(),
            tools_sandbox::QuickJsProcessOptions::new(env!("CARGO_BIN_EXE_tools-codemode-worker")),
        )
        .unwrap();
        let child = run(&confined, program).await.0;
        let kind = failure(&child).map(|f| f.0);
        assert!(
            matches!(kind, Some("timeout" | "worker-exit")),
            "{:?}",
            child.error
        );
    }
}

#[tokio::test]
async fn an_out_of_memory_error_caught_in_a_promise_chain_still_ends_the_run() {
    let program = "const grow = async () => { const a: string[] = []; for (;;) a.push('x'.repeat(65536) + a.length); };\n\
                   const value = await Promise.resolve().then(grow).catch(() => 'survived');\n\
                   return value;";
    fails(&hostile(program).await, "worker-exit", &memory_message());
}

#[tokio::test]
async fn small_allocations_up_to_the_cap_end_the_run_even_when_caught() {
    let program = "let kept: any = null;\n\
                   try { for (;;) kept = { next: kept, pad: [1, 2, 3] }; } catch { kept = null; }\n\
                   return 'survived';";
    fails(&hostile(program).await, "worker-exit", &memory_message());
}

#[tokio::test]
async fn typed_array_hoarding_reaches_the_memory_cap() {
    let result =
        hostile("const bufs: Uint8Array[] = []; for (;;) bufs.push(new Uint8Array(1 << 20));")
            .await;
    fails(&result, "worker-exit", &memory_message());
}

#[tokio::test]
async fn one_huge_typed_array_is_refused() {
    let result =
        hostile("const big = new Uint8Array(1024 * 1024 * 1024); return big.length;").await;
    let (kind, _) = failure(&result).unwrap();
    assert!(kind == "worker-exit" || kind == "exception", "{result:?}");
}

#[tokio::test]
async fn deep_recursion_is_a_stack_overflow_exception() {
    let result = hostile("const f = (n: number): number => f(n + 1) + 1; return f(0);").await;
    fails(
        &result,
        "exception",
        "RangeError: Maximum call stack size exceeded",
    );
}

#[tokio::test]
async fn a_caught_stack_overflow_lets_the_program_go_on() {
    let program = "const f = (n: number): number => f(n + 1) + 1;\n\
                   try { f(0); } catch (e) { return (e as Error).name; }";
    assert_eq!(success(&hostile(program).await), "\"RangeError\"");
}

// --- Floods. ---

#[tokio::test]
async fn a_console_flood_hits_the_output_limit() {
    let result = hostile("for (;;) console.log('flood '.repeat(100));").await;
    fails(
        &result,
        "output-limit",
        &format!("outer output exceeded {OUTPUT} bytes"),
    );
}

#[tokio::test]
async fn a_huge_result_hits_the_output_limit() {
    let result = hostile("return 'x'.repeat(2 * 1024 * 1024);").await;
    fails(
        &result,
        "output-limit",
        &format!("outer output exceeded {OUTPUT} bytes"),
    );
}

// --- Reaching for the host. ---

#[tokio::test]
async fn require_process_and_timers_are_absent() {
    for (program, fragment) in [
        ("require('fs');", "require is not defined"),
        ("process.exit(1);", "process is not defined"),
        ("setTimeout(() => {}, 1);", "setTimeout is not defined"),
        ("std.exit(0);", "std is not defined"),
        ("os.exec(['ls']);", "os is not defined"),
    ] {
        fails(&hostile(program).await, "exception", fragment);
    }
}

#[tokio::test]
async fn dynamic_import_fails_inside_the_program() {
    let result = hostile("await import('os');").await;
    let (kind, _) = failure(&result).unwrap();
    assert_eq!(kind, "exception", "{result:?}");
    let caught = hostile("return await import('std').then(() => 'loaded', () => 'refused');").await;
    assert_eq!(success(&caught), "\"refused\"");
}

#[tokio::test]
async fn the_global_object_holds_no_host_authority() {
    let program = r#"
        const names = Object.getOwnPropertyNames(globalThis);
        const forbidden = ["require", "process", "std", "os", "fetch", "setTimeout",
          "setInterval", "Deno", "Bun", "module", "exports", "__filename", "scriptArgs", "print"];
        const viaFunction = Function("return this")();
        return { found: names.filter((n) => forbidden.includes(n)),
                 same: viaFunction === globalThis,
                 evalWorks: eval("1 + 1") };
    "#;
    assert_eq!(
        success(&hostile(program).await),
        r#"{"found":[],"same":true,"evalWorks":2}"#
    );
}

#[tokio::test]
async fn atomics_wait_cannot_block_the_engine_thread() {
    let program = r#"
        if (typeof SharedArrayBuffer !== "function" || typeof Atomics !== "object") return "absent";
        const cell = new Int32Array(new SharedArrayBuffer(4));
        try { return String(Atomics.wait(cell, 0, 0, 60000)); } catch (e) { return "refused"; }
    "#;
    let result = hostile(program).await;
    let value = success(&result);
    assert!(
        ["\"absent\"", "\"refused\"", "\"timed-out\""].contains(&value.as_str()),
        "{value}"
    );
}

#[tokio::test]
async fn weak_refs_and_finalization_registries_are_harmless() {
    let program = r#"
        let cleaned = 0;
        const registry = new FinalizationRegistry(() => { cleaned++; });
        for (let i = 0; i < 1000; i++) registry.register({ i }, i);
        const ref = new WeakRef({ a: 1 });
        await Promise.resolve();
        return typeof ref.deref();
    "#;
    let result = hostile(program).await;
    let value = success(&result);
    assert!(value == "\"object\"" || value == "\"undefined\"", "{value}");
}

#[tokio::test]
async fn closing_the_wrapper_early_runs_only_the_program_s_own_code() {
    let result = hostile("})\n;(function () { return 42; ").await;
    let text = match failure(&result) {
        Some((kind, _)) => kind.to_owned(),
        None => success(&result),
    };
    assert!(text == "42" || text == "exception", "{result:?}");
}

// --- Tampering with the intrinsics the runtime uses. ---

#[tokio::test]
async fn overriding_object_get_prototype_of_changes_nothing() {
    let program = r#"
        Object.getPrototypeOf = () => { throw new Error("tampered"); };
        Reflect.getPrototypeOf = Object.getPrototypeOf;
        console.log({ a: [1] }, new (class Point {})());
        return { a: [1, { b: null }] };
    "#;
    let result = hostile(program).await;
    assert_eq!(success(&result), r#"{"a":[1,{"b":null}]}"#);
    assert_eq!(result.logs, ["{ a: [ 1 ] } Point {}"]);
    let thrown = hostile(
        "Object.getPrototypeOf = () => { throw 1; };\nthrow new Proxy({}, { getPrototypeOf() { throw 2; } });",
    )
    .await;
    threw_exactly(&thrown, "[object Object]");
}

#[tokio::test]
async fn overriding_json_and_string_changes_nothing() {
    let program = r#"
        JSON.stringify = () => { throw new Error("tampered"); };
        JSON.parse = () => { throw new Error("tampered"); };
        (globalThis as any).String = () => "tampered";
        return { ok: [true, "yes"] };
    "#;
    assert_eq!(success(&hostile(program).await), r#"{"ok":[true,"yes"]}"#);
    let thrown = hostile("(globalThis as any).String = () => 'tampered';\nthrow 'plain';").await;
    threw_exactly(&thrown, "plain");
}

#[tokio::test]
async fn overriding_promise_then_does_not_stop_settlement() {
    let program = r#"
        const first = await tools.echo({ n: 1 });
        Promise.prototype.then = function () { throw new Error("tampered then"); };
        const second = await tools.echo({ n: 2 });
        return [first, second];
    "#;
    assert_eq!(
        success(&hostile(program).await),
        r#"[{"echoed":{"n":1}},{"echoed":{"n":2}}]"#
    );
}

#[tokio::test]
async fn overriding_array_iteration_and_object_prototype_getters_changes_nothing() {
    let program = r#"
        Array.prototype[Symbol.iterator] = function* () { throw new Error("tampered"); };
        Object.defineProperty(Object.prototype, "injected", { __proto__: null, get() { throw new Error("getter"); }, enumerable: true } as any);
        Object.defineProperty(Array.prototype, "0", { __proto__: null, get() { throw new Error("index"); } } as any);
        Object.defineProperty(Object.prototype, "value", { __proto__: null, value: 2, enumerable: false } as any);
        Object.defineProperty(Object.prototype, "get", { __proto__: null, value: 1, enumerable: false } as any);
        console.log({ a: [1, 2] });
        return { a: [1, 2], s: "x" };
    "#;
    let result = hostile(program).await;
    assert_eq!(success(&result), r#"{"a":[1,2],"s":"x"}"#);
    assert_eq!(result.logs, ["{ a: [ 1, 2 ] }"]);
}

#[tokio::test]
async fn tampering_with_error_stack_hooks_changes_nothing() {
    let program = r#"
        (Error as any).prepareStackTrace = () => "hijacked";
        (Error as any).stackTraceLimit = { valueOf() { throw new Error("limit"); } };
        const seen = String((Error as any).prepareStackTrace);
        Error.captureStackTrace(new Proxy({}, {}));
        throw new Error("still " + seen);
    "#;
    let result = hostile(program).await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.starts_with("Error: still undefined"), "{message}");
    assert!(!message.contains("hijacked"), "{message}");
}

#[tokio::test]
async fn tampering_with_the_tools_namespace_and_error_class() {
    let program = r#"
        const original = tools.fail;
        (globalThis as any).ToolCallError = function Fake() {};
        Object.setPrototypeOf(tools, new Proxy({}, { get() { throw new Error("trap"); } }));
        const rejected = await original({}).catch((e: any) => [e.name, e.toolName, e.message]);
        (tools as any).echo = () => "replaced by the program";
        const mine = await (tools as any).echo({});
        delete (globalThis as any).tools;
        return { rejected, mine, gone: typeof (globalThis as any).tools };
    "#;
    assert_eq!(
        success(&hostile(program).await),
        r#"{"rejected":["ToolCallError","fail","nope"],"mine":"replaced by the program","gone":"undefined"}"#
    );
}

// --- Fake binding calls. ---

#[tokio::test]
async fn binding_calls_with_non_json_arguments_reject_inside_the_program() {
    let program = r#"
        const cyclic: any = {}; cyclic.self = cyclic;
        const revocable = Proxy.revocable({}, {}); revocable.revoke();
        const attempts: any[] = [{ big: 1n }, cyclic, { f() {} }, revocable.proxy,
          { get boom() { throw new Error("getter"); } }, [Symbol("s")], undefined];
        const out: string[] = [];
        for (const args of attempts) {
          out.push(await tools.echo(args).then(() => "resolved", (e: any) =>
            (e instanceof ToolCallError) + ":" + e.message.startsWith("binding arguments must be lossless JSON")));
        }
        return out;
    "#;
    let (result, host) = run(&runtime(), program).await;
    assert_eq!(
        success(&result),
        r#"["true:true","true:true","true:true","true:true","true:true","true:true","true:true"]"#
    );
    assert!(host.calls().is_empty(), "nothing reached the host");
}

#[tokio::test]
async fn the_next_run_after_hostile_runs_is_healthy() {
    let runtime = runtime();
    for program in [
        "const r = Proxy.revocable({}, {}); r.revoke(); throw r.proxy;",
        "try { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); } catch { return 1; }",
        "for (;;) {}",
    ] {
        let (result, _) = run(&runtime, program).await;
        assert!(result.error.is_some(), "{program}");
    }
    let (result, _) = run(&runtime, "return await tools.echo({ fine: true });").await;
    assert_eq!(success(&result), r#"{"echoed":{"fine":true}}"#);
}

#[tokio::test]
async fn stack_traces_keep_the_engine_s_format() {
    let program = "\nfunction inner() { throw new Error('deep'); }\n\
                   function outer() { [1].map(() => inner()); }\n\
                   outer();";
    let (kind, message) = failure(&hostile(program).await).unwrap();
    assert_eq!(kind, "exception");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines[0], "Error: deep", "{message}");
    assert!(
        lines[1].starts_with("    at inner (program.ts:2:"),
        "{message}"
    );
    assert!(
        lines[2].starts_with("    at <anonymous> (program.ts:3:"),
        "{message}"
    );
    assert_eq!(lines[3], "    at map (native)", "{message}");
    assert!(
        lines[4].starts_with("    at outer (program.ts:3:"),
        "{message}"
    );
    assert!(
        lines[5].starts_with("    at __dsh_main__ (program.ts:4:"),
        "{message}"
    );
    assert_eq!(lines.len(), 6, "{message}");

    // A syntax error of the engine's own parser starts with a bare position.
    let (kind, message) = failure(&hostile("\nreturn eval('\\n(1 +;');").await).unwrap();
    assert_eq!(kind, "exception");
    let lines: Vec<&str> = message.lines().collect();
    assert!(lines[0].starts_with("SyntaxError: "), "{message}");
    assert!(lines[1].starts_with("    at <input>:2:"), "{message}");
    assert!(!lines[1].contains('('), "{message}");
    assert!(
        lines[2].starts_with("    at __dsh_main__ (program.ts:2:"),
        "{message}"
    );
}

#[tokio::test]
async fn a_too_deep_result_names_the_limit_and_the_side() {
    let program = "let x: unknown[] = [];\nfor (let i = 0; i < 600; i++) x = [x];\nreturn x;";
    fails(
        &hostile(program).await,
        "invalid-output",
        "program result nesting exceeds the depth limit of 512",
    );
}
