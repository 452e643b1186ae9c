//! `tools-mcp gateway --config FILE [--check] [--http ADDR] [--insecure-no-auth]
//! [--stateless] [--allow-host NAME]… [--allow-origin ORIGIN]… [--max-sessions N]
//! [--session-idle-timeout DURATION]`: imports the MCP servers a TOML file names, applies
//! its identity, policy and budgets, and serves the result to one MCP client on stdio
//! (default) or to many over streamable HTTP at `http://ADDR/mcp`. Logs go to stderr
//! (`RUST_LOG` filters them; default `warn`).
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;
use tools_mcp::HttpOptions;
use tools_mcp::gateway::{Gateway, GatewayConfig};

const USAGE: &str = "usage: tools-mcp gateway --config FILE [--check] [--http ADDR]
         [--insecure-no-auth] [--stateless] [--allow-host NAME]... [--allow-origin ORIGIN]...
         [--max-sessions N] [--session-idle-timeout DURATION]

Imports the MCP servers named in FILE (TOML), applies its identity, policy and budgets,
and serves the tools to an MCP client: on stdin/stdout by default, or over streamable HTTP
at http://ADDR/mcp with --http (GET /healthz and /readyz answer without a token):
  --check                  check FILE and exit (0: valid; 1: the error, with its line)
  --insecure-no-auth       serve a non-loopback ADDR without [auth] (anyone who reaches
                           it calls every tool)
  --stateless              no sessions, for load balancers
  --allow-host NAME        accept this Host header besides loopback (and its origins)
  --allow-origin ORIGIN    accept this Origin header besides loopback ones
                           (https://app.example, https://app.example:8443, ...:*)
  --max-sessions N         at most N sessions open at once (default 1000)
  --session-idle-timeout D close a session idle for D (default 5m)
       tools-mcp pins approve NAME... --config FILE
See the tools-mcp README for the file format.";

struct Args {
    config: PathBuf,
    http: Option<String>,
    options: HttpOptions,
    check: bool,
    insecure_no_auth: bool,
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
    let (mut check, mut insecure_no_auth) = (false, false);
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
            "--check" => check = true,
            "--insecure-no-auth" => insecure_no_auth = true,
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
            check,
            insecure_no_auth,
        }),
        None => usage("--config FILE is required"),
    }
}

#[allow(clippy::print_stderr, clippy::print_stdout, clippy::disallowed_macros)]
fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1).peekable();
    if argv.peek().map(String::as_str) == Some("pins") {
        return pins(argv.skip(1));
    }
    let args = match parse(argv) {
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
    // The subscriber (and the exporter, whose HTTP client runs on a thread of its own)
    // start before the async runtime, and the exporter is flushed after it.
    let config = GatewayConfig::load(&args.config);
    let exporter = match init_tracing(config.as_ref().ok().and_then(|c| c.otel.as_ref())) {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("tools-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
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
    let served = match config {
        Ok(config) => runtime.block_on(serve(args, config)),
        Err(e) => Err(e),
    };
    drop(runtime);
    if let Some(exporter) = exporter {
        exporter.shutdown();
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tools-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The log subscriber (stderr, `RUST_LOG`, default `warn`), and the OTLP exporter when
/// `[otel]` or `OTEL_EXPORTER_OTLP_ENDPOINT` asks for one (feature `otel`).
#[cfg(feature = "otel")]
fn init_tracing(
    otel: Option<&tools_mcp::otel::OtelConfig>,
) -> Result<Option<tools_mcp::otel::Exporter>, tools_mcp::Error> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        );
    let from_env = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|key| std::env::var_os(key).is_some_and(|v| !v.is_empty()));
    let wanted = otel.cloned().or_else(|| from_env.then(Default::default));
    match wanted {
        None => {
            let _ = tracing_subscriber::registry().with(logs).try_init();
            Ok(None)
        }
        Some(config) => {
            let (exporter, layer) = tools_mcp::otel::Exporter::start(&config)?;
            // Spans at INFO and above go to the exporter whatever RUST_LOG says.
            let layer = layer.with_filter(tracing_subscriber::filter::LevelFilter::INFO);
            let _ = tracing_subscriber::registry()
                .with(logs)
                .with(layer)
                .try_init();
            Ok(Some(exporter))
        }
    }
}

/// The log subscriber (stderr, `RUST_LOG`, default `warn`).
#[cfg(not(feature = "otel"))]
fn init_tracing(
    _otel: Option<&tools_mcp::otel::OtelConfig>,
) -> Result<Option<tools_mcp::otel::Exporter>, tools_mcp::Error> {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    Ok(None)
}

#[allow(clippy::print_stderr, clippy::disallowed_macros)]
async fn serve(args: Args, config: GatewayConfig) -> Result<(), tools_mcp::Error> {
    if args.check {
        eprintln!(
            "tools-mcp: {} is valid ({} servers)",
            args.config.display(),
            config.servers.len()
        );
        return Ok(());
    }
    if args.http.is_none()
        && config
            .audit
            .as_ref()
            .is_some_and(|a| a.target == tools_mcp::audit::AuditTarget::Stdout)
    {
        return Err(tools_mcp::Error::Config {
            path: args.config.display().to_string(),
            message: "`[audit] path = \"-\"` writes to stdout, which is the MCP channel over stdio; name a file".into(),
        });
    }
    if args.http.is_some() && args.options.stateless && config.defers() {
        return Err(tools_mcp::Error::Config {
            path: args.config.display().to_string(),
            message: "deferred tools are loaded per MCP session, and --stateless serves no sessions: a tool `search_tools` found could never be called; serve with sessions, or defer nothing".into(),
        });
    }
    let gateway = std::sync::Arc::new(Gateway::start(&config).await?);
    reload_on_hangup(std::sync::Arc::clone(&gateway), args.config.clone());
    let served = match &args.http {
        None => gateway.serve_stdio().await,
        Some(addr) => serve_http(&gateway, addr, &args).await,
    };
    // Upstream children get their input closed and a moment to exit before any signal.
    gateway.shutdown().await;
    served
}

/// Serves HTTP until `SIGINT` or `SIGTERM`.
#[allow(clippy::print_stderr, clippy::disallowed_macros)]
async fn serve_http(gateway: &Gateway, addr: &str, args: &Args) -> Result<(), tools_mcp::Error> {
    let listener = gateway.bind(addr, args.insecure_no_auth).await?;
    if let Ok(local) = listener.local_addr() {
        let auth = if gateway.authenticator().is_some() {
            "with [auth]"
        } else {
            "WITHOUT authentication"
        };
        eprintln!(
            "tools-mcp: listening on http://{local}{} ({auth})",
            args.options.path
        );
    }
    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => {
                    term.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = terminate => {}
        }
        on_signal.cancel();
    });
    gateway
        .serve_http_on(listener, &args.options, shutdown)
        .await
}

