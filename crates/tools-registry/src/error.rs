//! The crate's error type: why a registration, restriction or declaration was refused.

use tools_json::{ErrorCode, Violations};

/// Everything the registry can refuse. A refused call leaves nothing behind.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool name is the empty string.
    #[error("a tool name must not be empty")]
    EmptyName,
    /// A definition was built without an output declaration.
    #[error("tool {tool:?} must declare its output (schema and render)")]
    MissingOutput {
        /// The tool.
        tool: String,
    },
    /// A definition was built without a body.
    #[error("tool {tool:?} must declare a body")]
    MissingBody {
        /// The tool.
        tool: String,
    },
    /// The output schema (or a typed tool's parameter map) is outside the subset
    /// (`UNSUPPORTED_SCHEMA`).
    #[error("tool {tool:?}: unsupported JSON schema: {violations}")]
    UnsupportedSchema {
        /// The tool.
        tool: String,
        /// Every violation.
        violations: Violations,
    },
    /// The parameter schema is not lossless JSON (docs/decisions.md, entry 12: checked at
    /// registration).
    #[error("tool {tool:?} parameters must be lossless JSON: {violations}")]
    ParametersNotLossless {
        /// The tool.
        tool: String,
        /// Every violation.
        violations: Violations,
    },
    /// A zero timeout budget, or one above [`crate::MAX_TIMEOUT`].
    #[error("tool {tool:?} timeout must be a positive duration of at most 2147483647ms")]
    InvalidTimeout {
        /// The tool.
        tool: String,
    },
    /// The name `run_code` is reserved for the Code Mode transport.
    #[error(
        "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
    )]
    ReservedName,
    /// The name is already registered in the target layer.
    #[error("{}", duplicate_message(tool, *scoped))]
    Duplicate {
        /// The tool.
        tool: String,
        /// Whether the layer is an agent scope's (else the global layer).
        scoped: bool,
    },
    /// A restriction with neither `allow` nor `deny`.
    #[error(
        "restrict() needs an allow and/or a deny list: an empty filter is almost always a configuration mistake"
    )]
    EmptyRestriction,
    /// A restriction names `run_code`.
    #[error(
        "restrict() cannot name the reserved Code Mode transport \"run_code\"; restrict the tools it reaches instead"
    )]
    RestrictReserved,
    /// A restriction names tools the scope does not inherit.
    #[error("{}", unknown_message(unknown, known))]
    RestrictUnknown {
        /// The names that are not inherited, in the order given.
        unknown: Vec<String>,
        /// The names the scope inherits, sorted.
        known: Vec<String>,
    },
    /// A scope declared a second presentation mode.
    #[error(
        "present_as({new}) conflicts with {existing} already declared for this scope; one scope selects one presentation"
    )]
    ModeConflict {
        /// The mode asked for.
        new: crate::PresentationMode,
        /// The mode in force.
        existing: crate::PresentationMode,
    },
    /// An exposure rule's name or glob is malformed, or the rule names nothing.
    #[error("exposure rule {pattern:?} is not a valid name or glob: {reason}")]
    InvalidPattern {
        /// The pattern as written (empty for a rule without any).
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The registry behind a scope handle is gone.
    #[error("the registry of this scope has been dropped")]
    RegistryGone,
}

fn duplicate_message(tool: &str, scoped: bool) -> String {
    if scoped {
        format!("tool {tool:?} is already registered in this scope")
    } else {
        format!(
            "tool {tool:?} is already registered globally (for a per-agent variant, register it through that agent's scope)"
        )
    }
}

fn unknown_message(unknown: &[String], known: &[String]) -> String {
    let quoted: Vec<String> = unknown.iter().map(|n| format!("{n:?}")).collect();
    let known = if known.is_empty() {
        "(none)".to_owned()
    } else {
        known.join(", ")
    };
    let noun = if unknown.len() == 1 { "tool" } else { "tools" };
    format!(
        "restrict() names unknown inherited {noun} {}; known inherited tools: {known}",
        quoted.join(", ")
    )
}

impl Error {
    /// The machine code, where the error has one (`UNSUPPORTED_SCHEMA`).
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::UnsupportedSchema { .. } => Some(ErrorCode::UnsupportedSchema),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_list_the_known_ones() {
        let one = Error::RestrictUnknown {
            unknown: vec!["reall".into()],
            known: vec!["real".into()],
        };
        assert_eq!(
            one.to_string(),
            "restrict() names unknown inherited tool \"reall\"; known inherited tools: real"
        );
        let two = Error::RestrictUnknown {
            unknown: vec!["ghost".into(), "wraith".into()],
            known: vec![],
        };
        assert!(two.to_string().contains("tools \"ghost\", \"wraith\""));
        assert!(two.to_string().ends_with("(none)"));
    }

    #[test]
    fn duplicates_say_which_layer() {
        let global = Error::Duplicate {
            tool: "x".into(),
            scoped: false,
        };
        assert!(global.to_string().contains("agent's scope"));
        let scoped = Error::Duplicate {
            tool: "y".into(),
            scoped: true,
        };
        assert!(
            scoped
                .to_string()
                .contains("already registered in this scope")
        );
    }
}
