//! The console shim's rendering: strings raw, every other value in a bounded, Node-like
//! inspect form (depth 4, 100 items per container, 10 000 characters per string, and a
//! budget of rendered values per argument). Accessors are shown as `[Getter]` and never
//! run; everything else is read through the realm's original intrinsics.

use std::collections::HashSet;

use rquickjs::object::Filter;
use rquickjs::{Object, Type, Value};

use crate::intrinsics::Intrinsics;
use tools_codemode_sdk::{BareKey, is_bare_key};

/// Containers nested deeper than this render as `[Object]` / `[Array]`.
const MAX_DEPTH: usize = 4;
/// Items shown per container.
const MAX_ITEMS: usize = 100;
/// Characters shown per string.
const MAX_STRING_CHARS: usize = 10_000;
/// Values rendered per console argument before the rest is elided.
const MAX_NODES: usize = 10_000;

/// Renders the arguments of one console call: joined by spaces, strings raw.
pub(super) fn render_args<'js>(intrinsics: &Intrinsics<'js>, args: &[Value<'js>]) -> String {
    let mut out = String::new();
    for (index, arg) in args.iter().enumerate() {
        if index > 0 {
            out.push(' ');
        }
        if let Some(text) = arg.as_string() {
            // A string with a lone surrogate has no UTF-8 form: it shows as U+FFFD.
            let text = intrinsics.settle(text.to_string());
            out.push_str(text.as_deref().unwrap_or("\u{fffd}"));
        } else {
            let mut state = State {
                intrinsics,
                seen: HashSet::new(),
                nodes: 0,
            };
            state.value(&mut out, arg, 0);
        }
    }
    out
}

struct State<'a, 'js> {
    intrinsics: &'a Intrinsics<'js>,
    seen: HashSet<Value<'js>>,
    nodes: usize,
}

/// A JavaScript number as `Number.prototype.toString` writes it.
fn number(value: f64) -> String {
    if value == 0.0 && value.is_sign_negative() {
        return "-0".to_owned();
    }
    ryu_js::Buffer::new().format(value).to_owned()
}

/// A property key as an object literal would write it.
fn key(out: &mut String, key: &str) {
    if is_bare_key(key, BareKey::Unicode) {
        out.push_str(key);
    } else {
        quoted(out, key);
    }
}

