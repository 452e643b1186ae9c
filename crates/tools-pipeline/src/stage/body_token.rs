//! The body's cancellation token, made only if the body asks for it.
//!
//! Most bodies never look at their token. The first dispatch of an execution whose token
//! no wrapper replaced therefore claims the execution's [`BodyToken`] instead of making a
//! token: the body's [`RunContext`](tools_registry::RunContext) makes it on first use (a
//! child of the caller's token, if the call has one), and the pipeline's own cancellation
//! (the caller cancelled, the body future was dropped) only sets a flag while nobody holds
//! it. A dispatch under a wrapper's replacement token, and a later dispatch of the same
//! execution (a retrying wrapper: the claimed token may be cancelled already), make their
//! own token at once, as before.
//!
//! The parent is not stored: it is the execution's caller token, which the execution
//! holds, so a claim is one atomic swap.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering, fence};

use tokio_util::sync::CancellationToken;

/// The token of the body of an execution's first dispatch, made on demand as a child of
/// the caller's token (`parent` in the methods below).
#[derive(Default)]
pub(crate) struct BodyToken {
    claimed: AtomicBool,
    token: OnceLock<CancellationToken>,
    /// Cancelled before (or while) the token was made.
    cancelled: AtomicBool,
}

impl BodyToken {
    /// Claims the token for a dispatch; `false` when an earlier dispatch of the execution
    /// claimed it.
    pub(crate) fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::Relaxed)
    }

    /// The token, made on the first call under `parent`.
    pub(crate) fn get(&self, parent: Option<&CancellationToken>) -> &CancellationToken {
        let token = self.token.get_or_init(|| {
            parent.map_or_else(CancellationToken::new, CancellationToken::child_token)
        });
        // Pairs with the fence in `cancel`: of a concurrent `get` and `cancel`, at least
        // one sees the other's write, so the made token never misses a cancellation.
        fence(Ordering::SeqCst);
        if self.cancelled.load(Ordering::Relaxed) {
            token.cancel();
        }
        token
    }

    /// Cancels the body's token, made or not.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if let Some(token) = self.token.get() {
            token.cancel();
        }
    }

    /// Whether the body's token is (or, once made, will be) cancelled; makes nothing.
    pub(crate) fn is_cancelled(&self, parent: Option<&CancellationToken>) -> bool {
        self.cancelled.load(Ordering::SeqCst)
            || self
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
            || parent.is_some_and(CancellationToken::is_cancelled)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use super::BodyToken;

    #[test]
    fn only_the_first_dispatch_claims_it() {
        let body = BodyToken::default();
        assert!(body.claim());
        assert!(!body.claim());
    }

    #[test]
    fn nothing_is_made_until_asked_and_a_cancel_before_reaches_the_made_token() {
        let body = BodyToken::default();
        assert!(body.claim());
        assert!(!body.is_cancelled(None));
        body.cancel();
        assert!(body.token.get().is_none(), "cancelling made no token");
        assert!(body.is_cancelled(None));
        assert!(body.get(None).is_cancelled());
    }

    #[test]
    fn a_made_token_is_cancelled_by_cancel_and_by_its_parent() {
        let parent = CancellationToken::new();
        let body = BodyToken::default();
        let token = body.get(Some(&parent)).clone();
        assert!(!token.is_cancelled());
        parent.cancel();
        assert!(token.is_cancelled() && body.is_cancelled(Some(&parent)));

        let body = BodyToken::default();
        let token = body.get(None).clone();
        body.cancel();
        assert!(token.is_cancelled());
    }

    #[test]
    fn a_parent_cancelled_before_the_token_is_made_counts() {
        let parent = CancellationToken::new();
        let body = BodyToken::default();
        parent.cancel();
        assert!(body.is_cancelled(Some(&parent)));
        assert!(!body.is_cancelled(None), "the flag itself is not set");
        assert!(body.get(Some(&parent)).is_cancelled());
    }

    #[test]
    fn a_cancel_racing_the_first_use_is_never_lost() {
        for _ in 0..2_000 {
            let body = Arc::new(BodyToken::default());
            let canceller = {
                let body = Arc::clone(&body);
                std::thread::spawn(move || body.cancel())
            };
            let token = body.get(None).clone();
            canceller.join().unwrap_or_default();
            assert!(token.is_cancelled());
        }
    }
}
