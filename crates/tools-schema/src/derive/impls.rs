//! [`ToolSchema`] and the bound markers for the standard types.
//!
//! Integer types narrower than 64 bits carry their exact range as `minimum` / `maximum`, so
//! an argument the type cannot hold is an `INVALID_ARGS` violation naming the bound. The
//! 64-bit and wider types carry no implicit full-range bound (only `minimum: 0` for the
//! unsigned ones): `maximum: 18446744073709551615` tells a model nothing, and a provider's
//! strict mode may refuse the keyword. A value beyond their range is no integer
//! `serde_json` reads into the type (`2^64` is a float to it, `2^63` no `i64`), so it
//! still fails, at deserialization, and that is `INVALID_ARGS` too. Floats take any number
//! (an `f32` rounds what does not fit, as `serde` does).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use super::support::nullable;
use super::{ArrayBounds, Formatted, NumericBounds, ObjectBounds, StringBounds, ToolSchema};
use crate::Schema;

/// Integer types whose range fits `i64`.
macro_rules! small_integers {
    ($($ty:ty),*) => {$(
        impl ToolSchema for $ty {
            fn tool_schema() -> Schema {
                Schema::integer()
                    .minimum(i64::from(<$ty>::MIN))
                    .maximum(i64::from(<$ty>::MAX))
                    .into()
            }
        }
        impl NumericBounds for $ty {}
        impl Formatted for $ty {}
    )*};
}

small_integers!(i8, i16, i32, u8, u16, u32);

impl ToolSchema for i64 {
    fn tool_schema() -> Schema {
        Schema::integer().into()
    }
}

impl ToolSchema for u64 {
    fn tool_schema() -> Schema {
        Schema::integer().minimum(0).into()
    }
}

impl ToolSchema for usize {
    fn tool_schema() -> Schema {
        // The real bound only where `usize` is narrower than 64 bits.
        match u64::try_from(usize::MAX) {
            Ok(max) if max < u64::MAX => Schema::integer().minimum(0).maximum_u64(max).into(),
            _ => u64::tool_schema(),
        }
    }
}

impl ToolSchema for isize {
    fn tool_schema() -> Schema {
        // The real bounds only where `isize` is narrower than 64 bits.
        match (i64::try_from(isize::MIN), i64::try_from(isize::MAX)) {
            (Ok(min), Ok(max)) if min > i64::MIN => {
                Schema::integer().minimum(min).maximum(max).into()
            }
            _ => i64::tool_schema(),
        }
    }
}

impl ToolSchema for u128 {
    fn tool_schema() -> Schema {
        u64::tool_schema()
    }
}

impl ToolSchema for i128 {
    fn tool_schema() -> Schema {
        i64::tool_schema()
    }
}

impl ToolSchema for f32 {
    fn tool_schema() -> Schema {
        Schema::number().into()
    }
}

impl ToolSchema for f64 {
    fn tool_schema() -> Schema {
        Schema::number().into()
    }
}

/// Marker implementations for types whose schema is built above.
macro_rules! markers {
    ($trait:ident: $($ty:ty),*) => {$( impl $trait for $ty {} )*};
}

markers!(NumericBounds: i64, u64, usize, isize, u128, i128, f32, f64);
markers!(Formatted: i64, u64, usize, isize, u128, i128, f32, f64, String, str, char, PathBuf, Path);
markers!(StringBounds: String, str, char, PathBuf, Path);

impl ToolSchema for bool {
    fn tool_schema() -> Schema {
        Schema::boolean().into()
    }
}

impl ToolSchema for String {
    fn tool_schema() -> Schema {
        Schema::string().into()
    }
}

impl ToolSchema for str {
    fn tool_schema() -> Schema {
        Schema::string().into()
    }
}

/// Paths are strings to `serde` (a path that is not UTF-8 does not serialize).
impl ToolSchema for PathBuf {
    fn tool_schema() -> Schema {
        Schema::string().into()
    }
}

impl ToolSchema for Path {
    fn tool_schema() -> Schema {
        Schema::string().into()
    }
}

