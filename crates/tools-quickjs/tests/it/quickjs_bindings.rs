//! The QuickJS runtime against the reference implementation's code runtime scenarios (its
//! Code Mode scenarios 57–78), continued: bindings and their error classes, no ambient
//! authority, contract errors, disposal and machine codes.

use std::sync::Arc;

use tools_codemode::{
    BindingNamespace, CodeRunRequest, CodeRuntime, ContractError, ErrorClass, RuntimeLimits,
};
use tools_quickjs::QuickJsRuntime;

use tools_codemode::testing::{Host, failure, run, success, tools, value_text};

use crate::quickjs::{runtime, runtime_with};

#[tokio::test]
async fn bindings_resolve_and_reject_with_the_error_class() {
    let runtime = runtime();
    let program = r#"
        const first = await tools.echo({ n: 1 });
        const caught = await tools.fail({}).catch((e) => ({
            isTyped: e instanceof ToolCallError, isError: e instanceof Error,
            name: e.name, toolName: e.toolName, message: e.message,
        }));
        const caughtRaw = await tools.failRaw({}).catch((e) => e.message);
        return { first, caught, caughtRaw };
    "#;
    let (result, host) = run(&runtime, program).await;
    assert_eq!(
        success(&result),
        r#"{"first":{"echoed":{"n":1}},"caught":{"isTyped":true,"isError":true,"name":"ToolCallError","toolName":"fail","message":"nope"},"caughtRaw":"raw-nope"}"#
    );
    assert_eq!(host.calls().len(), 3);
    assert_eq!(
        host.calls()[0],
        ("tools".into(), "echo".into(), r#"{"n":1}"#.into())
    );
}

#[tokio::test]
async fn each_namespace_gets_its_own_error_class_or_plain_error() {
    let runtime = runtime();
    let host = Host::new();
    let namespaces = vec![
        BindingNamespace::new("tools", ["fail"], Some(ErrorClass::tool_call_error())),
        BindingNamespace::new(
            "helpers",
            ["fail"],
            Some(ErrorClass::new("HelperCallError", "helperName")),
        ),
        BindingNamespace::new("plain", ["fail"], None),
    ];
    let program = r#"
        const a = await helpers.fail({}).catch((e) => [e instanceof HelperCallError, e instanceof ToolCallError, e.name, e.helperName]);
        const b = await plain.fail({}).catch((e) => [e instanceof Error, e.name, e.message]);
        return [a, b];
    "#;
    let result = runtime
        .run(CodeRunRequest::new(program, namespaces, host.clone()))
        .await
        .unwrap();
    assert_eq!(
        success(&result),
        r#"[[true,false,"HelperCallError","fail"],[true,"Error","nope"]]"#
    );
    assert_eq!(host.calls()[0].0, "helpers");
}

#[tokio::test]
async fn binding_names_are_own_keys_only() {
    let runtime = runtime();
    let program = r#"
        return [
            typeof tools.hasOwnProperty, typeof tools.toString, Object.getPrototypeOf(tools),
            await tools.__proto__({}), await tools["constructor"]({}),
        ];
    "#;
    let (result, _) = run(&runtime, program).await;
    assert_eq!(
        success(&result),
        r#"["undefined","undefined",null,"proto-tool-ok","constructor-ok"]"#
    );
}

#[tokio::test]
async fn lossy_arguments_are_refused_inside_the_sandbox() {
    let runtime = runtime();
    let program = r#"
        const forged = Object.create({ looksPlain: true });
        const decorated = [1]; decorated.extra = 1;
        const cyclic = {}; cyclic.self = cyclic;
        const cases = [
            () => tools.echo(new Date(0)), () => tools.echo({ big: 1n }), () => tools.echo(),
            () => tools.echo(undefined), () => tools.echo({ f() {} }),
            () => tools.echo({ get x() { throw "raw-throw"; } }),
            () => tools.echo({ get x() { throw new Error("error-throw"); } }),
            () => tools.echo(decorated), () => tools.echo([1, , 2]), () => tools.echo({ z: -0 }),
            () => tools.echo({ n: NaN }), () => tools.echo(cyclic), () => tools.echo(forged),
            () => tools.echo(new Proxy({}, {})), () => tools.echo({ u: undefined }),
        ];
        const out = [];
        for (const c of cases) {
            try { await c(); out.push("dispatched"); }
            catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]); }
        }
        return out;
    "#;
    let (result, host) = run(&runtime, program).await;
    let value = result.value.clone().unwrap();
    let rows = value.as_array().unwrap();
    assert_eq!(rows.len(), 15, "{:?}", result.error);
    for row in rows {
        assert_eq!(row[0], true, "{row}");
        assert_eq!(row[1], "echo", "{row}");
        let message = row[2].as_str().unwrap();
        assert!(
            message.starts_with("binding arguments must be lossless JSON"),
            "{message}"
        );
    }
    assert!(rows[2][2].as_str().unwrap().contains("e.g. `{}`"));
    assert_eq!(
        rows[5][2],
        "binding arguments must be lossless JSON: $.x: reading it threw: raw-throw"
    );
    assert_eq!(
        rows[6][2],
        "binding arguments must be lossless JSON: $.x: reading it threw: error-throw"
    );
    assert!(rows[9][2].as_str().unwrap().contains("$.z: negative zero"));
    assert!(host.calls().is_empty(), "nothing reached the host");
}

