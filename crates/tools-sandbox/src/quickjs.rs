//! TypeScript in a confined child: the QuickJS worker (`quickjs_worker_main`, binary
//! `tools-codemode-worker`) started per run inside the same sandbox as the Python runtime,
//! frames on its stdin and stdout.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::child::{Launch, Transport};
use crate::frames::Allowance;
use crate::sandbox::{DEFAULT_MAX_PROCESSES, Isolation, Sandbox, SandboxUser};
use crate::{Core, check_max_processes};
use tools_codemode::Language;
use tools_codemode::{
    CodeRunRequest, CodeRuntime, ContractError, DisposeFuture, RunFuture, RuntimeLimits,
};

/// Address space granted to the worker on top of the memory cap and the stack: the engine
/// enforces the cap itself, and glibc reserves 64 MiB of address space per thread arena, so
/// a tight `RLIMIT_AS` would fail allocations below the engine's cap (where the engine's
/// own out-of-memory accounting cannot see them).
const WORKER_ADDRESS_SPACE_ALLOWANCE: u64 = 1024 * 1024 * 1024;

/// The argument that makes the worker exit 0 at once (kept in step with the worker).
const PROBE_ARG: &str = "--probe";

/// How a [`QuickJsProcessRuntime`] starts its worker.
#[derive(Clone, Debug)]
pub struct QuickJsProcessOptions {
    worker: PathBuf,
    args: Vec<OsString>,
    isolation: Isolation,
    bwrap: PathBuf,
    user: SandboxUser,
    max_processes: u32,
}

impl QuickJsProcessOptions {
    /// Options starting `worker`: the path of a binary whose `main` returns
    /// `tools_quickjs::quickjs_worker_main()` (`tools-quickjs`'s `tools-codemode-worker`, or the
    /// host's own binary under an argument it dispatches on).
    pub fn new(worker: impl Into<PathBuf>) -> QuickJsProcessOptions {
        QuickJsProcessOptions {
            worker: worker.into(),
            args: Vec::new(),
            isolation: Isolation::Sandbox,
            bwrap: PathBuf::from("bwrap"),
            user: SandboxUser::NOBODY,
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }

    /// An argument given to the worker before anything else, e.g. the flag on which a
    /// host's own binary dispatches to `quickjs_worker_main()`.
    pub fn arg(mut self, arg: impl Into<OsString>) -> QuickJsProcessOptions {
        self.args.push(arg.into());
        self
    }

    /// How the worker is confined (default [`Isolation::Sandbox`]).
    pub fn isolation(mut self, isolation: Isolation) -> QuickJsProcessOptions {
        self.isolation = isolation;
        self
    }

    /// The bubblewrap binary: a path, or a name looked up on the host's `PATH` (default
    /// `bwrap`).
    pub fn bwrap(mut self, bwrap: impl Into<PathBuf>) -> QuickJsProcessOptions {
        self.bwrap = bwrap.into();
        self
    }

    /// The unprivileged host user a sandbox started by root drops to before it enters its
    /// namespaces (default [`SandboxUser::NOBODY`], uid and gid 65534); a host that is not
    /// root runs the sandbox as itself. Building the runtime fails for uid or gid 0.
    pub fn sandbox_user(mut self, user: SandboxUser) -> QuickJsProcessOptions {
        self.user = user;
        self
    }

    /// The most processes and threads the program may have at once, itself included
    /// (`RLIMIT_NPROC`, counted in the run's own user namespace; default
    /// [`DEFAULT_MAX_PROCESSES`]). At least 1.
    pub fn max_processes(mut self, max: u32) -> QuickJsProcessOptions {
        self.max_processes = max;
        self
    }
}

/// The TypeScript runtime with process isolation: each run starts a fresh QuickJS worker
/// in a bubblewrap sandbox (no network, no file system but the worker and the shared
/// libraries, its own pid namespace), so a fault in the engine's C code ends one child,
/// never the host.
///
/// It runs the same engine and realm as [`QuickJsRuntime`](https://docs.rs/tools-quickjs) (the
/// in-process default, faster to start) and reports the same results; the worker enforces
/// the budgets itself, and the host backs them with its own wall-clock ceiling, a busy-time
/// meter (at the compute budget plus the settle grace) and `RLIMIT_CPU` / `RLIMIT_AS` in
/// the child. Building it probes the sandbox once and fails closed, as the Python runtime
/// does.
///
/// # Examples
///
/// ```no_run
/// use tools_codemode::RuntimeLimits;
/// use tools_sandbox::{QuickJsProcessOptions, QuickJsProcessRuntime};
///
/// let runtime = QuickJsProcessRuntime::new(
///     RuntimeLimits::default(),
///     QuickJsProcessOptions::new("/usr/local/libexec/tools-codemode-worker"),
/// )?;
/// # Ok::<(), tools_codemode::ContractError>(())
/// ```
#[derive(Debug)]
pub struct QuickJsProcessRuntime {
    core: Core,
}

impl QuickJsProcessRuntime {
    /// A runtime starting the worker of `options`; blocks briefly to probe the sandbox.
    ///
    /// # Errors
    ///
    /// [`ContractError::InvalidLimit`] for a limit out of range,
    /// [`ContractError::InterpreterUnavailable`] when the worker is not an executable file,
    /// and [`ContractError::Unconfinable`] when the sandbox cannot be built.
    pub fn new(
        limits: RuntimeLimits,
        options: QuickJsProcessOptions,
    ) -> Result<QuickJsProcessRuntime, ContractError> {
        limits.validate()?;
        check_max_processes(options.max_processes)?;
        let worker = std::fs::canonicalize(&options.worker)
            .ok()
            .filter(|path| path.is_file())
            .ok_or_else(|| ContractError::InterpreterUnavailable {
                interpreter: options.worker.display().to_string(),
                reason: "the worker is not an executable file".to_owned(),
            })?;
        let sandbox = match options.isolation {
            Isolation::Sandbox => Some(Sandbox::probe(
                &options.bwrap,
                std::slice::from_ref(&worker),
                &std::iter::once(worker.clone().into_os_string())
                    .chain(options.args.iter().cloned())
                    .chain(std::iter::once(OsString::from(PROBE_ARG)))
                    .collect::<Vec<_>>(),
                options.user,
            )?),
            Isolation::UnconfinedProcess => None,
        };
        let allowance = Allowance {
            compute_slack: limits.settle_grace,
            address_space: WORKER_ADDRESS_SPACE_ALLOWANCE,
            max_processes: (options.isolation == Isolation::Sandbox)
                .then_some(options.max_processes),
        };
        Ok(QuickJsProcessRuntime {
            core: Core::new(
                limits,
                Launch {
                    executable: worker,
                    args: options.args,
                    transport: Transport::Stdio,
                    isolation: options.isolation,
                    sandbox,
                    scratch_bytes: 0,
                    allowance,
                },
            ),
        })
    }

    /// The limits every run gets.
    pub fn limits(&self) -> &RuntimeLimits {
        &self.core.limits
    }
}

impl CodeRuntime for QuickJsProcessRuntime {
    fn language(&self) -> Language {
        Language::TypeScript
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
