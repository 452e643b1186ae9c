//! The crate's error type.

/// What the pipeline's API refuses. Calls themselves never fail: every failure of a call is
/// an error [`crate::ToolResult`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A call named the empty string (docs/decisions.md, entry 11).
    #[error("a tool call must name a tool (the name is empty)")]
    EmptyName,
}
