//! The official JSON-Schema-Test-Suite (draft 2020-12) files for the subset's keywords, run
//! as the suite's README says (`tests/data/json-schema-test-suite/`, copied from `shared/conformance/`).
//!
//! Every schema of the suite declares its dialect with a root `$schema`, a keyword the subset
//! rejects (tool schemas never carry it; the golden files pin the rejection). Run as given,
//! the suite is therefore rejected whole, which proves nothing about validation. So the suite
//! runs twice: as given (every group must be rejected, naming `$schema` among unsupported
//! constructs), and with the root `$schema` removed, where accepted groups must validate
//! every test exactly as the suite says.

use tools_json::{CompiledSchema, ViolationFamily};

use crate::support::{data_dir, parse};

#[test]
fn the_official_suite_agrees_wherever_the_subset_accepts_a_schema() {
    let dir = data_dir().join("json-schema-test-suite/draft2020-12");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "suite files missing");

    let (mut accepted, mut rejected, mut passed) = (0, 0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let groups = parse(&std::fs::read_to_string(file).expect("read suite file"));
        for group in groups.as_array().expect("groups") {
            let description = group["description"].as_str().unwrap_or("?");
            let as_given = CompiledSchema::compile(&group["schema"]);
            let names_dialect = as_given.as_ref().err().is_some_and(|e| {
                e.violations()
                    .iter()
                    .any(|v| v.path.to_string() == "schema.$schema")
            });
            if group["schema"].get("$schema").is_some() && !names_dialect {
                failures.push(format!(
                    "{name} / {description}: `$schema` was not rejected"
                ));
            }
            let mut schema = group["schema"].clone();
            if let Some(map) = schema.as_object_mut() {
                map.shift_remove("$schema");
            }
            match CompiledSchema::compile(&schema) {
                Err(err) => {
                    rejected += 1;
                    // A rejection must name an unsupported construct: only support-check
                    // violations may appear.
                    for v in err.violations() {
                        if v.kind.family() != ViolationFamily::Schema {
                            failures.push(format!("{name} / {description}: rejected by {v}"));
                        }
                    }
                    assert!(!err.violations().is_empty());
                }
                Ok(schema) => {
                    accepted += 1;
                    for test in group["tests"].as_array().expect("tests") {
                        let expected = test["valid"].as_bool().expect("valid");
                        let violations = schema.validate(&test["data"], "value");
                        if violations.is_empty() == expected
                            && schema.is_valid(&test["data"]) == expected
                        {
                            passed += 1;
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
    }
    println!(
        "JSON-Schema-Test-Suite (root $schema removed): {} files, {accepted} groups accepted, \
         {rejected} rejected; {passed} tests passed, {} failed",
        files.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    assert!(accepted > 0 && passed > 0);
}
