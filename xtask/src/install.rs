//! Pinned third-party tools installed under the target folder: npm packages into a prefix,
//! PyPI packages into a virtual environment. Each install leaves a stamp of what it
//! installed, so an unchanged pin list is not installed twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Cargo target folder (`CARGO_TARGET_DIR` when set).
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        })
        .unwrap_or_else(|| root.join("target"))
}

/// `name@version` npm packages installed into `prefix` (its `node_modules`).
pub(crate) fn npm(prefix: &Path, packages: &[(&str, &str)]) -> Result<(), String> {
    let specs: Vec<String> = packages.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    if stamped(prefix, &specs) {
        return Ok(());
    }
    println!(
        "xtask: installing {} into {}",
        specs.join(" "),
        prefix.display()
    );
    create_dir(prefix)?;
    let mut command = Command::new("npm");
    command
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--no-save", "--loglevel=error"])
        .args(&specs);
    let output = output_of(command, "npm")?;
    if !output.status.success() {
        return Err(format!(
            "npm install {} failed:\n{}",
            specs.join(" "),
            text_of(&output)
        ));
    }
    stamp(prefix, &specs)
}

/// `name==version` PyPI packages installed into the virtual environment `venv` (created
/// with `python3 -m venv` when missing); returns the environment's Python.
pub(crate) fn pip(venv: &Path, packages: &[(&str, &str)]) -> Result<PathBuf, String> {
    let python = venv.join("bin/python");
    let specs: Vec<String> = packages.iter().map(|(n, v)| format!("{n}=={v}")).collect();
    if python.is_file() && stamped(venv, &specs) {
        return Ok(python);
    }
    println!(
        "xtask: installing {} into {}",
        specs.join(" "),
        venv.display()
    );
    if !python.is_file() {
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(venv);
        let output = output_of(create, "python3 -m venv")?;
        if !output.status.success() {
            return Err(format!(
                "python3 -m venv {} failed:\n{}",
                venv.display(),
                text_of(&output)
            ));
        }
    }
    let mut command = Command::new(&python);
    command
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .args(&specs);
    let output = output_of(command, "pip")?;
    if !output.status.success() {
        return Err(format!(
            "pip install {} failed:\n{}",
            specs.join(" "),
            text_of(&output)
        ));
    }
    stamp(venv, &specs)?;
    Ok(python)
}

const STAMP: &str = ".xtask-installed";

fn stamped(dir: &Path, specs: &[String]) -> bool {
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|text| text == specs.join("\n"))
}

fn stamp(dir: &Path, specs: &[String]) -> Result<(), String> {
    let path = dir.join(STAMP);
    std::fs::write(&path, specs.join("\n"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `command` and captures its output.
pub(crate) fn output_of(mut command: Command, name: &str) -> Result<Output, String> {
    command
        .output()
        .map_err(|e| format!("cannot start {name}: {e} (is it installed and on PATH?)"))
}

/// Stdout then stderr, as text.
pub(crate) fn text_of(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

/// `mkdir -p`.
pub(crate) fn create_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}
