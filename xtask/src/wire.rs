//! `cargo xtask wire-check`: the provider adapters' JSON (the requests the `openai_turn`,
//! `anthropic_turn` and `search_turn` examples print) validated by the official Python SDKs' own types,
//! `openai` and `anthropic` at pinned versions, installed under `target/wire-check`.

use std::process::Command;

use crate::install::{self, output_of, target_dir, text_of};
use crate::{cargo, project_root, run_step};

/// The SDKs whose pydantic types the JSON is checked against.
const PYPI: [(&str, &str); 2] = [("openai", "3.57.0"), ("anthropic", "2.15.0")];

/// `cargo xtask wire-check`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!("wire-check takes no arguments (got {arg:?})"));
    }
    let root = project_root();
    let work = target_dir(&root).join("wire-check");
    let python = install::pip(&work.join("venv"), &PYPI)?;
    let mut files = Vec::new();
    for (name, example, extra) in [
        ("responses", "openai_turn", None),
        ("chat", "openai_turn", Some("--chat")),
        ("anthropic", "anthropic_turn", None),
        ("search", "search_turn", None),
    ] {
        let mut command = cargo();
        command.args(["run", "-q", "-p", "tools-runtime", "--example", example]);
        if let Some(extra) = extra {
            command.args(["--", extra]);
        }
        let output = output_of(command, "cargo run")?;
        if !output.status.success() {
            return Err(format!(
                "the {example} example failed:\n{}",
                text_of(&output)
            ));
        }
        let path = work.join(format!("{name}.json"));
        std::fs::write(&path, &output.stdout)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        files.push(path);
    }
    let mut check = Command::new(&python);
    check
        .arg(root.join("crates/tools-runtime/tests/wire/check.py"))
        .args(&files);
    run_step("crates/tools-runtime/tests/wire/check.py", check)
}
