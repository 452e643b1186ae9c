//! Behaviour tests of `tools-registry`: catalogue groups A, B, C, O and the registration
//! side of D and E of `shared/spec/pipeline.md`, thread safety, and a property test of the
//! visibility resolver against a reference model.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod arguments;
mod classification;
mod concurrency;
mod guards;
mod model;
mod modes;
mod registration;
mod scopes;
mod support;
mod typed;
