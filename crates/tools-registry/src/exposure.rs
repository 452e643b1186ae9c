//! Exposure: where a tool is shown and from where it may be called (docs/decisions.md,
//! entry 35), the rules a scope declares over it, and why a call is refused.

use std::fmt;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::Error;

/// The name of the function-style search tool a provider without native tool search is
/// given (OpenAI Chat Completions, the MCP gateway); the refusal of a deferred tool that was
/// not loaded names it.
pub const SEARCH_TOOLS: &str = "search_tools";

/// Where a tool is shown and from where it may be called.
///
/// | exposure | declared to the model | in the Code Mode SDK | found by search | a model-direct call | a `run_code` sub-call |
/// | --- | --- | --- | --- | --- | --- |
/// | `Direct` | yes | yes | no | yes | yes |
/// | `Deferred` | once loaded in the scope | no (`$search`, `$describe`) | yes | once loaded | yes |
/// | `NativeOnly` | yes | no | no | yes | refused |
/// | `CodeOnly` | no | yes | no | refused | yes |
/// | `Hidden` | no | no | no | refused | refused |
///
/// A host-dispatched call ([`ToolCall::from_host`] in `tools-pipeline`) reaches every
/// visible tool whatever its exposure.
///
/// [`ToolCall::from_host`]: https://docs.rs/tools-pipeline
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Exposure {
    /// Declared to the model and in the Code Mode SDK (the default).
    #[default]
    Direct,
    /// Registered and found by search; declared and callable once a search (or the host)
    /// loads it in the scope. `run_code` programs reach it through `$search`.
    Deferred,
    /// Declared to the model, never in the Code Mode SDK nor callable from a program.
    NativeOnly,
    /// Only inside `run_code`: in the SDK, never declared to the model.
    CodeOnly,
    /// Never shown anywhere; only the host dispatches it.
    Hidden,
}

impl Exposure {
    /// The exposure's name: `direct`, `deferred`, `native_only`, `code_only` or `hidden`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Exposure::Direct => "direct",
            Exposure::Deferred => "deferred",
            Exposure::NativeOnly => "native_only",
            Exposure::CodeOnly => "code_only",
            Exposure::Hidden => "hidden",
        }
    }

    /// Whether the model is told about the tool in its own declarations (before loading,
    /// for a deferred one).
    pub const fn is_declared(self) -> bool {
        matches!(self, Exposure::Direct | Exposure::NativeOnly)
    }

    /// Whether the Code Mode SDK declares the tool.
    pub const fn in_sdk(self) -> bool {
        matches!(self, Exposure::Direct | Exposure::CodeOnly)
    }
}

impl fmt::Display for Exposure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a view refuses a call of a visible tool; see [`crate::View::refusal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A model-direct call in a `code` scope (only `run_code` is callable directly).
    Collapsed,
    /// A model-direct call of a [`Exposure::CodeOnly`] tool.
    CodeOnly,
    /// A model-direct call of a [`Exposure::Deferred`] tool not loaded in the scope.
    NotLoaded,
    /// A `run_code` sub-call of a [`Exposure::NativeOnly`] tool.
    NativeOnly,
    /// A call of a [`Exposure::Hidden`] tool the host did not dispatch.
    Hidden,
}

impl Refusal {
    /// The message of the `UNKNOWN_TOOL` result the call gets.
    pub fn message(self, name: &str) -> String {
        match self {
            Refusal::Collapsed | Refusal::CodeOnly => format!(
                "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
            ),
            Refusal::NotLoaded => format!(
                "unknown tool \"{name}\": it is not loaded in this conversation — search for it first with `{SEARCH_TOOLS}` (or the provider's tool search), then call it"
            ),
            Refusal::NativeOnly => format!(
                "unknown tool \"{name}\": it is not callable from a `run_code` program — call it directly"
            ),
            Refusal::Hidden => format!("unknown tool {name:?}"),
        }
    }
}

/// Exposure rules a layer declares over tool names: exact names or globs (`*`, `?`,
/// `[…]`); the last rule that matches a name wins.
pub(crate) struct Rules {
    rules: Vec<(u64, GlobSet, Exposure)>,
}

impl Rules {
    pub(crate) fn new() -> Rules {
        Rules { rules: Vec::new() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub(crate) fn push(&mut self, id: u64, set: GlobSet, exposure: Exposure) {
        self.rules.push((id, set, exposure));
    }

    /// Removes rule `id`; whether it was there.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        let before = self.rules.len();
        self.rules.retain(|(other, _, _)| *other != id);
        self.rules.len() != before
    }

    /// The exposure the last matching rule gives `name`, if any rule matches.
    pub(crate) fn exposure_of(&self, name: &str) -> Option<Exposure> {
        self.rules
            .iter()
            .rev()
            .find(|(_, set, _)| set.is_match(name))
            .map(|(_, _, exposure)| *exposure)
    }
}

/// Compiles a rule's patterns: each an exact name or a glob.
///
/// # Errors
///
/// [`Error::InvalidPattern`] for a malformed glob or an empty list.
pub(crate) fn compile<I, S>(patterns: I) -> Result<GlobSet, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut builder = GlobSetBuilder::new();
    let mut any = false;
    for pattern in patterns {
        let pattern = pattern.as_ref();
        let glob = Glob::new(pattern).map_err(|err| Error::InvalidPattern {
            pattern: pattern.to_owned(),
            reason: err.kind().to_string(),
        })?;
        builder.add(glob);
        any = true;
    }
    if !any {
        return Err(Error::InvalidPattern {
            pattern: String::new(),
            reason: "an exposure rule needs at least one name or glob".into(),
        });
    }
    builder.build().map_err(|err| Error::InvalidPattern {
        pattern: String::new(),
        reason: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_matching_rule_wins() {
        let mut rules = Rules::new();
        rules.push(1, compile(["github__*"]).unwrap(), Exposure::Deferred);
        rules.push(2, compile(["github__get_me"]).unwrap(), Exposure::Direct);
        assert_eq!(
            rules.exposure_of("github__list_issues"),
            Some(Exposure::Deferred)
        );
        assert_eq!(rules.exposure_of("github__get_me"), Some(Exposure::Direct));
        assert_eq!(rules.exposure_of("slack__post"), None);
        assert!(rules.remove(2));
        assert!(!rules.remove(2));
        assert_eq!(
            rules.exposure_of("github__get_me"),
            Some(Exposure::Deferred)
        );
    }

    #[test]
    fn malformed_and_empty_rules_are_refused() {
        assert!(matches!(
            compile(["a[b"]),
            Err(Error::InvalidPattern { .. })
        ));
        assert!(matches!(
            compile(Vec::<String>::new()),
            Err(Error::InvalidPattern { .. })
        ));
    }

    #[test]
    fn refusals_name_the_way_out() {
        assert!(Refusal::NotLoaded.message("x").contains(SEARCH_TOOLS));
        assert!(Refusal::CodeOnly.message("x").contains("run_code"));
        assert_eq!(Refusal::Hidden.message("x"), "unknown tool \"x\"");
    }
}
