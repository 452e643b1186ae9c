//! `NESTED_SPEC` and `NESTED_ARGS` of the benchmark scenarios (`docs/benchmarks.md`, "What
//! is measured"): the author DSL form and the typed Rust arguments. Shared by the
//! benchmarks of several crates (`#[path]`).

use serde::Deserialize;
use serde_json::Value;
use tools_schema::{Params, Schema, ToolArgs, params};

/// The `NESTED_ARGS` fixture text.
pub(crate) const NESTED_ARGS: &str =
    include_str!("../../../tools-json/benches/fixtures/nested_args.json");

/// `NESTED_SPEC` of the benchmark scenarios (`docs/benchmarks.md`, "What is measured"), in
/// the author DSL.
pub(crate) fn nested_spec() -> Params {
    params()
        .required("id", Schema::string())
        .required("name", Schema::string())
        .required("count", Schema::integer())
        .optional("ratio", Schema::number())
        .optional("enabled", Schema::boolean())
        .required(
            "mode",
            Schema::string().enum_values(["fast", "slow", "auto"]),
        )
        .optional("tags", Schema::array(Schema::string()))
        .optional("scores", Schema::array(Schema::number()))
        .optional("matrix", Schema::array(Schema::array(Schema::integer())))
        .optional(
            "owner",
            Schema::closed_object()
                .required("id", Schema::string())
                .optional("email", Schema::string())
                .optional(
                    "roles",
                    Schema::array(Schema::string().enum_values(["admin", "dev", "ops"])),
                ),
        )
        .optional(
            "items",
            Schema::array(
                Schema::closed_object()
                    .required("sku", Schema::string())
                    .required("qty", Schema::integer())
                    .optional("price", Schema::number())
                    .optional(
                        "attrs",
                        Schema::open_object().optional("color", Schema::string()),
                    ),
            ),
        )
        .optional("metadata", Schema::json())
        .optional(
            "note",
            Schema::one_of([Schema::from(Schema::string()), Schema::null().into()]),
        )
        .optional("limit", Schema::integer())
        .optional("offset", Schema::integer())
        .optional("sort", Schema::string().enum_values(["asc", "desc"]))
        .optional(
            "filters",
            Schema::array(
                Schema::closed_object()
                    .required("field", Schema::string())
                    .required("op", Schema::string().enum_values(["eq", "ne", "lt", "gt"]))
                    .optional(
                        "value",
                        Schema::one_of([
                            Schema::from(Schema::string()),
                            Schema::number().into(),
                            Schema::boolean().into(),
                        ]),
                    ),
            ),
        )
        .optional("createdAfter", Schema::string())
        .optional(
            "flags",
            Schema::open_object()
                .optional("a", Schema::boolean())
                .optional("b", Schema::boolean()),
        )
        .optional("version", Schema::integer().constant(2))
}

/// The typed `NESTED_ARGS`. The scenario fixes `NESTED_SPEC`, so its parameter map is the
/// hand-written [`nested_spec`] (the `ToolArgs` escape hatch), not derived from the struct.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct NestedArgs {
    id: String,
    name: String,
    count: i64,
    ratio: Option<f64>,
    enabled: Option<bool>,
    mode: String,
    tags: Option<Vec<String>>,
    scores: Option<Vec<f64>>,
    matrix: Option<Vec<Vec<i64>>>,
    owner: Option<Owner>,
    items: Option<Vec<Item>>,
    metadata: Option<Value>,
    note: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
    sort: Option<String>,
    filters: Option<Vec<Filter>>,
    created_after: Option<String>,
    flags: Option<Flags>,
    version: Option<i64>,
}

impl ToolArgs for NestedArgs {
    fn tool_params() -> Params {
        nested_spec()
    }
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Owner {
    id: String,
    email: Option<String>,
    roles: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Item {
    sku: String,
    qty: i64,
    price: Option<f64>,
    attrs: Option<Attrs>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Attrs {
    color: Option<String>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Filter {
    field: String,
    op: String,
    value: Option<Value>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Flags {
    a: Option<bool>,
    b: Option<bool>,
}
