//! A scope's view of the registry: what it can see, built once per change and shared by
//! every lookup; and the execution mode a call gets from it.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use indexmap::IndexMap;
use tools_json::JsonValue;

use crate::projection::ToolSpec;
use crate::{Exposure, Guard, PresentationMode, RUN_CODE, Refusal, ToolDefinition, ToolName};

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
    /// The effective exposure of each visible tool, by position.
    exposures: Box<[Exposure]>,
    /// The positions of the loaded deferred tools, in load order.
    loaded: Box<[usize]>,
    guards: Arc<[Arc<dyn Guard>]>,
    schemas: OnceLock<Arc<[ToolSpec]>>,
    wire: OnceLock<Arc<[ToolSpec]>>,
    /// The search index over the deferred tools, built on the first search of this view
    /// (or shared with an earlier view over the same deferred tools).
    search: OnceLock<Arc<Searchable>>,
    cache: Arc<SearchCache>,
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
        let exposures = vec![Exposure::Direct; visible.len()].into();
        View {
            scope,
            mode,
            visible,
            exposures,
            loaded: Box::default(),
            guards,
            schemas: OnceLock::new(),
            wire: OnceLock::new(),
            search: OnceLock::new(),
            cache: Arc::default(),
            generation: 0,
        }
    }

    /// The view with the effective exposures (one per visible tool, in view order) and the
    /// positions of its loaded deferred tools.
    pub(crate) fn with_exposures(
        mut self,
        exposures: Box<[Exposure]>,
        loaded: Box<[usize]>,
    ) -> View {
        if exposures.len() == self.visible.len() {
            self.exposures = exposures;
            self.loaded = loaded;
        }
        self
    }

    /// The view, sharing its registry's recent search indexes.
    pub(crate) fn with_search_cache(mut self, cache: Arc<SearchCache>) -> View {
        self.cache = cache;
        self
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

    /// The effective exposure of a visible tool: its definition's, unless an exposure rule
    /// of the global layer or of the scope's chain says otherwise (the last matching rule,
    /// nearest scope last, wins). `run_code` is always [`Exposure::Direct`].
    pub fn exposure(&self, name: &str) -> Option<Exposure> {
        self.visible
            .get_index_of(name)
            .map(|index| self.exposure_at(index))
    }

    fn exposure_at(&self, index: usize) -> Exposure {
        self.exposures.get(index).copied().unwrap_or_default()
    }

    /// Whether a deferred tool is loaded in this scope's conversation.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.visible
            .get_index_of(name)
            .is_some_and(|index| self.loaded.contains(&index))
    }

    /// The loaded deferred tools, in load order.
    pub fn loaded(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.loaded.iter().map(|&index| &self.visible[index])
    }

    /// The visible deferred tools (loaded or not), in view order: what a tool search of
    /// this scope looks through.
    pub fn deferred(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.visible
            .values()
            .enumerate()
            .filter(|(index, _)| self.exposure_at(*index) == Exposure::Deferred)
            .map(|(_, def)| def)
    }

    /// Searches the scope's deferred tools (docs/decisions.md, entry 35): BM25 over their
    /// names (split into words), namespaces, descriptions and parameter names and
    /// descriptions, best first, equal scores in view order; at most `limit` of them
    /// (clamped to [`tools_search::MAX_LIMIT`]). Only tools this scope sees can be found.
    /// The index is built once per view (and shared by later views over the same deferred
    /// tools), never per query.
    ///
    /// # Errors
    ///
    /// An empty query, or one over [`tools_search::MAX_QUERY_CHARS`] characters.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<&ToolDefinition>, crate::SearchError> {
        let searchable = self.searchable();
        let hits = searchable.index.search(query, limit)?;
        Ok(self.found(&searchable, &hits))
    }

    /// Searches the scope's deferred tools with a regular expression (case-insensitive,
    /// over the same text as [`View::search`]): tools whose name matches first, then the
    /// others, each in view order.
    ///
    /// # Errors
    ///
    /// An invalid pattern, one over [`tools_search::MAX_PATTERN_CHARS`] characters, or one
    /// whose compiled program is too large.
    pub fn search_regex(
        &self,
        pattern: &str,
        limit: usize,
    ) -> Result<Vec<&ToolDefinition>, crate::SearchError> {
        let searchable = self.searchable();
        let hits = searchable.index.search_regex(pattern, limit)?;
        Ok(self.found(&searchable, &hits))
    }

    fn found(&self, searchable: &Searchable, hits: &[tools_search::Hit]) -> Vec<&ToolDefinition> {
        hits.iter()
            .filter_map(|hit| searchable.tools.get(hit.index))
            .filter_map(|def| self.visible.get(def.name().as_str()))
            .collect()
    }

    fn searchable(&self) -> Arc<Searchable> {
        Arc::clone(self.search.get_or_init(|| {
            let tools: Vec<ToolDefinition> = self.deferred().cloned().collect();
            self.cache.shared(tools)
        }))
    }

    /// Whether the scope has deferred tools (so a search tool is worth declaring).
    pub fn has_deferred(&self) -> bool {
        self.exposures.contains(&Exposure::Deferred)
    }

    /// The tools a Code Mode SDK declares: the visible ones whose exposure puts them in the
    /// SDK ([`Exposure::Direct`] and [`Exposure::CodeOnly`]), except `run_code`.
    pub fn sdk_tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.visible
            .values()
            .enumerate()
            .filter(|(index, def)| !def.name().is_run_code() && self.exposure_at(*index).in_sdk())
            .map(|(_, def)| def)
    }

    /// Why a call of the visible tool `name` is refused, if it is: `has_parent` for a
    /// `run_code` sub-call, `by_host` for a call the host dispatched itself (it reaches
    /// every visible tool). The refusal is an `UNKNOWN_TOOL` result
    /// ([`Refusal::message`]).
    pub fn refusal(&self, name: &str, has_parent: bool, by_host: bool) -> Option<Refusal> {
        if self.collapses(name, has_parent) {
            return Some(Refusal::Collapsed);
        }
        if by_host {
            return None;
        }
        self.visible
            .get_index_of(name)
            .and_then(|index| self.exposure_refusal(index, has_parent))
    }

    /// Why the exposure of the tool at `index` refuses a model's call (not a host's), if it
    /// does: what [`View::refusal`] and [`crate::ResolvedTool::refusal`] share.
    pub(crate) fn exposure_refusal(&self, index: usize, has_parent: bool) -> Option<Refusal> {
        match self.exposure_at(index) {
            Exposure::Direct => None,
            Exposure::Hidden => Some(Refusal::Hidden),
            Exposure::CodeOnly => (!has_parent).then_some(Refusal::CodeOnly),
            Exposure::NativeOnly => has_parent.then_some(Refusal::NativeOnly),
            Exposure::Deferred => {
                (!has_parent && !self.loaded.contains(&index)).then_some(Refusal::NotLoaded)
            }
        }
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

    /// The capability catalogue: every visible tool except [`Exposure::Hidden`] ones, as
    /// `{name, description, parameters}`, in view order. Built once per view.
    pub fn schemas(&self) -> Arc<[ToolSpec]> {
        Arc::clone(self.schemas.get_or_init(|| {
            self.visible
                .values()
                .enumerate()
                .filter(|(index, _)| self.exposure_at(*index) != Exposure::Hidden)
                .map(|(_, def)| ToolSpec::of(def))
                .collect()
        }))
    }

    /// The tools announced to the model. In `native` and `both`: the visible tools the
    /// model is told about ([`Exposure::Direct`] and [`Exposure::NativeOnly`]) in view
    /// order (`run_code` last of them, in `both`), then the loaded deferred tools in load
    /// order, so that loading appends and the prefix a provider caches stays the same. In
    /// `code`: only `run_code`. Built once per view.
    pub fn wire_schemas(&self) -> Arc<[ToolSpec]> {
        Arc::clone(self.wire.get_or_init(|| {
            match self.mode {
                PresentationMode::Code => self
                    .visible
                    .values()
                    .filter(|def| def.name().is_run_code())
                    .map(ToolSpec::of)
                    .collect(),
                PresentationMode::Native | PresentationMode::Both => self
                    .visible
                    .values()
                    .enumerate()
                    .filter(|(index, _)| self.exposure_at(*index).is_declared())
                    .map(|(_, def)| def)
                    .chain(self.loaded())
                    .map(ToolSpec::of)
                    .collect(),
            }
        }))
    }
}

