//! The confined TypeScript child: one TypeScript program run by [`QuickJsRuntime`] in a
//! process of its own, speaking the JSON-Lines protocol of the Python bootstrap with its
//! host, on stdin (frames from the host) and stdout (frames to the host).
//!
//! The worker trusts its host, not its program: it limits itself at boot (`RLIMIT_CORE`,
//! `RLIMIT_CPU`, `RLIMIT_AS`) before it reads the program, and it writes nothing to stdout
//! but frames. Values are read with the shared iterative parser and written with
//! [`tools_json::to_compact_string`], so no per-level recursion happens on either side.

mod boot;

use std::borrow::Cow;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tools_codemode::BindingError;
use tools_json::ErrorCode;

use serde_json::Value;
use tokio::sync::oneshot;
use tools_json::{JsonValue, Limits, drop_deep, to_compact_string};

use tools_codemode::kit::wire;
use tools_codemode::{
    BindingFuture, BindingHost, CodeRunRequest, CodeRunResult, CodeRuntime, RESOLUTION_NOT_LOSSLESS,
};

use crate::QuickJsRuntime;

/// Exit code: stdin closed (or failed) or stdout failed; the host has gone.
const EXIT_HOST_GONE: u8 = 70;
/// Exit code: the first line is not a valid `boot` frame.
const EXIT_BAD_BOOT: u8 = 71;
/// Exit code: the line after `boot-ack` is not a `run` frame.
const EXIT_BAD_RUN: u8 = 72;
/// Exit code: a line during the run is not a well-formed `reply` frame.
const EXIT_BAD_FRAME: u8 = 73;
/// Exit code: the worker could not set itself up (resource limits, async runtime).
const EXIT_SETUP: u8 = 74;

/// The message a pending binding call rejects with when the host's channel closes.
const HOST_GONE_MESSAGE: &str = "the host closed the worker's channel";

/// The entry point of the confined TypeScript child; call it from a binary (or arg0
/// dispatch) that the host points its process-isolated runtime at, and exit the process
/// with the code it returns (the `tools-codemode-worker` binary does just that).
///
/// It serves exactly one run, speaking JSON Lines (one UTF-8 JSON object per line) with
/// its host: stdin carries the host's frames, stdout the worker's, stderr at most one
/// diagnostic line when the worker gives up.
///
/// 1. Host: `{"type":"boot", …}` with `computeMillis`, `wallMillis`, `memoryBytes`,
///    `stackBytes`, `maxOutputBytes`, `maxDepth`, `settleGraceMillis` (the fields of
///    [`RuntimeLimits`](tools_codemode::RuntimeLimits), which must validate), `cpuSeconds` and
///    `addressSpaceBytes` (positive), and `namespaces`: an array of
///    `{"global", "names", "errorClass"?: {"name", "memberNameProperty"}}` that must pass
///    [`validate_bindings`](tools_codemode::validate_bindings). Unknown fields are ignored (so the
///    Python boot frame's `maxLogBytes` and `maxValueBytes` are; `maxOutputBytes` governs
///    the run's output). The worker then sets `RLIMIT_CORE` to 0, `RLIMIT_CPU` to
///    `cpuSeconds` (hard one second later) and `RLIMIT_AS` to `addressSpaceBytes`, each
///    lowered to a finite hard limit already in force. The address space must hold the
///    engine's `memoryBytes`, its thread's stack (`stackBytes` + 8 MiB) and the process
///    itself: `memoryBytes` + `stackBytes` + 256 MiB is a safe choice.
/// 2. Worker: `{"type":"boot-ack"}`.
/// 3. Host: `{"type":"run","program":"<TypeScript source>"}`.
/// 4. While the program runs, each binding call is one worker frame
///    `{"type":"call","id":N,"global":G,"name":X,"args":A}` (ids count up from 1), answered
///    by the host with `{"type":"reply","id":N,"ok":true,"value":V}` or
///    `{"type":"reply","id":N,"ok":false,"message":M}`. Replies to unknown (or already
///    answered) ids are ignored; a value that is not lossless JSON or nests deeper than
///    `maxDepth` rejects the call with `binding resolution must be lossless JSON: …`.
/// 5. Worker: one `{"type":"log","text":T}` per log entry of the result, in order, then
///    one `{"type":"done"}` (no value), `{"type":"done","value":V}` or
///    `{"type":"done","error":{"kind":K,"message":M}}`, where `K` is a
///    [`FailureKind`](tools_codemode::FailureKind) wire name (`exception`, `timeout`,
///    `worker-exit`, `invalid-output`, `output-limit`; the host adds `abort` itself); then
///    it returns 0.
///
/// Exit codes other than 0 (no `done` frame is written): 70 when stdin closes or fails at
/// any point (pending binding calls are rejected and the run is dropped: the host has gone)
/// or stdout fails; 71 for an invalid `boot` frame (nothing is written); 72 when the next
/// line is not a `run` frame with a string `program`; 73 for a line during the run that is
/// not a well-formed `reply` frame; 74 when the worker cannot set itself up (a resource
/// limit, the async runtime). A budget the engine cannot stop in time ends the process
/// through `RLIMIT_CPU` (`SIGXCPU`, then `SIGKILL`) or the host's own kill.
///
/// Started with `--probe` as its last argument, it returns 0 at once without reading
/// anything: the host runs it so once inside its sandbox, to prove the sandbox works.
///
/// Return promptly from `main` with the code: a thread blocked on stdin outlives the call.
pub fn quickjs_worker_main() -> ExitCode {
    if std::env::args_os()
        .skip(1)
        .last()
        .is_some_and(|arg| arg == PROBE_ARG)
    {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(serve(BufReader::new(std::io::stdin()), std::io::stdout()))
}

/// The argument that makes the worker exit 0 at once (the host's sandbox probe).
pub(crate) const PROBE_ARG: &str = "--probe";

/// One line of input.
enum Line {
    Text(String),
    /// End of input, or a read error: the host has gone.
    End,
    /// Not UTF-8.
    Invalid,
}

/// Reads one line, without its `\n`.
fn read_line(input: &mut impl BufRead) -> Line {
    let mut bytes = Vec::new();
    match input.read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => return Line::End,
        Ok(_) => {}
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).map_or(Line::Invalid, Line::Text)
}

