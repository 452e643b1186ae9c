//! The Python runtime: `python3 -I` in a child process of its own process group, speaking
//! JSON Lines on file descriptor 3 (a socketpair end), with an empty environment, resource
//! limits applied by the child at boot, and every frame from the child treated as hostile.

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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;
use tools_json::{JsonValue, Limits};

use super::lifecycle::{RunGuard, RunRegistry};
use super::{
    ABORTED_MESSAGE, ARGUMENTS_NOT_LOSSLESS, BindingNamespace, CodeRunFailure, CodeRunRequest,
    CodeRunResult, CodeRuntime, ContractError, DISPOSED_MESSAGE, DisposeFuture, FailureKind,
    INVALID_OUTPUT_MESSAGE, OutputLedger, RunFuture, RuntimeLimits, validate_bindings,
};
use crate::Language;

/// The child's bootstrap, run with `python3 -I -u -c`.
const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// The text of the child's truncation-marker log frame (`{N}` is its log budget).
pub const PYTHON_TRUNCATION_MARKER: &str =
    "[dsh-code-runtime-python] log capture truncated at {} bytes";

/// The `PATH` the child gets (its only environment variable).
const CHILD_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Slack on top of the output cap for one fd-3 line (the frame envelope).
const LINE_SLACK: usize = 64 * 1024;

/// A line of stray output longer than this is split into several entries.
const STRAY_LINE_MAX: usize = 64 * 1024;

/// The Python runtime: one `python3 -I` child process per run.
///
/// `language()` is Python, `isolation()` is `process`. The program is the body of an async
/// function (top-level `await` and `return`); `print` becomes log entries, and anything
/// the process writes to stdout or stderr is captured line by line as stray output. The
/// child gets an empty environment (only `PATH`), no stdin, `RLIMIT_CPU` from the compute
/// budget (whole seconds, rounded up), `RLIMIT_AS` from the memory cap plus an interpreter
/// allowance, no core dumps, and its own process group, which is killed when the run ends.
///
/// This is not a sandbox: the program has the file system, network and process authority
/// of the user running the host, unless the deployment confines the process itself.
#[derive(Debug)]
pub struct PythonRuntime {
    limits: RuntimeLimits,
    interpreter: PathBuf,
    registry: Arc<RunRegistry>,
}

impl PythonRuntime {
    /// A runtime that starts `python3` (found on the host's `PATH`) for each run.
    ///
    /// # Errors
    ///
    /// [`ContractError::InvalidLimit`] for a limit out of range.
    pub fn new(limits: RuntimeLimits) -> Result<PythonRuntime, ContractError> {
        limits.validate()?;
        Ok(PythonRuntime {
            limits,
            interpreter: PathBuf::from("python3"),
            registry: RunRegistry::new(),
        })
    }

    /// The same runtime starting another interpreter (a path, or a name looked up on the
    /// host's `PATH`).
    pub fn with_interpreter(mut self, interpreter: impl Into<PathBuf>) -> PythonRuntime {
        self.interpreter = interpreter.into();
        self
    }

    /// The limits every run gets.
    pub fn limits(&self) -> &RuntimeLimits {
        &self.limits
    }
}

impl CodeRuntime for PythonRuntime {
    fn language(&self) -> Language {
        Language::Python
    }

    fn isolation(&self) -> &str {
        "process"
    }

    fn run(&self, request: CodeRunRequest) -> RunFuture {
        let limits = self.limits.clone();
        let interpreter = self.interpreter.clone();
        let registry = Arc::clone(&self.registry);
        Box::pin(async move {
            validate_bindings(&request.namespaces)?;
            let guard = registry.enter()?;
            let ledger = OutputLedger::new(limits.max_output_bytes);
            if request.cancel.is_cancelled() {
                return Ok(ledger.fail(CodeRunFailure::new(FailureKind::Abort, ABORTED_MESSAGE)));
            }
            if registry.dispose_token().is_cancelled() {
                return Ok(ledger.fail(CodeRunFailure::new(FailureKind::Abort, DISPOSED_MESSAGE)));
            }
            Ok(Run::start(request, limits, interpreter, &registry, guard, ledger).await)
        })
    }

    fn dispose(&self) -> DisposeFuture {
        let registry = Arc::clone(&self.registry);
        Box::pin(async move { registry.dispose().await })
    }
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
    OutputLimit,
    /// The fd-3 channel broke or sent an over-long line.
    Channel,
}

/// Splits a byte stream into lines, refusing lines longer than a bound.
#[derive(Debug, Default)]
struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// Appends bytes; returns the complete lines (without `\n`), or `Err` when an
    /// unfinished line exceeds `max`.
    fn feed(&mut self, bytes: &[u8], max: usize) -> Result<Vec<Vec<u8>>, ()> {
        self.buffer.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
            line.pop();
            lines.push(line);
        }
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
    writer: OwnedWriteHalf,
    depth: Limits,
    /// Writes to a child that stops reading give up at the wall-clock ceiling.
    deadline: Instant,
}

