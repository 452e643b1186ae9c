//! The tools of `shared/bench/scenarios.md`, shared by the benchmarks of several crates
//! (included with `#[path]`): the `noop` tool of scenarios a–c and f, and the catalog tools
//! of scenario d.
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;
use tools_registry::{ToolDefinition, define_tool};
use tools_schema::{Schema, params};

/// `noop`'s typed arguments.
#[derive(Deserialize)]
pub(crate) struct NoopArgs {
    pub(crate) text: String,
    pub(crate) n: Option<i64>,
}

/// `noop`, concurrency-safe or exclusive.
pub(crate) fn noop_with(concurrent: bool) -> ToolDefinition {
    let tool = define_tool::<NoopArgs, String>(
        "noop",
        "No-op tool used for pipeline overhead measurement.",
    )
    .params(
        params()
            .required("text", Schema::string())
            .optional("n", Schema::integer()),
    )
    .output(Schema::string())
    .body(|_args: NoopArgs, _ctx| async { Ok("ok".to_owned()) });
    let tool = if concurrent {
        tool.concurrency(|_| true)
    } else {
        tool
    };
    tool.build().unwrap()
}

/// `noop`, concurrency-safe (scenario c runs it in parallel).
pub(crate) fn noop() -> ToolDefinition {
    noop_with(true)
}

/// Catalog tool `tool_<i>` (three digits at least) of scenario d.
pub(crate) fn catalog(i: usize) -> ToolDefinition {
    define_tool::<Value, String>(
        format!("tool_{i:03}"),
        format!("Catalog tool number {i}: reads a file and returns a slice of it."),
    )
    .params(
        params()
            .required("path", Schema::string().describe("Absolute file path."))
            .optional(
                "limit",
                Schema::integer().describe("Maximum number of lines."),
            )
            .optional("recursive", Schema::boolean())
            .optional(
                "mode",
                Schema::string().enum_values(["fast", "slow", "auto"]),
            ),
    )
    .output(Schema::string())
    .body(|_args: Value, _ctx| async { Ok("ok".to_owned()) })
    .build()
    .unwrap()
}
