//! What lossless means, checked and enforced: negative zero, integral floats, the depth
//! limit, and the iterative walk that canonicalises a value in place with every violation's
//! path.

use serde_json::{Number, Value};
use smallvec::SmallVec;

use crate::limits::Limits;
use crate::path::Segments;
use crate::{Path, Segment, Violation, ViolationKind, Violations};

/// Whether `number` is negative zero (`-0`, `-0.0` and `-0e0` all parse to it).
pub fn is_negative_zero(number: &Number) -> bool {
    number
        .as_f64()
        .is_some_and(|f| number.is_f64() && is_negative_zero_f64(f))
}

pub(crate) fn is_negative_zero_f64(f: f64) -> bool {
    f == 0.0 && f.is_sign_negative()
}

/// Whether `value` is lossless JSON: no negative zero anywhere. Depth is not limited here.
///
/// Any depth is safe: a value nested deeper than 64 containers is walked
/// iteratively.
pub fn is_lossless(value: &Value) -> bool {
    match lossless_fast(value, 0) {
        Some(lossless) => lossless,
        None => lossless_walk(value),
    }
}

/// The deepest nesting (in containers) that the recursive fast passes of this module take;
/// a deeper value takes the iterative walk, so that no input can exhaust the stack. A level
/// costs a small frame, so 64 levels stay within a few kilobytes.
///
/// Why two passes: the iterative walks push every container (and, to canonicalise, keep
/// a path arena for violations), which on a typical argument object (`NESTED_ARGS`: about
/// 100 values, 27 containers) cost about twice the instructions of recursing. The fast
/// passes keep no path: they only ever accept, and hand anything they would have to report
/// (negative zero, too deep) to the iterative walk, which finds it again with its path.
const FAST_DEPTH: usize = 64;

/// [`is_lossless`] by recursion, `None` past [`FAST_DEPTH`] containers (`depth` is the
/// number of containers above `value`).
fn lossless_fast(value: &Value, depth: usize) -> Option<bool> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => Some(true),
        Value::Number(n) => Some(!is_negative_zero(n)),
        _ if depth >= FAST_DEPTH => None,
        Value::Array(items) => lossless_items(items.iter(), depth + 1),
        Value::Object(map) => lossless_items(map.values(), depth + 1),
    }
}

/// The members of a container at `depth`, for [`lossless_fast`].
#[inline(always)]
fn lossless_items<'a>(items: impl Iterator<Item = &'a Value>, depth: usize) -> Option<bool> {
    for item in items {
        let lossless = match item {
            Value::Null | Value::Bool(_) | Value::String(_) => true,
            Value::Number(n) => !is_negative_zero(n),
            Value::Array(_) | Value::Object(_) => lossless_fast(item, depth)?,
        };
        if !lossless {
            return Some(false);
        }
    }
    Some(true)
}

