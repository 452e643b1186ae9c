//! The registered hooks of one pipeline: registration, removal ([`Hooked`]) and the
//! immutable snapshot ([`Stacks`]) every call starts with.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use arc_swap::ArcSwap;

use tools_registry::{AgentScope, Registry};

use crate::hook::chain::{Entry, Hook, Request, Stack};
use crate::hook::options::HookOptions;
use crate::{DispatchRequest, Execution, PostRequest, PreRequest, ToolResult};

/// A result observer: sees every published result, cannot change it.
pub type Observer = Arc<dyn Fn(&Execution, &ToolResult) + Send + Sync>;

/// The hooks of a pipeline. Changes rebuild the snapshot; calls read it once.
pub(crate) struct Hooks {
    set: Mutex<HookSet>,
    /// Read without a lock: a load writes only to the reading thread's own slot (a
    /// `RwLock`'s read lock wrote a counter every worker shares, twice per call).
    stacks: ArcSwap<Replicas>,
    /// The pipeline's registry, which every snapshot carries for the dispatch stage.
    registry: Registry,
    next_id: AtomicU64,
}

/// One snapshot, built once per thread slot ([`tools_registry::slot`]): a call clones its own
/// thread's copy, so the reference counts it writes are not the other workers' ones.
struct Replicas(Box<[Arc<Stacks>]>);

#[derive(Default)]
pub(crate) struct HookSet {
    pre: Vec<Entry<PreRequest>>,
    dispatch: Vec<Entry<DispatchRequest>>,
    post: Vec<Entry<PostRequest>>,
    observers: Vec<(u64, Option<AgentScope>, Observer)>,
}

/// What the calls that start now go through: each waterfall's hooks and the observers,
/// and the registry the dispatch stage resolves the tool in.
///
/// Aligned to two cache lines, so that the reference counts of two slots' copies (each its
/// own allocation) never share a line.
#[repr(align(128))]
pub(crate) struct Stacks {
    pub(crate) registry: Registry,
    pub(crate) pre: Arc<Stack<PreRequest>>,
    pub(crate) dispatch: Arc<Stack<DispatchRequest>>,
    pub(crate) post: Arc<Stack<PostRequest>>,
    pub(crate) observers: Box<[(Option<AgentScope>, Observer)]>,
}

impl fmt::Debug for Stacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stacks")
            .field("pre", &self.pre.hooks.len())
            .field("dispatch", &self.dispatch.hooks.len())
            .field("post", &self.post.hooks.len())
            .field("observers", &self.observers.len())
            .finish_non_exhaustive()
    }
}

impl Replicas {
    /// One copy of the snapshot of `set` per thread slot.
    fn build(set: &HookSet, registry: &Registry) -> Replicas {
        Replicas(
            (0..tools_registry::slot::count())
                .map(|_| Arc::new(Stacks::build(set, registry)))
                .collect(),
        )
    }
}

impl Stacks {
    fn build(set: &HookSet, registry: &Registry) -> Stacks {
        Stacks {
            registry: registry.clone(),
            pre: Stack::new(set.pre.iter().cloned().collect()),
            dispatch: Stack::new(set.dispatch.iter().cloned().collect()),
            post: Stack::new(set.post.iter().cloned().collect()),
            observers: set
                .observers
                .iter()
                .map(|(_, scope, observer)| (scope.clone(), Arc::clone(observer)))
                .collect(),
        }
    }
}

/// Which list a hook is in.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Pre,
    Dispatch,
    Post,
    Observer,
}

/// Selects a waterfall's list in the hook set.
pub(crate) trait Waterfall: Request {
    /// The waterfall's kind.
    const KIND: Kind;
    /// The waterfall's list.
    fn list(set: &mut HookSet) -> &mut Vec<Entry<Self>>;
}

impl Waterfall for PreRequest {
    const KIND: Kind = Kind::Pre;
    fn list(set: &mut HookSet) -> &mut Vec<Entry<Self>> {
        &mut set.pre
    }
}

impl Waterfall for DispatchRequest {
    const KIND: Kind = Kind::Dispatch;
    fn list(set: &mut HookSet) -> &mut Vec<Entry<Self>> {
        &mut set.dispatch
    }
}

