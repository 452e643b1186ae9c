//! Disposal bookkeeping shared by the runtimes: which runs are live, the token that aborts
//! them all, and the wait for their quiescence.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    ABORTED_MESSAGE, CodeRunFailure, CodeRunRequest, CodeRunResult, ContractError,
    DISPOSED_MESSAGE, FailureKind, OutputLedger, validate_bindings,
};

/// A run admitted by [`RunRegistry::admit`]: its registration and its output ledger.
pub type Admitted = (RunGuard, OutputLedger);

/// The live runs of one runtime.
#[derive(Debug)]
pub struct RunRegistry {
    disposed: AtomicBool,
    dispose: CancellationToken,
    live: watch::Sender<usize>,
}

impl RunRegistry {
    /// A registry with no live run.
    pub fn new() -> Arc<RunRegistry> {
        Arc::new(RunRegistry {
            disposed: AtomicBool::new(false),
            dispose: CancellationToken::new(),
            live: watch::Sender::new(0),
        })
    }

    /// Registers a run; the guard unregisters it when dropped.
    ///
    /// # Errors
    ///
    /// [`ContractError::Disposed`] after disposal.
    pub fn enter(self: &Arc<Self>) -> Result<RunGuard, ContractError> {
        self.live.send_modify(|live| *live += 1);
        let guard = RunGuard {
            registry: Arc::clone(self),
        };
        if self.disposed.load(Ordering::SeqCst) {
            return Err(ContractError::Disposed);
        }
        Ok(guard)
    }

    /// The checks every runtime makes before it starts anything: valid bindings, not
    /// disposed, not already aborted. `Ok(Err(result))` is a run that ends before it starts
    /// (`abort`).
    ///
    /// # Errors
    ///
    /// [`ContractError`] for invalid bindings or a run after disposal.
    pub fn admit(
        self: &Arc<Self>,
        request: &CodeRunRequest,
        max_output_bytes: usize,
    ) -> Result<Result<Admitted, CodeRunResult>, ContractError> {
        validate_bindings(&request.namespaces)?;
        let guard = self.enter()?;
        let ledger = OutputLedger::new(max_output_bytes);
        if request.cancel.is_cancelled() {
            return Ok(Err(
                ledger.fail(CodeRunFailure::new(FailureKind::Abort, ABORTED_MESSAGE))
            ));
        }
        if self.dispose.is_cancelled() {
            return Ok(Err(
                ledger.fail(CodeRunFailure::new(FailureKind::Abort, DISPOSED_MESSAGE))
            ));
        }
        Ok(Ok((guard, ledger)))
    }

    /// The token cancelled by disposal.
    pub fn dispose_token(&self) -> &CancellationToken {
        &self.dispose
    }

    /// Marks the runtime disposed, aborts every live run and waits until none is left.
    pub async fn dispose(&self) {
        self.disposed.store(true, Ordering::SeqCst);
        self.dispose.cancel();
        let mut live = self.live.subscribe();
        // The sender lives in `self`, so the wait can only end when the count is zero.
        let _ = live.wait_for(|count| *count == 0).await;
    }
}

/// A registered run.
#[derive(Debug)]
pub struct RunGuard {
    registry: Arc<RunRegistry>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.registry
            .live
            .send_modify(|live| *live = live.saturating_sub(1));
    }
}
