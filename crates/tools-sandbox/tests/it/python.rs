//! The Python runtime (needs `python3` on the machine) against the reference
//! implementation's code runtime scenarios (its Code Mode scenarios 57–79): values, logs,
//! stray output, failures, budgets, aborts, bindings, the environment and a hostile fd-3
//! peer.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tools_codemode::{
    BindingNamespace, CodeRunRequest, CodeRuntime, ContractError, ErrorClass, Language,
    RuntimeLimits,
};
use tools_sandbox::{Isolation, PYTHON_TRUNCATION_MARKER, PythonOptions, PythonRuntime};

use tools_codemode::testing::{Host, failure, run, success, tools};

fn runtime() -> PythonRuntime {
    runtime_with(RuntimeLimits {
        wall: Duration::from_secs(60),
        ..RuntimeLimits::default()
    })
}

fn runtime_with(limits: RuntimeLimits) -> PythonRuntime {
    PythonRuntime::new(limits).unwrap()
}

/// Values cross 10 000 levels deep (standalone, a runtime may raise the default limit of
/// 512, the pipeline's).
fn deep_runtime() -> PythonRuntime {
    runtime_with(RuntimeLimits {
        wall: Duration::from_secs(60),
        max_json_depth: 10_000,
        ..RuntimeLimits::default()
    })
}

fn capped(max_output_bytes: usize) -> PythonRuntime {
    runtime_with(RuntimeLimits {
        max_output_bytes,
        ..RuntimeLimits::default()
    })
}

#[tokio::test]
async fn descriptors() {
    let runtime = runtime();
    assert_eq!(runtime.language(), Language::Python);
    assert_eq!(runtime.isolation(), "sandboxed-process");
    assert_eq!(
        PYTHON_TRUNCATION_MARKER,
        "[dsh-code-runtime-python] log capture truncated at {} bytes"
    );
}

#[tokio::test]
async fn returns_every_json_kind_exactly() {
    let program = r#"
x = await tools.identity({"n": 1})
return {"s": "x€\n", "i": -3, "f": 2.5, "t": True, "n": None, "a": [1, [2, {}]], "tuple": (1, 2),
        "big": 2 ** 63, "i64min": -(2 ** 63), "whole": 4.0, "huge": 1e300, "x": x}
"#;
    let (result, _) = run(&runtime(), program).await;
    assert_eq!(
        success(&result),
        r#"{"s":"x€\n","i":-3,"f":2.5,"t":true,"n":null,"a":[1,[2,{}]],"tuple":[1,2],"big":9223372036854775808,"i64min":-9223372036854775808,"whole":4,"huge":1e+300,"x":{"n":1}}"#
    );
}

#[tokio::test]
async fn none_is_no_value_and_a_returned_null_is_absent_too() {
    // Python has one `None`: a program returning it has no value (as for `undefined`).
    for program in ["return", "x = 1", "return None", ""] {
        let (result, _) = run(&runtime(), program).await;
        assert!(result.error.is_none(), "{program}: {:?}", result.error);
        assert_eq!(result.value, None, "{program}");
    }
}

#[tokio::test]
async fn print_logs_and_stray_output_is_captured() {
    let program = "import sys\nprint('a', 1, [2])\nprint('x', 'y', sep='-')\nsys.stdout.write('raw-out\\n')\nreturn 3";
    let (result, _) = run(&runtime(), program).await;
    assert_eq!(success(&result), "3");
    let mut logs = result.logs.clone();
    logs.sort();
    assert_eq!(logs, ["a 1 [2]", "raw-out\n", "x-y"]);
}

#[tokio::test]
async fn deep_values_cross_both_ways() {
    let program = r#"
v = "leaf"
for _ in range(5000):
    v = [v]
back = await tools.identity(v)
depth = 0
while isinstance(back, list):
    back = back[0]
    depth += 1
assert depth == 5000 and back == "leaf", depth
return v
"#;
    let (result, host) = run(&deep_runtime(), program).await;
    success(&result);
    assert_eq!(result.value.as_ref().unwrap().depth(), 5000);
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn exceptions_carry_the_traceback_and_keep_earlier_logs() {
    let (result, _) = run(&runtime(), "print('before')\nraise ValueError('kaboom')").await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.contains("ValueError: kaboom"), "{message}");
    assert!(message.contains("line 2"), "{message}");
    assert!(!message.contains("bootstrap"), "{message}");
    assert_eq!(result.logs, ["before"]);
    let (result, _) = run(&runtime(), "return (1 +").await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.contains("SyntaxError"), "{message}");
}

