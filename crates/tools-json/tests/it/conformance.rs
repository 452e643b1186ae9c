//! The official JSON-Schema-Test-Suite (draft 2020-12) files for the subset's keywords, run
//! as the suite's README says (`tests/data/json-schema-test-suite/`; where each batch comes
//! from is in its README).
//!
//! Every group's schema is compiled as given (its root `$schema` is an annotation of the
//! subset, docs/decisions.md, entry 28). A group the support check rejects must be rejected
//! for a construct outside the subset (only schema-family violations); a group it accepts
//! must validate every test exactly as the suite says, through both `validate` and
//! `is_valid`. The test prints, per file, the groups accepted and rejected and the tests
//! passed.

use std::path::Path;

use tools_json::{CompiledSchema, ViolationFamily};

use crate::support::{data_dir, parse};

/// Per-file totals.
#[derive(Default)]
struct Tally {
    accepted: usize,
    rejected: usize,
    passed: usize,
}

fn run_file(file: &Path, failures: &mut Vec<String>) -> Tally {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_owned();
    let mut tally = Tally::default();
    let groups = parse(&std::fs::read_to_string(file).expect("read suite file"));
    for group in groups.as_array().expect("groups") {
        let description = group["description"].as_str().unwrap_or("?");
        match CompiledSchema::compile(&group["schema"]) {
            Err(err) => {
                tally.rejected += 1;
                assert!(!err.violations().is_empty());
                for v in err.violations() {
                    if v.kind.family() != ViolationFamily::Schema {
                        failures.push(format!("{name} / {description}: rejected by {v}"));
                    }
                }
            }
            Ok(schema) => {
                tally.accepted += 1;
                for test in group["tests"].as_array().expect("tests") {
                    let expected = test["valid"].as_bool().expect("valid");
                    let violations = schema.validate(&test["data"], "value");
                    if violations.is_empty() == expected
                        && schema.is_valid(&test["data"]) == expected
                    {
                        tally.passed += 1;
                    } else {
                        failures.push(format!(
                            "{name} / {description} / {}: expected valid={expected}, got {violations}",
                            test["description"]
                        ));
                    }
                }
            }
        }
    }
    println!(
        "{name:<28} groups accepted {:>2}, rejected {:>2}; tests passed {:>3}",
        tally.accepted, tally.rejected, tally.passed
    );
    tally
}

fn suite_files(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = data_dir().join("json-schema-test-suite").join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_official_suite_agrees_wherever_the_subset_accepts_a_schema() {
    let files = suite_files("draft2020-12");
    assert!(files.len() >= 24, "suite files missing");
    let mut failures = Vec::new();
    let mut total = Tally::default();
    for file in &files {
        let tally = run_file(file, &mut failures);
        total.accepted += tally.accepted;
        total.rejected += tally.rejected;
        total.passed += tally.passed;
    }
    println!(
        "JSON-Schema-Test-Suite draft 2020-12: {} files, {} groups accepted, {} rejected; {} tests passed, {} failed",
        files.len(),
        total.accepted,
        total.rejected,
        total.passed,
        failures.len()
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    assert!(total.accepted > 0 && total.passed > 0);
}

/// Every group of the bound keywords' own files is accepted: a bound is never refused for
/// being a bound (groups that mix in keywords outside the subset are listed here by name).
#[test]
fn every_group_of_the_bound_keywords_is_accepted() {
    let mixed = [
        // `items`/`prefixItems` as boolean or tuple forms, outside the subset.
        ("uniqueItems.json", "uniqueItems with an array of items"),
        (
            "uniqueItems.json",
            "uniqueItems with an array of items and additionalItems=false",
        ),
        (
            "uniqueItems.json",
            "uniqueItems=false with an array of items",
        ),
        (
            "uniqueItems.json",
            "uniqueItems=false with an array of items and additionalItems=false",
        ),
    ];
    // Every bound keyword of the subset has its suite file here.
    let files = suite_files("draft2020-12");
    assert_eq!(tools_json::BOUND_KEYWORDS.len(), 13);
    for keyword in tools_json::BOUND_KEYWORDS {
        assert!(
            files.iter().any(|f| f.ends_with(format!("{keyword}.json"))),
            "no suite file for {keyword}"
        );
    }
    let mut refused = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let groups = parse(&std::fs::read_to_string(&file).expect("read"));
        for group in groups.as_array().expect("groups") {
            let description = group["description"].as_str().unwrap_or("?");
            let bound_file = tools_json::BOUND_KEYWORDS
                .iter()
                .chain(&["format"])
                .any(|k| name == format!("{k}.json"));
            if bound_file
                && !mixed.contains(&(name.as_str(), description))
                && let Err(err) = CompiledSchema::compile(&group["schema"])
            {
                refused.push(format!("{name} / {description}: {err}"));
            }
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
}

#[test]
fn the_optional_files_for_regexes_and_big_numbers_agree() {
    let mut failures = Vec::new();
    for file in suite_files("optional") {
        run_file(&file, &mut failures);
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

/// Entry 27 of docs/decisions.md against the whole suite: compiled as a foreign schema,
/// every group of every file (those the subset rejects included) accepts every instance the
/// suite calls valid (repairs only loosen), and a fully enforced schema agrees with the
/// suite on every test.
#[test]
fn foreign_schemas_never_refuse_what_the_suite_calls_valid() {
    let mut failures = Vec::new();
    let (mut groups, mut full, mut enforced_rejections) = (0, 0, 0);
    for file in suite_files("draft2020-12")
        .into_iter()
        .chain(suite_files("optional"))
    {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let parsed = parse(&std::fs::read_to_string(&file).expect("read"));
        for group in parsed.as_array().expect("groups") {
            groups += 1;
            let description = group["description"].as_str().unwrap_or("?");
            let schema = CompiledSchema::compile_foreign(&group["schema"]);
            full += usize::from(schema.is_fully_enforced());
            for test in group["tests"].as_array().expect("tests") {
                let expected = test["valid"].as_bool().expect("valid");
                let valid = schema.is_valid(&test["data"]);
                if !expected && !valid {
                    enforced_rejections += 1;
                }
                if (expected && !valid) || (schema.is_fully_enforced() && valid != expected) {
                    failures.push(format!(
                        "{name} / {description} / {}: expected valid={expected}, got {valid} (fully enforced: {})",
                        test["description"],
                        schema.is_fully_enforced()
                    ));
                }
            }
        }
    }
    println!(
        "foreign: {groups} groups, {full} fully enforced; {enforced_rejections} invalid instances still refused"
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
