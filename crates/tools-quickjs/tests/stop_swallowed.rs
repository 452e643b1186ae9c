//! A stop cannot be swallowed while the engine builds an error's stack (see the module
//! `runtime/quickjs/engine/stop.rs`). Each program here once outlived every stop: the run
//! settled, and its engine thread kept running. Its own test binary (see `engine_threads`);
//! the programs run one after another.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;

mod engine_threads;
use engine_threads::{NoHost, engine_threads_end};

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
