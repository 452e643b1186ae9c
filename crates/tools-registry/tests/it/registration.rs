//! Group A: registration, definition validation, lifecycle.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tools_registry::{Change, Error, ErrorCode, OutputDecl, Registry, ToolDefinition};

use crate::support::{echo, names, run, t, transport};

#[test]
fn a01_schemas_project_name_description_parameters() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let schemas = registry.schemas(None);
    assert_eq!(
        serde_json::to_value(&*schemas).unwrap(),
        json!([{"name": "echo", "description": "echo arguments back",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}])
    );
}

#[test]
fn a02_host_callbacks_never_reach_the_projection() {
    let registry = Registry::new();
    let def = ToolDefinition::builder("full", "all the callbacks")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("x")) })
        .timeout(std::time::Duration::from_secs(5))
        .concurrency(|_| true)
        .finalize_content(|_, _| None)
        .build()
        .unwrap();
    registry.register(def).unwrap().keep();
    let projected = serde_json::to_value(&registry.schemas(None)[0]).unwrap();
    let keys: Vec<&String> = projected.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "description", "parameters"]);
    for shape in [
        registry.schemas(None)[0].to_anthropic_json(),
        registry.schemas(None)[0].to_mcp_json(),
    ] {
        assert_eq!(shape.as_object().unwrap().len(), 3);
    }
}

#[test]
fn a03_a04_a05_definition_checks_in_order() {
    let missing_output = ToolDefinition::builder("x", "d")
        .body(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap_err();
    assert!(matches!(missing_output, Error::MissingOutput { .. }));
    assert!(
        missing_output
            .to_string()
            .contains("must declare its output")
    );

    let bad_schema = ToolDefinition::builder("x", "d")
        .output(OutputDecl::text(json!({"type": "object", "pattern": "x"})))
        .body(|_a, _c| async { Ok(json!(1)) })
        .timeout(std::time::Duration::ZERO)
        .build()
        .unwrap_err();
    // The output schema is checked before the timeout.
    assert_eq!(bad_schema.code(), Some(ErrorCode::UnsupportedSchema));
    let Error::UnsupportedSchema { violations, .. } = &bad_schema else {
        panic!("{bad_schema}")
    };
    assert_eq!(violations[0].path.to_string(), "schema.pattern");

    let zero = ToolDefinition::builder("x", "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!(1)) })
        .timeout(std::time::Duration::ZERO)
        .build()
        .unwrap_err();
    assert!(matches!(zero, Error::InvalidTimeout { .. }));

    let kept = ToolDefinition::builder("x", "d")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!(1)) })
        .timeout(std::time::Duration::from_millis(5000))
        .build()
        .unwrap();
    assert_eq!(kept.timeout(), Some(std::time::Duration::from_millis(5000)));
    assert!(matches!(
        ToolDefinition::builder("", "d")
            .output(OutputDecl::text(json!({})))
            .body(|_a, _c| async { Ok(json!(1)) })
            .build(),
        Err(Error::EmptyName)
    ));
}

#[test]
fn a06_run_code_is_reserved_everywhere() {
    let registry = Registry::new();
    assert_eq!(
        registry.register(transport()).unwrap_err(),
        Error::ReservedName
    );
    let agent = registry.scope();
    let err = agent.register(transport()).unwrap_err();
    assert!(
        err.to_string()
            .contains("is reserved for the Code Mode presentation transport")
    );
}

#[test]
fn a07_duplicates_per_layer_and_shadowing_across_layers() {
    let registry = Registry::new();
    registry.register(t("x")).unwrap().keep();
    let global = registry.register(t("x")).unwrap_err();
    assert!(global.to_string().contains("agent's scope"), "{global}");
    let agent = registry.scope();
    agent.register(t("y")).unwrap().keep();
    assert!(
        agent
            .register(t("y"))
            .unwrap_err()
            .to_string()
            .contains("already registered in this scope")
    );
    agent.register(t("x")).unwrap().keep();
}

#[test]
fn a08_disposers_remove_exactly_their_registration() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let d = registry.register(t("disposable")).unwrap();
    assert_eq!(names(&registry, None), ["echo", "disposable"]);
    d.dispose();
    assert_eq!(names(&registry, None), ["echo"]);
    d.dispose();
    drop(d);
    assert_eq!(names(&registry, None), ["echo"]);
    registry.register(t("disposable")).unwrap().keep();
    assert_eq!(names(&registry, None), ["echo", "disposable"]);
}

#[test]
fn a08_an_old_disposer_does_not_remove_a_newer_namesake() {
    let registry = Registry::new();
    let old = registry.register(t("n")).unwrap();
    old.dispose();
    let new = registry.register(t("n")).unwrap();
    drop(old);
    assert_eq!(names(&registry, None), ["n"]);
    drop(new);
    assert!(names(&registry, None).is_empty());
}

#[test]
fn a09_dropping_a_scope_unregisters_its_tools() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let owner = registry.scope();
    owner.register(t("scoped")).unwrap().keep();
    assert_eq!(names(&registry, Some(&owner)), ["echo", "scoped"]);
    let key = owner.key();
    drop(owner);
    assert_eq!(names(&registry, None), ["echo"]);
    // A fresh scope does not see the old scope's tool.
    let other = registry.scope();
    assert_ne!(other.key(), key);
    assert_eq!(names(&registry, Some(&other)), ["echo"]);
}

