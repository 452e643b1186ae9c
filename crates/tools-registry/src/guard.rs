//! Guards: monotonic checks that can only deny.

use crate::CallInfo;

/// A synchronous check run for every allowed call, after the pre-execute decision. A
/// reason denies the call; there is no way to allow, so nothing can overturn a denial.
///
/// Implemented for every `Fn(&CallInfo) -> Option<String> + Send + Sync`.
///
/// # Examples
///
/// ```
/// use tools_registry::{CallInfo, Guard};
///
/// let no_rm = |call: &CallInfo| {
///     let command = call.arguments.get("command")?.as_str()?;
///     command.contains("rm -rf").then(|| "destructive command".to_owned())
/// };
/// fn is_guard(_: &impl Guard) {}
/// is_guard(&no_rm);
/// ```
pub trait Guard: Send + Sync + 'static {
    /// The denial reason, or `None` to let the call through.
    fn check(&self, call: &CallInfo) -> Option<String>;
}

impl<F> Guard for F
where
    F: Fn(&CallInfo) -> Option<String> + Send + Sync + 'static,
{
    fn check(&self, call: &CallInfo) -> Option<String> {
        self(call)
    }
}
