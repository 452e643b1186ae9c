//! `cargo xtask`: the workspace's development commands.
//!
//! - `cargo xtask test [ARGS…]`: the README's test command: makes sure the Code Mode
//!   sandbox's tool (bubblewrap) is installed (with `apt-get` when it is missing and this
//!   runs as root; otherwise it says what to install), then `cargo test --workspace ARGS…`,
//!   then (without ARGS) the MCP black-box suite (`mcp-blackbox`).
//! - `cargo xtask check [--skip-test]`: `cargo fmt --all --check`, `cargo clippy --workspace
//!   --all-targets --all-features -- -D warnings`, `cargo doc --no-deps --workspace` with
//!   warnings denied, `cargo test --workspace` (and the
//!   optional features' tests), then `cargo deny check bans licenses sources` when
//!   cargo-deny is installed (skipped, with a note, when not).
//! - `cargo xtask codegen [--check]`: regenerates the committed generated files
//!   (`docs/error-codes.md`, `docs/tool-catalog.md`); with `--check`, fails instead of
//!   writing when one is stale.
//! - `cargo xtask sdk --lang typescript|python --catalog FILE.json`: prints the Code Mode SDK
//!   declarations of a tool catalog.
//! - `cargo xtask sdk-check`: proves the SDK with `tsc --strict` and `mypy --strict`.
//! - `cargo xtask wire-check`: the provider adapters' JSON (the `openai_turn` and
//!   `anthropic_turn` examples' requests) validated by the `openai` and `anthropic` Python
//!   SDKs' pydantic types.
//! - `cargo xtask mcp-blackbox [--bench]`: the MCP gateway and server front driven by the
//!   Python SDK's client and the MCP Inspector CLI, against `mcp-server-time` and
//!   `server-everything` (pinned, installed under `target/mcp-blackbox`); part of `test`.
//! - `cargo xtask publish-check [--no-verify]`: `cargo package --workspace` (every published
//!   crate packaged and built from its package, in dependency order), then
//!   `cargo-semver-checks` against the last release tag (`v*`) once there is one.
//! - `cargo xtask bench [--full] [--runs N] [--write-docs]`: runs every benchmark scenario (N times), prints
//!   `<id> median_ns=<n> baseline_ns=<n> ratio=<n>` lines and a table, and with
//!   `--write-docs` rewrites the summary block of `docs/benchmarks.md`.
// A command-line tool talks to its user on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_macros)]
#![forbid(unsafe_code)]

