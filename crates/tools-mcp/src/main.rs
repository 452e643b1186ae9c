//! `tools-mcp gateway --config FILE [--http ADDR] [--stateless] [--allow-host NAME]…`:
//! imports the MCP servers a TOML file names, applies its policy and budgets, and serves the
//! result to one MCP client on stdio (default) or to many over streamable HTTP at
//! `http://ADDR/mcp`. Logs go to stderr (`RUST_LOG` filters them; default `warn`).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;
use tools_mcp::HttpOptions;
use tools_mcp::gateway::{Gateway, GatewayConfig};

const USAGE: &str =
    "usage: tools-mcp gateway --config FILE [--http ADDR] [--stateless] [--allow-host NAME]...

Imports the MCP servers named in FILE (TOML), applies its policy and budgets, and serves
the tools to an MCP client: on stdin/stdout by default, or over streamable HTTP at
http://ADDR/mcp with --http (--stateless: no sessions, for load balancers; --allow-host:
accept this Host header besides loopback). See the tools-mcp README for the file format.";

struct Args {
    config: PathBuf,
    http: Option<String>,
    options: HttpOptions,
}

/// The arguments, or the message to print (and whether it is an error).
fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, (String, bool)> {
    let usage = |message: &str| Err((format!("{message}\n\n{USAGE}"), true));
    match args.next().as_deref() {
        Some("gateway") => {}
        Some("--help" | "-h" | "help") => return Err((USAGE.to_owned(), false)),
        Some("--version" | "-V") => {
            return Err((format!("tools-mcp {}", env!("CARGO_PKG_VERSION")), false));
        }
        Some(other) => return usage(&format!("unknown command {other:?}")),
        None => return usage("a command is required"),
    }
    let mut config = None;
    let mut http = None;
    let mut options = HttpOptions::default();
    let mut hosts: Vec<String> = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => match args.next() {
                Some(path) => config = Some(PathBuf::from(path)),
                None => return usage("--config needs a file"),
            },
            "--http" => match args.next() {
                Some(addr) => http = Some(addr),
                None => return usage("--http needs an address such as 127.0.0.1:8080"),
            },
            "--stateless" => options.stateless = true,
            "--allow-host" => match args.next() {
                Some(host) => hosts.push(host),
                None => return usage("--allow-host needs a host name"),
            },
            "--help" | "-h" => return Err((USAGE.to_owned(), false)),
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }
    if !hosts.is_empty() {
        hosts.extend(["localhost", "127.0.0.1", "::1"].map(str::to_owned));
        options.allowed_hosts = Some(hosts);
    }
    match config {
        Some(config) => Ok(Args {
            config,
            http,
            options,
        }),
        None => usage("--config FILE is required"),
    }
}

#[allow(clippy::print_stderr, clippy::print_stdout, clippy::disallowed_macros)]
fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err((message, is_error)) => {
            if is_error {
                eprintln!("{message}");
                return ExitCode::from(2);
            }
            println!("{message}");
            return ExitCode::SUCCESS;
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tools-mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tools-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), tools_mcp::Error> {
    let config = GatewayConfig::load(&args.config)?;
    let gateway = Gateway::start(&config).await?;
    match &args.http {
        None => gateway.serve_stdio().await,
        Some(addr) => {
            let shutdown = CancellationToken::new();
            let on_signal = shutdown.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                on_signal.cancel();
            });
            gateway.serve_http(addr, &args.options, shutdown).await
        }
    }
}
