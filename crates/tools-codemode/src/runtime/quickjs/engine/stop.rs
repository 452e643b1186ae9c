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
//! The memory reserve (see `run_on`) is freed only when the stop can stick: once the realm
//! is disarmed, or at the second stop interrupt (a program so exhausted that not even an
//! error object can be made never reaches the hook, and no hook can swallow anything
//! then). A stop swallowed before that has therefore not spent the reserve.
//!
//! While `disarm` itself runs, the handler defers (returns `false`): its calls poll for
//! interrupts like any other, and a stop thrown there would be swallowed too.

use std::cell::Cell;

use rquickjs::{Ctx, Function};

/// What the interrupt handler does once the run must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interrupt {
    /// Not now: the realm is being disarmed; the next poll asks again.
    Defer,
    /// Throw the stop, freeing the memory reserve first when `free_reserve`.
    Stop {
        /// Whether the reserve is spent on this stop.
        free_reserve: bool,
    },
}

/// The run's stop state, shared by the interrupt handler and the session (one thread).
#[derive(Debug, Default)]
pub(super) struct StopGuard {
    disarming: Cell<bool>,
    disarmed: Cell<bool>,
    interrupts: Cell<u32>,
}

impl StopGuard {
    /// The handler's decision for an interrupt after the stop was requested.
    pub(super) fn on_stop_interrupt(&self) -> Interrupt {
        if self.disarming.get() {
            return Interrupt::Defer;
        }
        let n = self.interrupts.get().saturating_add(1);
        self.interrupts.set(n);
        Interrupt::Stop {
            free_reserve: self.disarmed.get() || n >= 2,
        }
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
    fn the_reserve_waits_for_the_disarm_or_a_second_stop() {
        let guard = StopGuard::default();
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop {
                free_reserve: false
            }
        );
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop { free_reserve: true }
        );

        let guard = StopGuard::default();
        guard.disarmed.set(true);
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop { free_reserve: true }
        );
    }

    #[test]
    fn the_handler_defers_while_the_realm_is_disarmed() {
        let guard = StopGuard::default();
        guard.disarming.set(true);
        assert_eq!(guard.on_stop_interrupt(), Interrupt::Defer);
        // A deferred interrupt is not counted.
        guard.disarming.set(false);
        assert_eq!(
            guard.on_stop_interrupt(),
            Interrupt::Stop {
                free_reserve: false
            }
        );
    }

    #[test]
    fn disarming_runs_the_prelude_function_once() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let disarm: Function<'_> = ctx
                .eval("globalThis.calls = 0; (function () { globalThis.calls++; })")
                .unwrap();
            let guard = StopGuard::default();
            guard.disarm(&ctx, &disarm);
            guard.disarm(&ctx, &disarm);
            assert!(guard.is_disarmed());
            let calls: i32 = ctx.eval("calls").unwrap();
            assert_eq!(calls, 1);
        });
    }
}