/// A nested string: single-quoted, escaped, and cut after [`MAX_STRING_CHARS`].
fn quoted(out: &mut String, text: &str) {
    out.push('\'');
    for (shown, c) in text.chars().enumerate() {
        if shown == MAX_STRING_CHARS {
            let rest = text.chars().count() - shown;
            out.push_str(&format!("'... {rest} more characters"));
            return;
        }
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

impl<'js> State<'_, 'js> {
    fn value(&mut self, out: &mut String, value: &Value<'js>, depth: usize) {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            out.push('…');
            return;
        }
        // A proxy is never looked into: its traps are program code (and a revoked one
        // throws on every operation).
        if value.is_proxy() {
            out.push_str("[Proxy]");
            return;
        }
        match value.type_of() {
            Type::Undefined => out.push_str("undefined"),
            Type::Null => out.push_str("null"),
            Type::Bool => out.push_str(if value.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            Type::Int => out.push_str(&value.as_int().unwrap_or(0).to_string()),
            Type::Float => out.push_str(&number(value.as_float().unwrap_or(f64::NAN))),
            Type::String => match value
                .as_string()
                .and_then(|s| self.intrinsics.settle(s.to_string()))
            {
                Some(text) if depth > 0 => quoted(out, &text),
                Some(text) => out.push_str(&text),
                _ => out.push('\u{fffd}'),
            },
            Type::BigInt => {
                out.push_str(&self.string(value));
                out.push('n');
            }
            Type::Symbol => out.push_str(&self.string(value)),
            Type::Function | Type::Constructor => {
                let name = self
                    .intrinsics
                    .own_text(value, "name")
                    .filter(|name| !name.is_empty());
                match name {
                    Some(name) => out.push_str(&format!("[Function: {name}]")),
                    None => out.push_str("[Function (anonymous)]"),
                }
            }
            Type::Proxy => out.push_str("[Proxy]"),
            _ => match value.as_object() {
                Some(object) => self.object(out, value, object, depth),
                None => out.push_str("[unknown]"),
            },
        }
    }

    /// `String(value)` through the captured intrinsic; empty when it throws.
    fn string(&self, value: &Value<'js>) -> String {
        self.intrinsics.string_of(value).unwrap_or_default()
    }

    fn object(&mut self, out: &mut String, value: &Value<'js>, object: &Object<'js>, depth: usize) {
        if value.is_error() {
            let stack = self.intrinsics.own_text(value, "stack");
            let message = self
                .intrinsics
                .own_text(value, "message")
                .unwrap_or_default();
            match stack {
                Some(stack) if stack.starts_with("    at") || stack.is_empty() => {
                    out.push_str(&format!("Error: {message}\n{stack}"));
                }
                Some(stack) => out.push_str(&stack),
                None => out.push_str(&format!("Error: {message}")),
            }
            return;
        }
        let is_array = value.is_array();
        if self.seen.contains(value) {
            out.push_str("[Circular]");
            return;
        }
        let prefix = self.prefix(value, is_array);
        if depth > MAX_DEPTH {
            out.push_str(if is_array { "[Array]" } else { "[Object]" });
            return;
        }
        let mut keys: Vec<String> = Vec::new();
        for key in object.own_keys::<String>(Filter::new().string().enum_only()) {
            match self.intrinsics.settle(key) {
                Some(key) => keys.push(key),
                None => break,
            }
        }
        let (open, close) = if is_array { ('[', ']') } else { ('{', '}') };
        out.push_str(&prefix);
        if keys.is_empty() {
            out.push(open);
            out.push(close);
            return;
        }
        self.seen.insert(value.clone());
        out.push(open);
        out.push(' ');
        for (index, name) in keys.iter().enumerate() {
            if index == MAX_ITEMS {
                let rest = keys.len() - MAX_ITEMS;
                out.push_str(&format!(
                    "... {rest} more item{}",
                    if rest == 1 { "" } else { "s" }
                ));
                break;
            }
            if index > 0 {
                out.push_str(", ");
            }
            let is_index = is_array && name.parse::<u32>().is_ok();
            if !is_index {
                key(out, name);
                out.push_str(": ");
            }
            match self.intrinsics.own_data(value, name) {
                Some(child) => self.value(out, &child, depth + 1),
                None => out.push_str("[Getter]"),
            }
        }
        out.push(' ');
        out.push(close);
        self.seen.remove(value);
    }

    /// `Name ` for instances of classes, `[Object: null prototype] ` for bare objects.
    /// The prototype is read from the object's shape, never from a proxy; a value that is
    /// a proxy gives no prefix.
    fn prefix(&self, value: &Value<'js>, is_array: bool) -> String {
        let Some(prototype) = self.intrinsics.prototype_of(value) else {
            return String::new();
        };
        let expected = if is_array {
            &self.intrinsics.array_prototype
        } else {
            &self.intrinsics.object_prototype
        };
        if prototype.is_null() {
            return "[Object: null prototype] ".to_owned();
        }
        if prototype == *expected.as_value() {
            return String::new();
        }
        self.intrinsics
            .own_data(&prototype, "constructor")
            .and_then(|c| self.intrinsics.own_text(&c, "name"))
            .filter(|name| !name.is_empty())
            .map(|name| format!("{name} "))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(number(1.0), "1");
        assert_eq!(number(-0.0), "-0");
        assert_eq!(number(1e21), "1e+21");
        assert_eq!(number(0.1), "0.1");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn nested_strings_are_quoted_and_cut() {
        let mut out = String::new();
        quoted(&mut out, "it's\n");
        assert_eq!(out, "'it\\'s\\n'");
        let mut out = String::new();
        quoted(&mut out, &"x".repeat(MAX_STRING_CHARS + 5));
        assert!(out.ends_with("'... 5 more characters"));
    }
}
