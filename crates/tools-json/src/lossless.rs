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
/// Iterative: any depth is safe.
pub fn is_lossless(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => return true,
        Value::Number(n) => return !is_negative_zero(n),
        Value::Array(items) if items.is_empty() => return true,
        Value::Object(map) if map.is_empty() => return true,
        Value::Array(_) | Value::Object(_) => {}
    }
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
/// Used for JSON that does not cross the boundary as a [`JsonValue`](crate::JsonValue), such as schemas
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
