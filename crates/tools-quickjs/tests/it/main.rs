//! Behaviour tests of `tools-quickjs`: the in-process TypeScript runtime against the code
//! runtime contract, hostile and exotic programs (in process and in the confined worker),
//! and the worker driven by hand over its JSON-Lines protocol.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod exotic;
mod hostile_ts;
mod quickjs;
mod quickjs_bindings;
mod quickjs_process;
mod worker;
