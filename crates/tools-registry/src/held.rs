//! The per-scope view cache, and views held for the length of a call without a reference
//! count that other workers write: [`HeldView`] and the tool a call resolved to,
//! [`ResolvedTool`].
//!
//! A call keeps what it resolved (its definition, for the body and `finalize_content`)
//! until it is published. Cloning the [`ToolDefinition`] for that writes the definition's
//! reference count, which the calls of that tool on every worker share; cloning the
//! scope's `Arc<View>` writes one that all calls share. Each cached view therefore keeps
//! one handle per thread slot ([`crate::slot`]), made the first time a thread of that slot
//! asks: a call clones its own slot's handle, and borrows the definition from the view.
//!
//! The price: what a call holds keeps the whole view alive (its definitions and its
//! projection), not only its tool. A registry change builds new views; an old one lives
//! until the last call that resolved in it is dropped, so at most one view per registry
//! generation that still has a call in flight.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;

use crate::{ToolDefinition, View};

/// The cached views by scope key (looked up on every call: a fast hash, not SipHash; the
/// keys are the registry's own ids).
type ViewMap = HashMap<u64, Arc<CachedView>, foldhash::fast::FixedState>;

/// The registry's cached views and its version (see [`crate::Registry::generation`]).
///
/// Copied on write: a change replaces the whole map, and a call reads it through
/// [`ArcSwap::load`], which takes no lock and touches no shared reference count, so calls
/// on different workers do not pull one cache line back and forth.
pub(crate) struct ViewCache {
    version: AtomicU64,
    map: ArcSwap<ViewMap>,
}

impl ViewCache {
    pub(crate) fn new() -> ViewCache {
        ViewCache {
            version: AtomicU64::new(0),
            map: ArcSwap::from_pointee(ViewMap::default()),
        }
    }

    /// The version: it moves on every change that can alter what a name resolves to.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Makes every cached view stale.
    pub(crate) fn invalidate(&self) {
        // The version moves first: a view built before this point and still being cached
        // sees the new version when its swap retries, and is not cached.
        self.version.fetch_add(1, Ordering::SeqCst);
        self.map.store(Arc::new(ViewMap::default()));
    }

    /// Forgets the cached view of `key`.
    pub(crate) fn forget(&self, key: u64) {
        self.map.rcu(|map| {
            let mut map = ViewMap::clone(map);
            map.remove(&key);
            map
        });
    }

    /// Runs `f` with the cached view of `key`, borrowed from the cache; without one, with
    /// the view `build` makes (with the version it read), cached unless the version moved
    /// since.
    pub(crate) fn with<R>(
        &self,
        key: u64,
        build: impl FnOnce() -> (View, u64),
        f: impl FnOnce(&CachedView) -> R,
    ) -> R {
        {
            let map = self.map.load();
            if let Some(cached) = map.get(&key) {
                return f(cached);
            }
        }
        let (view, version) = build();
        f(&self.insert(key, view, version))
    }

    /// Caches `view`, built at `version`, unless the version moved since.
    #[cold]
    fn insert(&self, key: u64, view: View, version: u64) -> Arc<CachedView> {
        let cached = Arc::new(CachedView::new(Arc::new(view)));
        self.map.rcu(|map| {
            let mut map = ViewMap::clone(map);
            if self.version() == version {
                map.insert(key, Arc::clone(&cached));
            }
            map
        });
        cached
    }
}

/// A cached view and its per-slot handles.
pub(crate) struct CachedView {
    pub(crate) view: Arc<View>,
    slots: Box<[OnceLock<HeldView>]>,
}

impl CachedView {
    pub(crate) fn new(view: Arc<View>) -> CachedView {
        CachedView {
            view,
            slots: (0..crate::slot::count()).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The current thread slot's handle on the view.
    pub(crate) fn held(&self) -> HeldView {
        match self.slots.get(crate::slot::current()) {
            Some(slot) => slot.get_or_init(|| HeldView::new(&self.view)).clone(),
            // Not reached (there is one slot per thread slot): a handle of its own.
            None => HeldView::new(&self.view),
        }
    }
}

/// A thread slot's handle on a view, aligned so that two slots' reference counts never
/// share a cache line.
#[repr(align(128))]
struct Slot(Arc<View>);

/// A scope's view, held for one call: [`crate::Registry::held_view`]. Dereferences to the
/// [`View`]. Cloning it writes the reference count of the current thread slot's handle,
/// not one that the calls on every worker share.
#[derive(Clone)]
pub struct HeldView(Arc<Slot>);

impl HeldView {
    fn new(view: &Arc<View>) -> HeldView {
        HeldView(Arc::new(Slot(Arc::clone(view))))
    }

    /// The tool `name` resolves to in this view, held with the view (which
    /// [`ResolvedTool::view`] still gives); the view back when it has no such tool.
    ///
    /// # Errors
    ///
    /// The view itself, when it has no tool `name`.
    pub fn resolve(self, name: &str) -> Result<ResolvedTool, HeldView> {
        match self.0.0.position(name) {
            Some(index) => Ok(ResolvedTool { view: self, index }),
            None => Err(self),
        }
    }
}

impl Deref for HeldView {
    type Target = View;

    fn deref(&self) -> &View {
        &self.0.0
    }
}

impl fmt::Debug for HeldView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The definition a name resolved to in a [`HeldView`], borrowed from that view (which
/// it keeps alive): what a call holds instead of a clone of the definition.
#[derive(Clone)]
pub struct ResolvedTool {
    view: HeldView,
    /// The position of the tool in the view; the view is immutable, so it stays valid.
    index: usize,
}

impl ResolvedTool {
    /// The resolved definition.
    pub fn definition(&self) -> &ToolDefinition {
        self.view.at(self.index)
    }

    /// The view the tool was resolved in.
    pub fn view(&self) -> &HeldView {
        &self.view
    }

    /// Why the view refuses a call of this tool ([`crate::View::refusal`]), without looking
    /// the name up again: the position resolved is used.
    pub fn refusal(&self, has_parent: bool, by_host: bool) -> Option<crate::Refusal> {
        let view = &*self.view;
        if view.collapses(self.definition().name().as_str(), has_parent) {
            return Some(crate::Refusal::Collapsed);
        }
        if by_host {
            return None;
        }
        view.exposure_refusal(self.index, has_parent)
    }
}

impl Deref for ResolvedTool {
    type Target = ToolDefinition;

    fn deref(&self) -> &ToolDefinition {
        self.definition()
    }
}

impl fmt::Debug for ResolvedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.definition(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Registry;

    fn same_handle(a: &HeldView, b: &HeldView) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    #[test]
    fn a_thread_reuses_its_slot_handle_and_other_slots_have_their_own() {
        let registry = Registry::new();
        let mine = registry.held_view(None);
        // The first read built and cached the view; from now on this thread's reads clone
        // its slot's handle.
        let again = registry.held_view(None);
        let third = registry.held_view(None);
        assert!(same_handle(&again, &third));
        let mut others = Vec::new();
        for _ in 0..=crate::slot::count() {
            let registry = registry.clone();
            let Ok(held) = std::thread::spawn(move || registry.held_view(None)).join() else {
                panic!("a reader thread panicked");
            };
            others.push(held);
        }
        // Every handle is on the same view.
        for held in others.iter().chain([&mine]) {
            assert!(Arc::ptr_eq(&held.0.0, &again.0.0));
        }
        // At least one other thread used a slot other than this one's.
        assert!(others.iter().any(|held| !same_handle(held, &again)));
    }
}