/// Writes one diagnostic line on stderr (best effort: there is nowhere else to report).
fn diagnose(message: &str) {
    let _ = writeln!(std::io::stderr(), "tools-codemode-worker: {message}");
}

/// The frame writer: whole frames, flushed one by one, from any thread.
struct Writer(Mutex<Box<dyn Write + Send>>);

impl Writer {
    /// Writes one frame (a JSON object without its newline).
    fn send(&self, frame: &str) -> std::io::Result<()> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(frame.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    }
}

/// The settlements of binding calls in flight, by id.
type Pending = HashMap<u64, oneshot::Sender<tools_codemode::BindingOutcome>>;

/// The binding calls of the run.
struct Calls {
    /// `None` once the host's channel closed: calls made later reject at once.
    pending: Mutex<Option<Pending>>,
    next_id: AtomicU64,
}

impl Calls {
    fn lock(&self) -> MutexGuard<'_, Option<Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Settles call `id` (unknown ids are ignored; so is a call the run no longer awaits).
    fn settle(&self, id: u64, result: tools_codemode::BindingOutcome) {
        let sender = self.lock().as_mut().and_then(|pending| pending.remove(&id));
        if let Some(sender) = sender {
            let _ = sender.send(result);
        }
    }

    /// Rejects every pending call and every later one.
    fn close(&self) {
        let pending = self.lock().take();
        drop(pending);
    }
}

/// The binding host of the run: every call is a `call` frame to the host.
struct WireHost {
    calls: Arc<Calls>,
    writer: Arc<Writer>,
}

