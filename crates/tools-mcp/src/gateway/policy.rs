//! The gateway's policy as one pre-execute hook: it sees every call, Code Mode sub-calls
//! included (they pass the same pipeline).

use std::sync::Arc;

use serde_json::Value;
use tools_runtime::{PreDecision, PreNext, PreRequest, Registry, ToolError, from_fn};

use super::config::{Decision, PolicyConfig};

/// The decision of `policy` for a call of `tool` with `args`: a deny beats an ask; the
/// first matching rule names the reason. `None`: the policy has nothing to say.
pub(crate) fn decide(
    policy: &PolicyConfig,
    registry: &Registry,
    tool: &str,
    args: &Value,
) -> Option<PreDecision> {
    let mut ask: Option<String> = None;
    for rule in &policy.rules {
        if !rule.tool.is_match(tool) {
            continue;
        }
        let Some(text) = argument_text(args, &rule.argument) else {
            continue;
        };
        if !rule.matches.is_match(&text) {
            continue;
        }
        let reason = rule.reason.clone().unwrap_or_else(|| {
            format!(
                "the gateway policy matches argument `{}` = {text:?} against {:?}",
                rule.argument.join("."),
                rule.matches.as_str()
            )
        });
        match rule.decision {
            Decision::Deny => return Some(PreDecision::Deny(reason)),
            Decision::Ask => {
                ask.get_or_insert(reason);
            }
            Decision::Allow => {}
        }
    }
    if let Some(pattern) = policy.deny.iter().find(|p| p.is_match(tool)) {
        return Some(PreDecision::Deny(format!(
            "tool {tool:?} is denied by the gateway policy ({:?})",
            pattern.as_str()
        )));
    }
    if ask.is_none()
        && let Some(pattern) = policy.ask.iter().find(|p| p.is_match(tool))
    {
        ask = Some(format!(
            "tool {tool:?} needs approval under the gateway policy ({:?})",
            pattern.as_str()
        ));
    }
    if ask.is_none()
        && let Some(decision) = policy.destructive
        && decision != Decision::Allow
        && registry
            .get(tool, None)
            .is_some_and(|def| def.hints().destructive == Some(true))
    {
        let reason = format!("tool {tool:?} is marked destructive by its server");
        if decision == Decision::Deny {
            return Some(PreDecision::Deny(reason));
        }
        ask = Some(reason);
    }
    ask.map(|reason| PreDecision::Ask(Some(reason)))
}

/// The text of the argument at `path`: a string as itself, a number or boolean as JSON.
fn argument_text(args: &Value, path: &[String]) -> Option<String> {
    let mut node = args;
    for segment in path {
        node = match node {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match node {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The policy as a pre-execute hook over `registry`'s tools.
pub(crate) fn hook(
    policy: PolicyConfig,
    registry: Registry,
) -> impl tools_runtime::Hook<PreRequest> {
    let state = Arc::new((policy, registry));
    from_fn(move |req: PreRequest, next: PreNext| {
        let state = Arc::clone(&state);
        async move {
            let exec = req.execution();
            let decision = decide(
                &state.0,
                &state.1,
                exec.name().as_str(),
                exec.info().arguments.as_value(),
            );
            // Nobody is asked to approve a call that cannot run: with arguments its schema
            // refuses, it goes on to fail as INVALID_ARGS.
            let hopeless = matches!(decision, Some(PreDecision::Ask(_)))
                && state
                    .1
                    .get(exec.name().as_str(), exec.agent())
                    .and_then(|def| def.foreign_parameters().cloned())
                    .is_some_and(|schema| {
                        !schema
                            .validate_snapshot(&exec.info().arguments, "")
                            .is_empty()
                    });
            match decision {
                Some(decision) if !hopeless => Ok::<_, ToolError>(decision),
                _ => next.run(req).await,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;
    use tools_runtime::crates::registry::ToolHints;
    use tools_runtime::{OutputDecl, ToolDefinition};

    use super::*;
    use crate::gateway::GatewayConfig;

    fn policy(text: &str) -> PolicyConfig {
        match GatewayConfig::parse(text, Path::new("t.toml")) {
            Ok(config) => config.policy,
            Err(e) => panic!("{e}"),
        }
    }

    fn verdict(policy: &PolicyConfig, registry: &Registry, tool: &str, args: Value) -> String {
        match decide(policy, registry, tool, &args) {
            None => "none".to_owned(),
            Some(PreDecision::Allow) => "allow".to_owned(),
            Some(PreDecision::Deny(reason)) => format!("deny: {reason}"),
            Some(PreDecision::Ask(reason)) => format!("ask: {}", reason.unwrap_or_default()),
        }
    }

    const TEXT: &str = r#"
[policy]
deny = ["fs__rm*"]
ask = ["fs__*"]
destructive = "ask"

[[policy.rules]]
tool = "fs__*"
argument = "target.path"
matches = "/etc/*"
decision = "deny"
reason = "not /etc"

[[policy.rules]]
tool = "*"
argument = "items.1"
matches = "secret"
decision = "ask"
"#;

    #[test]
    fn deny_beats_ask_and_rules_come_first() {
        let p = policy(TEXT);
        let registry = Registry::new();
        assert!(verdict(&p, &registry, "fs__rm", json!({})).starts_with("deny: tool \"fs__rm\""));
        assert!(
            verdict(&p, &registry, "fs__read", json!({})).starts_with("ask: tool \"fs__read\"")
        );
        assert_eq!(
            verdict(
                &p,
                &registry,
                "fs__read",
                json!({"target": {"path": "/etc/passwd"}})
            ),
            "deny: not /etc"
        );
        assert!(
            verdict(
                &p,
                &registry,
                "fs__read",
                json!({"target": {"path": "/home/x"}})
            )
            .starts_with("ask: tool")
        );
        // Array items by index; the rule's own reason names the argument.
        let secret = verdict(&p, &registry, "web__get", json!({"items": ["a", "secret"]}));
        assert!(
            secret.starts_with("ask: ") && secret.contains("items.1"),
            "{secret}"
        );
        assert_eq!(
            verdict(&p, &registry, "web__get", json!({"items": ["secret"]})),
            "none"
        );
        // Numbers and booleans match as their JSON text; objects never do.
        assert_eq!(
            verdict(&p, &registry, "x", json!({"items": [0, {"secret": 1}]})),
            "none"
        );
    }

    #[test]
    fn destructive_hints_are_asked_about_when_configured() {
        let p = policy(TEXT);
        let registry = Registry::new();
        let tool = |name: &str, hints: ToolHints| {
            ToolDefinition::builder(name, "")
                .hints(hints)
                .output(OutputDecl::text(json!({})))
                .body(|_a, _c| async { Ok(json!("")) })
                .build()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        for def in [
            tool("db__drop", ToolHints::new().with_destructive(true)),
            tool("db__read", ToolHints::new().with_destructive(false)),
            tool("db__other", ToolHints::new()),
        ] {
            registry
                .register(def)
                .unwrap_or_else(|e| panic!("{e}"))
                .keep();
        }
        assert!(verdict(&p, &registry, "db__drop", json!({})).contains("marked destructive"));
        assert_eq!(verdict(&p, &registry, "db__read", json!({})), "none");
        assert_eq!(verdict(&p, &registry, "db__other", json!({})), "none");
        let allow = policy("[policy]\ndestructive = \"allow\"\n");
        assert_eq!(verdict(&allow, &registry, "db__drop", json!({})), "none");
        let deny = policy("[policy]\ndestructive = \"deny\"\n");
        assert!(verdict(&deny, &registry, "db__drop", json!({})).starts_with("deny: "));
    }
}
