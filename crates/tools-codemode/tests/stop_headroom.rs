//! The engine thread of a run ends even when the program keeps QuickJS's memory full and
//! catches every error: disarming the realm and the stop error get the memory the engine
//! holds back (`engine/headroom.rs`). Its own test binary (see `engine_threads`).
//!
//! Measured: with one reserve given back only for the stop (the design before), and with
//! no room for the disarm, the engine thread was still spinning 60 s after the run settled.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "quickjs")]

use std::sync::Arc;
use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, QuickJsRuntime, RuntimeLimits};

mod engine_threads;
use engine_threads::{NoHost, engine_threads_end};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_filling_the_memory_cap_to_the_last_block_cannot_keep_its_engine_thread_alive() {
    let runtime = QuickJsRuntime::new(RuntimeLimits {
        compute: Duration::from_secs(1),
        memory_bytes: 8 * 1024 * 1024,
        ..RuntimeLimits::default()
    })
    .unwrap();
    // A list of small objects, kept across the catch: when the next one cannot be
    // allocated, less than one small block is left, and the program catches the error.
    let program = "let head: unknown = null;\n\
                   for (;;) {\n\
                     try { for (;;) head = { next: head }; } catch (e) {}\n\
                   }";
    let result = runtime
        .run(CodeRunRequest::new(program, Vec::new(), Arc::new(NoHost)))
        .await
        .unwrap();
    assert!(result.error.is_some(), "the run must fail: {result:?}");
    engine_threads_end("a program filling the memory cap to the last block").await;
}
