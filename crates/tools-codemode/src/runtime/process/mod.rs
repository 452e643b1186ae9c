//! The process-backed code runtimes: a child process per run, confined by a bubblewrap
//! sandbox unless the host opts out by name, speaking JSON Lines with the host. The host
//! side here is shared: the Python runtime's child is `python3 -I` running `bootstrap.py`
//! (frames on its fd 3), the confined TypeScript runtime's child is the QuickJS worker
//! (frames on its stdin and stdout). Every frame from a child is treated as hostile.

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "quickjs-process")]
mod quickjs;
mod sandbox;

#[cfg(feature = "python")]
pub use python::{PYTHON_TRUNCATION_MARKER, PythonOptions, PythonRuntime};
#[cfg(feature = "quickjs-process")]
pub use quickjs::{QuickJsProcessOptions, QuickJsProcessRuntime};
pub use sandbox::Isolation;

use super::wire;

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use command_fds::{CommandFdExt, FdMapping};
use futures_util::stream::{FuturesUnordered, StreamExt};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Number, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tools_json::{JsonValue, Limits};

use self::sandbox::{CHILD_PATH, INFO_FD, Sandbox, cpu_millis};
use super::lifecycle::{RunGuard, RunRegistry};
use super::{
    ABORTED_MESSAGE, ARGUMENTS_NOT_LOSSLESS, BindingNamespace, CodeRunFailure, CodeRunRequest,
    CodeRunResult, ContractError, DISPOSED_MESSAGE, FailureKind, INVALID_OUTPUT_MESSAGE,
    OutputLedger, RuntimeLimits, validate_bindings,
};

/// Slack on top of the output cap for one fd-3 line (the frame envelope).
const LINE_SLACK: usize = 64 * 1024;

/// How often the host reads the program's busy time.
const CPU_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// A line of stray output longer than this is split into several entries.
const STRAY_LINE_MAX: usize = 64 * 1024;

/// How the child of a run receives and sends frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    /// A socketpair end as the child's fd 3; its stdout and stderr are stray output.
    Fd3,
    /// The child's stdin and stdout; its stderr is stray output.
    #[cfg_attr(not(feature = "quickjs-process"), allow(dead_code))]
    Stdio,
}

/// What every run of one runtime starts: resolved and probed once.
#[derive(Debug)]
struct Launch {
    /// The child program (the interpreter's or the worker's real executable).
    executable: PathBuf,
    /// Its arguments.
    args: Vec<std::ffi::OsString>,
    transport: Transport,
    isolation: Isolation,
    sandbox: Option<Sandbox>,
    scratch_bytes: u64,
    /// How far past the compute budget the host's meter waits, for a child that enforces
    /// the budget itself and reports it first.
    compute_slack: std::time::Duration,
}

/// Runs one request in a fresh child: the body of every process runtime's `run`.
async fn run_in_child(
    request: CodeRunRequest,
    limits: RuntimeLimits,
    launch: Arc<Launch>,
    registry: Arc<RunRegistry>,
) -> Result<CodeRunResult, ContractError> {
    validate_bindings(&request.namespaces)?;
    let guard = registry.enter()?;
    let ledger = OutputLedger::new(limits.max_output_bytes);
    if request.cancel.is_cancelled() {
        return Ok(ledger.fail(CodeRunFailure::new(FailureKind::Abort, ABORTED_MESSAGE)));
    }
    if registry.dispose_token().is_cancelled() {
        return Ok(ledger.fail(CodeRunFailure::new(FailureKind::Abort, DISPOSED_MESSAGE)));
    }
    Ok(Run::start(request, limits, &launch, &registry, guard, ledger).await)
}

/// Kills the run's process group when dropped (also when the run future is dropped).
struct GroupKiller(Option<Pid>);

