//! A stop cannot be swallowed while the engine builds an error's stack (see the module
//! `runtime/quickjs/engine/stop.rs`). Each program here once outlived every stop: the run
//! settled, and its engine thread kept running. Its own test binary, so that no other
//! test's engine thread is counted; the programs run one after another.

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

/// Programs that throw and catch in a loop, so that the engine is building an error's stack
/// whenever it polls for a stop.
const PROGRAMS: [(&str, &str); 4] = [
    (
        "a caught error in a loop",
        "let n = 0; for (;;) { try { null.x; } catch (e) { n++; } }",
    ),
    (
        "a caught error in a loop, after an await",
        "await 0; let n = 0; for (;;) { try { null.x; } catch (e) { n++; } }",
    ),
    (
        "the memory cap held and caught, after an await",
        "await 0; let caught = 0;\n\
         for (;;) {\n\
           try { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); }\n\
           catch (e) { caught++; }\n\
         }",
    ),
    (
        "a stack trace limit whose valueOf never returns, set again after every error",
        "const limit = { valueOf() { for (;;) {} } };\n\
         let n = 0;\n\
         for (;;) {\n\
           try { (Error as any).stackTraceLimit = limit; null.x; }\n\
           catch (e) { n++; }\n\
         }",
    ),
];

/// Waits for this process's engine threads to end. The bound is generous: this asserts
/// that the thread ends, not how fast.
async fn engine_threads_end(what: &str) {
    for _ in 0..600 {
        if engine_threads() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: the engine thread was still running 60 s after its run settled");
}

/// Every stop the host can ask for: the compute budget, the wall clock, and an abort (the
/// caller's token, cancelled once the program has had time to start; cancelled earlier,
/// the run still ends, which is all this asserts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_is_not_swallowed_while_an_error_is_built() {
    let limits = |compute: u64, wall: u64| RuntimeLimits {
        compute: Duration::from_secs(compute),
        wall: Duration::from_secs(wall),
        memory_bytes: 32 * 1024 * 1024,
        ..RuntimeLimits::default()
    };
    let by_compute = QuickJsRuntime::new(limits(1, 600)).unwrap();
    let by_wall = QuickJsRuntime::new(limits(600, 1)).unwrap();
    let by_abort = QuickJsRuntime::new(limits(600, 600)).unwrap();
    for (what, program) in PROGRAMS {
        let request = || CodeRunRequest::new(program, Vec::new(), Arc::new(NoHost));

        let result = by_compute.run(request()).await.unwrap();
        assert!(result.error.is_some(), "{what} (compute): {result:?}");
        engine_threads_end(&format!("{what} (compute)")).await;

        let result = by_wall.run(request()).await.unwrap();
        assert!(result.error.is_some(), "{what} (wall): {result:?}");
        engine_threads_end(&format!("{what} (wall)")).await;

        let cancel = tokio_util::sync::CancellationToken::new();
        let aborter = cancel.clone();
        let abort = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            aborter.cancel();
        });
        let result = by_abort.run(request().with_cancel(cancel)).await.unwrap();
        assert!(result.error.is_some(), "{what} (abort): {result:?}");
        abort.await.unwrap();
        engine_threads_end(&format!("{what} (abort)")).await;
    }
}
