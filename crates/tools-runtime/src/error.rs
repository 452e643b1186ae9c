//! The crate's error type.

/// What building a runtime can refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parallelism cap of zero.
    #[error("{name} must be a positive integer")]
    InvalidCap {
        /// The setting.
        name: &'static str,
    },
}
