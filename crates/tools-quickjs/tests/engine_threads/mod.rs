//! What the stop tests share (`stop_reserve.rs`, `stop_swallowed.rs`): a host with no
//! bindings, and the wait for this process's engine threads to end. Each of those tests is
//! its own binary, so that no other test's engine thread is counted.

use std::time::Duration;

use tools_codemode::{BindingFuture, BindingHost};

/// A host whose every binding call fails.
pub(crate) struct NoHost;

impl BindingHost for NoHost {
    fn call(&self, _global: &str, _name: &str, _args: tools_json::JsonValue) -> BindingFuture {
        BindingFuture::ready(Err("no bindings".into()))
    }
}

/// The engine threads of this process running a program, by the name the runtime gives
/// them (read only; the kernel keeps 15 bytes of a thread's name). A thread kept for the
/// next run is named `codemode-idle` while it waits, and is not counted: the program it
/// ran is over.
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

/// Waits for this process's engine threads to stop running programs (to end, or to wait
/// for the next run), and panics naming `what` if one is still running 60 s on. The bound
/// is generous: this asserts that the program stops running, not how fast.
pub(crate) async fn engine_threads_end(what: &str) {
    for _ in 0..600 {
        if engine_threads() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: the engine thread was still running 60 s after its run settled");
}
