#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
// With neither runtime feature on, the shared host side has no user.
#![cfg_attr(
    not(any(feature = "python", feature = "quickjs-process")),
    allow(dead_code, unused_imports)
)]

mod child;
mod frames;
mod meter;
#[cfg(feature = "python")]
mod python;
#[cfg(feature = "quickjs-process")]
mod quickjs;
mod sandbox;
mod seccomp;

#[cfg(feature = "python")]
pub use python::{PYTHON_TRUNCATION_MARKER, PythonOptions, PythonRuntime};
#[cfg(feature = "quickjs-process")]
pub use quickjs::{QuickJsProcessOptions, QuickJsProcessRuntime};
pub use sandbox::{DEFAULT_MAX_PROCESSES, Isolation, SandboxUser};

use std::collections::{HashMap, HashSet};
use std::pin::pin;
use std::process::ExitStatus;
use std::sync::Arc;

use futures_util::stream::{FuturesUnordered, StreamExt};
use nix::unistd::Pid;
use serde_json::Number;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tools_json::Limits;

use self::child::{GroupKiller, Launch, Process, Reader, Writer, read_some, spawn};
use self::frames::{Allowance, Checker, Done, Frame, Lines, Stray, boot_frame};
use self::meter::{cpu_millis, tree_usage};
use tools_codemode::kit::wire;
use tools_codemode::kit::{RunGuard, RunRegistry};
use tools_codemode::{
    ABORTED_MESSAGE, CodeRunFailure, CodeRunRequest, CodeRunResult, ContractError,
    DISPOSED_MESSAGE, DisposeFuture, FailureKind, OutputLedger, RunFuture, RuntimeLimits,
};

/// Slack on top of the output cap for one fd-3 line (the frame envelope).
const LINE_SLACK: usize = 64 * 1024;

/// How often the host reads the program's busy time.
const CPU_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// What a process runtime holds: its limits, what every run starts, and its live runs.
#[derive(Debug)]
struct Core {
    limits: RuntimeLimits,
    launch: Arc<Launch>,
    registry: Arc<RunRegistry>,
}

impl Core {
    fn new(limits: RuntimeLimits, launch: Launch) -> Core {
        Core {
            limits,
            launch: Arc::new(launch),
            registry: RunRegistry::new(),
        }
    }

    /// The isolation label.
    fn isolation(&self) -> &'static str {
        self.launch.isolation.label()
    }

    /// One run in a fresh child.
    fn run(&self, request: CodeRunRequest) -> RunFuture {
        Box::pin(run_in_child(
            request,
            self.limits.clone(),
            Arc::clone(&self.launch),
            Arc::clone(&self.registry),
        ))
    }

    /// Ends every run and waits for their children.
    fn dispose(&self) -> DisposeFuture {
        let registry = Arc::clone(&self.registry);
        Box::pin(async move { registry.dispose().await })
    }
}

/// Runs one request in a fresh child: the body of every process runtime's `run`.
async fn run_in_child(
    request: CodeRunRequest,
    limits: RuntimeLimits,
    launch: Arc<Launch>,
    registry: Arc<RunRegistry>,
) -> Result<CodeRunResult, ContractError> {
    let (guard, ledger) = match registry.admit(&request, limits.max_output_bytes)? {
        Ok(admitted) => admitted,
        Err(ended) => return Ok(ended),
    };
    Ok(Run::start(request, limits, &launch, &registry, guard, ledger).await)
}

/// Why the host ended the run before the child reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Abort,
    Disposed,
    Wall,
    /// The program's process used its compute budget.
    Compute,
    /// The program's processes together held more memory than one may address.
    Memory(u64),
    OutputLimit,
    /// The fd-3 channel broke or sent an over-long line.
    Channel,
}

/// One run in flight.
struct Run {
    limits: RuntimeLimits,
    checker: Checker,
    ledger: OutputLedger,
    writer: Writer,
    /// Writes to a child that stops reading give up at the wall-clock ceiling.
    deadline: Instant,
}

