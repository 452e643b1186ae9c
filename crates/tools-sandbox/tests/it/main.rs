//! Behaviour tests of `tools-sandbox`: the Python runtime against the code runtime contract,
//! hostile Python programs, and what the sandbox holds when the host runs as root.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "python")]
mod hostile_py;
#[cfg(feature = "python")]
mod hostile_root;
#[cfg(feature = "python")]
mod python;
