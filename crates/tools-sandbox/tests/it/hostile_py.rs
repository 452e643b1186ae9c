//! Hostile Python programs against the sandboxed Python runtime: files, network, signals,
//! processes that try to outlive the run, resource floods and fd-3 forgery. Every program
//! runs inside the sandbox it tests (each test first checks the runtime is sandboxed), and
//! every program that sends a signal first checks that it is pid 1 of its own namespace, so
//! a broken sandbox fails the test instead of reaching the host. Network probes target only
//! listeners these tests start on loopback.
//!
//! Replay any of them with `cargo run -p tools-codemode --example run_code -- --lang python FILE`.

use std::time::Duration;

use tools_codemode::{CodeRunResult, CodeRuntime, RuntimeLimits};
use tools_sandbox::{Isolation, PythonOptions, PythonRuntime};

use tools_codemode::testing::{failure, run, success};

/// A sandboxed runtime with generous budgets (kinds are asserted, never timings).
fn sandboxed(limits: RuntimeLimits, scratch_bytes: u64) -> PythonRuntime {
    let runtime = PythonRuntime::with_options(
        limits,
        PythonOptions::default().scratch_bytes(scratch_bytes),
    )
    .unwrap();
    assert_eq!(runtime.isolation(), Isolation::Sandbox.label());
    runtime
}

fn limits() -> RuntimeLimits {
    RuntimeLimits {
        compute: Duration::from_secs(10),
        wall: Duration::from_secs(60),
        ..RuntimeLimits::default()
    }
}

async fn go(program: &str) -> CodeRunResult {
    run(&sandboxed(limits(), 0), program).await.0
}

/// Asserts the run failed with `kind` and a message containing `fragment`.
fn fails(result: &CodeRunResult, kind: &str, fragment: &str) {
    let (got, message) = failure(result).unwrap_or_else(|| {
        panic!(
            "expected {kind}, the run succeeded with {:?}",
            result.value.as_ref().map(|v| v.to_string())
        )
    });
    assert_eq!(got, kind, "{message}");
    assert!(message.contains(fragment), "{kind}: {message}");
}

/// The guard every signalling program starts with.
const PID1_GUARD: &str = "import os, signal\nif os.getpid() != 1:\n    raise SystemExit('not sandboxed: refusing to signal')\n";

// --- files ---------------------------------------------------------------------------

#[tokio::test]
async fn host_files_are_not_there() {
    let program = r#"
out = {}
for path in ["/etc/passwd", "/etc/shadow", "/root/.bashrc", "/home", "/var/log", "/proc/1/root/etc/passwd"]:
    try:
        open(path).read()
        out[path] = "read"
    except OSError as e:
        out[path] = type(e).__name__
return out
"#;
    let value = success(&go(program).await);
    assert!(!value.contains("\"read\""), "{value}");
    assert!(value.contains("FileNotFoundError"), "{value}");
}

