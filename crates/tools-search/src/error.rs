//! The crate's error type.

use tools_error::ErrorCode;

/// Everything that can go wrong in `tools-search`: a query or pattern the model sent that
/// cannot be searched with. Building an index never fails.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The query is empty or only white space.
    #[error("the search query is empty: give a few words that describe the tool you need")]
    EmptyQuery,
    /// The query is longer than [`MAX_QUERY_CHARS`](crate::MAX_QUERY_CHARS).
    #[error("the search query has {chars} characters; at most {max} are allowed")]
    QueryTooLong {
        /// The query's length in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// The regex pattern is the empty string.
    #[error("the regex pattern is empty: give a pattern that tool names or descriptions match")]
    EmptyPattern,
    /// The pattern is longer than [`MAX_PATTERN_CHARS`](crate::MAX_PATTERN_CHARS).
    #[error("the regex pattern has {chars} characters; at most {max} are allowed")]
    PatternTooLong {
        /// The pattern's length in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// The pattern is not a valid regular expression (Rust `regex` syntax: no lookaround,
    /// no backreferences).
    #[error("invalid regex pattern: {message}")]
    InvalidPattern {
        /// The `regex` crate's explanation, with the position of the fault.
        message: String,
    },
    /// The pattern compiles to a program larger than
    /// [`PATTERN_SIZE_LIMIT`](crate::PATTERN_SIZE_LIMIT) (large counted repetitions such as
    /// `a{1000}{1000}`, or many Unicode classes).
    #[error(
        "the regex pattern is too large once compiled (limit {limit} bytes): use fewer or smaller repetitions"
    )]
    PatternTooLarge {
        /// The size limit, in bytes.
        limit: usize,
    },
}

impl Error {
    /// The machine code of the error: always [`ErrorCode::InvalidArgs`], since every
    /// search error is an argument the model chose.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::EmptyQuery
            | Error::QueryTooLong { .. }
            | Error::EmptyPattern
            | Error::PatternTooLong { .. }
            | Error::InvalidPattern { .. }
            | Error::PatternTooLarge { .. } => ErrorCode::InvalidArgs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_facts() {
        let err = Error::QueryTooLong {
            chars: 1_200,
            max: 1_000,
        };
        assert_eq!(
            err.to_string(),
            "the search query has 1200 characters; at most 1000 are allowed"
        );
        assert_eq!(err.code(), ErrorCode::InvalidArgs);
        assert!(Error::EmptyQuery.to_string().contains("empty"));
    }

    #[test]
    fn the_error_stays_small() {
        assert!(std::mem::size_of::<Error>() <= 4 * std::mem::size_of::<usize>());
    }
}
