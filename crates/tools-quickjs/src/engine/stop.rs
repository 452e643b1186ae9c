//! Keeping a stop from being swallowed while the engine builds an error's stack.
//!
//! The stop is the uncatchable error QuickJS throws when the interrupt handler says so. But
//! QuickJS-ng builds every error's stack (`build_backtrace`) by running JavaScript: the
//! prelude's `Error.prepareStackTrace` hook, a `valueOf` of `Error.stackTraceLimit`, a
//! function's `name` getter. An interrupt that fires inside that JavaScript throws the stop
//! there, and `build_backtrace` then discards it: it restores the exception it saved before
//! the hook ran, and the error being built is thrown over whatever is left. The program's
//! own, catchable error is what it sees. A program that throws and catches in a loop
//! (`for (;;) { try { null.x } catch {} }`) spends most of its polls inside the hook, and
//! its loop is periodic, so the handler (called every 10 000 polls) can land in the hook
//! every time: measured, such a program outlived every stop (compute budget, wall clock,
//! abort) and kept its thread spinning after the run had settled.
//!
//! So once a stop is requested, the realm is **disarmed** the first time the Rust side gets
//! control (the hook's call to `note`, on the next error): the prelude's `disarm` sets the
//! engine's own `prepareStackTrace` to `undefined` and its `stackTraceLimit` to 0, and the
//! program can no longer change the limit (its setter is the prelude's and refuses). From
//! then on `build_backtrace` runs no JavaScript at all, and the next interrupt's stop
//! sticks. The hook itself renders nothing once stopping.
//!
//! The engine's memory for the stop is held back from the run's cap in two rooms (see
//! `headroom.rs`). The disarm's room is given back just before the disarm runs, or at the
//! second stop interrupt of a realm not yet disarmed (a program so exhausted that not even
//! an error object can be made never reaches the hook, and no hook can swallow anything
//! then). The stop's room is given back by the handler when it throws a stop that sticks
//! (the realm is disarmed), right before QuickJS allocates the stop error.
//!
//! While `disarm` itself runs, the handler defers (returns `false`): its calls poll for
//! interrupts like any other, and a stop thrown there would be swallowed too.

use std::cell::Cell;

use rquickjs::{Ctx, Function};

use super::headroom::{Headroom, Room};

/// What the interrupt handler does once the run must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interrupt {
    /// Not now: the realm is being disarmed; the next poll asks again.
    Defer,
    /// Throw the stop (after giving back the room it may need).
    Stop {
        /// The room given back for this stop, if any.
        room: Option<Room>,
    },
}

/// The run's stop state, shared by the interrupt handler and the session (one thread).
pub(super) struct StopGuard {
    disarming: Cell<bool>,
    disarmed: Cell<bool>,
    interrupts: Cell<u32>,
    headroom: Headroom,
}

impl StopGuard {
    /// The stop state of a run whose memory cap is `cap` bytes.
    pub(super) fn new(cap: usize) -> StopGuard {
        StopGuard {
            disarming: Cell::new(false),
            disarmed: Cell::new(false),
            interrupts: Cell::new(0),
            headroom: Headroom::new(cap),
        }
    }

    /// The memory held back for the stop.
    pub(super) fn headroom(&self) -> &Headroom {
        &self.headroom
    }

    /// The handler's decision for an interrupt after the stop was requested.
    pub(super) fn on_stop_interrupt(&self) -> Interrupt {
        if self.disarming.get() {
            return Interrupt::Defer;
        }
        let n = self.interrupts.get().saturating_add(1);
        self.interrupts.set(n);
        let room = if self.disarmed.get() {
            Some(Room::Stop)
        } else if n >= 2 {
            Some(Room::Disarm)
        } else {
            None
        };
        if let Some(room) = room {
            self.headroom.give(room);
        }
        Interrupt::Stop { room }
    }

    /// Whether the realm is disarmed.
    pub(super) fn is_disarmed(&self) -> bool {
        self.disarmed.get()
    }

    /// Runs the prelude's `disarm` once (again on a later call if it failed).
    pub(super) fn disarm<'js>(&self, ctx: &Ctx<'js>, disarm: &Function<'js>) {
        if self.disarmed.get() || self.disarming.get() {
            return;
        }
        self.disarming.set(true);
        self.headroom.give(Room::Disarm);
        let done = disarm.call::<_, ()>(()).is_ok();
        self.disarming.set(false);
        if done {
            self.disarmed.set(true);
        } else {
            let _ = ctx.catch();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_stop_room_waits_for_the_disarm_and_the_disarm_room_for_a_second_stop() {
        let guard = StopGuard::new(1 << 20);
        assert_eq!(guard.on_stop_interrupt(), Interrupt::Stop { room: None });
        assert_eq!(guard.headroom.given(), 0);
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop {
                room: Some(Room::Disarm)
            }
        );
        assert_eq!(guard.headroom.given(), 1);

        let guard = StopGuard::new(1 << 20);
        guard.disarmed.set(true);
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop {
                room: Some(Room::Stop)
            }
        );
        assert_eq!(guard.headroom.given(), 2);
    }

    #[test]
    fn the_handler_defers_while_the_realm_is_disarmed() {
        let guard = StopGuard::new(1 << 20);
        guard.disarming.set(true);
        assert_eq!(guard.on_stop_interrupt(), Interrupt::Defer);
        // A deferred interrupt is not counted.
        guard.disarming.set(false);
        assert_eq!(guard.on_stop_interrupt(), Interrupt::Stop { room: None });
    }

    #[test]
    fn disarming_runs_the_prelude_function_once_with_its_room_given_back() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let disarm: Function<'_> = ctx
                .eval("globalThis.calls = 0; (function () { globalThis.calls++; })")
                .unwrap();
            let guard = StopGuard::new(1 << 20);
            guard.disarm(&ctx, &disarm);
            guard.disarm(&ctx, &disarm);
            assert!(guard.is_disarmed());
            assert_eq!(guard.headroom.given(), 1);
            let calls: i32 = ctx.eval("calls").unwrap();
            assert_eq!(calls, 1);
        });
    }
}