mod bench;
mod codegen;
mod install;
mod mcp;
mod publish;
mod sdk;
mod wire;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("check") => check(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("codegen") => codegen::run(args.iter().skip(1).any(|a| a == "--check")),
        Some("sdk") => sdk::sdk(&args[1..]),
        Some("sdk-check") => sdk::sdk_check(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("mcp-blackbox") => mcp::run(&args[1..]),
        Some("wire-check") => wire::run(&args[1..]),
        Some("publish-check") => publish::run(&args[1..]),
        Some("help" | "--help" | "-h") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command {other:?}\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test [ARGS...]        install the Code Mode sandbox (bubblewrap) when missing, then
                        cargo test --workspace ARGS... (and, without ARGS, mcp-blackbox)
  check [--skip-test]   fmt --check, clippy -D warnings, doc -D warnings, test --workspace,
                        deny (when installed)
  codegen [--check]     regenerate committed generated files (--check: fail when stale)
  sdk --lang L --catalog FILE.json [--section] [--allow-unsupported]
                        print the Code Mode SDK (L: typescript|python) of a tool catalog
  sdk-check             compile a 40+ tool SDK with tsc --strict and mypy --strict
  wire-check            validate the provider adapters' JSON with the openai and
                        anthropic Python SDKs' own types (pinned, target/wire-check)
  mcp-blackbox [--bench]
                        drive the MCP gateway with real MCP clients and servers (pinned
                        PyPI and npm installs under target/mcp-blackbox); --bench: measure
                        its overhead against a direct call, over stdio and over HTTP
                        beside mcp-proxy
  publish-check [--no-verify]
                        cargo package --workspace (each crate built from its package, in
                        dependency order), then cargo-semver-checks against the last v* tag
  bench [--full] [--runs N] [--write-docs]
                        run every benchmark scenario (the whole suite N times: medians over
                        the runs); print `<id> median_ns= baseline_ns= ratio=` lines and a
                        table (--write-docs: update docs/benchmarks.md)";

/// The workspace root.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(project_root());
    command
}

fn run_step(name: &str, mut command: Command) -> Result<(), String> {
    println!("xtask: running {name}");
    let status = command
        .status()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// The tool the Code Mode sandbox is built with (the Python and confined TypeScript
/// runtimes refuse to start without it, and their tests run inside it).
const SANDBOX_TOOL: &str = "bwrap";

/// Installs bubblewrap when it is missing: with `apt-get` when running as root, else an
/// error that says what to install.
fn ensure_sandbox_tool() -> Result<(), String> {
    let found = Command::new(SANDBOX_TOOL)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.trim_ascii() == b"0");
    let missing = "the Code Mode sandbox needs bubblewrap (`bwrap`), which is not installed: \
                   install the `bubblewrap` package (e.g. `sudo apt-get install bubblewrap`)";
    if !root {
        return Err(missing.to_owned());
    }
    println!("xtask: installing bubblewrap (the Code Mode sandbox) with apt-get");
    let mut update = Command::new("apt-get");
    update.args(["update", "-qq"]);
    run_step("apt-get update", update).map_err(|e| format!("{missing}; {e}"))?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-qq", "bubblewrap"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run_step("apt-get install bubblewrap", install).map_err(|e| format!("{missing}; {e}"))
}

/// `cargo test --workspace` with the sandbox's tool in place, and with the optional
/// `schemars` bridge of `tools-schema` compiled in so that its tests run too.
fn test(args: &[String]) -> Result<(), String> {
    ensure_sandbox_tool()?;
    let mut test = cargo();
    test.args(["test", "--workspace", "--features", "tools-schema/schemars"])
        .args(args);
    run_step(
        "cargo test --workspace --features tools-schema/schemars",
        test,
    )?;
    // A filtered run (`cargo xtask test -p x`, `-- name`) is an iteration, not the suite.
    if args.is_empty() && mcp::present(&project_root()) {
        mcp::run(&[])?;
    }
    Ok(())
}

fn check(args: &[String]) -> Result<(), String> {
    let skip_test = args.iter().any(|a| a == "--skip-test");
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run_step("cargo fmt --all --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]);
    run_step(
        "cargo clippy --workspace --all-targets --all-features -- -D warnings",
        clippy,
    )?;

    // Every doc link resolves and every doc builds (`broken_intra_doc_links` is denied).
    let mut doc = cargo();
    doc.args(["doc", "--no-deps", "--workspace", "-q"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run_step(
        "cargo doc --no-deps --workspace (RUSTDOCFLAGS=-D warnings)",
        doc,
    )?;

    if skip_test {
        println!("xtask: skipping cargo test --workspace (--skip-test)");
    } else {
        test(&[])?;
        let mut features = cargo();
        features.args(["test", "-p", "tools-presentation", "--all-features"]);
        run_step("cargo test -p tools-presentation --all-features", features)?;
    }

    let deny_installed = Command::new("cargo-deny")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if deny_installed {
        let mut deny = cargo();
        deny.args(["deny", "check", "bans", "licenses", "sources"]);
        run_step("cargo deny check bans licenses sources", deny)?;
    } else {
        println!(
            "xtask: cargo-deny is not installed; skipping `cargo deny check bans licenses sources` \
             (install it with `cargo install cargo-deny --locked`)"
        );
    }
    println!("xtask: check passed");
    Ok(())
}
