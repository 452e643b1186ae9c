//! Agent scopes: an identity with a parent chain, owning one layer of the registry.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::registry::Shared;

/// An agent's scope: an opaque identity with a parent chain (child → parent → …).
///
/// Registrations, restrictions, guards and a presentation mode can be attached to a scope;
/// they live in the scope's layer of the registry, which is created on demand and dropped
/// when empty. Handles are cheap to clone; when the last handle of a scope is dropped (or
/// [`AgentScope::dispose`] is called), everything attached to it is removed. A child keeps
/// its parent alive.
#[derive(Clone)]
pub struct AgentScope {
    pub(crate) inner: Arc<ScopeInner>,
}

pub(crate) struct ScopeInner {
    pub(crate) key: u64,
    pub(crate) parent: Option<AgentScope>,
    pub(crate) registry: Weak<Shared>,
    /// Whether its disposal was announced already (by `AgentScope::dispose`).
    pub(crate) announced: AtomicBool,
}

impl AgentScope {
    pub(crate) fn new(registry: Weak<Shared>, parent: Option<AgentScope>) -> AgentScope {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        AgentScope {
            inner: Arc::new(ScopeInner {
                key: NEXT.fetch_add(1, Ordering::Relaxed),
                parent,
                registry,
                announced: AtomicBool::new(false),
            }),
        }
    }

    /// An opaque number identifying the scope (unique in the process).
    pub fn key(&self) -> u64 {
        self.inner.key
    }

    /// The parent scope, if any.
    pub fn parent(&self) -> Option<&AgentScope> {
        self.inner.parent.as_ref()
    }

    /// The chain of scope keys, nearest first (this scope, its parent, …).
    pub fn chain(&self) -> Vec<u64> {
        let mut chain = Vec::new();
        let mut next = Some(self);
        while let Some(scope) = next {
            chain.push(scope.inner.key);
            next = scope.inner.parent.as_ref();
        }
        chain
    }

    /// Whether `other` is this scope or one of its ancestors.
    pub fn is_within(&self, other: &AgentScope) -> bool {
        let mut next = Some(self);
        while let Some(scope) = next {
            if scope.inner.key == other.inner.key {
                return true;
            }
            next = scope.inner.parent.as_ref();
        }
        false
    }

    pub(crate) fn shared(&self) -> Option<Arc<Shared>> {
        self.inner.registry.upgrade()
    }
}

impl Drop for ScopeInner {
    fn drop(&mut self) {
        if let Some(shared) = self.registry.upgrade()
            && !shared.drop_layer(self.key)
            && !self.announced.load(Ordering::SeqCst)
        {
            shared.scope_ended(self.key);
        }
    }
}

impl PartialEq for AgentScope {
    fn eq(&self, other: &Self) -> bool {
        self.inner.key == other.inner.key
    }
}

impl Eq for AgentScope {}

impl std::hash::Hash for AgentScope {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.key.hash(state);
    }
}

impl fmt::Debug for AgentScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentScope#{}", self.inner.key)?;
        if let Some(parent) = &self.inner.parent {
            write!(f, " (child of #{})", parent.inner.key)?;
        }
        Ok(())
    }
}
