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
            match decision {
                Some(decision) => Ok::<_, ToolError>(decision),
                None => next.run(req).await,
            }
        }
    })
}