impl Waterfall for PostRequest {
    const KIND: Kind = Kind::Post;
    fn list(set: &mut HookSet) -> &mut Vec<Entry<Self>> {
        &mut set.post
    }
}

impl Hooks {
    pub(crate) fn new(registry: Registry) -> Arc<Hooks> {
        Arc::new(Hooks {
            set: Mutex::new(HookSet::default()),
            stacks: ArcSwap::from_pointee(Replicas::build(&HookSet::default(), &registry)),
            registry,
            next_id: AtomicU64::new(1),
        })
    }

    /// The snapshot a call starting now goes through: the current thread slot's copy.
    pub(crate) fn snapshot(&self) -> Arc<Stacks> {
        let replicas = self.stacks.load();
        match replicas.0.get(tools_registry::slot::current()) {
            Some(stacks) => Arc::clone(stacks),
            // `Replicas::build` makes at least one copy; this only keeps the path total.
            None => Arc::new(Stacks::build(&self.lock(), &self.registry)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HookSet> {
        self.set.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn rebuild(&self, set: &HookSet) {
        self.stacks
            .store(Arc::new(Replicas::build(set, &self.registry)));
    }

    /// Registers `hook` in its waterfall.
    pub(crate) fn add<R: Waterfall>(
        self: &Arc<Self>,
        options: HookOptions,
        hook: Arc<dyn Hook<R>>,
    ) -> Hooked {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let entry = Entry {
            id,
            hook,
            scope: options.scope,
            condition: options.condition,
        };
        {
            let mut set = self.lock();
            let list = R::list(&mut set);
            if options.prepend {
                list.insert(0, entry);
            } else {
                list.push(entry);
            }
            self.rebuild(&set);
        }
        self.hooked(R::KIND, id)
    }

    /// Registers a result observer.
    pub(crate) fn add_observer(
        self: &Arc<Self>,
        options: HookOptions,
        observer: Observer,
    ) -> Hooked {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        {
            let mut set = self.lock();
            let entry = (id, options.scope, observer);
            if options.prepend {
                set.observers.insert(0, entry);
            } else {
                set.observers.push(entry);
            }
            self.rebuild(&set);
        }
        self.hooked(Kind::Observer, id)
    }

    fn hooked(self: &Arc<Self>, kind: Kind, id: u64) -> Hooked {
        Hooked {
            hooks: Arc::downgrade(self),
            kind,
            id,
            armed: AtomicBool::new(true),
        }
    }

    fn remove(&self, kind: Kind, id: u64) {
        let mut set = self.lock();
        match kind {
            Kind::Pre => set.pre.retain(|h| h.id != id),
            Kind::Dispatch => set.dispatch.retain(|h| h.id != id),
            Kind::Post => set.post.retain(|h| h.id != id),
            Kind::Observer => set.observers.retain(|(other, _, _)| *other != id),
        }
        self.rebuild(&set);
    }

    /// `(pre, execute, post, observers)` counts.
    pub(crate) fn counts(&self) -> [usize; 4] {
        let set = self.lock();
        [
            set.pre.len(),
            set.dispatch.len(),
            set.post.len(),
            set.observers.len(),
        ]
    }
}

/// A hook registration; dropping it (or [`Hooked::dispose`]) removes the hook for the calls
/// that start afterwards. [`Hooked::keep`] keeps it for the pipeline's lifetime.
#[must_use = "dropping a Hooked removes the hook at once; call .keep() to make it permanent"]
pub struct Hooked {
    hooks: Weak<Hooks>,
    kind: Kind,
    id: u64,
    armed: AtomicBool,
}

impl Hooked {
    /// Removes the hook now. Idempotent.
    pub fn dispose(&self) {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return;
        }
        if let Some(hooks) = self.hooks.upgrade() {
            hooks.remove(self.kind, self.id);
        }
    }

    /// Keeps the hook for the pipeline's lifetime.
    pub fn keep(self) {
        self.armed.store(false, Ordering::SeqCst);
    }
}

impl Drop for Hooked {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl fmt::Debug for Hooked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooked")
            .field("kind", &self.kind)
            .field("armed", &self.armed.load(Ordering::SeqCst))
            .finish()
    }
}
