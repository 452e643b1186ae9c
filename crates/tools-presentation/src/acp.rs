//! The mapping of views to the Agent Client Protocol, on the protocol's own Rust types
//! (`agent-client-protocol-schema`, re-exported as [`schema`]).
//!
//! - [`AcpContext`] holds what a faithful mapping needs besides the view: whether the
//!   client renders terminal output (the `terminal_output` capability in the `_meta` of its
//!   `ClientCapabilities`) and the session's working directory. Take it once per session,
//!   so a call and its result can never disagree.
//! - [`AcpContext::tool_call`] maps a call view to a `ToolCall` (status `in_progress`) and
//!   [`AcpContext::tool_call_update`] a result view to a `ToolCallUpdate` (status
//!   `completed` or `failed`; content, when present, replaces the call's).
//! - [`AcpBridge`] puts a [`SessionPresenter`] in front of them, so an agent turns call and
//!   result events into `SessionUpdate`s with every fallback applied.
//!
//! Paths in locations and diffs are sent absolute: a relative path is joined to the session
//! directory (and sent as is without one). Titles are shown relative to the session
//! directory when they name a file inside it ([`AcpContext::display_title`]).
//!
//! | view | ACP |
//! | --- | --- |
//! | generic call | `kind` from the view, `rawInput`, `locations`, text `content` |
//! | terminal call | `kind: execute`, `rawInput` = the command, the description as text, then (capable client) a `terminal` block and `_meta.terminal_info` |
//! | diff call | `kind: edit`, one `diff` block per file, `locations` |
//! | generic result | text `content` (the raw result's when the view has none), `title` |
//! | terminal result | capable: no content, `_meta.terminal_output` and `terminal_exit`; otherwise a fenced `console` text block |
//! | diff result | `diff` blocks (none when empty), relativised `title` |
//! | read result | text of the view's `content` (else the raw content), `rawOutput` = the view |
//! | search and web results | text of the raw content, `rawOutput` = the view |
//!
//! Only text blocks have an ACP form here; other blocks are dropped.

use std::path::{Component, Path, PathBuf};

pub use agent_client_protocol_schema as schema;
use agent_client_protocol_schema::v1::{
    ClientCapabilities, Content, ContentBlock as AcpContentBlock, Diff, Meta, SessionUpdate,
    Terminal, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use crate::{
    ContentBlock, FileDiff, FileLocation, PresenterFailure, RawResult, ResultOrigin,
    SessionPresenter, TerminalExit, ToolCallKind, ToolCallView, ToolResultView,
};

/// The key of the client capability `_meta` entry that says the client renders terminal
/// output sent in `_meta` (a convention of Zed and the ACP adapters, inside ACP's `_meta`
/// extension point).
pub const TERMINAL_OUTPUT_CAPABILITY: &str = "terminal_output";

impl From<ToolCallKind> for ToolKind {
    fn from(kind: ToolCallKind) -> Self {
        match kind {
            ToolCallKind::Read => ToolKind::Read,
            ToolCallKind::Edit => ToolKind::Edit,
            ToolCallKind::Delete => ToolKind::Delete,
            ToolCallKind::Move => ToolKind::Move,
            ToolCallKind::Search => ToolKind::Search,
            ToolCallKind::Execute => ToolKind::Execute,
            ToolCallKind::Fetch => ToolKind::Fetch,
            ToolCallKind::Other => ToolKind::Other,
        }
    }
}

/// ACP kinds without a presentation counterpart (`think`, `switch_mode`, and any kind a
/// later protocol version adds) become [`ToolCallKind::Other`].
impl From<ToolKind> for ToolCallKind {
    fn from(kind: ToolKind) -> Self {
        match kind {
            ToolKind::Read => ToolCallKind::Read,
            ToolKind::Edit => ToolCallKind::Edit,
            ToolKind::Delete => ToolCallKind::Delete,
            ToolKind::Move => ToolCallKind::Move,
            ToolKind::Search => ToolCallKind::Search,
            ToolKind::Execute => ToolCallKind::Execute,
            ToolKind::Fetch => ToolCallKind::Fetch,
            _ => ToolCallKind::Other,
        }
    }
}

/// What the mapping needs besides a view: the client's terminal capability and the
/// session's working directory.
///
/// # Examples
///
/// ```
/// use tools_presentation::acp::AcpContext;
/// use tools_presentation::acp::schema::v1::ClientCapabilities;
/// use serde_json::json;
///
/// let caps: ClientCapabilities = serde_json::from_value(json!({"_meta": {"terminal_output": true}}))?;
/// let context = AcpContext::for_client(&caps).with_session_cwd("/home/u/proj");
/// assert!(context.terminal_output());
/// assert_eq!(context.display_title("Edit /home/u/proj/src/a.rs", "/home/u/proj/src/a.rs"), "Edit src/a.rs");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AcpContext {
    terminal_output: bool,
    session_cwd: Option<PathBuf>,
}

