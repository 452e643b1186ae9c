//! `tools-runtime`: one ToolRuntime composing the registry and the pipeline, with the parallel call scheduler and the timeout policy.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #6.
#![forbid(unsafe_code)]
