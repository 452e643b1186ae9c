//! Result shaping (docs/decisions.md, entry 30): success creation, normalization of what
//! wrappers return, post-execute decisions, the cancellation precedence and the lossless
//! checks of materialization.

use std::fmt;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tools_json::{ErrorCode, JsonValue, Limits};
use tools_presentation::ContentBlock;
use tools_registry::{Registry, ToolDefinition, ToolError};

use crate::result::blocked_message;
use crate::{Execution, PostDecision, Replacement, ToolResult};

/// Marks a result as created by the pipeline for `exec`.
pub(crate) fn canonical(result: ToolResult, exec: &Execution) -> ToolResult {
    result.with_provenance(exec.token())
}

/// Applies `change`, keeping the pipeline's mark when the result had it.
pub(crate) fn keep_provenance(
    result: ToolResult,
    change: impl FnOnce(ToolResult) -> ToolResult,
    exec: &Execution,
) -> ToolResult {
    let was = result.is_canonical_for(exec.token());
    let changed = change(result);
    if was {
        canonical(changed, exec)
    } else {
        changed
    }
}

/// The definition a call resolves to now: visible and not refused (collapsed, or out of
/// its exposure).
pub(crate) fn resolve(registry: &Registry, exec: &Execution) -> Option<ToolDefinition> {
    let name = exec.name().as_str();
    registry.with_view(exec.agent(), |view| {
        if view
            .refusal(name, exec.parent().is_some(), exec.by_host)
            .is_some()
        {
            return None;
        }
        view.get(name).cloned()
    })
}

fn unknown(exec: &Execution) -> ToolError {
    ToolError::with_code(
        ErrorCode::UnknownTool,
        format!("unknown tool {:?}", exec.name().as_str()),
    )
}

fn invalid_output(exec: &Execution, detail: impl fmt::Display) -> ToolError {
    ToolError::with_code(
        ErrorCode::InvalidToolOutput,
        format!(
            "tool {:?} returned invalid output: {detail}",
            exec.name().as_str()
        ),
    )
}

/// Creates a success result from a candidate value (docs/decisions.md, entry 30, rule 1).
pub(crate) fn create_success(
    def: &ToolDefinition,
    exec: &Execution,
    value: Value,
) -> Result<ToolResult, ToolError> {
    let limits = Limits::default().with_max_depth(def.output().max_depth());
    let value = JsonValue::with_limits(value, &limits).map_err(|e| {
        invalid_output(
            exec,
            format!(
                "value is not lossless JSON ({})",
                e.violations()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )
    })?;
    let violations = def.output().schema().validate(&value, "value");
    if !violations.is_empty() {
        let data = violations.to_json();
        return Err(invalid_output(exec, violations).with_violations(data));
    }
    let args = exec.arguments();
    // The value's text is made when first read (`ToolResult::content`).
    let content = if def.output().renders_text() {
        None
    } else {
        let content = def
            .output()
            .render(args, &value)
            .map_err(|e| invalid_output(exec, format!("output.render failed: {e}")))?;
        if !content_lossless(&content) {
            return Err(invalid_output(
                exec,
                "output.render returned non-lossless JSON",
            ));
        }
        Some(content)
    };
    let meta = if exec.parent().is_none() {
        match def.output().presentation_meta(args, &value) {
            None => None,
            Some(Err(e)) => {
                return Err(invalid_output(
                    exec,
                    format!("output.presentation_meta failed: {e}"),
                ));
            }
            Some(Ok(meta)) => Some(JsonValue::new(meta).map_err(|_| {
                invalid_output(exec, "output.presentation_meta returned non-lossless JSON")
            })?),
        }
    } else {
        None
    };
    let concludes_turn = exec.state.concluded.load(Ordering::Acquire);
    Ok(ToolResult::created_success(
        value,
        concludes_turn,
        content,
        meta,
        exec.token(),
    ))
}

/// Normalizes what the execute waterfall returned (docs/decisions.md, entry 30, rule 2).
pub(crate) fn normalize(
    registry: &Registry,
    exec: &Execution,
    result: ToolResult,
) -> Result<ToolResult, ToolError> {
    if result.is_canonical_for(exec.token()) || result.is_error() {
        return Ok(result);
    }
    let def = resolve(registry, exec).ok_or_else(|| unknown(exec))?;
    let value = result
        .value()
        .map(|v| tools_json::clone_deep(v))
        .unwrap_or(Value::Null);
    let success = create_success(&def, exec, value)?;
    Ok(keep_provenance(
        success,
        |s| s.with_contexts(result.contexts().to_vec()),
        exec,
    ))
}

/// Replaces a success by the cancellation result when the caller has cancelled
/// (docs/decisions.md, entry 30, rule 4), keeping the contexts.
pub(crate) fn cancel_success(exec: &Execution, result: ToolResult) -> ToolResult {
    if result.is_error() || !exec.is_cancelled() {
        return result;
    }
    let cancelled = if exec.state.body_invoked.load(Ordering::Acquire) {
        ToolResult::aborted()
    } else {
        ToolResult::aborted_before_dispatch()
    };
    cancelled.with_contexts(result.contexts().to_vec())
}

/// Applies a post-execute decision (docs/decisions.md, entry 30, rule 3).
pub(crate) fn apply_decision(
    registry: &Registry,
    exec: &Execution,
    result: ToolResult,
    decision: PostDecision,
) -> Result<ToolResult, ToolError> {
    match decision {
        PostDecision::Block { feedback, contexts } => {
            let message = blocked_message(&feedback);
            Ok(
                ToolResult::failure_with_content(ToolError::new(message), feedback)
                    .with_contexts(contexts),
            )
        }
        PostDecision::Accept {
            replace: None,
            contexts,
        } if contexts.is_empty() => Ok(result),
        PostDecision::Accept { replace, contexts } => {
            let mut all = result.contexts().to_vec();
            all.extend(contexts);
            match replace {
                None => Ok(result.with_contexts(all)),
                Some(Replacement::Content(content)) => Ok(result
                    .with_content_kept_provenance(content)
                    .with_contexts(all)),
                Some(Replacement::Value(value)) => {
                    if result.is_error() {
                        return Err(ToolError::new(
                            "a post-execute decision cannot replace the value of a failed result",
                        ));
                    }
                    let def = resolve(registry, exec).ok_or_else(|| unknown(exec))?;
                    Ok(create_success(&def, exec, value)?.with_contexts(all))
                }
            }
        }
    }
}

/// Whether every block of `content` is lossless JSON.
pub(crate) fn content_lossless(content: &[ContentBlock]) -> bool {
    content.iter().all(|block| match block {
        ContentBlock::Other(other) => other.as_object().values().all(tools_json::is_lossless),
        _ => true,
    })
}

/// Whether a result's content and contexts are lossless JSON.
pub(crate) fn result_lossless(result: &ToolResult) -> bool {
    // Content not rendered yet is the value's text: text is always lossless.
    result.rendered_content().is_none_or(content_lossless)
        && result
            .contexts()
            .iter()
            .all(|c| content_lossless(&c.content))
}
