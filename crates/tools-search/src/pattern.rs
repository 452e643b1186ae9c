//! Regex mode: compiling a model's pattern within bounds.
//!
//! Rust's `regex` matches in time linear in the text (no backtracking), so no pattern can
//! make a search hang; the bounds here cap what compiling one may cost.

use regex::{Regex, RegexBuilder};

use crate::{Error, MAX_PATTERN_CHARS, PATTERN_DFA_SIZE_LIMIT, PATTERN_SIZE_LIMIT};

/// The deepest nesting of groups and repetitions a pattern may have (`regex`'s
/// `nest_limit`; its parser never recurses past it).
const NEST_LIMIT: u32 = 64;

/// Compiles a regex-mode pattern: case-insensitive, `^` and `$` at line ends (each field of
/// a tool's text is a line), within [`MAX_PATTERN_CHARS`], [`PATTERN_SIZE_LIMIT`] and
/// [`PATTERN_DFA_SIZE_LIMIT`].
pub(crate) fn compile(pattern: &str) -> Result<Regex, Error> {
    if pattern.is_empty() {
        return Err(Error::EmptyPattern);
    }
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(Error::PatternTooLong {
            chars,
            max: MAX_PATTERN_CHARS,
        });
    }
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .multi_line(true)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()
        .map_err(|err| match err {
            regex::Error::CompiledTooBig(limit) => Error::PatternTooLarge { limit },
            other => Error::InvalidPattern {
                message: other.to_string(),
            },
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_case_insensitive_and_line_anchored() {
        let re = compile("^get_").unwrap();
        assert!(re.is_match("GET_weather"));
        assert!(re.is_match("ns\nget_x"));
        assert!(!re.is_match("forget_it"));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_reason() {
        assert_eq!(compile("").err(), Some(Error::EmptyPattern));
        let long = "a".repeat(MAX_PATTERN_CHARS + 1);
        assert_eq!(
            compile(&long).unwrap_err().to_string(),
            "the regex pattern has 201 characters; at most 200 are allowed"
        );
        assert!(compile(&"é".repeat(MAX_PATTERN_CHARS)).is_ok());
        let Err(Error::InvalidPattern { message }) = compile("(unclosed") else {
            panic!("an unclosed group is invalid");
        };
        assert!(message.contains("unclosed group"), "{message}");
        let Err(Error::InvalidPattern { message }) = compile("(?=lookahead)") else {
            panic!("lookaround is unsupported");
        };
        assert!(message.contains("look-around"), "{message}");
        let too_large = Some(Error::PatternTooLarge {
            limit: PATTERN_SIZE_LIMIT,
        });
        assert_eq!(compile("(a{1000}){1000}").err(), too_large);
        assert_eq!(compile(r"\w{200}\w{200}\w{200}").err(), too_large);
        let nested = format!("{}a{}", "(".repeat(70), ")".repeat(70));
        assert!(matches!(
            compile(&nested),
            Err(Error::InvalidPattern { .. })
        ));
    }
}
