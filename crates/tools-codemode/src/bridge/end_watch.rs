//! The lane's wait for the end of its run, registered with the run token once.
//!
//! The lane waits for "a body settled, a submission, or the run's end" once per sub-call
//! in a sequential program. Polling the token's wait future every time takes the token's
//! `Notify` lock to compare the waker it holds with the one it is given, and the token's
//! own lock before that; both are shared by every sub-call of the run. [`EndWatch`]
//! remembers the waker it registered: while the lane is polled with a waker that wakes
//! the same task, the registration is still good and a cancellation check (one lock)
//! says whether the end came. A different waker (the lane's future moved to another
//! task) polls the wait again, which re-registers.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// A wait for `token`'s cancellation that is polled many times by the same task.
pub(super) struct EndWatch {
    token: CancellationToken,
    wait: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The waker the wait was last polled with (`None`: never polled, or it was ready).
    registered: Option<Waker>,
}

impl EndWatch {
    /// A watch over `token` (one allocation: the wait future, made once per run).
    pub(super) fn new(token: CancellationToken) -> EndWatch {
        EndWatch {
            wait: Box::pin(token.clone().cancelled_owned()),
            token,
            registered: None,
        }
    }

    /// Ready once the token is cancelled. Pending registers `cx`'s waker to be woken
    /// then, unless an equivalent waker is registered already.
    pub(super) fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(registered) = &self.registered
            && registered.will_wake(cx.waker())
        {
            return if self.token.is_cancelled() {
                Poll::Ready(())
            } else {
                Poll::Pending
            };
        }
        match self.wait.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.registered = None;
                Poll::Ready(())
            }
            Poll::Pending => {
                self.registered = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (Arc::clone(&count), Waker::from(count))
    }

    #[test]
    fn a_cancellation_after_registration_wakes_the_registered_task_and_is_seen() {
        let token = CancellationToken::new();
        let mut watch = EndWatch::new(token.clone());
        let (count, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        assert!(watch.poll_end(&mut cx).is_pending());
        // Polled again by the same task: still pending, nothing re-registered.
        assert!(watch.poll_end(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        token.cancel();
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the registered waker is woken"
        );
        assert!(watch.poll_end(&mut cx).is_ready());
    }

    #[test]
    fn a_new_waker_is_registered_and_the_old_one_is_not_woken() {
        let token = CancellationToken::new();
        let mut watch = EndWatch::new(token.clone());
        let (first_count, first) = waker();
        let (second_count, second) = waker();
        assert!(
            watch
                .poll_end(&mut Context::from_waker(&first))
                .is_pending()
        );
        // The lane's future moved to another task: the new task must be the one woken.
        assert!(
            watch
                .poll_end(&mut Context::from_waker(&second))
                .is_pending()
        );
        token.cancel();
        assert_eq!(second_count.0.load(Ordering::SeqCst), 1);
        assert_eq!(first_count.0.load(Ordering::SeqCst), 0);
        assert!(watch.poll_end(&mut Context::from_waker(&second)).is_ready());
    }

    #[test]
    fn a_token_cancelled_before_the_first_poll_or_through_its_parent_is_ready() {
        let parent = CancellationToken::new();
        let mut early = EndWatch::new(parent.child_token());
        let mut late = EndWatch::new(parent.child_token());
        let (count, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        assert!(late.poll_end(&mut cx).is_pending());
        parent.cancel();
        assert!(early.poll_end(&mut cx).is_ready());
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(late.poll_end(&mut cx).is_ready());
    }
}