#[tokio::test]
async fn the_root_holds_only_the_sandbox_view() {
    let value = success(&go("import os\nreturn sorted(os.listdir('/'))").await);
    for absent in ["home", "root", "var", "work", "srv", "opt", "mnt"] {
        assert!(!value.contains(&format!("\"{absent}\"")), "{value}");
    }
    let etc = success(&go("import os\nreturn sorted(os.listdir('/etc'))").await);
    assert_eq!(etc, r#"["ld.so.cache"]"#);
}

#[tokio::test]
async fn nothing_is_writable_without_scratch() {
    let program = r#"
import os, sys
out = []
for path in ["/tmp/x", "/x", sys.prefix + "/x", os.path.dirname(os.__file__) + "/x", "/dev/shm/x", "/proc/x"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        out.append("wrote " + path)
    except OSError as e:
        out.append(type(e).__name__)
return out
"#;
    let value = success(&go(program).await);
    assert!(!value.contains("wrote"), "{value}");
}

#[tokio::test]
async fn the_scratch_directory_is_private_writable_and_fresh() {
    let runtime = sandboxed(limits(), 1 << 20);
    let program = r#"
import os
fresh = os.listdir(".")
with open("note.txt", "w") as f:
    f.write("hello")
try:
    with open("big", "wb") as f:
        f.write(b"x" * (2 << 20))
    full = False
except OSError:
    full = True
os.remove("big")
os.symlink("/etc/passwd", "link")
try:
    open("link").read()
    escaped = True
except OSError:
    escaped = False
return {"cwd": os.getcwd(), "fresh": fresh, "read": open("/tmp/note.txt").read(), "escaped": escaped, "full": full}
"#;
    let first = success(&run(&runtime, program).await.0);
    assert_eq!(
        first,
        r#"{"cwd":"/tmp","fresh":[],"read":"hello","escaped":false,"full":true}"#
    );
    // The next run starts from an empty directory again: the previous one was removed.
    let second = success(&run(&runtime, program).await.0);
    assert_eq!(first, second);
}

#[tokio::test]
async fn devices_are_the_minimal_set() {
    let program = r#"
import os
out = {"urandom": len(open("/dev/urandom", "rb").read(8)), "null": open("/dev/null").read()}
for dev in ["/dev/sda", "/dev/vda", "/dev/mem", "/dev/kmsg", "/dev/kvm"]:
    out[dev] = os.path.exists(dev)
return out
"#;
    assert_eq!(
        success(&go(program).await),
        r#"{"urandom":8,"null":"","/dev/sda":false,"/dev/vda":false,"/dev/mem":false,"/dev/kmsg":false,"/dev/kvm":false}"#
    );
}

#[tokio::test]
async fn host_processes_are_invisible_in_proc() {
    let host = std::process::id();
    let program = format!(
        "import os\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\nreturn {{'host_visible': os.path.exists('/proc/{host}/cmdline') and {host} != 1, 'pids': pids[:3]}}"
    );
    assert_eq!(
        success(&go(&program).await),
        r#"{"host_visible":false,"pids":[1]}"#
    );
}

// --- network -------------------------------------------------------------------------

#[tokio::test]
async fn tcp_to_a_host_listener_on_loopback_fails() {
    let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = v4.local_addr().unwrap().port();
    v4.set_nonblocking(true).unwrap();
    let program = format!(
        r#"
import socket
out = []
for host in ["127.0.0.1", "::1", "localhost"]:
    try:
        socket.create_connection((host, {port}), timeout=5).close()
        out.append("connected")
    except OSError as e:
        out.append(type(e).__name__)
return out
"#
    );
    let value = success(&go(&program).await);
    assert!(!value.contains("connected"), "{value}");
    // Nothing reached the listener: the run is over, so a connection would be queued.
    assert!(v4.accept().is_err());
}

#[tokio::test]
async fn udp_to_a_host_socket_never_arrives() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let port = socket.local_addr().unwrap().port();
    let program = format!(
        r#"
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = 0
for _ in range(20):
    try:
        s.sendto(b"escape", ("127.0.0.1", {port}))
        sent += 1
    except OSError:
        pass
return "done"
"#
    );
    assert_eq!(success(&go(&program).await), "\"done\"");
    let mut buffer = [0u8; 64];
    // The datagrams went to the sandbox's own loopback, so none is queued here.
    assert!(socket.recv_from(&mut buffer).is_err());
}

#[tokio::test]
async fn a_host_unix_socket_is_out_of_reach() {
    let dir = std::env::temp_dir().join(format!("hostile-py-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host.sock");
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let program = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    return 'connected'\nexcept OSError as e:\n    return type(e).__name__",
        path.display().to_string()
    );
    assert_eq!(success(&go(&program).await), "\"FileNotFoundError\"");
    assert!(listener.accept().is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn raw_and_netlink_sockets_are_refused() {
    let program = r#"
import socket
out = []
for family, kind, proto in [(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), (socket.AF_PACKET, socket.SOCK_RAW, 0)]:
    try:
        socket.socket(family, kind, proto)
        out.append("opened")
    except OSError as e:
        out.append(type(e).__name__)
return out
"#;
    let value = success(&go(program).await);
    assert!(!value.contains("opened"), "{value}");
}

#[tokio::test]
async fn name_resolution_finds_nothing() {
    let program = "import socket\ntry:\n    return socket.getaddrinfo('example.com', 80)[0][4][0]\nexcept OSError as e:\n    return type(e).__name__";
    assert_eq!(success(&go(program).await), "\"gaierror\"");
}

// --- signals and processes -------------------------------------------------------------

#[tokio::test]
async fn signalling_the_parent_reaches_nothing_outside() {
    // In its own pid namespace the program's parent is pid 0 (outside, invisible): the
    // signal can only reach the program's own session.
    let program = format!(
        "{PID1_GUARD}ppid = os.getppid()\ntry:\n    os.kill(ppid, signal.SIGTERM)\nexcept OSError as e:\n    return type(e).__name__\nreturn {{'ppid': ppid}}"
    );
    let result = go(&program).await;
    // Whatever the program did to itself, the host (this test) is alive and the run settled.
    if let Some((kind, message)) = failure(&result) {
        assert!(
            kind == "worker-exit" || kind == "exception",
            "{kind}: {message}"
        );
    } else {
        assert_eq!(success(&result), r#"{"ppid":0}"#);
    }
}

#[tokio::test]
async fn the_host_pid_does_not_exist_inside() {
    let host = std::process::id();
    // Signal 0 only checks existence; it cannot harm even a broken sandbox.
    let program = format!(
        "{PID1_GUARD}try:\n    os.kill({host}, 0)\n    return 'visible'\nexcept ProcessLookupError:\n    return 'invisible'"
    );
    let expected = if host == 1 {
        "\"visible\""
    } else {
        "\"invisible\""
    };
    assert_eq!(success(&go(&program).await), expected);
}

#[tokio::test]
async fn killing_its_own_init_ends_only_the_run() {
    let program = format!("{PID1_GUARD}os.kill(1, signal.SIGKILL)\nreturn 'still here'");
    let result = go(&program).await;
    // pid 1 ignores signals from inside its namespace; either way the host goes on.
    match failure(&result) {
        Some((kind, _)) => assert_eq!(kind, "worker-exit"),
        None => assert_eq!(success(&result), "\"still here\""),
    }
}

/// A marker no other process on the machine has in its command line.
fn marker(tag: &str) -> String {
    format!(
        "hostile-py-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    )
    .replace(['(', ')'], "")
}

/// Whether any process on the machine carries `marker` in its command line (read only).
fn survivors(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(name.to_string_lossy().into_owned());
        }
    }
    found
}

#[tokio::test]
async fn a_new_session_child_dies_with_the_run() {
    let tag = marker("setsid");
    let program = format!(
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', '{tag}'], start_new_session=True)\nreturn 'spawned'"
    );
    assert_eq!(success(&go(&program).await), "\"spawned\"");
    assert_eq!(survivors(&tag), Vec::<String>::new());
}

#[tokio::test]
async fn a_double_forked_daemon_dies_with_the_run() {
    let tag = marker("daemon");
    let program = format!(
        r#"
import os, sys
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "{tag}"])
    os._exit(0)
os.waitpid(pid, 0)
return "daemonized"
"#
    );
    assert_eq!(success(&go(&program).await), "\"daemonized\"");
    assert_eq!(survivors(&tag), Vec::<String>::new());
}

#[tokio::test]
async fn children_of_an_aborted_run_die_too() {
    let tag = marker("abort");
    let runtime = sandboxed(limits(), 0);
    let host = tools_codemode::testing::Host::new();
    let request = tools_codemode::CodeRunRequest::new(
        format!(
            "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', '{tag}'], start_new_session=True)\nawait tools.cancel({{}})"
        ),
        tools_codemode::testing::tools(),
        host.clone(),
    )
    .with_cancel(host.cancel.clone());
    let result = runtime.run(request).await.unwrap();
    fails(&result, "abort", "run aborted");
    assert_eq!(survivors(&tag), Vec::<String>::new());
}

#[tokio::test]
async fn namespaces_mounts_and_chroot_are_refused() {
    let program = r#"
import ctypes, ctypes.util, os
libc = ctypes.CDLL(None, use_errno=True)
out = {}
out["unshare_user"] = libc.unshare(0x10000000)
out["unshare_net"] = libc.unshare(0x40000000)
out["mount"] = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
out["chroot"] = libc.chroot(b"/usr")
try:
    os.setuid(0)
    out["setuid"] = 0
except OSError:
    out["setuid"] = -1
return out
"#;
    let value = success(&go(program).await);
    assert!(value.contains(r#""unshare_user":-1"#), "{value}");
    assert!(value.contains(r#""unshare_net":-1"#), "{value}");
    assert!(value.contains(r#""mount":-1"#), "{value}");
    assert!(value.contains(r#""chroot":-1"#), "{value}");
}

#[tokio::test]
async fn the_environment_and_host_name_say_nothing_of_the_host() {
    // LC_CTYPE is the interpreter's own locale coercion (PEP 538), not the host's.
    let program = "import os, socket\nreturn {'env': {k: v for k, v in os.environ.items() if k != 'LC_CTYPE'}, 'host': socket.gethostname()}";
    assert_eq!(
        success(&go(program).await),
        r#"{"env":{"PATH":"/usr/local/bin:/usr/bin:/bin"},"host":"sandbox"}"#
    );
}

// --- budgets ---------------------------------------------------------------------------

fn budget(compute_ms: u64) -> PythonRuntime {
    sandboxed(
        RuntimeLimits {
            compute: Duration::from_millis(compute_ms),
            wall: Duration::from_secs(60),
            ..RuntimeLimits::default()
        },
        0,
    )
}

#[tokio::test]
async fn a_hot_loop_ends_at_its_compute_budget() {
    let result = run(&budget(300), "while True:\n    pass").await.0;
    fails(&result, "timeout", "compute budget exhausted (300ms busy)");
}

#[tokio::test]
async fn ignoring_sigxcpu_does_not_help() {
    let program =
        "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass";
    fails(
        &run(&budget(300), program).await.0,
        "timeout",
        "compute budget",
    );
}

#[tokio::test]
async fn a_spinning_thread_counts_as_busy_time() {
    let program = "import threading, time\ndef spin():\n    while True:\n        pass\nthreading.Thread(target=spin, daemon=True).start()\nwhile True:\n    time.sleep(0.001)";
    fails(
        &run(&budget(300), program).await.0,
        "timeout",
        "compute budget",
    );
}

#[tokio::test]
async fn raising_the_memory_limit_is_refused() {
    let program = "import resource\ntry:\n    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n    return 'raised'\nexcept ValueError:\n    return 'refused'";
    assert_eq!(success(&go(program).await), "\"refused\"");
}

#[tokio::test]
async fn a_memory_bomb_hits_the_cap() {
    let runtime = sandboxed(
        RuntimeLimits {
            memory_bytes: 64 * 1024 * 1024,
            ..limits()
        },
        0,
    );
    let result = run(&runtime, "x = bytearray(1 << 34)\nreturn len(x)")
        .await
        .0;
    fails(&result, "exception", "MemoryError");
    // Catching it does not lift the cap: the next big allocation fails again.
    let program = "out = []\nfor _ in range(3):\n    try:\n        bytearray(1 << 34)\n        out.append('allocated')\n    except MemoryError:\n        out.append('refused')\nreturn out";
    assert_eq!(
        success(&run(&runtime, program).await.0),
        r#"["refused","refused","refused"]"#
    );
}

// --- output and fd 3 -------------------------------------------------------------------

fn capped(max_output_bytes: usize) -> PythonRuntime {
    sandboxed(
        RuntimeLimits {
            max_output_bytes,
            ..limits()
        },
        0,
    )
}

#[tokio::test]
async fn a_print_flood_is_an_output_limit() {
    let result = run(&capped(1 << 20), "while True:\n    print('x' * 1000)")
        .await
        .0;
    fails(&result, "output-limit", "");
}

#[tokio::test]
async fn a_stray_stdout_flood_is_an_output_limit() {
    let program = "import os\nwhile True:\n    os.write(1, b'y' * 65536)";
    fails(&run(&capped(1 << 20), program).await.0, "output-limit", "");
}

#[tokio::test]
async fn a_huge_fd3_line_without_newline_is_an_output_limit() {
    // 70 MiB with no newline against the default 64 MiB cap: refused once the line is
    // longer than the cap, not at the wall-clock ceiling.
    let program = "import os\nchunk = b'z' * (1 << 20)\nfor _ in range(70):\n    os.write(3, chunk)\nwhile True:\n    pass";
    let runtime = sandboxed(
        RuntimeLimits {
            compute: Duration::from_secs(30),
            wall: Duration::from_secs(120),
            ..RuntimeLimits::default()
        },
        0,
    );
    fails(&run(&runtime, program).await.0, "output-limit", "");
}

#[tokio::test]
async fn a_huge_fd3_frame_is_an_output_limit() {
    let program = "import os\nos.write(3, b'{\"type\":\"log\",\"text\":\"' + b'w' * (64 << 20) + b'\"}\\n')\nreturn 1";
    fails(&run(&capped(1 << 20), program).await.0, "output-limit", "");
}

#[tokio::test]
async fn forged_frames_are_checked_like_any_other() {
    let program = r#"
import os
os.write(3, b'not json\n')
os.write(3, b'\xff\xfe\n')
os.write(3, b'{"type":"call","id":999,"global":"os","name":"system","args":{}}\n')
os.write(3, b'{"type":"boot-ack"}\n')
os.write(3, b'{"type":"reply","id":1,"ok":true,"value":1}\n')
r = await tools.echo({"a": 1})
return r
"#;
    let (result, host) = run(&sandboxed(limits(), 0), program).await;
    assert_eq!(success(&result), r#"{"echoed":{"a":1}}"#);
    // Only the declared binding was called, once.
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn closing_the_channel_ends_the_run_as_a_worker_exit() {
    fails(
        &go("import os\nos.close(3)\nreturn 1").await,
        "worker-exit",
        "",
    );
}

#[tokio::test]
async fn a_large_tool_argument_crosses_in_linear_time() {
    // 50 MB each way; the wall-clock ceiling stays generous, the kind is what is asserted.
    let program = "r = await tools.identity({'s': 'q' * 50_000_000})\nreturn len(r['s'])";
    assert_eq!(success(&go(program).await), "50000000");
}

#[tokio::test]
async fn a_deeply_nested_argument_is_refused_in_the_sandbox() {
    let program = "x = []\nfor _ in range(200_000):\n    x = [x]\ntry:\n    await tools.echo(x)\n    return 'dispatched'\nexcept ToolCallError as e:\n    return str(e).split(':')[0]";
    let (result, host) = run(&sandboxed(limits(), 0), program).await;
    assert_eq!(
        success(&result),
        "\"binding arguments must be lossless JSON\""
    );
    assert!(host.calls().is_empty());
}

#[tokio::test]
async fn a_too_deep_result_names_the_limit_and_the_side() {
    let program = "x = []\nfor _ in range(600):\n    x = [x]\nreturn x";
    fails(
        &go(program).await,
        "invalid-output",
        "program result nesting exceeds the depth limit of 512",
    );
}

#[tokio::test]
async fn a_virtual_environment_stays_itself_in_the_sandbox() {
    let dir = std::env::temp_dir().join(format!("hostile-py-venv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(made.success());
    let runtime = PythonRuntime::with_options(
        limits(),
        PythonOptions::default().interpreter(dir.join("bin").join("python")),
    )
    .unwrap();
    assert_eq!(runtime.executable(), dir.join("bin").join("python"));
    let program = "import sys\nreturn [sys.prefix != sys.base_prefix, sys.prefix]";
    let value = success(&run(&runtime, program).await.0);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(value, format!("[true,{:?}]", dir.display().to_string()));
}
