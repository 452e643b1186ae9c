#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "acp")]
#[cfg_attr(docsrs, doc(cfg(feature = "acp")))]
pub mod acp;
mod call;
mod content;
mod diff;
mod error;
mod kind;
mod meta;
mod presenter;
mod result;
mod vocab;

pub use call::{CallCard, DiffCallView, GenericCallView, TerminalCallView, ToolCallView};
pub use content::{ContentBlock, OtherBlock, RawResult};
pub use diff::DiffOptions;
pub use error::Error;
pub use kind::{ToolCallKind, UnknownToolCallKind};
pub use meta::{
    diffs_from_meta, lang_for_path, read_view_from_meta, search_view_from_meta,
    web_fetch_view_from_meta, web_search_view_from_meta,
};
pub use presenter::{
    Presenter, PresenterFailure, PresenterStage, ResultOrigin, SessionPresenter, Typed,
    TypedPresenter, parse_call_args,
};
pub use result::{
    DiffResultView, GenericResultView, ReadResultView, ResultCard, SearchMatchesView,
    SearchPathsView, SearchResultView, TerminalExit, TerminalResultView, ToolResultView,
    WebFetchView, WebResultView, WebSearchView,
};
pub use vocab::{
    FileDiff, FileLocation, ReadFileLine, SearchFileMatches, SearchLineMatch, WebSource,
};

/// The deepest nesting a view adds around the JSON it carries: the view object, a content
/// list, a block object.
const VIEW_NESTING: usize = 3;

/// Parses a stored view's text with the workspace's depth limit for the JSON it carries.
fn parse_view_text(text: &str) -> Result<tools_json::JsonValue, tools_json::Error> {
    let limits = tools_json::Limits::default()
        .with_max_depth(tools_json::DEFAULT_MAX_DEPTH.saturating_add(VIEW_NESTING));
    tools_json::JsonValue::parse_with_limits(text, &limits)
}
