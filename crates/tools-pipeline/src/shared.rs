//! The state one pipeline's handles share: the registry, the hooks, the approval service
//! and (feature `test-util`) the invariant checker's probe.

use std::sync::{Arc, PoisonError, RwLock};

use tools_registry::{Registration, Registry};

use crate::hook::set::Hooks;
use crate::{Approval, ApprovalStore, MemoryApprovalStore};

/// A stage a call entered, as reported to the test probe.
#[cfg(feature = "test-util")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Pre,
    Execute,
    Post,
    Published,
}

#[cfg(feature = "test-util")]
pub(crate) type ProbeFn = Arc<dyn Fn(&crate::Execution, Probe) + Send + Sync>;

pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) hooks: Arc<Hooks>,
    approval: RwLock<Option<Arc<dyn Approval>>>,
    approval_store: RwLock<Arc<dyn ApprovalStore>>,
    /// The registry listener that makes the store forget disposed scopes.
    pub(crate) scope_listener: std::sync::Mutex<Option<Registration>>,
    #[cfg(feature = "test-util")]
    probe: RwLock<Option<ProbeFn>>,
    /// Set once a probe is installed: calls without one skip the lock.
    #[cfg(feature = "test-util")]
    probing: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub(crate) fn new(registry: Registry) -> Shared {
        Shared {
            hooks: Hooks::new(registry.clone()),
            registry,
            approval: RwLock::new(None),
            approval_store: RwLock::new(Arc::new(MemoryApprovalStore::new())),
            scope_listener: std::sync::Mutex::new(None),
            #[cfg(feature = "test-util")]
            probe: RwLock::new(None),
            #[cfg(feature = "test-util")]
            probing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn approval(&self) -> Option<Arc<dyn Approval>> {
        self.approval
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_approval(&self, approval: Option<Arc<dyn Approval>>) {
        *self
            .approval
            .write()
            .unwrap_or_else(PoisonError::into_inner) = approval;
    }

    pub(crate) fn approval_store(&self) -> Arc<dyn ApprovalStore> {
        Arc::clone(
            &self
                .approval_store
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    pub(crate) fn set_approval_store(&self, store: Arc<dyn ApprovalStore>) {
        *self
            .approval_store
            .write()
            .unwrap_or_else(PoisonError::into_inner) = store;
    }

    #[cfg(feature = "test-util")]
    pub(crate) fn set_probe(&self, probe: ProbeFn) {
        *self.probe.write().unwrap_or_else(PoisonError::into_inner) = Some(probe);
        self.probing
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Reports a stage entry to the probe (feature `test-util`; a no-op otherwise).
    #[cfg(feature = "test-util")]
    pub(crate) fn probe(&self, exec: &crate::Execution, stage: Probe) {
        if !self.probing.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let probe = self
            .probe
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(probe) = probe {
            probe(exec, stage);
        }
    }
}
