//! Behaviour tests of `tools-codemode`: golden files, the reference implementation's SDK
//! generation scenarios, depth and linear-time safety, properties, the output ledger, the
//! QuickJS and Python code runtimes, and the confined QuickJS worker process.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "bridge")]
mod bridge;
mod depth;
#[cfg(feature = "quickjs")]
mod exotic;
mod golden;
#[cfg(feature = "python")]
mod hostile_py;
#[cfg(feature = "python")]
mod hostile_root;
#[cfg(feature = "quickjs")]
mod hostile_ts;
#[cfg(any(feature = "quickjs", feature = "python"))]
mod hosts;
mod ledger;
mod properties;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "quickjs")]
mod quickjs;
#[cfg(all(feature = "quickjs-process", feature = "quickjs"))]
mod quickjs_process;
#[cfg(all(feature = "bridge", feature = "quickjs"))]
mod roundtrip;
mod scenarios;
mod support;
#[cfg(feature = "quickjs")]
mod worker;
