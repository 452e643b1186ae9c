//! Behaviour hints a tool declares about itself (MCP's tool annotations): shown to clients,
//! never trusted for safety decisions on their own.

/// What a tool says about its own behaviour. Every field is optional: `None` means the tool
/// does not say, and a client assumes the protocol's default (MCP: not read-only,
/// destructive, not idempotent, open world).
///
/// A read-only tool is also concurrency-safe: [`crate::DefinitionBuilder::read_only`] sets
/// both. An imported MCP tool carries its server's hints here, so a gateway shows them
/// unchanged.
///
/// # Examples
///
/// ```
/// use tools_registry::ToolHints;
///
/// let hints = ToolHints::new().with_title("Current time").with_read_only(true);
/// assert_eq!(hints.read_only, Some(true));
/// assert_eq!(hints.destructive, None);
/// assert!(!hints.is_empty());
/// assert!(ToolHints::new().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolHints {
    /// A human-readable title.
    pub title: Option<String>,
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches entities outside a closed domain (the web, other systems).
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// No hints.
    pub fn new() -> ToolHints {
        ToolHints::default()
    }

    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolHints::default()
    }

    /// The same hints with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> ToolHints {
        self.title = Some(title.into());
        self
    }

    /// The same hints with `read_only`.
    #[must_use]
    pub fn with_read_only(mut self, read_only: bool) -> ToolHints {
        self.read_only = Some(read_only);
        self
    }

    /// The same hints with `destructive`.
    #[must_use]
    pub fn with_destructive(mut self, destructive: bool) -> ToolHints {
        self.destructive = Some(destructive);
        self
    }

    /// The same hints with `idempotent`.
    #[must_use]
    pub fn with_idempotent(mut self, idempotent: bool) -> ToolHints {
        self.idempotent = Some(idempotent);
        self
    }

    /// The same hints with `open_world`.
    #[must_use]
    pub fn with_open_world(mut self, open_world: bool) -> ToolHints {
        self.open_world = Some(open_world);
        self
    }
}
