//! Behaviour tests of `tools-mcp`: the server front driven by rmcp's client over an
//! in-process pipe, the import of a served runtime over loopback HTTP and of a child process,
//! and the gateway's configuration, policy and tool search.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod config;
mod front;
mod import;
#[cfg(all(feature = "otel", feature = "quickjs"))]
mod otel;
mod production;
mod search;
mod support;
mod upstream;
