//! [`BindingFuture`]: what a [`super::BindingHost`] returns for one binding call.
//!
//! A concrete future rather than a boxed trait object, so the two answers that need no
//! box do not pay for one: a call refused at once ([`BindingFuture::ready`]) and, with the
//! `bridge` feature, a sub-call waiting for the lane's commit (`BindingFuture::reply`: the
//! reply channel and the run's own state, no allocation beyond the channel's).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tools_json::{ErrorCode, JsonValue};

/// What a binding call resolves with: the value, or why it rejects.
pub type BindingOutcome = Result<JsonValue, BindingError>;

/// Why a binding call rejects: the message the program's error carries and, when the host
/// knows it, a machine-readable code: an [`ErrorCode`]'s wire spelling such as
/// `"TOOL_TIMEOUT"`, or a tool's own code. The program's error gets it as `code`, so a
/// program tells failures apart without reading their text.
///
/// # Examples
///
/// ```
/// use tools_codemode::BindingError;
/// use tools_json::ErrorCode;
///
/// let plain: BindingError = "no such thing".into();
/// assert_eq!(plain.code, None);
/// let coded = BindingError::with_code(ErrorCode::Denied, "not under /etc");
/// assert_eq!(coded.code.as_deref(), Some("DENIED"));
/// assert_eq!(coded.to_string(), "not under /etc");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingError {
    /// The message.
    pub message: String,
    /// The machine-readable code, if the host has one.
    pub code: Option<Cow<'static, str>>,
}

impl BindingError {
    /// A rejection with a message and no code.
    pub fn new(message: impl Into<String>) -> BindingError {
        BindingError {
            message: message.into(),
            code: None,
        }
    }

    /// A rejection with one of the workspace's codes.
    pub fn with_code(code: ErrorCode, message: impl Into<String>) -> BindingError {
        BindingError {
            message: message.into(),
            code: Some(Cow::Borrowed(code.as_str())),
        }
    }

    /// A rejection with a code of the host's own (a tool's custom code).
    pub fn with_custom_code(code: impl Into<String>, message: impl Into<String>) -> BindingError {
        BindingError {
            message: message.into(),
            code: Some(Cow::Owned(code.into())),
        }
    }
}

impl fmt::Display for BindingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BindingError {}

impl From<String> for BindingError {
    fn from(message: String) -> BindingError {
        BindingError::new(message)
    }
}

impl From<&str> for BindingError {
    fn from(message: &str) -> BindingError {
        BindingError::new(message)
    }
}

/// The future of one binding call: the resolved value, or the message the call rejects with.
///
/// `Unpin` and `Send`; polling it after it completed is a logic error that returns a
/// rejection rather than panicking.
pub struct BindingFuture(Repr);

enum Repr {
    /// Settled when made; `None` once taken.
    Ready(Option<BindingOutcome>),
    /// Any other future.
    Boxed(Pin<Box<dyn Future<Output = BindingOutcome> + Send>>),
    /// A reply delivered over a channel and settled by its sender's side.
    #[cfg(feature = "bridge")]
    Reply(reply::Reply),
}

impl BindingFuture {
    /// A call that settles through `future` (boxed once).
    pub fn new(future: impl Future<Output = BindingOutcome> + Send + 'static) -> BindingFuture {
        BindingFuture(Repr::Boxed(Box::pin(future)))
    }

    /// A call settled already (no allocation): for a call refused before it starts.
    pub fn ready(outcome: BindingOutcome) -> BindingFuture {
        BindingFuture(Repr::Ready(Some(outcome)))
    }

    /// A call answered over `answer`, whose delivery `settle` turns into the outcome.
    #[cfg(feature = "bridge")]
    pub(crate) fn reply(
        answer: tokio::sync::oneshot::Receiver<BindingOutcome>,
        settle: std::sync::Arc<dyn SettleReply>,
        name: tools_registry::ToolName,
    ) -> BindingFuture {
        BindingFuture(Repr::Reply(reply::Reply {
            answer,
            settle,
            name,
        }))
    }
}

impl Future for BindingFuture {
    type Output = BindingOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<BindingOutcome> {
        match &mut self.0 {
            Repr::Ready(outcome) => Poll::Ready(
                outcome
                    .take()
                    .unwrap_or_else(|| Err("binding call polled after it settled".into())),
            ),
            Repr::Boxed(future) => future.as_mut().poll(cx),
            #[cfg(feature = "bridge")]
            Repr::Reply(reply) => reply.poll(cx),
        }
    }
}

impl fmt::Debug for BindingFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.0 {
            Repr::Ready(Some(_)) => "ready",
            Repr::Ready(None) => "taken",
            Repr::Boxed(_) => "pending",
            #[cfg(feature = "bridge")]
            Repr::Reply(_) => "reply",
        };
        f.debug_tuple("BindingFuture").field(&state).finish()
    }
}

/// Turns what a reply channel delivered into the call's outcome (the sender's side owns
/// the rules: a run that is over discards a value, a dropped sender is an abandoned call).
#[cfg(feature = "bridge")]
pub(crate) trait SettleReply: Send + Sync {
    /// `delivered` is `None` when the sender was dropped without answering.
    fn settle(&self, name: &str, delivered: Option<BindingOutcome>) -> BindingOutcome;
}

#[cfg(feature = "bridge")]
mod reply {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll};

    use tokio::sync::oneshot;
    use tools_registry::ToolName;

    use super::{BindingOutcome, SettleReply};

    pub(super) struct Reply {
        pub(super) answer: oneshot::Receiver<BindingOutcome>,
        pub(super) settle: Arc<dyn SettleReply>,
        pub(super) name: ToolName,
    }

    impl Reply {
        pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<BindingOutcome> {
            Pin::new(&mut self.answer)
                .poll(cx)
                .map(|delivered| self.settle.settle(self.name.as_str(), delivered.ok()))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use tools_json::JsonValue;

    use super::BindingFuture;

    fn poll(future: &mut BindingFuture) -> Poll<super::BindingOutcome> {
        pin!(future).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn ready_settles_once_and_then_rejects() {
        let mut future = BindingFuture::ready(Ok(JsonValue::null()));
        assert_eq!(format!("{future:?}"), r#"BindingFuture("ready")"#);
        assert!(matches!(poll(&mut future), Poll::Ready(Ok(_))));
        assert!(
            matches!(poll(&mut future), Poll::Ready(Err(m)) if m.message.contains("after it settled"))
        );
    }

    #[test]
    fn a_boxed_future_is_polled_through() {
        let mut future = BindingFuture::new(async { Err("no".into()) });
        assert!(matches!(poll(&mut future), Poll::Ready(Err(m)) if m.message == "no"));
    }
}
