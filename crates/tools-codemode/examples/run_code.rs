//! Runs one Code Mode program against a demo registry and prints the `run_code` result as
//! one JSON line.
//!
//! ```sh
//! cargo run -p tools-codemode --example run_code -- --lang typescript [--isolation MODE] [--cpu-ms N] [--wall-ms N] [--memory-mb N] [--scratch-mb N] FILE
//! ```
//!
//! `--isolation`: for TypeScript `in-process` (the default, QuickJS embedded), `sandbox`
//! (QuickJS in a confined child: this binary re-runs itself as the worker) or `unconfined`
//! (the same child, not confined); for Python `sandbox` (the default) or `unconfined`.
//! `--scratch-mb` gives a sandboxed Python run a private writable `/tmp` of that size.
//! Every hostile program of `tests/it/hostile_py.rs` and `tests/it/hostile_ts.rs` can be
//! replayed this way.
//!
//! The registry is in `code` mode with five tools: `echo` (returns its arguments), `add`
//! (`{a, b}` numbers → their sum), `fail` (always fails), `slow` (`{ms}` sleeps that long,
//! concurrency-safe) and `counter` (exclusive, returns how many calls it has seen).
//! Output: `{"is_error": false, "value": {...}}` or
//! `{"is_error": true, "code": "...", "message": "..."}`.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_macros)]

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tools_codemode::{CodeModeConfig, CodeRuntime, RuntimeLimits};
use tools_pipeline::{Pipeline, ToolCall};
use tools_quickjs::QuickJsRuntime;
use tools_registry::{OutputDecl, PresentationMode, Registry, ToolDefinition, ToolError, text_of};
use tools_sandbox::{
    Isolation, PythonOptions, PythonRuntime, QuickJsProcessOptions, QuickJsProcessRuntime,
};

/// The first argument on which this binary runs as the confined QuickJS worker.
const WORKER_FLAG: &str = "--codemode-worker";

struct Options {
    lang: String,
    isolation: Option<String>,
    scratch_bytes: u64,
    limits: RuntimeLimits,
    file: String,
}

fn parse_options() -> Result<Options, String> {
    let mut lang = None;
    let mut isolation = None;
    let mut scratch_bytes = 0;
    let mut limits = RuntimeLimits::default();
    let mut file = None;
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<u64, String> {
        value
            .ok_or_else(|| format!("{flag} needs a value"))?
            .parse::<u64>()
            .map_err(|e| format!("{flag}: {e}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lang" => lang = args.next(),
            "--isolation" => isolation = args.next(),
            "--scratch-mb" => {
                scratch_bytes = number("--scratch-mb", args.next())?.saturating_mul(1 << 20);
            }
            "--cpu-ms" => limits.compute = Duration::from_millis(number("--cpu-ms", args.next())?),
            "--wall-ms" => limits.wall = Duration::from_millis(number("--wall-ms", args.next())?),
            "--memory-mb" => {
                limits.memory_bytes = number("--memory-mb", args.next())?.saturating_mul(1 << 20);
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other => file = Some(other.to_owned()),
        }
    }
    Ok(Options {
        lang: lang.ok_or("--lang typescript|python is required")?,
        isolation,
        scratch_bytes,
        limits,
        file: file.ok_or("a program FILE is required")?,
    })
}

fn tool(
    name: &str,
    description: &str,
    body: impl Fn(Value) -> Result<Value, ToolError> + Send + Sync + 'static,
) -> tools_registry::DefinitionBuilder {
    let body = Arc::new(body);
    ToolDefinition::builder(name, description)
        .output(OutputDecl::new(json!({}), |_, value| {
            Ok(vec![tools_presentation::ContentBlock::text(text_of(value))])
        }))
        .body(move |args, _ctx| {
            let body = Arc::clone(&body);
            async move { body(args.as_value().clone()) }
        })
}

fn demo_registry() -> Result<Registry, tools_registry::Error> {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    let number = |args: &Value, key: &str| args.get(key).and_then(Value::as_f64);
    registry
        .register(tool("echo", "Returns its arguments.", Ok).build()?)?
        .keep();
    registry
        .register(
            tool("add", "Adds two numbers.", move |args| {
                match (number(&args, "a"), number(&args, "b")) {
                    (Some(a), Some(b)) => Ok(json!(a + b)),
                    _ => Err(ToolError::new("add needs numbers `a` and `b`")),
                }
            })
            .parameters(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            }))
            .build()?,
        )?
        .keep();
    registry
        .register(
            tool("fail", "Always fails.", |_| {
                Err(ToolError::new("deliberate failure"))
            })
            .build()?,
        )?
        .keep();
    registry
        .register(
            ToolDefinition::builder("slow", "Sleeps `ms` milliseconds, then returns them.")
                .output(OutputDecl::text(json!({})))
                .concurrency(|_| true)
                .body(|args, ctx| async move {
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!(ms)),
                        () = ctx.cancellation().cancelled() => Err(ToolError::new("slow was cancelled")),
                    }
                })
                .build()?,
        )?
        .keep();
    let seen = Arc::new(AtomicU64::new(0));
    registry
        .register(
            tool(
                "counter",
                "Returns how many calls it has seen.",
                move |_| Ok(json!(seen.fetch_add(1, Ordering::SeqCst) + 1)),
            )
            .build()?,
        )?
        .keep();
    Ok(registry)
}