const PINS_USAGE: &str = "usage: tools-mcp pins approve NAME... --config FILE

Approves the changed definition of each withheld tool NAME in the pin file that FILE's
[pins] names; a running gateway uses it after SIGHUP.";

/// `tools-mcp pins approve NAME... --config FILE`.
#[allow(clippy::print_stderr, clippy::print_stdout, clippy::disallowed_macros)]
fn pins(mut args: impl Iterator<Item = String>) -> ExitCode {
    let usage = |message: &str| {
        eprintln!("{message}\n\n{PINS_USAGE}");
        ExitCode::from(2)
    };
    if args.next().as_deref() != Some("approve") {
        return usage("`pins` has one command: approve");
    }
    let (mut names, mut config) = (Vec::new(), None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => match args.next() {
                Some(path) => config = Some(PathBuf::from(path)),
                None => return usage("--config needs a file"),
            },
            flag if flag.starts_with('-') => return usage(&format!("unknown argument {flag:?}")),
            _ => names.push(arg),
        }
    }
    let Some(config) = config else {
        return usage("--config FILE is required");
    };
    if names.is_empty() {
        return usage("name at least one tool");
    }
    let path = match GatewayConfig::load(&config) {
        Ok(GatewayConfig {
            pins: Some((path, _)),
            ..
        }) => path,
        Ok(_) => {
            eprintln!("tools-mcp: {} has no [pins] section", config.display());
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("tools-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    match tools_mcp::pins::approve(&path, &names) {
        Ok(done) => {
            for line in done {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("tools-mcp: {why}");
            ExitCode::FAILURE
        }
    }
}

/// On `SIGHUP`, reads the configuration again and puts its policy and limits in force
/// (a configuration that does not check out is reported and the old one kept).
#[allow(clippy::print_stderr, clippy::disallowed_macros)]
fn reload_on_hangup(gateway: std::sync::Arc<Gateway>, path: PathBuf) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        tracing::warn!("SIGHUP cannot be watched: the configuration is not reloaded on it");
        return;
    };
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            match GatewayConfig::load(&path) {
                Ok(config) => {
                    gateway.reload(&config).await;
                    eprintln!(
                        "tools-mcp: reloaded the policy, limits and pins of {}",
                        path.display()
                    );
                }
                Err(e) => eprintln!("tools-mcp: kept the running configuration: {e}"),
            }
        }
    });
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
