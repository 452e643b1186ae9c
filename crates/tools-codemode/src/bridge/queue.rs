//! The hand-off of binding calls from the program's side to the lane: one queue per run,
//! behind the lock that numbers the calls.
//!
//! Numbering already takes a lock per call (so that `n` follows submission order even when
//! a runtime calls the host from several threads), so the queue lives under that same lock
//! instead of behind a channel of its own: a call is numbered and queued in one critical
//! section, and the lane takes everything queued at once. An unbounded `mpsc` channel cost
//! a semaphore update and a slot write per call on top of the lock, a read and a block
//! check per receive, and a 1.5 kB block allocation every 32 calls in flight, which with
//! many sub-calls outstanding (scenario f2) sent the allocator down its slow paths. Here
//! the lane swaps the queue's contents into its own queue, and both keep their capacity,
//! so a run in its steady state allocates nothing for the hand-off.
//!
//! The lane's end, [`Receiver`], closes the queue when it is dropped or closed: later
//! submissions are refused, and those not taken yet are handed back (or dropped with it, so
//! that whoever waits on them hears that they were abandoned), as a dropped channel
//! receiver did.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// The queue of one run's submissions (see the module docs).
pub(crate) struct SubmitQueue<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    /// The last number handed out (the first call is 1).
    last: u64,
    items: VecDeque<T>,
    /// The lane, when it waits for a submission.
    waker: Option<Waker>,
    /// Set when the lane's [`Receiver`] closes: no submission is accepted after.
    closed: bool,
}

impl<T> SubmitQueue<T> {
    /// An open, empty queue and the lane's end of it.
    pub(crate) fn new() -> (Arc<SubmitQueue<T>>, Receiver<T>) {
        let queue = Arc::new(SubmitQueue {
            inner: Mutex::new(Inner {
                last: 0,
                items: VecDeque::new(),
                waker: None,
                closed: false,
            }),
        });
        (Arc::clone(&queue), Receiver(queue))
    }

    /// A panic elsewhere while the lock was held leaves the queue consistent (every
    /// critical section is a few plain writes), so a poisoned lock is used as it is.
    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Numbers the next call, builds it with `make` and queues it, waking the lane; `false`
    /// (nothing built) once the lane's end is closed.
    pub(crate) fn submit(&self, make: impl FnOnce(u64) -> T) -> bool {
        let waker = {
            let mut inner = self.lock();
            if inner.closed {
                return false;
            }
            inner.last += 1;
            let item = make(inner.last);
            inner.items.push_back(item);
            inner.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }
}

/// The lane's end of a [`SubmitQueue`]: takes what was submitted, and closes the queue
/// when closed or dropped.
pub(crate) struct Receiver<T>(Arc<SubmitQueue<T>>);

impl<T> Receiver<T> {
    /// Moves every queued submission, in order, to the back of `into`; pending (the lane
    /// woken by the next submission) when there is none.
    pub(crate) fn poll_take(&self, cx: &mut Context<'_>, into: &mut VecDeque<T>) -> Poll<()> {
        let mut inner = self.0.lock();
        if !inner.items.is_empty() {
            into.append(&mut inner.items);
            return Poll::Ready(());
        }
        match &inner.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => inner.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Refuses every later submission and returns those not taken yet, in order.
    pub(crate) fn close(&self) -> VecDeque<T> {
        let mut inner = self.0.lock();
        inner.closed = true;
        inner.waker = None;
        std::mem::take(&mut inner.items)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Dropped outside the lock: dropping a submission may wake whoever waits on it.
        drop(self.close());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn numbers_in_order_takes_all_at_once_and_wakes_a_waiting_lane() {
        let (queue, receiver) = SubmitQueue::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut taken = VecDeque::new();
        assert!(receiver.poll_take(&mut cx, &mut taken).is_pending());
        assert!(queue.submit(|n| n * 10));
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the waiting lane is woken"
        );
        assert!(queue.submit(|n| n * 10));
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "a lane that did not wait again is not"
        );
        assert!(receiver.poll_take(&mut cx, &mut taken).is_ready());
        assert_eq!(Vec::from(taken.clone()), [10, 20]);
        assert!(receiver.poll_take(&mut cx, &mut taken).is_pending());
        assert!(queue.submit(|n| n * 10));
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert!(receiver.poll_take(&mut cx, &mut taken).is_ready());
        assert_eq!(Vec::from(taken), [10, 20, 30]);
    }

    #[test]
    fn closing_refuses_later_submissions_and_hands_back_the_queued_ones() {
        let (queue, receiver) = SubmitQueue::new();
        assert!(queue.submit(|n| n));
        assert!(queue.submit(|n| n));
        assert_eq!(Vec::from(receiver.close()), [1, 2]);
        let mut built = false;
        assert!(!queue.submit(|n| {
            built = true;
            n
        }));
        assert!(!built, "nothing is built for a refused submission");
    }

    #[test]
    fn dropping_the_receiver_drops_what_it_did_not_take() {
        let (queue, receiver) = SubmitQueue::new();
        let item = Arc::new(());
        assert!(queue.submit(|_| Arc::clone(&item)));
        assert_eq!(Arc::strong_count(&item), 2);
        drop(receiver);
        assert_eq!(
            Arc::strong_count(&item),
            1,
            "the queued submission was dropped"
        );
        assert!(!queue.submit(|_| Arc::clone(&item)));
    }
}
