//! Hostile Python programs aimed at what a sandbox started by root could leak: host-wide
//! kernel settings, the host uid, kernel interfaces outside the namespaces, and resources
//! that per-process limits do not hold (memfd pages, children's memory and CPU, process
//! count). Each program runs inside the sandbox it tests; CI runs them as root, where the
//! escapes were found. Probes of `/proc/sys` open for writing and never write; the fork
//! tests run under the process limit the test gives the runtime.

use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, RuntimeLimits};
use tools_sandbox::{Isolation, PythonOptions, PythonRuntime, SandboxUser};

use tools_codemode::testing::{Host, failure, run, success, tools};

fn limits() -> RuntimeLimits {
    RuntimeLimits {
        compute: Duration::from_secs(10),
        wall: Duration::from_secs(60),
        ..RuntimeLimits::default()
    }
}

fn sandboxed(limits: RuntimeLimits, options: PythonOptions) -> PythonRuntime {
    let runtime = PythonRuntime::with_options(limits, options).unwrap();
    assert_eq!(runtime.isolation(), Isolation::Sandbox.label());
    runtime
}

fn fails(result: &tools_codemode::CodeRunResult, kind: &str, fragment: &str) {
    let Some((got, message)) = failure(result) else {
        panic!("expected {kind}, the run succeeded with {:?}", result.value);
    };
    assert_eq!(got, kind, "{message}");
    assert!(message.contains(fragment), "{kind}: {message}");
}

#[tokio::test]
async fn no_file_under_proc_sys_opens_for_writing() {
    // Every regular file under /proc/sys, and the other global entries, opened for writing
    // and closed at once: nothing is ever written.
    let program = r#"
import os
opened, tried = [], 0
paths = ["/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sys/fs/file-max"]
for root, dirs, files in os.walk("/proc/sys"):
    for name in files:
        paths.append(os.path.join(root, name))
for path in paths:
    tried += 1
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        continue
    os.close(fd)
    opened.append(path)
return {"tried": tried, "opened": opened}
"#;
    let value = success(
        &run(&sandboxed(limits(), PythonOptions::default()), program)
            .await
            .0,
    );
    let parsed: serde_json::Value = serde_json::from_str(&value).unwrap();
    assert!(parsed["tried"].as_u64().unwrap() > 100, "{value}");
    assert_eq!(parsed["opened"], serde_json::json!([]), "{value}");
}

/// The host uid and gid of every process whose name (`comm`) is `marker`.
fn host_ids(marker: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else {
            continue;
        };
        if comm.trim_end() != marker {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        found.push((field("Uid:"), field("Gid:")));
    }
    found
}

#[tokio::test]
async fn the_program_runs_as_an_unprivileged_host_user() {
    // A process name (15 bytes at most) no other process has.
    let marker = format!("hr{}", std::process::id() % 1_000_000_000);
    let runtime = sandboxed(
        limits(),
        PythonOptions::default().sandbox_user(SandboxUser {
            uid: 4242,
            gid: 4343,
        }),
    );
    let host = Host::new();
    // The program names its own process with the marker (`prctl(PR_SET_NAME)`), says so,
    // and waits; the test reads that process's host credentials, then ends the run.
    let request = CodeRunRequest::new(
        format!(
            "import ctypes
ctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)
await tools.started({{}})
await tools.never({{}})"
        ),
        tools(),
        host.clone(),
    )
    .with_cancel(host.cancel.clone());
    let started = host.started.notified();
    let run = tokio::spawn(async move { runtime.run(request).await });
    started.await;
    let ids = host_ids(&marker);
    host.cancel.cancel();
    let result = run.await;
    assert_eq!(ids.len(), 1, "{ids:?} {result:?}");
    let (uid, gid) = &ids[0];
    if nix::unistd::geteuid().is_root() {
        assert_eq!(uid, "4242 4242 4242 4242");
        assert_eq!(gid, "4343 4343 4343 4343");
    } else {
        let own = nix::unistd::getuid().as_raw().to_string();
        assert!(uid.split(' ').all(|u| u == own), "{uid}");
    }
}

