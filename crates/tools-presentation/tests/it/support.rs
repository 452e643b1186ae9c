//! Presenters and helpers shared by the test modules.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tools_presentation::{
    ContentBlock, DiffCallView, DiffResultView, FileDiff, FileLocation, GenericCallView,
    GenericResultView, Presenter, PresenterFailure, RawResult, TerminalCallView,
    TerminalResultView, ToolCallKind, ToolCallView, ToolResultView, diffs_from_meta,
};

/// A presenter made of two closures.
pub(crate) struct Fns<C, R>(pub(crate) C, pub(crate) R);

impl<C, R> Presenter for Fns<C, R>
where
    C: Fn(&Value) -> Option<ToolCallView> + Send + Sync,
    R: Fn(&Value, &RawResult) -> Option<ToolResultView> + Send + Sync,
{
    fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        (self.0)(args)
    }

    fn present_result(&self, args: &Value, result: &RawResult) -> Option<ToolResultView> {
        (self.1)(args, result)
    }
}

/// `Some` presenter as the trait object the session takes.
pub(crate) fn presenter(p: impl Presenter + 'static) -> Option<Arc<dyn Presenter>> {
    Some(Arc::new(p))
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)?.as_str()
}

/// A foreground `bash`: a terminal card (command, description, workdir), and a terminal
/// result parsed from `"<output>\n[exit N]"` or `"<output>\n[signal S]"`.
pub(crate) fn bash() -> Option<Arc<dyn Presenter>> {
    presenter(Fns(
        |args: &Value| {
            let mut view = TerminalCallView::new(str_arg(args, "command")?);
            if let Some(description) = str_arg(args, "description") {
                view = view.with_description(description);
            }
            if let Some(workdir) = str_arg(args, "workdir") {
                view = view.with_cwd(workdir);
            }
            Some(view.into())
        },
        |_: &Value, result: &RawResult| {
            let text = result.content.first()?.as_text()?;
            let mut view = TerminalResultView::new();
            let (output, status) = match text.rsplit_once("\n[") {
                Some((output, status)) => (format!("{output}\n"), Some(status)),
                None => (text.to_owned(), None),
            };
            if !output.is_empty() {
                view = view.with_output(output);
            }
            match status.and_then(|s| s.strip_suffix(']')) {
                Some(s) if s.starts_with("exit ") => {
                    view = view.with_exit_code(s["exit ".len()..].parse().ok()?);
                }
                Some(s) if s.starts_with("signal ") => {
                    view = view.with_signal(&s["signal ".len()..])
                }
                _ => {}
            }
            Some(view.into())
        },
    ))
}

/// An `edit` tool: a diff call card from `old_string`/`new_string`, and a diff result from
/// the `meta` payload (none on error).
pub(crate) fn edit() -> Option<Arc<dyn Presenter>> {
    presenter(Fns(
        |args: &Value| {
            let path = str_arg(args, "path")?;
            let diff = FileDiff::new(
                path,
                Some(str_arg(args, "old_string")?.to_owned()),
                str_arg(args, "new_string")?,
            );
            Some(
                DiffCallView::new(format!("Edit {path}"), [diff])
                    .with_locations([FileLocation::new(path)])
                    .into(),
            )
        },
        |args: &Value, result: &RawResult| {
            if result.is_error {
                return None;
            }
            let diffs = diffs_from_meta(result.meta.as_ref()?)?;
            let title = format!("Edit {}", str_arg(args, "path")?);
            Some(DiffResultView::new(diffs).with_title(title).into())
        },
    ))
}

/// A generic presenter: `{title: description, kind: execute, rawInput: command}`, and a
/// result whose content is the raw text upper-cased.
pub(crate) fn described() -> Option<Arc<dyn Presenter>> {
    presenter(Fns(
        |args: &Value| {
            Some(
                GenericCallView::new(str_arg(args, "description")?)
                    .with_kind(ToolCallKind::Execute)
                    .with_raw_input(args.get("command")?.clone())
                    .into(),
            )
        },
        |_: &Value, result: &RawResult| {
            let text = result.content.first()?.as_text()?.to_uppercase();
            Some(
                GenericResultView::new()
                    .with_content([ContentBlock::text(text)])
                    .into(),
            )
        },
    ))
}

/// Presenters whose hooks both panic.
pub(crate) fn panicking() -> Option<Arc<dyn Presenter>> {
    presenter(Fns(
        |_: &Value| -> Option<ToolCallView> { panic!("call exploded") },
        |_: &Value, _: &RawResult| -> Option<ToolResultView> { panic!("result exploded") },
    ))
}

/// A failure sink that records what it receives.
pub(crate) fn recording_sink() -> (
    Arc<Mutex<Vec<PresenterFailure>>>,
    impl FnMut(&PresenterFailure) + Send + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = Arc::clone(&seen);
    (seen, move |failure: &PresenterFailure| {
        sink_seen.lock().unwrap().push(failure.clone());
    })
}

/// An image block (not text).
pub(crate) fn image() -> ContentBlock {
    serde_json::from_value(serde_json::json!({"type": "image", "attachment": {"id": "img-1"}}))
        .unwrap()
}
