//! The registry: layers, views, registrations and change notifications.
//!
//! Longer than most files here, on purpose: `Registry`, its shared state and `Registration`
//! stay together because a registration undoes its effect through the shared state's
//! private methods, and splitting them would make two files import each other. The
//! view cache and its per-call handles are in `held.rs`, the layers in `layers.rs`.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use crate::change::Change;
use crate::held::{CachedView, HeldView, ViewCache};
use crate::layers::{GLOBAL, State, build_view, inherited_names, scope_of};
use crate::projection::ToolSpec;
use crate::view::{SearchCache, View};
use crate::{
    AgentScope, Error, Guard, PresentationMode, RUN_CODE, ToolDefinition, ToolFilter, ToolName,
};

mod exposing;

type Listener = Arc<dyn Fn(&Change) + Send + Sync>;

/// The registry of tools: what exists, and what each agent can see.
///
/// Cheap to clone (a handle to shared state), `Send + Sync`. Registration is rare and takes
/// a write lock; lookups are hot and read a per-scope [`View`] that is built once after each
/// change and then shared, so a lookup costs the same with one tool as with thousands. No
/// lock is held while user code (listeners, classifiers) runs.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_registry::{OutputDecl, Registry, ToolDefinition, ToolFilter};
///
/// let tool = |name: &str| {
///     ToolDefinition::builder(name, "a tool")
///         .output(OutputDecl::text(json!({"type": "string"})))
///         .body(|_args, _ctx| async { Ok(json!("ok")) })
///         .build()
/// };
/// let registry = Registry::new();
/// registry.register(tool("read")?)?.keep();
/// registry.register(tool("bash")?)?.keep();
///
/// let agent = registry.scope();
/// agent.register(tool("report")?)?.keep();
/// agent.restrict(ToolFilter::deny(["bash"]))?.keep();
///
/// let names = |v: &tools_registry::View| v.names().map(|n| n.to_string()).collect::<Vec<_>>();
/// assert_eq!(names(&registry.view(Some(&agent))), ["read", "report"]);
/// assert_eq!(names(&registry.view(None)), ["read", "bash"]);
/// # Ok::<(), tools_registry::Error>(())
/// ```
#[derive(Clone)]
pub struct Registry {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    state: RwLock<State>,
    views: ViewCache,
    listeners: RwLock<Vec<(u64, Listener)>>,
    default_mode: PresentationMode,
    transport: RwLock<Option<ToolDefinition>>,
    /// Registered definitions (the transport included) that declare a timeout budget;
    /// raised before such a definition becomes visible, lowered after it is gone.
    timeouts: AtomicUsize,
    weak: Weak<Shared>,
    /// The search indexes built lately, shared by views over the same deferred tools.
    searches: Arc<SearchCache>,
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// Builds a [`Registry`].
#[derive(Debug, Default)]
#[must_use]
pub struct RegistryBuilder {
    default_mode: PresentationMode,
}

impl RegistryBuilder {
    /// The presentation mode of every scope that declares none (default `native`).
    pub fn default_mode(mut self, mode: PresentationMode) -> Self {
        self.default_mode = mode;
        self
    }

