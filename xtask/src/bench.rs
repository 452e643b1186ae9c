//! `cargo xtask bench [--full] [--runs N] [--write-docs]`: runs every benchmark scenario
//! (described in `docs/benchmarks.md`, "What is measured"), prints one machine-readable
//! line per scenario and a table, and with `--write-docs` rewrites the generated block of
//! `docs/benchmarks.md`.
//!
//! With `--runs N` the whole suite runs N times, one run after the other, so that a burst of
//! load on a shared machine lands in one run rather than on one scenario. Each figure is
//! then the median of the N runs' figures (the ratio: of the N same-run ratios), beside
//! the range and how many runs met the budget.
//!
//! Each bench binary is run by `cargo bench` and its criterion estimates are read from
//! `target/criterion/<id>/new/estimates.json` right after it finishes (several binaries
//! name their baseline `baseline`, so the next binary overwrites it). The ratio of a
//! scenario is its median over the median of the bare baseline measured by the same
//! binary in the same run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::{cargo, project_root};

/// One scenario: where criterion leaves its estimate and its baseline's, and its budget.
struct Scenario {
    id: &'static str,
    bench: &'static str,
    baseline: &'static str,
    budget_ns: f64,
    /// The TypeScript reference's median (ns), measured side by side on 2026-12-01.
    reference_ns: f64,
}

/// One bench binary and the scenarios it measures.
struct Binary {
    package: &'static str,
    bench: &'static str,
    scenarios: &'static [Scenario],
}

const fn scenario(
    id: &'static str,
    bench: &'static str,
    baseline: &'static str,
    budget_ns: f64,
    reference_ns: f64,
) -> Scenario {
    Scenario {
        id,
        bench,
        baseline,
        budget_ns,
        reference_ns,
    }
}

const BINARIES: &[Binary] = &[
    Binary {
        package: "tools-json",
        bench: "validate",
        scenarios: &[
            scenario("e1", "e1", "baseline", 3_000.0, 129_500.0),
            scenario("e1b", "e1b", "baseline", 3_000.0, 81_000.0),
        ],
    },
    Binary {
        package: "tools-schema",
        bench: "schema",
        scenarios: &[
            scenario("e3", "e3", "baseline", 50_000.0, 185_300.0),
            scenario("e3_json", "e3_json", "baseline", 50_000.0, 185_300.0),
        ],
    },
    Binary {
        package: "tools-registry",
        bench: "registry",
        scenarios: &[scenario(
            "d",
            "d_schemas_200_tools",
            "baseline",
            20_000.0,
            3_520_000.0,
        )],
    },
    Binary {
        package: "tools-pipeline",
        bench: "pipeline",
        scenarios: &[
            scenario("a", "a", "baseline", 2_000.0, 378_800.0),
            scenario("a2", "a2", "baseline", 2_000.0, 424_600.0),
            scenario("b", "b", "baseline", 3_000.0, 401_100.0),
            scenario("b2", "b2", "baseline", 3_000.0, 437_400.0),
            scenario(
                "c",
                "c_1000_concurrent_per_call",
                "baseline",
                2_000.0,
                439_400.0,
            ),
            scenario("e2", "e2", "baseline_nested", 10_000.0, 557_600.0),
            scenario(
                "e2_clone",
                "e2_clone",
                "baseline_nested",
                10_000.0,
                557_600.0,
            ),
        ],
    },
    Binary {
        package: "tools-runtime",
        bench: "runtime",
        scenarios: &[
            // Scenario c on the multi-threaded runtime: `ToolRuntime::execute` calls, one
            // join per worker (a single join is one task and runs on one worker).
            scenario(
                "c_mt1",
                "c_split_execute_1_workers",
                "baseline_split_1_workers",
                2_000.0,
                439_400.0,
            ),
            scenario(
                "c_mt2",
                "c_split_execute_2_workers",
                "baseline_split_2_workers",
                2_000.0,
                439_400.0,
            ),
            // The same 1 000 calls as one model turn through `run_batch`, whose prepare and
            // finish stages run in the model's order in one task (docs/decisions.md, entry 9).
            scenario(
                "c_batch1",
                "c_batch_scheduler_1_workers",
                "baseline_spawned_1_workers",
                2_000.0,
                439_400.0,
            ),
            scenario(
                "c_batch2",
                "c_batch_scheduler_2_workers",
                "baseline_spawned_2_workers",
                2_000.0,
                439_400.0,
            ),
        ],
    },
    Binary {
        package: "tools-runtime",
        bench: "codemode",
        scenarios: &[
            scenario(
                "f1",
                "codemode/f1_fake_runtime_100_sequential",
                "codemode/baseline_100_sequential",
                500_000.0,
                19_100_000.0,
            ),
            scenario(
                "f2",
                "codemode/f2_fake_runtime_100_joined",
                "codemode/baseline_100_joined",
                500_000.0,
                21_100_000.0,
            ),
            scenario(
                "f3",
                "codemode/f3_quickjs_100_sequential",
                "codemode/baseline_100_sequential",
                5_000_000.0,
                119_200_000.0,
            ),
            scenario(
                "f4",
                "codemode/f4_quickjs_return_100",
                "codemode/baseline_100_sequential",
                1_000_000.0,
                71_600_000.0,
            ),
        ],
    },
];

