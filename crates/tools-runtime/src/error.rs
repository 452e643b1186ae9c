//! The crate's error type.

/// What building or configuring a runtime can refuse.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parallelism cap of zero.
    #[error("{name} must be a positive integer")]
    InvalidCap {
        /// The setting.
        name: &'static str,
    },
    /// A `code` or `both` presentation mode (deployment default or scope declaration)
    /// without a code runtime to run `run_code` programs on.
    #[error(
        "mode {mode} requires a code runtime — configure one with RuntimeBuilder::code_runtime"
    )]
    CodeRuntimeRequired {
        /// The mode.
        mode: tools_registry::PresentationMode,
    },
    /// The registry refused the operation.
    #[error(transparent)]
    Registry(#[from] tools_registry::Error),
    /// A model response does not have the provider's shape.
    #[error("the {provider:?} response cannot be read: {message}")]
    ProviderResponse {
        /// The provider.
        provider: crate::provider::Provider,
        /// What is wrong, where.
        message: String,
    },
}
