//! Sandbox to host: a walk of the program's value that builds its lossless JSON.

use std::collections::HashSet;

use rquickjs::object::Filter;
use rquickjs::{Atom, Ctx, Object, Type, Value};
use serde_json::{Map, Number};
use tools_json::{JsonValue, Limits, drop_deep};

use super::{Refusal, STOP_CHECK_INTERVAL, Step, render_path, thrown_text};
use crate::intrinsics::Intrinsics;

/// How many of the outermost open containers the cycle check compares one by one. Only the
/// containers nested deeper than this go into a hash set, made the first time one does:
/// the typical argument is a few levels deep, and comparing a few handles is far cheaper
/// than hashing them.
const LINEAR_ANCESTORS: usize = 32;

/// A container being walked.
enum Frame<'js> {
    /// An array: `next` is the index of the element to read next.
    Array {
        source: Object<'js>,
        items: Vec<serde_json::Value>,
        len: usize,
        next: usize,
    },
    /// An object: the keys still to read (each as the engine's atom, to read it by, and
    /// its text, the member's name), and the name of the member being converted.
    Object {
        source: Object<'js>,
        map: Map<String, serde_json::Value>,
        keys: std::vec::IntoIter<(Atom<'js>, String)>,
        current: Option<String>,
    },
}

impl<'js> Frame<'js> {
    /// The container being walked.
    fn source(&self) -> &Object<'js> {
        match self {
            Frame::Array { source, .. } | Frame::Object { source, .. } => source,
        }
    }

    /// The step from this container to the member being converted.
    fn step(&self) -> Option<Step<'_>> {
        match self {
            Frame::Array { next, .. } => next.checked_sub(1).map(Step::Index),
            Frame::Object { current, .. } => current.as_deref().map(Step::Key),
        }
    }
}

/// The path of the value being converted: one step per open container.
fn path_of(stack: &[Frame<'_>]) -> String {
    render_path(stack.iter().filter_map(Frame::step))
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

/// Whether `object` is one of the open containers (`deep` holds those past
/// [`LINEAR_ANCESTORS`]).
fn is_ancestor<'js>(
    stack: &[Frame<'js>],
    deep: Option<&HashSet<Value<'js>>>,
    object: &Object<'js>,
) -> bool {
    let value = object.as_value();
    stack
        .iter()
        .take(LINEAR_ANCESTORS)
        .any(|frame| frame.source().as_value() == value)
        || deep.is_some_and(|deep| deep.contains(value))
}

/// Why an object's keys could not be read.
enum KeyFailure {
    /// The engine threw (it is pending).
    Thrown,
    /// A key holds a lone surrogate.
    LoneSurrogate,
}

/// The own enumerable string keys of an object, each with its text, in the engine's order.
/// Every key's text is made before any member is read (before any getter runs).
fn named_keys<'js>(object: &Object<'js>) -> Result<Vec<(Atom<'js>, String)>, KeyFailure> {
    let atoms = object.own_keys::<Atom<'js>>(Filter::new().string().enum_only());
    let mut keys = Vec::with_capacity(atoms.len());
    for atom in atoms {
        let atom = atom.map_err(|_| KeyFailure::Thrown)?;
        let text = atom.to_js_string().map_err(|_| KeyFailure::Thrown)?;
        let text = match text.to_string() {
            Ok(text) => text,
            Err(rquickjs::Error::Utf8(_)) => return Err(KeyFailure::LoneSurrogate),
            Err(_) => return Err(KeyFailure::Thrown),
        };
        keys.push((atom, text));
    }
    Ok(keys)
}

/// Whether `key`, the key at `index` of an array's own keys, names element `index`: the
/// canonical index compares equal as an atom; any other key counts when its text parses
/// as that index (`"+1"`, `"01"`), as it always has, so that such an array is refused by
/// its missing element rather than as sparse.
fn names_index<'js>(intrinsics: &Intrinsics<'js>, key: &Atom<'js>, index: usize) -> bool {
    let canonical = u32::try_from(index)
        .ok()
        .and_then(|index| intrinsics.settle(Atom::from_u32(intrinsics.ctx().clone(), index)));
    if canonical.is_some_and(|canonical| canonical == *key) {
        return true;
    }
    intrinsics
        .settle(key.to_js_string())
        .and_then(|text| intrinsics.settle(text.to_string()))
        .and_then(|text| text.parse::<usize>().ok())
        == Some(index)
}

