#![doc = include_str!("../README.md")]
// `deny`, not `forbid`: two engine-binding modules, `prelude_bytecode.rs` and
// `engine/headroom.rs`, allow it (their SAFETY comments say why each use is sound). This is
// the only crate of the workspace that may hold `unsafe` code.
#![deny(unsafe_code)]

mod convert;
mod engine;
mod inspect;
mod intrinsics;
mod prelude;
mod prelude_bytecode;
mod shared;
mod strip;
mod threads;
mod thrown;
mod worker;

pub use worker::quickjs_worker_main;

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use self::shared::{Command, Event, Outcome, Setup, Shared, StopReason};
use tools_codemode::Language;
use tools_codemode::kit::{RunGuard, RunRegistry};
use tools_codemode::{
    ABORTED_MESSAGE, CodeRunFailure, CodeRunRequest, CodeRunResult, CodeRuntime, ContractError,
    DISPOSED_MESSAGE, DisposeFuture, FailureKind, OutputLedger, RunFuture, RuntimeLimits,
};

/// Extra thread stack on top of the engine's stack limit, for the host functions.
const THREAD_STACK_SLACK: usize = 8 * 1024 * 1024;

/// The TypeScript runtime: QuickJS embedded, one fresh engine per run on a dedicated thread.
///
/// `language()` is TypeScript, `isolation()` is `embedded-thread`. The program is the body
/// of an async function (top-level `await` and `return`); its types are stripped in
/// strip-only mode, so `enum`, runtime namespaces and parameter properties fail the run as
/// an `exception` before any engine starts. The realm has no file system, network, process,
/// timers or module loader: only the ECMAScript built-ins, `console` and the bindings.
///
/// The thread is containment for a buggy program, not a security boundary: QuickJS is C
/// code reachable by the program.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tools_codemode::{BindingFuture, BindingHost, CodeRunRequest, CodeRuntime, RuntimeLimits};
/// use tools_quickjs::QuickJsRuntime;
/// use tools_json::JsonValue;
///
/// struct NoTools;
/// impl BindingHost for NoTools {
///     fn call(&self, _: &str, name: &str, _: JsonValue) -> BindingFuture {
///         BindingFuture::ready(Err(format!("unknown tool {name:?}").into()))
///     }
/// }
///
/// let runtime = QuickJsRuntime::new(RuntimeLimits::default())?;
/// let request = CodeRunRequest::new("console.log('hi');\nreturn 1 + 1;", vec![], Arc::new(NoTools));
/// let result = tokio::runtime::Builder::new_current_thread()
///     .enable_time()
///     .build()?
///     .block_on(runtime.run(request))?;
/// assert_eq!(result.value.map(|v| v.to_string()), Some("2".to_owned()));
/// assert_eq!(result.logs, ["hi"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct QuickJsRuntime {
    limits: RuntimeLimits,
    registry: Arc<RunRegistry>,
}

impl QuickJsRuntime {
    /// A runtime whose runs get `limits`.
    ///
    /// # Errors
    ///
    /// [`ContractError::InvalidLimit`] for a limit out of range.
    pub fn new(limits: RuntimeLimits) -> Result<QuickJsRuntime, ContractError> {
        limits.validate()?;
        Ok(QuickJsRuntime {
            limits,
            registry: RunRegistry::new(),
        })
    }

    /// The limits every run gets.
    pub fn limits(&self) -> &RuntimeLimits {
        &self.limits
    }
}

impl CodeRuntime for QuickJsRuntime {
    fn language(&self) -> Language {
        Language::TypeScript
    }

    fn isolation(&self) -> &str {
        "embedded-thread"
    }

    fn run(&self, request: CodeRunRequest) -> RunFuture {
        let limits = self.limits.clone();
        let registry = Arc::clone(&self.registry);
        Box::pin(async move {
            let (guard, ledger) = match registry.admit(&request, limits.max_output_bytes)? {
                Ok(admitted) => admitted,
                Err(ended) => return Ok(ended),
            };
            let code = match strip::strip(&request.program) {
                Ok(code) => code,
                Err(message) => {
                    return Ok(ledger.fail(CodeRunFailure::new(FailureKind::Exception, message)));
                }
            };
            Ok(drive(code, request, limits, &registry, guard, ledger).await)
        })
    }

    fn dispose(&self) -> DisposeFuture {
        let registry = Arc::clone(&self.registry);
        Box::pin(async move { registry.dispose().await })
    }
}

/// The message of a stop reason.
fn stop_failure(reason: StopReason, limits: &RuntimeLimits) -> CodeRunFailure {
    match reason {
        StopReason::Abort => CodeRunFailure::new(FailureKind::Abort, ABORTED_MESSAGE),
        StopReason::Disposed => CodeRunFailure::new(FailureKind::Abort, DISPOSED_MESSAGE),
        StopReason::Wall => CodeRunFailure::new(
            FailureKind::Timeout,
            format!("wall-clock ceiling reached ({}ms)", limits.wall.as_millis()),
        ),
        StopReason::Compute => CodeRunFailure::new(
            FailureKind::Timeout,
            format!(
                "compute budget exhausted ({}ms busy)",
                limits.compute.as_millis()
            ),
        ),
        StopReason::OutputLimit => CodeRunFailure::new(FailureKind::OutputLimit, ""),
        StopReason::OutOfMemory => memory_failure(limits),
    }
}