impl BindingHost for WireHost {
    fn call(&self, global: &str, name: &str, args: JsonValue) -> BindingFuture {
        let id = self.calls.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, settled) = oneshot::channel();
        match self.calls.lock().as_mut() {
            Some(pending) => pending.insert(id, sender),
            None => return BindingFuture::ready(Err(HOST_GONE_MESSAGE.into())),
        };
        let frame = format!(
            "{{\"type\":\"call\",\"id\":{id},\"global\":{},\"name\":{},\"args\":{}}}",
            wire::quote(global),
            wire::quote(name),
            to_compact_string(args.as_value())
        );
        drop(args);
        if self.writer.send(&frame).is_err() {
            self.calls.settle(id, Err(HOST_GONE_MESSAGE.into()));
        }
        BindingFuture::new(async move {
            settled
                .await
                .unwrap_or_else(|_| Err(HOST_GONE_MESSAGE.into()))
        })
    }
}

/// The program of a `run` frame.
fn run_program(line: &str) -> Option<String> {
    let parsed = wire::parse(line, usize::MAX)?;
    let Value::Object(mut frame) = parsed.value else {
        drop_deep(parsed.value);
        return None;
    };
    let is_run = frame.get("type").and_then(Value::as_str) == Some("run");
    let program = match frame.remove("program") {
        Some(Value::String(program)) => Some(program),
        Some(other) => {
            drop_deep(other);
            None
        }
        None => None,
    };
    drop_deep(Value::Object(frame));
    program.filter(|_| is_run)
}

/// The id and settlement of a `reply` frame; `None` when the line is not a well-formed one.
fn reply(line: &str, depth: &Limits) -> Option<(u64, tools_codemode::BindingOutcome)> {
    let parsed = wire::parse(line, usize::MAX)?;
    let Value::Object(mut frame) = parsed.value else {
        drop_deep(parsed.value);
        return None;
    };
    let is_reply = frame.get("type").and_then(Value::as_str) == Some("reply");
    let id = frame.get("id").and_then(Value::as_u64);
    let settlement = match frame.get("ok") {
        Some(Value::Bool(true)) => frame
            .remove("value")
            .map(|value| resolution(value, parsed.lossy_number, depth)),
        Some(Value::Bool(false)) => match frame.get("message") {
            Some(Value::String(message)) => Some(Err(BindingError {
                message: message.clone(),
                code: match frame.get("code") {
                    Some(Value::String(code)) => Some(match code.parse::<ErrorCode>() {
                        Ok(known) => Cow::Borrowed(known.as_str()),
                        Err(_) => Cow::Owned(code.clone()),
                    }),
                    _ => None,
                },
            })),
            _ => None,
        },
        _ => None,
    };
    drop_deep(Value::Object(frame));
    if !is_reply {
        return None;
    }
    Some((id?, settlement?))
}

/// A host's resolution, taken across the lossless boundary at the run's depth limit.
fn resolution(value: Value, lossy_number: bool, depth: &Limits) -> tools_codemode::BindingOutcome {
    if lossy_number {
        drop_deep(value);
        return Err(BindingError::with_code(
            ErrorCode::InvalidToolOutput,
            format!("{RESOLUTION_NOT_LOSSLESS}: an integer has no exact JSON number"),
        ));
    }
    JsonValue::with_limits_at(value, depth, "$").map_err(|error| {
        let detail = error
            .violations()
            .first()
            .map_or_else(|| error.to_string(), ToString::to_string);
        BindingError::with_code(
            ErrorCode::InvalidToolOutput,
            format!("{RESOLUTION_NOT_LOSSLESS}: {detail}"),
        )
    })
}

/// Reads replies until the input ends or breaks the protocol; returns the exit code.
fn read_replies(mut input: impl BufRead, calls: &Calls, depth: &Limits) -> u8 {
    loop {
        let line = match read_line(&mut input) {
            Line::Text(line) => line,
            Line::End => return EXIT_HOST_GONE,
            Line::Invalid => return EXIT_BAD_FRAME,
        };
        match reply(&line, depth) {
            Some((id, result)) => calls.settle(id, result),
            None => return EXIT_BAD_FRAME,
        }
    }
}

/// The `done` frame of a result.
fn done_frame(result: &CodeRunResult) -> String {
    match (&result.error, &result.value) {
        (Some(failure), _) => format!(
            "{{\"type\":\"done\",\"error\":{{\"kind\":{},\"message\":{}}}}}",
            wire::quote(failure.kind.as_str()),
            wire::quote(&failure.message)
        ),
        (None, Some(value)) => format!(
            "{{\"type\":\"done\",\"value\":{}}}",
            to_compact_string(value.as_value())
        ),
        (None, None) => "{\"type\":\"done\"}".to_owned(),
    }
}