/// One measured scenario.
#[derive(Clone, Copy)]
struct Measured {
    id: &'static str,
    median_ns: f64,
    baseline_ns: f64,
    budget_ns: f64,
    /// The TypeScript reference's median (ns), measured side by side on 2026-12-01.
    reference_ns: f64,
}

impl Measured {
    fn ratio(&self) -> f64 {
        if self.baseline_ns > 0.0 {
            self.median_ns / self.baseline_ns
        } else {
            f64::NAN
        }
    }
}

/// One scenario over every run.
struct Summary {
    id: &'static str,
    /// Median over the runs of the run's median.
    median_ns: f64,
    /// Median over the runs of the run's baseline.
    baseline_ns: f64,
    /// Median over the runs of the same-run ratio.
    ratio: f64,
    min_ns: f64,
    max_ns: f64,
    /// Runs whose median met the budget.
    met_runs: usize,
    runs: usize,
    budget_ns: f64,
    /// The TypeScript reference's median (ns), measured side by side on 2026-12-01.
    reference_ns: f64,
}

impl Summary {
    /// Aggregates one scenario's measurements, one per run (at least one).
    fn of(runs: &[Measured]) -> Option<Summary> {
        let first = runs.first()?;
        let medians: Vec<f64> = runs.iter().map(|m| m.median_ns).collect();
        Some(Summary {
            id: first.id,
            median_ns: median(&medians),
            baseline_ns: median(&runs.iter().map(|m| m.baseline_ns).collect::<Vec<_>>()),
            ratio: median(&runs.iter().map(Measured::ratio).collect::<Vec<_>>()),
            min_ns: medians.iter().copied().fold(f64::INFINITY, f64::min),
            max_ns: medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            met_runs: runs.iter().filter(|m| m.median_ns <= m.budget_ns).count(),
            runs: runs.len(),
            budget_ns: first.budget_ns,
            reference_ns: first.reference_ns,
        })
    }

    fn meets_budget(&self) -> bool {
        self.median_ns <= self.budget_ns
    }
}

/// The median of `values` (the mean of the middle two for an even count; NaN when empty).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

const DOCS_BEGIN: &str =
    "<!-- xtask bench: begin (generated by `cargo xtask bench --write-docs`) -->";
const DOCS_END: &str = "<!-- xtask bench: end -->";

