//! Host to sandbox: builds the program's value of a host's JSON, defining every property.

use rquickjs::object::Property;
use rquickjs::{Array, Ctx, Object, Value};
use serde_json::Number;
use tools_json::JsonValue;

use super::{Refusal, STOP_CHECK_INTERVAL, Step, render_path};

/// A JavaScript number holding `number` exactly, if there is one.
pub(super) fn exact_number(number: &Number) -> Option<f64> {
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
    /// An array: `next` is the index of the element being built (the count placed).
    Array {
        target: Object<'js>,
        items: std::slice::Iter<'a, serde_json::Value>,
        next: u32,
    },
    /// An object: `current` is the key of the member being built.
    Object {
        target: Object<'js>,
        members: serde_json::map::Iter<'a>,
        current: Option<&'a str>,
    },
}

impl<'a> Build<'a, '_> {
    /// The step from this container to the value being built in it.
    fn step(&self) -> Option<Step<'a>> {
        match self {
            Build::Array { next, .. } => Some(Step::Index(*next as usize)),
            Build::Object { current, .. } => current.map(Step::Key),
        }
    }
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
pub(crate) fn to_js<'js>(
    ctx: &Ctx<'js>,
    value: &JsonValue,
    stop: &dyn Fn() -> bool,
) -> Result<Value<'js>, Refusal> {
    let engine = |error: rquickjs::Error| Refusal::Lossy(format!("the engine refused: {error}"));
    let mut stack: Vec<Build<'_, 'js>> = Vec::new();
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
                                render_path(stack.iter().filter_map(Build::step))
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
                    None
                }
                serde_json::Value::Object(members) => {
                    let target = Object::new(ctx.clone()).map_err(engine)?;
                    stack.push(Build::Object {
                        target,
                        members: members.iter(),
                        current: None,
                    });
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
            Build::Array { items, .. } => items.next(),
            Build::Object {
                members, current, ..
            } => members.next().map(|(key, item)| {
                *current = Some(key.as_str());
                item
            }),
        };
        match child {
            Some(child) => pending = Some(child),
            None => {
                let Some(frame) = stack.pop() else {
                    return Err(Refusal::Lossy("$: nothing to build".to_owned()));
                };
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
