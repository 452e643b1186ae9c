//! What the program threw, inspected without running its code where that can be avoided:
//! the engine's own out-of-memory error, and the rendering of any other thrown value.

use rquickjs::{Ctx, Object, Value};

use crate::intrinsics::Intrinsics;

/// Whether the engine can still allocate a small string. Used only when the program threw
/// a bare `null`, which is also what QuickJS throws when memory is so exhausted that it
/// cannot build its out-of-memory error.
pub(super) fn engine_can_allocate<'js>(ctx: &Ctx<'js>) -> bool {
    const PROBE: [u8; 1024] = [b'x'; 1024];
    let text = std::str::from_utf8(&PROBE).unwrap_or("x");
    match rquickjs::String::from_str(ctx.clone(), text) {
        Ok(_) => true,
        Err(_) => {
            let _ = ctx.catch();
            false
        }
    }
}

/// The prototype of a value that is not a proxy, without running any code or allocating:
/// `None` for a proxy, a primitive or a `null` prototype. (`JS_GetPrototype` runs a trap
/// only for proxies, which are refused before the engine is asked.)
fn plain_prototype<'js>(value: &Value<'js>) -> Option<Object<'js>> {
    if !value.is_object() || value.is_proxy() {
        return None;
    }
    value.as_object()?.get_prototype()
}

/// Whether `thrown` is QuickJS's out-of-memory error: an error (never a proxy) whose
/// prototype is the realm's original `InternalError.prototype` and whose message is
/// `out of memory`. Reads nothing the program could intercept before the prototype check,
/// and allocates nothing on the engine's heap for the engine's own error.
pub(super) fn is_out_of_memory<'js>(intrinsics: &Intrinsics<'js>, thrown: &Value<'js>) -> bool {
    let Some(internal) = &intrinsics.internal_error_prototype else {
        return false;
    };
    if !thrown.is_error() {
        return false;
    }
    let is_internal = plain_prototype(thrown)
        .is_some_and(|prototype| prototype.as_value() == internal.as_value());
    if !is_internal {
        return false;
    }
    let Some(object) = thrown.as_object() else {
        return false;
    };
    let message = intrinsics.settle(object.get::<_, Value<'js>>("message"));
    message
        .and_then(|message| {
            let text = message.as_string()?;
            intrinsics.settle(text.to_string())
        })
        .is_some_and(|message| message == "out of memory")
}

/// An exception as the model should read it: `Name: message` and the stack for errors,
/// `String(thrown)` for anything else; `None` when nothing renders. Every read is
/// fallible and leaves no exception pending; a proxy is never looked into beyond
/// `String(proxy)` (whose failure is `None`).
pub(super) fn render_exception<'js>(
    intrinsics: &Intrinsics<'js>,
    thrown: &Value<'js>,
) -> Option<String> {
    if thrown.is_error()
        && let Some(object) = thrown.as_object()
    {
        let name = intrinsics
            .read_text(object, "name")
            .unwrap_or_else(|| "Error".to_owned());
        let message = intrinsics.read_text(object, "message").unwrap_or_default();
        let mut text = if message.is_empty() {
            name
        } else {
            format!("{name}: {message}")
        };
        if let Some(stack) = intrinsics.read_text(object, "stack") {
            let stack = stack.trim_end();
            if !stack.is_empty() {
                text.push('\n');
                text.push_str(stack);
            }
        }
        return Some(text);
    }
    intrinsics.string_of(thrown)
}