impl Run {
    async fn start(
        request: CodeRunRequest,
        limits: RuntimeLimits,
        launch: &Launch,
        registry: &RunRegistry,
        guard: RunGuard,
        ledger: OutputLedger,
    ) -> CodeRunResult {
        let spawned = spawn(launch);
        let (mut child, (reader, writer), info) = match spawned {
            Ok(spawned) => spawned,
            Err(message) => {
                return ledger.fail(CodeRunFailure::new(
                    FailureKind::WorkerExit,
                    format!("worker failed to start: {message}"),
                ));
            }
        };
        let mut killer = GroupKiller(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        );
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let run = Run {
            deadline: Instant::now() + limits.wall,
            checker: Checker {
                namespaces: request.namespaces.clone(),
                depth: Limits::default().with_max_depth(limits.max_json_depth),
            },
            limits,
            ledger,
            writer,
        };
        // Unconfined, the program is the child itself; sandboxed, bubblewrap reports its pid.
        let process = match info {
            None => Process::Known(child.id()),
            Some(info) => Process::Reported(info, Vec::new()),
        };
        let result = run
            .serve(
                request,
                registry.dispose_token().clone(),
                &mut child,
                &mut killer,
                reader,
                (stdout, stderr),
                (process, launch.allowance, launch.sandbox.is_some()),
            )
            .await;
        drop(guard);
        result
    }

