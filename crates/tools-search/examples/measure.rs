//! Build time, search latency and memory of the index on a 10 000-tool catalog, each
//! beside the same run's linear-scan baseline, printed as a table and one JSON line:
//!
//! ```text
//! cargo run --release -p tools-search --example measure [TOOLS] [ROUNDS] [synthetic]
//! ```
//!
//! The catalog is `eval/catalog.jsonl` grown to TOOLS (default 10 000) by numbered copies
//! (`name_r2`, …), and the queries are `eval/requests.jsonl`; without those files (or with
//! the word `synthetic`), a deterministic synthetic catalog and synthetic queries. Every
//! query runs ROUNDS times (default 5) after one warm-up round; each search is timed on
//! its own (limit 5), the index's rounds before the baseline's. Builds: median of five.
//!
//! Wall-clock times grow when other processes share the cores, so the run also reports
//! the time this thread spent on a CPU (`/proc/thread-self/schedstat`, Linux; `null`
//! elsewhere): per build (median) and per search (mean), and the share of the run the
//! thread spent waiting for a CPU.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_macros,
    missing_docs
)]

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;
use tools_search::SearchIndex;

#[allow(dead_code, unreachable_pub)]
mod common;
use common::{Baseline, quantile, workload};

const LIMIT: usize = 5;

/// The time this thread has spent on a CPU and waiting for one, in nanoseconds.
fn schedstat() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    Some((fields.next()?.ok()?, fields.next()?.ok()?))
}

/// On-CPU nanoseconds since `since`.
fn cpu_since(since: Option<(u64, u64)>) -> Option<f64> {
    Some(schedstat()?.0.checked_sub(since?.0)? as f64)
}

