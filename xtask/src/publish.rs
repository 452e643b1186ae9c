//! `cargo xtask publish-check`: proves the workspace can be published.
//!
//! 1. `cargo package --workspace` packages every published crate in dependency order and
//!    builds each from its package alone, against the packages of the crates below it (a
//!    local registry that cargo overlays on crates.io), so a missing file, a path-only
//!    dependency or a manifest error fails here and not at release time.
//! 2. The public API of every published crate is compared with the last release tag
//!    (`v*`) by `cargo-semver-checks`, installed (pinned) when it is missing. Before the
//!    first tag there is no baseline, and the step says so.

use std::process::Command;

use crate::{cargo, project_root, run_step};

/// The crates that are never published (tests, examples, the development commands).
const UNPUBLISHED: [&str; 3] = ["tools-tests", "quickstart", "xtask"];

/// The pinned `cargo-semver-checks`.
const SEMVER_CHECKS_VERSION: &str = "0.47.0";

/// Runs the check.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let no_verify = args.iter().any(|a| a == "--no-verify");
    let mut package = cargo();
    package.args(["package", "--workspace", "--locked"]);
    for name in UNPUBLISHED {
        package.args(["--exclude", name]);
    }
    if no_verify {
        package.arg("--no-verify");
    }
    // A check of the tree as it is: uncommitted changes are packaged too.
    package.arg("--allow-dirty");
    run_step("cargo package --workspace", package)?;
    semver_checks()
}

/// The last release tag, if any.
fn last_release_tag() -> Option<String> {
    let output = Command::new("git")
        .args(["describe", "--tags", "--abbrev=0", "--match", "v*"])
        .current_dir(project_root())
        .output()
        .ok()?;
    let tag = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !tag.is_empty()).then_some(tag)
}

fn semver_checks() -> Result<(), String> {
    let Some(tag) = last_release_tag() else {
        println!(
            "xtask: no release tag (v*) yet: the public API has no baseline to be compared \
             with; cargo-semver-checks runs from the first tag on"
        );
        return Ok(());
    };
    let installed = cargo()
        .args(["semver-checks", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let mut install = cargo();
        install.args([
            "install",
            "cargo-semver-checks",
            "--locked",
            "--version",
            SEMVER_CHECKS_VERSION,
        ]);
        run_step("cargo install cargo-semver-checks", install)?;
    }
    let mut check = cargo();
    check.args([
        "semver-checks",
        "check-release",
        "--workspace",
        "--baseline-rev",
        &tag,
    ]);
    for name in UNPUBLISHED {
        check.args(["--exclude", name]);
    }
    run_step(&format!("cargo semver-checks against {tag}"), check)
}