/// The failure of a run that reached the memory cap, caught by the program or not.
fn memory_failure(limits: &RuntimeLimits) -> CodeRunFailure {
    CodeRunFailure::new(
        FailureKind::WorkerExit,
        format!("memory limit exceeded ({} bytes)", limits.memory_bytes),
    )
}

/// Starts the run's thread and serves it until it settles and stops.
async fn drive(
    code: String,
    request: CodeRunRequest,
    limits: RuntimeLimits,
    registry: &RunRegistry,
    guard: RunGuard,
    mut ledger: OutputLedger,
) -> CodeRunResult {
    let CodeRunRequest {
        namespaces,
        host,
        cancel,
        ..
    } = request;
    let namespaces = Arc::new(namespaces);
    let shared = Arc::new(Shared::new(limits.compute));
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let (commands, commands_rx) = std::sync::mpsc::channel();
    let (exited_tx, exited) = oneshot::channel();
    let setup = Setup {
        code,
        namespaces: Arc::clone(&namespaces),
        limits: limits.clone(),
        shared: Arc::clone(&shared),
        events: events_tx,
        commands: commands_rx,
    };
    let spawned = threads::engine_pool().run(
        limits.stack_bytes.saturating_add(THREAD_STACK_SLACK),
        Box::new(move || engine::thread_main(setup, exited_tx)),
    );
    if let Err(error) = spawned {
        return ledger.fail(CodeRunFailure::new(
            FailureKind::WorkerExit,
            format!("worker failed to start: {error}"),
        ));
    }
    // Stops the thread if this future is dropped before the run is over.
    let stopper = StopOnDrop {
        shared: Arc::clone(&shared),
        commands: commands.clone(),
    };

    let started = Instant::now();
    let mut wall = pin!(sleep_until(started + limits.wall));
    let mut watchdog = pin!(sleep_until(started + limits.compute + limits.settle_grace));
    let mut grace = pin!(sleep_until(started + limits.wall + limits.settle_grace));
    let mut stopping = false;
    let mut calls = FuturesUnordered::new();
    let dispose = registry.dispose_token().clone();

    let stop = |reason: StopReason,
                stopping: &mut bool,
                grace: &mut std::pin::Pin<&mut tokio::time::Sleep>| {
        shared.request_stop(reason);
        let _ = commands.send(Command::Stop);
        if !*stopping {
            *stopping = true;
            grace.as_mut().reset(Instant::now() + limits.settle_grace);
        }
    };

    // Set when a reply went to a program with no other call in flight: it usually calls
    // again within microseconds, so the next event is looked for (yielding) before parking.
    let mut spin_until: Option<std::time::Instant> = None;
    let outcome: Option<Outcome> = loop {
        let early = match spin_until.take() {
            Some(deadline) if calls.is_empty() => {
                next_event_soon(&mut events, deadline, &cancel, &dispose).await
            }
            _ => None,
        };
        let wake = match early {
            Some(event) => Wake::Event(Some(event)),
            None => tokio::select! {
                // Stop signals first, so a flood of events cannot starve them.
                biased;
                () = cancel.cancelled(), if !stopping => {
                    stop(StopReason::Abort, &mut stopping, &mut grace);
                    Wake::Idle
                }
                () = dispose.cancelled(), if !stopping => {
                    stop(StopReason::Disposed, &mut stopping, &mut grace);
                    Wake::Idle
                }
                () = &mut wall, if !stopping => {
                    stop(StopReason::Wall, &mut stopping, &mut grace);
                    Wake::Idle
                }
                () = &mut watchdog, if !stopping => {
                    // The engine's own check fires at the budget; this one backs it up when
                    // the engine is stuck in a long native operation.
                    let busy = shared.busy();
                    let ceiling = limits.compute + limits.settle_grace;
                    if busy >= ceiling {
                        stop(StopReason::Compute, &mut stopping, &mut grace);
                    } else {
                        watchdog.as_mut().reset(Instant::now() + (ceiling - busy));
                    }
                    Wake::Idle
                }
                event = events.recv() => Wake::Event(event),
                Some((id, result)) = calls.next(), if !calls.is_empty() => {
                    let _ = commands.send(Command::Reply { id, result });
                    spin_until = Some(std::time::Instant::now() + EVENT_SPIN);
                    Wake::Idle
                }
                () = &mut grace, if stopping => Wake::End,
            },
        };
        match wake {
            Wake::Idle => {}
            Wake::End | Wake::Event(None) => break None,
            Wake::Event(Some(Event::Log(text))) => {
                if !ledger.push(&text) {
                    stop(StopReason::OutputLimit, &mut stopping, &mut grace);
                }
            }
            Wake::Event(Some(Event::Call {
                id,
                namespace,
                name,
                args,
            })) => {
                if stopping {
                    continue;
                }
                let (global, name) = namespaces.get(namespace).map_or(("", ""), |n| {
                    (
                        n.global.as_str(),
                        n.names.get(name).map_or("", String::as_str),
                    )
                });
                let pending = host.call(global, name, args);
                calls.push(async move { (id, pending.await) });
            }
            Wake::Event(Some(Event::Done(outcome))) => break Some(outcome),
        }
    };
    drop(calls);

    // A stop decided before the outcome arrived wins over it.
    let failure = match (shared.stop_reason(), outcome) {
        (Some(reason), _) => Err(stop_failure(reason, &limits)),
        (None, Some(Outcome::Completed(value))) => Ok(value),
        (None, Some(Outcome::Threw(message))) => {
            Err(CodeRunFailure::new(FailureKind::Exception, message))
        }
        (None, Some(Outcome::InvalidOutput { too_deep, detail })) => Err(
            tools_codemode::kit::invalid_output_at(too_deep, detail.as_deref()),
        ),
        (None, Some(Outcome::OutOfMemory)) => Err(memory_failure(&limits)),
        (None, Some(Outcome::Broken(message))) => {
            Err(CodeRunFailure::new(FailureKind::WorkerExit, message))
        }
        (None, Some(Outcome::Stopped) | None) => Err(CodeRunFailure::new(
            FailureKind::WorkerExit,
            "worker exited before completing",
        )),
    };
    drop(stopper);

    // Quiescence: the engine is gone once the thread signals its exit. A thread stuck in
    // a native operation gets a bounded grace, then ends on its own (its stop flag is set).
    if tokio::time::timeout(limits.settle_grace.max(Duration::from_millis(100)), exited)
        .await
        .is_err()
    {
        tracing::warn!(
            grace_ms = limits.settle_grace.as_millis() as u64,
            "QuickJS run thread did not stop within its grace; it ends at its next interrupt check"
        );
    }
    drop(guard);
    match failure {
        Ok(value) => ledger.complete(value),
        Err(failure) => ledger.fail(failure),
    }
}

