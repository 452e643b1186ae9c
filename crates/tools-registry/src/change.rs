//! The change events a registry tells its listeners.

use std::sync::Arc;

use crate::PresentationMode;
use crate::ToolName;

/// What changed, as told to [`crate::Registry::on_change`] listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A tool was registered (`scope` is `None` for the global layer).
    ToolRegistered {
        /// The tool.
        name: ToolName,
        /// The layer's scope key.
        scope: Option<u64>,
    },
    /// A registration was disposed.
    ToolRemoved {
        /// The tool.
        name: ToolName,
        /// The layer's scope key.
        scope: Option<u64>,
    },
    /// A restriction was added to a scope.
    RestrictionAdded {
        /// The scope key.
        scope: u64,
    },
    /// A restriction was lifted.
    RestrictionLifted {
        /// The scope key.
        scope: u64,
    },
    /// A scope declared its presentation mode.
    ModeDeclared {
        /// The scope key.
        scope: u64,
        /// The mode.
        mode: PresentationMode,
    },
    /// A scope's mode declaration was disposed.
    ModeCleared {
        /// The scope key.
        scope: u64,
    },
    /// A scope was disposed with everything attached to it.
    ScopeDisposed {
        /// The scope key.
        scope: u64,
    },
    /// The Code Mode transport (`run_code`) was installed.
    TransportInstalled,
    /// An exposure rule was declared or lifted (`scope` is `None` for the global layer).
    ExposureChanged {
        /// The layer's scope key.
        scope: Option<u64>,
    },
    /// Deferred tools were loaded into a conversation (`scope` is `None` for calls without
    /// an agent).
    ToolsLoaded {
        /// The layer's scope key.
        scope: Option<u64>,
        /// The newly loaded tools, in load order.
        names: Arc<[ToolName]>,
    },
    /// Loaded tools were unloaded from a conversation.
    ToolsUnloaded {
        /// The layer's scope key.
        scope: Option<u64>,
        /// The tools that were loaded.
        names: Arc<[ToolName]>,
    },
}
