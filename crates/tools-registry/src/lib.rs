//! `tools-registry`: tool definitions, scopes, shadowing, restrict masks, presentation modes and the model-facing schema projection.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #4.
#![forbid(unsafe_code)]
