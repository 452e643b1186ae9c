//! Behaviour tests of `tools-runtime`: the batch scheduler (catalogue group P), the timeout
//! policy (group Q), batch approval, metrics and spans, and Code Mode end to end.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod approval;
mod approval_memory;
mod budget;
mod code_mode;
mod declarations;
mod error_detail;
mod middleware;
mod observability;
mod provider;
mod scheduler;
mod search;
mod support;
mod timeout;
