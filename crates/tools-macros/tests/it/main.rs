//! Tests of `tools-macros` through the crates that re-export it: the compile-fail suite
//! (`tests/ui`, pinned compiler messages) and `#[tool]` end to end.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod tool_fn;
mod ui;