fn micros(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    let mean = samples.iter().sum::<f64>() / samples.len().max(1) as f64;
    (quantile(samples, 0.5), quantile(samples, 0.99), mean)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let tools_wanted: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let (tools, queries, source) = if args.next().as_deref() == Some("synthetic") {
        (
            common::synthetic(tools_wanted),
            common::synthetic_queries(500),
            "synthetic",
        )
    } else {
        workload(tools_wanted)
    };
    let entries: Vec<_> = tools.iter().map(common::Tool::entry).collect();

    // Build: the median of five builds, each from the same borrowed entries.
    let run_start = schedstat();
    let mut builds = Vec::new();
    let mut build_cpu = Vec::new();
    let mut index = SearchIndex::default();
    for _ in 0..5 {
        let cpu = schedstat();
        let start = Instant::now();
        index = black_box(SearchIndex::build(entries.iter().copied()));
        builds.push(start.elapsed().as_secs_f64() * 1e3);
        build_cpu.extend(cpu_since(cpu).map(|ns| ns / 1e6));
    }
    let mut baseline_builds = Vec::new();
    let mut baseline_build_cpu = Vec::new();
    let mut baseline = Baseline::build(&[]);
    for _ in 0..5 {
        let cpu = schedstat();
        let start = Instant::now();
        baseline = black_box(Baseline::build(&tools));
        baseline_builds.push(start.elapsed().as_secs_f64() * 1e3);
        baseline_build_cpu.extend(cpu_since(cpu).map(|ns| ns / 1e6));
    }
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        (!values.is_empty()).then(|| quantile(values, 0.5))
    };
    let build_ms = median(&mut builds).unwrap_or(0.0);
    let baseline_build_ms = median(&mut baseline_builds).unwrap_or(0.0);
    let build_cpu_ms = median(&mut build_cpu);
    let baseline_build_cpu_ms = median(&mut baseline_build_cpu);

    // Search: one warm-up round, then ROUNDS rounds, each search timed alone.
    let mut skipped = 0usize;
    for query in &queries {
        if index.search(query, LIMIT).is_err() {
            skipped += 1;
        }
        black_box(baseline.search(query, LIMIT));
    }
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut hits = 0usize;
    // The index's rounds, then the baseline's: interleaved, the baseline's scan of every
    // tool's text would evict the index from the caches before each search.
    for _ in 0..rounds {
        for query in &queries {
            let start = Instant::now();
            let found = black_box(index.search(black_box(query), LIMIT));
            ours.push(start.elapsed().as_secs_f64() * 1e6);
            hits += found.map(|h| h.len()).unwrap_or(0);
        }
    }
    for _ in 0..rounds {
        for query in &queries {
            let start = Instant::now();
            black_box(baseline.search(black_box(query), LIMIT));
            theirs.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    // On-CPU time per search: whole rounds between two readings (a reading costs a
    // system call, too much to take around each search).
    let searches = (rounds * queries.len()).max(1) as f64;
    let cpu = schedstat();
    for _ in 0..rounds {
        for query in &queries {
            black_box(index.search(black_box(query), LIMIT)).ok();
        }
    }
    let search_cpu_us = cpu_since(cpu).map(|ns| ns / searches / 1e3);
    let cpu = schedstat();
    for _ in 0..rounds {
        for query in &queries {
            black_box(baseline.search(black_box(query), LIMIT));
        }
    }
    let baseline_cpu_us = cpu_since(cpu).map(|ns| ns / searches / 1e3);
    let wait_share = run_start
        .zip(schedstat())
        .map(|((cpu0, wait0), (cpu1, wait1))| {
            let (cpu, wait) = (cpu1.saturating_sub(cpu0), wait1.saturating_sub(wait0));
            wait as f64 / (cpu + wait).max(1) as f64
        });
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    let (p50, p99, mean) = micros(&mut ours);
    let (base_p50, base_p99, base_mean) = micros(&mut theirs);
    let heap = index.heap_bytes();
    let per_tool = heap as f64 / index.len().max(1) as f64;
    let baseline_per_tool = baseline.heap_bytes() as f64 / tools.len().max(1) as f64;

    println!(
        "catalog: {} tools ({source}); {} queries x {rounds} rounds, limit {LIMIT}",
        index.len(),
        queries.len()
    );
    println!(
        "{:<22} {:>14} {:>14} {:>10}",
        "", "tools-search", "linear scan", "ratio"
    );
    println!(
        "{:<22} {:>14.2} {:>14.2} {:>10.3}",
        "build (ms, median)",
        build_ms,
        baseline_build_ms,
        build_ms / baseline_build_ms
    );
    println!(
        "{:<22} {:>14.1} {:>14.1} {:>10.4}",
        "search p50 (us)",
        p50,
        base_p50,
        p50 / base_p50
    );
    println!(
        "{:<22} {:>14.1} {:>14.1} {:>10.4}",
        "search p99 (us)",
        p99,
        base_p99,
        p99 / base_p99
    );
    println!(
        "{:<22} {:>14.1} {:>14.1} {:>10.4}",
        "search mean (us)",
        mean,
        base_mean,
        mean / base_mean
    );
    println!(
        "{:<22} {:>14.0} {:>14.0} {:>10.3}",
        "heap bytes per tool",
        per_tool,
        baseline_per_tool,
        per_tool / baseline_per_tool
    );
    if let (Some(a), Some(b), Some(c), Some(d)) = (
        build_cpu_ms,
        baseline_build_cpu_ms,
        search_cpu_us,
        baseline_cpu_us,
    ) {
        println!(
            "{:<22} {:>14.2} {:>14.2} {:>10.3}",
            "build on-CPU (ms)",
            a,
            b,
            a / b
        );
        println!(
            "{:<22} {:>14.1} {:>14.1} {:>10.4}",
            "search on-CPU (us)",
            c,
            d,
            c / d
        );
    }
    if let Some(share) = wait_share {
        println!(
            "(this thread waited for a CPU {:.0}% of the run)",
            share * 100.0
        );
    }
    if skipped > 0 {
        println!("({skipped} queries refused by the index)");
    }
    let line = json!({
        "tools": index.len(),
        "catalog": source,
        "queries": queries.len(),
        "rounds": rounds,
        "limit": LIMIT,
        "build_ms": build_ms,
        "baseline_build_ms": baseline_build_ms,
        "build_ratio": build_ms / baseline_build_ms,
        "search_p50_us": p50,
        "search_p99_us": p99,
        "search_mean_us": mean,
        "baseline_p50_us": base_p50,
        "baseline_p99_us": base_p99,
        "baseline_mean_us": base_mean,
        "p50_ratio": p50 / base_p50,
        "p99_ratio": p99 / base_p99,
        "build_cpu_ms": build_cpu_ms,
        "baseline_build_cpu_ms": baseline_build_cpu_ms,
        "build_cpu_ratio": ratio(build_cpu_ms, baseline_build_cpu_ms),
        "search_cpu_mean_us": search_cpu_us,
        "baseline_cpu_mean_us": baseline_cpu_us,
        "search_cpu_ratio": ratio(search_cpu_us, baseline_cpu_us),
        "cpu_wait_share": wait_share,
        "heap_bytes": heap,
        "heap_bytes_per_tool": per_tool,
        "baseline_heap_bytes_per_tool": baseline_per_tool,
        "hits_returned": hits,
        "refused_queries": skipped,
    });
    println!("{line}");
}
