//! Disposal bookkeeping shared by the runtimes: which runs are live, the token that aborts
//! them all, and the wait for their quiescence.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::ContractError;

/// The live runs of one runtime.
#[derive(Debug)]
pub(crate) struct RunRegistry {
    disposed: AtomicBool,
    dispose: CancellationToken,
    live: watch::Sender<usize>,
}

impl RunRegistry {
    /// A registry with no live run.
    pub(crate) fn new() -> Arc<RunRegistry> {
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
    pub(crate) fn enter(self: &Arc<Self>) -> Result<RunGuard, ContractError> {
        self.live.send_modify(|live| *live += 1);
        let guard = RunGuard {
            registry: Arc::clone(self),
        };
        if self.disposed.load(Ordering::SeqCst) {
            return Err(ContractError::Disposed);
        }
        Ok(guard)
    }

    /// The token cancelled by disposal.
    pub(crate) fn dispose_token(&self) -> &CancellationToken {
        &self.dispose
    }

    /// Marks the runtime disposed, aborts every live run and waits until none is left.
    pub(crate) async fn dispose(&self) {
        self.disposed.store(true, Ordering::SeqCst);
        self.dispose.cancel();
        let mut live = self.live.subscribe();
        // The sender lives in `self`, so the wait can only end when the count is zero.
        let _ = live.wait_for(|count| *count == 0).await;
    }
}

/// A registered run.
#[derive(Debug)]
pub(crate) struct RunGuard {
    registry: Arc<RunRegistry>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.registry
            .live
            .send_modify(|live| *live = live.saturating_sub(1));
    }
}
