//! Call views: how a UI shows a pending call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ContentBlock, Error, FileDiff, FileLocation, ToolCallKind};

/// How a UI shows a pending call: one of three cards, tagged by `card`.
///
/// The union is closed: JSON with any other `card` is an error, and Rust code matches the
/// three variants exhaustively (a new card is a breaking change on purpose, so every
/// consumer learns about it). Search, read and web calls stay [`GenericCallView`]s with the
/// matching [`ToolCallKind`]; their structured cards exist only after the call completes.
///
/// # Stable format
///
/// ```json
/// {"card": "generic", "title": "…", "kind"?: "read", "rawInput"?: any, "content"?: [block], "locations"?: [location]}
/// {"card": "terminal", "title": "<command>", "description"?: "…", "cwd"?: "…"}
/// {"card": "diff", "title": "…", "diffs": [diff], "locations"?: [location]}
/// ```
///
/// Unknown keys are ignored when read back; a default `kind` (`other`) and a `null`
/// `rawInput` are not written.
///
/// # Examples
///
/// ```
/// use tools_presentation::{FileLocation, GenericCallView, ToolCallKind, ToolCallView};
/// use serde_json::json;
///
/// let view: ToolCallView = GenericCallView::new("Read src/lib.rs (from line 10)")
///     .with_kind(ToolCallKind::Read)
///     .with_locations([FileLocation::new("src/lib.rs").at_line(10)])
///     .into();
/// assert_eq!(view.to_json(), json!({
///     "card": "generic",
///     "title": "Read src/lib.rs (from line 10)",
///     "kind": "read",
///     "locations": [{"path": "src/lib.rs", "line": 10}]
/// }));
/// assert_eq!(ToolCallView::from_json(&view.to_json()), Ok(view));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "lowercase")]
pub enum ToolCallView {
    /// The default card.
    Generic(GenericCallView),
    /// A shell command the harness runs.
    Terminal(TerminalCallView),
    /// A file creation or change.
    Diff(DiffCallView),
}

/// Which card a call view is, without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallCard {
    /// [`ToolCallView::Generic`].
    Generic,
    /// [`ToolCallView::Terminal`].
    Terminal,
    /// [`ToolCallView::Diff`].
    Diff,
}

impl ToolCallView {
    /// The generic fallback for a call that has no presenter (or whose presenter gave no
    /// view): the tool's name as the title, kind `other`, and the arguments as raw input.
    ///
    /// The kind is never guessed from the name. A `null` argument value leaves the raw
    /// input out. Use [`parse_call_args`](crate::parse_call_args) first when the arguments
    /// are still the model's JSON text.
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_presentation::{ToolCallKind, ToolCallView};
    /// use serde_json::json;
    ///
    /// let view = ToolCallView::fallback("bash", &json!({"command": "ls"}));
    /// assert_eq!(view.title(), "bash");
    /// assert_eq!(view.kind(), ToolCallKind::Other);
    /// assert_eq!(view.to_json(), json!({"card": "generic", "title": "bash", "rawInput": {"command": "ls"}}));
    /// ```
    pub fn fallback(tool_name: &str, args: &Value) -> ToolCallView {
        ToolCallView::Generic(GenericCallView::new(tool_name).with_raw_input(args.clone()))
    }

    /// The card's title (for a terminal, the command line).
    pub fn title(&self) -> &str {
        match self {
            ToolCallView::Generic(view) => view.title(),
            ToolCallView::Terminal(view) => view.title(),
            ToolCallView::Diff(view) => view.title(),
        }
    }

    /// The call's kind: the generic card's own, `execute` for a terminal, `edit` for a diff.
    pub fn kind(&self) -> ToolCallKind {
        match self {
            ToolCallView::Generic(view) => view.kind(),
            ToolCallView::Terminal(_) => ToolCallKind::Execute,
            ToolCallView::Diff(_) => ToolCallKind::Edit,
        }
    }

