//! The crate's error type and its stable machine codes.

use std::fmt;

/// Everything `tools-mcp` can refuse or fail at. Callers match on [`Error::kind`], never on
/// the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An upstream server name that cannot prefix tool names reversibly.
    #[error("invalid MCP server name {name:?}: {reason}")]
    InvalidServerName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An upstream server could not be started or did not complete the MCP handshake.
    #[error("could not connect to MCP server {server:?}: {message}")]
    Connect {
        /// The server's name.
        server: String,
        /// What failed.
        message: String,
    },
    /// An upstream server answered a request with an error, or its connection closed.
    #[error("MCP server {server:?} failed: {message}")]
    Upstream {
        /// The server's name.
        server: String,
        /// What failed.
        message: String,
    },
    /// An imported tool could not be registered (a name clash with another tool of the
    /// same layer, a reserved name, a schema that is not lossless JSON).
    #[error("tool {tool:?} of MCP server {server:?} could not be registered: {source}")]
    Register {
        /// The server's name.
        server: String,
        /// The tool's exposed name.
        tool: String,
        /// The registry's refusal.
        #[source]
        source: tools_runtime::tools::RegistryError,
    },
    /// Building the runtime the gateway serves failed.
    #[error(transparent)]
    Runtime(#[from] tools_runtime::Error),
    /// The gateway configuration is invalid: the message names the key and its line.
    #[error("{path}: {message}")]
    Config {
        /// The configuration file.
        path: String,
        /// What is wrong, where.
        message: String,
    },
    /// Serving MCP failed (the transport could not start, the address could not be bound).
    #[error("serving MCP failed: {message}")]
    Serve {
        /// What failed.
        message: String,
    },
}

impl Error {
    /// The stable machine code of the error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidServerName { .. } => ErrorKind::InvalidServerName,
            Error::Connect { .. } => ErrorKind::Connect,
            Error::Upstream { .. } => ErrorKind::Upstream,
            Error::Register { .. } => ErrorKind::Register,
            Error::Runtime(_) => ErrorKind::Runtime,
            Error::Config { .. } => ErrorKind::Config,
            Error::Serve { .. } => ErrorKind::Serve,
        }
    }
}

/// The machine code of an [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::InvalidServerName`].
    InvalidServerName,
    /// [`Error::Connect`].
    Connect,
    /// [`Error::Upstream`].
    Upstream,
    /// [`Error::Register`].
    Register,
    /// [`Error::Runtime`].
    Runtime,
    /// [`Error::Config`].
    Config,
    /// [`Error::Serve`].
    Serve,
}

/// The codes an imported tool's failed call carries (a [`tools_runtime::ToolError`] with
/// a custom code), when the failure is the upstream connection's rather than the tool's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UpstreamCode {
    /// The server is not connected (it exited, or its connection closed); a restart
    /// ([`crate::ImportedServer::restart`]) reconnects it.
    ServerUnavailable,
    /// The server answered `tools/call` with a protocol error instead of a result.
    ProtocolError,
}

impl UpstreamCode {
    /// The wire spelling (`MCP_SERVER_UNAVAILABLE`, `MCP_PROTOCOL_ERROR`).
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamCode::ServerUnavailable => "MCP_SERVER_UNAVAILABLE",
            UpstreamCode::ProtocolError => "MCP_PROTOCOL_ERROR",
        }
    }
}

impl fmt::Display for UpstreamCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
