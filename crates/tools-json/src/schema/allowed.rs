//! A scalar node's `enum`, and the in-place comparison of short texts that membership
//! and the walks' matching of keys to declared properties share.
//!
//! A string enum (the common kind: a mode, a sort order, an operator) keeps its members as
//! `SmolStr`s, held inline up to 23 bytes, so compiling it allocates once for the list and
//! never per member, as a `serde_json::Value` string did; any other enum keeps its members
//! as values.

use serde_json::Value;
use smol_str::SmolStr;

use super::json_scalar_eq;

/// The members of a scalar node's `enum`.
#[derive(Debug)]
pub(crate) enum Allowed {
    /// Every member is a string.
    Strings(Box<[SmolStr]>),
    /// Any other enum, its members as `copy` gave them ([`Allowed::new`]).
    Values(Box<[Value]>),
}

impl Allowed {
    /// The enum of `members`: texts when every member is a string, otherwise the members
    /// as `copy` makes them (a compiler's canonical copy).
    pub(crate) fn new(members: &[Value], copy: impl Fn(&Value) -> Value) -> Allowed {
        if members.iter().all(Value::is_string) {
            Allowed::Strings(
                members
                    .iter()
                    .filter_map(Value::as_str)
                    .map(SmolStr::new)
                    .collect(),
            )
        } else {
            Allowed::Values(members.iter().map(copy).collect())
        }
    }

    /// Whether `value` is a member: strings compared as strings, anything else by
    /// [`json_scalar_eq`] (numbers by value).
    #[inline]
    pub(crate) fn contains(&self, value: &Value) -> bool {
        match (self, value) {
            (Allowed::Strings(members), Value::String(text)) => {
                members.iter().any(|member| same_text(member, text))
            }
            (Allowed::Strings(_), _) => false,
            (Allowed::Values(members), _) => {
                members.iter().any(|member| json_scalar_eq(member, value))
            }
        }
    }

    /// The members as JSON values, in order (for a violation that lists them).
    pub(crate) fn to_values(&self) -> Vec<Value> {
        match self {
            Allowed::Strings(members) => members
                .iter()
                .map(|member| Value::String(member.to_string()))
                .collect(),
            Allowed::Values(members) => members.to_vec(),
        }
    }
}

/// `a == b` for the short texts of keys and enum members, compared in place: `str`'s own
/// equality calls `memcmp`, whose call and size dispatch cost more than the comparison of
/// a key of a few bytes (they were a tenth of e1's instructions). Texts of 16 bytes or
/// fewer are compared as two overlapping words (byte by byte under 4); longer ones by `==`.
#[inline(always)]
pub(super) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        return word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8);
    }
    if n >= 4 {
        return word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4);
    }
    // 0 to 3 bytes: the first, middle and last byte cover them all.
    [0, n / 2, n.saturating_sub(1)]
        .iter()
        .all(|&i| a.get(i) == b.get(i))
}

/// The `N` bytes of `bytes` at `at` as one little-endian word (zero past the end, which
/// the callers' lengths rule out).
#[inline(always)]
fn word<const N: usize>(bytes: &[u8], at: usize) -> u64 {
    let mut buf = [0u8; 8];
    if let (Some(from), Some(to)) = (bytes.get(at..at + N), buf.get_mut(..N)) {
        to.copy_from_slice(from);
    }
    u64::from_le_bytes(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// `same_text` is `==`, on texts that differ anywhere (short alphabets make equal
        /// and nearly equal texts common) and at every length around the word sizes.
        #[test]
        fn same_text_is_str_eq(a in "[ab\u{e9}]{0,20}", b in "[ab\u{e9}]{0,20}") {
            prop_assert_eq!(same_text(&a, &b), a == b);
            prop_assert!(same_text(&a, &a));
        }
    }

    #[test]
    fn every_length_and_every_differing_byte() {
        for n in 0..=24 {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(same_text(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap_or_default();
                assert!(!same_text(&a, &b), "{n} {at}");
            }
        }
    }

    /// A string enum is held as texts, any other as values, and both answer membership
    /// and render the same members.
    #[test]
    fn string_enums_are_texts_and_answer_as_values_do() {
        let strings = [
            json!("fast"),
            json!("slow"),
            json!("a-rather-long-member-name"),
        ];
        let allowed = Allowed::new(&strings, Value::clone);
        assert!(matches!(allowed, Allowed::Strings(_)));
        assert_eq!(allowed.to_values(), strings.to_vec());
        for member in &strings {
            assert!(allowed.contains(member));
        }
        for other in [
            json!("fas"),
            json!("slowly"),
            json!(1),
            json!(null),
            json!(true),
        ] {
            assert!(!allowed.contains(&other), "{other}");
        }

        let mixed = [json!(1), json!(2.5), json!("x"), json!(null)];
        let allowed = Allowed::new(&mixed, Value::clone);
        assert!(matches!(allowed, Allowed::Values(_)));
        assert_eq!(allowed.to_values(), mixed.to_vec());
        assert!(allowed.contains(&json!(1.0)), "numbers compare by value");
        assert!(allowed.contains(&json!("x")));
        assert!(!allowed.contains(&json!("y")));
        assert!(!allowed.contains(&json!(false)));

        let empty = Allowed::new(&[], Value::clone);
        assert!(!empty.contains(&json!("")));
        assert!(empty.to_values().is_empty());
    }

    proptest! {
        /// Membership is `json_scalar_eq` against some member, whichever form holds them.
        #[test]
        fn membership_is_scalar_equality_with_a_member(
            members in prop::collection::vec(prop_oneof![
                "[ab]{0,3}".prop_map(Value::from),
                (0i64..3).prop_map(Value::from),
            ], 0..5),
            probe in prop_oneof![
                "[ab]{0,3}".prop_map(Value::from),
                (0i64..3).prop_map(Value::from),
                Just(Value::Null),
            ],
        ) {
            let allowed = Allowed::new(&members, Value::clone);
            let expected = members.iter().any(|m| json_scalar_eq(m, &probe));
            prop_assert_eq!(allowed.contains(&probe), expected);
            prop_assert_eq!(allowed.to_values(), members);
        }
    }
}
