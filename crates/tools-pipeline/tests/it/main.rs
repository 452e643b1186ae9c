//! Behaviour tests of `tools-pipeline`: the reference implementation's acceptance
//! scenarios for execution (output contract, post-execute, around-dispatch, pre-execute and
//! approval, cancellation, arguments, deferred contexts, final materialization, observers),
//! stock tower middleware in the execute waterfall, and stage ordering.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The hook helpers of `support` name closure-returning layer types in full.
#![allow(clippy::type_complexity)]

mod approval_last;
mod around;
mod basics;
mod cancel;
mod channels;
mod contexts;
mod exposure;
mod finalize;
mod guards;
mod identity;
mod middleware;
mod observers;
mod post;
mod pre;
mod stress;
mod support;