impl GroupKiller {
    fn kill(&mut self) {
        if let Some(pid) = self.0 {
            // The group may already be gone; there is nothing else to do then.
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Why the host ended the run before the child reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Abort,
    Disposed,
    Wall,
    /// The program's process used its compute budget.
    Compute,
    OutputLimit,
    /// The fd-3 channel broke or sent an over-long line.
    Channel,
}

/// Splits a byte stream into lines, refusing lines longer than a bound.
///
/// Linear in the bytes fed: the buffer never holds a `\n` between calls, so each byte is
/// scanned once, and the complete lines are cut out with one shift of the remainder.
#[derive(Debug, Default)]
struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// Appends bytes; returns the complete lines (without `\n`), or `Err` when a line (or
    /// the unfinished rest) exceeds `max`.
    fn feed(&mut self, bytes: &[u8], max: usize) -> Result<Vec<Vec<u8>>, ()> {
        let mut scan = self.buffer.len();
        self.buffer.extend_from_slice(bytes);
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[scan..].iter().position(|&b| b == b'\n') {
            let end = scan + offset;
            if end - start > max {
                return Err(());
            }
            lines.push(self.buffer[start..end].to_vec());
            start = end + 1;
            scan = start;
        }
        self.buffer.drain(..start);
        if self.buffer.len() > max {
            return Err(());
        }
        Ok(lines)
    }
}

/// Stray output: whole lines (their `\n` kept) become log entries.
#[derive(Debug, Default)]
struct Stray {
    buffer: Vec<u8>,
}

impl Stray {
    fn feed(&mut self, bytes: &[u8], ledger: &mut OutputLedger) -> bool {
        self.buffer.extend_from_slice(bytes);
        let mut fits = true;
        loop {
            let end = match self.buffer.iter().position(|&b| b == b'\n') {
                Some(end) => end + 1,
                None if self.buffer.len() >= STRAY_LINE_MAX => STRAY_LINE_MAX,
                None => break,
            };
            let chunk: Vec<u8> = self.buffer.drain(..end).collect();
            fits &= ledger.push(&String::from_utf8_lossy(&chunk));
        }
        fits
    }

