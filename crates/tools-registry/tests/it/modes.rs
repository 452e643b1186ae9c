//! Group E, registration side: presentation modes, the run_code transport in views, and
//! the collapse predicate.

use tools_registry::{Error, PresentationMode, RUN_CODE, Registry};

use crate::support::{echo, names, transport};

fn code_registry(default: PresentationMode) -> Registry {
    let registry = Registry::builder().default_mode(default).build();
    registry.install_code_transport(transport()).unwrap();
    registry.register(echo()).unwrap().keep();
    registry
}

#[test]
fn e01_run_code_joins_code_and_both_views() {
    assert_eq!(
        names(&code_registry(PresentationMode::Native), None),
        ["echo"]
    );
    let code = code_registry(PresentationMode::Code);
    assert_eq!(names(&code, None), ["echo", "run_code"]);
    let wire: Vec<String> = code
        .view(None)
        .wire_schemas()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(wire, ["run_code"]);
    let both = code_registry(PresentationMode::Both);
    let wire: Vec<String> = both
        .view(None)
        .wire_schemas()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(wire, ["echo", "run_code"]);
    let sdk: Vec<String> = both
        .view(None)
        .sdk_tools()
        .map(|d| d.name().to_string())
        .collect();
    assert_eq!(sdk, ["echo"]);
}

#[test]
fn e03_e04_model_direct_calls_collapse_under_code_only() {
    let registry = code_registry(PresentationMode::Native);
    let a = registry.scope();
    a.present_as(PresentationMode::Code).unwrap().keep();
    let view = registry.view(Some(&a));
    assert!(view.collapses("echo", false));
    assert!(
        !view.collapses("echo", true),
        "sub-calls with a parent are exempt"
    );
    assert!(!view.collapses(RUN_CODE, false));
    assert!(!registry.view(None).collapses("echo", false));
}

#[test]
fn e05_e06_the_nearest_declaration_wins() {
    let registry = code_registry(PresentationMode::Native);
    let standing = registry.scope();
    standing.present_as(PresentationMode::Code).unwrap().keep();
    let joined = registry.child_scope(&standing);
    let loner = registry.scope();
    assert!(registry.get(RUN_CODE, Some(&joined)).is_some());
    assert_eq!(registry.view(Some(&joined)).mode(), PresentationMode::Code);
    assert!(registry.get(RUN_CODE, Some(&loner)).is_none());
    assert!(registry.get(RUN_CODE, None).is_none());
    // A child's own declaration beats its parent's.
    joined.present_as(PresentationMode::Native).unwrap().keep();
    assert_eq!(
        registry.view(Some(&joined)).mode(),
        PresentationMode::Native
    );
}

#[test]
fn e07_disposing_a_declaration_restores_the_inherited_mode() {
    let registry = code_registry(PresentationMode::Code);
    let a = registry.scope();
    let native = a.present_as(PresentationMode::Native).unwrap();
    assert_eq!(names(&registry, Some(&a)), ["echo"]);
    drop(native);
    assert_eq!(names(&registry, Some(&a)), ["echo", "run_code"]);
}

#[test]
fn e08_one_declaration_per_scope() {
    let registry = code_registry(PresentationMode::Native);
    let a = registry.scope();
    a.present_as(PresentationMode::Code).unwrap().keep();
    let err = a.present_as(PresentationMode::Both).unwrap_err();
    assert_eq!(
        err,
        Error::ModeConflict {
            new: PresentationMode::Both,
            existing: PresentationMode::Code
        }
    );
    assert!(
        err.to_string()
            .contains("conflicts with \"code\" already declared")
    );
}

#[test]
fn e11_one_shared_transport_for_every_scope() {
    let registry = code_registry(PresentationMode::Both);
    let a = registry.scope();
    let mine = registry.get(RUN_CODE, Some(&a)).unwrap();
    let global = registry.get(RUN_CODE, None).unwrap();
    assert!(tools_registry::ToolDefinition::ptr_eq(&mine, &global));
    assert_eq!(
        names(&registry, Some(&a))
            .iter()
            .filter(|n| *n == RUN_CODE)
            .count(),
        1
    );
}

#[test]
fn e13_without_a_transport_no_run_code_is_offered() {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    registry.register(echo()).unwrap().keep();
    assert_eq!(names(&registry, None), ["echo"]);
    assert!(Registry::new().view(None).mode() == PresentationMode::Native);
    assert_eq!(
        registry.install_code_transport(echo()).unwrap_err(),
        Error::ReservedName,
        "only a definition named run_code can be the transport"
    );
}

/// The generation moves on every change that can change a lookup, and a fresh view is
/// labelled with the generation it was built at.
#[test]
fn the_generation_moves_on_every_change_and_labels_fresh_views() {
    let registry = Registry::new();
    let mut seen = vec![registry.generation()];
    let mut changed = |registry: &Registry, what: &str| {
        let now = registry.generation();
        assert!(
            seen.iter().all(|&before| before < now),
            "{what}: {now} after {seen:?}"
        );
        seen.push(now);
        for agent in [None, Some(registry.scope())] {
            assert_eq!(registry.view(agent.as_ref()).generation(), now, "{what}");
        }
    };
    let tool = registry.register(crate::support::t("a")).unwrap();
    changed(&registry, "register");
    let scope = registry.scope();
    scope.register(crate::support::t("b")).unwrap().keep();
    changed(&registry, "scoped register");
    scope
        .restrict(tools_registry::ToolFilter::deny(["a"]))
        .unwrap()
        .keep();
    changed(&registry, "restrict");
    scope.present_as(PresentationMode::Code).unwrap().keep();
    changed(&registry, "mode");
    registry.install_code_transport(transport()).unwrap();
    changed(&registry, "transport");
    drop(tool);
    changed(&registry, "dispose");
    // Reading views changes nothing.
    let before = registry.generation();
    let _ = registry.view(Some(&scope));
    assert_eq!(registry.generation(), before);
}
