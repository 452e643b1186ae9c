//! The realm's own objects, captured before the program runs, and the fallible reads of
//! program values through them: the only way the runtime looks at a value the program
//! made.

use std::collections::HashSet;

use rquickjs::object::Filter;
use rquickjs::{Array, Ctx, Function, Object, Type, Value};

/// The most array elements `String(thrown)` may join (see [`Intrinsics::joins_cheaply`]).
const MAX_JOINED_ELEMENTS: usize = 1_000_000;

/// The realm's own objects, captured before the program runs.
///
/// Every read of a program value that can run program code (a getter, a proxy trap,
/// `toString`) goes through the fallible helpers here: a failure clears the pending
/// exception and reports `None`, so no engine call is left with an exception pending and
/// no panicking accessor of the binding is ever reached with an exotic value.
pub(super) struct Intrinsics<'js> {
    /// `Object.prototype`.
    pub(super) object_prototype: Object<'js>,
    /// `Array.prototype`.
    pub(super) array_prototype: Object<'js>,
    /// `InternalError.prototype` (the class of QuickJS's out-of-memory error).
    pub(super) internal_error_prototype: Option<Object<'js>>,
    /// `String`, for `String(thrown)`.
    pub(super) string: Function<'js>,
    /// `Object.getOwnPropertyDescriptor`.
    pub(super) get_own_property_descriptor: Function<'js>,
    /// `Array.prototype.toString`.
    pub(super) array_to_string: Function<'js>,
}

impl<'js> Intrinsics<'js> {
    /// The intrinsics among the values the prelude captured (see [`crate::prelude::PRELUDE`]).
    pub(super) fn capture(captured: &Array<'js>) -> rquickjs::Result<Intrinsics<'js>> {
        let internal_error: Value<'js> = captured.get(2)?;
        Ok(Intrinsics {
            object_prototype: captured.get(0)?,
            array_prototype: captured.get(1)?,
            internal_error_prototype: internal_error.into_object(),
            string: captured.get(3)?,
            get_own_property_descriptor: captured.get(4)?,
            array_to_string: captured.get(8)?,
        })
    }

    /// The context the intrinsics live in.
    pub(super) fn ctx(&self) -> &Ctx<'js> {
        self.string.ctx()
    }

