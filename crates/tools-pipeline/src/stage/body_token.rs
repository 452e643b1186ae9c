//! The body's cancellation token, made only if the body asks for it.
//!
//! Most bodies never look at their token. The first dispatch of an execution therefore
//! claims the execution's [`BodyToken`] instead of making a token: the body's
//! [`RunContext`](tools_registry::RunContext) makes it on first use (a child of the
//! innermost wrapper's token, if a wrapper replaced the caller's), and the pipeline's own
//! cancellation (the caller cancelled, the body future was dropped) only sets a flag while
//! nobody holds it. A later dispatch of the same execution (a wrapper that retries) makes
//! its own token as before: the claimed one may already be cancelled.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering, fence};

use tokio_util::sync::CancellationToken;

/// The token of the body of an execution's first dispatch, made on demand.
#[derive(Default)]
pub(crate) struct BodyToken {
    /// Set by the dispatch that claimed it: the token the body's token descends from.
    parent: OnceLock<Option<CancellationToken>>,
    token: OnceLock<CancellationToken>,
    /// Cancelled before (or while) the token was made.
    cancelled: AtomicBool,
}

impl BodyToken {
    /// Claims the token for a dispatch under `parent`; `false` when an earlier dispatch of
    /// the execution claimed it.
    pub(crate) fn claim(&self, parent: Option<CancellationToken>) -> bool {
        self.parent.set(parent).is_ok()
    }

    /// The token, made on the first call.
    pub(crate) fn get(&self) -> &CancellationToken {
        let token = self.token.get_or_init(|| match self.parent.get() {
            Some(Some(parent)) => parent.child_token(),
            _ => CancellationToken::new(),
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
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
            || self
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
            || matches!(self.parent.get(), Some(Some(parent)) if parent.is_cancelled())
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
        assert!(body.claim(None));
        assert!(!body.claim(Some(CancellationToken::new())));
    }

    #[test]
    fn nothing_is_made_until_asked_and_a_cancel_before_reaches_the_made_token() {
        let body = BodyToken::default();
        assert!(body.claim(None));
        assert!(!body.is_cancelled());
        body.cancel();
        assert!(body.token.get().is_none(), "cancelling made no token");
        assert!(body.is_cancelled());
        assert!(body.get().is_cancelled());
    }

    #[test]
    fn a_made_token_is_cancelled_by_cancel_and_by_its_parent() {
        let parent = CancellationToken::new();
        let body = BodyToken::default();
        assert!(body.claim(Some(parent.clone())));
        let token = body.get().clone();
        assert!(!token.is_cancelled());
        parent.cancel();
        assert!(token.is_cancelled() && body.is_cancelled());

        let body = BodyToken::default();
        assert!(body.claim(None));
        let token = body.get().clone();
        body.cancel();
        assert!(token.is_cancelled());
    }

    #[test]
    fn a_parent_cancelled_before_the_token_is_made_counts() {
        let parent = CancellationToken::new();
        let body = BodyToken::default();
        assert!(body.claim(Some(parent.clone())));
        parent.cancel();
        assert!(body.is_cancelled());
        assert!(body.get().is_cancelled());
    }

    #[test]
    fn a_cancel_racing_the_first_use_is_never_lost() {
        for _ in 0..2_000 {
            let body = Arc::new(BodyToken::default());
            assert!(body.claim(None));
            let canceller = {
                let body = Arc::clone(&body);
                std::thread::spawn(move || body.cancel())
            };
            let token = body.get().clone();
            canceller.join().unwrap_or_default();
            assert!(token.is_cancelled());
        }
    }
}