    /// The registry.
    pub fn build(self) -> Registry {
        let shared = Arc::new_cyclic(|weak| Shared {
            state: RwLock::new(State::default()),
            views: ViewCache::new(),
            listeners: RwLock::new(Vec::new()),
            default_mode: self.default_mode,
            transport: RwLock::new(None),
            timeouts: AtomicUsize::new(0),
            weak: weak.clone(),
            searches: Arc::default(),
        });
        Registry { shared }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    /// A registry in `native` mode.
    pub fn new() -> Registry {
        Registry::builder().build()
    }

    /// A registry builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The mode of scopes that declare none.
    pub fn default_mode(&self) -> PresentationMode {
        self.shared.default_mode
    }

    /// A new top-level agent scope.
    pub fn scope(&self) -> AgentScope {
        AgentScope::new(Arc::downgrade(&self.shared), None)
    }

    /// A new scope whose parent is `parent`.
    pub fn child_scope(&self, parent: &AgentScope) -> AgentScope {
        AgentScope::new(Arc::downgrade(&self.shared), Some(parent.clone()))
    }

    /// Registers a tool in the global layer.
    ///
    /// # Errors
    ///
    /// [`Error::ReservedName`] for `run_code`; [`Error::Duplicate`] when the name is taken
    /// in the global layer. Nothing is retained on error.
    pub fn register(&self, definition: ToolDefinition) -> Result<Registration, Error> {
        self.shared.register(GLOBAL, definition)
    }

    /// Adds a guard that every call is checked by (global guards run first).
    pub fn guard(&self, guard: impl Guard) -> Registration {
        self.shared.add_guard(GLOBAL, Arc::new(guard))
    }

    /// Whether any registered definition (in any scope, the Code Mode transport included)
    /// declares a timeout budget. When `false`, [`ToolDefinition::timeout`] is `None` for
    /// whatever a call resolves to now: a timeout wrapper may leave itself out of the
    /// stack (see `tools_pipeline::HookOptions::active_when`). One atomic load.
    pub fn has_timeouts(&self) -> bool {
        self.shared.timeouts.load(Ordering::SeqCst) > 0
    }

    /// The registry's generation: a number that moves on every change that can change
    /// what a name resolves to (a registration or disposal, a restriction, a mode, the
    /// transport), before the change returns. A definition looked up in a view of
    /// generation `g` ([`View::generation`]) is still the one a fresh lookup returns while
    /// this is `g`: a scheduler that prepared a call can skip resolving its tool again at
    /// dispatch. One atomic load.
    pub fn generation(&self) -> u64 {
        self.shared.views.version()
    }

    /// Calls `listener` after every change (registration, disposal, restriction, mode). A
    /// listener cannot veto; a panic in one is caught and reported through `tracing`.
    pub fn on_change(&self, listener: impl Fn(&Change) + Send + Sync + 'static) -> Registration {
        let shared = &self.shared;
        let id = {
            let mut state = write(&shared.state);
            state.next_id += 1;
            state.next_id
        };
        write(&shared.listeners).push((id, Arc::new(listener)));
        Registration::new(shared, Effect::Listener { id })
    }

    /// Installs the Code Mode transport shown to `code`/`both` scopes. It must be named
    /// `run_code`; it replaces a previous one.
    ///
    /// # Errors
    ///
    /// [`Error::ReservedName`] when the definition is not named `run_code` (the name is
    /// reserved for this one purpose).
    pub fn install_code_transport(&self, transport: ToolDefinition) -> Result<(), Error> {
        if !transport.name().is_run_code() {
            return Err(Error::ReservedName);
        }
        let budget = transport.timeout().is_some();
        if budget {
            self.shared.timeouts.fetch_add(1, Ordering::SeqCst);
        }
        let replaced = write(&self.shared.transport).replace(transport);
        if replaced.is_some_and(|old| old.timeout().is_some()) {
            self.shared.timeouts.fetch_sub(1, Ordering::SeqCst);
        }
        self.shared.changed(&[Change::TransportInstalled]);
        Ok(())
    }

    /// The visibility view of a scope (`None`: a call without an agent).
    pub fn view(&self, agent: Option<&AgentScope>) -> Arc<View> {
        self.shared.view(agent)
    }

    /// Runs `f` with the current view of `agent`'s scope, borrowed: what the per-call path
    /// uses. Unlike [`Registry::view`] it clones no `Arc` that other threads share; `f`
    /// should be short (the borrowed view is pinned while it runs).
    pub fn with_view<R>(&self, agent: Option<&AgentScope>, f: impl FnOnce(&View) -> R) -> R {
        self.shared.with_view(agent, f)
    }

    /// The current view of `agent`'s scope, held for the length of a call: what the
    /// per-call path keeps. Cloning it (or a [`crate::ResolvedTool`] from it) writes the
    /// reference count of the current thread slot's handle on the view (see
    /// [`crate::slot`]), not one that the calls on every worker share.
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_registry::{OutputDecl, Registry, ToolDefinition};
    ///
    /// let registry = Registry::new();
    /// let tool = ToolDefinition::builder("echo", "echoes")
    ///     .output(OutputDecl::text(json!({"type": "string"})))
    ///     .body(|_args, _ctx| async { Ok(json!("echoed")) })
    ///     .build()?;
    /// let registration = registry.register(tool)?;
    /// let resolved = registry.held_view(None).resolve("echo").ok().unwrap();
    /// // What a call holds outlives the registration.
    /// registration.dispose();
    /// assert!(registry.held_view(None).resolve("echo").is_err());
    /// assert_eq!(resolved.definition().name().as_str(), "echo");
    /// # Ok::<(), tools_registry::Error>(())
    /// ```
    pub fn held_view(&self, agent: Option<&AgentScope>) -> HeldView {
        self.shared.held_view(agent)
    }

    /// The definition a call to `name` from `agent` resolves to.
    pub fn get(&self, name: &str, agent: Option<&AgentScope>) -> Option<ToolDefinition> {
        self.view(agent).get(name).cloned()
    }

    /// The model-facing projection of what `agent` can see (its capability catalogue;
    /// includes `run_code` in `code`/`both` scopes).
    pub fn schemas(&self, agent: Option<&AgentScope>) -> Arc<[ToolSpec]> {
        self.view(agent).schemas()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = read(&self.shared.state);
        f.debug_struct("Registry")
            .field("default_mode", &self.shared.default_mode)
            .field("layers", &state.layers.len())
            .finish_non_exhaustive()
    }
}

impl AgentScope {
    fn registry(&self) -> Result<Arc<Shared>, Error> {
        self.shared().ok_or(Error::RegistryGone)
    }