/// One Unicode scalar value: a string of exactly one code point.
impl ToolSchema for char {
    fn tool_schema() -> Schema {
        Schema::string().min_length(1).max_length(1).into()
    }
}

/// `null`, as `serde_json` writes `()`.
impl ToolSchema for () {
    fn tool_schema() -> Schema {
        Schema::null().into()
    }
}

/// Any lossless JSON.
impl ToolSchema for serde_json::Value {
    fn tool_schema() -> Schema {
        Schema::json().into()
    }
}

/// Any object with any lossless values (an open object without properties).
impl ToolSchema for serde_json::Map<String, serde_json::Value> {
    fn tool_schema() -> Schema {
        Schema::open_object().into()
    }
}

impl ObjectBounds for serde_json::Map<String, serde_json::Value> {}

/// `T` or `null`. When `T` already admits `null` (`Option<Option<U>>`, `Option<Value>`), the
/// schema is `T`'s: `serde` reads `null` as the outer `None`, and a `oneOf` with two
/// branches matching `null` would refuse it.
impl<T: ToolSchema> ToolSchema for Option<T> {
    fn tool_schema() -> Schema {
        nullable(T::tool_schema())
    }
}

/// Sequences: arrays of `T`.
macro_rules! sequences {
    ($($ty:ident),*) => {$(
        impl<T: ToolSchema> ToolSchema for $ty<T> {
            fn tool_schema() -> Schema {
                Schema::array(T::tool_schema()).into()
            }
        }
        impl<T: ToolSchema> ArrayBounds for $ty<T> {}
    )*};
}

sequences!(Vec, VecDeque);

impl<T: ToolSchema> ToolSchema for [T] {
    fn tool_schema() -> Schema {
        Schema::array(T::tool_schema()).into()
    }
}

impl<T: ToolSchema> ArrayBounds for [T] {}

/// Exactly `N` items.
impl<T: ToolSchema, const N: usize> ToolSchema for [T; N] {
    fn tool_schema() -> Schema {
        let n = u64::try_from(N).unwrap_or(u64::MAX);
        Schema::array(T::tool_schema())
            .min_items(n)
            .max_items(n)
            .into()
    }
}

impl<T: ToolSchema, const N: usize> ArrayBounds for [T; N] {}

/// Sets: arrays of pairwise distinct items (`serde` merges duplicates silently; the schema
/// refuses them, the conservative side).
macro_rules! sets {
    ($($ty:ident),*) => {$(
        impl<T: ToolSchema, S> ToolSchema for $ty<T, S> {
            fn tool_schema() -> Schema {
                Schema::array(T::tool_schema()).unique_items(true).into()
            }
        }
        impl<T: ToolSchema, S> ArrayBounds for $ty<T, S> {}
    )*};
}

sets!(HashSet);

impl<T: ToolSchema> ToolSchema for BTreeSet<T> {
    fn tool_schema() -> Schema {
        Schema::array(T::tool_schema()).unique_items(true).into()
    }
}

impl<T: ToolSchema> ArrayBounds for BTreeSet<T> {}

/// Pointers are transparent to `serde`, and so to their schema and bounds.
macro_rules! pointers {
    ($($ty:ident),*) => {$(
        impl<T: ToolSchema + ?Sized> ToolSchema for $ty<T> {
            fn tool_schema() -> Schema {
                T::tool_schema()
            }
        }
        impl<T: NumericBounds + ?Sized> NumericBounds for $ty<T> {}
        impl<T: StringBounds + ?Sized> StringBounds for $ty<T> {}
        impl<T: Formatted + ?Sized> Formatted for $ty<T> {}
        impl<T: ArrayBounds + ?Sized> ArrayBounds for $ty<T> {}
        impl<T: ObjectBounds + ?Sized> ObjectBounds for $ty<T> {}
    )*};
}

pointers!(Box, Arc, Rc);

impl<T: ToolSchema + ToOwned + ?Sized> ToolSchema for Cow<'_, T> {
    fn tool_schema() -> Schema {
        T::tool_schema()
    }
}

