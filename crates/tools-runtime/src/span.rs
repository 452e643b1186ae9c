//! The `tool_call` span of one call: opened before the call, its outcome and duration
//! recorded after it.

use std::time::Instant;

use tools_pipeline::{ToolCall, ToolResult};
use tools_registry::AgentScope;

/// The span of one call.
pub(crate) fn call_span(call: &ToolCall) -> tracing::Span {
    let agent = call.agent().map(AgentScope::key);
    tracing::info_span!(
        "tool_call",
        tool = call.name(),
        call_id = call.call_id(),
        agent = ?agent,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    )
}

/// Records the outcome code (`OK` for a success) and the duration on a call's span.
pub(crate) fn record_outcome(span: &tracing::Span, result: &ToolResult, started: Instant) {
    let outcome = if result.is_error() {
        result.code().map_or("ERROR", tools_registry::Code::as_str)
    } else {
        "OK"
    };
    span.record("outcome", outcome);
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
}
