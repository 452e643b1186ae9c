//! Group D, registration side: where guards live, their evaluation order, and snapshot
//! semantics (docs/decisions.md, entry 10).

use serde_json::json;
use tools_json::JsonValue;
use tools_registry::{CallInfo, Registry};

use crate::support::{call_info, t};

fn first_denial(registry: &Registry, agent: Option<&tools_registry::AgentScope>) -> Option<String> {
    let view = registry.view(agent);
    let call = call_info("t", JsonValue::new(json!({})).unwrap(), agent);
    view.guards().iter().find_map(|guard| guard.check(&call))
}

#[test]
fn d05_global_first_then_the_chain_farthest_first() {
    let registry = Registry::new();
    registry.register(t("t")).unwrap().keep();
    let p = registry.scope();
    let c = registry.child_scope(&p);
    let global = registry.guard(|_: &CallInfo| Some("g".to_owned()));
    p.guard(|_: &CallInfo| Some("p".to_owned())).unwrap().keep();
    c.guard(|_: &CallInfo| Some("c".to_owned())).unwrap().keep();
    assert_eq!(first_denial(&registry, Some(&c)).as_deref(), Some("g"));
    drop(global);
    assert_eq!(first_denial(&registry, Some(&c)).as_deref(), Some("p"));
    // A parent's calls never consult the child's guard.
    assert_eq!(registry.view(Some(&p)).guards().len(), 1);
    assert_eq!(registry.view(Some(&c)).guards().len(), 2);
}

#[test]
fn d01_scoped_guards_apply_to_their_scope_only_and_lift_one_by_one() {
    let registry = Registry::new();
    registry.register(t("t")).unwrap().keep();
    let (a, b) = (registry.scope(), registry.scope());
    let deny = |_: &CallInfo| Some("terminal policy".to_owned());
    let first = a.guard(deny).unwrap();
    a.guard(deny).unwrap().keep();
    assert_eq!(
        first_denial(&registry, Some(&a)).as_deref(),
        Some("terminal policy")
    );
    assert_eq!(first_denial(&registry, Some(&b)), None);
    drop(first);
    assert_eq!(
        first_denial(&registry, Some(&a)).as_deref(),
        Some("terminal policy")
    );
    a.dispose();
    assert_eq!(first_denial(&registry, Some(&a)), None);
}

#[test]
fn guards_are_a_snapshot_of_the_view() {
    let registry = Registry::new();
    let before = registry.view(None);
    let added = registry.guard(|_: &CallInfo| Some("late".to_owned()));
    // An evaluation that started with the old view does not see the new guard…
    assert!(before.guards().is_empty());
    // …the next call's view does.
    assert_eq!(first_denial(&registry, None).as_deref(), Some("late"));
    let during = registry.view(None);
    drop(added);
    assert_eq!(
        during.guards().len(),
        1,
        "removal takes effect from the next call"
    );
    assert_eq!(first_denial(&registry, None), None);
}