    /// Writes one frame; `Err` when the channel is gone or the child stopped reading until
    /// the wall-clock ceiling.
    async fn send(&mut self, frame: &str) -> Result<(), ()> {
        match tokio::time::timeout_at(self.deadline, self.writer.write_all(frame.as_bytes())).await
        {
            Ok(Ok(())) => Ok(()),
            _ => Err(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn serve(
        mut self,
        request: CodeRunRequest,
        dispose: CancellationToken,
        child: &mut Child,
        killer: &mut GroupKiller,
        mut reader: Reader,
        (stdout, stderr): (
            Option<tokio::process::ChildStdout>,
            Option<tokio::process::ChildStderr>,
        ),
        (mut process, allowance, sandboxed): (Process, Allowance, bool),
    ) -> CodeRunResult {
        let CodeRunRequest {
            program,
            host,
            cancel,
            ..
        } = request;
        let limits = self.limits.clone();
        let mut wall = pin!(sleep_until(self.deadline));

        let mut stdout = stdout.map(|s| Box::pin(s) as std::pin::Pin<Box<dyn AsyncRead + Send>>);
        let mut stderr = stderr.map(|s| Box::pin(s) as std::pin::Pin<Box<dyn AsyncRead + Send>>);
        let mut stray_out = Stray::default();
        let mut stray_err = Stray::default();
        let mut lines = Lines::default();
        let max_line = limits.max_output_bytes.saturating_add(LINE_SLACK);

        let mut booted = false;
        let mut calls = FuturesUnordered::new();
        let mut seen_ids: HashSet<String> = HashSet::new();
        let mut in_flight: HashMap<String, Number> = HashMap::new();
        let mut stop: Option<Stop> = None;
        let mut done: Option<Done> = None;
        let mut exit: Option<ExitStatus> = None;

        if self
            .send(&boot_frame(&self.checker.namespaces, &limits, allowance))
            .await
            .is_err()
        {
            stop = Some(Stop::Channel);
        }
        let mut fd3_buf = vec![0u8; 64 * 1024];
        let mut out_buf = vec![0u8; 16 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        let mut fd3_open = true;
        let compute_ms = u64::try_from(
            limits
                .compute
                .saturating_add(allowance.compute_slack)
                .as_millis(),
        )
        .unwrap_or(u64::MAX);
        let mut meter = tokio::time::interval(CPU_POLL);
        meter.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut info_buf = [0u8; 512];
        // Sandboxed, the meter reads every process of the run's pid namespace (children
        // included) and holds their resident memory together to one process's address
        // space; unconfined, it reads the program's own process.
        let memory_cap = frames::address_space_bytes(&limits, allowance);
        let measure = |pid: u32| -> Option<(u64, u64)> {
            if sandboxed {
                tree_usage(pid).map(|usage| (usage.cpu_millis, usage.resident_bytes))
            } else {
                cpu_millis(pid).map(|busy| (busy, 0))
            }
        };
        // Busy time counts from the boot acknowledgement: the interpreter's own start-up
        // (imports of the bootstrap) is not the program's.
        let mut cpu_base: Option<u64> = None;

        while stop.is_none() && done.is_none() && exit.is_none() {
            tokio::select! {
                // Stop signals first, so a flood of output cannot starve them.
                biased;
                () = cancel.cancelled() => stop = Some(Stop::Abort),
                () = dispose.cancelled() => stop = Some(Stop::Disposed),
                () = &mut wall => stop = Some(Stop::Wall),
                _ = meter.tick(), if booted && process.pid().is_some() => {
                    if let Some((busy, resident)) = process.pid().and_then(measure) {
                        let base = *cpu_base.get_or_insert(busy);
                        if busy.saturating_sub(base) >= compute_ms {
                            stop = Some(Stop::Compute);
                        } else if resident > memory_cap {
                            stop = Some(Stop::Memory(resident));
                        }
                    }
                }
                read = process.read_info(&mut info_buf) => {
                    process.feed_info(read.map(|count| &info_buf[..count]));
                }
                read = reader.read(&mut fd3_buf), if fd3_open => {
                    let Ok(count) = read else { fd3_open = false; continue; };
                    if count == 0 {
                        fd3_open = false;
                        continue;
                    }
                    let Ok(complete) = lines.feed(&fd3_buf[..count], max_line) else {
                        stop = Some(Stop::OutputLimit);
                        continue;
                    };
                    for line in complete {
                        let Ok(text) = String::from_utf8(line) else { continue };
                        let Some(parsed) = wire::parse(&text, limits.max_json_depth) else { continue };
                        match self.checker.frame(parsed, &mut booted, &mut self.ledger) {
                            Frame::Ignore => {}
                            Frame::BootAck => {
                                cpu_base = process.pid().and_then(measure).map(|(busy, _)| busy);
                                let run = format!("{{\"type\":\"run\",\"program\":{}}}\n", wire::quote(&program));
                                if self.send(&run).await.is_err() {
                                    stop = Some(Stop::Channel);
                                }
                            }
                            Frame::OutputLimit => stop = Some(Stop::OutputLimit),
                            Frame::Log(fits) => if !fits { stop = Some(Stop::OutputLimit) },
                            Frame::Call { id, key, global, name, args } => {
                                if !seen_ids.insert(key.clone()) {
                                    continue;
                                }
                                match args {
                                    Ok(args) => {
                                        in_flight.insert(key.clone(), id);
                                        let pending = host.call(&global, &name, args);
                                        calls.push(async move { (key, pending.await) });
                                    }
                                    Err(message) => {
                                        let refusal = tools_codemode::BindingError::with_code(tools_json::ErrorCode::InvalidArgs, message);
                                        if self.send(&wire::reply(&id, &Err(refusal))).await.is_err() {
                                            stop = Some(Stop::Channel);
                                        }
                                    }
                                }
                            }
                            Frame::Done(report) => {
                                done = Some(report);
                                break;
                            }
                        }
                    }
                }
                Some((key, result)) = calls.next(), if !calls.is_empty() => {
                    if let Some(id) = in_flight.remove(&key)
                        && self.send(&wire::reply(&id, &result)).await.is_err()
                    {
                        stop = Some(Stop::Channel);
                    }
                }
                read = read_some(&mut stdout, &mut out_buf) => {
                    match read {
                        Some(bytes) => if !stray_out.feed(&out_buf[..bytes], &mut self.ledger) { stop = Some(Stop::OutputLimit) },
                        None => { stray_out.flush(&mut self.ledger); stdout = None; }
                    }
                }
                read = read_some(&mut stderr, &mut err_buf) => {
                    match read {
                        Some(bytes) => if !stray_err.feed(&err_buf[..bytes], &mut self.ledger) { stop = Some(Stop::OutputLimit) },
                        None => { stray_err.flush(&mut self.ledger); stderr = None; }
                    }
                }
                status = child.wait() => {
                    exit = Some(status.unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(0)));
                }
            }
        }
        drop(calls);

        // The run is decided; end the group (a settled child has nothing left to do), then
        // reap it and collect what it wrote (bounded: a grandchild may hold the pipes).
        let kill_sent_before_exit = exit.is_none();
        killer.kill();
        let grace = pin!(tokio::time::sleep(limits.settle_grace));
        let mut grace = grace;
        loop {
            tokio::select! {
                biased;
                status = child.wait(), if exit.is_none() => {
                    exit = Some(status.unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(0)));
                }
                read = read_some(&mut stdout, &mut out_buf) => match read {
                    Some(bytes) => { stray_out.feed(&out_buf[..bytes], &mut self.ledger); }
                    None => { stray_out.flush(&mut self.ledger); stdout = None; }
                },
                read = read_some(&mut stderr, &mut err_buf) => match read {
                    Some(bytes) => { stray_err.feed(&err_buf[..bytes], &mut self.ledger); }
                    None => { stray_err.flush(&mut self.ledger); stderr = None; }
                },
                () = &mut grace => {
                    if exit.is_none() {
                        tracing::warn!("Python run process did not exit within its grace after SIGKILL");
                    }
                    break;
                }
                else => break,
            }
            if exit.is_some() && stdout.is_none() && stderr.is_none() {
                break;
            }
        }
        // Whatever the program started in its group goes too.
        killer.kill();

        let failure = match (stop, done) {
            (Some(Stop::Abort), _) => Err(CodeRunFailure::new(FailureKind::Abort, ABORTED_MESSAGE)),
            (Some(Stop::Disposed), _) => {
                Err(CodeRunFailure::new(FailureKind::Abort, DISPOSED_MESSAGE))
            }
            (Some(Stop::Wall), _) => Err(CodeRunFailure::new(
                FailureKind::Timeout,
                format!("wall-clock ceiling reached ({}ms)", limits.wall.as_millis()),
            )),
            (Some(Stop::Compute), _) => Err(compute_failure(&limits)),
            (Some(Stop::Memory(resident)), _) => Err(CodeRunFailure::new(
                FailureKind::WorkerExit,
                format!(
                    "memory cap exceeded: the program's processes held {} MiB together (at most {} MiB)",
                    resident >> 20,
                    memory_cap >> 20
                ),
            )),
            (Some(Stop::OutputLimit), _) => Err(CodeRunFailure::new(FailureKind::OutputLimit, "")),
            (_, Some(Done::Failure(failure))) => Err(failure),
            (_, Some(Done::Value(value))) => Ok(value),
            (Some(Stop::Channel) | None, None) => {
                Err(exit_failure(exit, kill_sent_before_exit, &limits))
            }
        };
        match failure {
            Ok(value) => self.ledger.complete(value),
            Err(failure) => self.ledger.fail(failure),
        }
    }
}

/// Checks a process runtime's `max_processes` option.
fn check_max_processes(max: u32) -> Result<(), ContractError> {
    if max == 0 {
        return Err(ContractError::InvalidLimit {
            limit: "max_processes",
            reason: "must be at least 1".to_owned(),
        });
    }
    Ok(())
}

/// A spent compute budget.
fn compute_failure(limits: &RuntimeLimits) -> CodeRunFailure {
    CodeRunFailure::new(
        FailureKind::Timeout,
        format!(
            "compute budget exhausted ({}ms busy)",
            limits.compute.as_millis()
        ),
    )
}

/// The failure of a child that ended before `done`. Sandboxed, the status is bubblewrap's,
/// which reports a program killed by signal `N` as exit code `128 + N`.
fn exit_failure(
    exit: Option<ExitStatus>,
    killed_by_host: bool,
    limits: &RuntimeLimits,
) -> CodeRunFailure {
    use std::os::unix::process::ExitStatusExt;
    let Some(status) = exit else {
        return CodeRunFailure::new(FailureKind::WorkerExit, "worker exited before completing");
    };
    let signal = match (status.code(), status.signal()) {
        (Some(code), _) if (129..=192).contains(&code) => Some(code - 128),
        (Some(code), _) => {
            return CodeRunFailure::new(
                FailureKind::WorkerExit,
                format!("worker exited with code {code} before completing"),
            );
        }
        (None, signal) => signal,
    };
    match signal {
        // RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one.
        Some(24) => compute_failure(limits),
        Some(9) if !killed_by_host => compute_failure(limits),
        Some(signal) => CodeRunFailure::new(
            FailureKind::WorkerExit,
            format!("worker killed by signal {signal} before completing"),
        ),
        None => CodeRunFailure::new(FailureKind::WorkerExit, "worker exited before completing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_reported_by_bubblewrap_is_decoded() {
        use std::os::unix::process::ExitStatusExt;
        let limits = RuntimeLimits::default();
        // bubblewrap exits 128 + N for a program killed by signal N.
        let xcpu = exit_failure(Some(ExitStatus::from_raw((128 + 24) << 8)), true, &limits);
        assert_eq!(xcpu.kind, FailureKind::Timeout);
        let segv = exit_failure(Some(ExitStatus::from_raw((128 + 11) << 8)), true, &limits);
        assert_eq!(segv.message, "worker killed by signal 11 before completing");
        let code = exit_failure(Some(ExitStatus::from_raw(3 << 8)), false, &limits);
        assert_eq!(code.message, "worker exited with code 3 before completing");
    }
}