#[tokio::test]
async fn concurrent_calls_are_all_in_flight_at_once() {
    // The host's barrier opens only when three calls wait on it together.
    let runtime = runtime();
    let program = r#"
        const out = await Promise.all([tools.gate("a"), tools.gate("b"), tools.gate("c")]);
        return out.join(",");
    "#;
    let (result, host) = run(&runtime, program).await;
    assert_eq!(success(&result), "\"a,b,c\"");
    assert_eq!(host.calls().len(), 3);
}

#[tokio::test]
async fn there_is_no_ambient_authority_and_no_state_across_runs() {
    let runtime = runtime();
    let program = r#"
        globalThis.leak = 1;
        return [typeof require, typeof process, typeof setTimeout, typeof setInterval, typeof std,
                typeof os, typeof fetch, typeof WebAssembly, typeof print, typeof scriptArgs];
    "#;
    let (result, _) = run(&runtime, program).await;
    let undefined = ["\"undefined\""; 10].join(",");
    assert_eq!(success(&result), format!("[{undefined}]"));
    let (result, _) = run(&runtime, "return typeof leak;").await;
    assert_eq!(success(&result), "\"undefined\"");
    let (result, _) = run(&runtime, "return await import('os');").await;
    assert_eq!(failure(&result).unwrap().0, "exception");
}