fn text_block(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::Content(Content::new(AcpContentBlock::Text(TextContent::new(text))))
}

fn text_contents(blocks: &[ContentBlock]) -> Vec<ToolCallContent> {
    blocks
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(text_block)
        .collect()
}

/// A Markdown `console` block of `output` without its trailing newlines, fenced with more
/// backticks than any run inside it.
fn console_block(output: &str) -> String {
    let body = output.trim_end_matches(['\n', '\r']);
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}console\n{body}\n{fence}")
}

fn path_text(path: &Path) -> Value {
    Value::String(path.to_string_lossy().into_owned())
}

/// `path` with `.` removed and `..` applied, without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl AcpContext {
    /// A context for a client without terminal output and a session without a working
    /// directory.
    pub fn new() -> AcpContext {
        AcpContext::default()
    }

    /// The context for a client with these capabilities: terminal output is on when the
    /// capabilities' `_meta` has `"terminal_output": true` (anything else means off).
    pub fn for_client(capabilities: &ClientCapabilities) -> AcpContext {
        let terminal_output = capabilities
            .meta
            .as_ref()
            .and_then(|meta| meta.get(TERMINAL_OUTPUT_CAPABILITY))
            .and_then(Value::as_bool)
            == Some(true);
        AcpContext::new().with_terminal_output(terminal_output)
    }

    /// The same context with terminal output on or off.
    #[must_use]
    pub fn with_terminal_output(mut self, enabled: bool) -> AcpContext {
        self.terminal_output = enabled;
        self
    }

    /// The same context with the session's working directory (absolute, to be useful).
    #[must_use]
    pub fn with_session_cwd(mut self, cwd: impl Into<PathBuf>) -> AcpContext {
        self.session_cwd = Some(cwd.into());
        self
    }

    /// Whether the client renders terminal output sent in `_meta`.
    pub fn terminal_output(&self) -> bool {
        self.terminal_output
    }

    /// The session's working directory, if known.
    pub fn session_cwd(&self) -> Option<&Path> {
        self.session_cwd.as_deref()
    }

    /// The path to send for a path a tool reported: absolute paths as they are, relative
    /// ones joined to the session directory, or as they are without one.
    pub fn resolve_path(&self, path: &str) -> PathBuf {
        match &self.session_cwd {
            Some(cwd) if Path::new(path).is_relative() => cwd.join(path),
            _ => PathBuf::from(path),
        }
    }

    /// `title` with every occurrence of `raw_path` replaced by the path relative to the
    /// session directory, when both are absolute and the path lies strictly inside the
    /// directory (`..cache/x` is inside; `..` segments are resolved lexically first);
    /// otherwise `title` unchanged.
    pub fn display_title(&self, title: &str, raw_path: &str) -> String {
        let path = Path::new(raw_path);
        let Some(cwd) = self.session_cwd.as_deref() else {
            return title.to_owned();
        };
        if raw_path.is_empty() || !path.is_absolute() || !cwd.is_absolute() {
            return title.to_owned();
        }
        let (cwd, path) = (lexical(cwd), lexical(path));
        match path.strip_prefix(&cwd).ok().and_then(Path::to_str) {
            Some(relative) if !relative.is_empty() => title.replace(raw_path, relative),
            _ => title.to_owned(),
        }
    }

    /// The ACP location of a file location (path resolved, line kept).
    pub fn location(&self, location: &FileLocation) -> ToolCallLocation {
        ToolCallLocation::new(self.resolve_path(&location.path))
            .line(location.line.map(|line| line.get()))
    }

    /// The ACP diff of a file diff (path resolved; no old text when there is no
    /// before-image).
    pub fn diff(&self, diff: &FileDiff) -> Diff {
        Diff::new(self.resolve_path(&diff.path), diff.new_text.clone())
            .old_text(diff.old_text.clone())
    }

    fn diff_contents(&self, diffs: &[FileDiff]) -> Vec<ToolCallContent> {
        diffs
            .iter()
            .map(|diff| ToolCallContent::Diff(self.diff(diff)))
            .collect()
    }

    fn locations(&self, locations: &[FileLocation]) -> Vec<ToolCallLocation> {
        locations.iter().map(|l| self.location(l)).collect()
    }

    fn terminal_cwd(&self, cwd: Option<&str>) -> Option<PathBuf> {
        match cwd {
            Some(cwd) => Some(self.resolve_path(cwd)),
            None => self.session_cwd.clone(),
        }
    }

    /// The `ToolCall` of a pending call's view: status `in_progress`, the tool's name, and
    /// the card's mapping (see the module docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_presentation::acp::AcpContext;
    /// use tools_presentation::acp::schema::v1::{ToolCallStatus, ToolKind};
    /// use tools_presentation::{TerminalCallView, ToolCallView};
    ///
    /// let view = ToolCallView::from(TerminalCallView::new("cargo test"));
    /// let call = AcpContext::new().tool_call("c1", "bash", &view);
    /// assert_eq!(call.kind, ToolKind::Execute);
    /// assert_eq!(call.status, ToolCallStatus::InProgress);
    /// assert_eq!(call.raw_input, Some("cargo test".into()));
    /// assert!(call.content.is_empty() && call.meta.is_none());
    /// ```
    pub fn tool_call(&self, call_id: &str, tool_name: &str, view: &ToolCallView) -> ToolCall {
        let call = |title: String| {
            ToolCall::new(call_id.to_owned(), title)
                .name(tool_name.to_owned())
                .status(ToolCallStatus::InProgress)
        };
        match view {
            ToolCallView::Generic(view) => {
                let title = match view.locations().and_then(<[_]>::first) {
                    Some(first) => self.display_title(view.title(), &first.path),
                    None => view.title().to_owned(),
                };
                let mut tool_call = call(title)
                    .kind(view.kind().into())
                    .raw_input(view.raw_input().cloned());
                if let Some(locations) = view.locations() {
                    tool_call = tool_call.locations(self.locations(locations));
                }
                if let Some(content) = view.content() {
                    tool_call = tool_call.content(text_contents(content));
                }
                tool_call
            }
            ToolCallView::Diff(view) => {
                let anchor = view
                    .locations()
                    .and_then(<[_]>::first)
                    .map(|l| l.path.as_str())
                    .or_else(|| view.diffs().first().map(|d| d.path.as_str()));
                let title = match anchor {
                    Some(path) => self.display_title(view.title(), path),
                    None => view.title().to_owned(),
                };
                let mut tool_call = call(title)
                    .kind(ToolKind::Edit)
                    .content(self.diff_contents(view.diffs()));
                if let Some(locations) = view.locations() {
                    tool_call = tool_call.locations(self.locations(locations));
                }
                tool_call
            }
            ToolCallView::Terminal(view) => {
                let mut content: Vec<ToolCallContent> =
                    view.description().map(text_block).into_iter().collect();
                let mut meta = None;
                if self.terminal_output {
                    content.push(ToolCallContent::Terminal(Terminal::new(call_id.to_owned())));
                    let mut info = serde_json::Map::new();
                    info.insert("terminal_id".into(), Value::String(call_id.to_owned()));
                    if let Some(cwd) = self.terminal_cwd(view.cwd()) {
                        info.insert("cwd".into(), path_text(&cwd));
                    }
                    meta = Some(Meta::from_iter([(
                        "terminal_info".to_owned(),
                        Value::Object(info),
                    )]));
                }
                call(view.title().to_owned())
                    .kind(ToolKind::Execute)
                    .raw_input(Value::String(view.title().to_owned()))
                    .content(content)
                    .meta(meta)
            }
        }
    }

    /// The `ToolCallUpdate` of a completed call's view: status `failed` when the result is
    /// an error, `completed` otherwise, and the card's mapping (see the module docs).
    ///
    /// `result` supplies the status and the raw content shown by cards that carry none.
    /// The view is taken as given: run it through a [`SessionPresenter`] (or use
    /// [`AcpBridge`]) for the fallbacks, such as the orphan guard for terminal results.
    pub fn tool_call_update(
        &self,
        call_id: &str,
        view: &ToolResultView,
        result: &RawResult,
    ) -> ToolCallUpdate {
        let status = if result.is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let mut fields = ToolCallUpdateFields::new().status(status);
        let mut meta = None;
        let mut title = view.title().map(str::to_owned);
        match view {
            ToolResultView::Generic(view) => {
                let content = view.content().unwrap_or(&result.content);
                fields = fields.content(text_contents(content));
            }
            ToolResultView::Terminal(view) => {
                if self.terminal_output {
                    meta = Some(terminal_result_meta(call_id, view.output(), view.exit()));
                } else {
                    let block = console_block(view.output().unwrap_or_default());
                    fields = fields.content(vec![text_block(block)]);
                }
            }
            ToolResultView::Diff(view) => {
                if let (Some(first), Some(raw)) = (view.diffs().first(), &title) {
                    title = Some(self.display_title(raw, &first.path));
                }
                if !view.diffs().is_empty() {
                    fields = fields.content(self.diff_contents(view.diffs()));
                }
            }
            ToolResultView::Read(read) => {
                if let Some(raw) = &title {
                    title = Some(self.display_title(raw, read.path()));
                }
                let content = read.content().unwrap_or(&result.content);
                fields = fields
                    .content(text_contents(content))
                    .raw_output(view.to_json());
            }
            ToolResultView::Search(_) | ToolResultView::Web(_) => {
                fields = fields
                    .content(text_contents(&result.content))
                    .raw_output(view.to_json());
            }
        }
        ToolCallUpdate::new(call_id.to_owned(), fields.title(title)).meta(meta)
    }
}

