//! Tests of `cargo xtask bench`: the catalogue, the table and the aggregation of runs.

use super::*;

#[test]
fn every_scenario_of_the_catalogue_is_measured() {
    let ids: Vec<&str> = BINARIES
        .iter()
        .flat_map(|b| b.scenarios.iter().map(|s| s.id))
        .collect();
    for id in [
        "a", "a2", "b", "b2", "c", "d", "e1", "e1b", "e2", "e3", "f1", "f2", "f3", "f4",
    ] {
        assert!(ids.contains(&id), "scenario {id} is not measured");
    }
}

#[test]
fn every_bench_id_exists_in_its_bench_source() {
    for binary in BINARIES {
        let source = project_root()
            .join("crates")
            .join(binary.package)
            .join("benches")
            .join(format!("{}.rs", binary.bench));
        let text = std::fs::read_to_string(&source).unwrap_or_default();
        for scenario in binary.scenarios {
            for id in [scenario.bench, scenario.baseline] {
                let name = id.rsplit('/').next().unwrap_or(id);
                // Names built with format! keep their fixed prefix in the source.
                let prefix = name.split("_1_").next().unwrap_or(name);
                let prefix = prefix.split("_2_").next().unwrap_or(prefix);
                assert!(
                    text.contains(prefix),
                    "{}: no bench named like {name:?}",
                    source.display()
                );
            }
        }
    }
}

fn measured(id: &'static str, median_ns: f64, baseline_ns: f64, budget_ns: f64) -> Measured {
    Measured {
        id,
        median_ns,
        baseline_ns,
        budget_ns,
        reference_ns: 300_000.0,
    }
}

#[test]
fn the_table_marks_unmet_budgets() {
    let summaries: Vec<Summary> = [
        measured("a", 1_500.0, 150.0, 2_000.0),
        measured("e2", 12_000.0, 150.0, 10_000.0),
    ]
    .into_iter()
    .filter_map(|m| Summary::of(&[m]))
    .collect();
    let table = table(&summaries);
    assert!(
        table.contains("| a | 1.50 µs | 150 ns | 10.00× | ≤ 2.00 µs | yes | 300.00 µs | 200× |")
    );
    assert!(table.contains("| e2 | 12.00 µs | 150 ns | 80.00× | ≤ 10.00 µs | **no** |"));
}

#[test]
fn several_runs_report_medians_ranges_and_runs_that_met() {
    // Three runs of one scenario; the second is slowed by load.
    let runs = [
        measured("a", 1_800.0, 150.0, 2_000.0),
        measured("a", 3_000.0, 300.0, 2_000.0),
        measured("a", 1_900.0, 100.0, 2_000.0),
    ];
    let summary = Summary::of(&runs).expect("three runs");
    assert_eq!(summary.median_ns, 1_900.0);
    assert_eq!(summary.baseline_ns, 150.0);
    // The median of the same-run ratios (12, 10, 19), not a ratio of medians.
    assert_eq!(summary.ratio, 12.0);
    assert_eq!((summary.min_ns, summary.max_ns), (1_800.0, 3_000.0));
    assert_eq!((summary.met_runs, summary.runs), (2, 3));
    let table = table(&[summary]);
    assert!(
        table.contains("| a | 1.90 µs | 1.80 µs–3.00 µs | 150 ns | 12.00× | ≤ 2.00 µs | yes (2 of 3 runs) | 300.00 µs | 158× |"),
        "{table}"
    );
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert!(median(&[]).is_nan());
}
