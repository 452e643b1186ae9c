//! Python names: identifier rules, `CamelCase` class-name segments, capped joins, and the
//! collision-free class-name allocator.

use std::collections::{HashMap, HashSet};

use unicode_normalization::UnicodeNormalization;

/// Python's hard keywords (soft keywords such as `match`, `case`, `type`, `_` are fine).
const HARD_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The longest generated class-name stem, in UTF-16 code units (collision suffixes may add
/// a few digits on top).
pub(crate) const CLASS_NAME_CAP: usize = 120;

/// Characters that newer Unicode tables count as identifier characters but CPython 3.11
/// and 3.12 (Unicode 14 and 15.0) reject: ZWNJ, ZWJ and the two middle dots that became
/// `ID_Continue` in Unicode 15.1. Treated as non-identifier characters so that generated
/// names parse on every Python the SDK targets.
const NOT_PORTABLE: [char; 4] = ['\u{200C}', '\u{200D}', '\u{30FB}', '\u{FF65}'];

/// Letters of the Latin Extended-D tail assigned after Unicode 14, some of them upper-case
/// forms of lower-case letters that older Python versions already know (`ɤ` → U+A7CB,
/// `ƛ` → U+A7DC). The case mapping is not applied when it would produce one of them, since
/// CPython 3.11 cannot parse the result.
fn is_recent_capital(c: char) -> bool {
    matches!(c, '\u{A7CB}'..='\u{A7DC}')
        && !matches!(
            c,
            '\u{A7D0}' | '\u{A7D1}' | '\u{A7D3}' | '\u{A7D5}'..='\u{A7D9}'
        )
}

fn is_start(c: char) -> bool {
    unicode_ident::is_xid_start(c) && !NOT_PORTABLE.contains(&c)
}

fn is_continue(c: char) -> bool {
    unicode_ident::is_xid_continue(c) && !NOT_PORTABLE.contains(&c)
}

/// Python identifier grammar (`XID_Start` or `_`, then `XID_Continue`*), NFKC-stable.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || is_start(first)) && chars.all(is_continue) && name.nfkc().eq(name.chars())
}

fn is_reserved(name: &str) -> bool {
    HARD_KEYWORDS.contains(&name) || name == "__debug__"
}

/// Whether `name` can be a field of a class-syntax `TypedDict`: an NFKC-stable identifier,
/// not a hard keyword or `__debug__`, and not name-mangled (`__x` without a trailing `__`).
pub(crate) fn is_field_name(name: &str) -> bool {
    let mangled = name.starts_with("__") && !name.ends_with("__");
    is_identifier(name) && !is_reserved(name) && !mangled
}

/// Whether a tool can be declared as a method of the `Tools` protocol (and so called as
/// `tools.name(...)`): an NFKC-stable identifier, not reserved, not starting with `_`.
pub(crate) fn is_method_name(name: &str) -> bool {
    is_identifier(name) && !is_reserved(name) && !name.starts_with('_')
}

/// The segment a raw name contributes to a class name: split on runs of
/// non-identifier characters and of `_`, capitalise each part's first letter, join,
/// NFKC, and prefix `Tool` when the result cannot start an identifier.
pub(crate) fn camel_case(raw: &str) -> String {
    let mut joined = String::with_capacity(raw.len());
    let mut at_part_start = true;
    for c in raw.chars() {
        if c == '_' || !is_continue(c) {
            at_part_start = true;
            continue;
        }
        if at_part_start {
            push_capitalised(&mut joined, c);
            at_part_start = false;
        } else {
            joined.push(c);
        }
    }
    let normalised: String = joined.nfkc().collect();
    if normalised.chars().next().is_some_and(is_start) {
        normalised
    } else {
        format!("Tool{normalised}").nfkc().collect()
    }
}

/// JavaScript's `charAt(0).toUpperCase()`: full case mapping for a BMP character; an
/// astral character is left as it is (JavaScript would only see its high surrogate).
fn push_capitalised(out: &mut String, c: char) {
    if c.len_utf16() > 1 {
        out.push(c);
        return;
    }
    let start = out.len();
    out.extend(c.to_uppercase());
    if out[start..].chars().any(is_recent_capital) {
        out.truncate(start);
        out.push(c);
    }
}

