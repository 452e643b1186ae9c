//! Exposure and loading (docs/decisions.md, entry 35): where each exposure shows a tool,
//! which calls each refuses, rules by scope, per-conversation loading, and the search over
//! a scope's deferred tools.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_registry::{
    Change, Exposure, OutputDecl, PresentationMode, Refusal, Registry, ToolDefinition,
};

use crate::support::transport;

fn tool(name: &str, description: &str, exposure: Exposure) -> ToolDefinition {
    ToolDefinition::builder(name, description)
        .parameters(json!({"type": "object", "properties": {"city": {"type": "string", "description": "the city"}}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .exposure(exposure)
        .build()
        .unwrap()
}

/// A `both` registry with one tool of each exposure.
fn catalog() -> Registry {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Both)
        .build();
    registry.install_code_transport(transport()).unwrap();
    for (name, exposure) in [
        ("direct", Exposure::Direct),
        ("weather_forecast", Exposure::Deferred),
        ("native", Exposure::NativeOnly),
        ("code", Exposure::CodeOnly),
        ("hidden", Exposure::Hidden),
    ] {
        let description = format!("the {name} tool");
        registry
            .register(tool(name, &description, exposure))
            .unwrap()
            .keep();
    }
    registry
}

fn wire(registry: &Registry, agent: Option<&tools_registry::AgentScope>) -> Vec<String> {
    registry
        .view(agent)
        .wire_schemas()
        .iter()
        .map(|s| s.name.to_string())
        .collect()
}

#[test]
fn each_exposure_shows_the_tool_where_it_says() {
    let registry = catalog();
    let view = registry.view(None);
    assert_eq!(wire(&registry, None), ["direct", "native", "run_code"]);
    let sdk: Vec<&str> = view.sdk_tools().map(|d| d.name().as_str()).collect();
    assert_eq!(sdk, ["direct", "code"]);
    let deferred: Vec<&str> = view.deferred().map(|d| d.name().as_str()).collect();
    assert_eq!(deferred, ["weather_forecast"]);
    let catalogue: Vec<String> = view.schemas().iter().map(|s| s.name.to_string()).collect();
    assert!(!catalogue.contains(&"hidden".to_owned()), "{catalogue:?}");
    assert!(view.has_deferred());
    // Every tool stays visible to lookups (the pipeline refuses by exposure, not absence).
    assert!(view.get("hidden").is_some());
}

#[test]
fn each_exposure_refuses_the_calls_it_says() {
    let registry = catalog();
    let view = registry.view(None);
    let cases = [
        // (tool, model-direct, sub-call)
        ("direct", None, None),
        ("weather_forecast", Some(Refusal::NotLoaded), None),
        ("native", None, Some(Refusal::NativeOnly)),
        ("code", Some(Refusal::CodeOnly), None),
        ("hidden", Some(Refusal::Hidden), Some(Refusal::Hidden)),
    ];
    for (name, direct, sub) in cases {
        assert_eq!(
            view.refusal(name, false, false),
            direct,
            "{name}, model-direct"
        );
        assert_eq!(view.refusal(name, true, false), sub, "{name}, sub-call");
        // The host reaches every visible tool.
        assert_eq!(view.refusal(name, false, true), None, "{name}, host");
        // A resolved tool answers the same without a second lookup.
        let Ok(resolved) = registry.held_view(None).resolve(name) else {
            panic!("{name} does not resolve");
        };
        assert_eq!(resolved.refusal(false, false), direct, "{name}, resolved");
        assert_eq!(
            resolved.refusal(true, false),
            sub,
            "{name}, resolved sub-call"
        );
        assert_eq!(resolved.refusal(false, true), None, "{name}, resolved host");
    }
    assert!(
        Refusal::NotLoaded
            .message("weather_forecast")
            .contains("search_tools")
    );
}

#[test]
fn loading_declares_after_the_rest_in_load_order_and_unloading_undoes_it() {
    let registry = catalog();
    registry
        .register(tool("stock_quote", "quote a stock", Exposure::Deferred))
        .unwrap()
        .keep();
    let agent = registry.scope();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    registry
        .on_change(move |change| log.lock().unwrap().push(change.clone()))
        .keep();

    let loaded = agent
        .load([
            "stock_quote",
            "weather_forecast",
            "direct",
            "nope",
            "stock_quote",
        ])
        .unwrap();
    let loaded: Vec<&str> = loaded.iter().map(|n| n.as_str()).collect();
    assert_eq!(loaded, ["stock_quote", "weather_forecast"]);
    assert_eq!(
        wire(&registry, Some(&agent)),
        [
            "direct",
            "native",
            "run_code",
            "stock_quote",
            "weather_forecast"
        ]
    );
    let view = registry.view(Some(&agent));
    assert!(view.is_loaded("stock_quote"));
    assert_eq!(view.refusal("stock_quote", false, false), None);
    // Another conversation, and calls without an agent, loaded nothing.
    assert_eq!(wire(&registry, None), ["direct", "native", "run_code"]);
    let child = registry.child_scope(&agent);
    assert_eq!(
        registry
            .view(Some(&child))
            .refusal("stock_quote", false, false),
        Some(Refusal::NotLoaded)
    );

    let unloaded = agent.unload(["stock_quote", "direct"]);
    assert_eq!(unloaded.len(), 1);
    assert_eq!(
        wire(&registry, Some(&agent)),
        ["direct", "native", "run_code", "weather_forecast"]
    );
    let changes = seen.lock().unwrap().clone();
    assert!(
        changes
            .iter()
            .any(|c| matches!(c, Change::ToolsLoaded { scope: Some(k), names } if *k == agent.key() && names.len() == 2)),
        "{changes:?}"
    );
    assert!(
        changes
            .iter()
            .any(|c| matches!(c, Change::ToolsUnloaded { names, .. } if names.len() == 1)),
        "{changes:?}"
    );
}

#[test]
fn rules_override_the_definition_nearest_scope_last() {
    let registry = Registry::new();
    for name in ["github__list_issues", "github__get_me", "slack__post"] {
        registry
            .register(tool(name, "a tool", Exposure::Direct))
            .unwrap()
            .keep();
    }
    let rule = registry.expose(["github__*"], Exposure::Deferred).unwrap();
    let agent = registry.scope();
    agent
        .expose(["github__get_me"], Exposure::Direct)
        .unwrap()
        .keep();
    assert_eq!(wire(&registry, None), ["slack__post"]);
    assert_eq!(
        wire(&registry, Some(&agent)),
        ["github__get_me", "slack__post"]
    );
    assert_eq!(
        registry.view(Some(&agent)).exposure("github__list_issues"),
        Some(Exposure::Deferred)
    );
    rule.dispose();
    assert_eq!(
        wire(&registry, None),
        ["github__list_issues", "github__get_me", "slack__post"]
    );
    assert!(matches!(
        registry.expose(["a[b"], Exposure::Hidden),
        Err(tools_registry::Error::InvalidPattern { .. })
    ));
}

#[test]
fn search_finds_only_deferred_tools_the_scope_sees() {
    let registry = Registry::new();
    registry
        .register(tool(
            "get_weather",
            "Current weather for a city",
            Exposure::Deferred,
        ))
        .unwrap()
        .keep();
    registry
        .register(tool(
            "send_mail",
            "Send an email message",
            Exposure::Deferred,
        ))
        .unwrap()
        .keep();
    registry
        .register(tool(
            "weather_direct",
            "Weather, declared directly",
            Exposure::Direct,
        ))
        .unwrap()
        .keep();
    let agent = registry.scope();
    agent
        .restrict(tools_registry::ToolFilter::deny(["send_mail"]))
        .unwrap()
        .keep();

    let names = |found: Vec<&ToolDefinition>| -> Vec<String> {
        found.iter().map(|d| d.name().to_string()).collect()
    };
    let view = registry.view(None);
    assert_eq!(
        names(view.search("weather in Paris", 5).unwrap()),
        ["get_weather"]
    );
    assert_eq!(names(view.search("email", 5).unwrap()), ["send_mail"]);
    // The scope masked send_mail away: a search never returns it.
    let scoped = registry.view(Some(&agent));
    assert!(scoped.search("send an email", 5).unwrap().is_empty());
    assert_eq!(
        names(scoped.search_regex("^get_", 5).unwrap()),
        ["get_weather"]
    );
    // Bad input: a clear error, never a panic.
    assert!(view.search("", 5).is_err());
    assert!(view.search(&"x".repeat(10_000), 5).is_err());
    assert!(view.search_regex("(", 5).is_err());
    assert!(view.search_regex("(a+)+$", 5).unwrap().is_empty());
}

mod properties {
    use proptest::prelude::*;
    use tools_registry::{Exposure, Registry, ToolFilter};

    use super::tool;

    const WORDS: [&str; 8] = [
        "weather", "mail", "stock", "file", "search", "calendar", "city", "quote",
    ];

    fn exposure(n: u8) -> Exposure {
        match n % 5 {
            0 => Exposure::Direct,
            1 => Exposure::Deferred,
            2 => Exposure::NativeOnly,
            3 => Exposure::CodeOnly,
            _ => Exposure::Hidden,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Whatever the catalog, mask, query and limit: a search returns at most `limit`
        /// tools (and at most 50), each a deferred tool the scope sees, without repeats.
        #[test]
        fn searches_return_only_visible_deferred_tools(
            tools in proptest::collection::vec((0usize..8, 0usize..8, any::<u8>(), any::<bool>()), 1..24),
            query in "\\PC{0,40}",
            limit in 0usize..80,
        ) {
            let registry = Registry::new();
            let mut denied = Vec::new();
            for (i, (a, b, e, deny)) in tools.iter().enumerate() {
                let name = format!("{}_{}_{i}", WORDS[*a], WORDS[*b]);
                let description = format!("{} {} tool", WORDS[*b], WORDS[*a]);
                registry.register(tool(&name, &description, exposure(*e))).unwrap().keep();
                if *deny {
                    denied.push(name);
                }
            }
            let agent = registry.scope();
            if !denied.is_empty() {
                agent.restrict(ToolFilter::deny(denied.clone())).unwrap().keep();
            }
            let view = registry.view(Some(&agent));
            for found in [view.search(&query, limit), view.search_regex(&query, limit)] {
                let Ok(found) = found else { continue };
                prop_assert!(found.len() <= limit.min(50));
                let mut names: Vec<&str> = found.iter().map(|d| d.name().as_str()).collect();
                for name in &names {
                    prop_assert_eq!(view.exposure(name), Some(Exposure::Deferred));
                    prop_assert!(!denied.iter().any(|d| d == name));
                }
                let before = names.len();
                names.sort_unstable();
                names.dedup();
                prop_assert_eq!(names.len(), before);
            }
        }
    }
}