/// Runs the command.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut full = false;
    let mut write_docs = false;
    let mut runs = 1usize;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--full" => full = true,
            "--write-docs" => write_docs = true,
            "--runs" => {
                runs = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--runs takes a positive count")?;
            }
            other => {
                return Err(format!(
                    "unknown option {other:?} (bench [--full] [--runs N] [--write-docs])"
                ));
            }
        }
    }
    let mut per_run: Vec<Vec<Measured>> = Vec::with_capacity(runs);
    for run in 1..=runs {
        if runs > 1 {
            println!("xtask: suite run {run} of {runs}");
        }
        per_run.push(run_suite(full)?);
    }
    let summaries: Vec<Summary> = (0..per_run.first().map_or(0, Vec::len))
        .filter_map(|i| {
            let of_scenario: Vec<Measured> = per_run
                .iter()
                .filter_map(|run| run.get(i))
                .copied()
                .collect();
            Summary::of(&of_scenario)
        })
        .collect();
    let memory = memory_figures()?;
    for s in &summaries {
        let spread = if s.runs > 1 {
            format!(
                " runs={} min_ns={:.0} max_ns={:.0} met_runs={}",
                s.runs, s.min_ns, s.max_ns, s.met_runs
            )
        } else {
            String::new()
        };
        println!(
            "{} median_ns={:.0} baseline_ns={:.0} ratio={:.2}{spread}",
            s.id, s.median_ns, s.baseline_ns, s.ratio
        );
    }
    for line in &memory {
        println!("{line}");
    }
    let table = table(&summaries);
    println!("\n{table}");
    if write_docs {
        write_docs_block(&summaries, &table, &memory, full, runs)?;
    }
    Ok(())
}

/// Runs every bench binary once and reads each scenario's figures.
fn run_suite(full: bool) -> Result<Vec<Measured>, String> {
    let (warm_up, measurement) = if full { ("3", "10") } else { ("1", "2") };
    let criterion_dir = target_dir().join("criterion");
    let mut measured = Vec::new();
    for binary in BINARIES {
        let mut command = cargo();
        command.args([
            "bench",
            "-p",
            binary.package,
            "--bench",
            binary.bench,
            "--",
            "--warm-up-time",
            warm_up,
            "--measurement-time",
            measurement,
        ]);
        crate::run_step(
            &format!("{} bench {}", binary.package, binary.bench),
            command,
        )?;
        for scenario in binary.scenarios {
            measured.push(Measured {
                id: scenario.id,
                median_ns: median_ns(&criterion_dir, scenario.bench)?,
                baseline_ns: median_ns(&criterion_dir, scenario.baseline)?,
                budget_ns: scenario.budget_ns,
                reference_ns: scenario.reference_ns,
            });
        }
    }
    Ok(measured)
}

/// Runs the memory benchmark (`tools-pipeline/benches/alloc.rs`) and returns its
/// `key=value` lines: allocations per call of scenario a and the heap of 100 000 tools.
fn memory_figures() -> Result<Vec<String>, String> {
    let mut command = cargo();
    command.args(["bench", "-p", "tools-pipeline", "--bench", "alloc"]);
    println!("xtask: running tools-pipeline bench alloc");
    let output = command
        .output()
        .map_err(|e| format!("cannot start the alloc bench: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the alloc bench failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains('='))
        .map(str::to_owned)
        .collect())
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                project_root().join(dir)
            }
        })
        .unwrap_or_else(|| project_root().join("target"))
}

/// The median point estimate (ns) criterion wrote for `bench`.
fn median_ns(criterion_dir: &Path, bench: &str) -> Result<f64, String> {
    let path = criterion_dir.join(bench).join("new").join("estimates.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let estimates: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    estimates
        .pointer("/median/point_estimate")
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("{}: no median point estimate", path.display()))
}

