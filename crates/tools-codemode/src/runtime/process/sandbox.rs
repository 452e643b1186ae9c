//! The confinement of Code Mode's child processes: a bubblewrap sandbox, probed once when a
//! runtime is built, that fails closed.
//!
//! # Why bubblewrap
//!
//! The child must get no network (not even the host's loopback), no file system beyond a
//! read-only view of what its interpreter needs, no way to signal a process outside its run,
//! and no process that outlives the run. Linux namespaces give exactly that, and
//! [bubblewrap](https://github.com/containers/bubblewrap) (`bwrap`, the sandbox Flatpak runs
//! every application in) is the maintained, audited tool that builds them without privileges
//! and without code of ours running between `fork` and `exec`:
//!
//! | threat | how it is closed |
//! | --- | --- |
//! | network (TCP, UDP, loopback included) | a new network namespace: only its own, empty loopback |
//! | files | a new mount namespace holding read-only binds of the interpreter's prefix, the shared libraries and `/etc/ld.so.cache`; a minimal, read-only `/dev` (`null`, `zero`, `urandom`, …); `/proc` of the run's own pid namespace; the root itself remounted read-only; an optional private `/tmp` (an in-memory file system of a fixed size that disappears with the run) |
//! | signals, `ptrace`, other processes | a new pid namespace (nothing outside it is visible), a new IPC and UTS namespace, every capability dropped, a new session (no terminal injection) |
//! | processes that outlive the run | the program is pid 1 of its namespace (`--as-pid-1`): when it ends, the kernel kills every process left in it, `setsid` and double forks included; when the host ends the run, the sandbox dies with its parent (`--die-with-parent`) |
//! | nested sandboxes | further user namespaces are disabled (`--disable-userns`) |
//!
//! Landlock would confine the file system a second time inside a mount namespace that
//! already holds nothing else, so it is not used; seccomp filtering is left to a later
//! round (the namespaces above close the listed threats on their own).
//!
//! # Failing closed
//!
//! [`Sandbox::probe`] runs the interpreter once inside the full sandbox when the runtime is
//! built. When `bwrap` is missing or the kernel refuses a namespace, building the runtime
//! fails with [`ContractError::Unconfinable`] naming what is missing, unless the host opted
//! into [`Isolation::UnconfinedProcess`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};

use super::ContractError;

/// The `PATH` a child gets (its only environment variable).
pub(crate) const CHILD_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The fd on which bubblewrap reports the sandboxed process's host pid.
pub(crate) const INFO_FD: i32 = 4;

/// Where the per-run scratch directory appears inside the sandbox.
pub(crate) const SCRATCH_MOUNT: &str = "/tmp";

/// How a process-backed code runtime confines its child.
///
/// The default, [`Isolation::Sandbox`], fails closed: a runtime that cannot build the
/// sandbox refuses to start. [`Isolation::UnconfinedProcess`] runs the child with the full
/// authority of the user running the host; its name is meant to be read in review.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isolation {
    /// A bubblewrap sandbox: no network, a read-only view of the interpreter, its own pid
    /// namespace, no capabilities.
    #[default]
    Sandbox,
    /// No confinement beyond resource limits and a process group: the program can read and
    /// write the user's files, reach the network and signal the user's processes.
    UnconfinedProcess,
}

impl Isolation {
    /// The label [`CodeRuntime::isolation`](crate::CodeRuntime::isolation) reports:
    /// `sandboxed-process` or `unconfined-process`.
    pub const fn label(self) -> &'static str {
        match self {
            Isolation::Sandbox => "sandboxed-process",
            Isolation::UnconfinedProcess => "unconfined-process",
        }
    }
}

/// One read-only entry of the sandbox's file system.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    /// A host directory or file bound read-only at the same path.
    Bind(PathBuf),
    /// A symbolic link (`/lib -> usr/lib` on merged-/usr systems).
    Symlink { target: PathBuf, at: PathBuf },
}

/// A probed sandbox: the `bwrap` binary and the read-only view it builds for one
/// interpreter. Built once per runtime; each run only adds its own arguments.
#[derive(Clone, Debug)]
pub(crate) struct Sandbox {
    bwrap: PathBuf,
    entries: Vec<Entry>,
}