#[tokio::test]
async fn seccomp_refuses_what_no_runtime_needs() {
    let program = r#"
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
calls = {
    "x86_64": {"ptrace": 101, "keyctl": 250, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
               "io_uring_setup": 425, "memfd_create": 319, "shmget": 29, "msgget": 68, "setns": 308,
               "open_by_handle_at": 304, "add_key": 248, "unshare": 272, "clone3": 435},
    "aarch64": {"ptrace": 117, "keyctl": 219, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                "io_uring_setup": 425, "memfd_create": 279, "shmget": 194, "msgget": 186, "setns": 268,
                "open_by_handle_at": 265, "add_key": 217, "unshare": 97, "clone3": 435},
}[platform.machine()]
out = {}
for name, number in calls.items():
    ctypes.set_errno(0)
    result = libc.syscall(number, 0, 0, 0, 0, 0, 0)
    out[name] = os.strerror(ctypes.get_errno()) if result == -1 else "allowed"
pid = os.fork()
if pid == 0:
    os._exit(7)
out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
try:
    os.memfd_create("x")
    out["os.memfd_create"] = "allowed"
except OSError as e:
    out["os.memfd_create"] = e.strerror
return out
"#;
    let value = success(
        &run(&sandboxed(limits(), PythonOptions::default()), program)
            .await
            .0,
    );
    let parsed: serde_json::Value = serde_json::from_str(&value).unwrap();
    for name in [
        "ptrace",
        "keyctl",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "io_uring_setup",
        "memfd_create",
        "shmget",
        "msgget",
        "setns",
        "open_by_handle_at",
        "add_key",
        "unshare",
        "os.memfd_create",
    ] {
        assert_eq!(parsed[name], "Operation not permitted", "{name}: {value}");
    }
    assert_eq!(parsed["clone3"], "Function not implemented", "{value}");
    // What the runtimes need still works.
    assert_eq!(parsed["fork"], 7, "{value}");
}

#[tokio::test]
async fn a_fork_bomb_stops_at_the_process_limit() {
    let runtime = sandboxed(limits(), PythonOptions::default().max_processes(8));
    let program = r#"
import os
r, w = os.pipe()
children, refused = 0, None
for _ in range(40):
    try:
        pid = os.fork()
    except OSError as e:
        refused = e.strerror
        break
    if pid == 0:
        os.read(r, 1)
        os._exit(0)
    children += 1
return {"children": children, "refused": refused}
"#;
    let value = success(&run(&runtime, program).await.0);
    let parsed: serde_json::Value = serde_json::from_str(&value).unwrap();
    assert_eq!(
        parsed["refused"], "Resource temporarily unavailable",
        "{value}"
    );
    // The program itself and its reader thread count too.
    assert!(parsed["children"].as_u64().unwrap() < 8, "{value}");
}

#[tokio::test]
async fn children_cannot_multiply_the_memory_cap() {
    // Each child stays under its own address-space limit (64 MiB + the interpreter's
    // allowance), but eight of them together hold far more than one may.
    let runtime = sandboxed(
        RuntimeLimits {
            memory_bytes: 64 << 20,
            ..limits()
        },
        PythonOptions::default().max_processes(16),
    );
    let program = r#"
import os
r, w = os.pipe()
for _ in range(8):
    if os.fork() == 0:
        held = b"m" * (200 << 20)
        os.read(r, 1)
        os._exit(0)
os.read(r, 1)
return "never"
"#;
    fails(
        &run(&runtime, program).await.0,
        "worker-exit",
        "memory cap exceeded",
    );
}

#[tokio::test]
async fn childrens_cpu_counts_against_the_budget() {
    let runtime = sandboxed(
        RuntimeLimits {
            compute: Duration::from_millis(1000),
            wall: Duration::from_secs(60),
            ..RuntimeLimits::default()
        },
        PythonOptions::default().max_processes(16),
    );
    // The program itself sleeps in a read; only its children are busy. Each child's own
    // CPU limit is two seconds, so without the tree's meter the run would end only at the
    // wall-clock ceiling.
    let program = r#"
import os
r, w = os.pipe()
for _ in range(4):
    if os.fork() == 0:
        while True:
            pass
os.read(r, 1)
return "never"
"#;
    fails(
        &run(&runtime, program).await.0,
        "timeout",
        "compute budget exhausted",
    );
}
