//! Quickstart: one `ToolRuntime` with real file-system tools, a guard, an approval-gated
//! tool, and one scripted model turn run as a batch.
//!
//! ```text
//! cargo run -p tools-runtime --example quickstart -- [ROOT]
//! ```
//!
//! ROOT defaults to the current directory; run it from the repository root to see every
//! call find something. What it shows:
//!
//! - three typed tools (`define_tool` + `tools_runtime::params()`) that work under ROOT:
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
use tools_runtime::crates::presentation::{
    ContentBlock, FileLocation, GenericCallView, RawResult, ResultOrigin, SearchResultView,
    SessionPresenter, ToolCallKind, ToolCallView, ToolResultView, TypedPresenter, lang_for_path,
    read_view_from_meta, search_view_from_meta,
};
use tools_runtime::{
    AgentScope, ApprovalOutcome, ApprovalRequest, BatchEvent, CallError, CallInfo,
    CancellationToken, ExecutionMode, PreDecision, PreNext, PreRequest, RegistryError, RunContext,
    Schema, ToolCall, ToolDefinition, ToolError, ToolResult, ToolRuntime, define_tool, from_fn,
    params,
};

/// The tools whose `path` argument the guard checks.
const FS_TOOLS: [&str; 3] = ["read_file", "list_dir", "search_text"];
/// Lines `read_file` returns when the call gives no `limit`.
const DEFAULT_READ_LIMIT: u64 = 200;
/// Matches `search_text` returns when the call gives no `max_results`.
const DEFAULT_MAX_RESULTS: u64 = 20;
/// Files larger than this are skipped by `search_text`.
const MAX_SEARCHED_FILE: u64 = 1 << 20;

// ---------------------------------------------------------------------------------------
// The sandbox: every path a tool touches is resolved here, by the guard and by the bodies.
// ---------------------------------------------------------------------------------------

/// The canonical ROOT every file-system tool is confined to.
#[derive(Debug)]
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// `requested` (relative to ROOT, or absolute) as a path under ROOT, or why not.
    ///
    /// The lexical check catches `..` escapes even for paths that do not exist; the
    /// canonical check catches symbolic links inside ROOT that lead out of it. A path that
    /// does not exist is returned as is: the tool reports it.
    fn resolve(&self, requested: &str) -> Result<PathBuf, String> {
        let outside = || {
            format!(
                "access denied: {requested:?} is outside the workspace root {}",
                self.root.display()
            )
        };
        let candidate = Path::new(requested);
        let joined = if candidate.is_absolute() {
            candidate.to_path_buf()
        } else {
            self.root.join(candidate)
        };
        let mut lexical = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !lexical.pop() {
                        return Err(outside());
                    }
                }
                other => lexical.push(other),
            }
        }
        if !lexical.starts_with(&self.root) {
            return Err(outside());
        }
        match lexical.canonicalize() {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(_) => Err(format!("{} (through a symbolic link)", outside())),
            Err(_) => Ok(lexical),
        }
    }

    /// `path` relative to ROOT, with `/` separators (`.` for ROOT itself).
    fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}

/// An I/O failure as a tool error with a machine code the model (and a UI) can act on.
fn io_error(what: &str, path: &str, error: &std::io::Error) -> ToolError {
    let code = match error.kind() {
        std::io::ErrorKind::NotFound => "NOT_FOUND",
        std::io::ErrorKind::PermissionDenied => "PERMISSION_DENIED",
        _ => "IO_ERROR",
    };
    ToolError::custom(code, format!("cannot {what} {path:?}: {error}"))
}

/// Runs blocking file-system work off the async worker threads.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|join| {
            Err(ToolError::new(format!(
                "the file-system task failed: {join}"
            )))
        })
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

// ---------------------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------------------

