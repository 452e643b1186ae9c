//! Behaviour tests of `tools-codemode-sdk`: golden files, the reference implementation's SDK
//! generation scenarios, depth and linear-time safety, and properties of the renderers.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod depth;
mod golden;
mod properties;
mod scenarios_py;
mod scenarios_ts;
mod support;
mod tool_search;