    /// Registers a tool in this scope's layer. It shadows an inherited tool of the same
    /// name (keeping that tool's position) and is exempt from every restriction.
    ///
    /// # Errors
    ///
    /// [`Error::ReservedName`], [`Error::Duplicate`] (in this scope), [`Error::RegistryGone`].
    pub fn register(&self, definition: ToolDefinition) -> Result<Registration, Error> {
        self.registry()?.register(self.key(), definition)
    }

    /// Masks the tools this scope inherits (from the global layer and its ancestors). The
    /// mask is evaluated live: a deny list admits tools registered later, an allow list
    /// excludes them; several masks intersect; the scope's own tools are exempt; an
    /// ancestor's mask also applies to its descendants.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRestriction`], [`Error::RestrictReserved`] (naming `run_code`),
    /// [`Error::RestrictUnknown`] (naming a tool the scope does not inherit now),
    /// [`Error::RegistryGone`].
    pub fn restrict(&self, filter: ToolFilter) -> Result<Registration, Error> {
        self.registry()?.restrict(self, filter)
    }

    /// Adds a guard for calls from this scope and its descendants (run after the global
    /// guards and the guards of its ancestors).
    ///
    /// # Errors
    ///
    /// [`Error::RegistryGone`].
    pub fn guard(&self, guard: impl Guard) -> Result<Registration, Error> {
        Ok(self.registry()?.add_guard(self.key(), Arc::new(guard)))
    }

    /// Declares this scope's presentation mode (nearest declaration on the chain wins).
    ///
    /// # Errors
    ///
    /// [`Error::ModeConflict`] when the scope already declared one, [`Error::RegistryGone`].
    pub fn present_as(&self, mode: PresentationMode) -> Result<Registration, Error> {
        self.registry()?.present_as(self.key(), mode)
    }

    /// Removes everything attached to this scope (its registrations, restrictions, guards
    /// and mode). Idempotent. The handle stays usable.
    pub fn dispose(&self) {
        if let Some(shared) = self.shared()
            && shared.drop_layer(self.key())
        {
            self.inner.announced.store(true, Ordering::SeqCst);
        }
    }
}

impl Shared {
    fn next_id(state: &mut State) -> u64 {
        state.next_id += 1;
        state.next_id
    }

    fn register(&self, layer_key: u64, definition: ToolDefinition) -> Result<Registration, Error> {
        if definition.name().is_run_code() {
            return Err(Error::ReservedName);
        }
        let name = definition.name().clone();
        let id = {
            let mut state = write(&self.state);
            let id = Shared::next_id(&mut state);
            let layer = state.layers.entry(layer_key).or_default();
            if layer.tools.contains_key(&name) {
                let empty = layer.is_empty();
                if empty && layer_key != GLOBAL {
                    state.layers.remove(&layer_key);
                }
                return Err(Error::Duplicate {
                    tool: name.to_string(),
                    scoped: layer_key != GLOBAL,
                });
            }
            if definition.timeout().is_some() {
                self.timeouts.fetch_add(1, Ordering::SeqCst);
            }
            layer.tools.insert(name.clone(), (id, definition));
            id
        };
        self.changed(&[Change::ToolRegistered {
            name: name.clone(),
            scope: scope_of(layer_key),
        }]);
        Ok(Registration::new(
            self,
            Effect::Tool {
                layer: layer_key,
                name,
                id,
            },
        ))
    }

    fn add_guard(&self, layer_key: u64, guard: Arc<dyn Guard>) -> Registration {
        let id = {
            let mut state = write(&self.state);
            let id = Shared::next_id(&mut state);
            state
                .layers
                .entry(layer_key)
                .or_default()
                .guards
                .push((id, guard));
            id
        };
        // Guards change views but are not announced (no change event).
        self.invalidate();
        Registration::new(
            self,
            Effect::Guard {
                layer: layer_key,
                id,
            },
        )
    }