/// The arguments of `read_file`, deserialized after validation.
#[derive(Debug, Deserialize)]
struct ReadArgs {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

/// What `read_file` returns: the window and where it sits in the file.
#[derive(Debug, Serialize, Deserialize)]
struct ReadOutput {
    path: String,
    offset: u64,
    total_lines: u64,
    text: String,
}

fn read_file_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<ReadArgs, ReadOutput>(
        "read_file",
        "Read a text file under the workspace root, optionally a window of its lines.",
    )
    .params(
        params()
            .required(
                "path",
                Schema::string().describe("File path, relative to the workspace root."),
            )
            .optional(
                "offset",
                Schema::integer().describe("1-based first line (default 1)."),
            )
            .optional(
                "limit",
                Schema::integer().describe("Maximum number of lines (default 200)."),
            ),
    )
    .output(
        Schema::closed_object()
            .required("path", Schema::string())
            .required("offset", Schema::integer())
            .required("total_lines", Schema::integer())
            .required("text", Schema::string()),
    )
    .body(move |args: ReadArgs, _ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        async move {
            blocking(move || {
                let real = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let bytes = std::fs::read(&real).map_err(|e| io_error("read", &args.path, &e))?;
                let text = String::from_utf8_lossy(&bytes);
                let offset = args.offset.unwrap_or(1).max(1);
                let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT);
                let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
                let take = usize::try_from(limit).unwrap_or(usize::MAX);
                let window: Vec<&str> = text.lines().skip(skip).take(take).collect();
                Ok(ReadOutput {
                    path: sandbox.relative(&real),
                    offset,
                    total_lines: count(text.lines().count()),
                    text: window.join("\n"),
                })
            })
            .await
        }
    })
    // Reading never changes anything: reads may overlap with their siblings.
    .concurrency(|_: &ReadArgs| true)
    .render(|_args, output| {
        let output = output.value();
        let text = if output.text.is_empty() {
            format!(
                "(no lines from line {}: {} has {} lines)",
                output.offset, output.path, output.total_lines
            )
        } else {
            output.text.clone()
        };
        vec![ContentBlock::text(text)]
    })
    // The replayable payload a UI turns into a read card (see `read_view_from_meta`).
    .presentation_meta(|_args, output| {
        let output = output.value();
        let lines: Vec<Value> = output
            .text
            .lines()
            .zip(output.offset..)
            .map(|(text, number)| json!({"number": number, "text": text}))
            .collect();
        let mut meta = json!({
            "path": output.path,
            "offset": output.offset,
            "totalLines": output.total_lines,
            "lines": lines,
        });
        if let Some(lang) = lang_for_path(&output.path) {
            meta["lang"] = json!(lang);
        }
        meta
    })
    .presenter(ReadFilePresenter)
    .build()
}

/// The cards of `read_file`: a read card on the way in, the numbered window on the way out.
struct ReadFilePresenter;

impl TypedPresenter for ReadFilePresenter {
    type Args = ReadArgs;

    fn present_call(&self, args: &ReadArgs) -> Option<ToolCallView> {
        let start = u32::try_from(args.offset.unwrap_or(1).max(1)).unwrap_or(u32::MAX);
        let view = GenericCallView::new(format!("Read {}", args.path))
            .with_kind(ToolCallKind::Read)
            .with_locations([FileLocation::new(&args.path).at_line(start)]);
        Some(view.into())
    }

    fn present_result(&self, args: &ReadArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None; // the generic card shows the error text
        }
        let view = read_view_from_meta(result.meta.as_ref()?)?;
        let title = match view.lines() {
            [] => format!("Read {} (nothing in range)", args.path),
            [first, .., last] => format!(
                "Read {} (lines {}-{} of {})",
                args.path,
                first.number,
                last.number,
                view.total_lines()
            ),
            [only] => format!(
                "Read {} (line {} of {})",
                args.path,
                only.number,
                view.total_lines()
            ),
        };
        Some(view.with_title(title).into())
    }
}

// ---------------------------------------------------------------------------------------
// list_dir
// ---------------------------------------------------------------------------------------

/// The arguments of `list_dir`.
#[derive(Debug, Deserialize)]
struct ListArgs {
    path: String,
}