impl<T: NumericBounds + ToOwned + ?Sized> NumericBounds for Cow<'_, T> {}
impl<T: StringBounds + ToOwned + ?Sized> StringBounds for Cow<'_, T> {}
impl<T: Formatted + ToOwned + ?Sized> Formatted for Cow<'_, T> {}
impl<T: ArrayBounds + ToOwned + ?Sized> ArrayBounds for Cow<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled<T: ToolSchema + ?Sized>() -> String {
        T::tool_schema()
            .compile()
            .map(|c| c.as_json().to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    /// Narrow integer types carry their exact range; the 64-bit and wider ones no
    /// implicit full-range bound (the unsigned keep `minimum: 0`).
    #[test]
    fn integers_carry_their_exact_ranges() {
        assert_eq!(
            compiled::<u8>(),
            r#"{"type":"integer","minimum":0,"maximum":255}"#
        );
        assert_eq!(
            compiled::<i16>(),
            r#"{"type":"integer","minimum":-32768,"maximum":32767}"#
        );
        assert_eq!(
            compiled::<u32>(),
            r#"{"type":"integer","minimum":0,"maximum":4294967295}"#
        );
        assert_eq!(
            compiled::<i32>(),
            r#"{"type":"integer","minimum":-2147483648,"maximum":2147483647}"#
        );
        assert_eq!(compiled::<u64>(), r#"{"type":"integer","minimum":0}"#);
        assert_eq!(compiled::<i64>(), r#"{"type":"integer"}"#);
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(compiled::<usize>(), compiled::<u64>());
            assert_eq!(compiled::<isize>(), compiled::<i64>());
        }
        assert_eq!(compiled::<u128>(), compiled::<u64>());
        assert_eq!(compiled::<i128>(), compiled::<i64>());
        assert_eq!(compiled::<f32>(), r#"{"type":"number"}"#);
    }

    #[test]
    fn strings_chars_and_pointers() {
        assert_eq!(compiled::<String>(), r#"{"type":"string"}"#);
        assert_eq!(compiled::<Box<str>>(), r#"{"type":"string"}"#);
        assert_eq!(compiled::<Cow<'static, str>>(), r#"{"type":"string"}"#);
        assert_eq!(compiled::<Arc<u8>>(), compiled::<u8>());
        assert_eq!(compiled::<PathBuf>(), r#"{"type":"string"}"#);
        assert_eq!(
            compiled::<char>(),
            r#"{"type":"string","minLength":1,"maxLength":1}"#
        );
        assert_eq!(compiled::<()>(), r#"{"type":"null"}"#);
        assert_eq!(compiled::<serde_json::Value>(), "{}");
    }

    #[test]
    fn sequences_sets_and_fixed_arrays() {
        assert_eq!(
            compiled::<Vec<bool>>(),
            r#"{"type":"array","items":{"type":"boolean"}}"#
        );
        assert_eq!(compiled::<VecDeque<bool>>(), compiled::<Vec<bool>>());
        assert_eq!(compiled::<Box<[bool]>>(), compiled::<Vec<bool>>());
        assert_eq!(
            compiled::<[bool; 3]>(),
            r#"{"type":"array","minItems":3,"maxItems":3,"items":{"type":"boolean"}}"#
        );
        assert_eq!(
            compiled::<BTreeSet<String>>(),
            r#"{"type":"array","uniqueItems":true,"items":{"type":"string"}}"#
        );
        assert_eq!(
            compiled::<HashSet<String>>(),
            compiled::<BTreeSet<String>>()
        );
    }

    #[test]
    fn options_do_not_double_null() {
        assert_eq!(
            compiled::<Option<bool>>(),
            r#"{"oneOf":[{"type":"boolean"},{"type":"null"}]}"#
        );
        assert_eq!(
            compiled::<Option<Option<bool>>>(),
            compiled::<Option<bool>>()
        );
        assert_eq!(compiled::<Option<serde_json::Value>>(), "{}");
        assert_eq!(compiled::<Option<()>>(), r#"{"type":"null"}"#);
    }
}