#[tokio::test]
async fn completions_that_are_not_lossless_json_are_invalid_output() {
    // The message names the path of the first value that is not JSON, and why.
    for (program, detail) in [
        ("return float('nan')", "$: a non-finite number is not JSON"),
        ("return -0.0", "$: negative zero cannot be carried by JSON"),
        (
            "return {1: 2}",
            "$: a dict key that is not a str is not JSON",
        ),
        ("return object()", "$: a value of type object is not JSON"),
        (
            "return 2 ** 64",
            "$: the integer 18446744073709551616 does not fit 64 bits",
        ),
        ("return b'bytes'", "$: a value of type bytes is not JSON"),
        (
            "a = []\na.append(a)\nreturn a",
            "$[0]: a circular reference is not JSON",
        ),
        (
            "return '\\ud800'",
            "$: a string with a lone surrogate is not JSON",
        ),
        (
            "return {'a': [1, {'b c': None, 'd': object()}]}",
            "$.a[1].d: a value of type object is not JSON",
        ),
        (
            "return {'ok': 1, 'x y': [float('inf')]}",
            "$[\"x y\"][0]: a non-finite number is not JSON",
        ),
    ] {
        let (result, _) = run(&runtime(), program).await;
        assert_eq!(
            failure(&result),
            Some((
                "invalid-output",
                format!("program completion must be lossless JSON: {detail}")
            )),
            "{program}"
        );
    }
}

#[tokio::test]
async fn the_output_ledger_is_exact_at_the_cap() {
    let cases = [
        (7, "return '€'", true),
        (6, "return '€'", false),
        (11, "print('abc')\nreturn 'xy'", true),
        (10, "print('abc')\nreturn 'xy'", false),
    ];
    for (cap, program, fits) in cases {
        let (result, _) = run(&capped(cap), program).await;
        let over = failure(&result).filter(|(kind, _)| *kind == "output-limit");
        if fits {
            assert!(over.is_none(), "cap {cap}: {program}: {:?}", result.error);
        } else {
            assert_eq!(
                over.map(|(_, m)| m),
                Some(format!("outer output exceeded {cap} bytes")),
                "cap {cap}: {program}"
            );
        }
    }
    let (result, _) = run(&capped(300), "for i in range(1000):\n    print('line', i)").await;
    assert_eq!(failure(&result).unwrap().0, "output-limit");
    assert_eq!(result.logs[0], "line 0");
    let (result, _) = run(
        &capped(4096),
        "import sys\nwhile True:\n    sys.stdout.write('flood\\n')",
    )
    .await;
    assert_eq!(
        failure(&result),
        Some((
            "output-limit",
            "outer output exceeded 4096 bytes".to_owned()
        ))
    );
}

#[tokio::test]
async fn the_compute_budget_kills_a_hot_loop() {
    let runtime = runtime_with(RuntimeLimits {
        compute: Duration::from_millis(500),
        ..RuntimeLimits::default()
    });
    let (result, _) = run(&runtime, "while True:\n    pass").await;
    assert_eq!(
        failure(&result),
        Some((
            "timeout",
            "compute budget exhausted (500ms busy)".to_owned()
        ))
    );
}

#[tokio::test]
async fn the_wall_clock_ceiling_ends_a_run_waiting_forever() {
    let runtime = runtime_with(RuntimeLimits {
        wall: Duration::from_millis(1500),
        ..RuntimeLimits::default()
    });
    let (result, _) = run(&runtime, "print('waiting')\nawait tools.never({})").await;
    assert_eq!(
        failure(&result),
        Some(("timeout", "wall-clock ceiling reached (1500ms)".to_owned()))
    );
    assert_eq!(result.logs, ["waiting"]);
}

