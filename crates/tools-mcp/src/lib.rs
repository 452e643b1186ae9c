//! MCP both ways on [`rmcp`], the official Rust SDK of the Model Context Protocol.
//!
//! - [`McpServer`] serves one agent scope of a [`tools_runtime::ToolRuntime`] to any MCP
//!   client, over stdio or streamable HTTP: every `tools/call` runs through the guarded
//!   pipeline (hooks, guards, approval, timeouts, Code Mode).
//! - [`ImportedServer`] registers an MCP server's tools (a child process over stdio, or a
//!   streamable HTTP URL) into a registry, as ordinary tool definitions named
//!   `<server>__<tool>`.
//! - The `tools-mcp gateway` binary does both from a TOML file: see the crate's README.
#![forbid(unsafe_code)]

mod client;
mod error;
pub mod gateway;
mod server;
mod wire;

pub use client::{
    Customize, ImportOptions, ImportedServer, ImportedTool, SEPARATOR, ServerSpec,
    check_server_name, exposed_name, split_exposed_name,
};
pub use error::{Error, ErrorKind, UpstreamCode};
pub use server::{APPROVE_FIELD, HttpOptions, McpServer, McpSession};
pub use wire::{CODE_META_KEY, UNENFORCED_META_KEY, WRAPPED_MARKER, WRAPPED_RESULT_KEY};