fn list_dir_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<ListArgs, Vec<String>>(
        "list_dir",
        "List a directory under the workspace root, sorted; directories end with `/`.",
    )
    .params(params().required(
        "path",
        Schema::string().describe("Directory path, relative to the workspace root."),
    ))
    .output(Schema::array(Schema::string()))
    .body(move |args: ListArgs, _ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        async move {
            blocking(move || {
                let real = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let entries =
                    std::fs::read_dir(&real).map_err(|e| io_error("list", &args.path, &e))?;
                let mut names = Vec::new();
                for entry in entries {
                    let entry = entry.map_err(|e| io_error("list", &args.path, &e))?;
                    let mut name = entry.file_name().to_string_lossy().into_owned();
                    // `metadata` follows symbolic links: a link to a directory lists as one.
                    if entry.path().metadata().is_ok_and(|m| m.is_dir()) {
                        name.push('/');
                    }
                    names.push(name);
                }
                names.sort();
                Ok(names)
            })
            .await
        }
    })
    .concurrency(|_: &ListArgs| true)
    .render(|args, names| {
        let names = names.value();
        let text = if names.is_empty() {
            format!("{} is empty", args.path)
        } else {
            names.join("\n")
        };
        vec![ContentBlock::text(text)]
    })
    // A "paths" search payload: the entries as root-relative paths.
    .presentation_meta(|args, names| {
        let dir = args.path.trim_end_matches('/');
        let paths: Vec<String> = names
            .value()
            .iter()
            .map(|name| match dir {
                "" | "." => name.clone(),
                dir => format!("{dir}/{name}"),
            })
            .collect();
        json!({"shape": "paths", "paths": paths, "truncated": false, "total": paths.len()})
    })
    .presenter(ListDirPresenter)
    .build()
}

/// The cards of `list_dir`: a read card, then the entries as a path list.
struct ListDirPresenter;

impl TypedPresenter for ListDirPresenter {
    type Args = ListArgs;

    fn present_call(&self, args: &ListArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("List {}", args.path))
            .with_kind(ToolCallKind::Read)
            .with_locations([FileLocation::new(&args.path)]);
        Some(view.into())
    }

    fn present_result(&self, args: &ListArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None;
        }
        let view = search_view_from_meta(result.meta.as_ref()?)?;
        Some(titled(view, format!("Listed {}", args.path)))
    }
}

/// A search card with a replacement title.
fn titled(view: SearchResultView, title: String) -> ToolResultView {
    match view {
        SearchResultView::Matches(view) => view.with_title(title).into(),
        SearchResultView::Paths(view) => view.with_title(title).into(),
    }
}

// ---------------------------------------------------------------------------------------
// search_text
// ---------------------------------------------------------------------------------------

/// The arguments of `search_text`.
#[derive(Debug, Deserialize)]
struct SearchArgs {
    path: String,
    needle: String,
    max_results: Option<u64>,
}

/// One matching line.
#[derive(Debug, Serialize, Deserialize)]
struct SearchMatch {
    path: String,
    line: u64,
    text: String,
}

/// What `search_text` returns.
#[derive(Debug, Serialize, Deserialize)]
struct SearchOutput {
    matches: Vec<SearchMatch>,
    /// Whether the walk stopped early because `max_results` was reached.
    truncated: bool,
}

