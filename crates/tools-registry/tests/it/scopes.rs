//! Group C: scopes, shadowing, restrictions.

use tools_registry::{Error, Registry, ToolFilter};

use crate::support::{names, replying, run, sorted_names, t};

#[test]
fn c01_a_scoped_tool_lives_in_its_layer_only() {
    let registry = Registry::new();
    registry.register(t("shared")).unwrap().keep();
    let (a, b) = (registry.scope(), registry.scope());
    a.register(t("mine")).unwrap().keep();
    assert_eq!(sorted_names(&registry, Some(&a)), ["mine", "shared"]);
    assert_eq!(names(&registry, None), ["shared"]);
    assert_eq!(names(&registry, Some(&b)), ["shared"]);
    assert_eq!(run(&registry, "mine", Some(&a)), "ran:mine");
    assert_eq!(
        run(&registry, "mine", Some(&b)),
        "Error: unknown tool \"mine\""
    );
    assert_eq!(run(&registry, "mine", None), "Error: unknown tool \"mine\"");
}

#[test]
fn c02_a_scoped_tool_shadows_a_global_in_either_order() {
    let registry = Registry::new();
    let a = registry.scope();
    a.register(replying("bash", "restricted-bash"))
        .unwrap()
        .keep();
    registry
        .register(replying("bash", "global-bash"))
        .unwrap()
        .keep();
    assert_eq!(run(&registry, "bash", Some(&a)), "restricted-bash");
    assert_eq!(run(&registry, "bash", None), "global-bash");
    assert_eq!(names(&registry, Some(&a)), ["bash"]);
}

#[test]
fn c03_disposing_a_scope_leaves_no_residue() {
    let registry = Registry::new();
    let a = registry.scope();
    a.register(t("mine")).unwrap().keep();
    a.dispose();
    assert!(registry.get("mine", Some(&a)).is_none());
    assert!(names(&registry, Some(&a)).is_empty());
}

#[test]
fn c04_an_allow_list_masks_inherited_tools_only() {
    let registry = Registry::new();
    registry.register(t("read")).unwrap().keep();
    registry.register(t("bash")).unwrap().keep();
    let a = registry.scope();
    a.register(t("capture")).unwrap().keep();
    a.restrict(ToolFilter::allow(["read"])).unwrap().keep();
    assert_eq!(sorted_names(&registry, Some(&a)), ["capture", "read"]);
    assert_eq!(
        run(&registry, "bash", Some(&a)),
        "Error: unknown tool \"bash\""
    );
    assert_eq!(run(&registry, "read", Some(&a)), "ran:read");
    assert_eq!(run(&registry, "capture", Some(&a)), "ran:capture");
    assert_eq!(sorted_names(&registry, None), ["bash", "read"]);
}

#[test]
fn c05_masks_are_evaluated_live() {
    let registry = Registry::new();
    registry.register(t("read")).unwrap().keep();
    registry.register(t("bash")).unwrap().keep();
    let (d, l) = (registry.scope(), registry.scope());
    d.restrict(ToolFilter::deny(["bash"])).unwrap().keep();
    l.restrict(ToolFilter::allow(["read"])).unwrap().keep();
    registry.register(t("web")).unwrap().keep();
    d.register(t("denied-local")).unwrap().keep();
    l.register(t("allowed-local")).unwrap().keep();
    assert_eq!(
        sorted_names(&registry, Some(&d)),
        ["denied-local", "read", "web"]
    );
    assert_eq!(sorted_names(&registry, Some(&l)), ["allowed-local", "read"]);
    assert_eq!(run(&registry, "web", Some(&d)), "ran:web");
    assert_eq!(
        run(&registry, "web", Some(&l)),
        "Error: unknown tool \"web\""
    );
}

#[test]
fn c06_masks_intersect_and_lift_one_at_a_time() {
    let registry = Registry::new();
    for n in ["a", "b", "c"] {
        registry.register(t(n)).unwrap().keep();
    }
    let a = registry.scope();
    let lift = a.restrict(ToolFilter::allow(["a", "b"])).unwrap();
    a.restrict(ToolFilter::deny(["b"])).unwrap().keep();
    assert_eq!(names(&registry, Some(&a)), ["a"]);
    drop(lift);
    assert_eq!(names(&registry, Some(&a)), ["a", "c"]);
}

#[test]
fn c07_a_filter_is_owned_by_the_restriction() {
    // The filter is moved in: the caller cannot change it afterwards (C07 is a type fact).
    let registry = Registry::new();
    registry.register(t("a")).unwrap().keep();
    registry.register(t("b")).unwrap().keep();
    let a = registry.scope();
    let filter = ToolFilter::deny(["a"]);
    a.restrict(filter.clone()).unwrap().keep();
    let _changed_copy = filter.and_deny(["a", "b"]);
    assert_eq!(names(&registry, Some(&a)), ["b"]);
}

