//! A property test of containment (issue 14): exotic JavaScript values, generated from a
//! grammar (revoked and trapping proxies of every trap kind, cycles, symbols, throwing
//! getters and conversions, hostile errors, BigInt, huge strings, functions, null
//! prototypes, nested in arrays, objects and errors' `cause`), are thrown, rejected,
//! thrown inside `.then`, returned, thrown from a getter of the returned value, logged and
//! passed to a binding. Every run must return (a panic in the engine thread aborts the
//! whole test process) with a sensible kind.
//!
//! More than 10 000 programs run in total: [`CASES_PER_TEST`] per test function, several
//! functions so the harness spreads them over the cores. Each function reuses one tokio
//! runtime and one [`QuickJsRuntime`]; every program still gets a fresh engine on its own
//! thread, as in production.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use tools_codemode::{CodeRunRequest, CodeRunResult, CodeRuntime, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;

use tools_codemode::testing::{Host, failure, tools};

/// Programs per test function; the suite has [`TEST_FUNCTIONS`] of them.
const CASES_PER_TEST: u32 = 1_300;
/// The number of test functions below (for the total in the docs).
const TEST_FUNCTIONS: u32 = 8;
const _: () = assert!(CASES_PER_TEST * TEST_FUNCTIONS >= 10_000);

/// The proxy traps, each made to throw in turn.
const TRAPS: [&str; 13] = [
    "get",
    "set",
    "has",
    "deleteProperty",
    "ownKeys",
    "getOwnPropertyDescriptor",
    "defineProperty",
    "getPrototypeOf",
    "setPrototypeOf",
    "isExtensible",
    "preventExtensions",
    "apply",
    "construct",
];

/// Leaves that need no parameter.
const LEAVES: &[&str] = &[
    "1",
    "'text'",
    "null",
    "undefined",
    "NaN",
    "-0",
    "true",
    "2n ** 70n",
    "Symbol('sym')",
    "Symbol.iterator",
    "'lone \\uD800 surrogate'",
    "'x'.repeat(100000)",
    "function named() {}",
    "() => 1",
    "class Klass {}",
    "Math.max",
    "Object.create(null)",
    "new Date(0)",
    "new Map([[1, 2]])",
    "/re/g",
    "new Uint8Array(4)",
    "Promise.resolve(1)",
    "new WeakMap()",
    "globalThis",
    "(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })()",
    "(() => { const r = Proxy.revocable(function () {}, {}); r.revoke(); return r.proxy; })()",
    "(() => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy; })()",
    "new Proxy({}, { getPrototypeOf() { return 5; } })",
    "new Proxy([1, 2], {})",
    "new Proxy({}, {})",
    "(() => { const o: any = {}; o.self = o; return o; })()",
    "(() => { const a: any[] = []; a.push(a); return a; })()",
    "(() => { const a: any[] = []; a.length = 4294967295; return a; })()",
    "(() => { const a: any[] = [1]; a.length = 2 ** 31; return a; })()",
    "{ get g() { throw new Error('getter'); } }",
    "{ toString() { throw new Error('toString'); } }",
    "{ valueOf() { throw 1; }, toString: undefined }",
    "{ [Symbol.toPrimitive]() { throw new Error('prim'); } }",
    "{ get [Symbol.toPrimitive]() { throw new Error('prim getter'); } }",
    "{ then() { throw new Error('then'); } }",
    "{ get then() { throw new Error('then getter'); } }",
    "(() => { const e = new Error('m'); Object.defineProperty(e, 'message', { get() { throw 1; } }); Object.defineProperty(e, 'stack', { get() { throw 2; } }); return e; })()",
    "(() => { const e = new RangeError('r'); Object.defineProperty(e, 'name', { get() { return Symbol('n'); } }); return e; })()",
    "(() => { const e = new Error('p'); Object.setPrototypeOf(e, new Proxy({}, { get() { throw 1; } })); return e; })()",
    "(() => { const r = Proxy.revocable({}, {}); const e = new TypeError('q'); Object.setPrototypeOf(e, r.proxy); r.revoke(); return e; })()",
    "(() => { class E extends Error { get message(): string { throw 1; } } return new E('x'); })()",
    "new AggregateError([1, 2], 'agg')",
    "new Error('long '.repeat(1000))",
    "(() => { const e: any = new Error('self cause'); e.cause = e; return e; })()",
];

/// One exotic value, as a JavaScript expression that never throws while it is built.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => prop::sample::select(LEAVES).prop_map(|leaf| format!("({leaf})")),
        1 => prop::sample::select(&TRAPS[..]).prop_map(|trap| format!(
            "new Proxy({{}}, {{ {trap}() {{ throw new Error('trap {trap}'); }} }})"
        )),
        1 => prop::sample::select(&TRAPS[..]).prop_map(|trap| format!(
            "new Proxy(function target() {{}}, {{ {trap}() {{ throw new Error('trap {trap}'); }} }})"
        )),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{{ a: {a}, b: {b} }}")),
            inner
                .clone()
                .prop_map(|a| format!("new Error('wrapped', {{ cause: {a} }})")),
            inner.clone().prop_map(|a| format!(
                "Object.assign(Object.create(null), {{ x: {a} }})"
            )),
            inner.clone().prop_map(|a| format!(
                "(() => {{ try {{ return Object.create({a}); }} catch {{ return {{ unbuilt: true }}; }} }})()"
            )),
            (inner.clone(), inner).prop_map(|(a, b)| format!("new Map<any, any>([[{a}, {b}]])")),
        ]
    })
}

