//! The confined TypeScript worker (`tools-codemode-worker`) driven by hand over its
//! JSON-Lines protocol: boot, values, logs, binding calls and their rejections, failures,
//! budgets, a host that goes away, and frames that break the protocol. Every wait is
//! bounded, so a worker that hangs fails its test instead of stalling the suite.

use std::future::Future;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The bound of every wait on the worker.
const WAIT: Duration = Duration::from_secs(30);

/// Awaits `future`, failing the test after [`WAIT`].
async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("the worker did not {what} within {WAIT:?}"))
}

/// A boot frame: generous defaults, then `overrides`.
fn boot_frame(overrides: &[(&str, Value)]) -> String {
    let mut frame = json!({
        "type": "boot",
        "cpuSeconds": 20,
        "addressSpaceBytes": 4u64 << 30,
        "maxLogBytes": 1 << 20,
        "maxValueBytes": 1 << 20,
        "maxDepth": 100,
        "namespaces": [{
            "global": "tools",
            "names": ["echo", "fail", "slow"],
            "errorClass": {"name": "ToolCallError", "memberNameProperty": "toolName"}
        }],
        "computeMillis": 10_000,
        "wallMillis": 30_000,
        "memoryBytes": 64 << 20,
        "stackBytes": 1 << 20,
        "maxOutputBytes": 1 << 20,
        "settleGraceMillis": 1000,
    });
    for (key, value) in overrides {
        frame[*key] = value.clone();
    }
    frame.to_string()
}

/// A worker process with its pipes.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Worker {
    fn spawn() -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tools-codemode-worker"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the worker binary starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        Worker {
            child,
            stdin,
            stdout,
        }
    }

    /// A worker that has acknowledged a boot frame with `overrides`.
    async fn booted(overrides: &[(&str, Value)]) -> Worker {
        let mut worker = Worker::spawn();
        worker.send(&boot_frame(overrides)).await;
        assert_eq!(worker.frame().await, json!({"type": "boot-ack"}));
        worker
    }

    /// A worker running `program` with the default limits.
    async fn running(program: &str) -> Worker {
        let mut worker = Worker::booted(&[]).await;
        worker.run(program).await;
        worker
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        within("take a frame", async {
            stdin.write_all(line.as_bytes()).await.unwrap();
            stdin.write_all(b"\n").await.unwrap();
            stdin.flush().await.unwrap();
        })
        .await;
    }

    async fn run(&mut self, program: &str) {
        self.send(&json!({"type": "run", "program": program}).to_string())
            .await;
    }

    /// The next frame; fails on the end of stdout or a line that is not JSON.
    async fn frame(&mut self) -> Value {
        let line = within("write a frame", self.stdout.next_line()).await;
        let line = line.unwrap().expect("a frame, not the end of stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
    }

    /// Everything left on stdout, then the exit status and stderr.
    async fn finish(mut self) -> (Vec<String>, ExitStatus, String) {
        let mut rest = Vec::new();
        while let Some(line) = within("close stdout", self.stdout.next_line())
            .await
            .unwrap()
        {
            rest.push(line);
        }
        let status = within("exit", self.child.wait()).await.unwrap();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            within("close stderr", pipe.read_to_string(&mut stderr))
                .await
                .unwrap();
        }
        (rest, status, stderr)
    }

    /// Expects a clean exit after the frames already read.
    async fn succeeds(self) {
        let (rest, status, stderr) = self.finish().await;
        assert!(rest.is_empty(), "unexpected frames: {rest:?}");
        assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    }
}

/// Reads the `done` frame of a run that logs nothing.
async fn done(worker: &mut Worker) -> Value {
    let frame = worker.frame().await;
    assert_eq!(frame["type"], "done", "{frame}");
    frame
}

