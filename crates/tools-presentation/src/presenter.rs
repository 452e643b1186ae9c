//! Presenters (the two hooks a tool implements) and [`SessionPresenter`], the per-session
//! memory that turns their output into the views a UI shows, with every fallback.

use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{CallCard, GenericResultView, RawResult, ResultCard, ToolCallView, ToolResultView};

/// The two presentation hooks of a tool: how its pending call and its completed result
/// look in a UI.
///
/// Both are pure: they run while a call streams live and again when a session log is
/// replayed, so they must depend only on their inputs, tolerate arguments written against
/// an older schema, and never panic. Returning `None` asks for the generic card. A
/// [`SessionPresenter`] catches a panic anyway and shows the generic card instead.
///
/// # Examples
///
/// ```
/// use tools_presentation::{GenericCallView, Presenter, ToolCallKind, ToolCallView};
/// use serde_json::{Value, json};
///
/// struct Bash;
///
/// impl Presenter for Bash {
///     fn present_call(&self, args: &Value) -> Option<ToolCallView> {
///         let command = args.get("command")?.as_str()?;
///         Some(GenericCallView::new(command).with_kind(ToolCallKind::Execute).into())
///     }
/// }
///
/// assert_eq!(Bash.present_call(&json!({"command": "ls"})).map(|v| v.title().to_owned()), Some("ls".to_owned()));
/// assert_eq!(Bash.present_call(&json!({})), None);
/// ```
pub trait Presenter: Send + Sync {
    /// The view of a pending call with these arguments, or `None` for the generic card.
    fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        let _ = args;
        None
    }

    /// The view of a completed call, or `None` for the generic card.
    fn present_result(&self, args: &Value, result: &RawResult) -> Option<ToolResultView> {
        let _ = (args, result);
        None
    }
}

/// A presenter over typed arguments: wrap it in [`Typed`] to get a [`Presenter`].
///
/// Arguments that do not deserialize into [`TypedPresenter::Args`] (a wrong shape, an older
/// schema) give no view, so the UI shows the generic card; the hooks never see them.
///
/// # Examples
///
/// ```
/// use tools_presentation::{
///     ContentBlock, FileLocation, GenericCallView, GenericResultView, Presenter, RawResult,
///     ToolCallKind, ToolCallView, ToolResultView, Typed, TypedPresenter,
/// };
/// use serde::Deserialize;
/// use serde_json::json;
///
/// #[derive(Deserialize)]
/// struct OpenArgs { path: String }
///
/// struct Open;
///
/// impl TypedPresenter for Open {
///     type Args = OpenArgs;
///
///     fn present_call(&self, args: &OpenArgs) -> Option<ToolCallView> {
///         let view = GenericCallView::new(format!("Open {}", args.path))
///             .with_kind(ToolCallKind::Read)
///             .with_locations([FileLocation::new(&args.path)]);
///         Some(view.into())
///     }
///
///     fn present_result(&self, args: &OpenArgs, result: &RawResult) -> Option<ToolResultView> {
///         let view = GenericResultView::new()
///             .with_title(format!("Opened {}", args.path))
///             .with_content(result.content.clone());
///         Some(view.into())
///     }
/// }
///
/// let open = Typed(Open);
/// assert_eq!(open.present_call(&json!({"path": "/a"})).map(|v| v.title().to_owned()), Some("Open /a".into()));
/// assert_eq!(open.present_call(&json!({})), None);
/// assert_eq!(open.present_result(&json!({"wrong": 1}), &RawResult::text("x")), None);
/// ```
pub trait TypedPresenter: Send + Sync {
    /// The arguments the hooks see.
    type Args: DeserializeOwned;

    /// The view of a pending call, or `None` for the generic card.
    fn present_call(&self, args: &Self::Args) -> Option<ToolCallView> {
        let _ = args;
        None
    }

    /// The view of a completed call, or `None` for the generic card.
    fn present_result(&self, args: &Self::Args, result: &RawResult) -> Option<ToolResultView> {
        let _ = (args, result);
        None
    }
}

/// The [`Presenter`] of a [`TypedPresenter`]: arguments that do not deserialize give no
/// view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Typed<P>(pub P);

impl<P: TypedPresenter> Presenter for Typed<P> {
    fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        let args = P::Args::deserialize(args).ok()?;
        self.0.present_call(&args)
    }

    fn present_result(&self, args: &Value, result: &RawResult) -> Option<ToolResultView> {
        let args = P::Args::deserialize(args).ok()?;
        self.0.present_result(&args, result)
    }
}

/// The arguments of a call from the model's JSON text, for presentation: empty (or blank)
/// text is `{}`, and text that is not JSON (or breaks the lossless boundary of
/// [`tools_json::JsonValue::parse`]) is kept as a JSON string.
///
/// # Examples
///
/// ```
/// use tools_presentation::parse_call_args;
/// use serde_json::json;
///
/// assert_eq!(parse_call_args(r#"{"command":"ls"}"#), json!({"command": "ls"}));
/// assert_eq!(parse_call_args(""), json!({}));
/// assert_eq!(parse_call_args("not json"), json!("not json"));
/// ```
pub fn parse_call_args(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match tools_json::JsonValue::parse(text) {
        Ok(value) => value.into_value(),
        Err(_) => Value::String(text.to_owned()),
    }
}

