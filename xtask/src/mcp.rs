//! `cargo xtask mcp-blackbox [--bench]`: the gateway and the server front driven by MCP
//! clients and servers nobody here wrote (the Python SDK's `ClientSession`, the MCP
//! Inspector CLI, `mcp-server-time`, `@modelcontextprotocol/server-everything`), installed
//! at pinned versions under `target/mcp-blackbox`. `--bench` then measures the gateway's
//! overhead against calling the same server directly, over stdio (`bench.py`) and over
//! streamable HTTP beside the npm proxy `mcp-proxy` (`bench_http.py`).

use std::path::Path;
use std::process::Command;

use crate::install::{self, target_dir};
use crate::{cargo, project_root, run_step};

/// PyPI: the official Python SDK (its `ClientSession` validates `structuredContent` against
/// `outputSchema`), the reference time server, and what `production.py` signs its test
/// issuer's JWTs with.
const PYPI: [(&str, &str); 4] = [
    ("mcp", "2.3.0"),
    ("mcp-server-time", "2026.10.19"),
    ("PyJWT", "2.15.1"),
    ("cryptography", "51.0.1"),
];
/// npm: the Inspector's CLI (0.15.0 is the last release that runs on Node 20; later ones
/// need Node 22), the reference "everything" server, and the most downloaded stdio-to-HTTP
/// MCP proxy, which `bench_http.py` sets beside the gateway (docs/benchmarks.md says how it
/// was chosen).
const NPM: [(&str, &str); 3] = [
    ("@modelcontextprotocol/inspector", "0.15.0"),
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
    ("mcp-proxy", "6.7.19"),
];

/// `cargo xtask mcp-blackbox [--bench]`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let bench = match args {
        [] => false,
        [flag] if flag == "--bench" => true,
        other => return Err(format!("mcp-blackbox takes only --bench (got {other:?})")),
    };
    let root = project_root();
    let target = target_dir(&root);
    let work = target.join("mcp-blackbox");
    let python = install::pip(&work.join("venv"), &PYPI)?;
    let node = work.join("node");
    install::npm(&node, &NPM)?;
    let mut build = cargo();
    build.args(["build", "-q", "-p", "tools-mcp", "--bin", "tools-mcp"]);
    run_step("cargo build -p tools-mcp", build)?;

    let modules = node.join("node_modules/@modelcontextprotocol");
    let script = |name: &str| root.join("crates/tools-mcp/tests/blackbox").join(name);
    let configure = |command: &mut Command| {
        command
            .env("TOOLS_MCP_BIN", target.join("debug/tools-mcp"))
            .env(
                "MCP_PYTHON_SERVER_TIME",
                work.join("venv/bin/mcp-server-time"),
            )
            .env(
                "MCP_EVERYTHING_JS",
                modules.join("server-everything/dist/index.js"),
            )
            .env(
                "MCP_INSPECTOR_JS",
                modules.join("inspector/cli/build/index.js"),
            )
            .env(
                "MCP_PROXY_JS",
                node.join("node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs"),
            )
            .current_dir(&root);
    };
    let mut blackbox = Command::new(&python);
    blackbox.arg(script("run.py"));
    configure(&mut blackbox);
    run_step("crates/tools-mcp/tests/blackbox/run.py", blackbox)?;
    let mut production = Command::new(&python);
    production.arg(script("production.py"));
    configure(&mut production);
    run_step("crates/tools-mcp/tests/blackbox/production.py", production)?;
    if bench {
        // Measured as shipped: the release build.
        let mut release = cargo();
        release.args([
            "build",
            "-q",
            "--release",
            "-p",
            "tools-mcp",
            "--bin",
            "tools-mcp",
        ]);
        run_step("cargo build --release -p tools-mcp", release)?;
        for name in ["bench.py", "bench_http.py"] {
            let mut measure = Command::new(&python);
            measure.arg(script(name));
            configure(&mut measure);
            measure.env("TOOLS_MCP_BIN", target.join("release/tools-mcp"));
            run_step(&format!("crates/tools-mcp/tests/blackbox/{name}"), measure)?;
        }
    }
    Ok(())
}

/// Whether the black-box suite's scripts are in this checkout.
pub(crate) fn present(root: &Path) -> bool {
    root.join("crates/tools-mcp/tests/blackbox/run.py")
        .is_file()
}
