//! Behaviour tests of `tools-json`: golden files, the official conformance suite, the
//! reference implementation's scenarios, depth safety and properties.

// Test code reports failure by panicking, and prints the conformance totals.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::disallowed_macros
)]

mod bounds;
mod conformance;
mod depth;
mod golden;
mod pattern_bounds;
mod properties;
mod reference;
mod scenarios;
mod support;
