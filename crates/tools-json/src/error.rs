//! The crate's error type.

use crate::{ErrorCode, Violation, Violations};

/// Everything that can go wrong in `tools-json`.
///
/// Each variant carries every violation found, never only the first.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A schema uses something outside the enforced subset.
    #[error("unsupported JSON schema: {violations}")]
    UnsupportedSchema {
        /// Every violation, in the order of the support check's walk.
        violations: Violations,
    },
    /// A value cannot cross the lossless boundary.
    #[error("value is not lossless JSON: {violations}")]
    NotLossless {
        /// Every violation, in document order.
        violations: Violations,
    },
    /// Text that is not JSON.
    #[error("invalid JSON text: {0}")]
    Parse(String),
}

impl Error {
    /// The machine code of the error, where it has one of its own.
    ///
    /// A lossless or parse failure has none here: it takes the code of the boundary where
    /// it happens (`INVALID_ARGS` for arguments, `INVALID_TOOL_OUTPUT` for tool values),
    /// which the crate above assigns.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::UnsupportedSchema { .. } => Some(ErrorCode::UnsupportedSchema),
            Error::NotLossless { .. } | Error::Parse(_) => None,
        }
    }

    /// The violations carried by the error (empty for a parse error).
    pub fn violations(&self) -> &[Violation] {
        match self {
            Error::UnsupportedSchema { violations } | Error::NotLossless { violations } => {
                violations
            }
            Error::Parse(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_stays_small() {
        assert!(std::mem::size_of::<Error>() <= 4 * std::mem::size_of::<usize>());
    }

    #[test]
    fn only_schema_errors_carry_a_code_of_their_own() {
        let schema = Error::UnsupportedSchema {
            violations: Violations::new(),
        };
        assert_eq!(schema.code(), Some(ErrorCode::UnsupportedSchema));
        assert_eq!(Error::Parse("x".into()).code(), None);
    }
}