    /// Which card this is.
    pub fn card(&self) -> CallCard {
        match self {
            ToolCallView::Generic(_) => CallCard::Generic,
            ToolCallView::Terminal(_) => CallCard::Terminal,
            ToolCallView::Diff(_) => CallCard::Diff,
        }
    }

    /// The view in its stable JSON format.
    pub fn to_json(&self) -> Value {
        // Every key is a string and every number finite: serialisation cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a view back from its stable JSON format (for example from a session log).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for an unknown `card`, a missing or mistyped field, or a broken
    /// rule (such as a location on line 0). Show [`ToolCallView::fallback`] instead.
    pub fn from_json(value: &Value) -> Result<ToolCallView, Error> {
        ToolCallView::deserialize(value).map_err(|e| Error::malformed("tool call view", e))
    }

    /// Reads a view back from JSON text, with the workspace's depth limit
    /// ([`tools_json::JsonValue::parse`]) instead of `serde_json`'s fixed recursion cap. The
    /// limit applies to the JSON a view carries (raw input, content blocks): the view's own
    /// nesting comes on top.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] for text that is not JSON or not a view.
    pub fn from_json_str(text: &str) -> Result<ToolCallView, Error> {
        let value =
            crate::parse_view_text(text).map_err(|e| Error::malformed("tool call view", e))?;
        ToolCallView::from_json(&value)
    }
}

impl TryFrom<Value> for ToolCallView {
    type Error = Error;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        ToolCallView::from_json(&value)
    }
}

impl TryFrom<&Value> for ToolCallView {
    type Error = Error;

    fn try_from(value: &Value) -> Result<Self, Self::Error> {
        ToolCallView::from_json(value)
    }
}

impl From<GenericCallView> for ToolCallView {
    fn from(view: GenericCallView) -> Self {
        ToolCallView::Generic(view)
    }
}

impl From<TerminalCallView> for ToolCallView {
    fn from(view: TerminalCallView) -> Self {
        ToolCallView::Terminal(view)
    }
}

impl From<DiffCallView> for ToolCallView {
    fn from(view: DiffCallView) -> Self {
        ToolCallView::Diff(view)
    }
}

/// The default card: a title, a kind for the icon, the salient raw input, extra content
/// and follow-along locations.
///
/// `raw_input` is what a reader wants to see in the expanded card (a string is shown as is,
/// anything else pretty-printed), not necessarily every argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenericCallView {
    title: String,
    #[serde(default, skip_serializing_if = "ToolCallKind::is_other")]
    kind: ToolCallKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    raw_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<Vec<ContentBlock>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    locations: Option<Vec<FileLocation>>,
}

impl GenericCallView {
    /// A card with only a title (kind `other`).
    pub fn new(title: impl Into<String>) -> GenericCallView {
        GenericCallView {
            title: title.into(),
            kind: ToolCallKind::Other,
            raw_input: None,
            content: None,
            locations: None,
        }
    }

    /// The same card with a kind.
    #[must_use]
    pub fn with_kind(mut self, kind: ToolCallKind) -> GenericCallView {
        self.kind = kind;
        self
    }

    /// The same card with raw input; `null` means none.
    #[must_use]
    pub fn with_raw_input(mut self, raw_input: Value) -> GenericCallView {
        self.raw_input = (!raw_input.is_null()).then_some(raw_input);
        self
    }

    /// The same card with content blocks shown while the call is pending.
    #[must_use]
    pub fn with_content(
        mut self,
        content: impl IntoIterator<Item = ContentBlock>,
    ) -> GenericCallView {
        self.content = Some(content.into_iter().collect());
        self
    }

    /// The same card with follow-along locations.
    #[must_use]
    pub fn with_locations(
        mut self,
        locations: impl IntoIterator<Item = FileLocation>,
    ) -> GenericCallView {
        self.locations = Some(locations.into_iter().collect());
        self
    }

    /// The title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The kind (`other` unless set).
    pub fn kind(&self) -> ToolCallKind {
        self.kind
    }