#[test]
fn c08_restriction_errors() {
    let registry = Registry::new();
    let a = registry.scope();
    assert_eq!(
        a.restrict(ToolFilter::default()).unwrap_err(),
        Error::EmptyRestriction
    );
    let ghost = a.restrict(ToolFilter::deny(["ghost"])).unwrap_err();
    assert!(
        ghost.to_string().contains("known inherited tools: (none)"),
        "{ghost}"
    );
    registry.register(t("real")).unwrap().keep();
    a.register(t("local")).unwrap().keep();
    let local = a.restrict(ToolFilter::allow(["local"])).unwrap_err();
    assert!(
        local
            .to_string()
            .contains("unknown inherited tool \"local\""),
        "{local}"
    );
    let typo = a.restrict(ToolFilter::allow(["reall"])).unwrap_err();
    assert_eq!(
        typo,
        Error::RestrictUnknown {
            unknown: vec!["reall".into()],
            known: vec!["real".into()]
        }
    );
    let two = a
        .restrict(ToolFilter::deny(["ghost", "wraith"]))
        .unwrap_err();
    assert!(
        two.to_string().contains("tools \"ghost\", \"wraith\""),
        "{two}"
    );
    // Nothing was retained by the failed calls.
    assert_eq!(names(&registry, Some(&a)), ["real", "local"]);
}

#[test]
fn c09_run_code_can_never_be_named() {
    let registry = Registry::new();
    let a = registry.scope();
    assert_eq!(
        a.restrict(ToolFilter::allow(["run_code"])).unwrap_err(),
        Error::RestrictReserved
    );
    assert_eq!(
        a.restrict(ToolFilter::deny(["run_code"])).unwrap_err(),
        Error::RestrictReserved
    );
}

#[test]
fn c10_c11_a_child_inherits_its_parent_and_masks_only_itself() {
    let registry = Registry::new();
    let p = registry.scope();
    p.register(t("bash")).unwrap().keep();
    p.register(t("read")).unwrap().keep();
    let c = registry.child_scope(&p);
    assert_eq!(sorted_names(&registry, Some(&c)), ["bash", "read"]);
    let mask = c.restrict(ToolFilter::deny(["bash"])).unwrap();
    assert_eq!(names(&registry, Some(&c)), ["read"]);
    assert_eq!(
        run(&registry, "bash", Some(&c)),
        "Error: unknown tool \"bash\""
    );
    assert_eq!(sorted_names(&registry, Some(&p)), ["bash", "read"]);
    drop(mask);
    c.register(t("report")).unwrap().keep();
    c.restrict(ToolFilter::allow(["read"])).unwrap().keep();
    assert_eq!(sorted_names(&registry, Some(&c)), ["read", "report"]);
    assert_eq!(run(&registry, "report", Some(&c)), "ran:report");
}

#[test]
fn c12_an_ancestor_mask_applies_to_descendants() {
    let registry = Registry::new();
    registry.register(t("web")).unwrap().keep();
    let p = registry.scope();
    p.register(t("bash")).unwrap().keep();
    let c = registry.child_scope(&p);
    p.restrict(ToolFilter::deny(["web"])).unwrap().keep();
    assert_eq!(names(&registry, Some(&c)), ["bash"]);
    assert_eq!(names(&registry, Some(&p)), ["bash"]);
}

#[test]
fn c13_shadowing_keeps_positions_and_own_tools_survive_an_empty_allow_list() {
    let registry = Registry::new();
    registry.register(t("a")).unwrap().keep();
    registry.register(t("b")).unwrap().keep();
    let a = registry.scope();
    a.register(t("b")).unwrap().keep();
    a.register(t("c")).unwrap().keep();
    assert_eq!(names(&registry, Some(&a)), ["a", "b", "c"]);
    a.restrict(ToolFilter::allow(Vec::<String>::new()))
        .unwrap()
        .keep();
    assert_eq!(names(&registry, Some(&a)), ["b", "c"]);
}

#[test]
fn an_ancestor_allow_list_filters_the_ancestors_own_tools_for_its_children() {
    let registry = Registry::new();
    registry.register(t("g")).unwrap().keep();
    let p = registry.scope();
    p.register(t("p_own")).unwrap().keep();
    p.restrict(ToolFilter::allow(["g"])).unwrap().keep();
    let c = registry.child_scope(&p);
    assert_eq!(sorted_names(&registry, Some(&p)), ["g", "p_own"]);
    assert_eq!(names(&registry, Some(&c)), ["g"]);
}
