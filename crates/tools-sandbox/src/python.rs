//! The Python runtime: `python3 -I` running `bootstrap.py`, frames on its fd 3.

use std::path::PathBuf;
use std::process::Stdio;

use crate::child::{Launch, Transport};
use crate::frames::Allowance;
use crate::sandbox::{CHILD_PATH, DEFAULT_MAX_PROCESSES, Isolation, Sandbox, SandboxUser};
use crate::{Core, check_max_processes};
use tools_codemode::Language;
use tools_codemode::{
    CodeRunRequest, CodeRuntime, ContractError, DisposeFuture, RunFuture, RuntimeLimits,
};

/// The child's bootstrap, run with `python3 -I -u -c`.
const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// The text of the child's truncation-marker log frame (`{N}` is its log budget).
pub const PYTHON_TRUNCATION_MARKER: &str =
    "[dsh-code-runtime-python] log capture truncated at {} bytes";

/// The Python runtime: one `python3 -I` child process per run, confined by a bubblewrap
/// sandbox unless the host opts out by name.
///
/// `language()` is Python. The program is the body of an async function (top-level `await`
/// and `return`); `print` becomes log entries, and anything the process writes to stdout or
/// stderr is captured line by line as stray output. The child gets an empty environment
/// (only `PATH`), no stdin, `RLIMIT_AS` from the memory cap plus an interpreter allowance, no
/// core dumps, and is ended with everything it started when the run ends.
///
/// # Isolation
///
/// By default ([`Isolation::Sandbox`]) the child runs in a bubblewrap sandbox: no network
/// (not even the host's loopback), a read-only view of the interpreter's prefix and the
/// shared libraries and nothing else of the file system, its own pid namespace (it can
/// signal nothing outside its run, and every process it starts dies with it), no
/// capabilities. [`PythonRuntime::new`] probes the sandbox once and fails closed with
/// [`ContractError::Unconfinable`] when it cannot be built. [`PythonOptions::scratch_bytes`]
/// adds a private writable `/tmp` of a fixed size, gone when the run ends.
///
/// # Budgets
///
/// The compute budget is the busy time of the program's process (all its threads), read by
/// the host every 10 ms and enforced to within a few tens of milliseconds; `RLIMIT_CPU`
/// (rounded up to whole seconds) backs it in every process the program forks. Python's
/// `MemoryError` is an ordinary exception the program may catch, but the address-space cap
/// holds whatever it does.
#[derive(Debug)]
pub struct PythonRuntime {
    core: Core,
}

/// How a [`PythonRuntime`] starts its interpreter.
///
/// # Examples
///
/// ```no_run
/// use tools_codemode::RuntimeLimits;
/// use tools_sandbox::{Isolation, PythonOptions, PythonRuntime};
///
/// // The default: a sandboxed `python3` (fails closed where the sandbox cannot be built).
/// let sandboxed = PythonRuntime::new(RuntimeLimits::default())?;
/// // A private writable /tmp of 16 MiB for each run, gone when the run ends.
/// let with_scratch = PythonRuntime::with_options(
///     RuntimeLimits::default(),
///     PythonOptions::default().scratch_bytes(16 << 20),
/// )?;
/// // Explicitly unconfined: the program gets the host user's authority.
/// let unconfined = PythonRuntime::with_options(
///     RuntimeLimits::default(),
///     PythonOptions::default().isolation(Isolation::UnconfinedProcess),
/// )?;
/// # Ok::<(), tools_codemode::ContractError>(())
/// ```
#[derive(Clone, Debug)]
pub struct PythonOptions {
    interpreter: PathBuf,
    isolation: Isolation,
    scratch_bytes: u64,
    bwrap: PathBuf,
    user: SandboxUser,
    max_processes: u32,
}

