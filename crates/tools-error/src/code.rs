//! The machine-readable error codes shared by every crate of the workspace.

use std::fmt;

/// A stable, machine-readable error code.
///
/// The codes are the interface: callers match on this enum, never on message text. The
/// enum lives in `tools-error`, below every other crate, so that each crate above can
/// produce and re-export the same type; `docs/error-codes.md` is generated from
/// [`ErrorCode::ALL`].
///
/// # Examples
///
/// ```
/// use tools_error::ErrorCode;
///
/// assert_eq!(ErrorCode::InvalidArgs.as_str(), "INVALID_ARGS");
/// assert_eq!("UNKNOWN_TOOL".parse::<ErrorCode>(), Ok(ErrorCode::UnknownTool));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The called tool does not exist for the caller: never registered, outside the
    /// agent's scope, restricted away, removed since the call was prepared, or collapsed
    /// under Code Mode.
    UnknownTool,
    /// A tool produced a value that breaks its declared output schema, or that is not
    /// lossless JSON.
    InvalidToolOutput,
    /// The model's arguments break the tool's parameter schema.
    InvalidArgs,
    /// A schema uses something outside the enforced JSON Schema subset, or an author
    /// schema is malformed.
    UnsupportedSchema,
    /// A `run_code` program failed (exception, timeout, abort, worker exit, invalid output,
    /// output limit).
    CodeRunFailed,
    /// The caller cancelled the call after the tool body started, and the call would
    /// otherwise have succeeded.
    Aborted,
    /// Cancellation prevented the tool body from being invoked.
    AbortedBeforeDispatch,
    /// The timeout policy's deadline for the tool's budget fired.
    ToolTimeout,
    /// Policy refused the call: a pre-execute hook denied it or a guard gave a reason. The
    /// reason is the message.
    Denied,
    /// The call needed approval (`ask`) and did not get it: the user refused, the question
    /// was cancelled, nobody could answer, or the approval service failed.
    ApprovalDenied,
    /// A limit on how often or how many at once (per principal, per tool) refused the
    /// call; the detail's `retry_after_ms` says when to try again.
    RateLimited,
    /// The tool changed since it was pinned (description, schemas or annotations) and is
    /// withheld until someone re-approves it; the message names what changed.
    ToolChanged,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::UnknownTool,
        ErrorCode::InvalidToolOutput,
        ErrorCode::InvalidArgs,
        ErrorCode::UnsupportedSchema,
        ErrorCode::CodeRunFailed,
        ErrorCode::Aborted,
        ErrorCode::AbortedBeforeDispatch,
        ErrorCode::ToolTimeout,
        ErrorCode::Denied,
        ErrorCode::ApprovalDenied,
        ErrorCode::RateLimited,
        ErrorCode::ToolChanged,
    ];

    /// The wire spelling of the code, e.g. `"INVALID_ARGS"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::UnsupportedSchema => "UNSUPPORTED_SCHEMA",
            ErrorCode::CodeRunFailed => "CODE_RUN_FAILED",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            ErrorCode::ToolTimeout => "TOOL_TIMEOUT",
            ErrorCode::Denied => "DENIED",
            ErrorCode::ApprovalDenied => "APPROVAL_DENIED",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::ToolChanged => "TOOL_CHANGED",
        }
    }

    /// One sentence saying when the code is produced (used for `docs/error-codes.md`).
    pub const fn summary(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => {
                "The tool does not exist for this caller: never registered, out of the agent's scope, restricted away, removed since the call was prepared, or a direct call collapsed under Code Mode."
            }
            ErrorCode::InvalidToolOutput => {
                "The tool's value (from its body, a wrapper or a post-execute replacement) breaks the output schema or is not lossless JSON."
            }
            ErrorCode::InvalidArgs => {
                "The model's arguments break the parameter schema of a typed tool; the message lists every violation with its path."
            }
            ErrorCode::UnsupportedSchema => {
                "A schema uses a keyword or shape outside the enforced subset, or an author schema is malformed; every violation is listed at once."
            }
            ErrorCode::CodeRunFailed => {
                "A `run_code` program failed: exception, timeout, abort, worker exit, invalid output or output limit."
            }
            ErrorCode::Aborted => {
                "The caller cancelled after the tool body started and the call would otherwise have succeeded."
            }
            ErrorCode::AbortedBeforeDispatch => {
                "Cancellation was observed before the tool body was invoked, so the body never ran."
            }
            ErrorCode::ToolTimeout => {
                "The tool's budget elapsed: the timeout policy's deadline fired, or the body settled after it, or a `tower::timeout` wrapper gave up (the body's token is cancelled)."
            }
            ErrorCode::Denied => {
                "Policy refused the call before its body ran: a pre-execute hook denied it or a guard gave a reason; the reason is the message."
            }
            ErrorCode::ApprovalDenied => {
                "The call needed approval and did not get it: refused, cancelled, unanswerable (no approval service or channel, no agent) or the approval service failed."
            }
            ErrorCode::RateLimited => {
                "A rate or concurrency limit (per principal, per tool) refused the call before its body ran; the detail's `retry_after_ms` says when to try again. Calls over a limit never queue."
            }
            ErrorCode::ToolChanged => {
                "The tool's description, schemas or annotations differ from the pinned fingerprint, so it is withheld until re-approved; the message names what changed."
            }
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string is not the wire spelling of any [`ErrorCode`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown error code {0:?}")]
pub struct UnknownErrorCode(pub String);

impl std::str::FromStr for ErrorCode {
    type Err = UnknownErrorCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == s)
            .ok_or_else(|| UnknownErrorCode(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_wire_spelling() {
        for code in ErrorCode::ALL {
            assert_eq!(code.as_str().parse::<ErrorCode>(), Ok(code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert!("invalid_args".parse::<ErrorCode>().is_err());
    }

    #[test]
    fn wire_spellings_are_distinct() {
        let mut seen: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), ErrorCode::ALL.len());
    }
}
