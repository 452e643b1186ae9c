//! What one call writes on state that the calls on other workers share: a waterfall's
//! stack is cloned only for a hook that applies (`Next::run_stack`), so a call that no
//! hook applies to leaves the stack's reference count alone; and the hook snapshot a call
//! clones is its thread slot's own copy.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tools_registry::{OutputDecl, Registry, ToolDefinition};

use crate::{DispatchNext, DispatchRequest, HookOptions, Pipeline, ToolCall, from_fn};

/// The reference count of the execute waterfall's stack, read by the tool's body while
/// one around-dispatch hook that applies (`active`) or does not is registered.
async fn dispatch_stack_count_in_body(active: bool) -> Option<usize> {
    let registry = Registry::new();
    let pipeline = Pipeline::new(registry.clone());
    pipeline
        .on_execute_with(
            HookOptions::new().active_when(move || active),
            from_fn(|r: DispatchRequest, next: DispatchNext| async move { next.run(r).await }),
        )
        .keep();
    let hooks = Arc::clone(&pipeline.shared.hooks);
    let seen = Arc::new(Mutex::new(None));
    let record = Arc::clone(&seen);
    let probe = ToolDefinition::builder("probe", "reads the stack's count")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            let count = Arc::strong_count(&hooks.snapshot().dispatch);
            *record.lock().unwrap_or_else(PoisonError::into_inner) = Some(count);
            async { Ok(Value::String("ok".to_owned())) }
        })
        .build()
        .ok()?;
    registry.register(probe).ok()?.keep();
    let call = ToolCall::new("c1", "probe", json!({})).ok()?;
    let result = pipeline.execute(call).await;
    assert!(!result.is_error(), "{}", result.text());
    *seen.lock().unwrap_or_else(PoisonError::into_inner)
}

#[tokio::test(flavor = "current_thread")]
async fn a_waterfall_is_cloned_only_for_a_hook_that_applies() {
    // The snapshot owns the stack; a hook that applies holds it too, through its `Next`.
    assert_eq!(dispatch_stack_count_in_body(true).await, Some(2));
    // No hook applies: the body runs with the stack untouched.
    assert_eq!(dispatch_stack_count_in_body(false).await, Some(1));
}

/// The hook snapshot is one copy per thread slot: a thread clones its own copy every time,
/// another thread (of another slot) a different one, and a hook change reaches every copy.
#[test]
fn each_thread_slot_has_its_own_snapshot_and_every_copy_sees_a_change() {
    let pipeline = Pipeline::new(Registry::new());
    let hooks = Arc::clone(&pipeline.shared.hooks);
    let mine = hooks.snapshot();
    assert!(Arc::ptr_eq(&mine, &hooks.snapshot()));
    let others = |hooks: &Arc<crate::hook::set::Hooks>| {
        (0..=tools_registry::slot::count())
            .map(|_| {
                let hooks = Arc::clone(hooks);
                let Ok(snapshot) = std::thread::spawn(move || hooks.snapshot()).join() else {
                    panic!("a snapshot thread panicked");
                };
                snapshot
            })
            .collect::<Vec<_>>()
    };
    let before = others(&hooks);
    assert!(before.iter().any(|other| !Arc::ptr_eq(other, &mine)));
    assert!(before.iter().all(|other| other.dispatch.hooks.is_empty()));
    pipeline
        .on_execute(from_fn(
            |r: DispatchRequest, next: DispatchNext| async move { next.run(r).await },
        ))
        .keep();
    assert_eq!(hooks.snapshot().dispatch.hooks.len(), 1);
    for snapshot in others(&hooks) {
        assert_eq!(snapshot.dispatch.hooks.len(), 1);
    }
    // What calls already hold keeps the hooks they started with.
    assert!(mine.dispatch.hooks.is_empty());
}
