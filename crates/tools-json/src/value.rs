//! The lossless JSON boundary: [`JsonValue`].

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Number, Value};

use crate::deep::{clone_deep, drop_deep, eq_deep};
use crate::limits::Limits;
use crate::lossless::{canonicalize, is_negative_zero_f64};
use crate::text::{parse_value, to_compact_string};
use crate::{Error, Path, Violation, ViolationKind};

/// An immutable, cheaply shareable, canonical JSON value.
///
/// A `JsonValue` can only be made through the lossless boundary, so holding one proves:
/// - no number is negative zero;
/// - every integral float (`1.0`, `1e2`) is stored as an integer (`1`, `100`), so the value
///   serializes the way JavaScript would and deserializes into Rust integer types;
/// - containers nest no deeper than the [`Limits`] in force;
/// - object keys keep their insertion order.
///
/// Integers keep their exact value, also beyond 2^53 (JavaScript would round them).
/// Cloning is an `Arc` clone. Dropping a deep value never recurses deeply.
///
/// # Examples
///
/// ```
/// use tools_json::JsonValue;
/// use serde_json::json;
///
/// let value = JsonValue::new(json!({"n": 1.0, "big": 9007199254740993u64})).unwrap();
/// assert_eq!(value.to_string(), r#"{"n":1,"big":9007199254740993}"#);
///
/// let err = JsonValue::new(json!({"x": [1, -0.0]})).unwrap_err();
/// assert_eq!(err.to_string(), "value is not lossless JSON: value.x[1]: negative zero cannot be carried losslessly by JSON");
/// ```
#[derive(Clone)]
pub struct JsonValue(Arc<Inner>);

struct Inner {
    value: Value,
    depth: usize,
    /// The id of the last compiled schema this value passed (0: none); see
    /// [`crate::CompiledSchema::validate_snapshot`].
    validated_by: AtomicU64,
}

/// Values at most this deep are dropped, cloned, compared and written by `serde_json`'s own
/// (recursive) code; deeper ones by the iterative walkers of this module.
const RECURSIVE_DROP_DEPTH: usize = 64;

impl Drop for Inner {
    fn drop(&mut self) {
        if self.depth > RECURSIVE_DROP_DEPTH {
            drop_deep(self.value.take());
        }
    }
}

impl JsonValue {
    /// Takes `value` across the boundary with the default [`Limits`].
    ///
    /// # Errors
    ///
    /// [`Error::NotLossless`] listing every negative zero and every place where the depth
    /// limit is exceeded.
    pub fn new(value: Value) -> Result<JsonValue, Error> {
        JsonValue::with_limits(value, &Limits::default())
    }

    /// Takes `value` across the boundary with explicit limits.
    ///
    /// # Errors
    ///
    /// [`Error::NotLossless`] listing every violation, with paths rooted at `value`.
    pub fn with_limits(value: Value, limits: &Limits) -> Result<JsonValue, Error> {
        JsonValue::with_limits_at(value, limits, "value")
    }

    /// As [`JsonValue::with_limits`], with violation paths rooted at `root`.
    ///
    /// # Errors
    ///
    /// [`Error::NotLossless`] listing every violation.
    pub fn with_limits_at(
        mut value: Value,
        limits: &Limits,
        root: &str,
    ) -> Result<JsonValue, Error> {
        // Not through `try_with_limits_at`: its larger error, built and taken apart on
        // every call, cost the hot path (every argument and result snapshot) instructions.
        match canonicalize(&mut value, limits, root) {
            Ok(depth) => Ok(JsonValue::wrap(value, depth)),
            Err(violations) => {
                drop_deep(value);
                Err(Error::NotLossless { violations })
            }
        }
    }

    /// As [`JsonValue::with_limits_at`], handing a refused value back beside the error, for
    /// a caller that still quotes or logs what it was given without having copied it first.
    ///
    /// The value handed back may have some integral floats already rewritten as integers
    /// (`1.0` as `1`: the same JSON number), and may be deeper than the limit: drop it with
    /// [`drop_deep`](crate::drop_deep) and write it with
    /// [`to_compact_string`](crate::to_compact_string), which do not recurse per level.
    ///
    /// # Errors
    ///
    /// [`Error::NotLossless`] listing every violation, and the value.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_json::{JsonValue, Limits};
    ///
    /// let (error, value) =
    ///     JsonValue::try_with_limits_at(json!({"x": -0.0}), &Limits::default(), "input")
    ///         .unwrap_err();
    /// assert!(error.to_string().contains("input.x"));
    /// assert_eq!(tools_json::to_compact_string(&value), r#"{"x":-0.0}"#);
    /// ```
    pub fn try_with_limits_at(
        mut value: Value,
        limits: &Limits,
        root: &str,
    ) -> Result<JsonValue, (Error, Value)> {
        match canonicalize(&mut value, limits, root) {
            Ok(depth) => Ok(JsonValue::wrap(value, depth)),
            Err(violations) => Err((Error::NotLossless { violations }, value)),
        }
    }

