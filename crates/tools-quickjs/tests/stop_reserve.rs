//! The engine thread of a run ends even when the program holds QuickJS at its memory cap
//! and catches every error (README, "The stop cannot be starved"). Its own test binary (see
//! `engine_threads`).

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;

mod engine_threads;
use engine_threads::{NoHost, engine_threads_end};

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
    // The run has settled; its thread must end on its own. The bound is generous: this
    // asserts that the thread ends, not how fast. (This program drops its arrays when it
    // catches, which leaves the engine room for its stop: it passes with no memory held
    // back at all. `stop_headroom.rs` keeps memory full and needs the room.)
    engine_threads_end("a program holding the memory cap").await;
}