/// How a value meets the runtime.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Throw,
    Reject,
    ThrowInThen,
    ReturnRejected,
    ThrowAsCause,
    ThrowFromResultGetter,
    Return,
    Log,
    Binding,
}

impl Mode {
    fn program(self, value: &str) -> String {
        match self {
            Mode::Throw => format!("const v: any = {value};\nthrow v;"),
            Mode::Reject => format!("const v: any = {value};\nawait Promise.reject(v);"),
            Mode::ThrowInThen => {
                format!(
                    "await Promise.resolve(0).then(() => {{ const v: any = {value}; throw v; }});"
                )
            }
            Mode::ReturnRejected => format!("return Promise.reject({value});"),
            Mode::ThrowAsCause => format!("throw new Error('outer', {{ cause: {value} }});"),
            Mode::ThrowFromResultGetter => {
                format!("const v: any = {value};\nreturn {{ ok: 1, get bad() {{ throw v; }} }};")
            }
            Mode::Return => format!("return {value};"),
            Mode::Log => {
                format!("console.log({value});\nconsole.log('after', [{value}]);\nreturn 'ok';")
            }
            Mode::Binding => format!(
                "return await tools.echo({{ v: {value} }}).then(() => 'resolved', (e: any) => e instanceof ToolCallError ? 'rejected' : 'other');"
            ),
        }
    }

    /// Checks the outcome of the program for `value`.
    fn check(self, result: &CodeRunResult) -> Result<(), String> {
        let kind = failure(result);
        let ok = match (self, &kind) {
            (
                Mode::Throw
                | Mode::Reject
                | Mode::ThrowInThen
                | Mode::ReturnRejected
                | Mode::ThrowAsCause,
                Some(("exception", message)),
            ) => !message.is_empty(),
            (Mode::ThrowFromResultGetter, Some(("invalid-output", _))) => true,
            (Mode::Return, None | Some(("invalid-output" | "exception", _))) => true,
            (Mode::Log, None) => result.logs.len() == 2 && result.logs[1].starts_with("after "),
            (Mode::Binding, None) => result.value.is_some(),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{self:?}: unexpected outcome {kind:?} (logs {:?})",
                result.logs
            ))
        }
    }
}

fn limits() -> RuntimeLimits {
    RuntimeLimits {
        compute: Duration::from_secs(20),
        wall: Duration::from_secs(120),
        memory_bytes: 256 * 1024 * 1024,
        ..RuntimeLimits::default()
    }
}

/// Runs [`CASES_PER_TEST`] generated programs in `modes` on one tokio runtime and one
/// QuickJS runtime.
fn check_modes(modes: &'static [Mode]) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let runtime = QuickJsRuntime::new(limits()).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: CASES_PER_TEST,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (value(), prop::sample::select(modes));
    runner
        .run(&strategy, |(value, mode)| {
            let program = mode.program(&value);
            let request = CodeRunRequest::new(program.as_str(), tools(), Host::new());
            let result = tokio
                .block_on(runtime.run(request))
                .map_err(|error| TestCaseError::fail(format!("contract error: {error}")))?;
            mode.check(&result)
                .map_err(|message| TestCaseError::fail(format!("{message}\nprogram:\n{program}")))
        })
        .unwrap();
}

#[test]
fn exotic_values_thrown_synchronously() {
    check_modes(&[Mode::Throw, Mode::ThrowAsCause]);
}

#[test]
fn exotic_values_rejected() {
    check_modes(&[Mode::Reject, Mode::ReturnRejected]);
}

#[test]
fn exotic_values_thrown_inside_then() {
    check_modes(&[Mode::ThrowInThen]);
}

#[test]
fn exotic_values_thrown_from_a_getter_of_the_result() {
    check_modes(&[Mode::ThrowFromResultGetter]);
}

#[test]
fn exotic_values_returned() {
    check_modes(&[Mode::Return]);
}

#[test]
fn exotic_values_logged() {
    check_modes(&[Mode::Log]);
}

#[test]
fn exotic_values_passed_to_a_binding() {
    check_modes(&[Mode::Binding]);
}

#[test]
fn exotic_values_every_way() {
    check_modes(&[
        Mode::Throw,
        Mode::Reject,
        Mode::ThrowInThen,
        Mode::ReturnRejected,
        Mode::ThrowAsCause,
        Mode::ThrowFromResultGetter,
        Mode::Return,
        Mode::Log,
        Mode::Binding,
    ]);
}