async fn run(options: Options) -> Result<Value, String> {
    let program = std::fs::read_to_string(&options.file)
        .map_err(|e| format!("cannot read {}: {e}", options.file))?;
    let limits = options.limits;
    let isolation = |mode: &str| match mode {
        "sandbox" => Ok(Isolation::Sandbox),
        "unconfined" => Ok(Isolation::UnconfinedProcess),
        other => Err(format!("unknown isolation {other:?}")),
    };
    let runtime: Arc<dyn CodeRuntime> = match (options.lang.as_str(), options.isolation.as_deref())
    {
        ("typescript", None | Some("in-process")) => {
            Arc::new(QuickJsRuntime::new(limits).map_err(|e| e.to_string())?)
        }
        ("typescript", Some(mode)) => {
            let worker = std::env::current_exe().map_err(|e| e.to_string())?;
            let options = QuickJsProcessOptions::new(worker)
                .arg(WORKER_FLAG)
                .isolation(isolation(mode)?);
            Arc::new(QuickJsProcessRuntime::new(limits, options).map_err(|e| e.to_string())?)
        }
        ("python", mode) => {
            let options = PythonOptions::default()
                .isolation(isolation(mode.unwrap_or("sandbox"))?)
                .scratch_bytes(options.scratch_bytes);
            Arc::new(PythonRuntime::with_options(limits, options).map_err(|e| e.to_string())?)
        }
        (other, _) => return Err(format!("unknown language {other:?} (typescript, python)")),
    };
    let registry = demo_registry().map_err(|e| e.to_string())?;
    let pipeline = Pipeline::new(registry);
    tools_codemode::install(&pipeline, &CodeModeConfig::new().with_runtime(runtime))
        .map_err(|e| e.to_string())?;
    let call = ToolCall::new(
        "call-1",
        "run_code",
        json!({"code": program, "description": "Run the program from the command line"}),
    )
    .map_err(|e| e.to_string())?;
    let result = pipeline.execute(call).await;
    Ok(match (result.value(), result.error()) {
        (Some(value), _) if !result.is_error() => {
            json!({"is_error": false, "value": value.as_value()})
        }
        (_, error) => json!({
            "is_error": true,
            "code": result.code().map(|code| code.as_str().to_owned()),
            "message": error.map_or_else(|| result.text(), |e| e.message().to_owned()),
        }),
    })
}

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == WORKER_FLAG)
    {
        return tools_quickjs::quickjs_worker_main();
    }
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            eprintln!(
                "usage: run_code --lang typescript|python [--isolation in-process|sandbox|unconfined] [--cpu-ms N] [--wall-ms N] [--memory-mb N] [--scratch-mb N] FILE"
            );
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
