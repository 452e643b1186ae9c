//! The span of one call, named and attributed as the OpenTelemetry GenAI semantic
//! conventions say for tool execution: `execute_tool {gen_ai.tool.name}` (through the
//! `otel.name` field, which `tracing-opentelemetry` takes as the span's name), with
//! `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`,
//! and `error.type` (the call's code) when it fails. The `tracing` name is `tool_call`,
//! with the short fields `tool`, `call_id`, `agent`, `outcome` and `duration_us` for
//! plain `tracing` subscribers.
//!
//! The runtime opens it around each call it is given; the pipeline opens it itself for a
//! Code Mode sub-call, as a child of the `run_code` call's span. The call's arguments and
//! result are not recorded unless a hook records them
//! (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): they may hold secrets.

use std::time::Instant;

use tools_registry::AgentScope;

use crate::{ToolCall, ToolResult};

/// The span of `call` (disabled, and free, without a subscriber that wants it).
pub fn call_span(call: &ToolCall) -> tracing::Span {
    let tool = call.name();
    let agent = call.agent().map(AgentScope::key);
    tracing::info_span!(
        "tool_call",
        "otel.name" = format!("execute_tool {tool}"),
        "otel.kind" = "internal",
        "otel.status_code" = tracing::field::Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
        "gen_ai.tool.call.id" = call.call_id(),
        "gen_ai.tool.type" = "function",
        "gen_ai.tool.call.arguments" = tracing::field::Empty,
        "gen_ai.tool.call.result" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        tool,
        call_id = call.call_id(),
        agent = ?agent,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    )
}

/// Records the outcome (`OK`, or the code), the duration since `started`, and for a
/// failure `error.type` and the error status, on a call's span.
pub fn record_outcome(span: &tracing::Span, result: &ToolResult, started: Instant) {
    if result.is_error() {
        let code = result.code().map_or("ERROR", tools_registry::Code::as_str);
        span.record("outcome", code);
        span.record("error.type", code);
        span.record("otel.status_code", "ERROR");
    } else {
        span.record("outcome", "OK");
    }
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
}
