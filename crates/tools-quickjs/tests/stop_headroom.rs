//! The engine thread of a run ends even when the program keeps QuickJS's memory full and
//! catches every error: disarming the realm and the stop error get the memory the engine
//! holds back (`engine/headroom.rs`). Its own test binary (see `engine_threads`).
//!
//! Measured: with one reserve given back only for the stop (the design before), and with
//! no room for the disarm, the first program's engine thread was still spinning 60 s after
//! its run settled.

// Test code reports failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use tools_codemode::{CodeRunRequest, CodeRuntime, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;

mod engine_threads;
use engine_threads::{NoHost, engine_threads_end};

/// Programs that keep the engine's memory full and catch every error, each in its own way.
/// The first and `finally` kept their engine thread spinning with the single reserve this
/// replaced (checked one by one, in this order, stopping at the first: the later ones were
/// not reached).
const PROGRAMS: [(&str, &str); 8] = [
    // A list of small objects, kept across the catch: when the next one cannot be
    // allocated, less than one small block is left.
    (
        "a kept list",
        "let head: unknown = null;\n\
         for (;;) {\n\
           try { for (;;) head = { next: head }; } catch (e) {}\n\
         }",
    ),
    (
        "an allocation in finally",
        "let head: unknown = null;\n\
         for (;;) {\n\
           try { for (;;) head = { next: head }; } catch (e) {}\n\
           finally { try { head = { next: head }; } catch (e) {} }\n\
         }",
    ),
    (
        "a refill in the catch",
        "let head: unknown = null;\n\
         for (;;) {\n\
           try { for (;;) head = { next: head }; }\n\
           catch (e) { try { for (;;) head = { next: head }; } catch (e2) {} }\n\
         }",
    ),
    (
        "awaits between",
        "let head: unknown = null;\n\
         for (;;) {\n\
           try { for (;;) head = { next: head }; } catch (e) {}\n\
           await null;\n\
         }",
    ),
    (
        "a promise's catch",
        "let head: unknown = null;\n\
         for (;;) {\n\
           await new Promise((resolve) => {\n\
             try { for (;;) head = { next: head }; } catch (e) {}\n\
             resolve(1);\n\
           }).catch(() => {});\n\
         }",
    ),
    (
        "kept strings",
        "const keep: string[] = []; let s = 'x';\n\
         for (;;) {\n\
           try { for (;;) { s = s + 'y'; keep.push(s.slice(0, 8)); } } catch (e) {}\n\
         }",
    ),
    (
        "kept errors",
        "const keep: unknown[] = [];\n\
         for (;;) {\n\
           try { for (;;) keep.push(new Error('x')); }\n\
           catch (e) { try { keep.push(e); } catch (e2) {} }\n\
         }",
    ),
    (
        "kept closures",
        "let head: unknown = null;\n\
         for (;;) {\n\
           try { for (;;) { const h = head; head = () => h; } } catch (e) {}\n\
         }",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_keeping_the_memory_cap_full_cannot_keep_their_engine_thread_alive() {
    for (what, program) in PROGRAMS {
        let runtime = QuickJsRuntime::new(RuntimeLimits {
            compute: Duration::from_secs(1),
            memory_bytes: 8 * 1024 * 1024,
            ..RuntimeLimits::default()
        })
        .unwrap();
        let result = runtime
            .run(CodeRunRequest::new(program, Vec::new(), Arc::new(NoHost)))
            .await
            .unwrap();
        assert!(
            result.error.is_some(),
            "{what}: the run must fail: {result:?}"
        );
        // One at a time: the count is of this process's engine threads.
        engine_threads_end(what).await;
    }
}
