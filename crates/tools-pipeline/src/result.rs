//! Results and the hooks' decisions.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use tools_json::{ErrorCode, JsonValue};
use tools_presentation::{ContentBlock, RawResult};
use tools_registry::{Code, ExecutionToken, ResultView, ToolContext, ToolError, text_of};

/// What a call produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The tool succeeded with its canonical value.
    Success {
        /// The value (validated against the tool's output schema).
        value: JsonValue,
        /// Whether the body asked to end the turn.
        concludes_turn: bool,
    },
    /// The call failed.
    Failure(ToolError),
}

/// The one result of a call: immutable, cheap to clone, and the very object the caller and
/// every observer receive.
///
/// A success carries the canonical value, the rendered content, an optional presentation
/// payload (`meta`), deferred contexts and the turn conclusion; a failure carries a
/// [`ToolError`] (message and optional code), its content and contexts, never a value.
///
/// Wrappers may author results ([`ToolResult::success`], [`ToolResult::failure`]); the
/// pipeline re-validates an authored success against the tool's output schema and
/// re-renders it (only results it created itself for the same execution pass unchanged).
///
/// The content of a success whose tool renders its value as one text block (the default
/// of typed tools, [`tools_registry::OutputDecl::text`]) is made the first time it is read
/// ([`ToolResult::content`] and everything built on it): a Code Mode sub-call's result,
/// whose program receives the value, or a host that reads only the value, never pays
/// for the copy. It cannot fail, and it reads the same whenever it is made.
#[derive(Clone)]
pub struct ToolResult(Arc<Inner>);

struct Inner {
    outcome: Outcome,
    content: Content,
    meta: Option<JsonValue>,
    contexts: Vec<ToolContext>,
    provenance: Option<ExecutionToken>,
}

/// A result's content: rendered, or the success value's text, rendered when first read.
#[derive(Clone)]
enum Content {
    Blocks(Vec<ContentBlock>),
    /// Only with [`Outcome::Success`].
    ValueText(OnceLock<Vec<ContentBlock>>),
}

impl Inner {
    fn content(&self) -> &[ContentBlock] {
        match &self.content {
            Content::Blocks(blocks) => blocks,
            Content::ValueText(cell) => cell.get_or_init(|| match &self.outcome {
                Outcome::Success { value, .. } => vec![ContentBlock::text(text_of(value))],
                // Never built: a failure always carries its blocks.
                Outcome::Failure(_) => Vec::new(),
            }),
        }
    }
}

impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&*self.0, &*other.0);
        Arc::ptr_eq(&self.0, &other.0)
            || (a.outcome == b.outcome
                && a.content() == b.content()
                && a.meta == b.meta
                && a.contexts == b.contexts
                && a.provenance == b.provenance)
    }
}

impl ToolResult {
    /// An authored success with this value (content and meta are recomputed by the
    /// pipeline from the tool's render).
    pub fn success(value: JsonValue) -> ToolResult {
        ToolResult::build(
            Outcome::Success {
                value,
                concludes_turn: false,
            },
            Content::Blocks(Vec::new()),
            None,
            Vec::new(),
            None,
        )
    }

    /// A failure whose content is `Error: <message>`.
    pub fn failure(error: ToolError) -> ToolResult {
        let content = vec![ContentBlock::text(format!("Error: {}", error.message()))];
        ToolResult::failure_with_content(error, content)
    }

    /// A failure with explicit content.
    pub fn failure_with_content(error: ToolError, content: Vec<ContentBlock>) -> ToolResult {
        ToolResult::build(
            Outcome::Failure(error),
            Content::Blocks(content),
            None,
            Vec::new(),
            None,
        )
    }

    /// A failure with one of the runtime's codes (`Error: <message>` content).
    pub fn coded(code: ErrorCode, message: impl Into<String>) -> ToolResult {
        ToolResult::failure(ToolError::with_code(code, message.into()))
    }

