//! What the run's thread and the host share: the stop reason and the busy-time clock, and
//! the messages between them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tools_json::JsonValue;

use tools_codemode::{BindingNamespace, RuntimeLimits};

/// Why a run is being stopped; the first reason recorded wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum StopReason {
    /// The request's token was cancelled.
    Abort = 1,
    /// The runtime was disposed.
    Disposed = 2,
    /// The wall-clock ceiling.
    Wall = 3,
    /// The compute budget.
    Compute = 4,
    /// The output ledger crossed its cap.
    OutputLimit = 5,
    /// The engine ran out of memory; recorded the moment the program sees the engine's
    /// out-of-memory error, so a program that catches it still ends (docs/decisions.md,
    /// entry 29).
    OutOfMemory = 6,
}

impl StopReason {
    fn from_u8(raw: u8) -> Option<StopReason> {
        Some(match raw {
            1 => StopReason::Abort,
            2 => StopReason::Disposed,
            3 => StopReason::Wall,
            4 => StopReason::Compute,
            5 => StopReason::OutputLimit,
            6 => StopReason::OutOfMemory,
            _ => return None,
        })
    }
}

/// State shared by the host and the run's thread (and its interrupt handler).
#[derive(Debug)]
pub(super) struct Shared {
    stop: AtomicU8,
    /// Busy time of finished slices, in nanoseconds.
    busy: AtomicU64,
    /// Start of the current slice in nanoseconds since `epoch`, plus one; 0 while idle.
    slice_start: AtomicU64,
    epoch: Instant,
    compute: Duration,
}

impl Shared {
    /// Shared state for a run with this compute budget.
    pub(super) fn new(compute: Duration) -> Shared {
        Shared {
            stop: AtomicU8::new(0),
            busy: AtomicU64::new(0),
            slice_start: AtomicU64::new(0),
            epoch: Instant::now(),
            compute,
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Records a stop reason; `false` when another reason was recorded first.
    pub(super) fn request_stop(&self, reason: StopReason) -> bool {
        self.stop
            .compare_exchange(0, reason as u8, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// The recorded stop reason.
    pub(super) fn stop_reason(&self) -> Option<StopReason> {
        StopReason::from_u8(self.stop.load(Ordering::SeqCst))
    }

    /// Busy time so far, the current slice included.
    pub(super) fn busy(&self) -> Duration {
        let finished = self.busy.load(Ordering::SeqCst);
        let start = self.slice_start.load(Ordering::SeqCst);
        let current = if start == 0 {
            0
        } else {
            self.now().saturating_sub(start - 1)
        };
        Duration::from_nanos(finished.saturating_add(current))
    }

    /// Whether the run must stop now; records the compute budget when it ran out.
    pub(super) fn must_stop(&self) -> bool {
        if self.stop.load(Ordering::SeqCst) != 0 {
            return true;
        }
        if self.busy() > self.compute {
            self.request_stop(StopReason::Compute);
            return true;
        }
        false
    }

    pub(super) fn begin_slice(&self) {
        self.slice_start.store(self.now() + 1, Ordering::SeqCst);
    }

    pub(super) fn end_slice(&self) {
        let start = self.slice_start.swap(0, Ordering::SeqCst);
        if start != 0 {
            let spent = self.now().saturating_sub(start - 1);
            self.busy.fetch_add(spent, Ordering::SeqCst);
        }
    }
}

/// What the run's thread tells the host.
#[derive(Debug)]
pub(super) enum Event {
    /// The program called `namespaces[namespace].names[name](args)`.
    Call {
        id: u64,
        namespace: usize,
        /// The index of the binding's name among the namespace's names.
        name: usize,
        args: JsonValue,
    },
    /// One console call.
    Log(String),
    /// The program settled (or the run stopped); sent before the engine is torn down.
    Done(Outcome),
}

/// How the program ended, as seen from its thread.
#[derive(Debug)]
pub(super) enum Outcome {
    /// It completed; `None` for `undefined`.
    Completed(Option<JsonValue>),
    /// It threw; the rendered exception.
    Threw(String),
    /// Its completion value is not lossless JSON.
    InvalidOutput {
        /// The depth limit, when the value nested past it.
        too_deep: Option<usize>,
        /// Where the value is not JSON and why (`$.a[1]: undefined is not JSON`).
        detail: Option<String>,
    },
    /// A stop reason ended it (see [`Shared::stop_reason`]).
    Stopped,
    /// The engine ran out of memory.
    OutOfMemory,
    /// The engine could not be set up.
    Broken(String),
}

/// What the host tells the run's thread.
#[derive(Debug)]
pub(super) enum Command {
    /// The outcome of a binding call.
    Reply {
        id: u64,
        result: tools_codemode::BindingOutcome,
    },
    /// Stop now (the stop reason is already recorded).
    Stop,
}

/// Everything the run's thread needs.
#[derive(Debug)]
pub(super) struct Setup {
    /// The stripped, wrapped program.
    pub(super) code: String,
    /// The run's namespaces, shared with the host side of the run (never copied per run).
    pub(super) namespaces: Arc<Vec<BindingNamespace>>,
    pub(super) limits: RuntimeLimits,
    pub(super) shared: Arc<Shared>,
    pub(super) events: mpsc::UnboundedSender<Event>,
    pub(super) commands: std::sync::mpsc::Receiver<Command>,
}
