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
//! | nested sandboxes, kernel interfaces the runtimes never need | further user namespaces are disabled (`--disable-userns`), and a seccomp filter ([`crate::seccomp`]) refuses `ptrace`, keyrings, `bpf`, mounts, new namespaces, `memfd_create` and the rest of its list |
//! | host-wide kernel settings (`/proc/sys`, `/proc/sysrq-trigger`, …) | the program never runs as host root (below), and every global `/proc` entry that a root process could write is bound read-only over the sandbox's `/proc` |
//!
//! # Never as host root
//!
//! `bwrap --unshare-user` run by root maps the sandbox's uid to host uid 0, and the kernel
//! checks some writes (the sysctls above all) by effective uid, not by capability. So when
//! the host runs as root, the sandbox is built in two steps: an outer bubblewrap, still
//! root, builds a mount namespace holding only the read-only view (directories it creates
//! are world-readable, so the view is reachable from an unprivileged uid even where the
//! host's own path is not, like a Python under `/root`), then `setpriv` drops to the
//! sandbox's unprivileged uid and gid (65534 by default, no supplementary groups) and an
//! inner bubblewrap builds the real sandbox from that view as an ordinary user would. No
//! code of the program ever runs as host root; a host that is not root needs no first
//! step. The outer step holds no user code and adds a few milliseconds to a run's start.
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

use tools_codemode::ContractError;

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
    /// The label [`CodeRuntime::isolation`](tools_codemode::CodeRuntime::isolation) reports:
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

/// The fd on which bubblewrap reads the seccomp filter that refuses with `EPERM`.
pub(crate) const SECCOMP_FD: i32 = 5;

/// The fd on which bubblewrap reads the filter that answers `clone3` with `ENOSYS`.
pub(crate) const CLONE3_FD: i32 = 6;

/// The global `/proc` entries a root process could write: bound read-only over the
/// sandbox's own `/proc` (those the host lacks are skipped).
const READ_ONLY_PROC: [&str; 8] = [
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
    "/proc/acpi",
    "/proc/scsi",
    "/proc/tty",
];

/// The default of the process runtimes' `max_processes`: processes and threads the program
/// may have at once, itself included.
pub const DEFAULT_MAX_PROCESSES: u32 = 64;

/// The unprivileged host identity a sandbox run by root drops to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SandboxUser {
    /// The host uid (never 0).
    pub uid: u32,
    /// The host gid (never 0).
    pub gid: u32,
}

impl SandboxUser {
    /// `nobody` / `nogroup` on Linux: uid and gid 65534 (the kernel's overflow ids).
    pub const NOBODY: SandboxUser = SandboxUser {
        uid: 65534,
        gid: 65534,
    };
}

impl Default for SandboxUser {
    fn default() -> SandboxUser {
        SandboxUser::NOBODY
    }
}

/// The first step of a sandbox built by root: the outer bubblewrap's view and the drop.
#[derive(Clone, Debug)]
struct Demotion {
    /// `setpriv`, which drops to the user before the inner bubblewrap starts.
    setpriv: PathBuf,
    /// Who the inner bubblewrap and the program run as.
    user: SandboxUser,
    /// The outer view: the inner view plus both programs.
    entries: Vec<Entry>,
    /// Directories the outer step creates (world-readable) before it binds the view.
    dirs: Vec<PathBuf>,
}

/// A probed sandbox: the `bwrap` binary and the read-only view it builds for one
/// interpreter. Built once per runtime; each run only adds its own arguments.
#[derive(Clone, Debug)]
pub(crate) struct Sandbox {
    bwrap: PathBuf,
    entries: Vec<Entry>,
    /// Set when the host runs as root.
    demotion: Option<Demotion>,
    /// The compiled seccomp filters, handed to each run on two pipes.
    seccomp: std::sync::Arc<crate::seccomp::Filters>,
}