    fn flush(&mut self, ledger: &mut OutputLedger) -> bool {
        if self.buffer.is_empty() {
            return true;
        }
        let chunk = std::mem::take(&mut self.buffer);
        ledger.push(&String::from_utf8_lossy(&chunk))
    }
}

/// What the child reported in its `done` frame.
enum Done {
    Value(Option<JsonValue>),
    Failure(CodeRunFailure),
}

/// One run in flight.
struct Run {
    limits: RuntimeLimits,
    namespaces: Vec<BindingNamespace>,
    ledger: OutputLedger,
    writer: Writer,
    depth: Limits,
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
            namespaces: request.namespaces.clone(),
            depth: Limits::default().with_max_depth(limits.max_json_depth),
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
                (process, launch.compute_slack),
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
        (mut process, compute_slack): (Process, std::time::Duration),
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
            .send(&boot_frame(&self.namespaces, &limits, compute_slack))
            .await
            .is_err()
        {
            stop = Some(Stop::Channel);
        }
        let mut fd3_buf = vec![0u8; 64 * 1024];
        let mut out_buf = vec![0u8; 16 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        let mut fd3_open = true;
        let compute_ms = u64::try_from(limits.compute.saturating_add(compute_slack).as_millis())
            .unwrap_or(u64::MAX);
        let mut meter = tokio::time::interval(CPU_POLL);
        meter.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut info_buf = [0u8; 512];
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
                    if let Some(busy) = process.pid().and_then(cpu_millis) {
                        let base = *cpu_base.get_or_insert(busy);
                        if busy.saturating_sub(base) >= compute_ms {
                            stop = Some(Stop::Compute);
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
                        match self.frame(parsed, &mut booted) {
                            Frame::Ignore => {}
                            Frame::BootAck => {
                                cpu_base = process.pid().and_then(cpu_millis);
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
                                        if self.send(&wire::reply(&id, &Err(message))).await.is_err() {
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

    /// Validates and rebuilds one frame from the child.
    fn frame(&mut self, parsed: wire::Parsed, booted: &mut bool) -> Frame {
        let wire::Parsed {
            value,
            lossy_number,
        } = parsed;
        let Value::Object(mut frame) = value else {
            tools_json::drop_deep(value);
            return Frame::Ignore;
        };
        let kind = match frame.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            _ => return drop_frame(frame),
        };
        match kind.as_str() {
            "boot-ack" if !*booted => {
                *booted = true;
                Frame::BootAck
            }
            "log" if *booted => {
                if frame.get("truncated") == Some(&Value::Bool(true)) {
                    return Frame::OutputLimit;
                }
                match frame.get("text") {
                    Some(Value::String(text)) => Frame::Log(self.ledger.push(text)),
                    _ => Frame::Ignore,
                }
            }
            "call" if *booted => {
                let id = match frame.get("id") {
                    Some(Value::Number(id))
                        if JsonValue::new(Value::Number(id.clone())).is_ok() =>
                    {
                        id.clone()
                    }
                    _ => return drop_frame(frame),
                };
                let (Some(Value::String(global)), Some(Value::String(name))) =
                    (frame.get("global"), frame.get("name"))
                else {
                    return drop_frame(frame);
                };
                let (global, name) = (global.clone(), name.clone());
                let Some(args) = frame.remove("args") else {
                    return drop_frame(frame);
                };
                let declared = self
                    .namespaces
                    .iter()
                    .any(|ns| ns.global == global && ns.names.contains(&name));
                let args = if !declared {
                    tools_json::drop_deep(args);
                    Err(format!("unknown binding {global:?}.{name:?}"))
                } else if lossy_number {
                    tools_json::drop_deep(args);
                    Err(format!(
                        "{ARGUMENTS_NOT_LOSSLESS}: an integer has no exact JSON number"
                    ))
                } else {
                    JsonValue::with_limits_at(args, &self.depth, "$")
                        .map_err(|error| format!("{ARGUMENTS_NOT_LOSSLESS}: {error}"))
                };
                let key = id.to_string();
                tools_json::drop_deep(Value::Object(frame));
                Frame::Call {
                    id,
                    key,
                    global,
                    name,
                    args,
                }
            }
            "done" if *booted => {
                if let Some(error) = frame.get("error") {
                    let kind = match error.get("kind").and_then(Value::as_str) {
                        Some("exception") => FailureKind::Exception,
                        Some("invalid-output") => FailureKind::InvalidOutput,
                        Some("output-limit") => FailureKind::OutputLimit,
                        // The QuickJS worker enforces its budgets itself. A Python program
                        // that forges these only misreports its own failure.
                        Some("timeout") => FailureKind::Timeout,
                        Some("worker-exit") => FailureKind::WorkerExit,
                        _ => return drop_frame(frame),
                    };
                    let Some(message) = error.get("message").and_then(Value::as_str) else {
                        return drop_frame(frame);
                    };
                    let failure = CodeRunFailure::new(kind, message);
                    drop_frame(frame);
                    return Frame::Done(Done::Failure(failure));
                }
                let report = match frame.remove("value") {
                    None => Done::Value(None),
                    Some(value) if lossy_number => {
                        tools_json::drop_deep(value);
                        Done::Failure(CodeRunFailure::new(
                            FailureKind::InvalidOutput,
                            INVALID_OUTPUT_MESSAGE,
                        ))
                    }
                    Some(value) => match JsonValue::with_limits(value, &self.depth) {
                        Ok(value) => Done::Value(Some(value)),
                        Err(error) => Done::Failure(super::invalid_output(&error)),
                    },
                };
                drop_frame(frame);
                Frame::Done(report)
            }
            _ => drop_frame(frame),
        }
    }
}

/// Drops a frame (of any depth) and ignores it.
fn drop_frame(frame: serde_json::Map<String, Value>) -> Frame {
    tools_json::drop_deep(Value::Object(frame));
    Frame::Ignore
}

/// A validated frame.
enum Frame {
    Ignore,
    BootAck,
    /// A log entry was metered; `false` when it crossed the cap.
    Log(bool),
    /// The child's own truncation marker (or a forged one): honoured as output-limit.
    OutputLimit,
    Call {
        id: Number,
        key: String,
        global: String,
        name: String,
        args: Result<JsonValue, String>,
    },
    Done(Done),
}

/// Reads from an optional stream; pending forever when there is none, `None` at the end.
async fn read_some(
    stream: &mut Option<std::pin::Pin<Box<dyn AsyncRead + Send>>>,
    buffer: &mut [u8],
) -> Option<usize> {
    match stream {
        Some(stream) => match stream.read(buffer).await {
            Ok(0) | Err(_) => None,
            Ok(count) => Some(count),
        },
        None => std::future::pending().await,
    }
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

/// The `RLIMIT_CPU` backstop in whole seconds: the budget (and the slack of a child that
/// enforces it itself) rounded up, plus one second, so the host's own measurement ends the
/// run first.
fn cpu_seconds(limits: &RuntimeLimits, slack: std::time::Duration) -> u64 {
    let millis = limits.compute.saturating_add(slack).as_millis();
    u64::try_from(millis.div_ceil(1000).max(1))
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// The `boot` frame: the Python bootstrap reads the first fields, the QuickJS worker all.
fn boot_frame(
    namespaces: &[BindingNamespace],
    limits: &RuntimeLimits,
    slack: std::time::Duration,
) -> String {
    let mut specs = Vec::with_capacity(namespaces.len());
    for namespace in namespaces {
        let names: Vec<String> = namespace.names.iter().map(|n| wire::quote(n)).collect();
        let class = match &namespace.error_class {
            Some(class) => format!(
                ",\"errorClass\":{{\"name\":{},\"memberNameProperty\":{}}}",
                wire::quote(&class.name),
                wire::quote(&class.member_name_property)
            ),
            None => String::new(),
        };
        specs.push(format!(
            "{{\"global\":{},\"names\":[{}]{class}}}",
            wire::quote(&namespace.global),
            names.join(",")
        ));
    }
    format!(
        "{{\"type\":\"boot\",\"cpuSeconds\":{},\"addressSpaceBytes\":{},\"maxLogBytes\":{},\"maxValueBytes\":{},\"maxDepth\":{},\"computeMillis\":{},\"wallMillis\":{},\"memoryBytes\":{},\"stackBytes\":{},\"maxOutputBytes\":{},\"settleGraceMillis\":{},\"namespaces\":[{}]}}\n",
        cpu_seconds(limits, slack),
        limits
            .memory_bytes
            .saturating_add(limits.stack_bytes as u64)
            .saturating_add(RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE),
        limits.max_output_bytes,
        limits.max_output_bytes,
        limits.max_json_depth,
        limits.compute.as_millis(),
        limits.wall.as_millis(),
        limits.memory_bytes,
        limits.stack_bytes,
        limits.max_output_bytes,
        limits.settle_grace.as_millis(),
        specs.join(",")
    )
}

/// The read end of bubblewrap's `--info-fd` pipe.
type InfoPipe = tokio::net::unix::pipe::Receiver;

/// The program's own process, whose busy time is metered.
enum Process {
    /// Its pid (unconfined: the child itself; `None` once reaped).
    Known(Option<u32>),
    /// Sandboxed: bubblewrap reports it on the info pipe, read until the report is whole.
    Reported(InfoPipe, Vec<u8>),
}

impl Process {
    fn pid(&self) -> Option<u32> {
        match self {
            Process::Known(pid) => *pid,
            Process::Reported(..) => None,
        }
    }

    /// Reads the info pipe; pending forever once the pid is known.
    async fn read_info(&mut self, buffer: &mut [u8]) -> Option<usize> {
        match self {
            Process::Reported(pipe, _) => match pipe.read(buffer).await {
                Ok(0) | Err(_) => None,
                Ok(count) => Some(count),
            },
            Process::Known(_) => std::future::pending().await,
        }
    }

    /// Takes what the info pipe gave; `None` is its end. The report is one JSON object
    /// written before the program starts; anything after it is ignored.
    fn feed_info(&mut self, bytes: Option<&[u8]>) {
        let Process::Reported(_, report) = self else {
            return;
        };
        let Some(bytes) = bytes else {
            *self = Process::Known(None);
            return;
        };
        report.extend_from_slice(bytes);
        if let Some(end) = report.iter().position(|&b| b == b'}') {
            let pid = serde_json::from_slice::<Value>(&report[..=end])
                .ok()
                .and_then(|info| info.get("child-pid").and_then(Value::as_u64))
                .and_then(|pid| u32::try_from(pid).ok());
            *self = Process::Known(pid);
        } else if report.len() > 4096 {
            *self = Process::Known(None);
        }
    }
}

/// The host's end of the frame channel: what it reads.
type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The host's end of the frame channel: what it writes.
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// A started child, its frame channel and, sandboxed, bubblewrap's info pipe.
type Spawned = (Child, (Reader, Writer), Option<InfoPipe>);

/// Starts the child (bubblewrap around it when sandboxed, with the info pipe as its fd 4)
/// and opens the frame channel of its transport.
fn spawn(launch: &Launch) -> Result<Spawned, String> {
    let mut mappings = Vec::new();
    let mut host_end = None;
    if launch.transport == Transport::Fd3 {
        let (host, child_end) =
            std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
        host.set_nonblocking(true)
            .map_err(|e| format!("socketpair: {e}"))?;
        mappings.push(FdMapping {
            parent_fd: OwnedFd::from(child_end),
            child_fd: 3,
        });
        host_end = Some(host);
    }
    let (mut command, info) = match &launch.sandbox {
        Some(sandbox) => {
            let (info_read, info_write) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
            mappings.push(FdMapping {
                parent_fd: OwnedFd::from(info_write),
                child_fd: INFO_FD,
            });
            let info = InfoPipe::from_owned_fd(OwnedFd::from(info_read))
                .map_err(|e| format!("pipe: {e}"))?;
            let mut command = Command::new(sandbox.program());
            command
                .args(sandbox.args(launch.scratch_bytes, true))
                .arg(&launch.executable)
                .args(&launch.args);
            (command, Some(info))
        }
        None => {
            let mut command = Command::new(&launch.executable);
            command.args(&launch.args);
            (command, None)
        }
    };
    command
        .env_clear()
        .env("PATH", CHILD_PATH)
        .stdin(match launch.transport {
            Transport::Fd3 => Stdio::null(),
            Transport::Stdio => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    command
        .fd_mappings(mappings)
        .map_err(|e| format!("fd mapping: {e}"))?;
    let mut child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", launch.executable.display()))?;
    // The child has its copies of the fds; the command (and our copies) can go.
    drop(command);
    let channel: (Reader, Writer) = match host_end {
        Some(host) => {
            let stream =
                tokio::net::UnixStream::from_std(host).map_err(|e| format!("socketpair: {e}"))?;
            let (reader, writer) = stream.into_split();
            (Box::new(reader), Box::new(writer))
        }
        None => match (child.stdout.take(), child.stdin.take()) {
            (Some(stdout), Some(stdin)) => (Box::new(stdout), Box::new(stdin)),
            _ => return Err("the child's stdio was not piped".to_owned()),
        },
    };
    Ok((child, channel, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded() {
        let mut lines = Lines::default();
        assert_eq!(lines.feed(b"ab\ncd", 10), Ok(vec![b"ab".to_vec()]));
        assert_eq!(lines.feed(b"e\n", 10), Ok(vec![b"cde".to_vec()]));
        assert_eq!(lines.feed(&[b'x'; 11], 10), Err(()));
        assert_eq!(lines.feed(b"\n", 10), Err(()));
    }

    #[test]
    fn lines_are_cut_in_one_pass() {
        let mut lines = Lines::default();
        let mut all = Vec::new();
        for chunk in b"a\nbb\n\nccc".chunks(2) {
            all.extend(lines.feed(chunk, 10).unwrap());
        }
        all.extend(lines.feed(b"\n", 10).unwrap());
        assert_eq!(
            all,
            [b"a".to_vec(), b"bb".to_vec(), Vec::new(), b"ccc".to_vec()]
        );
    }

    #[test]
    fn cpu_seconds_round_up() {
        let limits = |ms| RuntimeLimits {
            compute: std::time::Duration::from_millis(ms),
            ..RuntimeLimits::default()
        };
        let none = std::time::Duration::ZERO;
        assert_eq!(cpu_seconds(&limits(1), none), 2);
        assert_eq!(cpu_seconds(&limits(1000), none), 2);
        assert_eq!(cpu_seconds(&limits(1001), none), 3);
        assert_eq!(
            cpu_seconds(&limits(500), std::time::Duration::from_secs(1)),
            3
        );
    }

    #[test]
    fn the_boot_frame_carries_the_namespaces_and_the_limits() {
        let namespaces = [BindingNamespace::new(
            "tools",
            ["echo", "a\"b"],
            Some(super::super::ErrorClass::tool_call_error()),
        )];
        let limits = RuntimeLimits::default();
        let frame = boot_frame(&namespaces, &limits, std::time::Duration::ZERO);
        let parsed = wire::parse(frame.trim_end(), 10).map(|p| p.value);
        let parsed = parsed.unwrap_or_default();
        assert_eq!(parsed["type"], "boot");
        assert_eq!(parsed["cpuSeconds"], 61);
        assert_eq!(parsed["computeMillis"], 60_000);
        assert_eq!(parsed["memoryBytes"], limits.memory_bytes);
        assert_eq!(parsed["namespaces"][0]["names"][1], "a\"b");
        assert_eq!(
            parsed["namespaces"][0]["errorClass"]["memberNameProperty"],
            "toolName"
        );
    }

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