    fn restrict(&self, scope: &AgentScope, filter: ToolFilter) -> Result<Registration, Error> {
        if filter.is_empty() {
            return Err(Error::EmptyRestriction);
        }
        if filter.names().contains(&RUN_CODE) {
            return Err(Error::RestrictReserved);
        }
        let key = scope.key();
        let id = {
            let mut state = write(&self.state);
            let inherited = inherited_names(&state, scope);
            let unknown: Vec<String> = filter
                .names()
                .into_iter()
                .filter(|name| !inherited.contains_key(*name))
                .map(str::to_owned)
                .collect();
            if !unknown.is_empty() {
                let mut known: Vec<String> = inherited.keys().map(ToString::to_string).collect();
                known.sort_unstable();
                return Err(Error::RestrictUnknown { unknown, known });
            }
            let id = Shared::next_id(&mut state);
            state
                .layers
                .entry(key)
                .or_default()
                .restrictions
                .push((id, filter));
            id
        };
        self.changed(&[Change::RestrictionAdded { scope: key }]);
        Ok(Registration::new(
            self,
            Effect::Restriction { layer: key, id },
        ))
    }

    fn present_as(&self, key: u64, mode: PresentationMode) -> Result<Registration, Error> {
        let id = {
            let mut state = write(&self.state);
            let id = Shared::next_id(&mut state);
            let layer = state.layers.entry(key).or_default();
            if let Some((_, existing)) = layer.mode {
                return Err(Error::ModeConflict {
                    new: mode,
                    existing,
                });
            }
            layer.mode = Some((id, mode));
            id
        };
        self.changed(&[Change::ModeDeclared { scope: key, mode }]);
        Ok(Registration::new(self, Effect::Mode { layer: key, id }))
    }

    /// Undoes one effect; a no-op when it is already gone.
    fn remove(&self, effect: &Effect) {
        if let Effect::Listener { id } = effect {
            write(&self.listeners).retain(|(other, _)| other != id);
            return;
        }
        let change = {
            let mut state = write(&self.state);
            let layer_key = effect.layer();
            let Some(layer) = state.layers.get_mut(&layer_key) else {
                return;
            };
            let change = match effect {
                Effect::Tool { name, id, .. } => {
                    if layer.tools.get(name).is_some_and(|(other, _)| other == id) {
                        if let Some((_, removed)) = layer.tools.shift_remove(name)
                            && removed.timeout().is_some()
                        {
                            self.timeouts.fetch_sub(1, Ordering::SeqCst);
                        }
                        Some(Change::ToolRemoved {
                            name: name.clone(),
                            scope: scope_of(layer_key),
                        })
                    } else {
                        return;
                    }
                }
                Effect::Restriction { id, .. } => {
                    let before = layer.restrictions.len();
                    layer.restrictions.retain(|(other, _)| other != id);
                    if layer.restrictions.len() == before {
                        return;
                    }
                    Some(Change::RestrictionLifted { scope: layer_key })
                }
                Effect::Guard { id, .. } => {
                    let before = layer.guards.len();
                    layer.guards.retain(|(other, _)| other != id);
                    if layer.guards.len() == before {
                        return;
                    }
                    None
                }
                Effect::Mode { id, .. } => {
                    if layer.mode.is_some_and(|(other, _)| other == *id) {
                        layer.mode = None;
                        Some(Change::ModeCleared { scope: layer_key })
                    } else {
                        return;
                    }
                }
                Effect::Exposure { id, .. } => {
                    if !layer.exposures.remove(*id) {
                        return;
                    }
                    Some(Change::ExposureChanged {
                        scope: scope_of(layer_key),
                    })
                }
                Effect::Listener { .. } => None,
            };
            if layer.is_empty() && layer_key != GLOBAL {
                state.layers.remove(&layer_key);
            }
            change
        };
        match change {
            Some(change) => self.changed(&[change]),
            None => self.invalidate(),
        }
    }

    /// Removes a scope's layer and its cached view; whether that was announced (a layer
    /// that held something).
    pub(crate) fn drop_layer(&self, key: u64) -> bool {
        let removed = write(&self.state).layers.remove(&key);
        self.views.forget(key);
        if let Some(layer) = removed {
            let budgets = layer
                .tools
                .values()
                .filter(|(_, def)| def.timeout().is_some())
                .count();
            self.timeouts.fetch_sub(budgets, Ordering::SeqCst);
            let announced = !layer.tools.is_empty()
                || !layer.restrictions.is_empty()
                || layer.mode.is_some()
                || !layer.exposures.is_empty()
                || !layer.loaded.is_empty();
            if announced {
                self.changed(&[Change::ScopeDisposed { scope: key }]);
            } else {
                self.invalidate();
            }
            return announced;
        }
        false
    }

