//! Building blocks for the code runtimes that live in crates of their own (`tools-quickjs`,
//! `tools-sandbox`, or a host's own engine): the run bookkeeping behind
//! [`CodeRuntime::dispose`](crate::CodeRuntime::dispose), the JSON-Lines wire that a host
//! and its child process share, and the exact failures every runtime reports the same way.
//!
//! A host that only runs programs needs none of this.

pub use super::ledger::{json_value_len_within, output_limit_message};
pub use super::lifecycle::{Admitted, RunGuard, RunRegistry};
pub use super::wire;
pub use super::{invalid_output, invalid_output_at};
