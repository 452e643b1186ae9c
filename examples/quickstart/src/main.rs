//! Quickstart: one `ToolRuntime` with real file-system tools, a guard, an approval-gated
//! tool, and one scripted model turn run as a batch.
//!
//! ```text
//! cargo run -p quickstart -- [ROOT]
//! ```
//!
//! ROOT defaults to the current directory; run it from the repository root to see every
//! call find something. What it shows:
//!
//! - three typed tools (`define_tool`, their schemas derived from their argument and output
//!   types with `#[derive(ToolArgs)]` and `#[derive(ToolSchema)]`) that work under ROOT:
//!   `read_file`, `list_dir` and `search_text`, all concurrency-safe, each with a presenter
//!   (`TypedPresenter`) that turns its result into a UI card;
//! - a **guard** that denies every path outside ROOT (`..` escapes, absolute paths
//!   elsewhere, symbolic links leading out), whatever the tool body would do;
//! - an exclusive `write_note` tool (it appends to an in-memory list, not to a file) whose
//!   pre-execute hook answers `ask`, and an **approval service** that asks `y/N` on stdin
//!   when stdin is a terminal and denies automatically (saying so) when it is not, so
//!   `cargo run ... </dev/null` and CI run without a prompt;
//! - a **scripted batch**, as if the model had emitted ten calls in one turn: parallel
//!   reads, lists and searches, the exclusive `write_note`, a path outside ROOT, an unknown
//!   tool and invalid arguments. `ToolRuntime::start_batch` runs it; every `BatchEvent` is
//!   printed as it arrives, and every settled result with its text (shortened), its error
//!   code and its presentation card as compact JSON.
//!
//! It exits 0 whatever the calls returned: failures are results the model would read.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_macros)]
#![forbid(unsafe_code)]

use std::error::Error;
use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tools_runtime::presentation::{
    ContentBlock, FileLocation, GenericCallView, RawResult, ResultOrigin, SearchResultView,
    SessionPresenter, ToolCallKind, ToolCallView, ToolResultView, TypedPresenter, lang_for_path,
    read_view_from_meta, search_view_from_meta,
};
use tools_runtime::{
    BatchEvent, CancellationToken, RunContext, ToolArgs, ToolCall, ToolDefinition, ToolError,
    ToolResult, ToolRuntime, ToolSchema,
    approval::{ApprovalOutcome, ApprovalRequest},
    define_tool,
    hooks::{CallError, PreDecision, PreNext, PreRequest, from_fn},
    tools::{AgentScope, CallInfo, ExecutionMode, RegistryError},
};

/// The tools whose `path` argument the guard checks.
const FS_TOOLS: [&str; 3] = ["read_file", "list_dir", "search_text"];
/// Lines `read_file` returns when the call gives no `limit`.
const DEFAULT_READ_LIMIT: u64 = 200;
/// Matches `search_text` returns when the call gives no `max_results`.
const DEFAULT_MAX_RESULTS: u64 = 20;
/// Files larger than this are skipped by `search_text`.
const MAX_SEARCHED_FILE: u64 = 1 << 20;

mod fs_tools;
mod notes;
mod sandbox;

use fs_tools::{list_dir_tool, read_file_tool, search_text_tool};
use notes::{Notes, Question, approval_service, ask_user, write_note_tool};
use sandbox::{Sandbox, blocking, count, io_error};

// ---------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------

/// At most `max` characters of one line.
fn shorten_line(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A result's text as at most four short lines.
fn shorten(text: &str) -> String {
    const LINES: usize = 4;
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(LINES)
        .map(|line| shorten_line(line, 100))
        .collect();
    if lines.len() > LINES {
        out.push(format!("… ({} more lines)", lines.len() - LINES));
    }
    out.join("\n         ")
}

/// A card as compact JSON, cut after 500 characters.
fn card_json(card: &Value) -> String {
    const MAX: usize = 500;
    let text = card.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{} … ({rest} more characters)", &text[..cut])
        }
        None => text,
    }
}

/// One scripted call: why the model made it, its arguments as the model sent them (kept
/// for the presenters), and the call.
struct Scripted {
    why: &'static str,
    args: Value,
    call: ToolCall,
}

fn script(agent: &AgentScope) -> Result<Vec<Scripted>, CallError> {
    let calls: [(&str, &str, Value); 10] = [
        ("list the root", "list_dir", json!({"path": "."})),
        (
            "read the manifest's first lines",
            "read_file",
            json!({"path": "Cargo.toml", "limit": 4}),
        ),
        (
            "find where batches start",
            "search_text",
            json!({"path": "crates/tools-runtime/src", "needle": "fn start_batch", "max_results": 5}),
        ),
        (
            "a window in the middle of a file",
            "read_file",
            json!({"path": "crates/tools-runtime/README.md", "offset": 3, "limit": 2}),
        ),
        (
            "an exclusive write that asks first",
            "write_note",
            json!({"text": "the runtime schedules parallel reads around exclusive writes"}),
        ),
        (
            "escape ROOT with `..` (the guard denies)",
            "read_file",
            json!({"path": "../../../../etc/passwd"}),
        ),
        (
            "an absolute path elsewhere (the guard denies)",
            "list_dir",
            json!({"path": "/etc"}),
        ),
        (
            "a tool that does not exist",
            "delete_file",
            json!({"path": "Cargo.toml"}),
        ),
        (
            "invalid arguments (path must be a string)",
            "read_file",
            json!({"path": 42, "limit": "ten"}),
        ),
        (
            "a capped search after the write",
            "search_text",
            json!({"path": "crates/tools-runtime/src", "needle": "pub fn", "max_results": 3}),
        ),
    ];
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (why, name, args))| {
            let call =
                ToolCall::new(format!("c{}", i + 1), name, args.clone())?.with_agent(agent.clone());
            Ok(Scripted { why, args, call })
        })
        .collect()
}

