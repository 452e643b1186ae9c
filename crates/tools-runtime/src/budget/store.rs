//! Where full results that were cut for the model are kept: the [`ResultStore`] trait and
//! its bounded in-memory default.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tools_json::JsonValue;

/// A full result kept under a handle: every byte of the text the model would have read,
/// and the structured value.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredResult {
    /// The tool that produced it.
    pub tool: String,
    /// The full model-facing text (text blocks joined by newlines).
    pub text: String,
    /// The structured value of a success.
    pub value: Option<JsonValue>,
}

/// Keeps full results under handles for `read_result`. Implement it for a durable store;
/// [`MemoryResultStore`] is the default.
pub trait ResultStore: Send + Sync + 'static {
    /// Keeps `result`; returns its handle.
    fn put(&self, result: StoredResult) -> String;
    /// The result under `handle`, if it is still kept.
    fn get(&self, handle: &str) -> Option<Arc<StoredResult>>;
}

/// The in-memory [`ResultStore`]: keeps results until their texts exceed a total size, then
/// evicts the oldest.
#[derive(Debug)]
pub struct MemoryResultStore {
    capacity: usize,
    state: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    next: u64,
    bytes: usize,
    entries: VecDeque<(String, Arc<StoredResult>)>,
}

impl MemoryResultStore {
    /// A store keeping at most `capacity` bytes of text (the newest result is always kept).
    pub fn new(capacity: usize) -> MemoryResultStore {
        MemoryResultStore {
            capacity,
            state: Mutex::new(Kept::default()),
        }
    }
}

impl Default for MemoryResultStore {
    /// 64 MiB of text.
    fn default() -> Self {
        MemoryResultStore::new(64 << 20)
    }
}

impl ResultStore for MemoryResultStore {
    fn put(&self, result: StoredResult) -> String {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.next += 1;
        let handle = format!("res_{}", state.next);
        state.bytes += result.text.len();
        state.entries.push_back((handle.clone(), Arc::new(result)));
        while state.bytes > self.capacity && state.entries.len() > 1 {
            if let Some((_, old)) = state.entries.pop_front() {
                state.bytes -= old.text.len();
            }
        }
        handle
    }

    fn get(&self, handle: &str) -> Option<Arc<StoredResult>> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .entries
            .iter()
            .find(|(h, _)| h == handle)
            .map(|(_, r)| Arc::clone(r))
    }
}
