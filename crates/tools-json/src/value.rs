//! The lossless JSON boundary: [`JsonValue`] and the walkers behind it.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Number, Value};
use smallvec::SmallVec;

use crate::{Error, Path, Segment, Violation, ViolationKind, Violations};

/// The depth limit applied when no [`Limits`] are given.
pub const DEFAULT_MAX_DEPTH: usize = 512;

/// Limits enforced at the lossless boundary.
///
/// Depth counts nested containers: a scalar has depth 0, `[]` and `{}` depth 1, `[[1]]`
/// depth 2. A value whose depth exceeds `max_depth` is rejected.
///
/// # Examples
///
/// ```
/// use tools_json::{JsonValue, Limits};
/// use serde_json::json;
///
/// let limits = Limits::default().with_max_depth(2);
/// assert!(JsonValue::with_limits(json!([[1]]), &limits).is_ok());
/// let err = JsonValue::with_limits(json!([[[1]]]), &limits).unwrap_err();
/// assert_eq!(err.to_string(), "value is not lossless JSON: value[0][0]: nesting exceeds the depth limit of 2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_depth: usize,
}

impl Limits {
    /// Limits with a different maximum depth.
    #[must_use]
    pub const fn with_max_depth(mut self, max_depth: usize) -> Limits {
        self.max_depth = max_depth;
        self
    }

    /// The maximum container depth.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

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
        match canonicalize(&mut value, limits, root) {
            Ok(depth) => Ok(JsonValue::wrap(value, depth)),
            Err(violations) => {
                drop_deep(value);
                Err(Error::NotLossless { violations })
            }
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

/// Whether `number` is negative zero (`-0`, `-0.0` and `-0e0` all parse to it).
pub fn is_negative_zero(number: &Number) -> bool {
    number
        .as_f64()
        .is_some_and(|f| number.is_f64() && is_negative_zero_f64(f))
}

fn is_negative_zero_f64(f: f64) -> bool {
    f == 0.0 && f.is_sign_negative()
}

/// Whether `value` is lossless JSON: no negative zero anywhere. Depth is not limited here.
///
/// Iterative: any depth is safe.
pub fn is_lossless(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => return true,
        Value::Number(n) => return !is_negative_zero(n),
        Value::Array(items) if items.is_empty() => return true,
        Value::Object(map) if map.is_empty() => return true,
        Value::Array(_) | Value::Object(_) => {}
    }
    let mut stack: Vec<&Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) if is_negative_zero(n) => return false,
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    true
}

/// The integer that an integral float stands for, if it fits `i64` or `u64` exactly.
fn integral_float_to_integer(f: f64) -> Option<Number> {
    // 2^63 and 2^64 are exactly representable, so these comparisons are exact.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if !f.is_finite() || f.fract() != 0.0 || is_negative_zero_f64(f) {
        return None;
    }
    if (0.0..TWO_64).contains(&f) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = f as u64;
        Some(Number::from(n))
    } else if (-TWO_63..0.0).contains(&f) {
        #[allow(clippy::cast_possible_truncation)]
        let n = f as i64;
        Some(Number::from(n))
    } else {
        None
    }
}

