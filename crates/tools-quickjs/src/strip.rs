//! TypeScript type stripping with `swc_ts_fast_strip` in strip-only mode: types become
//! white space, so every line and column of the program stays where the model wrote it,
//! and syntax that would need code generation (`enum`, runtime namespaces, parameter
//! properties, …) is refused.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{BytePos, GLOBALS, Globals, SourceMap};
use swc_ts_fast_strip::{Mode, Options, operate};

/// The file name programs carry in stack traces and strip diagnostics.
pub(super) const PROGRAM_FILE: &str = "program.ts";

/// Opens the async function the program is the body of. It shares the program's first
/// line, so line numbers stay exact (only columns of line 1 shift, by its length).
pub(super) const WRAPPER_HEAD: &str = "(async function __dsh_main__() {";

/// Closes the wrapper on a line of its own (the program may end in a line comment).
pub(super) const WRAPPER_TAIL: &str = "\n})";

type Collected = Arc<Mutex<Vec<(String, Option<BytePos>)>>>;

/// Keeps every diagnostic swc emits: its message and where it points.
struct Collect(Collected);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let message = db.message();
        let at = db.span.primary_span().map(|span| span.lo);
        if let Ok(mut collected) = self.0.lock() {
            collected.push((message, at));
        }
    }
}

/// Wraps `program` as the body of an async function expression and strips its types.
///
/// # Errors
///
/// The diagnostic text for a syntax error or for non-erasable syntax, with
/// `program.ts:<line>:<column>` positions in the model's own text.
pub(super) fn strip(program: &str) -> Result<String, String> {
    let wrapped = format!("{WRAPPER_HEAD}{program}{WRAPPER_TAIL}");
    let collected: Collected = Arc::default();
    let source_map: Lrc<SourceMap> = Lrc::default();
    let handler = Handler::with_emitter(true, false, Box::new(Collect(Arc::clone(&collected))));
    let options = Options {
        module: Some(false),
        filename: Some(PROGRAM_FILE.to_owned()),
        mode: Mode::StripOnly,
        ..Options::default()
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        GLOBALS.set(&Globals::new(), || {
            operate(&source_map, &handler, wrapped, options)
        })
    }));
    let error = match outcome {
        Ok(Ok(output)) => return Ok(output.code),
        Ok(Err(error)) => error.to_string(),
        Err(_) => "the TypeScript stripper failed on this program".to_owned(),
    };
    let diagnostics = collected.lock().map(|d| d.clone()).unwrap_or_default();
    let mut message = format!("TypeScript type stripping failed: {error}");
    for (text, at) in diagnostics {
        message.push_str("\n    ");
        message.push_str(&text);
        if let Some(at) = at {
            let loc = source_map.lookup_char_pos(at);
            let head = WRAPPER_HEAD.chars().count();
            let column = if loc.line == 1 {
                loc.col.0.saturating_sub(head)
            } else {
                loc.col.0
            };
            message.push_str(&format!(" ({PROGRAM_FILE}:{}:{})", loc.line, column + 1));
        }
    }
    Err(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_become_white_space_and_positions_stay() {
        let program = "const x: number = 1;\ninterface P { x: number }\nreturn x as number;";
        let stripped = strip(program).unwrap_or_default();
        assert!(stripped.starts_with(WRAPPER_HEAD));
        let body = &stripped[WRAPPER_HEAD.len()..stripped.len() - WRAPPER_TAIL.len()];
        assert_eq!(body.len(), program.len());
        assert_eq!(body.lines().count(), program.lines().count());
        assert!(!body.contains("number"));
        assert!(body.contains("return x"));
    }

    #[test]
    fn top_level_await_and_return_parse() {
        assert!(strip("const v = await Promise.resolve(1);\nreturn v;").is_ok());
    }

    #[test]
    fn non_erasable_syntax_is_refused_with_a_position() {
        let err = strip("const a = 1;\nenum E { A }\nreturn E.A;").unwrap_err();
        assert!(err.contains("enum"), "{err}");
        assert!(err.contains("program.ts:2:"), "{err}");
        let err = strip("namespace N { export const x = 1; }").unwrap_err();
        assert!(err.contains("namespace"), "{err}");
    }

    #[test]
    fn syntax_errors_are_reported() {
        let err = strip("return (1 + ;").unwrap_err();
        assert!(err.contains("program.ts:1:"), "{err}");
    }
}
