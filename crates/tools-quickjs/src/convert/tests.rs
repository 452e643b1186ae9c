//! The conversions on a real engine: what crosses, what is refused and with which detail.

use proptest::prelude::*;
use rquickjs::{Context, Ctx, Runtime, Value};
use serde_json::{Number, json};
use tools_json::JsonValue;

use super::to_sandbox::exact_number;
use super::{Refusal, Step, render_path, to_js, to_json};
use crate::intrinsics::Intrinsics;
use crate::prelude::PRELUDE;

/// The depth limit of the tests' walks.
const MAX_DEPTH: usize = 100;

/// Runs `body` in a fresh realm with the prelude's intrinsics.
fn with_realm<R>(body: impl for<'js> FnOnce(&Ctx<'js>, &Intrinsics<'js>) -> R) -> R {
    let runtime = Runtime::new().unwrap();
    let context = Context::full(&runtime).unwrap();
    context.with(|ctx| {
        let captured: rquickjs::Array<'_> = ctx.eval(PRELUDE).unwrap();
        let intrinsics = Intrinsics::capture(&captured).unwrap();
        body(&ctx, &intrinsics)
    })
}

/// The conversion of the value `source` evaluates to: its compact JSON, or the refusal.
fn convert(source: &str) -> Result<String, String> {
    with_realm(|ctx, intrinsics| {
        let value: Value<'_> = ctx.eval(source).unwrap();
        match to_json(ctx, intrinsics, value, MAX_DEPTH, &|| false) {
            Ok(json) => Ok(json.to_string()),
            Err(Refusal::Lossy(detail)) => Err(detail),
            Err(Refusal::TooDeep(detail)) => Err(format!("too deep: {detail}")),
            Err(Refusal::Stopped) => Err("stopped".to_owned()),
        }
    })
}

/// An object nested `levels` deep through the key `k`, with `leaf` innermost, as source.
fn nested(levels: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "({k: ".repeat(levels), "})".repeat(levels))
}

#[test]
fn paths_render_like_accessors() {
    let steps = [Step::Key("a"), Step::Index(2), Step::Key("b c")];
    assert_eq!(render_path(steps), "$.a[2][\"b c\"]");
    assert_eq!(render_path([]), "$");
}

#[test]
fn exact_numbers() {
    let exact = |text: &str| exact_number(&serde_json::from_str::<Number>(text).unwrap());
    assert_eq!(exact("9007199254740992"), Some(9_007_199_254_740_992.0));
    assert_eq!(exact("9007199254740993"), None);
    assert_eq!(
        exact("1152921504606846976"),
        Some(1_152_921_504_606_846_976.0)
    );
    assert_eq!(exact("-9007199254740993"), None);
    assert_eq!(exact("18446744073709551615"), None);
    assert_eq!(exact("9223372036854775807"), None);
    assert_eq!(exact("2.5"), Some(2.5));
}

