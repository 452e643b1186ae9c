//! `tools-codemode`: the reserved run_code transport, TypeScript and Python SDK generation and the sub-call bridge.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #8.
#![forbid(unsafe_code)]
