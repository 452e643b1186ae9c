//! TypeScript in a confined child (`QuickJsProcessRuntime` starting this crate's
//! `tools-codemode-worker` in the bubblewrap sandbox): the same contract as the in-process
//! engine, and a crash of the engine ends one child, never the host.

use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, ContractError, Language, RuntimeLimits};
use tools_sandbox::{Isolation, QuickJsProcessOptions, QuickJsProcessRuntime};

use tools_codemode::testing::{Host, failure, run, success, tools};

const WORKER: &str = env!("CARGO_BIN_EXE_tools-codemode-worker");

fn limits() -> RuntimeLimits {
    RuntimeLimits {
        compute: Duration::from_secs(10),
        wall: Duration::from_secs(60),
        ..RuntimeLimits::default()
    }
}

fn confined(limits: RuntimeLimits) -> QuickJsProcessRuntime {
    let runtime = QuickJsProcessRuntime::new(limits, QuickJsProcessOptions::new(WORKER)).unwrap();
    assert_eq!(runtime.isolation(), Isolation::Sandbox.label());
    runtime
}

#[tokio::test]
async fn values_logs_and_binding_calls_cross_the_process_boundary() {
    let runtime = confined(limits());
    assert_eq!(runtime.language(), Language::TypeScript);
    let program = "const r: { echoed: unknown } = await tools.echo({ a: [1, 2.5, 'x'] });\nconsole.log('got', r);\nreturn r;";
    let (result, host) = run(&runtime, program).await;
    assert_eq!(success(&result), r#"{"echoed":{"a":[1,2.5,"x"]}}"#);
    assert_eq!(result.logs, ["got { echoed: { a: [ 1, 2.5, 'x' ] } }"]);
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn a_rejected_call_is_a_tool_call_error_in_the_program() {
    let program = "try { await tools.fail({}); } catch (e) { return [e instanceof ToolCallError, e.toolName, e.message]; }";
    let (result, _) = run(&confined(limits()), program).await;
    assert_eq!(success(&result), r#"[true,"fail","nope"]"#);
}

#[tokio::test]
async fn exceptions_budgets_and_memory_keep_their_kinds() {
    let (result, _) = run(&confined(limits()), "throw new Error('boom')").await;
    assert_eq!(failure(&result).map(|f| f.0), Some("exception"));
    let hot = confined(RuntimeLimits {
        compute: Duration::from_millis(300),
        ..limits()
    });
    let (result, _) = run(&hot, "while (true) {}").await;
    assert_eq!(failure(&result).map(|f| f.0), Some("timeout"));
    let small = confined(RuntimeLimits {
        memory_bytes: 32 * 1024 * 1024,
        ..limits()
    });
    let (result, _) = run(
        &small,
        "const a: string[] = []; while (true) a.push('x'.repeat(1 << 16));",
    )
    .await;
    assert_eq!(failure(&result).map(|f| f.0), Some("worker-exit"));
}

#[tokio::test]
async fn an_abort_ends_the_child() {
    let runtime = confined(limits());
    let host = Host::new();
    let request = CodeRunRequest::new("await tools.cancel({}); return 1;", tools(), host.clone())
        .with_cancel(host.cancel.clone());
    let result = runtime.run(request).await.unwrap();
    assert_eq!(
        failure(&result),
        Some(("abort", tools_codemode::ABORTED_MESSAGE.to_owned()))
    );
}

#[tokio::test]
async fn a_revoked_proxy_thrown_ends_only_the_child() {
    // In process, this once aborted the host (rquickjs panicked while inspecting the value);
    // in the confined child the worst it can do is end the child.
    let program = "const r = Proxy.revocable({}, {}); r.revoke(); throw r.proxy;";
    let (result, _) = run(&confined(limits()), program).await;
    let (kind, _) = failure(&result).unwrap();
    assert!(kind == "exception" || kind == "worker-exit", "{kind}");
}

#[test]
fn a_missing_worker_or_sandbox_is_refused() {
    let err = QuickJsProcessRuntime::new(
        RuntimeLimits::default(),
        QuickJsProcessOptions::new("/nonexistent/worker"),
    )
    .unwrap_err();
    assert!(
        matches!(err, ContractError::InterpreterUnavailable { .. }),
        "{err}"
    );
    let err = QuickJsProcessRuntime::new(
        RuntimeLimits::default(),
        QuickJsProcessOptions::new(WORKER).bwrap("/nonexistent/bwrap"),
    )
    .unwrap_err();
    assert!(matches!(err, ContractError::Unconfinable { .. }), "{err}");
}

#[tokio::test]
async fn a_failed_call_carries_its_machine_code_across_the_process() {
    let program = r#"
const out = [];
for (const name of ["fail", "failRaw"]) {
  try { await tools[name]({}); } catch (e) { out.push([e.toolName, e.code ?? null]); }
}
return out;
"#;
    let text = success(&run(&confined(limits()), program).await.0);
    assert_eq!(text, r#"[["fail","DENIED"],["failRaw",null]]"#);
}

/// The uid lines (`Uid:` of `/proc/<pid>/status`) of every process running `binary`.
fn uids_running(binary: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if std::fs::read_link(entry.path().join("exe")).ok().as_deref() != Some(binary) {
            continue;
        }
        if let Ok(status) = std::fs::read_to_string(entry.path().join("status"))
            && let Some(uid) = status.lines().find_map(|l| l.strip_prefix("Uid:"))
        {
            found.push(uid.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    found
}

#[tokio::test]
async fn the_worker_runs_as_the_sandbox_user_when_the_host_is_root() {
    if !nix::unistd::geteuid().is_root() {
        // Not root: the sandbox runs as the host's own unprivileged user (as before).
        return;
    }
    let runtime = QuickJsProcessRuntime::new(
        limits(),
        QuickJsProcessOptions::new(WORKER).sandbox_user(tools_sandbox::SandboxUser {
            uid: 4747,
            gid: 4747,
        }),
    )
    .unwrap();
    let host = Host::new();
    let request = CodeRunRequest::new(
        "await tools.started({});\nawait tools.never({});",
        tools(),
        host.clone(),
    )
    .with_cancel(host.cancel.clone());
    let started = host.started.notified();
    let run = tokio::spawn(async move { runtime.run(request).await });
    started.await;
    let worker = std::fs::canonicalize(WORKER).unwrap();
    let uids = uids_running(&worker);
    host.cancel.cancel();
    let _ = run.await;
    // Other tests may run workers at the same time; this run's is the one with uid 4747.
    assert!(
        uids.iter().any(|uid| uid == "4747 4747 4747 4747"),
        "{uids:?}"
    );
}

#[tokio::test]
async fn a_binding_signature_crosses_the_boot_frame() {
    crate::quickjs_bindings::check_signatures(&confined(limits())).await;
}