#[tokio::test]
async fn the_token_aborts_and_a_pre_aborted_run_starts_nothing() {
    let host = Host::new();
    let request = CodeRunRequest::new("await tools.cancel({})", tools(), host.clone())
        .with_cancel(host.cancel.clone());
    let result = runtime().run(request).await.unwrap();
    assert_eq!(failure(&result), Some(("abort", "run aborted".to_owned())));

    let host = Host::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let request =
        CodeRunRequest::new("await tools.echo({})", tools(), host.clone()).with_cancel(cancel);
    let result = runtime().run(request).await.unwrap();
    assert_eq!(failure(&result), Some(("abort", "run aborted".to_owned())));
    assert!(host.calls().is_empty());
}

#[tokio::test]
async fn memory_exhaustion_is_an_error_and_the_next_run_works() {
    let runtime = runtime_with(RuntimeLimits {
        memory_bytes: 64 * 1024 * 1024,
        ..RuntimeLimits::default()
    });
    let (result, _) = run(&runtime, "x = bytearray(1024 * 1024 * 1024)").await;
    let (kind, message) = failure(&result).unwrap();
    assert_eq!(kind, "exception");
    assert!(message.contains("MemoryError"), "{message}");
    let (result, _) = run(&runtime, "return 'fine'").await;
    assert_eq!(success(&result), "\"fine\"");
}

#[tokio::test]
async fn exit_codes_are_worker_exits() {
    let (result, _) = run(&runtime(), "import sys\nsys.exit(7)").await;
    assert_eq!(
        failure(&result),
        Some((
            "worker-exit",
            "worker exited with code 7 before completing".to_owned()
        ))
    );
    let (result, _) = run(&runtime(), "import os\nos._exit(3)").await;
    assert_eq!(failure(&result).unwrap().0, "worker-exit");
}

