//! What a scope's deferred tools cost a `run_code` run: every deferred tool is bound in the
//! program's `tools` object for each run (docs/decisions.md, entry 35), so the run of a
//! one-line program is timed with 0, 1 000 and 10 000 deferred tools in the scope
//! (QuickJS in process; median of 21 runs after 3 warm-up runs), one line each.
//!
//! ```sh
//! cargo run --release -p tools-codemode --example deferred_binding
//! ```

#![allow(clippy::print_stdout, clippy::disallowed_macros)]

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tools_codemode::{CodeModeConfig, RuntimeLimits};
use tools_pipeline::{Pipeline, ToolCall};
use tools_quickjs::QuickJsRuntime;
use tools_registry::{Exposure, OutputDecl, PresentationMode, Registry, ToolDefinition};

type Failure = Box<dyn std::error::Error>;

fn tool(name: String, exposure: Exposure) -> Result<ToolDefinition, Failure> {
    Ok(ToolDefinition::builder(name, "A tool of the catalog.")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_args, _ctx| async { Ok(json!("ok")) })
        .exposure(exposure)
        .build()?)
}

/// The median wall time of a `run_code` run, in microseconds, with `deferred` deferred
/// tools in the scope.
async fn median_run(deferred: usize, runs: usize) -> Result<f64, Failure> {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    registry
        .register(tool("echo".into(), Exposure::Direct)?)?
        .keep();
    for i in 0..deferred {
        registry
            .register(tool(format!("tool_{i}"), Exposure::Deferred)?)?
            .keep();
    }
    let runtime = Arc::new(QuickJsRuntime::new(RuntimeLimits::default())?);
    let pipeline = Pipeline::new(registry);
    tools_codemode::install(&pipeline, &CodeModeConfig::new().with_runtime(runtime))?;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 3 {
        let program = json!({"code": "return await tools.echo({});", "description": "one call"});
        let call = ToolCall::new(format!("call-{i}"), "run_code", program)?;
        let start = Instant::now();
        let result = pipeline.execute(call).await;
        let elapsed = start.elapsed().as_secs_f64() * 1e6;
        if result.is_error() {
            return Err(format!("run {i} failed: {}", result.text()).into());
        }
        if i >= 3 {
            times.push(elapsed);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times.get(times.len() / 2).copied().unwrap_or(f64::NAN))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    for deferred in [0, 1_000, 10_000] {
        let median = median_run(deferred, 21).await?;
        println!("{deferred} deferred tools: run_code median {median:.0} µs");
    }
    Ok(())
}
