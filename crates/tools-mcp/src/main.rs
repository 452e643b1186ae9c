//! `tools-mcp gateway --config FILE [--http ADDR] [--stateless] [--allow-host NAME]…
//! [--allow-origin ORIGIN]… [--max-sessions N] [--session-idle-timeout DURATION]`:
//! imports the MCP servers a TOML file names, applies its policy and budgets, and serves the
//! result to one MCP client on stdio (default) or to many over streamable HTTP at
//! `http://ADDR/mcp`. Logs go to stderr (`RUST_LOG` filters them; default `warn`).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;
use tools_mcp::HttpOptions;
use tools_mcp::gateway::{Gateway, GatewayConfig};

const USAGE: &str = "usage: tools-mcp gateway --config FILE [--http ADDR] [--stateless]
         [--allow-host NAME]... [--allow-origin ORIGIN]...
         [--max-sessions N] [--session-idle-timeout DURATION]

Imports the MCP servers named in FILE (TOML), applies its policy and budgets, and serves
the tools to an MCP client: on stdin/stdout by default, or over streamable HTTP at
http://ADDR/mcp with --http:
  --stateless              no sessions, for load balancers
  --allow-host NAME        accept this Host header besides loopback (and its origins)
  --allow-origin ORIGIN    accept this Origin header besides loopback ones
                           (https://app.example, https://app.example:8443, ...:*)
  --max-sessions N         at most N sessions open at once (default 1000)
  --session-idle-timeout D close a session idle for D (default 5m)
See the tools-mcp README for the file format.";

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
            "--allow-origin" => match args.next() {
                Some(origin) => match HttpOptions::check_origin(&origin) {
                    Ok(()) => options.allowed_origins.push(origin),
                    Err(why) => return usage(&format!("--allow-origin: {why}")),
                },
                None => return usage("--allow-origin needs an origin such as https://app.example"),
            },
            "--max-sessions" => {
                match args
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                {
                    Some(n) => options.max_sessions = n,
                    None => return usage("--max-sessions needs a positive number"),
                }
            }
            "--session-idle-timeout" => {
                let parsed = args
                    .next()
                    .and_then(|d| humantime::parse_duration(&d).ok())
                    .filter(|d| !d.is_zero());
                match parsed {
                    Some(d) => options.session_idle_timeout = Some(d),
                    None => return usage("--session-idle-timeout needs a duration such as 5m"),
                }
            }
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn args(line: &str) -> Result<Args, (String, bool)> {
        parse(line.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn the_http_bounds_have_their_defaults() {
        let parsed = args("gateway --config g.toml --http 127.0.0.1:8080").unwrap();
        assert_eq!(parsed.options.max_sessions, tools_mcp::DEFAULT_MAX_SESSIONS);
        assert_eq!(
            parsed.options.session_idle_timeout,
            Some(tools_mcp::DEFAULT_SESSION_IDLE_TIMEOUT)
        );
        assert!(parsed.options.allowed_origins.is_empty());
        assert_eq!(parsed.options.allowed_hosts, None);
    }

    #[test]
    fn the_http_bounds_are_set_by_flags() {
        let parsed = args(
            "gateway --config g.toml --allow-origin https://app.example \
             --allow-origin http://localhost:* --max-sessions 3 --session-idle-timeout 90s \
             --allow-host gw.example",
        )
        .unwrap();
        assert_eq!(
            parsed.options.allowed_origins,
            ["https://app.example", "http://localhost:*"]
        );
        assert_eq!(parsed.options.max_sessions, 3);
        assert_eq!(
            parsed.options.session_idle_timeout,
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            parsed.options.allowed_hosts.as_deref(),
            Some(&["gw.example", "localhost", "127.0.0.1", "::1"].map(str::to_owned)[..])
        );
    }

    #[test]
    fn bad_http_bounds_are_usage_errors() {
        for (line, needle) in [
            ("gateway --config g --allow-origin null", "null"),
            (
                "gateway --config g --allow-origin app.example",
                "app.example",
            ),
            ("gateway --config g --allow-origin", "--allow-origin"),
            ("gateway --config g --max-sessions 0", "--max-sessions"),
            ("gateway --config g --max-sessions lots", "--max-sessions"),
            (
                "gateway --config g --session-idle-timeout 0s",
                "--session-idle-timeout",
            ),
            (
                "gateway --config g --session-idle-timeout soon",
                "--session-idle-timeout",
            ),
        ] {
            let Err((message, true)) = args(line) else {
                panic!("{line:?} accepted");
            };
            assert!(message.contains(needle), "{line:?}: {message}");
        }
    }
}
