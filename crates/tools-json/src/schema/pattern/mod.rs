//! The `pattern` keyword: ECMA-262 regular expressions, matched in linear time.
//!
//! JSON Schema says a `pattern` is an ECMA-262 regular expression, searched for (not
//! anchored) in the string. Two engines serve that here, each for what it does best:
//!
//! - **`regress`** (an ECMA-262 engine, run with the `u` flag, as JSON Schema's own test
//!   suite assumes) decides whether a pattern is valid ECMA-262 syntax. It is a
//!   backtracking engine, so it is never used to match a value: `^(\w+\s?)*$` against 26
//!   word characters and a `!` took 3.5 s in a measurement on this project's machine, and
//!   a model chooses the value.
//! - **`regex`** (Rust's linear-time engine) matches. A valid pattern is rewritten into its
//!   syntax with ECMA-262's meaning made explicit: `\d`, `\w` and `\b` are ASCII, `\s` is
//!   ECMA-262's own whitespace and line-terminator set, `.` excludes the four line
//!   terminators, every literal is written as a code point, groups do not capture, and
//!   `\u` surrogate pairs are joined. Matching then costs time linear in the value.
//!
//! Constructs with no linear-time meaning are refused with the reason, never matched by
//! the backtracker: backreferences, lookahead and lookbehind, and inline modifiers
//! (`(?i:…)`, whose case folding differs between the engines). A property test holds
//! the rewrite to `regress`'s answers on generated patterns and strings
//! (`tests/it/bounds.rs`).
//!
//! ## Bounds
//!
//! A pattern is data its schema's author chooses (for a foreign schema, an MCP server), so
//! compiling one is bounded in time and memory ("Regex bounds in schemas" in
//! `docs/decisions.md`). Before anything parses it, its text is held to
//! [`MAX_PATTERN_BYTES`], its Unicode property escapes to [`MAX_PROPERTY_ESCAPES`] (each
//! builds a set of up to ~700 ranges, and `regress` merges the sets of one class one range
//! at a time) and its group nesting to [`MAX_GROUP_NESTING`]. `regex` then builds it with
//! its own limits: [`SIZE_LIMIT`] on the compiled program, [`DFA_SIZE_LIMIT`] on the lazy
//! DFA's cache (per searching thread, at match time) and [`NEST_LIMIT`] on its syntax
//! tree. A repetition count `regex` cannot represent is over the size limit.
//!
//! One schema's patterns together are held to [`SCHEMA_BUDGET`] by [`Patterns`], which
//! also compiles each distinct text once per schema (the support check runs once per
//! repair pass of a foreign schema, and the compiler after it). A pattern is compiled at
//! the smallest of [`SIZE_TIERS`] it fits, trying each in turn, and every attempt is
//! charged its size limit to the walk that needs it (the first also pays for the parse):
//! a compile that fails at a limit stops after building about that much, so the charge
//! bounds the work as well as the memory kept.

use std::collections::HashMap;
use std::fmt;

use crate::PatternBound;

/// The longest pattern text, in bytes (UTF-8).
pub(crate) const MAX_PATTERN_BYTES: usize = 4 * 1024;
/// The most Unicode property escapes (`\p{…}`, `\P{…}`) in one pattern.
pub(crate) const MAX_PROPERTY_ESCAPES: usize = 32;
/// The deepest nesting of groups in one pattern.
pub(crate) const MAX_GROUP_NESTING: usize = 32;
/// `regex`'s limit on the depth of its syntax tree (its default, stated here). A group
/// adds at most four levels (a repetition, the group, an alternation, a concatenation), so
/// [`MAX_GROUP_NESTING`] groups stay well inside it (a unit test holds this): it is a
/// second line only.
pub(crate) const NEST_LIMIT: u32 = 250;
/// The largest compiled program of one pattern (`regex`'s `size_limit`), in bytes.
pub(crate) const SIZE_LIMIT: usize = 4 << 20;
/// The size limits a pattern is compiled at, smallest first: a pattern is charged to its
/// schema's budget by the ones it needs.
pub(crate) const SIZE_TIERS: [usize; 5] = [16 << 10, 64 << 10, 256 << 10, 1 << 20, SIZE_LIMIT];
/// The capacity of the lazy DFA's cache of one pattern, per thread searching with it
/// (`regex`'s `dfa_size_limit`, also its limit on the DFAs it builds when compiling):
/// `regex`'s default, stated here so that it is a bound this crate chose. Smaller, a
/// pattern near [`SIZE_LIMIT`] thrashes its cache and falls back to the slower (still
/// linear) NFA simulation: `.{1000}` searched 6 KB in 0.9 ms with 2 MiB, 15 ms with 1 MiB.
pub(crate) const DFA_SIZE_LIMIT: usize = 2 << 20;
/// The compile work all the patterns of one schema may cost together: the sum of the size
/// limits of the compiles attempted, in bytes.
pub(crate) const SCHEMA_BUDGET: usize = 32 << 20;

