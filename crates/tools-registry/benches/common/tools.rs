//! The tools of the benchmark scenarios (`docs/benchmarks.md`, "What is measured"), shared
//! by the benchmarks of several crates (included with `#[path]`): the `noop` tool of
//! scenarios a–c and f, and the catalog tools of scenario d.
#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;
use tools_registry::{ToolDefinition, define_tool};
use tools_schema::{Params, Schema, ToolArgs, params};

/// `noop`'s typed arguments. The scenario fixes the parameter map (`n` is a plain
/// integer), so it is written by hand (the `ToolArgs` escape hatch) rather than derived: a
/// derived `Option<i64>` would carry the range of `i64` and change what is measured.
#[derive(Deserialize)]
pub(crate) struct NoopArgs {
    pub(crate) text: String,
    pub(crate) n: Option<i64>,
}

impl ToolArgs for NoopArgs {
    fn tool_params() -> Params {
        params()
            .required("text", Schema::string())
            .optional("n", Schema::integer())
    }
}

/// `noop`, concurrency-safe or exclusive.
pub(crate) fn noop_with(concurrent: bool) -> ToolDefinition {
    let tool = define_tool::<NoopArgs, String>(
        "noop",
        "No-op tool used for pipeline overhead measurement.",
    )
    .body(|_args: NoopArgs, _ctx| async { Ok("ok".to_owned()) });
    let tool = if concurrent {
        tool.concurrency_safe()
    } else {
        tool
    };
    tool.build().unwrap()
}

/// `noop`, concurrency-safe (scenario c runs it in parallel).
pub(crate) fn noop() -> ToolDefinition {
    noop_with(true)
}

/// The untyped arguments of the catalog tools, with the scenario's parameter map written
/// by hand (as for [`NoopArgs`]).
#[derive(Deserialize)]
#[serde(transparent)]
pub(crate) struct CatalogArgs(pub(crate) Value);

impl ToolArgs for CatalogArgs {
    fn tool_params() -> Params {
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
            )
    }
}

/// Catalog tool `tool_<i>` (three digits at least) of scenario d.
pub(crate) fn catalog(i: usize) -> ToolDefinition {
    define_tool::<CatalogArgs, String>(
        format!("tool_{i:03}"),
        format!("Catalog tool number {i}: reads a file and returns a slice of it."),
    )
    .body(|_args: CatalogArgs, _ctx| async { Ok("ok".to_owned()) })
    .build()
    .unwrap()
}