    /// Parses JSON text and takes it across the boundary with the default [`Limits`].
    ///
    /// Unlike `serde_json::from_str`, depth is governed by the limit, not by a fixed
    /// recursion cap of 128: text nested deeper than the limit is refused before parsing.
    /// Parsing never recurses (an explicit stack of open containers), so any limit is safe
    /// on a small thread stack; otherwise it accepts, refuses and reports errors exactly as
    /// `serde_json::from_str::<Value>` does.
    ///
    /// # Errors
    ///
    /// [`Error::Parse`] for text that is not JSON; [`Error::NotLossless`] as for
    /// [`JsonValue::new`].
    pub fn parse(text: &str) -> Result<JsonValue, Error> {
        JsonValue::parse_with_limits(text, &Limits::default())
    }

    /// Parses JSON text with explicit limits.
    ///
    /// # Errors
    ///
    /// As for [`JsonValue::parse`].
    pub fn parse_with_limits(text: &str, limits: &Limits) -> Result<JsonValue, Error> {
        let value = parse_value(text, limits)?;
        JsonValue::with_limits(value, limits)
    }

    /// A number made from an `f64`; integral values become integers.
    ///
    /// # Errors
    ///
    /// [`Error::NotLossless`] for NaN, infinities and negative zero.
    pub fn from_f64(number: f64) -> Result<JsonValue, Error> {
        let kind = if !number.is_finite() {
            ViolationKind::NonFiniteNumber
        } else if is_negative_zero_f64(number) {
            ViolationKind::NegativeZero
        } else {
            let value = Number::from_f64(number).map_or(Value::Null, Value::Number);
            return JsonValue::new(value);
        };
        Err(Error::NotLossless {
            violations: vec![Violation::new(Path::root("value"), kind)].into(),
        })
    }

    /// The JSON `null` value.
    pub fn null() -> JsonValue {
        JsonValue::wrap(Value::Null, 0)
    }

    /// The value.
    pub fn as_value(&self) -> &Value {
        &self.0.value
    }

    /// The container depth of the value.
    pub fn depth(&self) -> usize {
        self.0.depth
    }

    /// The value, cloned only when it is shared (without recursion when it is deep).
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(mut inner) => inner.value.take(),
            Err(shared) if shared.depth > RECURSIVE_DROP_DEPTH => clone_deep(&shared.value),
            Err(shared) => shared.value.clone(),
        }
    }

    /// Whether the value is deep enough that the iterative walkers handle it.
    fn is_deep(&self) -> bool {
        self.0.depth > RECURSIVE_DROP_DEPTH
    }

    /// Whether two handles share one allocation.
    pub fn ptr_eq(a: &JsonValue, b: &JsonValue) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// Canonicalizes a value the caller already proved lossless (a schema that passed the
    /// support check, whose constants and annotations are checked lossless), without a
    /// depth limit. Should the proof be wrong, the value is still canonicalized as far as
    /// possible and marked deep, so it is dropped iteratively.
    pub(crate) fn from_checked(mut value: Value, root: &str) -> JsonValue {
        let limits = Limits::default().with_max_depth(usize::MAX);
        let depth = canonicalize(&mut value, &limits, root).unwrap_or(usize::MAX);
        JsonValue::wrap(value, depth)
    }

    /// Wraps a canonical value of known depth.
    fn wrap(value: Value, depth: usize) -> JsonValue {
        JsonValue(Arc::new(Inner {
            value,
            depth,
            validated_by: AtomicU64::new(0),
        }))
    }

    /// The id of the last compiled schema this value passed (0: none).
    pub(crate) fn validated_by(&self) -> u64 {
        self.0.validated_by.load(Ordering::Acquire)
    }

    /// Remembers that this value passed the compiled schema `id`.
    pub(crate) fn mark_validated_by(&self, id: u64) {
        self.0.validated_by.store(id, Ordering::Release);
    }
}

impl Deref for JsonValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl AsRef<Value> for JsonValue {
    fn as_ref(&self) -> &Value {
        &self.0.value
    }
}

/// Equality of the values (objects compare as maps, regardless of key order); deep values
/// are compared without recursion.
impl PartialEq for JsonValue {
    fn eq(&self, other: &Self) -> bool {
        JsonValue::ptr_eq(self, other)
            || if self.is_deep() || other.is_deep() {
                eq_deep(&self.0.value, &other.0.value)
            } else {
                self.0.value == other.0.value
            }
    }
}

/// As `Value`'s equality; compared without recursion when `self` is deep (a shallow
/// `self` ends the comparison within its own depth).
impl PartialEq<Value> for JsonValue {
    fn eq(&self, other: &Value) -> bool {
        if self.is_deep() {
            eq_deep(&self.0.value, other)
        } else {
            self.0.value == *other
        }
    }
}

impl Eq for JsonValue {}

impl fmt::Debug for JsonValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonValue({self})")
    }
}

/// Compact JSON text (written without recursion for deep values).
impl fmt::Display for JsonValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_deep() {
            f.write_str(&to_compact_string(&self.0.value))
        } else {
            fmt::Display::fmt(&self.0.value, f)
        }
    }
}

impl TryFrom<Value> for JsonValue {
    type Error = Error;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        JsonValue::new(value)
    }
}