#[tokio::test]
async fn a_program_returns_a_value() {
    let mut worker = Worker::running(
        "const n: number = 2;\nreturn { n: n * 21, list: [true, null, 'x'], half: 0.5 };",
    )
    .await;
    assert_eq!(
        done(&mut worker).await,
        json!({"type": "done", "value": {"n": 42, "list": [true, null, "x"], "half": 0.5}})
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn undefined_is_a_done_frame_without_a_value() {
    let mut worker = Worker::running("const x = 1;").await;
    assert_eq!(done(&mut worker).await, json!({"type": "done"}));
    worker.succeeds().await;
}

#[tokio::test]
async fn logs_come_in_order_before_done() {
    let mut worker = Worker::running(
        "console.log('hi', 1, { a: 2 });\nconsole.error('line\\ntwo');\nreturn null;",
    )
    .await;
    assert_eq!(
        worker.frame().await,
        json!({"type": "log", "text": "hi 1 { a: 2 }"})
    );
    assert_eq!(
        worker.frame().await,
        json!({"type": "log", "text": "line\ntwo"})
    );
    assert_eq!(
        done(&mut worker).await,
        json!({"type": "done", "value": null})
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn a_binding_call_is_answered_by_the_host() {
    let mut worker = Worker::running(
        "const first = await tools.echo({ x: 1 });\nconst second = await tools['echo']({ x: first.y });\nreturn [first.y, second.y];",
    )
    .await;
    let call = worker.frame().await;
    assert_eq!(
        call,
        json!({"type": "call", "id": 1, "global": "tools", "name": "echo", "args": {"x": 1}})
    );
    // A reply to an id nobody waits for is ignored.
    worker
        .send(r#"{"type":"reply","id":99,"ok":true,"value":"stray"}"#)
        .await;
    worker
        .send(r#"{"type":"reply","id":1,"ok":true,"value":{"y":41}}"#)
        .await;
    let call = worker.frame().await;
    assert_eq!(
        call,
        json!({"type": "call", "id": 2, "global": "tools", "name": "echo", "args": {"x": 41}})
    );
    // A second reply to an answered id is ignored too.
    worker
        .send(r#"{"type":"reply","id":1,"ok":true,"value":{"y":0}}"#)
        .await;
    worker
        .send(r#"{"type":"reply","id":2,"ok":true,"value":{"y":42}}"#)
        .await;
    assert_eq!(
        done(&mut worker).await,
        json!({"type": "done", "value": [41, 42]})
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn a_rejected_call_is_a_tool_call_error() {
    let mut worker = Worker::running(
        "try {\n  await tools.fail({});\n  return 'resolved';\n} catch (e) {\n  return [e instanceof ToolCallError, e.toolName, e.message];\n}",
    )
    .await;
    let call = worker.frame().await;
    assert_eq!(call["name"], "fail");
    worker
        .send(r#"{"type":"reply","id":1,"ok":false,"message":"nope \"quoted\""}"#)
        .await;
    assert_eq!(
        done(&mut worker).await,
        json!({"type": "done", "value": [true, "fail", "nope \"quoted\""]})
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn a_resolution_deeper_than_the_limit_rejects_the_call() {
    let mut worker = Worker::running(
        "try {\n  return await tools.echo({});\n} catch (e) {\n  return [e.toolName, e.message];\n}",
    )
    .await;
    worker.frame().await;
    let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
    worker
        .send(&format!(
            r#"{{"type":"reply","id":1,"ok":true,"value":{deep}}}"#
        ))
        .await;
    let frame = done(&mut worker).await;
    assert_eq!(frame["value"][0], "echo", "{frame}");
    let message = frame["value"][1].as_str().unwrap();
    assert!(
        message.starts_with("binding resolution must be lossless JSON: ")
            && message.contains("depth limit of 100"),
        "{message}"
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn deep_values_cross_both_ways() {
    // 100 levels each way: the boot frame's limit, written and read without recursion.
    let mut worker = Worker::running(
        "let v: unknown[] = [];\nfor (let i = 1; i < 100; i++) v = [v];\nconst back = await tools.echo(v);\nlet depth = 0;\nfor (let x: any = back; Array.isArray(x); x = x[0]) depth++;\nreturn depth;",
    )
    .await;
    let call = worker.frame().await;
    let args = call["args"].to_string();
    assert_eq!(args, format!("{}{}", "[".repeat(100), "]".repeat(100)));
    worker
        .send(&format!(
            r#"{{"type":"reply","id":1,"ok":true,"value":{args}}}"#
        ))
        .await;
    assert_eq!(
        done(&mut worker).await,
        json!({"type": "done", "value": 100})
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn an_exception_is_a_done_error() {
    let mut worker = Worker::running("throw new TypeError('boom');").await;
    let frame = done(&mut worker).await;
    assert_eq!(frame["error"]["kind"], "exception", "{frame}");
    assert!(
        frame["error"]["message"]
            .as_str()
            .unwrap()
            .contains("TypeError: boom"),
        "{frame}"
    );
    assert!(frame.get("value").is_none(), "{frame}");
    worker.succeeds().await;
}

#[tokio::test]
async fn the_compute_budget_is_a_timeout() {
    let mut worker = Worker::booted(&[("computeMillis", json!(200))]).await;
    worker.run("while (true) {}").await;
    let frame = done(&mut worker).await;
    assert_eq!(frame["error"]["kind"], "timeout", "{frame}");
    assert_eq!(
        frame["error"]["message"],
        "compute budget exhausted (200ms busy)"
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn a_memory_bomb_is_a_worker_exit() {
    let mut worker = Worker::booted(&[("memoryBytes", json!(16 << 20))]).await;
    worker
        .run("const keep: string[] = [];\nwhile (true) keep.push('x'.repeat(1 << 20) + keep.length);")
        .await;
    let frame = done(&mut worker).await;
    assert_eq!(frame["error"]["kind"], "worker-exit", "{frame}");
    assert_eq!(
        frame["error"]["message"],
        format!("memory limit exceeded ({} bytes)", 16 << 20)
    );
    worker.succeeds().await;
}

#[tokio::test]
async fn the_host_closing_stdin_mid_call_ends_the_worker() {
    let mut worker = Worker::running("await tools.slow({});\nreturn 1;").await;
    assert_eq!(worker.frame().await["name"], "slow");
    drop(worker.stdin.take());
    let (rest, status, _) = worker.finish().await;
    assert!(
        rest.is_empty(),
        "no done frame after the host left: {rest:?}"
    );
    assert_eq!(status.code(), Some(70));
}

#[tokio::test]
async fn the_host_closing_stdin_mid_computation_ends_the_worker() {
    let mut worker = Worker::running("while (true) {}").await;
    drop(worker.stdin.take());
    let (rest, status, _) = worker.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status.code(), Some(70));
}

#[tokio::test]
async fn a_malformed_boot_frame_exits_without_writing() {
    let cases = [
        "{not json".to_owned(),
        "[]".to_owned(),
        boot_frame(&[("computeMillis", json!(0))]),
        boot_frame(&[("memoryBytes", json!("lots"))]),
        boot_frame(&[("namespaces", json!([{"global": "class", "names": []}]))]),
        r#"{"type":"run","program":"return 1;"}"#.to_owned(),
    ];
    for line in cases {
        let mut worker = Worker::spawn();
        worker.send(&line).await;
        let (rest, status, stderr) = worker.finish().await;
        assert!(rest.is_empty(), "{line}: {rest:?}");
        assert_eq!(status.code(), Some(71), "{line}");
        assert!(stderr.contains("invalid boot frame"), "{line}: {stderr}");
    }
}

#[tokio::test]
async fn no_boot_frame_at_all_is_a_host_gone_exit() {
    let mut worker = Worker::spawn();
    drop(worker.stdin.take());
    let (rest, status, _) = worker.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status.code(), Some(70));
}

#[tokio::test]
async fn a_frame_other_than_run_after_the_ack_exits() {
    let mut worker = Worker::booted(&[]).await;
    worker.send(r#"{"type":"run","program":42}"#).await;
    let (rest, status, _) = worker.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status.code(), Some(72));
}

#[tokio::test]
async fn a_malformed_frame_during_the_run_exits() {
    for line in [
        "not json",
        r#"{"type":"reply","id":1,"ok":"yes","value":1}"#,
        r#"{"type":"boot"}"#,
    ] {
        let mut worker = Worker::running("await tools.slow({});\nreturn 1;").await;
        assert_eq!(worker.frame().await["name"], "slow");
        worker.send(line).await;
        let (rest, status, _) = worker.finish().await;
        assert!(rest.is_empty(), "{line}: {rest:?}");
        assert_eq!(status.code(), Some(73), "{line}");
    }
}

#[tokio::test]
async fn output_past_the_cap_is_an_output_limit() {
    let mut worker = Worker::booted(&[("maxOutputBytes", json!(64))]).await;
    worker
        .run("for (let i = 0; i < 100; i++) console.log('x'.repeat(10));\nreturn 1;")
        .await;
    let mut frame = worker.frame().await;
    while frame["type"] == "log" {
        frame = worker.frame().await;
    }
    assert_eq!(frame["type"], "done", "{frame}");
    assert_eq!(frame["error"]["kind"], "output-limit", "{frame}");
    worker.succeeds().await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn boot_applies_the_resource_limits() {
    let worker = Worker::booted(&[
        ("cpuSeconds", json!(7)),
        ("addressSpaceBytes", json!(3u64 << 30)),
    ])
    .await;
    let pid = worker.child.id().expect("the worker runs");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let row = |name: &str| {
        let line = limits
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {limits}"));
        line[name.len()..]
            .split_whitespace()
            .take(2)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("Max cpu time"), ["7", "8"]);
    let address_space = (3u64 << 30).to_string();
    assert_eq!(
        row("Max address space"),
        [address_space.as_str(), address_space.as_str()]
    );
    assert_eq!(row("Max core file size"), ["0", "0"]);
    drop(worker);
}