impl Default for PythonOptions {
    fn default() -> PythonOptions {
        PythonOptions {
            interpreter: PathBuf::from("python3"),
            isolation: Isolation::Sandbox,
            scratch_bytes: 0,
            bwrap: PathBuf::from("bwrap"),
            user: SandboxUser::NOBODY,
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

impl PythonOptions {
    /// The interpreter: a path, or a name looked up on `/usr/local/bin:/usr/bin:/bin`
    /// (default `python3`). It is resolved once, when the runtime is built.
    pub fn interpreter(mut self, interpreter: impl Into<PathBuf>) -> PythonOptions {
        self.interpreter = interpreter.into();
        self
    }

    /// How the child is confined (default [`Isolation::Sandbox`]).
    pub fn isolation(mut self, isolation: Isolation) -> PythonOptions {
        self.isolation = isolation;
        self
    }

    /// The size of a private writable `/tmp` (also the working directory) that each
    /// sandboxed run gets: an in-memory file system that starts empty and disappears with
    /// the run; writes past the size fail with `ENOSPC`. Default 0: nothing is writable.
    /// Ignored when unconfined.
    pub fn scratch_bytes(mut self, bytes: u64) -> PythonOptions {
        self.scratch_bytes = bytes;
        self
    }

    /// The bubblewrap binary: a path, or a name looked up on the host's `PATH` (default
    /// `bwrap`).
    pub fn bwrap(mut self, bwrap: impl Into<PathBuf>) -> PythonOptions {
        self.bwrap = bwrap.into();
        self
    }

    /// The unprivileged host user a sandbox started by root drops to before it enters its
    /// namespaces (default [`SandboxUser::NOBODY`], uid and gid 65534); a host that is not
    /// root runs the sandbox as itself. Building the runtime fails for uid or gid 0.
    pub fn sandbox_user(mut self, user: SandboxUser) -> PythonOptions {
        self.user = user;
        self
    }

    /// The most processes and threads the program may have at once, itself included
    /// (`RLIMIT_NPROC`, counted in the run's own user namespace; default
    /// [`DEFAULT_MAX_PROCESSES`]). At least 1.
    pub fn max_processes(mut self, max: u32) -> PythonOptions {
        self.max_processes = max;
        self
    }
}

/// Asks the interpreter where it lives: `[executable, prefixes…]`.
const WHERE_SCRIPT: &str = "import sys, json; print(json.dumps([sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]))";

impl PythonRuntime {
    /// A sandboxed runtime starting `python3`, with the default [`PythonOptions`].
    ///
    /// Blocks briefly: the interpreter is resolved and the sandbox probed once, by running
    /// the interpreter twice.
    ///
    /// # Errors
    ///
    /// [`ContractError::InvalidLimit`] for a limit out of range,
    /// [`ContractError::InterpreterUnavailable`] when the interpreter cannot be run, and
    /// [`ContractError::Unconfinable`] when the sandbox cannot be built.
    pub fn new(limits: RuntimeLimits) -> Result<PythonRuntime, ContractError> {
        PythonRuntime::with_options(limits, PythonOptions::default())
    }

    /// A runtime with explicit options.
    ///
    /// # Errors
    ///
    /// As [`PythonRuntime::new`]; an unconfined runtime never fails for the sandbox.
    pub fn with_options(
        limits: RuntimeLimits,
        options: PythonOptions,
    ) -> Result<PythonRuntime, ContractError> {
        limits.validate()?;
        check_max_processes(options.max_processes)?;
        let (executable, readable) = locate(&options.interpreter)?;
        let sandbox = match options.isolation {
            Isolation::Sandbox => Some(Sandbox::probe(
                &options.bwrap,
                &readable,
                &[
                    executable.clone().into(),
                    "-I".into(),
                    "-c".into(),
                    "import json, asyncio, resource, socket".into(),
                ],
                options.user,
            )?),
            Isolation::UnconfinedProcess => None,
        };
        Ok(PythonRuntime {
            core: Core::new(
                limits,
                Launch {
                    args: ["-I", "-B", "-u", "-c", BOOTSTRAP]
                        .map(std::ffi::OsString::from)
                        .to_vec(),
                    executable,
                    transport: Transport::Fd3,
                    isolation: options.isolation,
                    sandbox,
                    scratch_bytes: options.scratch_bytes,
                    allowance: Allowance {
                        compute_slack: std::time::Duration::ZERO,
                        address_space: RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE,
                        max_processes: (options.isolation == Isolation::Sandbox)
                            .then_some(options.max_processes),
                    },
                },
            ),
        })
    }

    /// The limits every run gets.
    pub fn limits(&self) -> &RuntimeLimits {
        &self.core.limits
    }

    /// The interpreter executable every run starts, as the interpreter reports it
    /// (`sys.executable`).
    pub fn executable(&self) -> &std::path::Path {
        &self.core.launch.executable
    }
}

/// The interpreter's real executable followed by its prefixes.
/// The interpreter's executable as it reports it (`sys.executable`: in a virtual
/// environment, the environment's own link, so that the environment stays itself), and the
/// paths it needs to read: its prefixes and its real executable.
fn locate(interpreter: &std::path::Path) -> Result<(PathBuf, Vec<PathBuf>), ContractError> {
    let unavailable = |reason: String| ContractError::InterpreterUnavailable {
        interpreter: interpreter.display().to_string(),
        reason,
    };
    let output = std::process::Command::new(interpreter)
        .args(["-I", "-c", WHERE_SCRIPT])
        .env_clear()
        .env("PATH", CHILD_PATH)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| unavailable(e.to_string()))?;
    if !output.status.success() {
        return Err(unavailable(format!("it exited with {}", output.status)));
    }
    let paths: Vec<String> = serde_json::from_slice(&output.stdout)
        .map_err(|_| unavailable("it did not report its location".to_owned()))?;
    let Some(executable) = paths.first().map(PathBuf::from).filter(|p| p.is_absolute()) else {
        return Err(unavailable("it did not report its location".to_owned()));
    };
    let mut readable: Vec<PathBuf> = Vec::with_capacity(paths.len() + 1);
    for path in &paths {
        let path = std::fs::canonicalize(path).map_err(|e| unavailable(format!("{path}: {e}")))?;
        readable.push(path);
    }
    // The link itself (a virtual environment's `bin/python`), where it lies outside the
    // prefixes.
    if let Some(parent) = executable.parent() {
        readable.push(parent.to_path_buf());
    }
    Ok((executable, readable))
}

impl CodeRuntime for PythonRuntime {
    fn language(&self) -> Language {
        Language::Python
    }

    fn isolation(&self) -> &str {
        self.core.isolation()
    }

    fn run(&self, request: CodeRunRequest) -> RunFuture {
        self.core.run(request)
    }

    fn dispose(&self) -> DisposeFuture {
        self.core.dispose()
    }
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
}