impl Sandbox {
    /// Finds `bwrap`, plans the read-only view (`readable`: what the child needs besides the
    /// system's libraries), plans the drop to `user` when the host runs as root, compiles
    /// the seccomp filter and proves the sandbox works by running `probe_argv` inside it.
    ///
    /// # Errors
    ///
    /// [`ContractError::Unconfinable`] naming what is missing.
    pub(crate) fn probe(
        bwrap: &Path,
        readable: &[PathBuf],
        probe_argv: &[OsString],
        user: SandboxUser,
    ) -> Result<Sandbox, ContractError> {
        let unconfinable = |missing: String| ContractError::Unconfinable { missing };
        let Some(bwrap) = find_program(bwrap) else {
            return Err(unconfinable(format!(
                "bubblewrap (`{}`) was not found on PATH; install the `bubblewrap` package",
                bwrap.display()
            )));
        };
        let bwrap = std::fs::canonicalize(&bwrap).unwrap_or(bwrap);
        if user.uid == 0 || user.gid == 0 {
            return Err(unconfinable(
                "the sandbox user must not be root (uid and gid must be non-zero)".to_owned(),
            ));
        }
        let seccomp = crate::seccomp::compile().map_err(unconfinable)?;
        let demotion = if nix::unistd::geteuid().is_root() {
            let Some(setpriv) = find_program(Path::new("setpriv")) else {
                return Err(unconfinable(
                    "the host runs as root and `setpriv` (util-linux), which drops the sandbox to an unprivileged user, was not found".to_owned(),
                ));
            };
            let setpriv = std::fs::canonicalize(&setpriv).unwrap_or(setpriv);
            let mut outer: Vec<PathBuf> = readable.to_vec();
            outer.push(bwrap.clone());
            outer.push(setpriv.clone());
            let entries = plan(&outer);
            let dirs = ancestors(&entries);
            Some(Demotion {
                setpriv,
                user,
                entries,
                dirs,
            })
        } else {
            None
        };
        let sandbox = Sandbox {
            bwrap,
            entries: plan(readable),
            demotion,
            seccomp: std::sync::Arc::new(seccomp),
        };
        let mut command = StdCommand::new(&sandbox.bwrap);
        let seccomp_fds = sandbox.seccomp_fds().map_err(|e| {
            unconfinable(format!("the seccomp filter could not be handed over: {e}"))
        })?;
        command
            .args(sandbox.args(0, false))
            .args(probe_argv)
            .env_clear()
            .env("PATH", CHILD_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        {
            use command_fds::CommandFdExt;
            command
                .fd_mappings(seccomp_fds)
                .map_err(|e| unconfinable(format!("fd mapping: {e}")))?;
        }
        let output = command.output().map_err(|e| {
            unconfinable(format!(
                "bubblewrap (`{}`) could not start: {e}",
                sandbox.bwrap.display()
            ))
        })?;
        drop(command);
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr);
            let said = said.trim();
            return Err(unconfinable(format!(
                "the sandbox could not be built ({}): {}",
                output.status,
                if said.is_empty() {
                    "bubblewrap said nothing; unprivileged user, pid and network namespaces are required"
                } else {
                    said
                }
            )));
        }
        Ok(sandbox)
    }

    /// The `bwrap` binary.
    pub(crate) fn program(&self) -> &Path {
        &self.bwrap
    }

    /// Two pipes whose read ends, mapped to [`SECCOMP_FD`] and [`CLONE3_FD`], hold the
    /// filters. The filters are small (well under a pipe's buffer), so each is written
    /// whole and its write end closed before the child starts.
    pub(crate) fn seccomp_fds(&self) -> std::io::Result<Vec<command_fds::FdMapping>> {
        use std::io::Write;
        let mut mappings = Vec::with_capacity(2);
        for (bytes, child_fd) in [
            (&self.seccomp.deny, SECCOMP_FD),
            (&self.seccomp.no_clone3, CLONE3_FD),
        ] {
            let (reader, mut writer) = std::io::pipe()?;
            writer.write_all(bytes)?;
            drop(writer);
            mappings.push(command_fds::FdMapping {
                parent_fd: std::os::fd::OwnedFd::from(reader),
                child_fd,
            });
        }
        Ok(mappings)
    }

    /// The arguments before the sandboxed command (`--` included): `scratch_bytes` is the
    /// size of the private `/tmp` (none when 0), `info_fd` asks bubblewrap to report the
    /// program's host pid on [`INFO_FD`]. Run by root, the arguments are the outer step's,
    /// `setpriv`'s and the inner bubblewrap's.
    pub(crate) fn args(&self, scratch_bytes: u64, info_fd: bool) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::with_capacity(96);
        if let Some(demotion) = &self.demotion {
            args.push("--die-with-parent".into());
            for dir in &demotion.dirs {
                args.extend(["--perms", "0755", "--dir"].map(OsString::from));
                args.push(dir.clone().into());
            }
            push_entries(&mut args, &demotion.entries);
            // The inner bubblewrap writes its uid map and mounts its own /proc through the
            // host's; a fresh procfs here would make the kernel refuse the inner one.
            args.extend(["--bind", "/proc", "/proc", "--dev", "/dev"].map(OsString::from));
            // Where the inner bubblewrap mounts its new root.
            args.extend(["--perms", "0755", "--dir", "/tmp"].map(OsString::from));
            args.extend(["--remount-ro", "/", "--"].map(OsString::from));
            args.push(demotion.setpriv.clone().into());
            args.push(format!("--reuid={}", demotion.user.uid).into());
            args.push(format!("--regid={}", demotion.user.gid).into());
            args.extend(["--clear-groups", "--"].map(OsString::from));
            args.push(self.bwrap.clone().into());
        }
        args.extend(
            [
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
            .map(OsString::from),
        );
        push_entries(&mut args, &self.entries);
        args.extend(["--dev", "/dev", "--proc", "/proc"].map(OsString::from));
        for entry in READ_ONLY_PROC {
            args.extend(["--ro-bind-try", entry, entry].map(OsString::from));
        }
        if scratch_bytes > 0 {
            args.extend(["--size".into(), scratch_bytes.to_string().into()]);
            args.extend(["--tmpfs", SCRATCH_MOUNT, "--chdir", SCRATCH_MOUNT].map(OsString::from));
        } else {
            args.extend(["--chdir", "/"].map(OsString::from));
        }
        // The root bubblewrap builds and its /dev are in-memory file systems: read-only, so
        // nothing outside the sized scratch can grow the host's memory.
        args.extend(["--remount-ro", "/", "--remount-ro", "/dev"].map(OsString::from));
        args.push("--add-seccomp-fd".into());
        args.push(SECCOMP_FD.to_string().into());
        args.push("--add-seccomp-fd".into());
        args.push(CLONE3_FD.to_string().into());
        if info_fd {
            args.push("--info-fd".into());
            args.push(INFO_FD.to_string().into());
        }
        args.push("--".into());
        args
    }
}