/// Writes the logs and the `done` frame of a result.
fn report(writer: &Writer, result: &CodeRunResult) -> std::io::Result<()> {
    for text in &result.logs {
        writer.send(&format!(
            "{{\"type\":\"log\",\"text\":{}}}",
            wire::quote(text)
        ))?;
    }
    writer.send(&done_frame(result))
}

/// The whole session over `input` and `output`; returns the exit code.
fn serve<R, W>(mut input: R, output: W) -> u8
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let boot = match read_line(&mut input) {
        Line::Text(line) => boot::parse(&line),
        Line::End => return EXIT_HOST_GONE,
        Line::Invalid => Err("the line is not UTF-8".to_owned()),
    };
    let boot = match boot {
        Ok(boot) => boot,
        Err(reason) => {
            diagnose(&format!("invalid boot frame: {reason}"));
            return EXIT_BAD_BOOT;
        }
    };
    if let Err(reason) = boot::apply_rlimits(&boot) {
        diagnose(&reason);
        return EXIT_SETUP;
    }
    let runtime = match QuickJsRuntime::new(boot.limits.clone()) {
        Ok(runtime) => runtime,
        Err(error) => {
            diagnose(&error.to_string());
            return EXIT_BAD_BOOT;
        }
    };
    let writer = Arc::new(Writer(Mutex::new(Box::new(output))));
    if writer.send("{\"type\":\"boot-ack\"}").is_err() {
        return EXIT_HOST_GONE;
    }
    let program = match read_line(&mut input) {
        Line::Text(line) => run_program(&line),
        Line::End => return EXIT_HOST_GONE,
        Line::Invalid => None,
    };
    let Some(program) = program else {
        diagnose("the frame after boot-ack is not a run frame");
        return EXIT_BAD_RUN;
    };
    let engine = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(engine) => engine,
        Err(error) => {
            diagnose(&format!("async runtime: {error}"));
            return EXIT_SETUP;
        }
    };

    let calls = Arc::new(Calls {
        pending: Mutex::new(Some(HashMap::new())),
        next_id: AtomicU64::new(1),
    });
    let (ended, mut host_ended) = oneshot::channel();
    let reader_calls = Arc::clone(&calls);
    let depth = Limits::default().with_max_depth(boot.limits.max_json_depth);
    let spawned = std::thread::Builder::new()
        .name("codemode-worker-stdin".to_owned())
        .spawn(move || {
            let code = read_replies(input, &reader_calls, &depth);
            // The exit is announced before the calls reject, so a program that catches the
            // rejection cannot complete the run first.
            let _ = ended.send(code);
            reader_calls.close();
        });
    if let Err(error) = spawned {
        diagnose(&format!("stdin reader: {error}"));
        return EXIT_SETUP;
    }

    let host = Arc::new(WireHost {
        calls,
        writer: Arc::clone(&writer),
    });
    let request = CodeRunRequest::new(program, boot.namespaces, host);
    let settled = engine.block_on(async {
        tokio::select! {
            biased;
            code = &mut host_ended => Err(code.unwrap_or(EXIT_HOST_GONE)),
            result = runtime.run(request) => Ok(result),
        }
    });
    // A run that settled because the reader rejected its calls settled after the reader
    // announced its exit (one poll of the run can see both): the exit wins.
    let settled = match (settled, host_ended.try_recv()) {
        (Ok(_), Ok(code)) => Err(code),
        (settled, _) => settled,
    };
    match settled {
        Ok(Ok(result)) => match report(&writer, &result) {
            Ok(()) => 0,
            Err(_) => EXIT_HOST_GONE,
        },
        Ok(Err(error)) => {
            diagnose(&error.to_string());
            EXIT_SETUP
        }
        Err(code) => {
            if code == EXIT_BAD_FRAME {
                diagnose("a frame from the host is not a well-formed reply frame");
            }
            code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tools_codemode::{CodeRunFailure, FailureKind};

    fn settled(line: &str) -> Option<(u64, Result<String, String>)> {
        let limits = Limits::default().with_max_depth(3);
        reply(line, &limits).map(|(id, result)| {
            (
                id,
                result.map(|v| v.to_string()).map_err(|e| match e.code {
                    Some(code) => format!("{code}: {}", e.message),
                    None => e.message,
                }),
            )
        })
    }

    #[test]
    fn replies_are_read_strictly() {
        assert_eq!(
            settled(r#"{"type":"reply","id":7,"ok":true,"value":{"a":[1.0]}}"#),
            Some((7, Ok(r#"{"a":[1]}"#.to_owned())))
        );
        assert_eq!(
            settled(r#"{"type":"reply","id":1,"ok":false,"message":"no \"x\""}"#),
            Some((1, Err("no \"x\"".to_owned())))
        );
        assert_eq!(
            settled(r#"{"type":"reply","id":1,"ok":false,"message":"late","code":"TOOL_TIMEOUT"}"#),
            Some((1, Err("TOOL_TIMEOUT: late".to_owned())))
        );
        assert_eq!(
            settled(r#"{"type":"reply","id":1,"ok":false,"message":"m","code":"MY_OWN"}"#),
            Some((1, Err("MY_OWN: m".to_owned())))
        );
        for bad in [
            "",
            "[]",
            r#"{"type":"call","id":1,"ok":true,"value":1}"#,
            r#"{"type":"reply","id":-1,"ok":true,"value":1}"#,
            r#"{"type":"reply","id":"1","ok":true,"value":1}"#,
            r#"{"type":"reply","id":1,"ok":1,"value":1}"#,
            r#"{"type":"reply","id":1,"ok":true}"#,
            r#"{"type":"reply","id":1,"ok":false}"#,
            r#"{"type":"reply","id":1,"ok":false,"message":2}"#,
        ] {
            assert_eq!(settled(bad), None, "{bad}");
        }
    }

    #[test]
    fn resolutions_that_are_not_lossless_reject_the_call() {
        let deep = settled(r#"{"type":"reply","id":2,"ok":true,"value":[[[[1]]]]}"#);
        let Some((2, Err(message))) = deep else {
            panic!("{deep:?}");
        };
        assert!(
            message.starts_with(&format!("INVALID_TOOL_OUTPUT: {RESOLUTION_NOT_LOSSLESS}")),
            "{message}"
        );
        assert!(message.contains("depth limit of 3"), "{message}");
        for lossy in ["-0", "1e400", "18446744073709551617"] {
            let line = format!(r#"{{"type":"reply","id":3,"ok":true,"value":[{lossy}]}}"#);
            let Some((3, Err(message))) = settled(&line) else {
                panic!("{lossy}");
            };
            assert!(
                message.starts_with(&format!("INVALID_TOOL_OUTPUT: {RESOLUTION_NOT_LOSSLESS}")),
                "{message}"
            );
        }
    }

    #[test]
    fn run_frames_carry_a_string_program() {
        assert_eq!(
            run_program(r#"{"type":"run","program":"return 1;","x":[[]]}"#).as_deref(),
            Some("return 1;")
        );
        for bad in [
            "[]",
            r#"{"type":"run"}"#,
            r#"{"type":"run","program":1}"#,
            r#"{"type":"boot","program":"return 1;"}"#,
        ] {
            assert_eq!(run_program(bad), None, "{bad}");
        }
    }

    #[test]
    fn done_frames() {
        let mut result = CodeRunResult::default();
        assert_eq!(done_frame(&result), r#"{"type":"done"}"#);
        result.value = JsonValue::parse(r#"{"a":null}"#).ok();
        assert_eq!(done_frame(&result), r#"{"type":"done","value":{"a":null}}"#);
        result.error = Some(CodeRunFailure::new(FailureKind::WorkerExit, "gone \"now\""));
        assert_eq!(
            done_frame(&result),
            r#"{"type":"done","error":{"kind":"worker-exit","message":"gone \"now\""}}"#
        );
    }
}
