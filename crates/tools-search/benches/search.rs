//! Criterion benchmark of the index on a 10 000-tool catalog, beside the same run's
//! baseline (a linear scan counting query words in each tool's lowercased text; see
//! `examples/common/mod.rs`):
//!
//! - `build/index` and `build/baseline`: building over the whole catalog;
//! - `search/index`, `search/baseline`: one query (limit 5), the queries taken in turn;
//! - `search/regex`: regex mode, names anchored at the start.
//!
//! The catalog is `eval/catalog.jsonl` grown to 10 000 tools by numbered copies, with the
//! queries of `eval/requests.jsonl`; without them, a synthetic catalog and queries.
//! `examples/measure.rs` prints the same figures as p50/p99 and ratios in one JSON line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tools_search::SearchIndex;

#[path = "../examples/common/mod.rs"]
#[allow(dead_code, unreachable_pub)]
mod common;
use common::{Baseline, Tool, workload};

const TOOLS: usize = 10_000;

fn benches(c: &mut Criterion) {
    let (tools, queries, _) = workload(TOOLS);
    let entries: Vec<_> = tools.iter().map(Tool::entry).collect();

    let mut build = c.benchmark_group("build");
    build
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    build.bench_function("index", |b| {
        b.iter(|| SearchIndex::build(black_box(&entries).iter().copied()))
    });
    build.bench_function("baseline", |b| {
        b.iter(|| Baseline::build(black_box(&tools)))
    });
    build.finish();

    let index = SearchIndex::build(entries.iter().copied());
    let baseline = Baseline::build(&tools);
    let mut search = c.benchmark_group("search");
    let mut at = 0usize;
    search.bench_function("index", |b| {
        b.iter(|| {
            at = (at + 1) % queries.len();
            index.search(black_box(&queries[at]), 5)
        })
    });
    search
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    search.bench_function("baseline", |b| {
        b.iter(|| {
            at = (at + 1) % queries.len();
            baseline.search(black_box(&queries[at]), 5)
        })
    });
    search.bench_function("regex", |b| {
        b.iter(|| index.search_regex(black_box("^(get|list)_"), 5))
    });
    search.finish();
}

criterion_group!(search, benches);
criterion_main!(search);