fn terminal_result_meta(
    call_id: &str,
    output: Option<&str>,
    exit: Option<TerminalExit<'_>>,
) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "terminal_output".into(),
        json!({"terminal_id": call_id, "data": output.unwrap_or_default()}),
    );
    let exit = match exit {
        Some(TerminalExit::Signal(signal)) => {
            Some(json!({"terminal_id": call_id, "signal": signal}))
        }
        Some(TerminalExit::Code(code)) => Some(json!({"terminal_id": call_id, "exit_code": code})),
        None => None,
    };
    if let Some(exit) = exit {
        meta.insert("terminal_exit".into(), exit);
    }
    meta
}

/// A [`SessionPresenter`] in front of an [`AcpContext`]: call and result events in,
/// `SessionUpdate`s out, with every fallback applied. One per ACP session.
///
/// # Examples
///
/// ```
/// use tools_presentation::acp::{AcpBridge, AcpContext};
/// use tools_presentation::acp::schema::v1::{SessionUpdate, ToolCallStatus};
/// use tools_presentation::{RawResult, ResultOrigin, parse_call_args};
///
/// let mut bridge = AcpBridge::new(AcpContext::new());
/// let SessionUpdate::ToolCall(call) = bridge.tool_call("c1", "bash", &parse_call_args(r#"{"command":"ls"}"#), None) else {
///     unreachable!()
/// };
/// assert_eq!(call.title, "bash");
///
/// let update = bridge.tool_result("c1", &RawResult::text("out"), ResultOrigin::Executed);
/// let Some(SessionUpdate::ToolCallUpdate(update)) = update else { unreachable!() };
/// assert_eq!(update.fields.status, Some(ToolCallStatus::Completed));
/// assert_eq!(update.fields.content.map(|c| c.len()), Some(1));
/// ```
#[derive(Debug, Default)]
pub struct AcpBridge {
    context: AcpContext,
    session: SessionPresenter,
}