/// A search index and the deferred tools it was built over, in build order.
pub(crate) struct Searchable {
    pub(crate) tools: Vec<ToolDefinition>,
    pub(crate) index: tools_search::SearchIndex,
}

/// A registry's search indexes built lately, by the tools they index: the views of many
/// scopes (one per MCP session, say) over the same deferred tools share one. It holds the
/// definitions themselves, so an identity it compares cannot be reused by another.
#[derive(Default)]
pub(crate) struct SearchCache(Mutex<Vec<Arc<Searchable>>>);

/// How many indexes a [`SearchCache`] keeps.
const RECENT_INDEXES: usize = 4;

impl SearchCache {
    fn shared(&self, tools: Vec<ToolDefinition>) -> Arc<Searchable> {
        let same = |other: &Searchable| {
            other.tools.len() == tools.len()
                && other
                    .tools
                    .iter()
                    .zip(&tools)
                    .all(|(a, b)| ToolDefinition::ptr_eq(a, b))
        };
        let recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = recent.iter().find(|s| same(s)) {
            return Arc::clone(found);
        }
        drop(recent);
        let index = tools_search::SearchIndex::build(tools.iter().map(|def| tools_search::Entry {
            name: def.name().as_str(),
            namespace: def.namespace(),
            description: def.description(),
            parameters: def.parameters().as_value(),
        }));
        let built = Arc::new(Searchable { tools, index });
        let mut recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() >= RECENT_INDEXES {
            recent.remove(0);
        }
        recent.push(Arc::clone(&built));
        built
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Exposure, OutputDecl, Registry, ToolDefinition};

    fn deferred(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name, "a deferred tool")
            .output(OutputDecl::text(json!({"type": "string"})))
            .body(|_args, _ctx| async { Ok(json!("ok")) })
            .exposure(Exposure::Deferred)
            .build()
            .unwrap()
    }

    #[test]
    fn views_over_the_same_deferred_tools_share_one_index() {
        let registry = Registry::new();
        registry.register(deferred("get_weather")).unwrap().keep();
        let (a, b) = (registry.scope(), registry.scope());
        let first = registry.view(Some(&a)).searchable();
        assert!(std::sync::Arc::ptr_eq(
            &first,
            &registry.view(Some(&b)).searchable()
        ));
        // A change of the deferred tools builds another.
        registry.register(deferred("send_mail")).unwrap().keep();
        let second = registry.view(Some(&a)).searchable();
        assert!(!std::sync::Arc::ptr_eq(&first, &second));
        assert_eq!(second.tools.len(), 2);
    }
}
