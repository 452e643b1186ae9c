//! A fixed-count loop over scenarios e1 and e1b, for instruction counts under callgrind
//! (wall-clock medians on the project's VM move by tens of percent between runs):
//!
//! ```text
//! cargo build --release -p tools-json --example validate_loop
//! valgrind --tool=callgrind target/release/examples/validate_loop e1 5000   # and 2500
//! ```
//!
//! The marginal cost per validation is the difference of two runs divided by the
//! difference of their counts, so parsing and compiling are excluded.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::disallowed_macros
)]

use std::hint::black_box;

use serde_json::Value;
use tools_json::{CompiledSchema, JsonValue};

const NESTED_SCHEMA: &str = include_str!("../benches/fixtures/nested_schema.json");
const NESTED_ARGS: &str = include_str!("../benches/fixtures/nested_args.json");

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "e1".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let schema_json: Value = serde_json::from_str(NESTED_SCHEMA).unwrap();
    let schema = CompiledSchema::compile(&schema_json).unwrap();
    let good = JsonValue::parse(NESTED_ARGS).unwrap().as_value().clone();
    let mut bad = good.clone();
    bad["items"][3]["qty"] = Value::from("four");
    let (value, expected) = match mode.as_str() {
        "e1" => (&good, 0),
        "e1b" => (&bad, 1),
        other => panic!("unknown mode {other:?}: e1 or e1b"),
    };
    let mut total = 0;
    for _ in 0..n {
        total += black_box(&schema).validate(black_box(value), "").len();
    }
    assert_eq!(total, expected * n);
    println!("{mode} x{n}: {total} violations");
}