/// `parent + segment`, NFKC-normalised, capped at [`CLASS_NAME_CAP`] UTF-16 code units
/// without splitting a character.
pub(crate) fn join(parent: &str, segment: &str) -> String {
    let mut out = String::with_capacity(parent.len() + segment.len());
    let mut units = 0;
    for c in parent.chars().chain(segment.chars()).nfkc() {
        units += c.len_utf16();
        if units > CLASS_NAME_CAP {
            break;
        }
        out.push(c);
    }
    out
}

/// Hands out class names: the first request for a stem gets the stem, later ones get
/// `stem2`, `stem3`, … skipping names already taken by any allocation.
#[derive(Debug, Default)]
pub(crate) struct Allocator {
    taken: HashSet<String>,
    next_suffix: HashMap<String, u64>,
}

impl Allocator {
    pub(crate) fn allocate(&mut self, stem: &str) -> String {
        if self.taken.insert(stem.to_owned()) {
            return stem.to_owned();
        }
        let mut n = self.next_suffix.get(stem).copied().unwrap_or(2);
        loop {
            let candidate = format!("{stem}{n}");
            n += 1;
            if self.taken.insert(candidate.clone()) {
                self.next_suffix.insert(stem.to_owned(), n);
                return candidate;
            }
        }
    }

    /// Whether a class of this exact name was handed out.
    pub(crate) fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_follows_the_spec_examples() {
        assert_eq!(camel_case("todo_write"), "TodoWrite");
        assert_eq!(camel_case("my-mcp.tool"), "MyMcpTool");
        assert_eq!(camel_case("1st-tool"), "Tool1stTool");
        assert_eq!(camel_case("class"), "Class");
        assert_eq!(camel_case("搜索"), "搜索");
        assert_eq!(camel_case("\u{FB01}nd"), "FInd");
        assert_eq!(camel_case("stra\u{DF}e"), "Stra\u{DF}e");
        assert_eq!(camel_case("\u{DF}x"), "SSx");
        assert_eq!(camel_case("\u{301}abc"), "Too\u{13A}abc");
        assert_eq!(camel_case(""), "Tool");
        assert_eq!(camel_case("__"), "Tool");
    }

    #[test]
    fn astral_first_letters_are_not_capitalised() {
        // U+10428 DESERET SMALL LETTER LONG I has an upper-case form, U+10400.
        assert_eq!(camel_case("\u{10428}x"), "\u{10428}x");
    }

    #[test]
    fn non_portable_characters_split_and_recent_capitals_are_avoided() {
        assert_eq!(camel_case("a\u{200C}b"), "AB");
        assert_eq!(camel_case("\u{200C}b"), "B");
        assert_eq!(camel_case("\u{19B}x"), "\u{19B}x");
        assert!(!is_method_name("a\u{200C}b"));
    }

    #[test]
    fn identifier_rules() {
        for ok in [
            "match", "case", "type", "_", "_foo", "__meta__", "路径", "x1",
        ] {
            assert!(is_field_name(ok), "{ok}");
        }
        for bad in [
            "a-b",
            "\u{FB01}eld",
            "__token",
            "__debug__",
            "class",
            "1a",
            "",
            "None",
        ] {
            assert!(!is_field_name(bad), "{bad}");
        }
        assert!(is_method_name("bash"));
        assert!(!is_method_name("_foo"));
        assert!(!is_method_name("__meta__"));
        assert!(!is_method_name("\u{FB01}nd"));
    }

    #[test]
    fn joins_normalise_and_cap_without_splitting() {
        assert_eq!(join("XArgs\u{1100}", "\u{1161}"), "XArgs\u{AC00}");
        let long = "a".repeat(119);
        assert_eq!(join(&long, "\u{1F600}").encode_utf16().count(), 119);
        assert_eq!(join(&long, "bc").encode_utf16().count(), 120);
    }

    #[test]
    fn the_allocator_resumes_and_skips_taken_names() {
        let mut names = Allocator::default();
        assert_eq!(names.allocate("FooArgsPhase"), "FooArgsPhase");
        assert_eq!(names.allocate("FooArgsPhase2"), "FooArgsPhase2");
        assert_eq!(names.allocate("FooArgsPhase"), "FooArgsPhase3");
        assert_eq!(names.allocate("FooArgsPhase"), "FooArgsPhase4");
        assert!(names.is_taken("FooArgsPhase2"));
    }
}