fn search_text_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<SearchArgs, SearchOutput>(
        "search_text",
        "Search the files under a directory for a plain-text needle (case-sensitive); \
         skips `target` and `.git`. Returns `path:line: text` matches.",
    )
    .params(
        params()
            .required(
                "path",
                Schema::string().describe("Directory to search, relative to the workspace root."),
            )
            .required("needle", Schema::string().describe("The text to find."))
            .optional(
                "max_results",
                Schema::integer().describe("Maximum number of matches (default 20)."),
            ),
    )
    .output(
        Schema::closed_object()
            .required(
                "matches",
                Schema::array(
                    Schema::closed_object()
                        .required("path", Schema::string())
                        .required("line", Schema::integer())
                        .required("text", Schema::string()),
                ),
            )
            .required("truncated", Schema::boolean()),
    )
    .body(move |args: SearchArgs, ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        // The walk checks the call's token between files: a cancelled batch stops it.
        let cancel = ctx.cancellation().clone();
        async move {
            if args.needle.is_empty() {
                return Err(ToolError::custom("EMPTY_NEEDLE", "the needle is empty"));
            }
            blocking(move || {
                let dir = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let max = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
                let mut search = Search {
                    sandbox: &sandbox,
                    needle: &args.needle,
                    max,
                    cancel: &cancel,
                    matches: Vec::new(),
                    truncated: false,
                };
                search
                    .walk(&dir)
                    .map_err(|e| io_error("search", &args.path, &e))?;
                Ok(SearchOutput {
                    matches: search.matches,
                    truncated: search.truncated,
                })
            })
            .await
        }
    })
    .concurrency(|_: &SearchArgs| true)
    .render(|args, output| {
        let output = output.value();
        let mut lines: Vec<String> = output
            .matches
            .iter()
            .map(|m| format!("{}:{}: {}", m.path, m.line, m.text))
            .collect();
        if lines.is_empty() {
            lines.push(format!(
                "no matches for {:?} under {}",
                args.needle, args.path
            ));
        }
        if output.truncated {
            lines.push(format!(
                "(stopped after {} matches; narrow the search or raise max_results)",
                output.matches.len()
            ));
        }
        vec![ContentBlock::text(lines.join("\n"))]
    })
    // A "matches" search payload, grouped by file in first-seen order.
    .presentation_meta(|_args, output| {
        let output = output.value();
        let mut files: Vec<(String, Vec<Value>)> = Vec::new();
        for m in &output.matches {
            let found = json!({"lineNumber": m.line, "line": m.text});
            match files.iter_mut().find(|(path, _)| *path == m.path) {
                Some((_, matches)) => matches.push(found),
                None => files.push((m.path.clone(), vec![found])),
            }
        }
        let files: Vec<Value> = files
            .into_iter()
            .map(|(path, matches)| json!({"path": path, "matches": matches}))
            .collect();
        // When the walk stopped early, more matches exist than the ones carried.
        let total = count(output.matches.len()) + u64::from(output.truncated);
        json!({"shape": "matches", "files": files, "truncated": output.truncated, "total": total})
    })
    .presenter(SearchTextPresenter)
    .build()
}

/// A recursive, sorted walk with std only.
struct Search<'a> {
    sandbox: &'a Sandbox,
    needle: &'a str,
    max: u64,
    cancel: &'a CancellationToken,
    matches: Vec<SearchMatch>,
    truncated: bool,
}

impl Search<'_> {
    fn walk(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut entries: Vec<std::fs::DirEntry> =
            std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            if self.truncated || self.cancel.is_cancelled() {
                return Ok(());
            }
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                if !matches!(entry.file_name().to_str(), Some("target" | ".git")) {
                    self.walk(&path)?;
                }
            } else if kind.is_file() {
                // Symbolic links are skipped: they could lead out of ROOT or into a loop.
                self.search_file(&path);
            }
        }
        Ok(())
    }

    fn search_file(&mut self, path: &Path) {
        let too_big = path.metadata().is_ok_and(|m| m.len() > MAX_SEARCHED_FILE);
        let Some(text) = (!too_big)
            .then(|| std::fs::read(path).ok())
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            return; // too big, unreadable or not text
        };
        for (number, line) in (1u64..).zip(text.lines()) {
            if !line.contains(self.needle) {
                continue;
            }
            if count(self.matches.len()) >= self.max {
                self.truncated = true;
                return;
            }
            self.matches.push(SearchMatch {
                path: self.sandbox.relative(path),
                line: number,
                text: shorten_line(line.trim(), 160),
            });
        }
    }
}

/// The cards of `search_text`: a search card with the directory, then the matches.
struct SearchTextPresenter;

impl TypedPresenter for SearchTextPresenter {
    type Args = SearchArgs;