impl Run {
    async fn start(
        request: CodeRunRequest,
        limits: RuntimeLimits,
        interpreter: PathBuf,
        registry: &RunRegistry,
        guard: RunGuard,
        ledger: OutputLedger,
    ) -> CodeRunResult {
        let spawned = spawn(&interpreter);
        let (mut child, channel) = match spawned {
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
        let (reader, writer) = channel.into_split();
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
        let result = run
            .serve(
                request,
                registry.dispose_token().clone(),
                &mut child,
                &mut killer,
                reader,
                stdout,
                stderr,
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
        mut reader: tokio::net::unix::OwnedReadHalf,
        stdout: Option<tokio::process::ChildStdout>,
        stderr: Option<tokio::process::ChildStderr>,
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
            .send(&boot_frame(&self.namespaces, &limits))
            .await
            .is_err()
        {
            stop = Some(Stop::Channel);
        }
        let mut fd3_buf = vec![0u8; 64 * 1024];
        let mut out_buf = vec![0u8; 16 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        let mut fd3_open = true;

        while stop.is_none() && done.is_none() && exit.is_none() {
            tokio::select! {
                // Stop signals first, so a flood of output cannot starve them.
                biased;
                () = cancel.cancelled() => stop = Some(Stop::Abort),
                () = dispose.cancelled() => stop = Some(Stop::Disposed),
                () = &mut wall => stop = Some(Stop::Wall),
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
                        Err(_) => Done::Failure(CodeRunFailure::new(
                            FailureKind::InvalidOutput,
                            INVALID_OUTPUT_MESSAGE,
                        )),
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

/// The failure of a child that ended before `done`.
fn exit_failure(
    exit: Option<ExitStatus>,
    killed_by_host: bool,
    limits: &RuntimeLimits,
) -> CodeRunFailure {
    use std::os::unix::process::ExitStatusExt;
    let compute = || {
        CodeRunFailure::new(
            FailureKind::Timeout,
            format!(
                "compute budget exhausted ({}ms busy)",
                cpu_seconds(limits) * 1000
            ),
        )
    };
    match exit {
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => CodeRunFailure::new(
                FailureKind::WorkerExit,
                format!("worker exited with code {code} before completing"),
            ),
            // RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one.
            (None, Some(24)) => compute(),
            (None, Some(9)) if !killed_by_host => compute(),
            (None, Some(signal)) => CodeRunFailure::new(
                FailureKind::WorkerExit,
                format!("worker killed by signal {signal} before completing"),
            ),
            (None, None) => {
                CodeRunFailure::new(FailureKind::WorkerExit, "worker exited before completing")
            }
        },
        None => CodeRunFailure::new(FailureKind::WorkerExit, "worker exited before completing"),
    }
}

/// The compute budget in whole seconds, rounded up (`RLIMIT_CPU` has 1 s granularity).
fn cpu_seconds(limits: &RuntimeLimits) -> u64 {
    limits.compute.as_millis().div_ceil(1000).max(1) as u64
}

/// The `boot` frame.
fn boot_frame(namespaces: &[BindingNamespace], limits: &RuntimeLimits) -> String {
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
        "{{\"type\":\"boot\",\"cpuSeconds\":{},\"addressSpaceBytes\":{},\"maxLogBytes\":{},\"maxValueBytes\":{},\"maxDepth\":{},\"namespaces\":[{}]}}\n",
        cpu_seconds(limits),
        limits
            .memory_bytes
            .saturating_add(RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE),
        limits.max_output_bytes,
        limits.max_output_bytes,
        limits.max_json_depth,
        specs.join(",")
    )
}

/// Starts the child with the socketpair's other end as its fd 3.
fn spawn(interpreter: &PathBuf) -> Result<(Child, tokio::net::UnixStream), String> {
    let (host_end, child_end) =
        std::os::unix::net::UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    host_end
        .set_nonblocking(true)
        .map_err(|e| format!("socketpair: {e}"))?;
    let mut command = Command::new(interpreter);
    command
        .arg("-I")
        .arg("-u")
        .arg("-c")
        .arg(BOOTSTRAP)
        .env_clear()
        .env("PATH", CHILD_PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    command
        .fd_mappings(vec![FdMapping {
            parent_fd: OwnedFd::from(child_end),
            child_fd: 3,
        }])
        .map_err(|e| format!("fd mapping: {e}"))?;
    let child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", interpreter.display()))?;
    // The child has its copy of fd 3; the command (and our copy) can go.
    drop(command);
    let stream =
        tokio::net::UnixStream::from_std(host_end).map_err(|e| format!("socketpair: {e}"))?;
    Ok((child, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_matches_the_bootstrap() {
        assert!(BOOTSTRAP.contains(&format!(
            "TRUNCATION_MARKER = \"{PYTHON_TRUNCATION_MARKER}\""
        )));
        assert!(BOOTSTRAP.contains("PROTOCOL_FD = 3"));
    }

    #[test]
    fn lines_are_bounded() {
        let mut lines = Lines::default();
        assert_eq!(lines.feed(b"ab\ncd", 10), Ok(vec![b"ab".to_vec()]));
        assert_eq!(lines.feed(b"e\n", 10), Ok(vec![b"cde".to_vec()]));
        assert_eq!(lines.feed(&[b'x'; 11], 10), Err(()));
    }

    #[test]
    fn cpu_seconds_round_up() {
        let limits = |ms| RuntimeLimits {
            compute: std::time::Duration::from_millis(ms),
            ..RuntimeLimits::default()
        };
        assert_eq!(cpu_seconds(&limits(1)), 1);
        assert_eq!(cpu_seconds(&limits(1000)), 1);
        assert_eq!(cpu_seconds(&limits(1001)), 2);
    }

    #[test]
    fn the_boot_frame_carries_the_namespaces() {
        let namespaces = [BindingNamespace::new(
            "tools",
            ["echo", "a\"b"],
            Some(super::super::ErrorClass::tool_call_error()),
        )];
        let frame = boot_frame(&namespaces, &RuntimeLimits::default());
        let parsed = wire::parse(frame.trim_end(), 10).map(|p| p.value);
        let parsed = parsed.unwrap_or_default();
        assert_eq!(parsed["type"], "boot");
        assert_eq!(parsed["cpuSeconds"], 60);
        assert_eq!(parsed["namespaces"][0]["names"][1], "a\"b");
        assert_eq!(
            parsed["namespaces"][0]["errorClass"]["memberNameProperty"],
            "toolName"
        );
    }
}