#[tokio::test]
async fn bindings_resolve_and_reject_with_the_error_class() {
    let program = r#"
first = await tools.echo({"n": 1})
try:
    await tools.fail({})
except ToolCallError as e:
    caught = {"isTyped": isinstance(e, ToolCallError), "toolName": e.toolName, "message": str(e)}
results = await asyncio.gather(tools.gate("a"), tools.gate("b"), tools.gate("c"))
proto = await tools["__proto__"]({})
try:
    await tools.fail()
except ToolCallError as e:
    missing = str(e)
return {"first": first, "caught": caught, "gathered": results, "proto": proto, "missing": missing,
        "unknown": hasattr(tools, "hasOwnProperty")}
"#;
    let program = format!("import asyncio\n{program}");
    let (result, host) = run(&runtime(), &program).await;
    let text = success(&result);
    assert!(text.starts_with(r#"{"first":{"echoed":{"n":1}},"caught":{"isTyped":true,"toolName":"fail","message":"nope"},"gathered":["a","b","c"],"proto":"proto-tool-ok","missing":"binding arguments must be lossless JSON"#), "{text}");
    assert!(text.ends_with(r#""unknown":false}"#), "{text}");
    assert_eq!(host.calls().len(), 6);
}

#[tokio::test]
async fn lossy_arguments_are_refused_inside_the_child() {
    let program = r#"
out = []
cyclic = []
cyclic.append(cyclic)
for bad in [float("nan"), -0.0, {1: 2}, object(), 2 ** 70, cyclic, {"s": {1, 2}}]:
    try:
        await tools.echo(bad)
        out.append("dispatched")
    except ToolCallError as e:
        out.append(str(e).startswith("binding arguments must be lossless JSON"))
return out
"#;
    let (result, host) = run(&runtime(), program).await;
    assert_eq!(success(&result), "[true,true,true,true,true,true,true]");
    assert!(host.calls().is_empty());
}

#[tokio::test]
async fn the_environment_is_empty_and_isolated() {
    let program = "import os, sys\nreturn {'env': sorted(k for k in os.environ if k != 'LC_CTYPE'), 'isolated': sys.flags.isolated, 'globals': sorted(k for k in globals() if not k.startswith('__'))}";
    let (result, _) = run(&runtime(), program).await;
    assert_eq!(
        success(&result),
        r#"{"env":["PATH"],"isolated":1,"globals":["ToolCallError","tools"]}"#
    );
}

#[tokio::test]
async fn a_hostile_fd3_peer_is_contained() {
    // The program writes its own frames on fd 3: junk, unknown types, forged calls to
    // undeclared names, duplicate ids, lossy numbers, and finally a forged `done`.
    let program = r#"
import os
def raw(text):
    os.write(3, text.encode() + b"\n")
raw("not json")
raw("[1, 2]")
raw('{"type": "mystery"}')
raw('{"type": "log", "text": 5}')
raw('{"type": "log", "text": "forged log", "truncated": "yes"}')
raw('{"type": "call", "id": 900, "global": "tools", "name": "hasOwnProperty", "args": {}}')
raw('{"type": "call", "id": -0, "global": "tools", "name": "echo", "args": {}}')
raw('{"type": "call", "id": 901, "global": "tools", "name": "echo", "args": {"n": 18446744073709551617}}')
raw('{"type": "call", "id": 902, "global": "tools", "name": "echo", "args": {"z": -0.0}}')
raw('{"type": "call", "id": 903, "global": "tools", "name": "echo", "args": {"ok": 1}}')
raw('{"type": "call", "id": 903, "global": "tools", "name": "echo", "args": {"dup": 1}}')
raw('{"type": "done", "error": {"kind": "nonsense", "message": "x"}}')
raw('{"type": "done", "value": 42, "error": {"kind": "exception", "message": "forged failure"}}')
raw('{"type": "done", "value": "after settlement"}')
import time
time.sleep(60)
"#;
    let (result, host) = run(&runtime(), program).await;
    assert_eq!(
        failure(&result),
        Some(("exception", "forged failure".to_owned()))
    );
    assert_eq!(result.logs, ["forged log"]);
    let calls = host.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].2, r#"{"ok":1}"#);
}

#[tokio::test]
async fn forged_output_limit_and_deep_done_frames() {
    let marker = "import os\nos.write(3, b'{\"type\": \"log\", \"text\": \"x\", \"truncated\": true}\\n')\nimport time\ntime.sleep(60)";
    let (result, _) = run(&runtime(), marker).await;
    assert_eq!(failure(&result).unwrap().0, "output-limit");

    let deep = "import os\nos.write(3, b'{\"type\": \"done\", \"value\": ' + b'[' * 5000 + b']' * 5000 + b'}\\n')\nimport time\ntime.sleep(60)";
    let (result, _) = run(&deep_runtime(), deep).await;
    assert_eq!(result.value.map(|v| v.depth()), Some(5000));

    let lossy = "import os\nos.write(3, b'{\"type\": \"done\", \"value\": -0.0}\\n')\nimport time\ntime.sleep(60)";
    let (result, _) = run(&runtime(), lossy).await;
    assert_eq!(failure(&result).unwrap().0, "invalid-output");
}

#[tokio::test]
async fn invalid_bindings_are_contract_errors() {
    let bad = BindingNamespace::new("tools", ["a"], Some(ErrorClass::new("E", "__dict__")));
    let err = runtime()
        .run(CodeRunRequest::new("return 1", vec![bad], Host::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, ContractError::UnusableMemberProperty { .. }));
}

#[test]
fn a_missing_interpreter_is_refused_when_the_runtime_is_built() {
    for isolation in [Isolation::Sandbox, Isolation::UnconfinedProcess] {
        let err = PythonRuntime::with_options(
            RuntimeLimits::default(),
            PythonOptions::default()
                .interpreter("/nonexistent/python3")
                .isolation(isolation),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ContractError::InterpreterUnavailable { interpreter, .. } if interpreter == "/nonexistent/python3"),
            "{err}"
        );
    }
}

#[test]
fn a_missing_sandbox_fails_closed_and_names_what_is_missing() {
    let err = PythonRuntime::with_options(
        RuntimeLimits::default(),
        PythonOptions::default().bwrap("/nonexistent/bwrap"),
    )
    .unwrap_err();
    let ContractError::Unconfinable { missing } = &err else {
        panic!("{err}");
    };
    assert!(missing.contains("bubblewrap"), "{missing}");
    assert!(err.to_string().contains("UnconfinedProcess"), "{err}");
    // The explicit opt-out does not need the sandbox.
    let unconfined = PythonRuntime::with_options(
        RuntimeLimits::default(),
        PythonOptions::default()
            .bwrap("/nonexistent/bwrap")
            .isolation(Isolation::UnconfinedProcess),
    )
    .unwrap();
    assert_eq!(unconfined.isolation(), "unconfined-process");
}

#[tokio::test]
async fn disposal_aborts_live_runs_and_refuses_later_ones() {
    let runtime = Arc::new(runtime());
    let host = Host::new();
    let request = CodeRunRequest::new(
        "await tools.started({})\nwhile True:\n    pass",
        tools(),
        host.clone(),
    );
    let started = Arc::clone(&host.started);
    let disposer = Arc::clone(&runtime);
    let (result, ()) = tokio::join!(runtime.run(request), async move {
        started.notified().await;
        disposer.dispose().await;
    });
    assert_eq!(
        failure(&result.unwrap()),
        Some(("abort", "runtime disposed".to_owned()))
    );
    let later = runtime
        .run(CodeRunRequest::new("return 1", tools(), Host::new()))
        .await;
    assert_eq!(later.unwrap_err(), ContractError::Disposed);
}

#[tokio::test]
async fn a_failed_call_carries_its_machine_code() {
    // `fail` rejects with DENIED; `failRaw` with no code; a refused argument is INVALID_ARGS.
    let program = r#"
out = []
for name, args in [("fail", {}), ("failRaw", {}), ("echo", None)]:
    try:
        await tools[name](args) if args is not None else await tools[name]()
    except ToolCallError as e:
        out.append([e.toolName, e.code])
return out
"#;
    let text = success(&run(&runtime(), program).await.0);
    assert_eq!(
        text,
        r#"[["fail","DENIED"],["failRaw",null],["echo","INVALID_ARGS"]]"#
    );
}

#[tokio::test]
async fn a_binding_with_a_signature_packs_positional_and_keyword_arguments() {
    let namespaces = vec![
        BindingNamespace::new(
            "tools",
            ["echo", "identity"],
            Some(ErrorClass::tool_call_error()),
        )
        .with_signature("identity", ["query", "limit"]),
    ];
    let program = r#"
out = []
out.append(await tools.identity("q", 3))
out.append(await tools.identity("q", limit=4))
out.append(await tools.identity(query="q"))
out.append(await tools.identity())
out.append(await tools.identity("q", None))
out.append(await tools.echo({"plain": True}))
for call in [
    lambda: tools.identity("q", 1, 2),
    lambda: tools.identity("q", other=1),
    lambda: tools.identity("q", query="again"),
    lambda: tools.identity(float("nan")),
]:
    try:
        await call()
        out.append("no error")
    except ToolCallError as error:
        out.append([error.toolName, error.code, str(error)])
return out
"#;
    let host = Host::new();
    let request = CodeRunRequest::new(program, namespaces, host.clone());
    let result = runtime().run(request).await.unwrap();
    let value: serde_json::Value = serde_json::from_str(&success(&result)).unwrap();
    assert_eq!(
        value.as_array().map(|a| a[..9].to_vec()),
        Some(vec![
            serde_json::json!({"query": "q", "limit": 3}),
            serde_json::json!({"query": "q", "limit": 4}),
            serde_json::json!({"query": "q"}),
            serde_json::json!({}),
            serde_json::json!({"query": "q", "limit": null}),
            serde_json::json!({"echoed": {"plain": true}}),
            serde_json::json!([
                "identity",
                "INVALID_ARGS",
                "identity() takes at most 2 arguments (3 given)"
            ]),
            serde_json::json!([
                "identity",
                "INVALID_ARGS",
                "identity() got an unexpected keyword argument 'other'"
            ]),
            serde_json::json!([
                "identity",
                "INVALID_ARGS",
                "identity() got multiple values for argument 'query'"
            ]),
        ]),
        "{value}"
    );
    assert_eq!(value[9][1], "INVALID_ARGS");
    assert!(
        value[9][2]
            .as_str()
            .unwrap_or_default()
            .starts_with("binding arguments must be lossless JSON"),
        "{value}"
    );
    // The refused calls never reached the host.
    assert_eq!(host.calls().len(), 6);
}