impl std::str::FromStr for JsonValue {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JsonValue::parse(s)
    }
}

/// Serializes the value through `serde`'s data model, which nests one call per container
/// level whatever the serializer: safe at the default depth limit, but for a value admitted
/// under a raised limit write text with [`fmt::Display`] (`to_string`) or
/// [`to_compact_string`], which never recurse.
impl serde::Serialize for JsonValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{canonicalize_numbers, to_pretty_capped};

    #[test]
    fn integral_floats_become_integers() {
        let v = JsonValue::new(json!([1.0, 1e2, -3.0, 2.5, 1e300])).unwrap();
        assert_eq!(v.to_string(), "[1,100,-3,2.5,1e+300]");
        assert!(v[0].is_u64());
        assert!(v[2].is_i64());
        assert!(v[4].is_f64(), "integral floats beyond u64 stay floats");
    }

    #[test]
    fn negative_zero_is_rejected_everywhere_with_every_path() {
        let err = JsonValue::new(json!({"a": -0.0, "b": [1, {"c": -0.0}]})).unwrap_err();
        let Error::NotLossless { violations } = err else {
            panic!("wrong error");
        };
        let paths: Vec<String> = violations.iter().map(|v| v.path.to_string()).collect();
        assert_eq!(paths, ["value.a", "value.b[1].c"]);
        assert!(
            violations
                .iter()
                .all(|v| v.kind == ViolationKind::NegativeZero)
        );
    }

    #[test]
    fn parsed_negative_zero_spellings_are_rejected() {
        for text in ["-0", "-0.0", "-0e0", "[-0]"] {
            assert!(JsonValue::parse(text).is_err(), "{text}");
        }
        assert_eq!(JsonValue::parse("0").unwrap().to_string(), "0");
    }

    #[test]
    fn big_integers_stay_exact() {
        let v = JsonValue::parse("9007199254740993").unwrap();
        assert_eq!(v.as_u64(), Some(9_007_199_254_740_993));
        assert!(JsonValue::parse("1e400").is_err());
    }

    #[test]
    fn from_f64_rejects_non_finite_and_negative_zero() {
        assert!(JsonValue::from_f64(f64::NAN).is_err());
        assert!(JsonValue::from_f64(f64::INFINITY).is_err());
        assert!(JsonValue::from_f64(-0.0).is_err());
        assert_eq!(JsonValue::from_f64(3.0).unwrap().as_u64(), Some(3));
    }

    #[test]
    fn depth_limit_counts_containers() {
        let limits = Limits::default().with_max_depth(1);
        assert_eq!(
            JsonValue::with_limits(json!(1), &limits).unwrap().depth(),
            0
        );
        assert_eq!(
            JsonValue::with_limits(json!([1]), &limits).unwrap().depth(),
            1
        );
        assert!(JsonValue::with_limits(json!([[1]]), &limits).is_err());
        assert!(JsonValue::parse_with_limits("[[1]]", &limits).is_err());
        assert!(JsonValue::parse_with_limits(r#"["[[[" ]"#, &limits).is_ok());
        assert!(JsonValue::parse_with_limits(r#"["\"[[[" ]"#, &limits).is_ok());
    }

    #[test]
    fn canonicalize_numbers_rewrites_integral_floats_only() {
        let mut v = json!({"a": [1.0, 2.5, -0.0, {"b": 1e2}], "c": "1.0"});
        canonicalize_numbers(&mut v);
        assert_eq!(v.to_string(), r#"{"a":[1,2.5,-0.0,{"b":100}],"c":"1.0"}"#);
    }

    #[test]
    fn the_iterative_writer_matches_serde_json() {
        for v in [
            json!(null),
            json!([]),
            json!({}),
            json!({"a": [1, 2.5, "x\"y", {"b": null, "c": [true, false]}], "d": {}}),
            json!(["\u{1F600}", -3, 1e300]),
        ] {
            assert_eq!(to_compact_string(&v), serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn pretty_capped_matches_serde_json_when_shallow_and_compacts_deep_containers() {
        let shallow = json!({"a": [1, 2.5, "x"], "b": {"c": [true, null], "d": {}}, "e": []});
        assert_eq!(
            to_pretty_capped(&shallow),
            serde_json::to_string_pretty(&shallow).unwrap()
        );
        let deep = json!([[[[[[1, 2]]]]]]);
        assert_eq!(
            to_pretty_capped(&deep),
            "[\n  [\n    [\n      [\n        [\n          [1,2]\n        ]\n      ]\n    ]\n  ]\n]"
        );
        assert_eq!(to_pretty_capped(&json!("s")), "\"s\"");
    }

    #[test]
    fn key_order_is_insertion_order() {
        let v = JsonValue::parse(r#"{"b":1,"10":2,"2":3,"a":4}"#).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "10", "2", "a"]);
    }

    #[test]
    fn parse_errors_are_errors() {
        assert!(matches!(JsonValue::parse("{"), Err(Error::Parse(_))));
        assert!(matches!(JsonValue::parse("1 2"), Err(Error::Parse(_))));
    }
}