    /// Announces the end of a scope whose disposal was not announced yet (one that never
    /// held anything): what is keyed by scope elsewhere (session approvals) is forgotten.
    pub(crate) fn scope_ended(&self, key: u64) {
        self.changed(&[Change::ScopeDisposed { scope: key }]);
    }

    /// Makes every cached view stale.
    fn invalidate(&self) {
        self.views.invalidate();
    }

    /// Invalidates the views, then tells every listener, outside every lock.
    fn changed(&self, changes: &[Change]) {
        self.invalidate();
        let listeners: Vec<Listener> = read(&self.listeners)
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        for change in changes {
            for listener in &listeners {
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| listener(change))) {
                    let error = crate::ToolError::from_panic(&*panic);
                    tracing::error!(?change, %error, "a registry change listener panicked; the change stands");
                }
            }
        }
    }

    /// Runs `f` with the cached view of `agent`'s scope (built and cached first if there is
    /// none), borrowed from the cache.
    fn with_cached<R>(&self, agent: Option<&AgentScope>, f: impl FnOnce(&CachedView) -> R) -> R {
        let key = agent.map_or(GLOBAL, AgentScope::key);
        let build = || {
            let state = read(&self.state);
            let version = self.views.version();
            let transport = read(&self.transport).clone();
            let view = build_view(&state, agent, self.default_mode, transport)
                .at_generation(version)
                .with_search_cache(Arc::clone(&self.searches));
            (view, version)
        };
        self.views.with(key, build, f)
    }

    fn view(&self, agent: Option<&AgentScope>) -> Arc<View> {
        self.with_cached(agent, |cached| Arc::clone(&cached.view))
    }

    /// The current view of `agent`'s scope through the current thread slot's handle.
    fn held_view(&self, agent: Option<&AgentScope>) -> HeldView {
        self.with_cached(agent, CachedView::held)
    }

    /// Runs `f` with the current view of `agent`'s scope, borrowed from the cache.
    fn with_view<R>(&self, agent: Option<&AgentScope>, f: impl FnOnce(&View) -> R) -> R {
        self.with_cached(agent, |cached| f(&cached.view))
    }
}

/// One effect owned by a [`Registration`].
enum Effect {
    Tool { layer: u64, name: ToolName, id: u64 },
    Restriction { layer: u64, id: u64 },
    Guard { layer: u64, id: u64 },
    Mode { layer: u64, id: u64 },
    Exposure { layer: u64, id: u64 },
    Listener { id: u64 },
}

impl Effect {
    fn layer(&self) -> u64 {
        match self {
            Effect::Tool { layer, .. }
            | Effect::Restriction { layer, .. }
            | Effect::Guard { layer, .. }
            | Effect::Mode { layer, .. }
            | Effect::Exposure { layer, .. } => *layer,
            Effect::Listener { .. } => GLOBAL,
        }
    }
}

/// The handle of one registration, restriction, guard, mode declaration or listener.
///
/// **Dropping it undoes the effect** (RAII), as does [`Registration::dispose`]; both are
/// idempotent and remove exactly this effect (a later registration of the same name is
/// untouched). Call [`Registration::keep`] to make the effect last as long as its layer.
#[must_use = "dropping a Registration undoes it at once; call .keep() to make it permanent"]
pub struct Registration {
    shared: Weak<Shared>,
    effect: Effect,
    armed: AtomicBool,
}

impl Registration {
    fn new(shared: &Shared, effect: Effect) -> Registration {
        Registration {
            shared: shared.weak.clone(),
            effect,
            armed: AtomicBool::new(true),
        }
    }

    /// Undoes the effect now. Idempotent.
    pub fn dispose(&self) {
        if self.armed.swap(false, Ordering::SeqCst)
            && let Some(shared) = self.shared.upgrade()
        {
            shared.remove(&self.effect);
        }
    }

    /// Keeps the effect for the lifetime of its layer (the registry, or the scope).
    pub fn keep(self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Whether the effect is still owned by this handle (not disposed, not kept).
    pub fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.effect {
            Effect::Tool { name, .. } => format!("tool {name}"),
            Effect::Restriction { .. } => "restriction".to_owned(),
            Effect::Guard { .. } => "guard".to_owned(),
            Effect::Mode { .. } => "mode".to_owned(),
            Effect::Exposure { .. } => "exposure rule".to_owned(),
            Effect::Listener { .. } => "listener".to_owned(),
        };
        f.debug_struct("Registration")
            .field("effect", &what)
            .field("armed", &self.is_armed())
            .finish()
    }
}
