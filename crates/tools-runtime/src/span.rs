//! The span of one call the runtime is given: `tools_pipeline::trace`'s.

pub(crate) use tools_pipeline::trace::{call_span, record_outcome};
