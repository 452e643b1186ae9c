//! The limits enforced at the lossless boundary.

/// The depth limit applied when no [`Limits`] are given.
pub const DEFAULT_MAX_DEPTH: usize = 512;

/// Limits enforced at the lossless boundary.
///
/// Depth counts nested containers: a scalar has depth 0, `[]` and `{}` depth 1, `[[1]]`
/// depth 2. A value whose depth exceeds `max_depth` is rejected.
///
/// # Examples
///
/// ```
/// use tools_json::{JsonValue, Limits};
/// use serde_json::json;
///
/// let limits = Limits::default().with_max_depth(2);
/// assert!(JsonValue::with_limits(json!([[1]]), &limits).is_ok());
/// let err = JsonValue::with_limits(json!([[[1]]]), &limits).unwrap_err();
/// assert_eq!(err.to_string(), "value is not lossless JSON: value[0][0]: nesting exceeds the depth limit of 2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(crate) max_depth: usize,
}

impl Limits {
    /// Limits with a different maximum depth.
    #[must_use]
    pub const fn with_max_depth(mut self, max_depth: usize) -> Limits {
        self.max_depth = max_depth;
        self
    }

    /// The maximum container depth.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}