/// A compiled `pattern`.
#[derive(Clone)]
pub(crate) struct Pattern {
    regex: regex::Regex,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern")
            .field(&self.regex.as_str())
            .finish()
    }
}

/// Why a `pattern` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// Not ECMA-262 syntax (`regress`'s message).
    Syntax(String),
    /// Valid ECMA-262 that has no linear-time match.
    Unsupported(&'static str),
    /// Over one of the bounds on compiling patterns.
    TooLarge(PatternBound),
    /// `regex` refused the rewritten pattern for another reason (its message; never
    /// expected, since the rewrite only writes what `regex` takes).
    Refused(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Syntax(message) => {
                write!(f, "is not an ECMA-262 regular expression ({message})")
            }
            PatternError::Unsupported(what) => write!(
                f,
                "uses {what}, which cannot be matched in linear time and is not supported"
            ),
            PatternError::TooLarge(bound) => write!(f, "is too large to compile: {bound}"),
            PatternError::Refused(message) => {
                write!(f, "cannot be compiled for matching ({message})")
            }
        }
    }
}

impl Pattern {
    /// Checks `source` as ECMA-262 (`u` flag) and compiles its linear-time form, within
    /// the bounds on one pattern (not a schema's budget: see [`Patterns`]).
    #[cfg(test)]
    pub(crate) fn new(source: &str) -> Result<Pattern, PatternError> {
        let translated = parse(source)?;
        match build(&translated, SIZE_LIMIT) {
            Built::Fits(pattern) => Ok(pattern),
            Built::TooBig => Err(PatternError::TooLarge(PatternBound::CompiledSize {
                limit: SIZE_LIMIT,
            })),
            Built::Refused(error) => Err(error),
        }
    }

    /// Whether `text` contains a match (JSON Schema's unanchored search).
    ///
    /// `find`, not `is_match`: with the ASCII `(?-u:\B)` in a Unicode pattern, `regex`
    /// 1.12's `is_match` answered `false` where `find` (and ECMA-262) found a match
    /// (`(?:(?-u:\B)|\P{L})` on `"aéa\u{2028}a"`, found by the property test). `find`
    /// reports no empty match inside a code point, which is ECMA-262's answer.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.find(text).is_some()
    }

    /// The rewritten pattern (for tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn rewritten(&self) -> &str {
        self.regex.as_str()
    }
}

/// The bounds checked on the text alone, before anything parses it: its length, its
/// Unicode property escapes and its group nesting. A linear scan; it need not follow the
/// grammar exactly (an invalid pattern is refused by `regress` next), only never
/// undercount: an escape always takes the next character, and inside a class `(` is a
/// literal.
fn scan(source: &str) -> Result<(), PatternBound> {
    if source.len() > MAX_PATTERN_BYTES {
        return Err(PatternBound::Length {
            limit: MAX_PATTERN_BYTES,
        });
    }
    let (mut escapes, mut depth, mut in_class) = (0usize, 0usize, false);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if matches!(chars.next(), Some('p' | 'P')) {
                    escapes += 1;
                    if escapes > MAX_PROPERTY_ESCAPES {
                        return Err(PatternBound::PropertyEscapes {
                            limit: MAX_PROPERTY_ESCAPES,
                        });
                    }
                }
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                depth += 1;
                if depth > MAX_GROUP_NESTING {
                    return Err(PatternBound::Nesting {
                        limit: MAX_GROUP_NESTING,
                    });
                }
            }
            ')' if !in_class => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Holds `source` to the bounds on its text, checks it as ECMA-262 (`u` flag) and
