//! `tools-presentation`: UI render intents (call and result cards, kinds, locations, diffs) and their mapping to the Agent Client Protocol.
//!
//! **Not built yet.** This crate holds its place in the workspace's layer order
//! (see `docs/ARCHITECTURE.md`); its contents arrive with issue #7.
#![forbid(unsafe_code)]