    /// `ABORTED`: the caller cancelled after the body was invoked.
    pub fn aborted() -> ToolResult {
        ToolResult::coded(ErrorCode::Aborted, "tool call aborted")
    }

    /// `ABORTED_BEFORE_DISPATCH`: cancellation prevented the body from running.
    pub fn aborted_before_dispatch() -> ToolResult {
        ToolResult::coded(
            ErrorCode::AbortedBeforeDispatch,
            "tool call aborted before dispatch",
        )
    }

    /// `UNKNOWN_TOOL`.
    pub fn unknown_tool(name: &str) -> ToolResult {
        ToolResult::coded(ErrorCode::UnknownTool, format!("unknown tool {name:?}"))
    }

    fn build(
        outcome: Outcome,
        content: Content,
        meta: Option<JsonValue>,
        contexts: Vec<ToolContext>,
        provenance: Option<ExecutionToken>,
    ) -> ToolResult {
        ToolResult(Arc::new(Inner {
            outcome,
            content,
            meta,
            contexts,
            provenance,
        }))
    }

    /// A success created by the pipeline for the execution `provenance`: `content`
    /// rendered, or `None` for the value's text, made when first read.
    pub(crate) fn created_success(
        value: JsonValue,
        concludes_turn: bool,
        content: Option<Vec<ContentBlock>>,
        meta: Option<JsonValue>,
        provenance: ExecutionToken,
    ) -> ToolResult {
        let outcome = Outcome::Success {
            value,
            concludes_turn,
        };
        let content = match content {
            Some(blocks) => Content::Blocks(blocks),
            None => Content::ValueText(OnceLock::new()),
        };
        ToolResult::build(outcome, content, meta, Vec::new(), Some(provenance))
    }

    /// The same result with these contexts (replacing any it had).
    #[must_use]
    pub fn with_contexts(self, contexts: Vec<ToolContext>) -> ToolResult {
        self.rebuild(|inner| inner.contexts = contexts)
    }

    /// The same result with this presentation payload.
    #[must_use]
    pub fn with_meta(self, meta: JsonValue) -> ToolResult {
        self.rebuild(|inner| inner.meta = Some(meta))
    }