/// Appends the binds and links of `entries`.
fn push_entries(args: &mut Vec<OsString>, entries: &[Entry]) {
    for entry in entries {
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
}

/// Every directory above a bound path or a link (not `/`), parents first: the outer step
/// creates them world-readable, so that the unprivileged inner step can reach the binds.
fn ancestors(entries: &[Entry]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = match entry {
            Entry::Bind(path) => path,
            Entry::Symlink { at, .. } => at,
        };
        let mut parent = path.parent();
        while let Some(dir) = parent {
            if dir != Path::new("/") && !dir.as_os_str().is_empty() {
                dirs.push(dir.to_path_buf());
            }
            parent = dir.parent();
        }
    }
    dirs.sort();
    dirs.dedup();
    // A directory that is itself bound is not created.
    dirs.retain(|dir| {
        !entries
            .iter()
            .any(|e| matches!(e, Entry::Bind(path) if dir.starts_with(path)))
    });
    dirs
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
    fn ancestors_are_created_parents_first_and_never_inside_a_bind() {
        let entries = vec![
            Entry::Bind(PathBuf::from("/root/.pyenv/versions/3.11")),
            Entry::Bind(PathBuf::from("/usr/lib")),
            Entry::Symlink {
                target: PathBuf::from("usr/lib"),
                at: PathBuf::from("/lib"),
            },
        ];
        assert_eq!(
            ancestors(&entries),
            ["/root", "/root/.pyenv", "/root/.pyenv/versions", "/usr"]
                .map(PathBuf::from)
                .to_vec()
        );
    }

    #[test]
    fn a_root_host_drops_before_the_inner_sandbox() {
        let entries = plan(&[]);
        let sandbox = Sandbox {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            demotion: Some(Demotion {
                setpriv: PathBuf::from("/usr/bin/setpriv"),
                user: SandboxUser {
                    uid: 1234,
                    gid: 5678,
                },
                dirs: ancestors(&entries),
                entries: entries.clone(),
            }),
            entries,
            seccomp: std::sync::Arc::new(crate::seccomp::compile().unwrap()),
        };
        let args: Vec<String> = sandbox
            .args(0, true)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let setpriv = args.iter().position(|a| a == "/usr/bin/setpriv").unwrap();
        let unshare = args.iter().position(|a| a == "--unshare-user").unwrap();
        // The outer step shares no namespace but the mount one, and holds no user code.
        assert!(setpriv < unshare);
        assert_eq!(args[setpriv + 1], "--reuid=1234");
        assert_eq!(args[setpriv + 2], "--regid=5678");
        assert_eq!(args[setpriv + 3], "--clear-groups");
        assert_eq!(args[setpriv + 5], "/usr/bin/bwrap");
        // The inner step binds /proc/sys read-only and installs both filters.
        let inner = &args[unshare..];
        assert!(
            inner
                .windows(3)
                .any(|w| w == ["--ro-bind-try", "/proc/sys", "/proc/sys"])
        );
        assert_eq!(inner.iter().filter(|a| *a == "--add-seccomp-fd").count(), 2);
        assert_eq!(args.iter().filter(|a| *a == "--").count(), 3);
    }

    #[test]
    fn root_is_refused_as_the_sandbox_user() {
        let err = Sandbox::probe(
            Path::new("/bin/true"),
            &[],
            &[],
            SandboxUser { uid: 0, gid: 10 },
        )
        .unwrap_err();
        assert!(err.to_string().contains("must not be root"), "{err}");
    }

    #[test]
    fn the_args_end_with_the_separator() {
        let sandbox = Sandbox {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            entries: plan(&[]),
            demotion: None,
            seccomp: std::sync::Arc::new(crate::seccomp::compile().unwrap()),
        };
        let args = sandbox.args(0, true);
        assert_eq!(args.last().map(|a| a.as_os_str()), Some("--".as_ref()));
        assert!(args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--as-pid-1"));
    }

    #[test]
    fn a_missing_bwrap_is_named() {
        let err = Sandbox::probe(
            Path::new("/nonexistent/bwrap"),
            &[],
            &[],
            SandboxUser::NOBODY,
        )
        .unwrap_err();
        assert!(err.to_string().contains("bubblewrap"), "{err}");
    }
}
