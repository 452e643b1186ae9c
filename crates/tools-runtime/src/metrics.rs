//! Metrics on `tracing`: per tool, calls, errors by code and a latency histogram.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tools_pipeline::{DispatchNext, DispatchRequest, Hook, HookFuture, ToolResult};

/// Upper bounds of the latency buckets (the last bucket is everything above).
pub const LATENCY_BUCKETS: [Duration; 8] = [
    Duration::from_micros(100),
    Duration::from_millis(1),
    Duration::from_millis(10),
    Duration::from_millis(100),
    Duration::from_secs(1),
    Duration::from_secs(10),
    Duration::from_secs(60),
    Duration::from_secs(600),
];

/// The figures of one tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolStats {
    /// Dispatches.
    pub calls: u64,
    /// Failed dispatches by code (`"NONE"` for a failure without one).
    pub errors: BTreeMap<String, u64>,
    /// Counts per latency bucket: `buckets[i]` counts durations up to
    /// `LATENCY_BUCKETS[i]`; the last slot counts the rest.
    pub buckets: [u64; 9],
}

/// How many shards the figures are kept in. Each thread records into one shard, picked
/// once per thread, so workers recording calls at once do not queue on one lock; a
/// snapshot adds the shards up.
const SHARDS: usize = 16;

/// One shard's figures, on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
struct Shard(Mutex<BTreeMap<String, ToolStats>>);

/// The collected figures, per tool. Cheap to clone (shared).
///
/// Recording a call locks the recording thread's own shard (one of 16, picked once per
/// thread) and allocates only for a tool or error code it has not seen; a snapshot locks
/// each shard in turn and adds them up.
#[derive(Clone, Default)]
pub struct Metrics {
    shards: Arc<[Shard; SHARDS]>,
}

/// The shard of the calling thread.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|index| *index)
}

/// Adds `count` failures with `code`, copying the code only the first time it is seen.
fn count_error(errors: &mut BTreeMap<String, u64>, code: &str, count: u64) {
    match errors.get_mut(code) {
        Some(total) => *total += count,
        None => {
            errors.insert(code.to_owned(), count);
        }
    }
}

fn add(into: &mut ToolStats, from: &ToolStats) {
    into.calls += from.calls;
    for (code, count) in &from.errors {
        count_error(&mut into.errors, code, *count);
    }
    for (total, count) in into.buckets.iter_mut().zip(from.buckets) {
        *total += count;
    }
}

impl Metrics {
    /// No figures yet.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// A copy of every tool's figures.
    pub fn snapshot(&self) -> BTreeMap<String, ToolStats> {
        let mut all: BTreeMap<String, ToolStats> = BTreeMap::new();
        for shard in self.shards.iter() {
            let tools = shard.0.lock().unwrap_or_else(PoisonError::into_inner);
            for (tool, stats) in tools.iter() {
                match all.get_mut(tool) {
                    Some(total) => add(total, stats),
                    None => {
                        all.insert(tool.clone(), stats.clone());
                    }
                }
            }
        }
        all
    }

    fn record(&self, tool: &str, code: Option<&str>, elapsed: Duration) {
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|bound| elapsed <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        let Some(shard) = self.shards.get(shard_index()) else {
            return;
        };
        let mut tools = shard.0.lock().unwrap_or_else(PoisonError::into_inner);
        let update = |stats: &mut ToolStats| {
            stats.calls += 1;
            if let Some(code) = code {
                count_error(&mut stats.errors, code, 1);
            }
            if let Some(slot) = stats.buckets.get_mut(bucket) {
                *slot += 1;
            }
        };
        match tools.get_mut(tool) {
            Some(stats) => update(stats),
            None => {
                let mut stats = ToolStats::default();
                update(&mut stats);
                tools.insert(tool.to_owned(), stats);
            }
        }
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("tools", &self.snapshot())
            .finish()
    }
}

/// Records every dispatch into these metrics and emits one `tracing` event (target
/// `tools_runtime::metrics`, fields `tool`, `outcome`, `latency_us`). Register a clone in
/// the execute waterfall: `runtime.on_execute(metrics.clone())`.
impl Hook<DispatchRequest> for Metrics {
    fn call(&self, request: DispatchRequest, next: DispatchNext) -> HookFuture<ToolResult> {
        let metrics = self.clone();
        Box::pin(async move {
            let exec = Arc::clone(request.execution());
            let started = Instant::now();
            let outcome = next.run(request).await;
            let elapsed = started.elapsed();
            let code = match &outcome {
                Ok(result) if result.is_error() => {
                    Some(result.code().map_or("NONE", tools_registry::Code::as_str))
                }
                Ok(_) => None,
                Err(error) => Some(error.code().map_or("NONE", tools_registry::Code::as_str)),
            };
            let tool = exec.name().as_str();
            metrics.record(tool, code, elapsed);
            tracing::info!(
                target: "tools_runtime::metrics",
                tool = %tool,
                outcome = code.unwrap_or("OK"),
                latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                "tool dispatch"
            );
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Calls recorded on many threads (so in several shards) add up in one snapshot, with
    /// their error codes and latency buckets.
    #[test]
    fn records_from_many_threads_add_up() {
        let metrics = Metrics::new();
        std::thread::scope(|scope| {
            for thread in 0..(2 * SHARDS) {
                let metrics = metrics.clone();
                scope.spawn(move || {
                    for call in 0..10 {
                        let code = (call % 5 == 0).then_some("TOOL_TIMEOUT");
                        metrics.record("noop", code, Duration::from_micros(50));
                        if thread % 2 == 0 {
                            metrics.record("slow", None, Duration::from_secs(2));
                        }
                    }
                });
            }
        });
        let snapshot = metrics.snapshot();
        let noop = &snapshot["noop"];
        assert_eq!(noop.calls, 320);
        assert_eq!(
            noop.errors,
            BTreeMap::from([("TOOL_TIMEOUT".to_owned(), 64)])
        );
        assert_eq!(noop.buckets[0], 320);
        let slow = &snapshot["slow"];
        assert_eq!(slow.calls, 160);
        assert!(slow.errors.is_empty());
        assert_eq!(slow.buckets[5], 160);
        assert_eq!(snapshot.len(), 2);
    }
}