/// One node of an iterative walk's path arena: its parent and the step that reached it.
#[derive(Clone, Copy)]
pub(crate) enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// Rebuilds a [`Path`] from an arena of `(parent, step)` entries.
pub(crate) fn materialize_path(arena: &[(u32, Step<'_>)], mut at: u32, root: &str) -> Path {
    let mut segments = Vec::new();
    while let Some(&(parent, step)) = arena.get(at as usize) {
        match step {
            Step::Root => break,
            Step::Key(key) => segments.push(Segment::Key(key.into())),
            Step::Index(index) => segments.push(Segment::Index(index)),
        }
        at = parent;
    }
    segments.reverse();
    Path::from_parts(root, segments)
}

fn arena_index(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// Canonicalises in place; returns the container depth or every violation.
fn canonicalize(value: &mut Value, limits: &Limits, root: &str) -> Result<usize, Violations> {
    // Scalars need no walk.
    if let Value::Number(n) = value
        && n.is_f64()
    {
        if is_negative_zero(n) {
            return Err(vec![Violation::new(
                Path::root(root),
                ViolationKind::NegativeZero,
            )]
            .into());
        }
        if let Some(integer) = n.as_f64().and_then(integral_float_to_integer) {
            *n = integer;
        }
        return Ok(0);
    }
    if item_is_plain_scalar(value) {
        return Ok(0);
    }
    let mut arena: SmallVec<[(u32, Step<'_>); 16]> = SmallVec::new();
    let mut violations = Vec::new();
    let mut max_depth = 0usize;
    // Stack entries: the value, its depth (containers above it, itself excluded), its path id.
    let mut stack: SmallVec<[(&mut Value, usize, u32); 16]> = SmallVec::new();
    arena.push((0, Step::Root));
    stack.push((value, 0, 0));
    while let Some((value, depth, at)) = stack.pop() {
        match value {
            Value::Number(n) => {
                if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                    if is_negative_zero_f64(f) {
                        violations.push(Violation::new(
                            materialize_path(&arena, at, root),
                            ViolationKind::NegativeZero,
                        ));
                    } else if let Some(integer) = integral_float_to_integer(f) {
                        *n = integer;
                    }
                }
            }
            Value::Array(items) => {
                let depth = depth + 1;
                if depth > limits.max_depth {
                    violations.push(Violation::new(
                        materialize_path(&arena, at, root),
                        ViolationKind::TooDeep {
                            limit: limits.max_depth,
                        },
                    ));
                    continue;
                }
                max_depth = max_depth.max(depth);
                for (index, item) in items.iter_mut().enumerate().rev() {
                    if item_is_plain_scalar(item) {
                        continue;
                    }
                    let id = arena_index(arena.len());
                    arena.push((at, Step::Index(index)));
                    stack.push((item, depth, id));
                }
            }
            Value::Object(map) => {
                let depth = depth + 1;
                if depth > limits.max_depth {
                    violations.push(Violation::new(
                        materialize_path(&arena, at, root),
                        ViolationKind::TooDeep {
                            limit: limits.max_depth,
                        },
                    ));
                    continue;
                }
                max_depth = max_depth.max(depth);
                let start = stack.len();
                for (key, item) in map.iter_mut() {
                    if item_is_plain_scalar(item) {
                        continue;
                    }
                    let id = arena_index(arena.len());
                    arena.push((at, Step::Key(key.as_str())));
                    stack.push((item, depth, id));
                }
                // Visit in key order: the stack pops last-pushed first.
                stack[start..].reverse();
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    if violations.is_empty() {
        Ok(max_depth)
    } else {
        Err(violations.into())
    }
}

/// Scalars other than floats need no visit.
fn item_is_plain_scalar(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => true,
        Value::Number(n) => !n.is_f64(),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// Rewrites every integral float of `value` (`1.0`, `1e2`) as an integer, in place, as the
/// boundary does; negative zero and other floats are left as they are. No depth limit and
/// no recursion.
///
/// Used for JSON that does not cross the boundary as a [`JsonValue`], such as schemas
/// (whose `enum`, `const`, `default` and `examples` the model should see in canonical
/// form).
pub fn canonicalize_numbers(value: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) => {
                if let Some(integer) = n
                    .as_f64()
                    .filter(|_| n.is_f64())
                    .and_then(integral_float_to_integer)
                {
                    *n = integer;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// Drops a value of any depth without deep recursion.
///
/// `serde_json`'s own drop recurses once per level, which overflows a small thread stack
/// on values a few thousand levels deep. [`JsonValue`] uses this for deep values.
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let map = std::mem::take(map);
                stack.extend(map.into_iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
}

/// Whether two values are equal (as `Value`'s `==`: objects compare as maps, regardless of
/// key order), without recursion.
pub fn eq_deep(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                stack.extend(a.iter().zip(b.iter()));
            }
            (Value::Object(a), Value::Object(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                for (key, a) in a {
                    match b.get(key) {
                        Some(b) => stack.push((a, b)),
                        None => return false,
                    }
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                return false;
            }
            (a, b) => {
                if a != b {
                    return false;
                }
            }
        }
    }
    true
}

/// Clones a value of any depth without deep recursion (`Value::clone` recurses per level).
pub fn clone_deep(root: &Value) -> Value {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, Vec<Value>),
        Object(
            serde_json::map::Iter<'a>,
            serde_json::Map<String, Value>,
            Option<&'a String>,
        ),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut pending: Option<&Value> = Some(root);
    let mut finished: Option<Value> = None;
    loop {
        if let Some(value) = pending.take() {
            match value {
                Value::Array(items) => {
                    stack.push(Frame::Array(items.iter(), Vec::with_capacity(items.len())));
                }
                Value::Object(map) => {
                    stack.push(Frame::Object(map.iter(), serde_json::Map::new(), None));
                }
                scalar => finished = Some(scalar.clone()),
            }
        }
        if let Some(value) = finished.take() {
            match stack.last_mut() {
                None => return value,
                Some(Frame::Array(_, out)) => out.push(value),
                Some(Frame::Object(_, out, key)) => {
                    out.insert(key.take().cloned().unwrap_or_default(), value);
                }
            }
        }
        match stack.last_mut() {
            None => return Value::Null,
            Some(Frame::Array(iter, _)) => {
                if let Some(child) = iter.next() {
                    pending = Some(child);
                    continue;
                }
            }
            Some(Frame::Object(iter, _, key)) => {
                if let Some((name, child)) = iter.next() {
                    *key = Some(name);
                    pending = Some(child);
                    continue;
                }
            }
        }
        finished = match stack.pop() {
            Some(Frame::Array(_, out)) => Some(Value::Array(out)),
            Some(Frame::Object(_, out, _)) => Some(Value::Object(out)),
            None => None,
        };
    }
}

/// Compact JSON text of a value of any depth, without deep recursion; the same text as
/// `serde_json::to_string` (whose writer recurses per level).
pub fn to_compact_string(value: &Value) -> String {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    fn scalar(out: &mut String, value: &Value) {
        out.push_str(&serde_json::to_string(value).unwrap_or_default());
    }
    let mut out = String::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    fn open<'a>(out: &mut String, stack: &mut Vec<Frame<'a>>, value: &'a Value) {
        match value {
            Value::Array(items) => {
                out.push('[');
                stack.push(Frame::Array(items.iter(), true));
            }
            Value::Object(map) => {
                out.push('{');
                stack.push(Frame::Object(map.iter(), true));
            }
            other => scalar(out, other),
        }
    }
    open(&mut out, &mut stack, value);
    while let Some(frame) = stack.last_mut() {
        let next = match frame {
            Frame::Array(items, first) => items.next().inspect(|_| {
                if !std::mem::take(first) {
                    out.push(',');
                }
            }),
            Frame::Object(members, first) => members.next().map(|(key, item)| {
                if !std::mem::take(first) {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                item
            }),
        };
        match next {
            Some(item) => open(&mut out, &mut stack, item),
            None => {
                out.push(match stack.pop() {
                    Some(Frame::Array(..)) => ']',
                    _ => '}',
                });
            }
        }
    }
    out
}

/// Pretty JSON text with two-space indentation, where containers at depth 5 and deeper
/// (whose lines would be indented by more than ten characters) print compactly. Any depth,
/// no recursion, output linear in the value's size. `{}` and `[]` stay on one line.
///
/// # Examples
///
/// ```
/// use serde_json::json;
///
/// let text = tools_json::to_pretty_capped(&json!({"a": [1, {"b": null}], "c": {}}));
/// assert_eq!(text, "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}");
/// ```
pub fn to_pretty_capped(value: &Value) -> String {
    /// Containers at this depth and deeper print compactly.
    const COMPACT_DEPTH: usize = 5;
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    fn indent(out: &mut String, depth: usize) {
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    fn open<'a>(out: &mut String, stack: &mut Vec<Frame<'a>>, value: &'a Value, depth: usize) {
        match value {
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(_) | Value::Object(_) if depth >= COMPACT_DEPTH => {
                out.push_str(&to_compact_string(value));
            }
            Value::Array(items) => {
                out.push('[');
                stack.push(Frame::Array(items.iter(), true));
            }
            Value::Object(map) => {
                out.push('{');
                stack.push(Frame::Object(map.iter(), true));
            }
            scalar => out.push_str(&serde_json::to_string(scalar).unwrap_or_default()),
        }
    }
    let mut out = String::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    open(&mut out, &mut stack, value, 0);
    loop {
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else {
            break;
        };
        let next = match frame {
            Frame::Array(items, first) => {
                items.next().map(|item| (None, item, std::mem::take(first)))
            }
            Frame::Object(members, first) => members
                .next()
                .map(|(key, item)| (Some(key), item, std::mem::take(first))),
        };
        match next {
            Some((key, item, first)) => {
                if !first {
                    out.push(',');
                }
                out.push('\n');
                indent(&mut out, depth);
                if let Some(key) = key {
                    out.push_str(&serde_json::to_string(key).unwrap_or_default());
                    out.push_str(": ");
                }
                open(&mut out, &mut stack, item, depth);
            }
            None => {
                let close = match stack.pop() {
                    Some(Frame::Array(..)) => ']',
                    _ => '}',
                };
                out.push('\n');
                indent(&mut out, depth - 1);
                out.push(close);
            }
        }
    }
    out
}

/// Whether the container nesting of JSON text stays within `limit`, without parsing it.
/// Brackets inside strings do not count; malformed text is left to the parser.
fn text_depth_within(text: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// Parses JSON text under the depth limit.
pub(crate) fn parse_value(text: &str, limits: &Limits) -> Result<Value, Error> {
    if !text_depth_within(text, limits.max_depth) {
        return Err(Error::NotLossless {
            violations: vec![Violation::new(
                Path::root("value"),
                ViolationKind::TooDeep {
                    limit: limits.max_depth,
                },
            )]
            .into(),
        });
    }
    crate::parse::parse_text(text).map_err(Error::Parse)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
