//! Group O: concurrency classification.

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::json;
use tools_json::JsonValue;
use tools_registry::{
    ExecutionMode, OutputDecl, Registry, ToolDefinition, ToolFilter, define_tool,
};
use tools_schema::ToolArgs;

fn classified(
    name: &str,
    classify: impl Fn(&JsonValue) -> bool + Send + Sync + 'static,
) -> ToolDefinition {
    ToolDefinition::builder(name, "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("x")) })
        .concurrency(classify)
        .build()
        .unwrap()
}

fn args(v: serde_json::Value) -> JsonValue {
    JsonValue::new(v).unwrap()
}

#[test]
fn o01_only_an_exact_yes_is_parallel() {
    let registry = Registry::new();
    registry
        .register(classified("yes", |_| true))
        .unwrap()
        .keep();
    registry.register(crate::support::t("none")).unwrap().keep();
    let view = registry.view(None);
    assert_eq!(
        view.execution_mode("yes", &args(json!({})), false),
        ExecutionMode::Parallel
    );
    assert_eq!(
        view.execution_mode("none", &args(json!({})), false),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        view.execution_mode("ghost", &args(json!({})), false),
        ExecutionMode::Exclusive
    );
}

#[derive(Deserialize, ToolArgs)]
struct ModeArgs {
    mode: String,
}

#[test]
fn o02_typed_classifiers_see_typed_arguments_and_invalid_ones_are_exclusive() {
    let registry = Registry::new();
    let def = define_tool::<ModeArgs, String>("fs", "d")
        .body(|a: ModeArgs, _c| async move { Ok(a.mode) })
        .concurrency(|a: &ModeArgs| a.mode == "read")
        .build()
        .unwrap();
    registry.register(def).unwrap().keep();
    let view = registry.view(None);
    assert_eq!(
        view.execution_mode("fs", &args(json!({"mode": "read"})), false),
        ExecutionMode::Parallel
    );
    assert_eq!(
        view.execution_mode("fs", &args(json!({"mode": "write"})), false),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        view.execution_mode("fs", &args(json!({})), false),
        ExecutionMode::Exclusive
    );
}

#[test]
fn o02b_concurrency_safe_and_read_only_typed_tools_are_parallel_for_valid_arguments_only() {
    let registry = Registry::new();
    let safe = define_tool::<ModeArgs, String>("safe", "d")
        .body(|a: ModeArgs, _c| async move { Ok(a.mode) })
        .concurrency_safe()
        .build()
        .unwrap();
    let read = define_tool::<ModeArgs, String>("read", "d")
        .body(|a: ModeArgs, _c| async move { Ok(a.mode) })
        .read_only()
        .build()
        .unwrap();
    assert_eq!(read.hints().read_only, Some(true));
    assert_eq!(safe.hints().read_only, None);
    registry.register(safe).unwrap().keep();
    registry.register(read).unwrap().keep();
    let view = registry.view(None);
    for name in ["safe", "read"] {
        for mode in ["read", "write"] {
            // The same snapshot classified twice: the remembered pass gives the same answer.
            let valid = args(json!({ "mode": mode }));
            for _ in 0..2 {
                assert_eq!(
                    view.execution_mode(name, &valid, false),
                    ExecutionMode::Parallel,
                    "{name} {mode}"
                );
            }
        }
        for invalid in [json!({}), json!({"mode": 1}), json!("read")] {
            assert_eq!(
                view.execution_mode(name, &args(invalid.clone()), false),
                ExecutionMode::Exclusive,
                "{name} {invalid}"
            );
        }
    }
}

#[test]
fn o03_a_panicking_classifier_is_exclusive() {
    let registry = Registry::new();
    registry
        .register(classified("boom", |_| panic!("classifier bug")))
        .unwrap()
        .keep();
    assert_eq!(
        registry
            .view(None)
            .execution_mode("boom", &args(json!({})), false),
        ExecutionMode::Exclusive
    );
}

#[test]
fn o04_the_classifier_sees_the_arguments() {
    let seen = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&seen);
    let registry = Registry::new();
    registry
        .register(classified("spy", move |a| {
            *sink.lock().unwrap() = Some(a.as_value().clone());
            true
        }))
        .unwrap()
        .keep();
    assert_eq!(
        registry
            .view(None)
            .execution_mode("spy", &args(json!({"anything": 1})), false),
        ExecutionMode::Parallel
    );
    assert_eq!(*seen.lock().unwrap(), Some(json!({"anything": 1})));
}

#[test]
fn o05_visibility_decides_first() {
    let registry = Registry::new();
    registry.register(classified("g", |_| true)).unwrap().keep();
    let (a, b) = (registry.scope(), registry.scope());
    a.register(classified("scoped", |_| true)).unwrap().keep();
    b.restrict(ToolFilter::deny(["g"])).unwrap().keep();
    let none = args(json!({}));
    assert_eq!(
        registry
            .view(Some(&a))
            .execution_mode("scoped", &none, false),
        ExecutionMode::Parallel
    );
    assert_eq!(
        registry
            .view(Some(&b))
            .execution_mode("scoped", &none, false),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        registry.view(Some(&b)).execution_mode("g", &none, false),
        ExecutionMode::Exclusive
    );
}

#[test]
fn has_timeouts_follows_scopes_and_the_transport() {
    use std::time::Duration;
    use tools_registry::{OutputDecl, ToolDefinition};
    let timed = |name: &str, budget: Option<u64>| {
        let builder = ToolDefinition::builder(name, "t")
            .output(OutputDecl::text(serde_json::json!({"type": "string"})))
            .body(|_a, _c| async { Ok(serde_json::json!("x")) });
        match budget {
            Some(ms) => builder.timeout(Duration::from_millis(ms)),
            None => builder,
        }
        .build()
        .expect("valid definition")
    };
    let registry = Registry::new();
    assert!(!registry.has_timeouts());
    let plain = registry.register(timed("plain", None)).expect("registers");
    assert!(!registry.has_timeouts());

    // A scoped tool counts while its scope lives; dropping the scope forgets it.
    let scope = registry.scope();
    scope
        .register(timed("slow", Some(50)))
        .expect("registers")
        .keep();
    assert!(registry.has_timeouts());
    drop(scope);
    assert!(!registry.has_timeouts());

    // A refused duplicate changes nothing.
    let global = registry.register(timed("g", Some(10))).expect("registers");
    assert!(registry.register(timed("g", Some(10))).is_err());
    global.dispose();
    assert!(!registry.has_timeouts());

    // The transport counts, and replacing it uncounts the old one.
    registry
        .install_code_transport(timed("run_code", Some(1000)))
        .expect("installs");
    assert!(registry.has_timeouts());
    registry
        .install_code_transport(timed("run_code", None))
        .expect("installs");
    assert!(!registry.has_timeouts());
    plain.dispose();
}
