//! Exposure rules and loading: what a layer declares over where its tools are shown, and
//! which deferred tools a conversation has loaded (docs/decisions.md, entry 35).

use std::sync::Arc;

use super::{Effect, Registration, Shared, write};
use crate::change::Change;
use crate::exposure::compile;
use crate::layers::{GLOBAL, scope_of};
use crate::{AgentScope, Error, Exposure, Registry, ToolName};

impl Registry {
    /// Declares the exposure of the tools whose names match one of `patterns` (exact names
    /// or globs: `github__*`), for every scope; a scope's own rule wins over it. Lifted when
    /// the registration is disposed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPattern`] for a malformed glob or no pattern at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_registry::{Exposure, OutputDecl, Registry, ToolDefinition};
    ///
    /// let tool = |name: &str| {
    ///     ToolDefinition::builder(name, "a tool")
    ///         .output(OutputDecl::text(json!({"type": "string"})))
    ///         .body(|_args, _ctx| async { Ok(json!("ok")) })
    ///         .build()
    /// };
    /// let registry = Registry::new();
    /// registry.register(tool("read")?)?.keep();
    /// registry.register(tool("github__list_issues")?)?.keep();
    /// registry.expose(["github__*"], Exposure::Deferred)?.keep();
    ///
    /// let agent = registry.scope();
    /// let declared = |r: &Registry| -> Vec<String> {
    ///     r.view(Some(&agent)).wire_schemas().iter().map(|s| s.name.to_string()).collect()
    /// };
    /// assert_eq!(declared(&registry), ["read"]);
    /// assert_eq!(agent.load(["github__list_issues"])?.len(), 1);
    /// assert_eq!(declared(&registry), ["read", "github__list_issues"]);
    /// # Ok::<(), tools_registry::Error>(())
    /// ```
    pub fn expose<I, S>(&self, patterns: I, exposure: Exposure) -> Result<Registration, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.shared.expose(GLOBAL, patterns, exposure)
    }

    /// Loads deferred tools for calls without an agent (see [`AgentScope::load`]).
    ///
    /// # Errors
    ///
    /// None today; the `Result` leaves room for a registry that refuses.
    pub fn load<I, S>(&self, names: I) -> Result<Vec<ToolName>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(self.shared.load(None, names))
    }

    /// Unloads deferred tools for calls without an agent (see [`AgentScope::unload`]).
    pub fn unload<I, S>(&self, names: I) -> Vec<ToolName>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.shared.unload(GLOBAL, names)
    }
}

impl AgentScope {
    /// Declares the exposure of the tools whose names match one of `patterns` for this
    /// scope and its descendants (the nearest scope's matching rule wins, and within a
    /// scope the last one).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPattern`], [`Error::RegistryGone`].
    pub fn expose<I, S>(&self, patterns: I, exposure: Exposure) -> Result<Registration, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.shared()
            .ok_or(Error::RegistryGone)?
            .expose(self.key(), patterns, exposure)
    }

    /// Loads deferred tools into this scope's conversation: from the next view on they are
    /// declared to the model (after the other tools, in load order) and callable directly.
    /// Names that are not visible deferred tools of the scope, or already loaded, are
    /// skipped; the newly loaded ones are returned (and announced as
    /// [`Change::ToolsLoaded`]). A child scope does not inherit what its parent loaded.
    ///
    /// # Errors
    ///
    /// [`Error::RegistryGone`].
    pub fn load<I, S>(&self, names: I) -> Result<Vec<ToolName>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(self
            .shared()
            .ok_or(Error::RegistryGone)?
            .load(Some(self), names))
    }

    /// Unloads tools from this scope's conversation; the ones that were loaded are returned
    /// (and announced as [`Change::ToolsUnloaded`]).
    pub fn unload<I, S>(&self, names: I) -> Vec<ToolName>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.shared()
            .map(|shared| shared.unload(self.key(), names))
            .unwrap_or_default()
    }
}

impl Shared {
    fn expose<I, S>(
        &self,
        layer_key: u64,
        patterns: I,
        exposure: Exposure,
    ) -> Result<Registration, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let set = compile(patterns)?;
        let id = {
            let mut state = write(&self.state);
            let id = Shared::next_id(&mut state);
            state
                .layers
                .entry(layer_key)
                .or_default()
                .exposures
                .push(id, set, exposure);
            id
        };
        self.changed(&[Change::ExposureChanged {
            scope: scope_of(layer_key),
        }]);
        Ok(Registration::new(
            self,
            Effect::Exposure {
                layer: layer_key,
                id,
            },
        ))
    }

    fn load<I, S>(&self, agent: Option<&AgentScope>, names: I) -> Vec<ToolName>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let view = self.view(agent);
        let key = agent.map_or(GLOBAL, AgentScope::key);
        let loaded: Vec<ToolName> = {
            let mut state = write(&self.state);
            let layer = state.layers.entry(key).or_default();
            let mut loaded = Vec::new();
            for name in names {
                let name = name.as_ref();
                let Some(def) = view.get(name) else { continue };
                if view.exposure(name) == Some(Exposure::Deferred)
                    && layer.loaded.insert(def.name().clone())
                {
                    loaded.push(def.name().clone());
                }
            }
            if layer.is_empty() && key != GLOBAL {
                state.layers.remove(&key);
            }
            loaded
        };
        if !loaded.is_empty() {
            self.changed(&[Change::ToolsLoaded {
                scope: scope_of(key),
                names: Arc::from(loaded.as_slice()),
            }]);
        }
        loaded
    }

    fn unload<I, S>(&self, key: u64, names: I) -> Vec<ToolName>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let unloaded: Vec<ToolName> = {
            let mut state = write(&self.state);
            let Some(layer) = state.layers.get_mut(&key) else {
                return Vec::new();
            };
            let unloaded = names
                .into_iter()
                .filter_map(|name| layer.loaded.shift_take(name.as_ref()))
                .collect();
            if layer.is_empty() && key != GLOBAL {
                state.layers.remove(&key);
            }
            unloaded
        };
        if !unloaded.is_empty() {
            self.changed(&[Change::ToolsUnloaded {
                scope: scope_of(key),
                names: Arc::from(unloaded.as_slice()),
            }]);
        }
        unloaded
    }
}
