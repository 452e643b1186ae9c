//! The crate's error type.

use tools_json::ErrorCode;

/// Everything that can go wrong in `tools-codemode`.
///
/// Rendering never fails (unsupported schemas degrade); only configuration can.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A code runtime reports a language that has no SDK renderer and `run_code` flavour.
    #[error(
        "code runtime language {name:?} has no SDK renderer or run_code flavour (known: \"typescript\", \"python\")"
    )]
    UnknownLanguage {
        /// The language name the runtime reported.
        name: String,
    },
}

impl Error {
    /// The machine code of the error, where it has one (a misconfiguration has none).
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::UnknownLanguage { .. } => None,
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
    fn a_misconfiguration_has_no_code() {
        let err = Error::UnknownLanguage {
            name: "ruby".into(),
        };
        assert_eq!(err.code(), None);
    }
}
