//! Lossless JSON across the QuickJS boundary, both ways, in Rust and without recursion.
//!
//! Sandbox to host: only `null`, booleans, finite numbers other than `-0`, strings of
//! well-formed UTF-16, dense arrays with `Array.prototype` and no extra properties, and
//! objects whose prototype is `Object.prototype` or `null` (own enumerable string keys;
//! getters run, and a throwing getter's text becomes the detail). Everything else
//! (`undefined`, functions, symbols, BigInt, proxies, cycles, any other prototype) is
//! refused with a path. The prototypes compared against are the realm's originals, captured
//! before the program runs, so a program that rewrites `JSON`, `Array.isArray`,
//! `Object.prototype` or other globals cannot change the verdict.
//!
//! Host to sandbox: every property is *defined* (never assigned), so setters on the
//! prototypes and keys such as `__proto__` are inert. An integer that a JavaScript number
//! cannot hold exactly (beyond ±2^53 and not a representable double) is refused rather than
//! rounded.

use std::collections::HashSet;
use std::fmt::Write as _;

use rquickjs::object::{Filter, Property};
use rquickjs::{Array, Ctx, Object, Type, Value};
use serde_json::{Map, Number};
use tools_json::{JsonValue, Limits, drop_deep};

use super::intrinsics::Intrinsics;

/// How often (in visited values) a walk checks whether the run must stop.
const STOP_CHECK_INTERVAL: usize = 1024;

/// Why a value could not cross.
#[derive(Debug)]
pub(super) enum Refusal {
    /// The value is not lossless JSON: the detail says where and why.
    Lossy(String),
    /// The value nests deeper than the depth limit (the detail says where).
    TooDeep(String),
    /// The run is stopping; the walk gave up.
    Stopped,
}

/// A step of the path to the value being visited.
enum Step {
    Index(usize),
    Key(String),
}

/// Renders a path such as `$.a[2]["b c"]`.
fn render_path(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
            Step::Key(key) => {
                let plain = key
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
                if plain {
                    let _ = write!(out, ".{key}");
                } else {
                    let _ = write!(out, "[{}]", serde_json::to_string(key).unwrap_or_default());
                }
            }
        }
    }
    out
}

/// The text of a thrown value: an error's message, else `String(thrown)`; a fixed text
/// when neither renders. Leaves no exception pending.
pub(super) fn thrown_text<'js>(intrinsics: &Intrinsics<'js>, thrown: &Value<'js>) -> String {
    if thrown.is_error()
        && let Some(object) = thrown.as_object()
        && let Some(message) = intrinsics.read_text(object, "message")
    {
        return message;
    }
    intrinsics
        .string_of(thrown)
        .unwrap_or_else(|| "a value that cannot be rendered".to_owned())
}

/// A container being walked.
enum Frame<'js> {
    Array {
        source: Object<'js>,
        items: Vec<serde_json::Value>,
        len: usize,
        next: usize,
    },
    Object {
        source: Object<'js>,
        map: Map<String, serde_json::Value>,
        keys: std::vec::IntoIter<String>,
        current: Option<String>,
    },
}

impl<'js> Frame<'js> {
    fn source(&self) -> &Object<'js> {
        match self {
            Frame::Array { source, .. } | Frame::Object { source, .. } => source,
        }
    }
}

/// Drops the partial results of an abandoned walk without deep recursion.
fn abandon(stack: Vec<Frame<'_>>) {
    for frame in stack {
        match frame {
            Frame::Array { items, .. } => drop_deep(serde_json::Value::Array(items)),
            Frame::Object { map, .. } => drop_deep(serde_json::Value::Object(map)),
        }
    }
}

