//! Behaviour tests of `tools-search` through its public API: a realistic catalog, hostile
//! input, concurrency, and properties over arbitrary queries, patterns and catalogs.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod behaviour;
mod properties;
