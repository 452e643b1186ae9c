//! Lossless JSON across the QuickJS boundary, both ways, in Rust and without recursion.
//!
//! Sandbox to host ([`to_json`]): only `null`, booleans, finite numbers other than `-0`,
//! strings of well-formed UTF-16, dense arrays with `Array.prototype` and no extra
//! properties, and objects whose prototype is `Object.prototype` or `null` (own enumerable
//! string keys of well-formed UTF-16; getters run, and a throwing getter's text becomes the
//! detail). Everything else (`undefined`, functions, symbols, BigInt, proxies, cycles, any
//! other prototype) is refused with a path. The prototypes compared against are the realm's
//! originals, captured before the program runs, so a program that rewrites `JSON`,
//! `Array.isArray`, `Object.prototype` or other globals cannot change the verdict.
//!
//! Host to sandbox ([`to_js`]): every property is *defined* (never assigned), so setters on
//! the prototypes and keys such as `__proto__` are inert. An integer that a JavaScript
//! number cannot hold exactly (beyond ±2^53 and not a representable double) is refused
//! rather than rounded.
//!
//! Neither walk keeps a path while it goes: the open containers on its stack know which
//! member they are at, and the path is rendered from them only when a refusal is reported.

mod to_host;
mod to_sandbox;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use rquickjs::Value;

pub(super) use self::to_host::to_json;
pub(super) use self::to_sandbox::to_js;
use super::intrinsics::Intrinsics;
use tools_codemode_sdk::{BareKey, is_bare_key};

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
#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    /// An array element.
    Index(usize),
    /// An object member.
    Key(&'a str),
}

/// Renders a path such as `$.a[2]["b c"]`.
fn render_path<'a>(steps: impl IntoIterator<Item = Step<'a>>) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
            Step::Key(key) => {
                if is_bare_key(key, BareKey::Ascii) {
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
