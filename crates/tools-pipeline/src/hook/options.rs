//! Where and when a hook takes part: [`HookOptions`].

use std::fmt;
use std::sync::Arc;

use tools_registry::AgentScope;

/// When a hook takes part in calls; see [`HookOptions::active_when`].
pub type Condition = Arc<dyn Fn() -> bool + Send + Sync>;

/// Where a hook is registered: its scope, its place, and an optional condition.
#[derive(Clone, Default)]
pub struct HookOptions {
    pub(crate) scope: Option<AgentScope>,
    pub(crate) prepend: bool,
    pub(crate) condition: Option<Condition>,
}

impl fmt::Debug for HookOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookOptions")
            .field("scope", &self.scope)
            .field("prepend", &self.prepend)
            .field("conditional", &self.condition.is_some())
            .finish()
    }
}

impl HookOptions {
    /// Unscoped, appended (innermost of the hooks so far).
    pub fn new() -> HookOptions {
        HookOptions::default()
    }

    /// Only calls whose agent chain contains `scope` go through the hook; the others skip
    /// it (it is not called at all for them).
    #[must_use]
    pub fn scope(mut self, scope: &AgentScope) -> HookOptions {
        self.scope = Some(scope.clone());
        self
    }

    /// Insert the hook before every other (outermost).
    #[must_use]
    pub fn prepend(mut self) -> HookOptions {
        self.prepend = true;
        self
    }

    /// A promise that the hook is a pure pass-through whenever `condition` is `false`: the
    /// chain then skips it for that call and saves its cost (one boxed future). The hook
    /// keeps its place in its waterfall: while the condition holds, calls go through it as
    /// if it had no condition.
    ///
    /// `condition` runs each time a call reaches the hook, so it must be cheap (an atomic
    /// load). The timeout policy of `tools-runtime` uses it with
    /// [`tools_registry::Registry::has_timeouts`]. Result observers ignore it.
    #[must_use]
    pub fn active_when(
        mut self,
        condition: impl Fn() -> bool + Send + Sync + 'static,
    ) -> HookOptions {
        self.condition = Some(Arc::new(condition));
        self
    }
}
