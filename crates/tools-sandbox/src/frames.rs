//! The frames of a process runtime's child, read as hostile: the line splitter, stray
//! output, the validation of every frame, and the host's `boot` frame.

use serde_json::{Number, Value};
use tools_json::{JsonValue, Limits};

use tools_codemode::kit::{invalid_output, wire};
use tools_codemode::{
    ARGUMENTS_NOT_LOSSLESS, BindingNamespace, CodeRunFailure, FailureKind, INVALID_OUTPUT_MESSAGE,
    OutputLedger, RuntimeLimits,
};

/// A line of stray output longer than this is split into several entries.
pub(super) const STRAY_LINE_MAX: usize = 64 * 1024;

/// Splits a byte stream into lines, refusing lines longer than a bound.
///
/// Linear in the bytes fed: the buffer never holds a `\n` between calls, so each byte is
/// scanned once, and the complete lines are cut out with one shift of the remainder.
#[derive(Debug, Default)]
pub(super) struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// Appends bytes; returns the complete lines (without `\n`), or `Err` when a line (or
    /// the unfinished rest) exceeds `max`.
    pub(super) fn feed(&mut self, bytes: &[u8], max: usize) -> Result<Vec<Vec<u8>>, ()> {
        let mut scan = self.buffer.len();
        self.buffer.extend_from_slice(bytes);
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[scan..].iter().position(|&b| b == b'\n') {
            let end = scan + offset;
            if end - start > max {
                return Err(());
            }
            if start == 0 && end + 1 == self.buffer.len() {
                // The buffer holds exactly one line (the usual end of a long frame that
                // arrived in many reads): hand it over instead of copying it.
                let mut line = std::mem::take(&mut self.buffer);
                line.truncate(end);
                lines.push(line);
                return Ok(lines);
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
pub(super) struct Stray {
    buffer: Vec<u8>,
}

impl Stray {
    pub(super) fn feed(&mut self, bytes: &[u8], ledger: &mut OutputLedger) -> bool {
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

    pub(super) fn flush(&mut self, ledger: &mut OutputLedger) -> bool {
        if self.buffer.is_empty() {
            return true;
        }
        let chunk = std::mem::take(&mut self.buffer);
        ledger.push(&String::from_utf8_lossy(&chunk))
    }
}

/// What the child reported in its `done` frame.
pub(super) enum Done {
    Value(Option<JsonValue>),
    Failure(CodeRunFailure),
}

/// Checks the frames of one run against its bindings and depth limit.
pub(super) struct Checker {
    /// The run's namespaces: a call must name one of their bindings.
    pub(super) namespaces: Vec<BindingNamespace>,
    /// The depth limit of values crossing the boundary.
    pub(super) depth: Limits,
}

impl Checker {
    /// Validates and rebuilds one frame from the child; log entries are metered into
    /// `ledger`.
    pub(super) fn frame(
        &self,
        parsed: wire::Parsed,
        booted: &mut bool,
        ledger: &mut OutputLedger,
    ) -> Frame {
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
                    Some(Value::String(text)) => Frame::Log(ledger.push(text)),
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
                        Err(error) => Done::Failure(invalid_output(&error)),
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
pub(super) enum Frame {
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

/// The `RLIMIT_CPU` backstop in whole seconds: the budget (and the slack of a child that
/// enforces it itself) rounded up, plus one second, so the host's own measurement ends the
/// run first.
pub(super) fn cpu_seconds(limits: &RuntimeLimits, slack: std::time::Duration) -> u64 {
    let millis = limits.compute.saturating_add(slack).as_millis();
    u64::try_from(millis.div_ceil(1000).max(1))
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// What the host grants a child beyond the run's limits.
#[derive(Clone, Copy, Debug)]
pub(super) struct Allowance {
    /// How far past the compute budget the host's meter waits, for a child that enforces
    /// the budget itself and reports it first.
    pub(super) compute_slack: std::time::Duration,
    /// Address space for the child itself on top of the memory cap and the stack.
    pub(super) address_space: u64,
    /// `RLIMIT_NPROC` of the child (sandboxed only: there it counts the run's own user
    /// namespace; unconfined it would count every process of the host's user).
    pub(super) max_processes: Option<u32>,
}

/// The address space of one child (`RLIMIT_AS`): the memory cap, the stack and the
/// child's own allowance. Sandboxed, the resident memory of all the run's processes
/// together is held to it too.
pub(super) fn address_space_bytes(limits: &RuntimeLimits, allowance: Allowance) -> u64 {
    limits
        .memory_bytes
        .saturating_add(limits.stack_bytes as u64)
        .saturating_add(allowance.address_space)
}

/// The `boot` frame: the Python bootstrap reads the first fields, the QuickJS worker all.
pub(super) fn boot_frame(
    namespaces: &[BindingNamespace],
    limits: &RuntimeLimits,
    allowance: Allowance,
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
        let signatures = if namespace.signatures.is_empty() {
            String::new()
        } else {
            let signatures: Vec<String> = namespace
                .signatures
                .iter()
                .map(|signature| {
                    let parameters: Vec<String> = signature
                        .parameters
                        .iter()
                        .map(|p| wire::quote(p))
                        .collect();
                    format!(
                        "{{\"name\":{},\"parameters\":[{}]}}",
                        wire::quote(&signature.name),
                        parameters.join(",")
                    )
                })
                .collect();
            format!(",\"signatures\":[{}]", signatures.join(","))
        };
        specs.push(format!(
            "{{\"global\":{},\"names\":[{}]{class}{signatures}}}",
            wire::quote(&namespace.global),
            names.join(",")
        ));
    }
    format!(
        "{{\"type\":\"boot\",\"cpuSeconds\":{},\"addressSpaceBytes\":{},\"maxLogBytes\":{},\"maxValueBytes\":{},\"maxDepth\":{},\"computeMillis\":{},\"wallMillis\":{},\"memoryBytes\":{},\"stackBytes\":{},\"maxOutputBytes\":{},\"settleGraceMillis\":{}{},\"namespaces\":[{}]}}\n",
        cpu_seconds(limits, allowance.compute_slack),
        address_space_bytes(limits, allowance),
        limits.max_output_bytes,
        limits.max_output_bytes,
        limits.max_json_depth,
        limits.compute.as_millis(),
        limits.wall.as_millis(),
        limits.memory_bytes,
        limits.stack_bytes,
        limits.max_output_bytes,
        limits.settle_grace.as_millis(),
        allowance
            .max_processes
            .map(|max| format!(",\"maxProcesses\":{max}"))
            .unwrap_or_default(),
        specs.join(",")
    )
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
            Some(tools_codemode::ErrorClass::tool_call_error()),
        )];
        let limits = RuntimeLimits::default();
        let allowance = Allowance {
            compute_slack: std::time::Duration::ZERO,
            address_space: RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE,
            max_processes: Some(7),
        };
        let frame = boot_frame(&namespaces, &limits, allowance);
        let parsed = wire::parse(frame.trim_end(), 10).map(|p| p.value);
        let parsed = parsed.unwrap_or_default();
        assert_eq!(parsed["type"], "boot");
        assert_eq!(parsed["cpuSeconds"], 61);
        assert_eq!(parsed["maxProcesses"], 7);
        assert_eq!(parsed["computeMillis"], 60_000);
        assert_eq!(parsed["memoryBytes"], limits.memory_bytes);
        assert_eq!(parsed["namespaces"][0]["names"][1], "a\"b");
        assert_eq!(
            parsed["namespaces"][0]["errorClass"]["memberNameProperty"],
            "toolName"
        );
        assert!(
            !frame.contains("signatures"),
            "a namespace without signatures sends none"
        );
    }

    #[test]
    fn the_boot_frame_carries_signatures() {
        let namespaces = [BindingNamespace::new("tools", ["echo", "$search"], None)
            .with_signature("$search", ["query", "opt\"ions"])];
        let allowance = Allowance {
            compute_slack: std::time::Duration::ZERO,
            address_space: RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE,
            max_processes: None,
        };
        let frame = boot_frame(&namespaces, &RuntimeLimits::default(), allowance);
        let parsed = wire::parse(frame.trim_end(), 10).map(|p| p.value);
        let parsed = parsed.unwrap_or_default();
        let signatures = &parsed["namespaces"][0]["signatures"];
        assert_eq!(signatures[0]["name"], "$search");
        assert_eq!(signatures[0]["parameters"][0], "query");
        assert_eq!(signatures[0]["parameters"][1], "opt\"ions");
        assert_eq!(signatures.as_array().map(Vec::len), Some(1));
    }
}