/// A duration in the unit that reads best.
fn human(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if ns >= 1_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The summary table; with several runs, the range of the runs' medians and how many runs
/// met the budget.
fn table(summaries: &[Summary]) -> String {
    let several = summaries.iter().any(|s| s.runs > 1);
    let mut out = if several {
        String::from(
            "| scenario | median | range of the runs | bare baseline | ratio | budget | met | TypeScript reference | ahead of it |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        )
    } else {
        String::from(
            "| scenario | median | bare baseline | ratio | budget | met | TypeScript reference | ahead of it |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        )
    };
    for s in summaries {
        let met = if s.meets_budget() { "yes" } else { "**no**" };
        let range = if several {
            format!("{}–{} | ", human(s.min_ns), human(s.max_ns))
        } else {
            String::new()
        };
        let met = if several {
            format!("{met} ({} of {} runs)", s.met_runs, s.runs)
        } else {
            met.to_owned()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {range}{} | {:.2}× | ≤ {} | {met} | {} | {:.0}× |",
            s.id,
            human(s.median_ns),
            human(s.baseline_ns),
            s.ratio,
            human(s.budget_ns),
            human(s.reference_ns),
            s.reference_ns / s.median_ns
        );
    }
    out
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!(
        "{cores} cores ({cpu}), {}, {}",
        command_output("rustc", &["-V"]),
        command_output("uname", &["-sr"])
    )
}

fn write_docs_block(
    measured: &[Summary],
    table: &str,
    memory: &[String],
    full: bool,
    runs: usize,
) -> Result<(), String> {
    let path = project_root().join("docs").join("benchmarks.md");
    let doc = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let unmet: Vec<&str> = measured
        .iter()
        .filter(|m| !m.meets_budget())
        .map(|m| m.id)
        .collect();
    let mut block = String::new();
    let _ = writeln!(block, "{DOCS_BEGIN}");
    let options = format!(
        "{}{}",
        if full { " --full" } else { "" },
        if runs > 1 {
            format!(" --runs {runs}")
        } else {
            String::new()
        }
    );
    let what = if runs > 1 {
        format!(
            "{runs} runs of the suite, one after the other, finished {}",
            command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"])
        )
    } else {
        format!(
            "Run of {}",
            command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"])
        )
    };
    let _ = writeln!(
        block,
        "{what} on {}; `cargo xtask bench{options}` (criterion medians; the ratio is over the \
         bare `tower::service_fn` baseline measured by the same binary in the same run{}).\n",
        machine(),
        if runs > 1 {
            "; each figure is the median over the runs, the ratio the median of the same-run \
             ratios, and \"met\" is judged on the median"
        } else {
            ""
        }
    );
    block.push_str(table);
    let _ = writeln!(
        block,
        "\nBudgets not met{}: {}.",
        if runs > 1 {
            " (by the median)"
        } else {
            " in this run"
        },
        if unmet.is_empty() {
            "none".to_owned()
        } else {
            unmet.join(", ")
        }
    );
    let _ = writeln!(
        block,
        "\nMemory (`cargo bench -p tools-pipeline --bench alloc`, counted by `dhat`): \
         `bytes_per_call`/`blocks_per_call` are the heap bytes and allocations of one call \
         of scenario a, beside the bare baseline's (`alloc_a_read`: the same call when the host \
         also reads the content, which a text output makes on first read; `alloc_a_snapshot`: \
         the same call with its arguments handed over as a lossless snapshot, as a host's \
         provider parse hands them, instead of cloned from a `Value`); \
         `heap_bytes`/`rss_bytes` are the live heap \
         and the resident-memory growth of 100 000 registered tools (with their view and \
         projection).\n\n```text"
    );
    for line in memory {
        let _ = writeln!(block, "{line}");
    }
    let _ = writeln!(block, "```");
    let _ = writeln!(block, "{DOCS_END}");
    let updated = match (doc.find(DOCS_BEGIN), doc.find(DOCS_END)) {
        (Some(begin), Some(end)) if end > begin => {
            let end = end + DOCS_END.len();
            let rest = doc[end..].strip_prefix('\n').unwrap_or(&doc[end..]);
            format!("{}{block}{rest}", &doc[..begin])
        }
        _ => match doc.find("\n## ") {
            Some(at) => format!("{}\n## Summary\n\n{block}{}", &doc[..at], &doc[at..]),
            None => format!("{doc}\n## Summary\n\n{block}"),
        },
    };
    std::fs::write(&path, updated).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("xtask: wrote the summary block of {}", path.display());
    Ok(())
}

#[cfg(test)]
#[path = "bench_tests.rs"]
mod tests;
