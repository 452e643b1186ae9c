//! Metrics on `tracing`: per tool, calls, errors by code and a latency histogram.

use std::collections::BTreeMap;
use std::fmt;
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

/// The collected figures, per tool. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Metrics {
    tools: Arc<Mutex<BTreeMap<String, ToolStats>>>,
}

impl Metrics {
    /// No figures yet.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// A copy of every tool's figures.
    pub fn snapshot(&self) -> BTreeMap<String, ToolStats> {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn record(&self, tool: &str, code: Option<&str>, elapsed: Duration) {
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|bound| elapsed <= *bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        let stats = tools.entry(tool.to_owned()).or_default();
        stats.calls += 1;
        if let Some(code) = code {
            *stats.errors.entry(code.to_owned()).or_default() += 1;
        }
        if let Some(slot) = stats.buckets.get_mut(bucket) {
            *slot += 1;
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
