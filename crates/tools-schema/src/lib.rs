//! `tools-schema`: the typed author DSL: parameter and value specs compiled to the enforced JSON Schema subset, typed arguments and outputs.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #3.
#![forbid(unsafe_code)]
