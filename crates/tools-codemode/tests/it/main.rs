//! Behaviour tests of `tools-codemode`: the output ledger, the Code Mode bridge against the
//! reference implementation's scheduler and bridge scenarios, and the bridge's round trip
//! with real TypeScript programs on the QuickJS runtime.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "bridge")]
mod bridge;
mod ledger;
#[cfg(feature = "bridge")]
mod roundtrip;
