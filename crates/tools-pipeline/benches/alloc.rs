//! Memory figures of issue 10: heap bytes and allocations per call of scenario a (one
//! sequential `execute()` of `noop`) beside the bare baseline (the same body through
//! `tower::service_fn` with the same argument clone), the same call when the host also
//! reads the result's content, the same call with arguments that arrive as a lossless
//! snapshot (as `tools-runtime`'s provider parse hands them over), and the heap and
//! resident memory of 100 000 registered tools.
//!
//! `dhat` (in testing mode: no file, no output of its own) is the global allocator and counts
//! every allocation. Prints `key=value` lines that `cargo xtask bench` collects.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::disallowed_macros,
    missing_docs
)]

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::{Value, json};
use tools_json::JsonValue;
use tools_pipeline::{Pipeline, ToolCall, from_fn};
use tools_registry::Registry;
use tower::{Service, service_fn};

#[path = "../../tools-registry/benches/common/tools.rs"]
mod tools;
use tools::{catalog, noop};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Calls measured per figure (after as many warm-up calls).
const CALLS: u64 = 10_000;
/// Tools registered for the registry figure.
const TOOLS: usize = 100_000;

fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the benchmark body never waits"),
    }
}

/// `(bytes, blocks)` allocated by `calls` runs of `f`.
fn allocated(calls: u64, mut f: impl FnMut(u64)) -> (u64, u64) {
    for i in 0..calls {
        f(i);
    }
    let before = dhat::HeapStats::get();
    for i in 0..calls {
        f(i);
    }
    let after = dhat::HeapStats::get();
    (
        after.total_bytes - before.total_bytes,
        after.total_blocks - before.total_blocks,
    )
}

/// The resident set size, from `/proc/self/statm` (0 where there is none).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn main() {
    // `cargo bench` passes `--bench` (and maybe a filter); there is nothing to filter.
    let _profiler = dhat::Profiler::builder().testing().build();
    let args = json!({"text": "hello", "n": 1});

    let registry = Registry::new();
    registry.register(noop()).unwrap().keep();
    let pipeline = Pipeline::new(registry);
    let ids: Vec<String> = (0..CALLS).map(|i| format!("call-{i}")).collect();
    // One sequential call of `noop` per iteration, with its own id, made by `make`.
    // `read`: the host also reads the content, as it does to send it to the model (a
    // text output's content is made on first read).
    let run = |pipeline: &Pipeline, read: bool, mut make: Box<dyn FnMut(&str) -> ToolCall>| {
        allocated(CALLS, |i| {
            let result = now(pipeline.execute(make(ids[i as usize].as_str())));
            assert!(!result.is_error());
            if read {
                black_box(result.content());
            }
            black_box(result);
        })
    };
    // The arguments cloned from a `Value` for every call.
    let cloned = || -> Box<dyn FnMut(&str) -> ToolCall> {
        Box::new(|id| ToolCall::new(id, "noop", black_box(&args).clone()).unwrap())
    };
    let calls = |pipeline: &Pipeline, read: bool| run(pipeline, read, cloned());
    let (bytes, blocks) = calls(&pipeline, false);
    let (read_bytes, read_blocks) = calls(&pipeline, true);

    // The same call with its arguments as a host's provider parse hands them over: a
    // lossless snapshot, read from the model's text once before the call (one fresh
    // snapshot per call, made before counting), moved into the call and dropped with it.
    let text = args.to_string();
    let snapshots: Vec<JsonValue> = (0..2 * CALLS)
        .map(|_| JsonValue::parse(&text).unwrap())
        .collect();
    let mut snapshots = snapshots.into_iter();
    let handed_over = Box::new(move |id: &str| {
        ToolCall::from_json(id, "noop", snapshots.next().unwrap()).unwrap()
    });
    let (snapshot_bytes, snapshot_blocks) = run(&pipeline, false, handed_over);

    // The same call with one pass-through hook in each waterfall: each adds at most its
    // boxed future.
    let hooked = Pipeline::new(pipeline.registry().clone());
    hooked
        .on_pre_execute(from_fn(|req, next| async move { next.run(req).await }))
        .keep();
    hooked
        .on_execute(from_fn(|req, next| async move { next.run(req).await }))
        .keep();
    hooked
        .on_post_execute(from_fn(|req, next| async move { next.run(req).await }))
        .keep();
    let (_, hooked_blocks) = calls(&hooked, false);
    println!(
        "alloc_hooks blocks_per_call={} blocks_per_hook={}",
        hooked_blocks / CALLS,
        (hooked_blocks.saturating_sub(blocks)) as f64 / (3 * CALLS) as f64
    );

    let mut body = service_fn(|args: Value| async move {
        black_box(args);
        Ok::<_, Infallible>("ok")
    });
    let (base_bytes, base_blocks) = allocated(CALLS, |_| {
        black_box(now(body.call(black_box(&args).clone())).unwrap());
    });
    println!(
        "alloc_a bytes_per_call={} blocks_per_call={} baseline_bytes_per_call={} baseline_blocks_per_call={}",
        bytes / CALLS,
        blocks / CALLS,
        base_bytes / CALLS,
        base_blocks / CALLS
    );
    println!(
        "alloc_a_read bytes_per_call={} blocks_per_call={}",
        read_bytes / CALLS,
        read_blocks / CALLS
    );
    println!(
        "alloc_a_snapshot bytes_per_call={} blocks_per_call={}",
        snapshot_bytes / CALLS,
        snapshot_blocks / CALLS
    );

    let heap_before = dhat::HeapStats::get().curr_bytes;
    let rss_before = rss_bytes();
    let big = Registry::new();
    for i in 0..TOOLS {
        big.register(catalog(i)).unwrap().keep();
    }
    // One view and one projection, as a first call would build them.
    assert_eq!(big.schemas(None).len(), TOOLS);
    let heap = dhat::HeapStats::get()
        .curr_bytes
        .saturating_sub(heap_before);
    let rss = rss_bytes().saturating_sub(rss_before);
    println!(
        "registry_100k_tools heap_bytes={heap} rss_bytes={rss} heap_bytes_per_tool={}",
        heap / TOOLS
    );
    black_box(big);
}
