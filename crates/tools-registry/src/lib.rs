#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod canonical;
mod change;
mod context;
mod definition;
mod error;
mod exposure;
mod foreign;
mod guard;
mod held;
mod hints;
mod layers;
mod mode;
mod name;
mod output;
mod projection;
mod registry;
mod scope;
pub mod slot;
mod typed;
mod view;

pub use change::Change;
pub use context::{
    BodyCancellation, CallInfo, ExecutionToken, Progress, ProgressSink, RunContext, RunHooks,
    ToolContext,
};
pub use definition::{
    ApprovalKeyFn, ArgumentCheckFn, BodyFuture, ClassifierFn, DefinitionBuilder, FinalizeFn,
    MAX_TIMEOUT, ResultView, ToolBody, ToolDefinition,
};
pub use error::Error;
pub use exposure::{Exposure, Refusal, SEARCH_TOOLS};
pub use guard::Guard;
pub use held::{HeldView, ResolvedTool};
pub use hints::ToolHints;
pub use mode::{PresentationMode, ToolFilter};
pub use name::{RUN_CODE, ToolName};
pub use output::{MetaFn, Output, OutputDecl, RenderFn, text_of};
pub use projection::ToolSpec;
pub use registry::{Registration, Registry, RegistryBuilder};
pub use scope::AgentScope;
/// The failure a tool reports and its code (`tools-error`).
pub use tools_error::{Code, ToolError};
/// `#[tool]` on a documented `async fn` generates the function that builds its typed tool
/// with [`define_tool`]; see `tools-runtime`'s prelude for an example.
pub use tools_macros::tool;
/// Why a search of a scope's deferred tools was refused ([`View::search`]): an empty or
/// too long query, or a regex pattern that is invalid or too large (`tools-search`).
pub use tools_search::Error as SearchError;
pub use typed::{TypedToolBuilder, define_tool};
pub use view::{ExecutionMode, View};

pub use tools_json::{ErrorCode, JsonValue};
/// The argument type of a tool without parameters (what `#[tool]` uses for a function that
/// takes no arguments).
pub use tools_schema::NoArgs;
