//! Thread slots: which copy of a per-thread replicated value the current thread uses.
//!
//! A value every call clones (a scope's view, a pipeline's hook snapshot) is one reference
//! count that every worker writes, twice per call: on two cores that cache line moves
//! between them on every call and the second worker adds little. Keeping [`count`] handles
//! on it, each its own allocation, and letting each thread clone the handle of its slot
//! makes those writes thread-local in the common case (no more threads than slots).
//! Threads beyond that share slots, which is correct, only slower.
//!
//! ```
//! let mine = tools_registry::slot::current();
//! assert!(mine < tools_registry::slot::count());
//! assert_eq!(tools_registry::slot::current(), mine);
//! ```

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The next slot a thread is given (round robin over [`count`]).
static NEXT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's slot, given on first use (`usize::MAX`: none yet).
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// How many copies a replicated value keeps: a power of two, twice the parallelism the
/// process may use (a runtime's workers plus the threads that block on it), 4 to 64.
pub fn count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        cores.saturating_mul(2).clamp(4, 64).next_power_of_two()
    })
}

/// The current thread's slot, below [`count`]. A thread whose locals are already gone
/// (a destructor running at thread exit) uses slot 0.
pub fn current() -> usize {
    SLOT.try_with(|slot| {
        let mine = slot.get();
        if mine != usize::MAX {
            return mine;
        }
        let given = NEXT.fetch_add(1, Ordering::Relaxed) % count();
        slot.set(given);
        given
    })
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_a_power_of_two_in_range() {
        let count = count();
        assert!(count.is_power_of_two());
        assert!((4..=64).contains(&count));
    }

    #[test]
    fn a_thread_keeps_its_slot_and_fresh_threads_spread_over_slots() {
        let mine = current();
        assert_eq!(current(), mine);
        assert!(mine < count());
        // Fresh threads take slots round robin. Other tests' threads may take some in
        // between, but not so many that `count() + 1` threads in a row all share one.
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..=count() {
            let Ok(slot) = std::thread::spawn(current).join() else {
                panic!("a slot thread panicked");
            };
            assert!(slot < count());
            seen.insert(slot);
        }
        assert!(seen.len() > 1, "every fresh thread got slot {seen:?}");
    }
}