#[test]
fn plain_values_cross_in_key_order() {
    assert_eq!(
        convert("({ text: 'x1', n: 1 })"),
        Ok(r#"{"text":"x1","n":1}"#.into())
    );
    assert_eq!(
        convert("({ b: 1, 2: [true, null, 2.5, 'é'], a: { c: -3 } })"),
        Ok(r#"{"2":[true,null,2.5,"é"],"b":1,"a":{"c":-3}}"#.into())
    );
    assert_eq!(
        convert("Object.assign(Object.create(null), { z: 4.0, y: [] })"),
        Ok(r#"{"z":4,"y":[]}"#.into())
    );
    assert_eq!(convert("[]"), Ok("[]".into()));
    assert_eq!(convert("'text'"), Ok(r#""text""#.into()));
    // The same object twice is not a cycle, at any depth.
    let shared = format!(
        "(() => {{ const s = {{ v: 1 }}; return {}; }})()",
        nested(40, "[s, s, { again: s }]")
    );
    let expected = format!(
        "{}{}{}",
        r#"{"k":"#.repeat(40),
        r#"[{"v":1},{"v":1},{"again":{"v":1}}]"#,
        "}".repeat(40)
    );
    assert_eq!(convert(&shared), Ok(expected));
}

#[test]
fn refusals_keep_their_paths_and_reasons() {
    let cases = [
        ("({ a: [1, undefined] })", "$.a[1]: undefined is not JSON"),
        (
            "({ 'b c': -0 })",
            "$[\"b c\"]: negative zero cannot be carried by JSON",
        ),
        ("({ n: NaN })", "$.n: a non-finite number is not JSON"),
        ("[Infinity]", "$[0]: a non-finite number is not JSON"),
        (
            "({ s: 'a\\uD800' })",
            "$.s: a string with a lone surrogate is not JSON",
        ),
        ("({ s: Symbol('x') })", "$.s: a symbol is not JSON"),
        ("({ b: 1n })", "$.b: a BigInt is not JSON"),
        ("({ f() {} })", "$.f: a function is not JSON"),
        ("({ c: class {} })", "$.c: a function is not JSON"),
        ("({ p: new Proxy({}, {}) })", "$.p: a Proxy is not JSON"),
        (
            "({ d: new Date(0) })",
            "$.d: an object whose prototype is not Object.prototype or null (a Date, a class instance, …) is not JSON",
        ),
        (
            "({ m: new Map() })",
            "$.m: an object whose prototype is not Object.prototype or null (a Date, a class instance, …) is not JSON",
        ),
        (
            "(() => { const o = { a: {} }; o.a.up = o; return o; })()",
            "$.a.up: a circular reference is not JSON",
        ),
        (
            "(() => { const a = [1]; a.push(a); return { a }; })()",
            "$.a[1]: a circular reference is not JSON",
        ),
        ("[1, , 3]", "$: a sparse array is not JSON"),
        (
            "(() => { const a = [1]; a.x = 2; return a; })()",
            "$: an array with extra properties is not JSON",
        ),
        (
            "(() => { const a = [1]; Object.setPrototypeOf(a, null); return a; })()",
            "$: an array with a foreign prototype is not JSON",
        ),
        (
            "({ get bad() { throw new Error('getter'); } })",
            "$.bad: reading it threw: getter",
        ),
        (
            "({ ok: 1, get bad() { throw 'plain'; } })",
            "$.bad: reading it threw: plain",
        ),
        // A key that parses as the missing index is taken for it, as it always was.
        (
            "(() => { const a = []; a[0] = 0; a['+1'] = 1; a.length = 2; return a; })()",
            "$[1]: undefined is not JSON",
        ),
        (
            "({ ['k\\uDC00']: 1 })",
            "$: a key with a lone surrogate is not JSON",
        ),
        ("undefined", "$: undefined is not JSON"),
    ];
    for (source, detail) in cases {
        assert_eq!(convert(source), Err(detail.to_owned()), "{source}");
    }
}

#[test]
fn cycles_are_found_at_any_depth() {
    // The innermost object points back at the root (compared one by one) ...
    let to_root = format!(
        "(() => {{ const root = {{}}; root.k = {}; return root; }})()",
        nested(39, "root")
    );
    let path = format!("$.k{}", ".k".repeat(39));
    assert_eq!(
        convert(&to_root),
        Err(format!("{path}: a circular reference is not JSON"))
    );
    // ... and at an object past the first 32 levels (looked up in the set).
    let source = "(() => { const root = {}; let at = root; let mark; \
                  for (let i = 0; i < 45; i++) { at.k = {}; at = at.k; if (i === 35) mark = at; } \
                  at.back = mark; return root; })()";
    let path = format!("$.k{}.back", ".k".repeat(44));
    assert_eq!(
        convert(source),
        Err(format!("{path}: a circular reference is not JSON"))
    );
}

#[test]
fn the_depth_limit_is_reported_with_its_path() {
    assert!(convert(&nested(MAX_DEPTH - 1, "[]")).is_ok());
    let path = format!("${}", ".k".repeat(MAX_DEPTH));
    assert_eq!(
        convert(&nested(MAX_DEPTH, "[]")),
        Err(format!(
            "too deep: {path}: nesting exceeds the depth limit of {MAX_DEPTH}"
        ))
    );
}

#[test]
fn an_inexact_integer_is_refused_with_its_path() {
    with_realm(|ctx, _| {
        let value =
            JsonValue::new(json!({ "a": [1, { "b c": 9_007_199_254_740_993_u64 }] })).unwrap();
        match to_js(ctx, &value, &|| false) {
            Err(Refusal::Lossy(detail)) => assert_eq!(
                detail,
                "$.a[1][\"b c\"]: the integer 9007199254740993 has no exact JavaScript number"
            ),
            other => panic!("{other:?}"),
        }
    });
}

/// A JSON value of strings, integers, finite doubles, booleans, null, arrays and objects.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(serde_json::Value::from),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::vec(("[a-z0-9_ é]{0,6}", inner), 0..6)
                .prop_map(|members| serde_json::Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any host JSON survives the trip into the sandbox and back, and so does the value
    /// `JSON.parse` makes of its text.
    #[test]
    fn json_round_trips(value in json_value()) {
        let value = JsonValue::new(value).unwrap();
        let text = value.to_string();
        let (built, parsed) = with_realm(|ctx, intrinsics| {
            let built = to_js(ctx, &value, &|| false).unwrap();
            let back = to_json(ctx, intrinsics, built, MAX_DEPTH, &|| false).unwrap();
            let json_parse: rquickjs::Function<'_> = ctx.eval("JSON.parse").unwrap();
            let parsed: Value<'_> = json_parse.call((text.as_str(),)).unwrap();
            let parsed = to_json(ctx, intrinsics, parsed, MAX_DEPTH, &|| false).unwrap();
            (back, parsed)
        });
        prop_assert_eq!(&built, &value);
        prop_assert_eq!(&parsed, &value);
    }
}
