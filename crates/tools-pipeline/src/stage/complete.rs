//! The completion stage: the post-execute waterfall, materialization, `finalize_content`
//! exactly once, and the result observers; and [`Pending`], the handle that reaches it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use tools_registry::ToolError;

use crate::catch::CatchUnwind;
use crate::hook::chain::Next;
use crate::hook::set::Stacks;
use crate::outcome::{apply_decision, cancel_success, content_lossless, result_lossless};
#[cfg(feature = "test-util")]
use crate::shared::Probe;
use crate::shared::Shared;
use crate::{Execution, PostRequest, ToolResult};

/// A call with a candidate result, waiting for [`crate::Pipeline::complete`]. Only the
/// pipeline's stages make one; dropping it without completing it means the result is never
/// published (reported through `tracing`).
#[must_use = "a pending call must be completed, or its result is never published"]
pub struct Pending {
    pub(crate) exec: Arc<Execution>,
    result: Option<ToolResult>,
    post: bool,
    stacks: Arc<Stacks>,
}

impl Pending {
    pub(crate) fn new(
        exec: Arc<Execution>,
        stacks: Arc<Stacks>,
        result: ToolResult,
        post: bool,
    ) -> Pending {
        Pending {
            exec,
            result: Some(result),
            post,
            stacks,
        }
    }

    /// The execution.
    pub fn execution(&self) -> &Arc<Execution> {
        &self.exec
    }

    /// The candidate result (before post-execute and finalization).
    pub fn candidate(&self) -> Option<&ToolResult> {
        self.result.as_ref()
    }

    /// Whether the post-execute waterfall will run.
    pub fn takes_post_execute(&self) -> bool {
        self.post
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.result.is_some() && !std::thread::panicking() {
            tracing::warn!(
                tool = %self.exec.name(),
                call_id = self.exec.call_id(),
                "a pending tool call was dropped without being completed; its result is not published"
            );
        }
    }
}

impl fmt::Debug for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("exec", &self.exec)
            .field("result", &self.result)
            .field("post", &self.post)
            .finish_non_exhaustive()
    }
}

/// The completion stage.
pub(crate) async fn complete(shared: &Shared, mut pending: Pending) -> ToolResult {
    let Some(mut result) = pending.result.take() else {
        return ToolResult::aborted_before_dispatch();
    };
    // Borrowed from the pending call, which lives to the end of this stage: cloning the
    // snapshot would write its reference count, shared by the calls on every worker.
    let (exec, stacks, post) = (&pending.exec, &pending.stacks, pending.post);
    if post {
        #[cfg(feature = "test-util")]
        shared.probe(exec, Probe::Post);
        if !stacks.post.hooks.is_empty() {
            let request = PostRequest::new(Arc::clone(exec), result.clone());
            // Lazy, so that a hook that panics while building its future is caught too.
            let run = async { Next::run_stack(&stacks.post, request).await };
            result = match CatchUnwind::new(run).await {
                Ok(Ok(decision)) => {
                    match apply_decision(&shared.registry, exec, result, decision) {
                        Ok(result) => result,
                        Err(err) => ToolResult::failure(err),
                    }
                }
                Ok(Err(err)) => ToolResult::failure(err),
                Err(panic) => ToolResult::failure(ToolError::from_panic(&*panic)),
            };
        }
        result = cancel_success(exec, result);
    }
    finish(shared, stacks, exec, result)
}

/// Materialization, `finalize_content` and publication.
fn finish(
    #[cfg_attr(not(feature = "test-util"), allow(unused_variables))] shared: &Shared,
    stacks: &Stacks,
    exec: &Arc<Execution>,
    result: ToolResult,
) -> ToolResult {
    let mut result = if result_lossless(&result) {
        result
    } else {
        ToolResult::failure(ToolError::new(
            "tool result must be losslessly JSON-serializable",
        ))
    };
    // The view reads the content: made only for a tool that has a `finalize_content`.
    if let Some(def) = exec
        .state
        .finalizer
        .as_ref()
        .filter(|def| def.finalize_content().is_some())
    {
        match def.finalize(&exec.info, &result.view()) {
            Ok(None) => {}
            Ok(Some(content)) => {
                if content_lossless(&content) {
                    result = result.with_content_kept_provenance(content);
                } else {
                    result = ToolResult::failure(ToolError::new(
                        "finalize_content returned content that is not losslessly JSON-serializable",
                    ));
                }
            }
            Err(err) => {
                result =
                    ToolResult::failure(ToolError::new(format!("finalize_content failed: {err}")));
            }
        }
    }
    #[cfg(feature = "test-util")]
    shared.probe(exec, Probe::Published);
    if let Some((span, started)) = &exec.state.span {
        crate::trace::record_outcome(span, &result, *started);
    }
    for (scope, observer) in &stacks.observers {
        if !exec.is_seen_by(scope.as_ref()) {
            continue;
        }
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| observer(exec, &result))) {
            let error = ToolError::from_panic(&*panic);
            tracing::warn!(
                tool = %exec.name(),
                call_id = exec.call_id(),
                "tool {:?} ({}): result observer failed: {error}",
                exec.name().as_str(),
                exec.call_id()
            );
        }
    }
    result
}