/// rewrites it into `regex` syntax.
fn parse(source: &str) -> Result<String, PatternError> {
    scan(source).map_err(PatternError::TooLarge)?;
    regress::Regex::with_flags(source, "u").map_err(|e| PatternError::Syntax(e.to_string()))?;
    translate(source)
}

/// What building a rewritten pattern at one size limit gave.
enum Built {
    Fits(Pattern),
    /// Over the size limit (larger limits may fit).
    TooBig,
    /// Refused for another reason (at every limit).
    Refused(PatternError),
}

fn build(translated: &str, size_limit: usize) -> Built {
    let built = regex::RegexBuilder::new(translated)
        .size_limit(size_limit)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build();
    match built {
        Ok(regex) => Built::Fits(Pattern { regex }),
        Err(regex::Error::CompiledTooBig(_)) => Built::TooBig,
        Err(error) => Built::Refused(PatternError::Refused(last_line(&error.to_string()))),
    }
}

fn last_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim()
        .to_owned()
}

/// The patterns of one schema being compiled: each distinct text parsed and built once,
/// and each walk over the schema (a support check, the yes/no check, the DSL walk) held to
/// [`SCHEMA_BUDGET`].
///
/// A walk starts with [`Patterns::walk`] and asks [`Patterns::admit`] about every pattern
/// it meets. A text met again in the same walk is answered as the first time and charged
/// once (its compiled form is shared). What a text is charged depends only on the text and
/// on what the walk spent before it, never on what earlier walks built: a walk over the
/// same patterns in the same order reaches the same verdicts, and since a pattern refused
/// for the budget is charged only the attempts it made, a later walk over the same
/// patterns without it (a foreign schema's next repair pass) admits everything the earlier
/// one admitted. (A repair can also expose a pattern the earlier walk did not reach, such
/// as one beside a removed type array; it takes its place in the order, and the passes
/// that follow deal with what it pushes over the budget.)
#[derive(Default)]
pub(crate) struct Patterns {
    index: HashMap<Box<str>, usize>,
    entries: Vec<Entry>,
    /// The current walk (an entry charged in it carries its number).
    walk: u32,
    /// What the current walk has spent.
    spent: usize,
}

/// What is known of one text.
struct Entry {
    source: Box<str>,
    /// The rewrite, once parsed, or why the text is refused before any build.
    parsed: Option<Result<String, PatternError>>,
    /// How many of [`SIZE_TIERS`] were tried and were too small.
    too_small: usize,
    /// The pattern, once built (at tier `too_small`), or why `regex` refused it.
    built: Option<Result<Pattern, PatternError>>,
    /// The walk that last charged this text, and its verdict there.
    charged: Option<(u32, Result<(), PatternError>)>,
}

impl Patterns {
    /// Starts a new walk: nothing spent, nothing charged.
    pub(crate) fn walk(&mut self) {
        self.walk = self.walk.wrapping_add(1);
        self.spent = 0;
    }

    /// Whether the pattern `source` is admitted in the current walk, charging its compile
    /// work to the walk's budget.
    pub(crate) fn admit(&mut self, source: &str) -> Result<(), PatternError> {
        // The bounds on the text cost a scan of it: nothing is charged, nothing kept.
        scan(source).map_err(PatternError::TooLarge)?;
        let at = self.entry(source);
        if let Some((walk, verdict)) = self.entries.get(at).and_then(|e| e.charged.as_ref())
            && *walk == self.walk
        {
            return verdict.clone();
        }
        let verdict = self.charge(at);
        if let Some(entry) = self.entries.get_mut(at) {
            entry.charged = Some((self.walk, verdict.clone()));
        }
        verdict
    }