/// Converts a sandbox value to lossless JSON. `undefined` is refused everywhere, the root
/// included (callers handle an `undefined` completion before calling).
///
/// `stop` is polled now and then; when it says so, the walk ends with [`Refusal::Stopped`].
pub(super) fn to_json<'js>(
    ctx: &Ctx<'js>,
    intrinsics: &Intrinsics<'js>,
    root: Value<'js>,
    max_depth: usize,
    stop: &dyn Fn() -> bool,
) -> Result<JsonValue, Refusal> {
    let mut stack: Vec<Frame<'js>> = Vec::new();
    let mut path: Vec<Step> = Vec::new();
    let mut ancestors: HashSet<Value<'js>> = HashSet::new();
    let mut pending = Some(root);
    let mut visited = 0usize;
    let lossy = |stack: Vec<Frame<'js>>, path: &[Step], reason: &str| {
        abandon(stack);
        Err(Refusal::Lossy(format!("{}: {reason}", render_path(path))))
    };
    loop {
        if let Some(value) = pending.take() {
            visited += 1;
            if visited.is_multiple_of(STOP_CHECK_INTERVAL) && stop() {
                abandon(stack);
                return Err(Refusal::Stopped);
            }
            let scalar = match value.type_of() {
                Type::Null => Some(serde_json::Value::Null),
                Type::Bool => Some(serde_json::Value::Bool(value.as_bool().unwrap_or(false))),
                Type::Int => Some(serde_json::Value::from(value.as_int().unwrap_or(0))),
                Type::Float => {
                    let number = value.as_float().unwrap_or(f64::NAN);
                    if !number.is_finite() {
                        return lossy(stack, &path, "a non-finite number is not JSON");
                    }
                    if number == 0.0 && number.is_sign_negative() {
                        return lossy(stack, &path, "negative zero cannot be carried by JSON");
                    }
                    match Number::from_f64(number) {
                        Some(number) => Some(serde_json::Value::Number(number)),
                        None => return lossy(stack, &path, "a non-finite number is not JSON"),
                    }
                }
                Type::String => match value
                    .as_string()
                    .and_then(|s| intrinsics.settle(s.to_string()))
                {
                    Some(text) => Some(serde_json::Value::String(text)),
                    _ => return lossy(stack, &path, "a string with a lone surrogate is not JSON"),
                },
                Type::Undefined => return lossy(stack, &path, "undefined is not JSON"),
                Type::Symbol => return lossy(stack, &path, "a symbol is not JSON"),
                Type::BigInt => return lossy(stack, &path, "a BigInt is not JSON"),
                Type::Function | Type::Constructor => {
                    return lossy(stack, &path, "a function is not JSON");
                }
                _ => None,
            };
            if let Some(scalar) = scalar {
                match attach(&mut stack, scalar) {
                    Some(done) => return finish(done, max_depth),
                    None => continue,
                }
            }
            // A container (or an exotic object).
            if value.is_proxy() {
                return lossy(stack, &path, "a Proxy is not JSON");
            }
            let Some(object) = value.as_object().cloned() else {
                return lossy(stack, &path, "this kind of value is not JSON");
            };
            if ancestors.contains(&value) {
                return lossy(stack, &path, "a circular reference is not JSON");
            }
            if stack.len() >= max_depth {
                let detail = format!(
                    "{}: nesting exceeds the depth limit of {max_depth}",
                    render_path(&path)
                );
                abandon(stack);
                return Err(Refusal::TooDeep(detail));
            }
            let keys: Result<Vec<String>, _> = object
                .own_keys::<String>(Filter::new().string().enum_only())
                .collect();
            let Ok(keys) = keys else {
                let thrown = ctx.catch();
                let reason = thrown_text(intrinsics, &thrown);
                return lossy(stack, &path, &reason);
            };
            if value.is_array() {
                if !intrinsics.prototype_is(&value, &intrinsics.array_prototype, false) {
                    return lossy(
                        stack,
                        &path,
                        "an array with a foreign prototype is not JSON",
                    );
                }
                // Not `Array::len`, which asserts a length that fits an `i32` (an array's
                // length may be up to 2^32 - 1, stored as a double).
                let Some(len) = array_length(intrinsics, &object) else {
                    return lossy(stack, &path, "an array of unreadable length is not JSON");
                };
                if keys.len() > len {
                    return lossy(stack, &path, "an array with extra properties is not JSON");
                }
                let dense = keys.len() == len
                    && keys
                        .iter()
                        .enumerate()
                        .all(|(index, key)| key.parse() == Ok(index));
                if !dense {
                    return lossy(stack, &path, "a sparse array is not JSON");
                }
                ancestors.insert(value);
                stack.push(Frame::Array {
                    source: object,
                    items: Vec::with_capacity(len.min(1 << 16)),
                    len,
                    next: 0,
                });
            } else {
                if !intrinsics.prototype_is(&value, &intrinsics.object_prototype, true) {
                    return lossy(
                        stack,
                        &path,
                        "an object whose prototype is not Object.prototype or null (a Date, a class instance, …) is not JSON",
                    );
                }
                ancestors.insert(value);
                stack.push(Frame::Object {
                    source: object,
                    map: Map::new(),
                    keys: keys.into_iter(),
                    current: None,
                });
            }
            path.push(Step::Index(0));
        }
        // Advance the innermost container.
        let Some(top) = stack.last_mut() else {
            return Err(Refusal::Lossy("$: nothing to convert".to_owned()));
        };
        let child = match top {
            Frame::Array {
                source, len, next, ..
            } => {
                if *next < *len {
                    let index = *next;
                    *next += 1;
                    if let Some(step) = path.last_mut() {
                        *step = Step::Index(index);
                    }
                    Some(source.get::<_, Value<'js>>(index as u32))
                } else {
                    None
                }
            }
            Frame::Object {
                source,
                keys,
                current,
                ..
            } => match keys.next() {
                Some(key) => {
                    let got = source.get::<_, Value<'js>>(key.as_str());
                    if let Some(step) = path.last_mut() {
                        *step = Step::Key(key.clone());
                    }
                    *current = Some(key);
                    Some(got)
                }
                None => None,
            },
        };
        match child {
            Some(Ok(child)) => pending = Some(child),
            Some(Err(_)) => {
                // A getter threw (or the engine refused): the thrown text is the detail.
                let thrown = ctx.catch();
                let reason = thrown_text(intrinsics, &thrown);
                abandon(stack);
                return Err(Refusal::Lossy(reason));
            }
            None => {
                // The container is complete.
                let Some(frame) = stack.pop() else {
                    return Err(Refusal::Lossy("$: nothing to convert".to_owned()));
                };
                path.pop();
                ancestors.remove(frame.source().as_value());
                let complete = match frame {
                    Frame::Array { items, .. } => serde_json::Value::Array(items),
                    Frame::Object { map, .. } => serde_json::Value::Object(map),
                };
                if let Some(done) = attach(&mut stack, complete) {
                    return finish(done, max_depth);
                }
            }
        }
    }
}