    /// `Some(value)` for `Ok`; `None` for `Err`, with the pending exception (if any) cleared.
    pub(super) fn settle<T>(&self, result: rquickjs::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(_) => {
                let _ = self.ctx().catch();
                None
            }
        }
    }

    /// The prototype of a value that is not a proxy: `Some(null)` for none, `None` for a
    /// proxy or a value that is not an object.
    pub(super) fn prototype_of(&self, value: &Value<'js>) -> Option<Value<'js>> {
        if !value.is_object() {
            return None;
        }
        self.prototype_of_object(value.as_object()?)
    }

    /// The prototype of an object that is not a proxy, as [`Intrinsics::prototype_of`].
    /// Read straight from the object's shape, which is what `Object.getPrototypeOf` reads
    /// for an object that is not a proxy: no program code runs and nothing can throw. A
    /// proxy is never asked (its trap would run).
    fn prototype_of_object(&self, object: &Object<'js>) -> Option<Value<'js>> {
        if object.is_proxy() {
            return None;
        }
        Some(match object.get_prototype() {
            Some(prototype) => prototype.into_value(),
            None => Value::new_null(self.ctx().clone()),
        })
    }

    /// Whether `object` (not a proxy) has `expected` as its prototype, or `null` when
    /// `null_allowed`.
    pub(super) fn prototype_is(
        &self,
        object: &Object<'js>,
        expected: &Object<'js>,
        null_allowed: bool,
    ) -> bool {
        match self.prototype_of_object(object) {
            None => false,
            Some(prototype) if prototype.is_null() => null_allowed,
            Some(prototype) => prototype == *expected.as_value(),
        }
    }

    /// `String(value)`; `None` when it throws (a symbol-hostile `toString`, a revoked
    /// proxy, …) or yields text without a UTF-8 form. Never called with a non-value.
    pub(super) fn string_of(&self, value: &Value<'js>) -> Option<String> {
        if let Some(text) = value.as_string() {
            return self.settle(text.to_string());
        }
        if !is_plain_value(value) || !self.joins_cheaply(value) {
            return None;
        }
        self.settle(self.string.call::<_, String>((value.clone(),)))
    }

    /// Whether `String(value)` stays clear of the one unbounded native loop it could
    /// reach without running program code: `Array.prototype.join` (through the original
    /// `Array.prototype.toString`) over a huge, typically sparse, `length` (up to
    /// 2^32 - 1), which the interrupt handler cannot stop. Walks what that join would
    /// visit (the elements of every object whose `toString` is the original, and the
    /// `name` / `message` an error's `toString` converts), at most [`MAX_JOINED_ELEMENTS`]
    /// elements in all. Program code met on the way (getters, traps) runs under the
    /// run's budgets like any other.
    fn joins_cheaply(&self, value: &Value<'js>) -> bool {
        if !value.is_object() {
            return true;
        }
        let mut budget = MAX_JOINED_ELEMENTS;
        let mut seen: HashSet<Value<'js>> = HashSet::new();
        let mut queue = vec![value.clone()];
        while let Some(item) = queue.pop() {
            let Some(object) = item.as_object() else {
                continue;
            };
            let mut next = |value: Value<'js>, queue: &mut Vec<Value<'js>>| {
                if value.is_object() && seen.insert(value.clone()) {
                    queue.push(value);
                }
            };
            for name in ["name", "message"] {
                if let Some(part) = self.settle(object.get::<_, Value<'js>>(name)) {
                    next(part, &mut queue);
                }
            }
            let joins = self
                .settle(object.get::<_, Value<'js>>("toString"))
                .is_some_and(|method| method == *self.array_to_string.as_value());
            if !joins {
                continue;
            }
            let Some(length) = self.settle(object.get::<_, Value<'js>>("length")) else {
                continue;
            };
            let length = if let Some(small) = length.as_int() {
                f64::from(small)
            } else if let Some(large) = length.as_float() {
                large
            } else if let Some(text) = length.as_string() {
                self.settle(text.to_string())
                    .and_then(|text| text.trim().parse::<f64>().ok())
                    .unwrap_or(0.0)
            } else {
                0.0
            };
            if length.is_nan() || length <= 0.0 {
                continue;
            }
            if length > budget as f64 {
                return false;
            }
            let len = length as usize;
            budget -= len;
            for index in 0..len {
                let Ok(index) = u32::try_from(index) else {
                    return false;
                };
                if let Some(element) = self.settle(object.get::<_, Value<'js>>(index)) {
                    next(element, &mut queue);
                }
            }
        }
        true
    }

    /// The value of an own data property of `object` (not a proxy), without running a
    /// getter: `None` for an accessor, a missing property, or a refusal.
    pub(super) fn own_data(&self, object: &Value<'js>, name: &str) -> Option<Value<'js>> {
        if !object.is_object() || object.is_proxy() {
            return None;
        }
        let descriptor = self.settle(
            self.get_own_property_descriptor
                .call::<_, Value<'js>>((object.clone(), name)),
        )?;
        let descriptor = descriptor.as_object()?;
        // The descriptor is a fresh ordinary object: only its own keys count (a program
        // may define `get` or `value` on `Object.prototype`).
        let mut is_data = false;
        for key in descriptor.own_keys::<String>(Filter::new().string()) {
            match self.settle(key)?.as_str() {
                "get" | "set" => return None,
                "value" => is_data = true,
                _ => {}
            }
        }
        if !is_data {
            return None;
        }
        self.settle(descriptor.get::<_, Value<'js>>("value"))
    }

    /// An own data property that holds a string, as text.
    pub(super) fn own_text(&self, object: &Value<'js>, name: &str) -> Option<String> {
        let value = self.own_data(object, name)?;
        let text = value.as_string()?;
        self.settle(text.to_string())
    }

    /// A property read the ordinary way (getters and traps run): its text when it holds a
    /// string; `None` for anything else, and when the read throws.
    pub(super) fn read_text(&self, object: &Object<'js>, name: &str) -> Option<String> {
        let value = self.settle(object.get::<_, Value<'js>>(name))?;
        let text = value.as_string()?;
        self.settle(text.to_string())
    }
}

/// Whether `value` is an ordinary language value (not the engine's internal
/// "uninitialized" or module markers), safe to hand to a function.
pub(super) fn is_plain_value(value: &Value<'_>) -> bool {
    !matches!(
        value.type_of(),
        Type::Uninitialized | Type::Module | Type::Unknown
    )
}