/// How long the run's task looks for the program's next event after a reply (yielding to
/// other tasks and giving its core away between looks) before it parks. The engine thread
/// answers a reply with its next call within microseconds when the program calls tools in a
/// loop, while a parked worker costs a wake-up of tens of microseconds on a virtualised
/// machine; the look mirrors the engine side's `REPLY_SPIN`. It only happens when no other
/// call is in flight.
///
/// Each look gives the core away (`sched_yield`), not only the task: when the engine thread
/// runs on the same core as this task, a look that only yielded to other tasks held the core
/// for the whole spin, and every reply waited it out. Measured with the process pinned to
/// one CPU (`taskset -c 0`, `hot_loop f3`: 100 awaited sub-calls through QuickJS), 12.1 to
/// 13.4 ms per run that way against 1.23 to 1.73 ms now; on both cores, in the same noisy
/// period, 1.46 to 1.83 ms against 1.17 to 1.62 ms; with no spin at all, 1.9 to 2.5 ms.
const EVENT_SPIN: Duration = Duration::from_micros(100);

/// What woke the run's task.
enum Wake {
    /// A stop signal, a timer or a reply was handled.
    Idle,
    /// An event from the engine thread (`None`: it hung up).
    Event(Option<Event>),
    /// The settle grace after a stop ran out.
    End,
}

/// The engine's next event if it arrives before `deadline`, yielding between looks; `None`
/// (the caller waits as usual) past the deadline, on a stop signal, or when the thread hung
/// up.
async fn next_event_soon(
    events: &mut mpsc::UnboundedReceiver<Event>,
    deadline: std::time::Instant,
    cancel: &tokio_util::sync::CancellationToken,
    dispose: &tokio_util::sync::CancellationToken,
) -> Option<Event> {
    loop {
        match events.try_recv() {
            Ok(event) => return Some(event),
            Err(mpsc::error::TryRecvError::Empty)
                if std::time::Instant::now() < deadline
                    && !cancel.is_cancelled()
                    && !dispose.is_cancelled() =>
            {
                // Give the core away as well as the task: the engine thread may share this
                // core, and a look that only yields to other tasks keeps it from running
                // until the spin is over (see `EVENT_SPIN`).
                std::thread::yield_now();
                tokio::task::yield_now().await;
            }
            Err(_) => return None,
        }
    }
}

/// Tells the run's thread to stop when dropped (the run is over or its future was dropped).
struct StopOnDrop {
    shared: Arc<Shared>,
    commands: std::sync::mpsc::Sender<Command>,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.shared.request_stop(StopReason::Abort);
        let _ = self.commands.send(Command::Stop);
    }
}