    /// The same result marked as created by the pipeline for `token` (no copy when the
    /// result is not shared).
    pub(crate) fn with_provenance(mut self, token: ExecutionToken) -> ToolResult {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.provenance = Some(token);
            return self;
        }
        self.rebuild(|inner| inner.provenance = Some(token))
    }

    /// The same result with other content (`finalize_content`, post-execute accept).
    #[must_use]
    pub(crate) fn with_content_kept_provenance(self, content: Vec<ContentBlock>) -> ToolResult {
        let provenance = self.0.provenance;
        self.rebuild(|inner| {
            inner.content = Content::Blocks(content);
            inner.provenance = provenance;
        })
    }

    /// A copy with `change` applied. Any change clears the provenance: only results the
    /// pipeline creates are canonical.
    fn rebuild(self, change: impl FnOnce(&mut Inner)) -> ToolResult {
        let mut inner = match Arc::try_unwrap(self.0) {
            Ok(inner) => inner,
            Err(shared) => Inner {
                outcome: shared.outcome.clone(),
                content: shared.content.clone(),
                meta: shared.meta.clone(),
                contexts: shared.contexts.clone(),
                provenance: shared.provenance,
            },
        };
        inner.provenance = None;
        change(&mut inner);
        ToolResult(Arc::new(inner))
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        matches!(self.0.outcome, Outcome::Failure(_))
    }

    /// The outcome.
    pub fn outcome(&self) -> &Outcome {
        &self.0.outcome
    }

    /// The success value.
    pub fn value(&self) -> Option<&JsonValue> {
        match &self.0.outcome {
            Outcome::Success { value, .. } => Some(value),
            Outcome::Failure(_) => None,
        }
    }

    /// The failure.
    pub fn error(&self) -> Option<&ToolError> {
        match &self.0.outcome {
            Outcome::Failure(error) => Some(error),
            Outcome::Success { .. } => None,
        }
    }

    /// The failure's machine code, if any.
    pub fn code(&self) -> Option<&Code> {
        self.error().and_then(ToolError::code)
    }

    /// The failure's code when it is one of the runtime's.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.code().and_then(Code::known)
    }

    /// The content the model sees.
    pub fn content(&self) -> &[ContentBlock] {
        self.0.content()
    }

    /// The content, or `None` while it is the success value's text not yet rendered
    /// (text only: always lossless, never an image).
    pub(crate) fn rendered_content(&self) -> Option<&[ContentBlock]> {
        match &self.0.content {
            Content::Blocks(blocks) => Some(blocks),
            Content::ValueText(cell) => cell.get().map(Vec::as_slice),
        }
    }

    /// Whether the content has a block of this `type` (`"text"`, `"image"`, …), without
    /// rendering content that is not made yet.
    pub fn has_content_of_type(&self, block_type: &str) -> bool {
        match self.rendered_content() {
            Some(blocks) => blocks.iter().any(|block| block.block_type() == block_type),
            None => block_type == "text",
        }
    }

    /// The text of the content's text blocks, joined with `\n`.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content()
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }

    /// The replayable presentation payload.
    pub fn meta(&self) -> Option<&JsonValue> {
        self.0.meta.as_ref()
    }

    /// The contexts delivered with the result, in order.
    pub fn contexts(&self) -> &[ToolContext] {
        &self.0.contexts
    }

    /// Whether a successful body asked to end the turn.
    pub fn concludes_turn(&self) -> bool {
        matches!(
            self.0.outcome,
            Outcome::Success {
                concludes_turn: true,
                ..
            }
        )
    }

    /// Whether the pipeline created this result for the execution `token`.
    pub(crate) fn is_canonical_for(&self, token: ExecutionToken) -> bool {
        self.0.provenance == Some(token)
    }

    /// The read-only view `finalize_content` receives.
    pub fn view(&self) -> ResultView<'_> {
        ResultView {
            content: self.content(),
            is_error: self.is_error(),
            value: self.value(),
            error: self.error(),
            meta: self.0.meta.as_ref(),
        }
    }

    /// What a presenter sees: content, error flag and meta.
    pub fn raw(&self) -> RawResult {
        let raw = if self.is_error() {
            RawResult::error(self.content().to_vec())
        } else {
            RawResult::new(self.content().to_vec())
        };
        match &self.0.meta {
            Some(meta) => raw.with_meta(meta.as_value().clone()),
            None => raw,
        }
    }

    /// The reference's wire shape: `{isError, value?, content, meta?, additionalContexts?,
    /// concludesTurn?, error?: {message, info?: {code}}}` (absent fields are absent).
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("isError".into(), Value::Bool(self.is_error()));
        match &self.0.outcome {
            Outcome::Success { value, .. } => {
                out.insert("value".into(), tools_json::clone_deep(value));
            }
            Outcome::Failure(error) => {
                let mut e = Map::new();
                e.insert("message".into(), Value::String(error.message().to_owned()));
                if let Some(code) = error.code() {
                    let mut info = Map::new();
                    info.insert("code".into(), Value::String(code.as_str().to_owned()));
                    e.insert("info".into(), Value::Object(info));
                }
                out.insert("error".into(), Value::Object(e));
            }
        }
        out.insert("content".into(), content_json(self.content()));
        if let Some(meta) = &self.0.meta {
            out.insert("meta".into(), tools_json::clone_deep(meta));
        }
        if !self.0.contexts.is_empty() {
            let contexts = self
                .0
                .contexts
                .iter()
                .map(|c| {
                    let mut m = Map::new();
                    if let Some(source) = &c.source {
                        m.insert("source".into(), Value::String(source.to_string()));
                    }
                    m.insert("content".into(), content_json(&c.content));
                    Value::Object(m)
                })
                .collect();
            out.insert("additionalContexts".into(), Value::Array(contexts));
        }
        if self.concludes_turn() {
            out.insert("concludesTurn".into(), Value::Bool(true));
        }
        Value::Object(out)
    }
}

