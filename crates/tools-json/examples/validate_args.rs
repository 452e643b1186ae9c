//! Validates tool arguments against a JSON Schema and prints every violation.
//!
//! ```text
//! cargo run -p tools-json --example validate_args                       # a built-in demo
//! cargo run -p tools-json --example validate_args -- SCHEMA.json ARGS.json
//! ```
//!
//! The schema goes through the subset's support check (an unsupported schema is reported
//! with every violation), the arguments cross the lossless boundary, then they are
//! validated with the tool-argument root (paths like `items[3].qty`). With files, the exit
//! code is 0 when the arguments are valid, 1 when they are not, 2 on unusable input; the
//! demo (whose arguments are invalid on purpose) exits 0 once it has printed its report.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_macros)]
#![forbid(unsafe_code)]

use std::process::ExitCode;

use tools_json::{CompiledSchema, JsonValue};

const DEMO_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Absolute file path."},
    "limit": {"type": "integer", "description": "Maximum number of lines."},
    "mode": {"type": "string", "enum": ["fast", "slow", "auto"]},
    "ranges": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
        "required": ["start"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path"]
}"#;

const DEMO_ARGS: &str =
    r#"{"limit": 2.5, "mode": "turbo", "ranges": [{"start": 1, "end": 3}, {"end": 9, "step": 2}]}"#;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let demo = files.is_empty();
    let (schema_text, args_text) = match files.as_slice() {
        [] => (DEMO_SCHEMA.to_owned(), DEMO_ARGS.to_owned()),
        [schema, args] => match (
            std::fs::read_to_string(schema),
            std::fs::read_to_string(args),
        ) {
            (Ok(schema), Ok(args)) => (schema, args),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("cannot read input: {e}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: validate_args [SCHEMA.json ARGS.json]");
            return ExitCode::from(2);
        }
    };

    let schema = match JsonValue::parse(&schema_text).map(|s| CompiledSchema::compile(&s)) {
        Ok(Ok(schema)) => schema,
        Ok(Err(err)) | Err(err) => {
            println!(
                "schema rejected ({}):",
                err.code().map_or("-", |c| c.as_str())
            );
            for violation in err.violations() {
                println!("  - {violation}");
            }
            if err.violations().is_empty() {
                println!("  - {err}");
            }
            return ExitCode::from(2);
        }
    };
    println!("schema: {}", schema.as_json());

    let args = match JsonValue::parse(&args_text) {
        Ok(args) => args,
        Err(err) => {
            println!("arguments rejected at the lossless boundary: {err}");
            return if demo {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            };
        }
    };
    println!("arguments: {args}");

    let violations = schema.validate(&args, "");
    if violations.is_empty() {
        println!("valid: no violations");
        return ExitCode::SUCCESS;
    }
    println!("INVALID_ARGS: {} violation(s)", violations.len());
    for violation in &violations {
        println!("  - {violation}");
    }
    if demo {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