fn print_settled(
    index: usize,
    call: &ToolCall,
    result: &ToolResult,
    session: &mut SessionPresenter,
) {
    let status = if result.is_error() { "error" } else { "ok" };
    let code = result.code().map_or("none", |code| code.as_str());
    println!(
        "<- [{index}] {} {} settled: {status}, code {code}",
        call.call_id(),
        call.name()
    );
    println!("     text: {}", shorten(&result.text()));
    let card = session.present_result(call.call_id(), &result.raw(), ResultOrigin::Executed);
    if let Some(card) = card {
        println!("     result card: {}", card_json(&card.to_json()));
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn Error>> {
    let root = match std::env::args_os().nth(1) {
        Some(root) => PathBuf::from(root),
        None => std::env::current_dir()?,
    };
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot open ROOT {}: {e}", root.display()))?;
    if !root.is_dir() {
        return Err(format!("ROOT {} is not a directory", root.display()).into());
    }
    println!("Workspace root (ROOT): {}\n", root.display());
    let sandbox = Arc::new(Sandbox { root });
    let notes: Notes = Arc::default();

    // 1. The runtime: up to 4 overlapping bodies per batch, and an approval service that
    //    forwards its questions to the UI loop below.
    let (questions, mut asked) = mpsc::unbounded_channel::<Question>();
    let runtime = ToolRuntime::builder()
        .max_parallel_tool_calls(4)
        .approval(approval_service(questions))
        .build()?;

    // 2. The tools. `keep()` makes a registration last as long as the runtime.
    runtime.register(read_file_tool(&sandbox)?)?.keep();
    runtime.register(list_dir_tool(&sandbox)?)?.keep();
    runtime.register(search_text_tool(&sandbox)?)?.keep();
    runtime.register(write_note_tool(&notes)?)?.keep();

    // 3. The guard: runs for every allowed call, can only deny.
    let guarded = Arc::clone(&sandbox);
    runtime
        .guard(move |call: &CallInfo| {
            if !FS_TOOLS.contains(&call.tool.as_str()) {
                return None;
            }
            // Arguments of the wrong shape pass here; the tool's validation refuses them.
            let path = call.arguments.get("path")?.as_str()?;
            guarded.resolve(path).err()
        })
        .keep();

    // 4. A pre-execute hook: `write_note` needs the user's approval.
    runtime
        .on_pre_execute(from_fn(|request: PreRequest, next: PreNext| async move {
            if request.execution().name().as_str() == "write_note" {
                return Ok(PreDecision::Ask(Some(
                    "write_note changes the session's notes".to_owned(),
                )));
            }
            next.run(request).await
        }))
        .keep();

    // What the model is shown: name, description and parameters of each tool.
    let agent = runtime.scope();
    println!("Tools the model sees:");
    for schema in runtime.schemas(Some(&agent)).iter() {
        println!("  {:<12} {}", schema.name.as_str(), schema.description);
    }
    if let Some(read) = runtime.schemas(Some(&agent)).first() {
        println!("  {} parameters: {}", read.name, read.parameters);
    }

    // 5. One model turn: ten sibling calls, in the model's order.
    let script = script(&agent)?;
    println!("\nThe model's turn ({} calls):", script.len());
    for (index, scripted) in script.iter().enumerate() {
        let mode = match runtime.execution_mode(&scripted.call) {
            ExecutionMode::Parallel => "parallel",
            ExecutionMode::Exclusive => "exclusive",
        };
        println!(
            "  [{index}] {:<3} {:<11} {:<9} {:<58} # {}",
            scripted.call.call_id(),
            scripted.call.name(),
            mode,
            scripted.args.to_string(),
            scripted.why
        );
    }
    println!("\nRunning the batch (events as they arrive):");
    let calls: Vec<ToolCall> = script.iter().map(|s| s.call.clone()).collect();
    let mut batch = runtime.start_batch(calls, CancellationToken::new());
    let mut session = SessionPresenter::new();
    loop {
        // `biased`: every event the batch sent before a question is printed before it.
        let event = tokio::select! {
            biased;
            event = batch.next_event() => event,
            Some((request, reply)) = asked.recv() => {
                let _ = reply.send(ask_user(&request).await);
                continue;
            }
        };
        match event {
            None => break,
            Some(BatchEvent::Started { index }) => {
                let Some(Scripted { call, args, .. }) = script.get(index) else {
                    continue;
                };
                let presenter = runtime
                    .get(call.name(), call.agent())
                    .and_then(|tool| tool.presenter().cloned());
                let card = session.present_call(call.call_id(), call.name(), args, presenter);
                println!("-> [{index}] {} {} started", call.call_id(), call.name());
                println!("     call card: {}", card_json(&card.to_json()));
            }
            Some(BatchEvent::Settled { index, result }) => {
                if let Some(Scripted { call, .. }) = script.get(index) {
                    print_settled(index, call, &result, &mut session);
                }
            }
        }
    }
    let results = batch.results().await?;

    let failed = results.iter().filter(|r| r.is_error()).count();
    println!(
        "\nDone: {} results in the model's order, {} ok, {failed} errors.",
        results.len(),
        results.len() - failed
    );
    let notes = notes.lock().unwrap_or_else(PoisonError::into_inner);
    println!("Notes saved this session: {:?}", notes.as_slice());
    Ok(())
}
