//! The engine thread of a run ends even when the program holds QuickJS at its memory cap
//! and catches every error (README, "The stop cannot be starved"). Its own test binary, so
//! that no other test's engine thread is counted.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "quickjs")]

use std::sync::Arc;
use std::time::Duration;

use tools_codemode::{
    BindingFuture, BindingHost, CodeRunRequest, CodeRuntime, QuickJsRuntime, RuntimeLimits,
};

struct NoHost;

impl BindingHost for NoHost {
    fn call(&self, _global: &str, _name: &str, _args: tools_json::JsonValue) -> BindingFuture {
        Box::pin(async { Err("no bindings".to_owned()) })
    }
}

/// The engine threads of this process, by the name the runtime gives them (read only; the
/// kernel keeps 15 bytes of a thread's name).
fn engine_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .flatten()
                .filter(|task| {
                    std::fs::read_to_string(task.path().join("comm"))
                        .is_ok_and(|name| name.trim_end() == &"codemode-quickjs"[..15])
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_holding_the_memory_cap_cannot_keep_its_engine_thread_alive() {
    let runtime = QuickJsRuntime::new(RuntimeLimits {
        compute: Duration::from_secs(1),
        memory_bytes: 32 * 1024 * 1024,
        ..RuntimeLimits::default()
    })
    .unwrap();
    let program = "let caught = 0;\n\
                   for (;;) {\n\
                     try { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); }\n\
                     catch (e) { caught++; }\n\
                   }";
    let result = runtime
        .run(CodeRunRequest::new(program, Vec::new(), Arc::new(NoHost)))
        .await
        .unwrap();
    assert!(result.error.is_some(), "the run must fail: {result:?}");
    // The run has settled; its thread must end on its own. Without the held-back reserve
    // it never did (it caught the out-of-memory error thrown in place of the stop). The
    // bound is generous: this asserts that the thread ends, not how fast.
    for _ in 0..600 {
        if engine_threads() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the engine thread was still running 60 s after its run settled");
}
