//! Behaviour tests of `tools-presentation`: the reference implementation's presentation
//! scenarios, the ACP mapping, properties, and depth safety.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "acp")]
mod acp;
mod depth;
mod properties;
mod scenarios;
mod support;
