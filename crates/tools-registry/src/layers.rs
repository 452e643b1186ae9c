//! The registry's layers (the global one and one per agent scope) and how a scope's view is
//! built from them: inheritance along the chain, masks, shadowing, guards, the mode.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::{IndexMap, IndexSet};

use crate::exposure::Rules;
use crate::view::{View, VisibleMap};
use crate::{AgentScope, Exposure, Guard, PresentationMode, ToolDefinition, ToolFilter, ToolName};

/// The key of the global layer.
pub(crate) const GLOBAL: u64 = 0;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) layers: HashMap<u64, Layer>,
    pub(crate) next_id: u64,
}

pub(crate) struct Layer {
    pub(crate) tools: IndexMap<ToolName, (u64, ToolDefinition)>,
    pub(crate) restrictions: Vec<(u64, ToolFilter)>,
    pub(crate) guards: Vec<(u64, Arc<dyn Guard>)>,
    pub(crate) mode: Option<(u64, PresentationMode)>,
    /// Exposure rules over names (this layer's and its descendants' views).
    pub(crate) exposures: Rules,
    /// The deferred tools loaded in this layer's own conversation, in load order (not
    /// inherited: a child agent has a conversation of its own).
    pub(crate) loaded: IndexSet<ToolName>,
}

impl Default for Layer {
    fn default() -> Layer {
        Layer {
            tools: IndexMap::new(),
            restrictions: Vec::new(),
            guards: Vec::new(),
            mode: None,
            exposures: Rules::new(),
            loaded: IndexSet::new(),
        }
    }
}

impl Layer {
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
            && self.restrictions.is_empty()
            && self.guards.is_empty()
            && self.mode.is_none()
            && self.exposures.is_empty()
            && self.loaded.is_empty()
    }

    pub(crate) fn admits(&self, name: &str) -> bool {
        self.restrictions
            .iter()
            .all(|(_, filter)| filter.admits(name))
    }
}

pub(crate) fn scope_of(layer: u64) -> Option<u64> {
    (layer != GLOBAL).then_some(layer)
}

/// The layers of a scope's chain that exist, farthest ancestor first, the scope last.
fn chain_layers<'s>(state: &'s State, scope: &AgentScope) -> Vec<(u64, &'s Layer)> {
    let mut chain: Vec<(u64, &Layer)> = scope
        .chain()
        .into_iter()
        .filter_map(|key| state.layers.get(&key).map(|layer| (key, layer)))
        .collect();
    chain.reverse();
    chain
}

/// The tools a scope inherits (global, then its ancestors farthest first), before masks.
pub(crate) fn inherited_names(
    state: &State,
    scope: &AgentScope,
) -> IndexMap<ToolName, ToolDefinition> {
    let mut inherited = IndexMap::new();
    if let Some(global) = state.layers.get(&GLOBAL) {
        for (name, (_, def)) in &global.tools {
            inherited.insert(name.clone(), def.clone());
        }
    }
    for (key, layer) in chain_layers(state, scope) {
        if key == scope.key() {
            continue;
        }
        for (name, (_, def)) in &layer.tools {
            inherited.insert(name.clone(), def.clone());
        }
    }
    inherited
}

pub(crate) fn build_view(
    state: &State,
    agent: Option<&AgentScope>,
    default_mode: PresentationMode,
    transport: Option<ToolDefinition>,
) -> View {
    let global = state.layers.get(&GLOBAL);
    let mut guards: Vec<Arc<dyn Guard>> = global
        .map(|layer| layer.guards.iter().map(|(_, g)| Arc::clone(g)).collect())
        .unwrap_or_default();
    let (visible, mode) = match agent {
        None => {
            let visible = global
                .map(|layer| {
                    layer
                        .tools
                        .iter()
                        .map(|(n, (_, d))| (n.clone(), d.clone()))
                        .collect()
                })
                .unwrap_or_default();
            (visible, default_mode)
        }
        Some(scope) => {
            let chain = chain_layers(state, scope);
            let inherited = inherited_names(state, scope);
            let mut visible: VisibleMap = inherited
                .into_iter()
                .filter(|(name, _)| chain.iter().all(|(_, layer)| layer.admits(name.as_str())))
                .collect();
            if let Some(own) = state.layers.get(&scope.key()) {
                for (name, (_, def)) in &own.tools {
                    visible.insert(name.clone(), def.clone());
                }
            }
            for (_, layer) in &chain {
                guards.extend(layer.guards.iter().map(|(_, g)| Arc::clone(g)));
            }
            // The nearest declaration wins: the chain is farthest first.
            let mode = chain
                .iter()
                .rev()
                .find_map(|(_, layer)| layer.mode.map(|(_, mode)| mode))
                .unwrap_or(default_mode);
            (visible, mode)
        }
    };
    let mut visible = visible;
    if mode.offers_run_code()
        && let Some(transport) = transport
    {
        visible.insert(transport.name().clone(), transport);
    }
    // Exposure rules: the global layer's first, then the chain farthest first; the last
    // rule that matches wins over the definition's own exposure.
    let mut rules: Vec<&Rules> = Vec::new();
    if let Some(global) = global {
        rules.push(&global.exposures);
    }
    if let Some(scope) = agent {
        rules.extend(
            chain_layers(state, scope)
                .into_iter()
                .map(|(_, layer)| &layer.exposures),
        );
    }
    rules.retain(|r| !r.is_empty());
    let exposures: Box<[Exposure]> = visible
        .iter()
        .map(|(name, def)| {
            if name.is_run_code() {
                return Exposure::Direct;
            }
            rules
                .iter()
                .filter_map(|r| r.exposure_of(name.as_str()))
                .next_back()
                .unwrap_or_else(|| def.exposure())
        })
        .collect();
    // The loaded deferred tools of this conversation (the scope's own layer, or the global
    // layer's for calls without an agent), as positions in load order.
    let own = state.layers.get(&agent.map_or(GLOBAL, AgentScope::key));
    let loaded: Box<[usize]> = own
        .map(|layer| {
            layer
                .loaded
                .iter()
                .filter_map(|name| visible.get_index_of(name.as_str()))
                .filter(|&index| exposures.get(index) == Some(&Exposure::Deferred))
                .collect()
        })
        .unwrap_or_default();
    View::new(agent.map(AgentScope::key), mode, visible, guards.into())
        .with_exposures(exposures, loaded)
}