impl AcpBridge {
    /// A bridge for a session with this context.
    pub fn new(context: AcpContext) -> AcpBridge {
        AcpBridge {
            context,
            session: SessionPresenter::new(),
        }
    }

    /// The same bridge reporting panicking presenter hooks to `sink`.
    #[must_use]
    pub fn with_failure_sink(
        mut self,
        sink: impl FnMut(&PresenterFailure) + Send + 'static,
    ) -> AcpBridge {
        self.session = self.session.with_failure_sink(sink);
        self
    }

    /// The session's context.
    pub fn context(&self) -> &AcpContext {
        &self.context
    }

    /// The pending-call memory.
    pub fn session(&self) -> &SessionPresenter {
        &self.session
    }

    /// The pending-call memory, to forget calls that will never complete.
    pub fn session_mut(&mut self) -> &mut SessionPresenter {
        &mut self.session
    }

    /// The `tool_call` update of a new call (see [`SessionPresenter::present_call`]).
    pub fn tool_call(
        &mut self,
        call_id: &str,
        tool_name: &str,
        args: &Value,
        presenter: Option<std::sync::Arc<dyn crate::Presenter>>,
    ) -> SessionUpdate {
        let view = self
            .session
            .present_call(call_id, tool_name, args, presenter);
        SessionUpdate::ToolCall(self.context.tool_call(call_id, tool_name, &view))
    }

