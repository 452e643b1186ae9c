//! Thread safety: registrations and lookups from many threads at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tools_registry::{Registry, ToolDefinition};

use crate::support::t;

#[test]
fn lookups_stay_consistent_while_other_threads_register_and_dispose() {
    let registry = Registry::new();
    registry.register(t("stable")).unwrap().keep();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let registry = registry.clone();
            std::thread::spawn(move || {
                for i in 0..300 {
                    let reg = registry.register(t(&format!("w{w}-{i}"))).unwrap();
                    if i % 3 == 0 {
                        reg.keep();
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let registry = registry.clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut lookups = 0u64;
                while !stop.load(Ordering::Relaxed) || lookups < 1000 {
                    let view = registry.view(None);
                    assert!(view.get("stable").is_some());
                    // A view is internally consistent: its projection lists its tools.
                    assert_eq!(view.schemas().len(), view.tools().len());
                    // The borrowed form the per-call path uses (it may build and cache).
                    assert!(registry.with_view(None, |view| view.get("stable").is_some()));
                    lookups += 1;
                }
                lookups
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().unwrap() >= 1000);
    }
    // Kept registrations remain: every third of 300 per writer, plus `stable`; no view
    // cached by a reader during a change outlives it.
    assert_eq!(registry.view(None).tools().len(), 1 + 2 * 100);
    assert_eq!(
        registry.with_view(None, |view| view.tools().len()),
        1 + 2 * 100
    );
}

#[test]
fn registry_handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Registry>();
    assert_send_sync::<tools_registry::AgentScope>();
    assert_send_sync::<tools_registry::ToolDefinition>();
    assert_send_sync::<tools_registry::Registration>();
    assert_send_sync::<tools_registry::View>();
}

#[test]
fn a_held_view_resolves_like_the_view_and_keeps_its_tool_after_removal() {
    let registry = Registry::new();
    let reg = registry.register(t("held")).unwrap();
    registry.register(t("other")).unwrap().keep();
    let held = registry.held_view(None);
    assert_eq!(held.generation(), registry.view(None).generation());
    let resolved = held.clone().resolve("held").unwrap();
    assert_eq!(resolved.definition().name().as_str(), "held");
    assert_eq!(resolved.view().generation(), held.generation());
    assert_eq!(
        held.clone().resolve("other").unwrap().name().as_str(),
        "other"
    );
    let missing = held.resolve("missing").unwrap_err();
    assert_eq!(missing.names().count(), 2);
    // The registry moves on; what the call holds does not.
    reg.dispose();
    assert!(registry.held_view(None).resolve("held").is_err());
    assert_eq!(resolved.definition().name().as_str(), "held");
    assert_eq!(resolved.view().names().count(), 2);
}

#[test]
fn held_views_on_many_threads_resolve_the_same_definition() {
    let registry = Registry::new();
    registry.register(t("shared")).unwrap().keep();
    let expected = registry.get("shared", None).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let registry = registry.clone();
            std::thread::spawn(move || {
                (0..100)
                    .map(|_| registry.held_view(None).resolve("shared").ok().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        for resolved in thread.join().unwrap() {
            assert!(ToolDefinition::ptr_eq(resolved.definition(), &expected));
        }
    }
}