    fn present_call(&self, args: &SearchArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("Search {:?} in {}", args.needle, args.path))
            .with_kind(ToolCallKind::Search)
            .with_locations([FileLocation::new(&args.path)]);
        Some(view.into())
    }

    fn present_result(&self, args: &SearchArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None;
        }
        let view = search_view_from_meta(result.meta.as_ref()?)?;
        Some(titled(
            view,
            format!("Searched {:?} in {}", args.needle, args.path),
        ))
    }
}

// ---------------------------------------------------------------------------------------
// write_note: exclusive, and gated by approval
// ---------------------------------------------------------------------------------------

/// The arguments of `write_note`.
#[derive(Debug, Deserialize)]
struct NoteArgs {
    text: String,
}

/// The session's notes (in memory; the example never writes to the file system).
type Notes = Arc<Mutex<Vec<String>>>;

fn write_note_tool(notes: &Notes) -> Result<ToolDefinition, RegistryError> {
    let notes = Arc::clone(notes);
    define_tool::<NoteArgs, String>("write_note", "Append a note to the session's notes.")
        .params(params().required("text", Schema::string().describe("The note.")))
        .output(Schema::string())
        .body(move |args: NoteArgs, _ctx: RunContext| {
            let notes = Arc::clone(&notes);
            async move {
                let mut notes = notes.lock().unwrap_or_else(PoisonError::into_inner);
                notes.push(args.text);
                Ok(format!("note #{} saved", notes.len()))
            }
        })
        // No concurrency classifier: the tool is exclusive and runs alone in a batch.
        .presenter(WriteNotePresenter)
        .build()
}

/// The call card of `write_note`; its result gets the generic card.
struct WriteNotePresenter;

impl TypedPresenter for WriteNotePresenter {
    type Args = NoteArgs;

    fn present_call(&self, args: &NoteArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("Write a note: {}", shorten_line(&args.text, 40)))
            .with_kind(ToolCallKind::Edit)
            .with_raw_input(json!(args.text));
        Some(view.into())
    }
}

/// A question for the user, sent by the approval service to the loop that owns the
/// terminal (the "UI"), with the channel its answer goes back on.
type Question = (ApprovalRequest, oneshot::Sender<ApprovalOutcome>);

/// The approval service: hands each question to the UI loop and waits for its answer.
/// Asking through the UI keeps the question after every event printed before it.
fn approval_service(
    questions: mpsc::UnboundedSender<Question>,
) -> impl Fn(ApprovalRequest) -> BoxedOutcome + Send + Sync + 'static {
    move |request: ApprovalRequest| {
        let (reply, answer) = oneshot::channel();
        let sent = questions.send((request, reply)).is_ok();
        Box::pin(async move {
            // No UI (it is gone) means nobody can answer.
            Ok(match sent {
                true => answer.await.unwrap_or(ApprovalOutcome::Unavailable),
                false => ApprovalOutcome::Unavailable,
            })
        })
    }
}

type BoxedOutcome =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<ApprovalOutcome, ToolError>> + Send>>;

/// The UI's side: asks `y/N` on the terminal, or denies when stdin is not one (CI, a pipe,
/// `</dev/null`), saying so.
async fn ask_user(request: &ApprovalRequest) -> ApprovalOutcome {
    let reason = request.reason.as_deref().unwrap_or("no reason given");
    if !std::io::stdin().is_terminal() {
        println!(
            "   [approval] {} ({}) asks for approval ({reason}); stdin is not a terminal, \
             so it is denied automatically",
            request.tool, request.call_id
        );
        return ApprovalOutcome::Unavailable;
    }
    let question = format!(
        "   [approval] allow {} ({})? {reason} [y/N] ",
        request.tool, request.call_id
    );
    let answer = tokio::task::spawn_blocking(move || {
        let mut stdout = std::io::stdout().lock();
        write!(stdout, "{question}")?;
        stdout.flush()?;
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        Ok::<String, std::io::Error>(line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if matches!(line.trim(), "y" | "Y" | "yes") => ApprovalOutcome::AllowedOnce,
        Ok(Ok(_)) => ApprovalOutcome::Rejected,
        Ok(Err(_)) | Err(_) => ApprovalOutcome::Unavailable,
    }
}

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
                    .registry()
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