#[tokio::test]
async fn a_program_that_rewrites_the_realm_cannot_corrupt_the_boundary() {
    let runtime = runtime();
    let program = r#"
        Object.defineProperty(Object.prototype, "echoed", { set() { throw new Error("setter ran"); }, configurable: true });
        JSON.stringify = () => "forged"; JSON.parse = () => ({ forged: true });
        Array.isArray = () => false; Object.keys = () => []; Object.getPrototypeOf = () => null;
        Object.defineProperty = () => { throw new Error("no"); };
        Reflect.ownKeys = () => []; Error = function () { return { forged: true }; };
        Object.prototype.get = function () {}; Object.prototype.toJSON = () => "forged";
        Array.prototype[0] = "hole-filler"; Array.prototype.push = null;
        const echoed = await tools.echo({ a: [1, { b: "c" }] });
        const failed = await tools.fail({}).catch((e) => [e.name, e.toolName, e.message]);
        return { echoed, failed, list: [1, 2] };
    "#;
    let (result, host) = run(&runtime, program).await;
    assert_eq!(
        success(&result),
        r#"{"echoed":{"echoed":{"a":[1,{"b":"c"}]}},"failed":["ToolCallError","fail","nope"],"list":[1,2]}"#
    );
    assert_eq!(host.calls()[0].2, r#"{"a":[1,{"b":"c"}]}"#);
}

#[tokio::test]
async fn invalid_bindings_are_contract_errors() {
    let runtime = runtime();
    let cases = [
        BindingNamespace::new("not valid!", ["a"], None),
        BindingNamespace::new("await", ["a"], None),
        BindingNamespace::new("$tools", ["a"], None),
        BindingNamespace::new("console", ["a"], None),
        BindingNamespace::new("__dsh_main__", ["a"], None),
        BindingNamespace::new("tools", ["a"], Some(ErrorClass::new("tools", "x"))),
        BindingNamespace::new("tools", ["a"], Some(ErrorClass::new("E", "message"))),
    ];
    for namespace in cases {
        let request = CodeRunRequest::new("return 1;", vec![namespace.clone()], Host::new());
        let err = runtime.run(request).await.unwrap_err();
        assert!(!matches!(err, ContractError::Disposed), "{namespace:?}");
    }
    let twice = vec![
        BindingNamespace::new("tools", ["a"], None),
        BindingNamespace::new("tools", ["b"], None),
    ];
    let err = runtime
        .run(CodeRunRequest::new("", twice, Host::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, ContractError::DuplicateGlobal { .. }));
}

#[tokio::test]
async fn invalid_limits_are_refused() {
    let err = QuickJsRuntime::new(RuntimeLimits {
        max_output_bytes: 3,
        ..RuntimeLimits::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ContractError::InvalidLimit {
            limit: "max_output_bytes",
            ..
        }
    ));
}

#[tokio::test]
async fn disposal_aborts_live_runs_and_refuses_later_ones() {
    let runtime = Arc::new(runtime());
    let host = Host::new();
    let request = CodeRunRequest::new(
        "await tools.started({}); for (;;) {}",
        tools(),
        host.clone(),
    );
    let running = runtime.run(request);
    let started = Arc::clone(&host.started);
    let disposer = Arc::clone(&runtime);
    let (result, ()) = tokio::join!(running, async move {
        started.notified().await;
        disposer.dispose().await;
    });
    assert_eq!(
        failure(&result.unwrap()),
        Some(("abort", "runtime disposed".to_owned()))
    );
    let later = runtime
        .run(CodeRunRequest::new("return 1;", tools(), Host::new()))
        .await;
    assert_eq!(later.unwrap_err(), ContractError::Disposed);
}

#[tokio::test]
async fn the_value_text_helper_sees_no_value_on_failure() {
    let (result, _) = run(&runtime(), "throw 1;").await;
    assert_eq!(value_text(&result), None);
}

/// The smallest cap the limits accept (1 MiB) holds the stop's rooms back (256 KiB) and
/// still runs an ordinary program: logs, an awaited binding call, a value.
#[tokio::test]
async fn the_smallest_memory_cap_runs_an_ordinary_program() {
    let runtime = runtime_with(RuntimeLimits {
        memory_bytes: 1024 * 1024,
        ..RuntimeLimits::default()
    });
    let program = "console.log('start');\n\
                   const echoed = await tools.identity({ text: 'hi', n: [1, 2, 3] });\n\
                   return { echoed, list: Array.from({ length: 100 }, (_, i) => i * 2).length };";
    let (result, host) = run(&runtime, program).await;
    assert_eq!(
        success(&result),
        r#"{"echoed":{"text":"hi","n":[1,2,3]},"list":100}"#
    );
    assert_eq!(host.calls().len(), 1);
    assert_eq!(result.logs.len(), 1);
}

#[tokio::test]
async fn a_failed_call_carries_its_machine_code() {
    let program = r#"
const out = [];
for (const [name, args] of [["fail", {}], ["failRaw", {}], ["echo", undefined]]) {
  try { await tools[name](args); } catch (e) { out.push([e.toolName, e.code ?? null, e instanceof ToolCallError]); }
}
return out;
"#;
    let text = success(&run(&runtime(), program).await.0);
    assert_eq!(
        text,
        r#"[["fail","DENIED",true],["failRaw",null,true],["echo","INVALID_ARGS",true]]"#
    );
}

#[tokio::test]
async fn a_completion_that_is_not_json_names_the_path() {
    let (result, _) = run(&runtime(), "return { a: [1, { b: undefined }] };").await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "invalid-output");
    assert!(
        message.starts_with("program completion must be lossless JSON: $.a[1].b: "),
        "{message}"
    );
}

/// `tools` with `echo` and `identity`, `identity` taking `query, options` positionally.
pub(crate) fn signature_namespaces() -> Vec<BindingNamespace> {
    vec![
        BindingNamespace::new(
            "tools",
            ["echo", "identity"],
            Some(ErrorClass::tool_call_error()),
        )
        .with_signature("identity", ["query", "options"]),
    ]
}

