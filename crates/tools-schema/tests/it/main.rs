//! Behaviour tests of `tools-schema`: the golden author-DSL file, the reference
//! implementation's author-DSL scenarios, depth safety and properties.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bounds;
mod depth;
mod golden;
mod properties;
mod scenarios;
#[cfg(feature = "schemars")]
mod schemars;

mod derive;
mod derive_properties;
#[path = "../../../tools-json/tests/it/reference.rs"]
mod reference;
#[path = "../../../tools-json/tests/it/support.rs"]
mod support;