pub(crate) fn content_json(content: &[ContentBlock]) -> Value {
    serde_json::to_value(content).unwrap_or(Value::Null)
}

impl fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ToolResult");
        match &self.0.outcome {
            Outcome::Success {
                value,
                concludes_turn,
            } => {
                s.field("value", value);
                if *concludes_turn {
                    s.field("concludes_turn", &true);
                }
            }
            Outcome::Failure(error) => {
                s.field("error", error);
            }
        }
        s.field("content", &self.content());
        if let Some(meta) = &self.0.meta {
            s.field("meta", meta);
        }
        if !self.0.contexts.is_empty() {
            s.field("contexts", &self.0.contexts);
        }
        s.finish()
    }
}

/// A pre-execute hook's decision. Arguments cannot be rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreDecision {
    /// Let the call through (guards still apply).
    Allow,
    /// Refuse the call with a reason (the model sees `Error: <reason>`).
    Deny(String),
    /// Ask the approval service (a denial when none is installed).
    Ask(Option<String>),
}

/// What a post-execute accept replaces. Content and value cannot both be replaced: the type
/// has one or the other.
#[derive(Clone, Debug, PartialEq)]
pub enum Replacement {
    /// New content for the same outcome.
    Content(Vec<ContentBlock>),
    /// A new value for a successful result (re-validated, re-rendered).
    Value(Value),
}

/// A post-execute hook's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum PostDecision {
    /// Keep the result, optionally replacing its content or value, adding contexts.
    Accept {
        /// The replacement, if any.
        replace: Option<Replacement>,
        /// Contexts appended after the result's own.
        contexts: Vec<ToolContext>,
    },
    /// Turn the result into a failure whose content is `feedback`; only these contexts
    /// remain.
    Block {
        /// The content the model sees instead.
        feedback: Vec<ContentBlock>,
        /// The only contexts of the blocked result.
        contexts: Vec<ToolContext>,
    },
}

impl PostDecision {
    /// Accept unchanged.
    pub fn accept() -> PostDecision {
        PostDecision::Accept {
            replace: None,
            contexts: Vec::new(),
        }
    }

    /// Accept with new content.
    pub fn accept_content(content: Vec<ContentBlock>) -> PostDecision {
        PostDecision::Accept {
            replace: Some(Replacement::Content(content)),
            contexts: Vec::new(),
        }
    }

    /// Accept with a new value.
    pub fn accept_value(value: Value) -> PostDecision {
        PostDecision::Accept {
            replace: Some(Replacement::Value(value)),
            contexts: Vec::new(),
        }
    }

    /// Block with feedback text.
    pub fn block(feedback: impl Into<String>) -> PostDecision {
        PostDecision::Block {
            feedback: vec![ContentBlock::text(feedback)],
            contexts: Vec::new(),
        }
    }

    /// The same decision with these contexts.
    #[must_use]
    pub fn with_contexts(self, contexts: Vec<ToolContext>) -> PostDecision {
        match self {
            PostDecision::Accept { replace, .. } => PostDecision::Accept { replace, contexts },
            PostDecision::Block { feedback, .. } => PostDecision::Block { feedback, contexts },
        }
    }
}

/// The failure message of blocked feedback: text blocks contribute their text, other blocks
/// `[<type> content]`, joined with `\n`; empty → a fixed sentence.
pub(crate) fn blocked_message(feedback: &[ContentBlock]) -> String {
    let parts: Vec<String> = feedback
        .iter()
        .map(|block| match block.as_text() {
            Some(text) => text.to_owned(),
            None => format!("[{} content]", block.block_type()),
        })
        .collect();
    let message = parts.join("\n");
    if message.is_empty() {
        "tool result blocked by post-execute policy".to_owned()
    } else {
        message
    }
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
