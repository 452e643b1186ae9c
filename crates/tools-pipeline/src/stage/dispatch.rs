//! The dispatch stage: the execute waterfall around the tool body, then normalization,
//! deferred contexts and the caller-cancellation check. The only stage that may overlap
//! with other calls.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use tools_registry::{ToolContext, ToolError};

use crate::DispatchRequest;
use crate::ToolResult;
use crate::catch::CatchUnwind;
use crate::hook::chain::Next;
use crate::outcome::{cancel_success, keep_provenance, normalize};
#[cfg(feature = "test-util")]
use crate::shared::Probe;
use crate::shared::Shared;
use crate::stage::complete::Pending;
use crate::stage::prepare::Ready;

/// The dispatch stage.
pub(crate) async fn dispatch(shared: &Shared, ready: Ready) -> Pending {
    let Ready { exec, stacks } = ready;
    #[cfg(feature = "test-util")]
    shared.probe(&exec, Probe::Execute);
    let request = DispatchRequest::new(Arc::clone(&exec), Arc::clone(&stacks));
    // Lazy, so that a hook that panics while building its future is caught too.
    let run = async { Next::run_stack(&stacks.dispatch, request).await };
    // A sub-call's body runs in its span (an upstream request it makes is a child of it);
    // a call without one pays nothing for it.
    let caught = match &exec.state.span {
        Some((span, _)) => {
            tracing::Instrument::instrument(CatchUnwind::new(run), span.clone()).await
        }
        None => CatchUnwind::new(run).await,
    };
    let result = match caught {
        Ok(Ok(result)) => result,
        Ok(Err(err)) => return Pending::new(exec, stacks, ToolResult::failure(err), false),
        Err(panic) => {
            let failure = ToolResult::failure(ToolError::from_panic(&*panic));
            return Pending::new(exec, stacks, failure, false);
        }
    };
    let result = match normalize(&shared.registry, &exec, result) {
        Ok(result) => result,
        Err(err) => return Pending::new(exec, stacks, ToolResult::failure(err), false),
    };
    let deferred: Vec<ToolContext> = if exec.state.has_deferred.load(Ordering::Acquire) {
        std::mem::take(
            &mut *exec
                .state
                .deferred
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    } else {
        Vec::new()
    };
    let result = if deferred.is_empty() {
        result
    } else {
        let mut contexts = deferred;
        contexts.extend(result.contexts().iter().cloned());
        keep_provenance(result, |r| r.with_contexts(contexts), &exec)
    };
    let result = cancel_success(&exec, result);
    Pending::new(exec, stacks, result, true)
}
