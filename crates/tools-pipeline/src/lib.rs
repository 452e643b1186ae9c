//! `tools-pipeline`: the guarded execution path of one tool call as staged tower services.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #5.
#![forbid(unsafe_code)]
