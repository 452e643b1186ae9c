//! A compiled schema's model-facing JSON: given, or rendered on first use.

use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::Value;

use crate::JsonValue;

/// What renders a deferred schema's JSON (once).
pub(crate) type Render = Box<dyn FnOnce() -> Value + Send>;

/// The JSON a compiled schema shows: the one it was compiled from, or one rendered the
/// first time it is asked for (and kept: every later read is the same `JsonValue`).
pub(crate) enum Source {
    Ready(JsonValue),
    Deferred {
        json: OnceLock<JsonValue>,
        /// Taken by the first read (so what it holds is freed then).
        render: Mutex<Option<Render>>,
    },
}

impl Source {
    pub(crate) fn deferred(render: Render) -> Source {
        Source::Deferred {
            json: OnceLock::new(),
            render: Mutex::new(Some(render)),
        }
    }

    /// The JSON, rendering it first if it is deferred and not yet rendered. Concurrent
    /// first reads wait for one render.
    pub(crate) fn get(&self) -> &JsonValue {
        match self {
            Source::Ready(json) => json,
            Source::Deferred { json, render } => json.get_or_init(|| {
                // A render that panicked poisons nothing it shares: take what is left.
                let render = render.lock().unwrap_or_else(PoisonError::into_inner).take();
                let value = render.map_or(Value::Null, |render| render());
                JsonValue::from_checked(value, "schema")
            }),
        }
    }

    /// Whether the JSON exists yet (always, unless deferred and never read).
    pub(crate) fn is_rendered(&self) -> bool {
        match self {
            Source::Ready(_) => true,
            Source::Deferred { json, .. } => json.get().is_some(),
        }
    }
}