    /// The compiled pattern `source`, for the compiler: built by an earlier
    /// [`Patterns::admit`] (the support check admits every pattern of a schema it passes),
    /// otherwise built now, within the bounds on one pattern. `None` when it is refused.
    pub(crate) fn pattern(&mut self, source: &str) -> Option<Pattern> {
        scan(source).ok()?;
        let at = self.entry(source);
        for tier in 0..SIZE_TIERS.len() {
            match self.try_tier(at, tier) {
                Ok(true) => {
                    return self
                        .entries
                        .get(at)
                        .and_then(|e| e.built.as_ref())
                        .and_then(|built| built.as_ref().ok())
                        .cloned();
                }
                Ok(false) => {}
                Err(_) => return None,
            }
        }
        None
    }

    fn entry(&mut self, source: &str) -> usize {
        if let Some(&at) = self.index.get(source) {
            return at;
        }
        let at = self.entries.len();
        self.entries.push(Entry {
            source: source.into(),
            parsed: None,
            too_small: 0,
            built: None,
            charged: None,
        });
        self.index.insert(source.into(), at);
        at
    }

    /// Charges the tiers entry `at` needs, each while it fits the walk's budget.
    fn charge(&mut self, at: usize) -> Result<(), PatternError> {
        for (tier, &limit) in SIZE_TIERS.iter().enumerate() {
            if self.spent.saturating_add(limit) > SCHEMA_BUDGET {
                return Err(PatternError::TooLarge(PatternBound::SchemaTotal {
                    limit: SCHEMA_BUDGET,
                }));
            }
            self.spent += limit;
            if self.try_tier(at, tier)? {
                return Ok(());
            }
        }
        Err(PatternError::TooLarge(PatternBound::CompiledSize {
            limit: SIZE_LIMIT,
        }))
    }

    /// Whether entry `at` fits tier `tier` (the tiers below it being too small), parsing
    /// and building it first where that is not known yet.
    fn try_tier(&mut self, at: usize, tier: usize) -> Result<bool, PatternError> {
        let Some(entry) = self.entries.get_mut(at) else {
            return Err(PatternError::Refused("no such pattern".into()));
        };
        let translated = match entry.parsed.get_or_insert_with(|| parse(&entry.source)) {
            Ok(translated) => translated,
            Err(error) => return Err(error.clone()),
        };
        if tier < entry.too_small {
            return Ok(false);
        }
        if let Some(built) = &entry.built {
            return built.as_ref().map(|_| true).map_err(Clone::clone);
        }
        let Some(&limit) = SIZE_TIERS.get(tier) else {
            return Ok(false);
        };
        match build(translated, limit) {
            Built::Fits(pattern) => {
                entry.built = Some(Ok(pattern));
                // The rewrite is not needed any more.
                entry.parsed = Some(Ok(String::new()));
                Ok(true)
            }
            Built::TooBig => {
                entry.too_small = tier + 1;
                Ok(false)
            }
            Built::Refused(error) => {
                entry.built = Some(Err(error.clone()));
                Err(error)
            }
        }
    }
}

mod translate;

