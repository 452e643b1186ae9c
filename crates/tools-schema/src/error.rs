//! The crate's error type.

use tools_json::{ErrorCode, Violation, Violations};

/// Everything that can go wrong in `tools-schema`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An author spec is malformed or compiles outside the subset (`UNSUPPORTED_SCHEMA`).
    #[error("unsupported JSON schema: {violations}")]
    UnsupportedSchema {
        /// The first author error, or every violation of the compiled output.
        violations: Violations,
    },
    /// The arguments break the parameter schema or are not lossless JSON (`INVALID_ARGS`).
    #[error("invalid arguments: {violations}")]
    InvalidArgs {
        /// Every violation, with paths relative to the arguments (`items[3].qty`).
        violations: Violations,
    },
    /// The arguments match the schema but cannot be deserialized into the tool's Rust type
    /// (`INVALID_ARGS`). This is a mismatch between the declared schema and the type: pin it
    /// in a test with [`crate::testing::check_args_type`].
    #[error("invalid arguments: they match the schema but not the tool's argument type: {message}")]
    ArgsType {
        /// The deserializer's message.
        message: String,
    },
    /// The tool's value breaks the output schema or is not lossless JSON
    /// (`INVALID_TOOL_OUTPUT`).
    #[error("invalid tool output: {violations}")]
    InvalidOutput {
        /// Every violation, with paths rooted at `value`.
        violations: Violations,
    },
    /// The tool's value could not be serialized to JSON (`INVALID_TOOL_OUTPUT`).
    #[error("invalid tool output: the value cannot be serialized to JSON: {message}")]
    OutputNotSerializable {
        /// The serializer's message.
        message: String,
    },
}

impl Error {
    /// The machine code of the error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::UnsupportedSchema { .. } => ErrorCode::UnsupportedSchema,
            Error::InvalidArgs { .. } | Error::ArgsType { .. } => ErrorCode::InvalidArgs,
            Error::InvalidOutput { .. } | Error::OutputNotSerializable { .. } => {
                ErrorCode::InvalidToolOutput
            }
        }
    }

    /// The violations carried by the error (empty for the type and serialization errors).
    pub fn violations(&self) -> &[Violation] {
        match self {
            Error::UnsupportedSchema { violations }
            | Error::InvalidArgs { violations }
            | Error::InvalidOutput { violations } => violations,
            Error::ArgsType { .. } | Error::OutputNotSerializable { .. } => &[],
        }
    }
}

/// The failure a typed tool reports for a schema error: the error's code and message, and
/// its violations as data in the detail (`{"violations": [{"path", "pointer", "message"}]}`)
/// when it has any.
impl From<Error> for tools_error::ToolError {
    fn from(error: Error) -> tools_error::ToolError {
        let failure = tools_error::ToolError::with_code(error.code(), error.to_string());
        match &error {
            Error::UnsupportedSchema { violations }
            | Error::InvalidArgs { violations }
            | Error::InvalidOutput { violations } => failure.with_violations(violations.to_json()),
            Error::ArgsType { .. } | Error::OutputNotSerializable { .. } => {
                failure.with_source(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_carries_the_violations_as_data() {
        let mut violations = Violations::new();
        violations.push(Violation::new(
            tools_json::Path::root("").key("items").index(3).key("qty"),
            tools_json::ViolationKind::MissingRequired,
        ));
        let failure = tools_error::ToolError::from(Error::InvalidArgs { violations });
        assert_eq!(
            failure.code().and_then(tools_error::Code::known),
            Some(ErrorCode::InvalidArgs)
        );
        let violations = failure.violations().unwrap();
        assert_eq!(violations[0]["pointer"], "/items/3/qty");
        assert_eq!(violations[0]["path"], "items[3].qty");
        assert!(
            failure
                .message()
                .starts_with("invalid arguments: items[3].qty")
        );
    }

    #[test]
    fn a_type_mismatch_keeps_its_cause() {
        let failure = tools_error::ToolError::from(Error::ArgsType {
            message: "bad".into(),
        });
        assert!(std::error::Error::source(&failure).is_some());
        assert!(failure.detail().is_none());
    }

    #[test]
    fn every_variant_has_its_code() {
        let v = Violations::new();
        assert_eq!(
            Error::UnsupportedSchema {
                violations: v.clone()
            }
            .code(),
            ErrorCode::UnsupportedSchema
        );
        assert_eq!(
            Error::InvalidArgs {
                violations: v.clone()
            }
            .code(),
            ErrorCode::InvalidArgs
        );
        assert_eq!(
            Error::ArgsType {
                message: String::new()
            }
            .code(),
            ErrorCode::InvalidArgs
        );
        assert_eq!(
            Error::InvalidOutput { violations: v }.code(),
            ErrorCode::InvalidToolOutput
        );
        assert_eq!(
            Error::OutputNotSerializable {
                message: String::new()
            }
            .code(),
            ErrorCode::InvalidToolOutput
        );
    }

    #[test]
    fn the_error_stays_small() {
        assert!(std::mem::size_of::<Error>() <= 4 * std::mem::size_of::<usize>());
    }
}
