//! Behaviour tests of `tools-codemode`: golden files, the spec's §5.3 scenarios, depth and
//! linear-time safety, and properties.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod depth;
mod golden;
mod properties;
mod scenarios;
mod support;
