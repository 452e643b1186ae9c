//! The child of one run: how it is started (bubblewrap around it when sandboxed), its frame
//! channel, the meter of its busy time, and the kill of its process group.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Stdio;

use command_fds::{CommandFdExt, FdMapping};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::process::{Child, Command};

use crate::sandbox::{CHILD_PATH, INFO_FD, Isolation, Sandbox};

/// How the child of a run receives and sends frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Transport {
    /// A socketpair end as the child's fd 3; its stdout and stderr are stray output.
    Fd3,
    /// The child's stdin and stdout; its stderr is stray output.
    #[cfg_attr(not(feature = "quickjs-process"), allow(dead_code))]
    Stdio,
}

/// What every run of one runtime starts: resolved and probed once.
#[derive(Debug)]
pub(super) struct Launch {
    /// The child program (the interpreter's or the worker's real executable).
    pub(super) executable: PathBuf,
    /// Its arguments.
    pub(super) args: Vec<std::ffi::OsString>,
    /// How frames cross.
    pub(super) transport: Transport,
    /// The confinement, as reported by the runtime.
    pub(super) isolation: Isolation,
    /// The probed sandbox, unless unconfined.
    pub(super) sandbox: Option<Sandbox>,
    /// The size of the private `/tmp` (none when 0).
    pub(super) scratch_bytes: u64,
    /// What the child gets beyond the run's limits.
    pub(super) allowance: crate::frames::Allowance,
}

/// Kills the run's process group when dropped (also when the run future is dropped).
pub(super) struct GroupKiller(pub(super) Option<Pid>);

impl GroupKiller {
    pub(super) fn kill(&mut self) {
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

/// Reads from an optional stream; pending forever when there is none, `None` at the end.
pub(super) async fn read_some(
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

/// The read end of bubblewrap's `--info-fd` pipe.
pub(super) type InfoPipe = tokio::net::unix::pipe::Receiver;

/// The program's own process, whose busy time is metered.
pub(super) enum Process {
    /// Its pid (unconfined: the child itself; `None` once reaped).
    Known(Option<u32>),
    /// Sandboxed: bubblewrap reports it on the info pipe, read until the report is whole.
    Reported(InfoPipe, Vec<u8>),
}

impl Process {
    pub(super) fn pid(&self) -> Option<u32> {
        match self {
            Process::Known(pid) => *pid,
            Process::Reported(..) => None,
        }
    }

    /// Reads the info pipe; pending forever once the pid is known.
    pub(super) async fn read_info(&mut self, buffer: &mut [u8]) -> Option<usize> {
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
    pub(super) fn feed_info(&mut self, bytes: Option<&[u8]>) {
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
pub(super) type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The host's end of the frame channel: what it writes.
pub(super) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// A started child, its frame channel and, sandboxed, bubblewrap's info pipe.
pub(super) type Spawned = (Child, (Reader, Writer), Option<InfoPipe>);

/// Starts the child (bubblewrap around it when sandboxed, with the info pipe as its fd 4)
/// and opens the frame channel of its transport.
pub(super) fn spawn(launch: &Launch) -> Result<Spawned, String> {
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
            mappings.extend(
                sandbox
                    .seccomp_fds()
                    .map_err(|e| format!("seccomp filter pipe: {e}"))?,
            );
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