    /// The raw input, if any.
    pub fn raw_input(&self) -> Option<&Value> {
        self.raw_input.as_ref()
    }

    /// The pending content, if any.
    pub fn content(&self) -> Option<&[ContentBlock]> {
        self.content.as_deref()
    }

    /// The locations, if any.
    pub fn locations(&self) -> Option<&[FileLocation]> {
        self.locations.as_deref()
    }
}

/// A foreground shell command that the harness runs, shown as a terminal: the command as
/// the title, an optional one-line description shown above the card, and the working
/// directory.
///
/// `cwd` may be absolute (used as is) or relative (a UI bridge resolves it against the
/// session's working directory); without it the bridge uses the session's directory. This is
/// display only: the client never runs the command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCallView {
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
}

impl TerminalCallView {
    /// A terminal card for this command line.
    pub fn new(command: impl Into<String>) -> TerminalCallView {
        TerminalCallView {
            title: command.into(),
            description: None,
            cwd: None,
        }
    }

    /// The same card with a one-line description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> TerminalCallView {
        self.description = Some(description.into());
        self
    }

    /// The same card with a working directory.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> TerminalCallView {
        self.cwd = Some(cwd.into());
        self
    }

    /// The command line.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The working directory, if any.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }
}

/// A call that creates or changes files, shown as inline diffs derived from its arguments
/// (a creation has no before-image).
///
/// An empty `diffs` list is allowed: it shows no diff (a UI keeps whatever it showed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffCallView {
    title: String,
    diffs: Vec<FileDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    locations: Option<Vec<FileLocation>>,
}

impl DiffCallView {
    /// A diff card with these diffs, one per changed file.
    pub fn new(
        title: impl Into<String>,
        diffs: impl IntoIterator<Item = FileDiff>,
    ) -> DiffCallView {
        DiffCallView {
            title: title.into(),
            diffs: diffs.into_iter().collect(),
            locations: None,
        }
    }

    /// The same card with follow-along locations (usually the diffs' paths).
    #[must_use]
    pub fn with_locations(
        mut self,
        locations: impl IntoIterator<Item = FileLocation>,
    ) -> DiffCallView {
        self.locations = Some(locations.into_iter().collect());
        self
    }

    /// The title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The diffs.
    pub fn diffs(&self) -> &[FileDiff] {
        &self.diffs
    }

    /// The locations, if any.
    pub fn locations(&self) -> Option<&[FileLocation]> {
        self.locations.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_cards_and_missing_fields_are_errors() {
        for bad in [
            json!({"card": "search", "title": "x"}),
            json!({"title": "x"}),
            json!({"card": "generic"}),
            json!({"card": "diff", "title": "x"}),
            json!({"card": "terminal", "title": 1}),
            json!({"card": "generic", "title": "x", "locations": [{"path": "a", "line": 0}]}),
        ] {
            assert!(ToolCallView::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn null_raw_input_is_no_raw_input() {
        let view = GenericCallView::new("t").with_raw_input(Value::Null);
        assert_eq!(view.raw_input(), None);
        let read =
            ToolCallView::from_json(&json!({"card": "generic", "title": "t", "rawInput": null}))
                .unwrap();
        assert_eq!(read, ToolCallView::Generic(view));
    }

    #[test]
    fn the_kind_follows_the_card() {
        assert_eq!(
            ToolCallView::from(TerminalCallView::new("ls")).kind(),
            ToolCallKind::Execute
        );
        assert_eq!(
            ToolCallView::from(DiffCallView::new("w", [])).kind(),
            ToolCallKind::Edit
        );
    }

    #[test]
    fn text_parsing_uses_the_workspace_depth_limit() {
        let deep = format!(
            r#"{{"card":"generic","title":"t","rawInput":{}0{}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        assert!(serde_json::from_str::<ToolCallView>(&deep).is_err());
        let view = ToolCallView::from_json_str(&deep).unwrap();
        assert_eq!(view.title(), "t");
        assert!(ToolCallView::from_json_str("{").is_err());
    }
}