/// [`is_lossless`] iteratively, at any depth.
fn lossless_walk(value: &Value) -> bool {
    let mut stack: SmallVec<[&Value; 32]> = SmallVec::new();
    stack.push(value);
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

/// `number` in canonical form: an integral float (`1.0`) as the integer it stands for,
/// anything else as it is.
pub(crate) fn canonical_number(number: &Number) -> Number {
    number
        .as_f64()
        .filter(|_| number.is_f64())
        .and_then(integral_float_to_integer)
        .unwrap_or_else(|| number.clone())
}

/// Rewrites an integral float (`1.0`) in place as the integer it stands for, as the
/// boundary does; `false`, with `number` left as it is, for negative zero, which JSON
/// cannot carry.
#[inline(always)]
fn canonicalize_in_place(number: &mut Number) -> bool {
    let Some(f) = number.as_f64().filter(|_| number.is_f64()) else {
        return true;
    };
    if is_negative_zero_f64(f) {
        return false;
    }
    if let Some(integer) = integral_float_to_integer(f) {
        *number = integer;
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
    /// A declared property's name, read only when a path is built (a `SmolStr` is read
    /// through a branch on its representation, which the validator's hot loop skips).
    Declared(&'a smol_str::SmolStr),
    Index(usize),
}

/// Rebuilds a [`Path`] from an arena of `(parent, step)` entries.
pub(crate) fn materialize_path(arena: &[(u32, Step<'_>)], mut at: u32, root: &str) -> Path {
    let mut segments = Segments::new();
    while let Some(&(parent, step)) = arena.get(at as usize) {
        match step {
            Step::Root => break,
            Step::Key(key) => segments.push(Segment::key(key)),
            Step::Declared(name) => segments.push(Segment::key(name)),
            Step::Index(index) => segments.push(Segment::Index(index)),
        }
        at = parent;
    }
    segments.reverse();
    Path::from_segments(root, segments)
}

fn arena_index(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// Canonicalises in place; returns the container depth or every violation.
pub(crate) fn canonicalize(
    value: &mut Value,
    limits: &Limits,
    root: &str,
) -> Result<usize, Violations> {
    // Scalars need no walk.
    if let Value::Number(n) = value {
        if !canonicalize_in_place(n) {
            return Err(vec![Violation::new(
                Path::root(root),
                ViolationKind::NegativeZero,
            )]
            .into());
        }
        return Ok(0);
    }
    if item_is_plain_scalar(value) {
        return Ok(0);
    }
    if let Some(depth) = canonicalize_fast(value, 0, limits.max_depth.min(FAST_DEPTH)) {
        return Ok(depth);
    }
    canonicalize_walk(value, limits, root)
}

/// [`canonicalize`] of a container by recursion, without paths: the container depth, or
/// `None` when the iterative walk has to run (a negative zero, a container past `limit`,
/// which is at most [`FAST_DEPTH`]). `above` counts the containers above `value`. Integral
/// floats already rewritten stay rewritten: the walk that follows finds them canonical.
fn canonicalize_fast(value: &mut Value, above: usize, limit: usize) -> Option<usize> {
    let depth = above + 1;
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) | Value::Number(_) => Some(0),
        _ if depth > limit => None,
        Value::Array(items) => canonicalize_items(items.iter_mut(), depth, limit),
        Value::Object(map) => canonicalize_items(map.values_mut(), depth, limit),
    }
}

/// The members of a container at `depth`, for [`canonicalize_fast`]: the deepest
/// container among them (`depth` itself when there is none).
#[inline(always)]
fn canonicalize_items<'a>(
    items: impl Iterator<Item = &'a mut Value>,
    depth: usize,
    limit: usize,
) -> Option<usize> {
    let mut deepest = depth;
    for item in items {
        match item {
            Value::Null | Value::Bool(_) | Value::String(_) => {}
            Value::Number(n) => {
                if !canonicalize_in_place(n) {
                    return None;
                }
            }
            Value::Array(_) | Value::Object(_) => {
                deepest = deepest.max(canonicalize_fast(item, depth, limit)?);
            }
        }
    }
    Some(deepest)
}

/// [`canonicalize`] of a container, iteratively (any depth), with every violation's path.
fn canonicalize_walk(value: &mut Value, limits: &Limits, root: &str) -> Result<usize, Violations> {
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
                if !canonicalize_in_place(n) {
                    violations.push(Violation::new(
                        materialize_path(&arena, at, root),
                        ViolationKind::NegativeZero,
                    ));
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
/// Used for JSON that does not cross the boundary as a [`JsonValue`](crate::JsonValue), such as schemas
/// (whose `enum`, `const`, `default` and `examples` the model should see in canonical
/// form).
pub fn canonicalize_numbers(value: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) => {
                // Negative zero stays as it is here.
                canonicalize_in_place(n);
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// Scalars that matter here (negative zero, integral and other floats, integers) in
    /// arrays and objects, wrapped in `wrap` more containers: the fast passes' depth bound
    /// ([`FAST_DEPTH`]) is crossed both ways.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(-0.0)),
            Just(json!(2.0)),
            Just(json!(1.5)),
            Just(json!(-7)),
            Just(json!("s")),
            Just(Value::Null),
            Just(json!(true)),
        ];
        let tree = leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[ab]", inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        });
        (tree, 0..FAST_DEPTH + 8, any::<bool>()).prop_map(|(mut value, wrap, objects)| {
            for _ in 0..wrap {
                value = if objects {
                    json!({ "k": value })
                } else {
                    json!([value])
                };
            }
            value
        })
    }

    proptest! {
        /// The fast pass answers as the iterative walk does, or hands over to it.
        #[test]
        fn is_lossless_is_the_walk(value in value()) {
            prop_assert_eq!(is_lossless(&value), lossless_walk(&value));
        }

        /// `canonicalize` (fast pass, then the walk when it hands over) rewrites the value
        /// and answers (depth, or the same violations with the same paths) exactly as the
        /// iterative walk alone, under any depth limit.
        #[test]
        fn canonicalize_is_the_walk(value in value(), max_depth in 0..FAST_DEPTH + 12) {
            let limits = Limits::default().with_max_depth(max_depth);
            let mut fast = value.clone();
            let mut walked = value;
            let expected = match walked {
                Value::Array(_) | Value::Object(_) => canonicalize_walk(&mut walked, &limits, "x"),
                _ => canonicalize(&mut walked, &limits, "x"),
            };
            let got = canonicalize(&mut fast, &limits, "x");
            prop_assert_eq!(fast, walked);
            match (got, expected) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(a), Err(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
                (a, b) => prop_assert!(false, "{a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn the_fast_passes_hand_over_past_their_depth_and_at_a_violation() {
        let mut deep = json!(1.0);
        for _ in 0..FAST_DEPTH + 1 {
            deep = json!([deep]);
        }
        assert_eq!(lossless_fast(&deep, 0), None);
        assert!(is_lossless(&deep));
        assert_eq!(canonicalize_fast(&mut deep.clone(), 0, FAST_DEPTH), None);
        let depth = canonicalize(&mut deep, &Limits::default(), "").unwrap();
        assert_eq!(depth, FAST_DEPTH + 1);
        // The innermost integral float was rewritten by the walk.
        let mut inner = &deep;
        while let Value::Array(items) = inner {
            inner = &items[0];
        }
        assert!(inner.is_u64());

        let mut bad = json!({"a": [1.0, {"b": -0.0}]});
        assert_eq!(canonicalize_fast(&mut bad.clone(), 0, FAST_DEPTH), None);
        let violations = canonicalize(&mut bad, &Limits::default(), "").unwrap_err();
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].path.to_string(), "a[1].b");
        assert!(!is_lossless(&bad));
    }
}
