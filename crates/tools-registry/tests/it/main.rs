//! Behaviour tests of `tools-registry`: the reference implementation's acceptance scenarios
//! for registration, the typed helper, scopes and restrictions, concurrency classification,
//! and the registration side of guards and presentation modes, thread safety, and a
//! property test of the visibility resolver against a reference model.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod arguments;
mod classification;
mod concurrency;
mod exposure;
mod guards;
mod model;
mod modes;
mod registration;
mod scopes;
mod support;
mod typed;
