//! A scope's view of the registry: what it can see, built once per change and shared by
//! every lookup; and the execution mode a call gets from it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use tools_json::JsonValue;

use crate::projection::ToolSpec;
use crate::{Guard, PresentationMode, RUN_CODE, ToolDefinition, ToolName};

/// The visible tools of a view, in view order.
pub(crate) type VisibleMap = IndexMap<ToolName, ToolDefinition, foldhash::fast::FixedState>;

/// Whether a call may overlap with its siblings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// The call may run beside other parallel calls.
    Parallel,
    /// The call runs alone.
    Exclusive,
}

/// What one scope can see, built once per registry change and shared by every lookup.
pub struct View {
    scope: Option<u64>,
    mode: PresentationMode,
    visible: VisibleMap,
    guards: Arc<[Arc<dyn Guard>]>,
    schemas: OnceLock<Arc<[ToolSpec]>>,
    wire: OnceLock<Arc<[ToolSpec]>>,
    /// The registry generation the view was built at (see [`Registry::generation`]).
    ///
    /// [`Registry::generation`]: crate::Registry::generation
    generation: u64,
}

impl View {
    pub(crate) fn new(
        scope: Option<u64>,
        mode: PresentationMode,
        visible: VisibleMap,
        guards: Arc<[Arc<dyn Guard>]>,
    ) -> View {
        View {
            scope,
            mode,
            visible,
            guards,
            schemas: OnceLock::new(),
            wire: OnceLock::new(),
            generation: 0,
        }
    }

    /// The view, labelled with the registry generation its state was read at.
    pub(crate) fn at_generation(mut self, generation: u64) -> View {
        self.generation = generation;
        self
    }

    /// The registry generation this view was built at: while
    /// [`Registry::generation`](crate::Registry::generation) still returns it, a name
    /// resolves in a fresh view exactly as in this one (up to a change still in progress,
    /// which is ordered after the lookup).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The scope key (`None` for calls without an agent).
    pub fn scope(&self) -> Option<u64> {
        self.scope
    }

    /// The effective presentation mode.
    pub fn mode(&self) -> PresentationMode {
        self.mode
    }

    /// The visible definition of `name`, if any (`run_code` included in `code`/`both`).
    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.visible.get(name)
    }

    /// The position of `name` among the visible tools, if it is one.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.visible.get_index_of(name)
    }

    /// The visible tool at `index`, a position [`View::position`] gave for this view. The
    /// view never changes, so such a position is always in range.
    pub(crate) fn at(&self, index: usize) -> &ToolDefinition {
        &self.visible[index]
    }

    /// The visible tools, in view order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.visible.values()
    }

    /// The visible names, in view order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &ToolName> {
        self.visible.keys()
    }

    /// The tools a Code Mode SDK declares: the visible ones except `run_code`.
    pub fn sdk_tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.visible
            .values()
            .filter(|def| !def.name().is_run_code())
    }

    /// The guards a call from this scope is checked by, in evaluation order (global first,
    /// then the chain farthest first). A snapshot: later changes build a new view.
    pub fn guards(&self) -> &Arc<[Arc<dyn Guard>]> {
        &self.guards
    }

    /// Whether a call to `name` is collapsed: a model-direct call (no parent) to a tool
    /// other than `run_code` from a `code` scope.
    pub fn collapses(&self, name: &str, has_parent: bool) -> bool {
        !has_parent && self.mode == PresentationMode::Code && name != RUN_CODE
    }

    /// Whether a call may overlap with its siblings: collapsed, unknown and unclassified
    /// calls are exclusive; otherwise the tool's classifier decides (a panic is exclusive).
    pub fn execution_mode(&self, name: &str, args: &JsonValue, has_parent: bool) -> ExecutionMode {
        if self.collapses(name, has_parent) {
            return ExecutionMode::Exclusive;
        }
        match self.get(name) {
            Some(def) if def.is_concurrency_safe(args) => ExecutionMode::Parallel,
            _ => ExecutionMode::Exclusive,
        }
    }

    /// The capability catalogue: every visible tool as `{name, description, parameters}`,
    /// in view order. Built once per view.
    pub fn schemas(&self) -> Arc<[ToolSpec]> {
        Arc::clone(
            self.schemas
                .get_or_init(|| self.visible.values().map(ToolSpec::of).collect()),
        )
    }

    /// The tools announced to the model: every visible tool in `native` and `both`
    /// (`run_code` last), only `run_code` in `code`.
    pub fn wire_schemas(&self) -> Arc<[ToolSpec]> {
        Arc::clone(self.wire.get_or_init(|| {
            match self.mode {
                PresentationMode::Code => self
                    .visible
                    .values()
                    .filter(|def| def.name().is_run_code())
                    .map(ToolSpec::of)
                    .collect(),
                PresentationMode::Native | PresentationMode::Both => self.schemas().to_vec().into(),
            }
        }))
    }
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("scope", &self.scope)
            .field("mode", &self.mode)
            .field("tools", &self.visible.keys().collect::<Vec<_>>())
            .field("guards", &self.guards.len())
            .finish()
    }
}