/// Which hook failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PresenterStage {
    /// [`Presenter::present_call`].
    Call,
    /// [`Presenter::present_result`].
    Result,
}

impl fmt::Display for PresenterStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PresenterStage::Call => "present_call",
            PresenterStage::Result => "present_result",
        })
    }
}

/// A presenter hook that panicked; the UI got the generic card instead.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PresenterFailure {
    /// The call whose view was being made.
    pub call_id: String,
    /// The tool whose presenter failed.
    pub tool_name: String,
    /// Which hook failed.
    pub stage: PresenterStage,
    /// The panic's message (or a placeholder when the payload was not text).
    pub message: String,
}

impl fmt::Display for PresenterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of tool {:?} panicked for call {:?}; showing the generic card: {}",
            self.stage, self.tool_name, self.call_id, self.message
        )
    }
}

/// Where a result event comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultOrigin {
    /// The call ran and completed (the usual case).
    #[default]
    Executed,
    /// A transcript rewrite replaced an already shown result (pruning, compaction): not an
    /// execution, so it produces no view.
    Rewritten,
}

struct Pending {
    tool_name: String,
    args: Value,
    card: CallCard,
    presenter: Option<Arc<dyn Presenter>>,
}

type FailureSink = Box<dyn FnMut(&PresenterFailure) + Send>;

/// The per-session memory between a call and its result, with every fallback a UI needs.
///
/// For each call it runs the tool's presenter (if any) and remembers the tool name, the
/// arguments, the card shown and the presenter, until the call's first result consumes
/// them. The rules:
///
/// - no call view (no presenter, `None`, or a panic) → [`ToolCallView::fallback`];
/// - a result whose call is unknown (never seen, or already completed) → a generic card of
///   the raw content, without running any presenter;
/// - no result view (`None` or a panic) → a generic card of the raw content;
/// - a terminal result for a call that was not shown as a terminal (an orphan) → a generic
///   card of the raw content, keeping the result's title;
/// - a generic result without content → the same card with the raw content, so a
///   title-only result never blanks the card;
/// - a [`ResultOrigin::Rewritten`] result → no view at all (the pending memory is kept);
/// - a panicking hook is reported to the failure sink, if one is installed, and never
///   propagates (this needs the default `panic = "unwind"`).
///
/// Calls that never complete stay in memory until [`SessionPresenter::forget`] or
/// [`SessionPresenter::clear`].
///
/// # Examples
///
/// ```
/// use tools_presentation::{ContentBlock, RawResult, ResultOrigin, SessionPresenter, ToolResultView};
/// use serde_json::json;
///
/// let mut session = SessionPresenter::new();
/// let call = session.present_call("c1", "bash", &json!({"command": "ls"}), None);
/// assert_eq!(call.title(), "bash");
///
/// let result = session.present_result("c1", &RawResult::text("out"), ResultOrigin::Executed);
/// let Some(ToolResultView::Generic(view)) = result else { unreachable!() };
/// assert_eq!(view.content(), Some(&[ContentBlock::text("out")][..]));
/// assert!(!session.is_pending("c1"));
/// ```
#[derive(Default)]
pub struct SessionPresenter {
    pending: HashMap<String, Pending>,
    sink: Option<FailureSink>,
}

impl fmt::Debug for SessionPresenter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionPresenter")
            .field("pending", &self.pending.len())
            .field("failure_sink", &self.sink.is_some())
            .finish()
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic without a text message)".to_owned()
    }
}

fn raw_content_view(title: Option<&str>, result: &RawResult) -> ToolResultView {
    let view = GenericResultView::new().with_content(result.content.iter().cloned());
    match title {
        Some(title) => view.with_title(title).into(),
        None => view.into(),
    }
}

impl SessionPresenter {
    /// An empty session without a failure sink.
    pub fn new() -> SessionPresenter {
        SessionPresenter::default()
    }

    /// The same session reporting panicking hooks to `sink`.
    #[must_use]
    pub fn with_failure_sink(
        mut self,
        sink: impl FnMut(&PresenterFailure) + Send + 'static,
    ) -> SessionPresenter {
        self.sink = Some(Box::new(sink));
        self
    }

    fn report(&mut self, call_id: &str, tool_name: &str, stage: PresenterStage, message: String) {
        if let Some(sink) = self.sink.as_mut() {
            let failure = PresenterFailure {
                call_id: call_id.to_owned(),
                tool_name: tool_name.to_owned(),
                stage,
                message,
            };
            // A panicking sink must not take the UI down either.
            let _ = catch_unwind(AssertUnwindSafe(|| sink(&failure)));
        }
    }

