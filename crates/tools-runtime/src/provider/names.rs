//! Tool names on the wire. OpenAI (Responses and Chat Completions) and Anthropic take a
//! tool name matching `^[a-zA-Z0-9_-]{1,64}$` and refuse the whole request otherwise; a
//! registry name is any non-empty string (`math.factorial`, `files/read`, `路径`).
//!
//! A name the wires take is declared as it is. Any other is declared under a wire name
//! made for it, reversibly: each character outside the wires' alphabet becomes `_`, the
//! result is cut to 64 characters, and a name another tool of the same declarations
//! already has (as its own name or as its wire name) gets the first free suffix `_2`,
//! `_3`, … (cut to fit). The declarations keep both directions, and
//! [`Provider::parse`](super::Provider::parse) maps a wire name back to the tool's own
//! name before the call reaches the pipeline. The wire names depend only on the names
//! declared, in their order, so declaring the same tools again gives the same names.

use std::collections::{HashMap, HashSet};

/// The longest tool name the wires take.
const MAX_LEN: usize = 64;

/// Whether the providers take `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub(super) fn is_wire_name(name: &str) -> bool {
    (1..=MAX_LEN).contains(&name.len()) && name.bytes().all(is_wire_byte)
}

fn is_wire_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The wire names of the tools of one declaration, both ways, for the names that had to
/// be mapped (a name the wires take maps to itself and is not stored).
#[derive(Clone, Debug, Default)]
pub(super) struct WireNames {
    to_wire: HashMap<String, String>,
    to_tool: HashMap<String, String>,
}

impl WireNames {
    /// The wire names of `names` (the tools of one declaration, in order, distinct).
    pub(super) fn new<'a>(names: impl Iterator<Item = &'a str> + Clone) -> WireNames {
        let mut out = WireNames::default();
        // The common case: every name is one the wires take, and nothing is stored.
        if names.clone().all(is_wire_name) {
            return out;
        }
        let taken: HashSet<&str> = names.clone().filter(|name| is_wire_name(name)).collect();
        let mut made: HashSet<String> = HashSet::new();
        for name in names.filter(|name| !is_wire_name(name)) {
            if out.to_wire.contains_key(name) {
                continue;
            }
            let wire = free_name(name, |candidate| {
                taken.contains(candidate) || made.contains(candidate)
            });
            made.insert(wire.clone());
            out.to_tool.insert(wire.clone(), name.to_owned());
            out.to_wire.insert(name.to_owned(), wire);
        }
        out
    }

    /// The name `tool` is declared under.
    pub(super) fn wire<'a>(&'a self, tool: &'a str) -> &'a str {
        self.to_wire.get(tool).map_or(tool, String::as_str)
    }

    /// The tool a wire name stands for (the name itself unless it was made for a tool).
    pub(super) fn tool<'a>(&'a self, wire: &'a str) -> &'a str {
        self.to_tool.get(wire).map_or(wire, String::as_str)
    }
}

/// A wire name for `name` (not one the wires take) that is not `taken`.
fn free_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let base: String = name
        .chars()
        .take(MAX_LEN)
        .map(|c| {
            if c.is_ascii() && is_wire_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !taken(&base) {
        return base;
    }
    // Each taken name rules out at most one suffix: one of the first `names + 1` is free.
    let mut n = 2usize;
    loop {
        let suffix = format!("_{n}");
        let keep = MAX_LEN.saturating_sub(suffix.len()).min(base.len());
        // `base` is ASCII: any cut is on a character boundary.
        let candidate = format!("{}{suffix}", &base[..keep]);
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_wires_rule_is_the_providers() {
        for ok in ["a", "read_file", "fs__read-file", "A9", &"x".repeat(64)] {
            assert!(is_wire_name(ok), "{ok}");
        }
        for bad in [
            "",
            "math.factorial",
            "a b",
            "files/read",
            "é",
            &"x".repeat(65),
        ] {
            assert!(!is_wire_name(bad), "{bad}");
        }
    }

    #[test]
    fn names_the_wires_refuse_are_mapped_both_ways_and_never_collide() {
        let long = format!("{}.x", "a".repeat(70));
        let names = [
            "read",
            "math.factorial",
            "math_factorial_2",
            "math/factorial",
            "math_factorial",
            "路径",
            long.as_str(),
        ];
        let wire = WireNames::new(names.iter().copied());
        assert_eq!(wire.wire("read"), "read");
        assert_eq!(wire.wire("math_factorial"), "math_factorial");
        // `math_factorial` and `math_factorial_2` are real tools: the next free suffix.
        assert_eq!(wire.wire("math.factorial"), "math_factorial_3");
        assert_eq!(wire.wire("math/factorial"), "math_factorial_4");
        assert_eq!(wire.wire("路径"), "__");
        assert_eq!(wire.wire(&long), "a".repeat(64));
        for name in names {
            assert!(is_wire_name(wire.wire(name)), "{name}");
            assert_eq!(wire.tool(wire.wire(name)), name);
        }
        // A name nobody declared maps to itself.
        assert_eq!(wire.tool("nope"), "nope");
    }

    proptest! {
        /// Whatever the names, every wire name is one the providers take, no two tools
        /// share one, and each maps back to its tool.
        #[test]
        fn wire_names_are_valid_distinct_and_reversible(
            names in prop::collection::btree_set("[a-c._/é-]{1,70}", 1..12),
        ) {
            let wire = WireNames::new(names.iter().map(String::as_str));
            let mut seen = HashSet::new();
            for name in &names {
                let w = wire.wire(name);
                prop_assert!(is_wire_name(w), "{w}");
                prop_assert!(seen.insert(w.to_owned()), "{w} twice");
                prop_assert_eq!(wire.tool(w), name.as_str());
            }
        }
    }
}