/// Converts a sandbox value to lossless JSON. `undefined` is refused everywhere, the root
/// included (callers handle an `undefined` completion before calling).
///
/// `stop` is polled now and then; when it says so, the walk ends with [`Refusal::Stopped`].
pub(crate) fn to_json<'js>(
    ctx: &Ctx<'js>,
    intrinsics: &Intrinsics<'js>,
    root: Value<'js>,
    max_depth: usize,
    stop: &dyn Fn() -> bool,
) -> Result<JsonValue, Refusal> {
    let mut stack: Vec<Frame<'js>> = Vec::new();
    // The open containers past the first `LINEAR_ANCESTORS`, once there are any.
    let mut deep: Option<HashSet<Value<'js>>> = None;
    let mut pending = Some(root);
    let mut visited = 0usize;
    let lossy = |stack: Vec<Frame<'js>>, reason: &str| {
        let path = path_of(&stack);
        abandon(stack);
        Err(Refusal::Lossy(format!("{path}: {reason}")))
    };
    loop {
        if let Some(value) = pending.take() {
            visited += 1;
            if visited.is_multiple_of(STOP_CHECK_INTERVAL) && stop() {
                abandon(stack);
                return Err(Refusal::Stopped);
            }
            let kind = value.type_of();
            let scalar = match kind {
                Type::Null => Some(serde_json::Value::Null),
                Type::Bool => Some(serde_json::Value::Bool(value.as_bool().unwrap_or(false))),
                Type::Int => Some(serde_json::Value::from(value.as_int().unwrap_or(0))),
                Type::Float => {
                    let number = value.as_float().unwrap_or(f64::NAN);
                    if !number.is_finite() {
                        return lossy(stack, "a non-finite number is not JSON");
                    }
                    if number == 0.0 && number.is_sign_negative() {
                        return lossy(stack, "negative zero cannot be carried by JSON");
                    }
                    match Number::from_f64(number) {
                        Some(number) => Some(serde_json::Value::Number(number)),
                        None => return lossy(stack, "a non-finite number is not JSON"),
                    }
                }
                Type::String => match value
                    .into_string()
                    .and_then(|s| intrinsics.settle(s.to_string()))
                {
                    Some(text) => Some(serde_json::Value::String(text)),
                    _ => return lossy(stack, "a string with a lone surrogate is not JSON"),
                },
                Type::Undefined => return lossy(stack, "undefined is not JSON"),
                Type::Symbol => return lossy(stack, "a symbol is not JSON"),
                Type::BigInt => return lossy(stack, "a BigInt is not JSON"),
                Type::Function | Type::Constructor => {
                    return lossy(stack, "a function is not JSON");
                }
                _ => {
                    // A container (or an exotic object).
                    if value.is_proxy() {
                        return lossy(stack, "a Proxy is not JSON");
                    }
                    let Some(object) = value.into_object() else {
                        return lossy(stack, "this kind of value is not JSON");
                    };
                    if is_ancestor(&stack, deep.as_ref(), &object) {
                        return lossy(stack, "a circular reference is not JSON");
                    }
                    if stack.len() >= max_depth {
                        let detail = format!(
                            "{}: nesting exceeds the depth limit of {max_depth}",
                            path_of(&stack)
                        );
                        abandon(stack);
                        return Err(Refusal::TooDeep(detail));
                    }
                    let frame = if kind == Type::Array {
                        if !intrinsics.prototype_is(&object, &intrinsics.array_prototype, false) {
                            return lossy(stack, "an array with a foreign prototype is not JSON");
                        }
                        let keys: Result<Vec<Atom<'js>>, _> = object
                            .own_keys::<Atom<'js>>(Filter::new().string().enum_only())
                            .collect();
                        let Ok(keys) = keys else {
                            let thrown = ctx.catch();
                            let reason = thrown_text(intrinsics, &thrown);
                            return lossy(stack, &reason);
                        };
                        // Not `Array::len`, which asserts a length that fits an `i32` (an
                        // array's length may be up to 2^32 - 1, stored as a double).
                        let Some(len) = array_length(intrinsics, &object) else {
                            return lossy(stack, "an array of unreadable length is not JSON");
                        };
                        if keys.len() > len {
                            return lossy(stack, "an array with extra properties is not JSON");
                        }
                        let dense = keys.len() == len
                            && keys
                                .iter()
                                .enumerate()
                                .all(|(index, key)| names_index(intrinsics, key, index));
                        if !dense {
                            return lossy(stack, "a sparse array is not JSON");
                        }
                        Frame::Array {
                            source: object,
                            items: Vec::with_capacity(len.min(1 << 16)),
                            len,
                            next: 0,
                        }
                    } else {
                        if !intrinsics.prototype_is(&object, &intrinsics.object_prototype, true) {
                            return lossy(
                                stack,
                                "an object whose prototype is not Object.prototype or null (a Date, a class instance, …) is not JSON",
                            );
                        }
                        let keys = match named_keys(&object) {
                            Ok(keys) => keys,
                            Err(KeyFailure::LoneSurrogate) => {
                                return lossy(stack, "a key with a lone surrogate is not JSON");
                            }
                            Err(KeyFailure::Thrown) => {
                                let thrown = ctx.catch();
                                let reason = thrown_text(intrinsics, &thrown);
                                return lossy(stack, &reason);
                            }
                        };
                        Frame::Object {
                            source: object,
                            map: Map::with_capacity(keys.len()),
                            keys: keys.into_iter(),
                            current: None,
                        }
                    };
                    if stack.len() >= LINEAR_ANCESTORS {
                        deep.get_or_insert_with(HashSet::new)
                            .insert(frame.source().as_value().clone());
                    }
                    stack.push(frame);
                    None
                }
            };
            if let Some(scalar) = scalar {
                match attach(&mut stack, scalar) {
                    Some(done) => return finish(done, max_depth),
                    None => continue,
                }
            }
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
            } => keys.next().map(|(atom, key)| {
                let got = source.get::<_, Value<'js>>(atom);
                *current = Some(key);
                got
            }),
        };
        match child {
            Some(Ok(child)) => pending = Some(child),
            Some(Err(_)) => {
                // A getter threw (or the engine refused): the path of the member read and
                // the thrown text are the detail.
                let thrown = ctx.catch();
                let reason = thrown_text(intrinsics, &thrown);
                let path = path_of(&stack);
                abandon(stack);
                return Err(Refusal::Lossy(format!(
                    "{path}: reading it threw: {reason}"
                )));
            }
            None => {
                // The container is complete.
                let Some(frame) = stack.pop() else {
                    return Err(Refusal::Lossy("$: nothing to convert".to_owned()));
                };
                if stack.len() >= LINEAR_ANCESTORS
                    && let Some(deep) = deep.as_mut()
                {
                    deep.remove(frame.source().as_value());
                }
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