/// Calls of a binding with a signature: packed by position, `undefined` left out, too many
/// arguments or a value that is not JSON refused in the sandbox.
pub(crate) const SIGNATURE_PROGRAM: &str = r#"
    const out = [];
    out.push(await tools.identity("q", { limit: 3 }));
    out.push(await tools.identity("q"));
    out.push(await tools.identity("q", undefined));
    out.push(await tools.identity());
    out.push(await tools.identity(undefined, 2));
    out.push(await tools.echo({ plain: true }, "ignored"));
    for (const call of [() => tools.identity("q", {}, "extra"), () => tools.identity(() => 1)]) {
      try { await call(); out.push("no error"); }
      catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.code, e.message]); }
    }
    return out;
"#;

/// Runs [`SIGNATURE_PROGRAM`] on `runtime` and checks what the program and the host saw.
pub(crate) async fn check_signatures(runtime: &dyn CodeRuntime) {
    let host = Host::new();
    let request = CodeRunRequest::new(SIGNATURE_PROGRAM, signature_namespaces(), host.clone());
    let result = runtime.run(request).await.unwrap();
    let value: serde_json::Value = serde_json::from_str(&success(&result)).unwrap();
    assert_eq!(
        value.as_array().map(|a| a[..6].to_vec()),
        Some(vec![
            serde_json::json!({"query": "q", "options": {"limit": 3}}),
            serde_json::json!({"query": "q"}),
            serde_json::json!({"query": "q"}),
            serde_json::json!({}),
            serde_json::json!({"options": 2}),
            serde_json::json!({"echoed": {"plain": true}}),
        ]),
        "{value}"
    );
    assert_eq!(
        value[6],
        serde_json::json!([
            true,
            "identity",
            "INVALID_ARGS",
            "identity() takes at most 2 arguments (3 given)"
        ])
    );
    assert_eq!(value[7][2], "INVALID_ARGS");
    let lossy = value[7][3].as_str().unwrap_or_default();
    assert!(
        lossy.starts_with("binding arguments must be lossless JSON: $.query"),
        "{lossy}"
    );
    // The refused calls never reached the host.
    let calls: Vec<String> = host.calls().into_iter().map(|(_, _, args)| args).collect();
    assert_eq!(
        calls,
        [
            r#"{"query":"q","options":{"limit":3}}"#,
            r#"{"query":"q"}"#,
            r#"{"query":"q"}"#,
            "{}",
            r#"{"options":2}"#,
            r#"{"plain":true}"#,
        ]
    );
}

#[tokio::test]
async fn a_binding_with_a_signature_packs_its_positional_arguments() {
    check_signatures(&runtime()).await;
}

#[tokio::test]
async fn a_lazy_tail_is_bound_on_first_read() {
    let runtime = runtime();
    let host = Host::new();
    // `echo` is the lazy tail: the host answers it like any binding.
    let namespaces = vec![
        BindingNamespace::new("tools", ["fail"], Some(ErrorClass::tool_call_error()))
            .with_lazy(["echo"]),
    ];
    let program = r#"
        const before = ["echo" in tools, "fail" in tools, Object.keys(tools).join(",")];
        const echoed = await tools.echo({ n: 2 });
        const after = ["echo" in tools, Object.keys(tools).join(","), tools.echo === tools.echo];
        const missing = [typeof tools.nothing, "nothing" in tools, typeof tools["__proto__"]];
        const failed = await tools.fail({}).catch((e) => e instanceof ToolCallError);
        return { before, echoed, after, missing, failed };
    "#;
    let result = runtime
        .run(CodeRunRequest::new(program, namespaces, host.clone()))
        .await
        .unwrap();
    assert_eq!(
        success(&result),
        r#"{"before":[false,true,"fail"],"echoed":{"echoed":{"n":2}},"after":[true,"fail,echo",true],"missing":["undefined",false,"undefined"],"failed":true}"#
    );
    assert_eq!(
        host.calls()[0],
        ("tools".into(), "echo".into(), r#"{"n":2}"#.into())
    );
}
