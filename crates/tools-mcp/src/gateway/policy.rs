//! The gateway's policy as one pre-execute hook: it sees every call, Code Mode sub-calls
//! included (they pass the same pipeline).
//!
//! Argument rules compare lexically normalized values and fail closed: a path pattern sees
//! each value also as a normalized absolute path, a rule over an array or an object looks
//! at every value inside it, and a value too large to walk counts as matched by a deny or
//! ask rule (the crate README's "Argument rules" says how).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use tools_runtime::{
    ToolError,
    hooks::{PreDecision, PreNext, PreRequest, Principal, from_fn},
    tools::Registry,
};

use super::config::{ArgumentRule, Decision, PolicyConfig};

/// How many values (arrays and objects included, the argument itself first) a rule looks
/// at inside one argument before it gives up and counts as matched (deny, ask) or not
/// (allow).
pub(crate) const MAX_VALUES: usize = 10_000;

/// How deep inside one argument a rule looks (the argument itself is level 0) before it
/// gives up, as for [`MAX_VALUES`].
pub(crate) const MAX_DEPTH: usize = 64;

/// The decision of `policy` for a call of `tool` with `args`: a deny beats an ask; the
/// first matching rule names the reason. `None`: the policy has nothing to say.
pub(crate) fn decide(
    policy: &PolicyConfig,
    registry: &Registry,
    tool: &str,
    args: &Value,
    principal: Option<&Principal>,
) -> Option<PreDecision> {
    let mut ask: Option<String> = None;
    // The identity allow-list of this tool: whom its allow rules name, and whether one of
    // them admits the caller.
    let (mut listed, mut admitted) = (Vec::new(), false);
    for rule in &policy.identity {
        if !rule.tool.is_match(tool) {
            continue;
        }
        if rule.decision == Decision::Allow {
            if !rule.who.is_anyone() {
                admitted |= rule.who.admits(principal);
                listed.push(rule.who.describe());
            }
            continue;
        }
        if !rule.who.admits(principal) {
            continue;
        }
        let reason = rule.reason.clone().unwrap_or_else(|| {
            format!(
                "the gateway policy's rule for {} over {:?}",
                rule.who.describe(),
                rule.tool.as_str()
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
    if !listed.is_empty() && !admitted {
        let caller = principal.map_or_else(
            || "a caller without a principal".to_owned(),
            |p| format!("principal {:?}", p.subject()),
        );
        return Some(PreDecision::Deny(format!(
            "tool {tool:?} is allowed only to {} under the gateway policy, not to {caller}",
            listed.join(" or ")
        )));
    }
    for rule in &policy.rules {
        if !rule.tool.is_match(tool) || !rule.who.admits(principal) {
            continue;
        }
        let Some(value) = argument_at(args, &rule.argument) else {
            continue;
        };
        let reason = match find(rule, value) {
            Found::Nothing => continue,
            // An allow rule never lets through what it could not look at.
            Found::TooLarge if rule.decision == Decision::Allow => continue,
            Found::TooLarge => too_large_reason(rule),
            Found::Match(hit) => rule
                .reason
                .clone()
                .unwrap_or_else(|| match_reason(rule, &hit)),
        };
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

/// The argument at `path` (object members by name, array items by index), if there is one.
fn argument_at<'a>(args: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut node = args;
    for segment in path {
        node = match node {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// What a rule found in an argument.
#[derive(Debug)]
enum Found<'a> {
    /// No value matched, and every value was looked at.
    Nothing,
    /// The first value that matched, in document order.
    Match(Hit<'a>),
    /// No value matched among the [`MAX_VALUES`] looked at (none deeper than
    /// [`MAX_DEPTH`]), and some were left out: the rule cannot decide.
    TooLarge,
}

/// A value that matched a rule.
#[derive(Debug)]
struct Hit<'a> {
    /// Its text as given (a number or boolean as JSON).
    text: Cow<'a, str>,
    /// Its normalized path, when that matched and the text as given did not.
    path: Option<String>,
    /// Whether it is inside the argument (the argument is an array or an object).
    inside: bool,
}

/// The first value of `argument` (itself, or any value inside it; object keys are not
/// values) whose text matches `rule`, as given or as a normalized path. A null matches
/// nothing.
fn find<'a>(rule: &ArgumentRule, argument: &'a Value) -> Found<'a> {
    let mut stack: Vec<(&'a Value, usize)> = vec![(argument, 0)];
    let mut walk = Walk {
        queued: 1,
        cut: false,
    };
    while let Some((node, depth)) = stack.pop() {
        let text: Cow<'a, str> = match node {
            Value::Null => continue,
            Value::String(s) => Cow::Borrowed(s),
            Value::Number(n) => Cow::Owned(n.to_string()),
            Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
            Value::Array(items) => {
                let take = walk.room(items.len(), depth);
                stack.extend(items.iter().take(take).rev().map(|v| (v, depth + 1)));
                continue;
            }
            Value::Object(map) => {
                let take = walk.room(map.len(), depth);
                stack.extend(map.values().take(take).rev().map(|v| (v, depth + 1)));
                continue;
            }
        };
        let path = if rule.matches.is_match(&text) {
            None
        } else {
            match rule.path_match(&text) {
                Some(path) => Some(path),
                None => continue,
            }
        };
        return Found::Match(Hit {
            text,
            path,
            inside: depth > 0,
        });
    }
    if walk.cut {
        Found::TooLarge
    } else {
        Found::Nothing
    }
}

/// The bounds of one walk.
#[derive(Debug)]
struct Walk {
    /// How many values were taken to be looked at so far.
    queued: usize,
    /// Whether some value was left out.
    cut: bool,
}

impl Walk {
    /// How many of the `count` values one level below `depth` the walk takes (the first
    /// ones), noting whether any is left out.
    fn room(&mut self, count: usize, depth: usize) -> usize {
        let take = if depth < MAX_DEPTH {
            count.min(MAX_VALUES.saturating_sub(self.queued))
        } else {
            0
        };
        self.queued += take;
        self.cut |= take < count;
        take
    }
}

/// The reason of a decision by `rule`, which matched `hit`: it names the argument, the value
/// and the pattern.
fn match_reason(rule: &ArgumentRule, hit: &Hit<'_>) -> String {
    let relation = if hit.inside { "holds" } else { "=" };
    let path = match &hit.path {
        Some(path) => format!(" (the path {path:?})"),
        None => String::new(),
    };
    format!(
        "the gateway policy matches argument `{}` {relation} {:?}{path} against {:?}",
        rule.argument.join("."),
        hit.text,
        rule.matches.as_str()
    )
}

/// The reason of a decision by `rule`, which could not look at the whole argument.
fn too_large_reason(rule: &ArgumentRule) -> String {
    let argument = rule.argument.join(".");
    let why = format!(
        "argument `{argument}` holds more than {MAX_VALUES} values or nests deeper than \
         {MAX_DEPTH} levels"
    );
    match &rule.reason {
        Some(reason) => format!("{reason} ({why}: too large to check)"),
        None => format!(
            "the gateway policy cannot check argument `{argument}` against {:?}, so it \
             applies the rule: {why}",
            rule.matches.as_str()
        ),
    }
}

/// The policy in force: swapped whole when the configuration is reloaded, read without a
/// lock by every call.
pub(crate) type SharedPolicy = Arc<arc_swap::ArcSwap<PolicyConfig>>;

/// The policy as a pre-execute hook over `registry`'s tools.
pub(crate) fn hook(
    policy: SharedPolicy,
    registry: Registry,
) -> impl tools_runtime::hooks::Hook<PreRequest> {
    let state = Arc::new((policy, registry));
    from_fn(move |req: PreRequest, next: PreNext| {
        let state = Arc::clone(&state);
        async move {
            let exec = req.execution();
            let policy = state.0.load();
            let decision = decide(
                &policy,
                &state.1,
                exec.name().as_str(),
                exec.info().arguments.as_value(),
                exec.principal().map(|p| &**p),
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
#[path = "policy_tests.rs"]
mod tests;
