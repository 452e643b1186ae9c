//! `tools-codemode-worker`: the confined TypeScript child. A host that runs TypeScript
//! programs in a separate (sandboxed) process starts this binary and speaks the JSON-Lines
//! protocol of [`tools_quickjs::quickjs_worker_main`] with it over stdin and stdout.

use std::process::ExitCode;

fn main() -> ExitCode {
    tools_quickjs::quickjs_worker_main()
}