/// The `length` of a genuine array (an own data property: no program code runs), or
/// `None` when it cannot be read as a count.
fn array_length<'js>(intrinsics: &Intrinsics<'js>, array: &Object<'js>) -> Option<usize> {
    let length = intrinsics.settle(array.get::<_, Value<'js>>("length"))?;
    if let Some(small) = length.as_int() {
        return usize::try_from(small).ok();
    }
    let large = length.as_float()?;
    (large >= 0.0 && large.fract() == 0.0 && large <= 4_294_967_295.0).then_some(large as usize)
}

/// Adds a finished value to the innermost container; returns it when there is none (the
/// root is done).
fn attach(stack: &mut [Frame<'_>], value: serde_json::Value) -> Option<serde_json::Value> {
    match stack.last_mut() {
        None => Some(value),
        Some(Frame::Array { items, .. }) => {
            items.push(value);
            None
        }
        Some(Frame::Object { map, current, .. }) => {
            if let Some(key) = current.take() {
                map.insert(key, value);
            }
            None
        }
    }
}

/// Takes a converted value across the lossless boundary (integral floats become integers).
fn finish(value: serde_json::Value, max_depth: usize) -> Result<JsonValue, Refusal> {
    JsonValue::with_limits_at(value, &Limits::default().with_max_depth(max_depth), "$")
        .map_err(|error| Refusal::Lossy(error.to_string()))
}

/// A JavaScript number holding `number` exactly, if there is one.
fn exact_number(number: &Number) -> Option<f64> {
    if let Some(integer) = number.as_i64() {
        let double = integer as f64;
        // `as i64` saturates, so 2^63 (the double of i64::MAX) does not round-trip.
        return ((-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&double)
            && double as i64 == integer)
            .then_some(double);
    }
    if let Some(integer) = number.as_u64() {
        let double = integer as f64;
        return (double < 18_446_744_073_709_551_616.0 && double as u64 == integer)
            .then_some(double);
    }
    number.as_f64()
}

/// A container being built in the sandbox.
enum Build<'a, 'js> {
    Array {
        target: Object<'js>,
        items: std::slice::Iter<'a, serde_json::Value>,
        next: u32,
    },
    Object {
        target: Object<'js>,
        members: serde_json::map::Iter<'a>,
        current: Option<&'a str>,
    },
}

/// The property descriptor every built property gets: a plain data property.
fn data<'js>(value: Value<'js>) -> Property<Value<'js>> {
    Property::from(value).writable().enumerable().configurable()
}