    /// The `tool_call_update` of a call's result, or `None` for a transcript rewrite (see
    /// [`SessionPresenter::present_result`]).
    pub fn tool_result(
        &mut self,
        call_id: &str,
        result: &RawResult,
        origin: ResultOrigin,
    ) -> Option<SessionUpdate> {
        let view = self.session.present_result(call_id, result, origin)?;
        Some(SessionUpdate::ToolCallUpdate(
            self.context.tool_call_update(call_id, &view, result),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_fences_outgrow_backticks_inside() {
        assert_eq!(console_block("hi\n\n"), "```console\nhi\n```");
        assert_eq!(console_block(""), "```console\n\n```");
        assert_eq!(console_block("a ```` b"), "`````console\na ```` b\n`````");
    }

    #[test]
    fn kinds_map_both_ways() {
        for kind in ToolCallKind::ALL {
            assert_eq!(ToolCallKind::from(ToolKind::from(kind)), kind);
            assert_eq!(
                serde_json::to_value(ToolKind::from(kind)).unwrap(),
                serde_json::to_value(kind).unwrap()
            );
        }
        assert_eq!(ToolCallKind::from(ToolKind::Think), ToolCallKind::Other);
        assert_eq!(
            ToolCallKind::from(ToolKind::SwitchMode),
            ToolCallKind::Other
        );
    }

    #[test]
    fn lexical_paths_resolve_dot_segments() {
        assert_eq!(lexical(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../x")), PathBuf::from("/x"));
    }
}