    /// The view of a new pending call, remembered until its first result.
    ///
    /// `args` are the call's arguments (see [`parse_call_args`] for the model's JSON text);
    /// `presenter` is the tool's, if it has one. A second call with the same id replaces the
    /// first.
    pub fn present_call(
        &mut self,
        call_id: &str,
        tool_name: &str,
        args: &Value,
        presenter: Option<Arc<dyn Presenter>>,
    ) -> ToolCallView {
        let presented = match &presenter {
            None => None,
            Some(presenter) => {
                match catch_unwind(AssertUnwindSafe(|| presenter.present_call(args))) {
                    Ok(view) => view,
                    Err(payload) => {
                        let message = panic_message(payload.as_ref());
                        self.report(call_id, tool_name, PresenterStage::Call, message);
                        None
                    }
                }
            }
        };
        let view = presented.unwrap_or_else(|| ToolCallView::fallback(tool_name, args));
        self.pending.insert(
            call_id.to_owned(),
            Pending {
                tool_name: tool_name.to_owned(),
                args: args.clone(),
                card: view.card(),
                presenter,
            },
        );
        view
    }

    /// The view of a call's result, consuming the call's pending memory; `None` for a
    /// [`ResultOrigin::Rewritten`] result. See the type's docs for the fallbacks.
    pub fn present_result(
        &mut self,
        call_id: &str,
        result: &RawResult,
        origin: ResultOrigin,
    ) -> Option<ToolResultView> {
        if origin == ResultOrigin::Rewritten {
            return None;
        }
        let Some(pending) = self.pending.remove(call_id) else {
            return Some(raw_content_view(None, result));
        };
        let presented = match &pending.presenter {
            None => None,
            Some(presenter) => {
                let args = &pending.args;
                match catch_unwind(AssertUnwindSafe(|| presenter.present_result(args, result))) {
                    Ok(view) => view,
                    Err(payload) => {
                        let message = panic_message(payload.as_ref());
                        self.report(call_id, &pending.tool_name, PresenterStage::Result, message);
                        None
                    }
                }
            }
        };
        let view = match presented {
            None => raw_content_view(None, result),
            Some(view)
                if view.card() == ResultCard::Terminal && pending.card != CallCard::Terminal =>
            {
                raw_content_view(view.title(), result)
            }
            Some(ToolResultView::Generic(view)) if view.content().is_none() => {
                raw_content_view(view.title(), result)
            }
            Some(view) => view,
        };
        Some(view)
    }

    /// Whether `call_id` is waiting for its result.
    pub fn is_pending(&self, call_id: &str) -> bool {
        self.pending.contains_key(call_id)
    }

    /// The card shown for a pending call, if it is pending.
    pub fn pending_card(&self, call_id: &str) -> Option<CallCard> {
        self.pending.get(call_id).map(|p| p.card)
    }

    /// How many calls wait for their result.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Forgets a pending call (one that will never complete); whether it was pending.
    pub fn forget(&mut self, call_id: &str) -> bool {
        self.pending.remove(call_id).is_some()
    }

    /// Forgets every pending call.
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ContentBlock, TerminalResultView};
    use serde_json::json;

    struct Terminal;

    impl Presenter for Terminal {
        fn present_result(&self, _: &Value, _: &RawResult) -> Option<ToolResultView> {
            Some(TerminalResultView::new().with_title("done").into())
        }
    }

    #[test]
    fn an_orphan_terminal_result_keeps_its_title_over_raw_content() {
        let mut session = SessionPresenter::new();
        session.present_call("c", "t", &json!({}), Some(Arc::new(Terminal)));
        let view = session
            .present_result("c", &RawResult::text("raw"), ResultOrigin::Executed)
            .unwrap();
        assert_eq!(
            view,
            GenericResultView::new()
                .with_title("done")
                .with_content([ContentBlock::text("raw")])
                .into()
        );
    }

    #[test]
    fn rewrites_keep_the_pending_memory() {
        let mut session = SessionPresenter::new();
        session.present_call("c", "t", &json!({}), None);
        assert_eq!(
            session.present_result("c", &RawResult::text("x"), ResultOrigin::Rewritten),
            None
        );
        assert!(session.is_pending("c"));
        assert_eq!(session.pending_card("c"), Some(CallCard::Generic));
        assert!(session.forget("c"));
        assert_eq!(session.pending_count(), 0);
    }

    #[test]
    fn blank_arguments_are_an_empty_object_and_lossy_json_stays_text() {
        assert_eq!(parse_call_args("  \n"), json!({}));
        assert_eq!(parse_call_args("-0"), json!("-0"));
        assert_eq!(parse_call_args("[1, 2]"), json!([1, 2]));
    }

    #[test]
    fn panic_messages_are_extracted() {
        let payload: Box<dyn std::any::Any + Send> = Box::new(String::from("boom"));
        assert_eq!(panic_message(payload.as_ref()), "boom");
        let payload: Box<dyn std::any::Any + Send> = Box::new(7_u8);
        assert!(panic_message(payload.as_ref()).contains("without a text message"));
    }
}