impl Sandbox {
    /// Finds `bwrap`, plans the read-only view (`readable`: what the child needs besides the
    /// system's libraries) and proves the sandbox works by running `probe_argv` inside it.
    ///
    /// # Errors
    ///
    /// [`ContractError::Unconfinable`] naming what is missing.
    pub(crate) fn probe(
        bwrap: &Path,
        readable: &[PathBuf],
        probe_argv: &[OsString],
    ) -> Result<Sandbox, ContractError> {
        let Some(bwrap) = find_program(bwrap) else {
            return Err(ContractError::Unconfinable {
                missing: format!(
                    "bubblewrap (`{}`) was not found on PATH; install the `bubblewrap` package",
                    bwrap.display()
                ),
            });
        };
        let sandbox = Sandbox {
            bwrap,
            entries: plan(readable),
        };
        let mut command = StdCommand::new(&sandbox.bwrap);
        command
            .args(sandbox.args(0, false))
            .args(probe_argv)
            .env_clear()
            .env("PATH", CHILD_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let output = command.output().map_err(|e| ContractError::Unconfinable {
            missing: format!(
                "bubblewrap (`{}`) could not start: {e}",
                sandbox.bwrap.display()
            ),
        })?;
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr);
            let said = said.trim();
            return Err(ContractError::Unconfinable {
                missing: format!(
                    "the sandbox could not be built ({}): {}",
                    output.status,
                    if said.is_empty() {
                        "bubblewrap said nothing; unprivileged user, pid and network namespaces are required"
                    } else {
                        said
                    }
                ),
            });
        }
        Ok(sandbox)
    }

    /// The `bwrap` binary.
    pub(crate) fn program(&self) -> &Path {
        &self.bwrap
    }

    /// The arguments before the sandboxed command (`--` included): `scratch_bytes` is the
    /// size of the private `/tmp` (none when 0), `info_fd` asks bubblewrap to report the
    /// program's host pid on [`INFO_FD`].
    pub(crate) fn args(&self, scratch_bytes: u64, info_fd: bool) -> Vec<OsString> {
        let mut args: Vec<OsString> = [
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            "--cap-drop",
            "ALL",
            "--clearenv",
            "--setenv",
            "PATH",
            CHILD_PATH,
            "--hostname",
            "sandbox",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        for entry in &self.entries {
            match entry {
                Entry::Bind(path) => {
                    args.push("--ro-bind".into());
                    args.push(path.clone().into());
                    args.push(path.clone().into());
                }
                Entry::Symlink { target, at } => {
                    args.push("--symlink".into());
                    args.push(target.clone().into());
                    args.push(at.clone().into());
                }
            }
        }
        args.extend(["--dev", "/dev", "--proc", "/proc"].map(OsString::from));
        if scratch_bytes > 0 {
            args.extend(["--size".into(), scratch_bytes.to_string().into()]);
            args.extend(["--tmpfs", SCRATCH_MOUNT, "--chdir", SCRATCH_MOUNT].map(OsString::from));
        } else {
            args.extend(["--chdir", "/"].map(OsString::from));
        }
        // The root bubblewrap builds and its /dev are in-memory file systems: read-only, so
        // nothing outside the sized scratch can grow the host's memory.
        args.extend(["--remount-ro", "/", "--remount-ro", "/dev"].map(OsString::from));
        if info_fd {
            args.push("--info-fd".into());
            args.push(INFO_FD.to_string().into());
        }
        args.push("--".into());
        args
    }
}

/// The read-only view: the system library directories (or the links to them on merged-/usr
/// systems), the dynamic linker's cache, and whatever the child itself needs, each once and
/// none inside another.
fn plan(readable: &[PathBuf]) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut binds: Vec<PathBuf> = Vec::new();
    for dir in [
        "/usr/lib",
        "/usr/lib64",
        "/lib",
        "/lib64",
        "/lib32",
        "/usr/lib32",
    ] {
        let path = Path::new(dir);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(path) {
                    entries.push(Entry::Symlink {
                        target,
                        at: path.to_path_buf(),
                    });
                }
            }
            Ok(meta) if meta.is_dir() => binds.push(path.to_path_buf()),
            _ => {}
        }
    }
    if Path::new("/etc/ld.so.cache").is_file() {
        binds.push(PathBuf::from("/etc/ld.so.cache"));
    }
    for path in readable {
        // The host's own view of the path (symlinks resolved), so the bind holds real files.
        if let Ok(real) = std::fs::canonicalize(path) {
            binds.push(real);
        }
    }
    binds.sort();
    binds.dedup();
    // A path inside another bound path needs no bind of its own.
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in binds {
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    entries.extend(kept.into_iter().map(Entry::Bind));
    entries
}

/// `program` as given when it holds a `/`, else its first match on the host's `PATH` or
/// [`CHILD_PATH`].
pub(crate) fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return program.is_file().then(|| program.to_path_buf());
    }
    let host_path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&host_path).chain(std::env::split_paths(CHILD_PATH));
    for dir in dirs {
        let candidate = dir.join(program);
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    None
}

/// Busy time of one process (all its threads), from `/proc/<pid>/stat`, in milliseconds;
/// `None` once the process is gone or the file cannot be read.
pub(crate) fn cpu_millis(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // After `)`: state is field 3 of the whole line; utime and stime are fields 14 and 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // Linux reports these in USER_HZ, which is 100 on every architecture it supports.
    Some((utime + stime).saturating_mul(10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_binds_collapse() {
        let entries = plan(&[PathBuf::from("/usr/lib"), PathBuf::from("/usr")]);
        let binds: Vec<&PathBuf> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Bind(p) => Some(p),
                Entry::Symlink { .. } => None,
            })
            .collect();
        assert!(binds.contains(&&PathBuf::from("/usr")));
        assert!(
            !binds
                .iter()
                .any(|p| p.starts_with("/usr") && *p != Path::new("/usr"))
        );
    }

    #[test]
    fn the_own_cpu_time_reads() {
        assert!(cpu_millis(std::process::id()).is_some());
        assert_eq!(cpu_millis(u32::MAX), None);
    }

    #[test]
    fn the_args_end_with_the_separator() {
        let sandbox = Sandbox {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            entries: plan(&[]),
        };
        let args = sandbox.args(0, true);
        assert_eq!(args.last().map(|a| a.as_os_str()), Some("--".as_ref()));
        assert!(args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--as-pid-1"));
    }

    #[test]
    fn a_missing_bwrap_is_named() {
        let err = Sandbox::probe(Path::new("/nonexistent/bwrap"), &[], &[]).unwrap_err();
        assert!(err.to_string().contains("bubblewrap"), "{err}");
    }
}