/// Builds the sandbox value of `value`.
///
/// # Errors
///
/// [`Refusal::Lossy`] for an integer a JavaScript number cannot hold exactly or when the
/// engine refuses (memory); [`Refusal::Stopped`] when the run is stopping.
pub(super) fn to_js<'js>(
    ctx: &Ctx<'js>,
    value: &JsonValue,
    stop: &dyn Fn() -> bool,
) -> Result<Value<'js>, Refusal> {
    let engine = |error: rquickjs::Error| Refusal::Lossy(format!("the engine refused: {error}"));
    let mut stack: Vec<Build<'_, 'js>> = Vec::new();
    let mut path: Vec<Step> = Vec::new();
    let mut pending: Option<&serde_json::Value> = Some(value.as_value());
    let mut visited = 0usize;
    loop {
        if let Some(value) = pending.take() {
            visited += 1;
            if visited.is_multiple_of(STOP_CHECK_INTERVAL) && stop() {
                return Err(Refusal::Stopped);
            }
            let built: Option<Value<'js>> = match value {
                serde_json::Value::Null => Some(Value::new_null(ctx.clone())),
                serde_json::Value::Bool(flag) => Some(Value::new_bool(ctx.clone(), *flag)),
                serde_json::Value::Number(number) => {
                    if let Some(small) = number.as_i64().and_then(|n| i32::try_from(n).ok()) {
                        Some(Value::new_int(ctx.clone(), small))
                    } else {
                        let Some(double) = exact_number(number) else {
                            return Err(Refusal::Lossy(format!(
                                "{}: the integer {number} has no exact JavaScript number",
                                render_path(&path)
                            )));
                        };
                        Some(Value::new_float(ctx.clone(), double))
                    }
                }
                serde_json::Value::String(text) => Some(
                    rquickjs::String::from_str(ctx.clone(), text)
                        .map_err(engine)?
                        .into_value(),
                ),
                serde_json::Value::Array(items) => {
                    let target = Array::new(ctx.clone()).map_err(engine)?.into_object();
                    stack.push(Build::Array {
                        target,
                        items: items.iter(),
                        next: 0,
                    });
                    path.push(Step::Index(0));
                    None
                }
                serde_json::Value::Object(members) => {
                    let target = Object::new(ctx.clone()).map_err(engine)?;
                    stack.push(Build::Object {
                        target,
                        members: members.iter(),
                        current: None,
                    });
                    path.push(Step::Index(0));
                    None
                }
            };
            if let Some(built) = built {
                match place(&mut stack, built).map_err(engine)? {
                    Some(root) => return Ok(root),
                    None => continue,
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return Err(Refusal::Lossy("$: nothing to build".to_owned()));
        };
        let child = match top {
            Build::Array { items, next, .. } => items.next().inspect(|_| {
                if let Some(step) = path.last_mut() {
                    *step = Step::Index(*next as usize);
                }
            }),
            Build::Object {
                members, current, ..
            } => members.next().map(|(key, item)| {
                *current = Some(key.as_str());
                if let Some(step) = path.last_mut() {
                    *step = Step::Key(key.clone());
                }
                item
            }),
        };
        match child {
            Some(child) => pending = Some(child),
            None => {
                let Some(frame) = stack.pop() else {
                    return Err(Refusal::Lossy("$: nothing to build".to_owned()));
                };
                path.pop();
                let complete = match frame {
                    Build::Array { target, .. } | Build::Object { target, .. } => {
                        target.into_value()
                    }
                };
                if let Some(root) = place(&mut stack, complete).map_err(engine)? {
                    return Ok(root);
                }
            }
        }
    }
}

/// Defines a built value in the innermost container; returns it when there is none.
fn place<'js>(
    stack: &mut [Build<'_, 'js>],
    value: Value<'js>,
) -> rquickjs::Result<Option<Value<'js>>> {
    match stack.last_mut() {
        None => Ok(Some(value)),
        Some(Build::Array { target, next, .. }) => {
            target.prop(*next, data(value))?;
            *next += 1;
            Ok(None)
        }
        Some(Build::Object {
            target, current, ..
        }) => {
            if let Some(key) = current.take() {
                target.prop(key, data(value))?;
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_accessors() {
        let steps = [
            Step::Key("a".into()),
            Step::Index(2),
            Step::Key("b c".into()),
        ];
        assert_eq!(render_path(&steps), "$.a[2][\"b c\"]");
        assert_eq!(render_path(&[]), "$");
    }

    #[test]
    fn exact_numbers() {
        let exact = |text: &str| exact_number(&serde_json::from_str::<Number>(text).unwrap());
        assert_eq!(exact("9007199254740992"), Some(9_007_199_254_740_992.0));
        assert_eq!(exact("9007199254740993"), None);
        assert_eq!(
            exact("1152921504606846976"),
            Some(1_152_921_504_606_846_976.0)
        );
        assert_eq!(exact("-9007199254740993"), None);
        assert_eq!(exact("18446744073709551615"), None);
        assert_eq!(exact("9223372036854775807"), None);
        assert_eq!(exact("2.5"), Some(2.5));
    }
}
