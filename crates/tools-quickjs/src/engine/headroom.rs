//! The engine memory held back for the engine's own stop: once the realm is made, the run's
//! memory cap is lowered by two rooms of [`ROOM_BYTES`], and each is given back (the cap
//! raised) when the stop needs it (see `stop.rs`):
//! - [`Room::Disarm`], for disarming the realm, which runs a little JavaScript: given back
//!   just before, or at the second stop interrupt of a realm that is not disarmed yet (a
//!   program so exhausted that not even an error object can be made never gets there);
//! - [`Room::Stop`], for the stop error itself: given back by the interrupt handler when it
//!   throws a stop that sticks (the realm is disarmed), right before QuickJS allocates it.
//!
//! Two rooms because one was not enough: a program that keeps every object it makes and
//! catches every error (`let head = null; for (;;) try { for (;;) head = { next: head } }
//! catch {}`) fails to disarm for want of memory, so its stops are swallowed while its
//! errors' stacks are built, and it eats any room given back for the stop. Measured with the
//! single reserve this replaced, its engine thread was still spinning 60 s after its run had
//! settled (`tests/stop_headroom.rs`). A room given back for disarming cannot be eaten before
//! the disarm, which runs at once; the stop's room is given back only by the handler, when
//! nothing of the program runs before the stop error is made. The cap the host set is never
//! exceeded: the rooms come out of it.
//!
//! Why a lowered cap and not a buffer: the reserve used to be an `ArrayBuffer` of 256 KiB
//! that the handler freed. The engine zeroes a new buffer, and counting it pushed the
//! runtime past its first garbage-collection threshold: under callgrind the buffer, its
//! zeroing and that collection were about 470 000 of the 2.02 M instructions of a
//! `return 100` run (scenario f4). A lowered cap holds room back without touching a byte,
//! and can give it back in parts.
//!
//! Why this module holds `unsafe`: the interrupt handler runs inside the engine, while
//! `rquickjs` holds the runtime's lock, so `Runtime::set_memory_limit` cannot be called from
//! it. The cap is set with QuickJS's own `JS_SetMemoryLimit` (a plain store of the runtime's
//! limit field) on the runtime pointer read from the realm (see the `SAFETY` comments at
//! the two blocks).
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ptr::NonNull;

use rquickjs::{Ctx, qjs};

/// The size of each room held back. The stop error needs a few hundred bytes once the
/// realm is disarmed (no stack is built), and disarming a few kilobytes.
pub(super) const ROOM_BYTES: usize = 128 * 1024;

/// A room held back, numbered in the order they are given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// For disarming the realm.
    Disarm = 1,
    /// For the stop error.
    Stop = 2,
}

/// The rooms held back from one run's memory cap.
pub(super) struct Headroom {
    /// The run's memory cap.
    cap: usize,
    /// The runtime whose cap is lowered, until the run ends.
    runtime: Cell<Option<NonNull<qjs::JSRuntime>>>,
    /// How many rooms are given back (0 to 2).
    given: Cell<usize>,
}

impl Headroom {
    /// The rooms of a run whose memory cap is `cap` bytes (0: no cap, nothing held back).
    pub(super) fn new(cap: usize) -> Headroom {
        Headroom {
            cap,
            runtime: Cell::new(None),
            given: Cell::new(0),
        }
    }

    /// The cap while `given` rooms are given back.
    fn cap_with(&self, given: usize) -> usize {
        let held = (Room::Stop as usize).saturating_sub(given) * ROOM_BYTES;
        self.cap.saturating_sub(held)
    }

    /// Lowers the cap of `ctx`'s runtime by both rooms, until the returned guard is dropped
    /// (which forgets the runtime: no later call can reach it). A cap too small to hold
    /// them back (the limits refuse caps under 1 MiB) is left as it is, as is no cap.
    pub(super) fn hold(&self, ctx: &Ctx<'_>) -> Held<'_> {
        let held = Held(self);
        let lowered = self.cap_with(0);
        if lowered < 2 * ROOM_BYTES {
            return held;
        }
        // SAFETY: `ctx` is a live context of this thread's runtime (the borrow proves it),
        // and `JS_GetRuntime` only reads the context's runtime pointer.
        let runtime = unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        let Some(runtime) = NonNull::new(runtime) else {
            return held;
        };
        set_limit(runtime, lowered);
        self.runtime.set(Some(runtime));
        held
    }

    /// Gives `room` back to the engine, and any room before it (later calls for the same or
    /// an earlier room do nothing).
    pub(super) fn give(&self, room: Room) {
        let room = room as usize;
        if room <= self.given.get() {
            return;
        }
        self.given.set(room);
        if let Some(runtime) = self.runtime.get() {
            set_limit(runtime, self.cap_with(room));
        }
    }

    /// How many rooms are given back (for tests).
    #[cfg(test)]
    pub(super) fn given(&self) -> usize {
        self.given.get()
    }
}

/// The rooms held back while the realm works; dropping it forgets the runtime.
pub(super) struct Held<'a>(&'a Headroom);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.runtime.set(None);
    }
}

fn set_limit(runtime: NonNull<qjs::JSRuntime>, limit: usize) {
    // `size_t` is as wide as `usize` wherever QuickJS builds; saturate rather than assume.
    let limit = qjs::size_t::try_from(limit).unwrap_or(qjs::size_t::MAX);
    // SAFETY: `runtime` was read from a live context by `Headroom::hold` and is forgotten
    // when the guard `hold` returned is dropped, inside the realm's work (`run_on` keeps it
    // within `Context::with`, also on a panic), before the runtime can be freed. The
    // `Headroom` is `!Send` (it holds a raw pointer), so this runs on the thread that owns
    // the runtime, inside the realm's work or from the runtime's interrupt handler.
    // `JS_SetMemoryLimit` only stores the limit in the runtime's allocator state, which the
    // engine reads on its next allocation.
    unsafe { qjs::JS_SetMemoryLimit(runtime.as_ptr(), limit) }
}
