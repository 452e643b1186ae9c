//! What an import is given: where the server is ([`ServerSpec`]) and how it is imported
//! ([`ImportOptions`]: deadlines, restarts, the content-block limit, per-tool customizing).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tools_runtime::tools::AgentScope;

#[cfg(doc)]
use super::ImportedServer;
use super::ImportedTool;

/// How to reach an MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerSpec {
    /// A child process speaking MCP on its stdin and stdout (stderr is inherited).
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: Vec<(String, String)>,
        /// Its working directory (default: ours).
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint (`http://`; `https://` needs the `tls` feature).
    Url {
        /// The endpoint's URL.
        url: String,
    },
}

impl ServerSpec {
    /// A child process: `program` with `args`.
    pub fn command(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> ServerSpec {
        ServerSpec::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// A streamable-HTTP endpoint.
    pub fn url(url: impl Into<String>) -> ServerSpec {
        ServerSpec::Url { url: url.into() }
    }

    /// The same child process with `key=value` added to its environment (no effect on a URL).
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> ServerSpec {
        if let ServerSpec::Command { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The same child process started in `dir` (no effect on a URL).
    #[must_use]
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> ServerSpec {
        if let ServerSpec::Command { cwd, .. } = &mut self {
            *cwd = Some(dir.into());
        }
        self
    }
}

/// Adjusts an imported tool's definition before it is registered: add a timeout, hints, a
/// presenter (see [`ImportOptions::customize`]).
pub type Customize = Arc<
    dyn Fn(&ImportedTool, tools_registry::DefinitionBuilder) -> tools_registry::DefinitionBuilder
        + Send
        + Sync,
>;

/// How an [`ImportedServer`] imports, and the deadlines of its requests.
#[derive(Clone)]
#[must_use]
pub struct ImportOptions {
    pub(super) scope: Option<AgentScope>,
    pub(super) customize: Option<Customize>,
    pub(super) auto_restart: bool,
    pub(super) handshake_timeout: Duration,
    pub(super) list_timeout: Duration,
    pub(super) call_timeout: Option<Duration>,
    pub(super) retry_first: Duration,
    pub(super) retry_max: Duration,
    pub(super) max_content_blocks: usize,
    pub(super) pins: Option<crate::pins::Pins>,
    pub(super) exposure: tools_registry::Exposure,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            scope: None,
            customize: None,
            auto_restart: false,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            list_timeout: DEFAULT_LIST_TIMEOUT,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            retry_first: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            max_content_blocks: DEFAULT_MAX_CONTENT_BLOCKS,
            pins: None,
            exposure: tools_registry::Exposure::Direct,
        }
    }
}

/// The default limit of starting a server and its MCP handshake.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// The default limit of one listing of a server's tools (every page of `tools/list`).
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// The default timeout budget of a call of an imported tool.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of [`ImportOptions::max_content_blocks`].
pub const DEFAULT_MAX_CONTENT_BLOCKS: usize = 10_000;

impl ImportOptions {
    /// Global registration, no customisation, no automatic restart; a 30 s handshake limit,
    /// a 30 s `tools/list` limit, a 60 s budget per call, at most 10 000 content blocks per
    /// result; a server that cannot be brought up
    /// by [`ImportedServer::start`] is retried after 1 s, then twice as long each time, up
    /// to every 60 s.
    pub fn new() -> ImportOptions {
        ImportOptions::default()
    }

    /// Checks every listed tool against `pins` before it is registered: a tool seen for
    /// the first time is pinned, a changed one is handled as the pins' `on_change` says
    /// (by default withheld: not registered, and its calls fail with `TOOL_CHANGED` once
    /// [`crate::pins::Pins::hook`] is installed in the runtime).
    pub fn pins(mut self, pins: crate::pins::Pins) -> ImportOptions {
        self.pins = Some(pins);
        self
    }

    /// The exposure of every tool of the server (default `Direct`): `Deferred` keeps a
    /// whole server out of the model's declarations until a search loads its tools
    /// (docs/decisions.md, entry 35). [`ImportOptions::customize`] runs after it and may
    /// set another per tool.
    pub fn exposure(mut self, exposure: tools_registry::Exposure) -> ImportOptions {
        self.exposure = exposure;
        self
    }

    /// Registers the tools into `scope` instead of globally.
    pub fn into_scope(mut self, scope: AgentScope) -> ImportOptions {
        self.scope = Some(scope);
        self
    }

    /// Adjusts each definition before registration (after the default call budget is set,
    /// so a `timeout` given here replaces it).
    pub fn customize(
        mut self,
        customize: impl Fn(
            &ImportedTool,
            tools_registry::DefinitionBuilder,
        ) -> tools_registry::DefinitionBuilder
        + Send
        + Sync
        + 'static,
    ) -> ImportOptions {
        self.customize = Some(Arc::new(customize));
        self
    }

    /// Reconnects a server found disconnected when a call arrives (once per call).
    pub fn auto_restart(mut self, on: bool) -> ImportOptions {
        self.auto_restart = on;
        self
    }

    /// How long starting a server and its MCP handshake may take.
    pub fn handshake_timeout(mut self, limit: Duration) -> ImportOptions {
        self.handshake_timeout = limit;
        self
    }

    /// How long one listing of the server's tools (every page of `tools/list`, at the
    /// start and after each `list_changed`) may take; past it the listing fails and its
    /// request is cancelled upstream.
    pub fn list_timeout(mut self, limit: Duration) -> ImportOptions {
        self.list_timeout = limit;
        self
    }

    /// The timeout budget of every imported tool ([`ToolDefinition::timeout`](tools_runtime::ToolDefinition::timeout)), unless
    /// [`ImportOptions::customize`] sets another: a call past it ends as `TOOL_TIMEOUT` and
    /// the server gets `notifications/cancelled`. Clamped to 1 ms ..=
    /// [`MAX_TIMEOUT`](tools_registry::MAX_TIMEOUT).
    pub fn call_timeout(mut self, budget: Duration) -> ImportOptions {
        self.call_timeout =
            Some(budget.clamp(Duration::from_millis(1), tools_registry::MAX_TIMEOUT));
        self
    }

    /// No default budget: a call waits as long as its caller (or its own `customize`d
    /// timeout) lets it.
    pub fn no_call_timeout(mut self) -> ImportOptions {
        self.call_timeout = None;
        self
    }

    /// The most content blocks one result of a call may carry (default
    /// [`DEFAULT_MAX_CONTENT_BLOCKS`], 10 000). A result with more, an error result
    /// included, ends its call as `INVALID_TOOL_OUTPUT` naming the limit. The transport
    /// already bounds a result's bytes (16 MiB per message); this bounds how many pieces
    /// they come in, each of which costs hundreds of bytes parsed and converted for the
    /// few it takes on the wire. A child's line and a response event over HTTP are counted
    /// as they are scanned, so the message is dropped before rmcp parses it; a JSON body
    /// over HTTP, which rmcp parses itself, is counted before any block is converted.
    pub fn max_content_blocks(mut self, max: usize) -> ImportOptions {
        self.max_content_blocks = max;
        self
    }

    /// The backoff of [`ImportedServer::start`]'s background retries: the first after
    /// `first`, each next one twice as long after the previous, at most `max`.
    pub fn retry_backoff(mut self, first: Duration, max: Duration) -> ImportOptions {
        self.retry_first = first.max(Duration::from_millis(1));
        self.retry_max = max.max(self.retry_first);
        self
    }
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("scope", &self.scope)
            .field("customize", &self.customize.is_some())
            .field("auto_restart", &self.auto_restart)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("list_timeout", &self.list_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("retry_first", &self.retry_first)
            .field("retry_max", &self.retry_max)
            .field("max_content_blocks", &self.max_content_blocks)
            .field("pins", &self.pins.as_ref().map(crate::pins::Pins::path))
            .finish()
    }
}