#[test]
fn a10_a_panicking_change_listener_cannot_veto() {
    let registry = Registry::new();
    let calls = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&calls);
    registry
        .on_change(move |_| {
            let n = {
                let mut n = seen.lock().unwrap();
                *n += 1;
                *n
            };
            if n == 1 {
                panic!("listener fails once");
            }
        })
        .keep();
    let reg = registry.register(echo()).unwrap();
    assert!(
        registry.get("echo", None).is_some(),
        "docs/decisions.md, entry 13: the change stands"
    );
    drop(reg);
    assert!(registry.get("echo", None).is_none());
    assert_eq!(*calls.lock().unwrap(), 2);
}

#[test]
fn a11_one_change_per_operation_and_none_for_guards() {
    let registry = Registry::new();
    registry.register(t("real")).unwrap().keep();
    let agent = registry.scope();
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let _listener = registry.on_change(move |change| sink.lock().unwrap().push(change.clone()));
    let reg = registry.register(t("g")).unwrap();
    drop(reg);
    let mask = agent
        .restrict(tools_registry::ToolFilter::deny(["real"]))
        .unwrap();
    drop(mask);
    let mode = agent
        .present_as(tools_registry::PresentationMode::Code)
        .unwrap();
    drop(mode);
    let guard = registry.guard(|_: &tools_registry::CallInfo| None);
    drop(guard);
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(matches!(log[0], Change::ToolRegistered { scope: None, .. }));
    assert!(matches!(log[1], Change::ToolRemoved { .. }));
    assert!(matches!(log[2], Change::RestrictionAdded { .. }));
    assert!(matches!(log[3], Change::RestrictionLifted { .. }));
    assert!(matches!(log[4], Change::ModeDeclared { .. }));
    assert!(matches!(log[5], Change::ModeCleared { .. }));
}

/// A parameter schema nested `depth` times in `{oneOf: [inner, {type: null}]}`, built by
/// hand (`json!` would clone the embedded value recursively).
fn deep_parameters(depth: usize) -> Value {
    let mut inner = json!({"type": "string"});
    for _ in 0..depth {
        let mut map = Map::new();
        map.insert(
            "oneOf".into(),
            Value::Array(vec![inner, json!({"type": "null"})]),
        );
        inner = Value::Object(map);
    }
    let mut properties = Map::new();
    properties.insert("nested".into(), inner);
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    Value::Object(root)
}

#[test]
fn a13_deep_parameters_register_and_project_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            let registry = Registry::new();
            let def = ToolDefinition::builder("deep", "deep parameters")
                .parameters(deep_parameters(5_000))
                .output(OutputDecl::text(json!({"type": "string"})))
                .body(|_a, _c| async { Ok(json!("x")) })
                .build()
                .unwrap();
            registry.register(def).unwrap().keep();
            let schemas = registry.schemas(None);
            let mut node = &schemas[0].parameters["properties"]["nested"];
            let mut layers = 0;
            while let Some(first) = node.get("oneOf").and_then(|b| b.get(0)) {
                node = first;
                layers += 1;
            }
            assert_eq!(layers, 5_000);
            assert_eq!(node, &json!({"type": "string"}));
            let openai = schemas[0].to_openai_json();
            let text = tools_json::to_compact_string(&openai);
            assert!(text.starts_with(r#"{"type":"function","function":{"name":"deep""#));
            tools_json::drop_deep(openai);
        })
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn a14_lossy_parameters_are_refused_at_registration() {
    let err = ToolDefinition::builder("lossy-schema", "d")
        .parameters(
            json!({"type": "object", "properties": {"n": {"type": "number", "default": -0.0}}}),
        )
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("x")) })
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::ParametersNotLossless { .. }));
    assert!(
        err.to_string().contains("parameters.properties.n.default"),
        "{err}"
    );
}

#[test]
fn a15_projections_are_shared_and_immutable() {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    let first = registry.schemas(None);
    let mut copy = first[0].to_openai_json();
    copy["function"]["description"] = json!("mutated");
    let second = registry.schemas(None);
    assert_eq!(&*second[0].description, "echo arguments back");
    assert!(
        Arc::ptr_eq(&first, &second),
        "built once per change, then shared"
    );
}

#[test]
fn a16_get_returns_the_registered_definition() {
    let registry = Registry::new();
    let def = echo();
    registry.register(def.clone()).unwrap().keep();
    let got = registry.get("echo", None).unwrap();
    assert!(ToolDefinition::ptr_eq(&got, &def));
    assert!(registry.get("nope", None).is_none());
}

#[test]
fn a17_raw_parameters_outside_the_subset_register_and_run_unvalidated() {
    let registry = Registry::new();
    let def = ToolDefinition::builder("anyof", "raw")
        .parameters(json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "number"}]}}, "required": ["x"]}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("ran")) })
        .build()
        .unwrap();
    registry.register(def).unwrap().keep();
    assert_eq!(run(&registry, "anyof", None), "ran");
}