use translate::translate;

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        match Pattern::new(pattern) {
            Ok(p) => p.is_match(text),
            Err(e) => panic!("{pattern}: {e}"),
        }
    }

    #[test]
    fn ecma_classes_are_ascii_where_ecma_says_so() {
        assert!(matches(r"^\d+$", "0123"));
        assert!(!matches(r"^\d$", "\u{0660}"));
        assert!(!matches(r"^\w$", "é"));
        assert!(matches(r"^\W$", "é"));
        assert!(matches(r"^\s$", "\u{FEFF}"));
        assert!(!matches(r"^\s$", "\u{85}"));
        assert!(!matches(r"^.$", "\u{2028}"));
        assert!(matches(r"^.$", "\u{85}"));
        assert!(!matches(r"\bé", " é"));
    }

    #[test]
    fn literals_classes_and_escapes_mean_what_ecma_says() {
        assert!(matches(r"^[\b]$", "\u{8}"));
        assert!(matches(r"^\cJ$", "\n"));
        assert!(matches(r"^\uD83D\uDE00$", "😀"));
        assert!(matches(r"^[\uD83D\uDE00-\uD83D\uDE4F]$", "😃"));
        assert!(!matches(r"\uD83D", "😀"));
        assert!(!matches(r"[]", "a"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(matches(r"^a.c$", "a[c"));
        assert!(matches(r"^[.]$", "."));
        assert!(!matches(r"^[.]$", "a"));
        assert!(matches(r"^(?<year>\d{4})-\d{2}$", "2026-12"));
        assert!(matches(r"^[a&&b]+$", "&&"));
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^\p{Letter}+$", "Straße"));
        assert!(matches(r"a||b", "zzz"));
        // Found by the property test: `regex`'s `is_match` disagreed with `find` here.
        assert!(matches(r"(\B|\P{L})", "aéa\u{2028}a"));
        assert!(!matches(r"\B", "aéa\u{2028}a"));
    }

    #[test]
    fn the_search_is_unanchored() {
        assert!(matches("a+", "xxaxx"));
        assert!(!matches("^a+$", "xxaxx"));
    }

    #[test]
    fn non_linear_constructs_are_refused_with_the_reason() {
        for (pattern, what) in [
            (r"(a)\1", "a backreference"),
            (r"(?<n>a)\k<n>", "a backreference"),
            (r"a(?=b)", "a lookaround assertion"),
            (r"(?<!a)b", "a lookaround assertion"),
            (r"(?i:a)", "an inline modifier group"),
        ] {
            assert_eq!(
                Pattern::new(pattern).map(|_| ()),
                Err(PatternError::Unsupported(what))
            );
        }
        assert!(matches!(
            Pattern::new("(?<!a"),
            Err(PatternError::Syntax(_))
        ));
        assert!(matches!(Pattern::new("a{"), Err(PatternError::Syntax(_))));
        assert!(matches!(
            Pattern::new("a{99999999999}"),
            Err(PatternError::TooLarge(PatternBound::CompiledSize { .. }))
        ));
    }

    fn too_large(pattern: &str) -> Option<PatternBound> {
        match Pattern::new(pattern) {
            Err(PatternError::TooLarge(bound)) => Some(bound),
            _ => None,
        }
    }

    #[test]
    fn the_text_is_bounded_before_it_is_parsed() {
        let at_limit = "a".repeat(MAX_PATTERN_BYTES);
        assert!(Pattern::new(&at_limit).is_ok());
        assert_eq!(
            too_large(&format!("{at_limit}a")),
            Some(PatternBound::Length {
                limit: MAX_PATTERN_BYTES
            })
        );
        // Bytes, not characters: 2 049 two-byte characters are over 4 KiB.
        assert!(too_large(&"é".repeat(MAX_PATTERN_BYTES / 2 + 1)).is_some());
        // A text over the limit is refused even when it is not a pattern at all.
        assert!(too_large(&"(".repeat(MAX_PATTERN_BYTES + 1)).is_some());

        let escapes = |n: usize| format!("^[{}]$", r"\p{L}".repeat(n));
        assert!(Pattern::new(&escapes(MAX_PROPERTY_ESCAPES)).is_ok());
        assert_eq!(
            too_large(&escapes(MAX_PROPERTY_ESCAPES + 1)),
            Some(PatternBound::PropertyEscapes {
                limit: MAX_PROPERTY_ESCAPES
            })
        );
        // An escaped backslash before `p` is no property escape.
        assert!(Pattern::new(&r"\\p".repeat(MAX_PROPERTY_ESCAPES + 1)).is_ok());

        let nested = |n: usize| {
            let mut pattern = r"[a-z]\b".to_owned();
            for _ in 0..n {
                pattern = format!("(?:b|c{pattern})*");
            }
            pattern
        };
        // The deepest nesting allowed, each level a concatenation in an alternation in a
        // group under a repetition, is inside `regex`'s own nest limit.
        assert!(Pattern::new(&nested(MAX_GROUP_NESTING)).is_ok());
        assert_eq!(
            too_large(&nested(MAX_GROUP_NESTING + 1)),
            Some(PatternBound::Nesting {
                limit: MAX_GROUP_NESTING
            })
        );
        // Parentheses in a class or escaped do not nest.
        let literal = format!("[{}]{}", "(".repeat(64), r"\(".repeat(64));
        assert!(Pattern::new(&literal).is_ok());
    }

    #[test]
    fn the_compiled_size_is_bounded() {
        let compiled = Some(PatternBound::CompiledSize { limit: SIZE_LIMIT });
        for bomb in [
            "(a{1000}){1000}",
            "((((a{20}){20}){20}){20}){20}",
            r"\p{L}{200}",
            ".{4000}",
            "a{4294967295}",
            // Counts `regex` cannot represent are over the limit, not refused otherwise.
            "a{4294967296}",
            "a{1,99999999999}",
        ] {
            assert_eq!(too_large(bomb), compiled, "{bomb}");
        }
        // Leading zeros are no large count.
        assert!(matches("^a{0000000002}$", "aa"));
        // A Unicode-aware length limit of a plausible size still fits.
        assert!(Pattern::new(r"^[\p{L}\p{N}_-]{1,64}$").is_ok());
        assert!(Pattern::new(r"^.{0,1024}$").is_ok());
    }

    #[test]
    fn a_walk_charges_each_text_once_and_the_budget_refuses_the_rest() {
        let mut patterns = Patterns::default();
        patterns.walk();
        // About 1.3 MiB compiled: charged every tier up to 4 MiB.
        let big = |i: usize| format!(".{{1000}}|x{i}");
        let charge: usize = SIZE_TIERS.iter().sum();
        let fits = SCHEMA_BUDGET / charge;
        assert!(
            fits >= 2,
            "the budget must hold a few of the largest patterns"
        );
        for i in 0..fits {
            assert_eq!(patterns.admit(&big(i)), Ok(()), "{i}");
            // The same text again is free and answered alike.
            assert_eq!(patterns.admit(&big(i)), Ok(()));
        }
        let total = Err(PatternError::TooLarge(PatternBound::SchemaTotal {
            limit: SCHEMA_BUDGET,
        }));
        // What is left still admits small patterns (each charged the first tier), until
        // it is gone too.
        let left = SCHEMA_BUDGET - fits * charge;
        let mut small = 0;
        while patterns.admit(&format!("^s{small}$")).is_ok() {
            small += 1;
        }
        assert_eq!(small, left / SIZE_TIERS[0]);
        assert_eq!(patterns.admit(&format!("^s{small}$")), total);
        assert_eq!(patterns.admit(&big(fits)), total);
        // A text already admitted in this walk is still admitted.
        assert_eq!(patterns.admit(&big(0)), Ok(()));

        // A new walk over the same texts in the same order reaches the same verdicts
        // without building anything again, and one without the refused text still admits
        // everything the first admitted.
        patterns.walk();
        for i in 0..fits {
            assert_eq!(patterns.admit(&big(i)), Ok(()));
        }
        for i in 0..small {
            assert_eq!(patterns.admit(&format!("^s{i}$")), Ok(()));
        }
        // The compiler gets what the walks built.
        let built = patterns.pattern(&big(0));
        assert!(built.is_some_and(|p| p.is_match("x0")));
        assert!(patterns.pattern("(a)\\1").is_none());
        assert!(
            patterns
                .pattern(&"a".repeat(MAX_PATTERN_BYTES + 1))
                .is_none()
        );
    }

    #[test]
    fn refusals_are_charged_only_the_attempts_they_made() {
        let mut patterns = Patterns::default();
        patterns.walk();
        // Refused on its text: nothing charged, so the budget is untouched.
        assert!(patterns.admit(&"a".repeat(MAX_PATTERN_BYTES + 1)).is_err());
        assert_eq!(patterns.spent, 0);
        // Refused by the ECMA-262 parser: the first attempt (the parse).
        assert!(matches!(
            patterns.admit("(a)\\1"),
            Err(PatternError::Unsupported(_))
        ));
        assert_eq!(patterns.spent, SIZE_TIERS[0]);
        // Refused for its size: every tier.
        assert!(patterns.admit("(a{1000}){1000}").is_err());
        assert_eq!(
            patterns.spent,
            SIZE_TIERS[0] + SIZE_TIERS.iter().sum::<usize>()
        );
    }

    #[test]
    fn catastrophic_patterns_match_in_linear_time() {
        // Exponential for a backtracker; the rewrite runs it as a finite automaton.
        let p = Pattern::new(r"^(\w+\s?)*$").unwrap();
        let text = format!("{}!", "a".repeat(10_000));
        assert!(!p.is_match(&text));
        assert!(p.rewritten().contains("(?:"));
    }
}
