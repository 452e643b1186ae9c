//! The Code Mode bridge: the `run_code` transport and the scheduler of its sub-calls
//! (feature `bridge`).
//!
//! [`install`] puts the `run_code` definition into a pipeline's registry. A `run_code` call
//! hands its program to the configured [`CodeRuntime`] with one binding namespace, `tools`
//! (error class `ToolCallError` / `toolName`), listing the calling agent's tools that
//! programs may call: its SDK tools (direct and code-only) and, in a scope with deferred
//! tools, those too and the tool-search helpers (`search`, which answers them from the
//! scope's view without a sub-call). Every binding call of a tool becomes a sub-call of the
//! pipeline:
//!
//! * id `<callId>:code:<n>` (`n` counts accepted calls from 1), root call id and agent of
//!   the outer call, parent token of the outer execution, cancelled by a run-scoped token
//!   (a child of the outer call's token, cancelled when the program settles);
//! * scheduled by one lane per run: `prepare` and `complete` (pre-execute, guards,
//!   post-execute, finalization, observers) run one at a time in submission order, bodies
//!   overlap when their tools are concurrency-safe (at most
//!   [`CodeModeConfig::with_max_parallel_sub_calls`] at once), an exclusive call runs alone
//!   from its start to the end of its commit;
//! * a success resolves the binding with the tool's canonical value, a failure rejects it
//!   with the failure's message only; contexts the sub-call deferred, image results (as a
//!   context from `tools-code-mode`) and a turn conclusion are forwarded to the outer call
//!   in commit order, also when the program later fails.
//!
//! One depth limit, [`MAX_JSON_DEPTH`] (the pipeline's, 512): a program's result, a
//! sub-call's arguments and a tool's output may each nest that deep, and one level more is
//! refused on any side with a message naming the side and the limit (`program result
//! nesting exceeds the depth limit of 512`, `arguments of tools.x nest deeper than the
//! depth limit of 512`, `output of tool x nests deeper than the depth limit of 512`),
//! whatever depth the code runtime is configured to let through.
//!
//! Deviations from the reference, decided here: the settle event is delivered
//! synchronously in the lane after the commit (the reference appends it from a detached
//! task; the observable order is the same and there is nothing left to drain); the reason
//! in `run_code run is over (<reason>)` is `run_code settled` or, when the outer call was
//! cancelled first, `tool call aborted` (cancellation tokens carry no reason).

mod end_watch;
mod lane;
mod queue;
mod search;
mod transport;

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;

use tools_json::JsonValue;
use tools_pipeline::Pipeline;
use tools_presentation::ContentBlock;
use tools_registry::{AgentScope, Registry, View};

/// The source of the context a sub-call's image result is forwarded as.
pub const IMAGE_CONTEXT_SOURCE: &str = "tools-code-mode";

pub use transport::{
    DESCRIPTION_PARAMETER, INVALID_DESCRIPTION, NO_OUTPUT, REQUIRES_RUNTIME, RunCodePresenter,
    render_run_code_output, run_code_output_schema, run_code_parameters,
};

use crate::runtime::CodeRuntime;
use tools_codemode_sdk::{Language, SdkOptions, ToolSdkSchema};

/// The one depth limit of Code Mode: the pipeline's own limit (that of
/// `tools_json::Limits::default()`, which it applies to wire arguments and tool outputs).
/// A program's result, a sub-call's arguments and a tool's output may each nest this many
/// containers deep; deeper is refused, naming the side. `run_code`'s own value
/// `{logs, result}` takes one level more than the result, which its definition declares
/// (`OutputDecl::with_max_depth`). The default of `RuntimeLimits::max_json_depth` is the
/// same number.
pub const MAX_JSON_DEPTH: usize = tools_json::DEFAULT_MAX_DEPTH;

/// The default of [`CodeModeConfig::with_max_parallel_sub_calls`].
pub const DEFAULT_MAX_PARALLEL_SUB_CALLS: usize = 10;

/// A sub-call the lane started (`tool/code-dispatch-start`).
#[derive(Clone, Debug)]
pub struct DispatchStarted {
    /// The model-issued call the run descends from.
    pub root_call_id: Arc<str>,
    /// The `run_code` call.
    pub parent_call_id: Arc<str>,
    /// `<parent>:code:<n>`.
    pub sub_call_id: Arc<str>,
    /// The called tool.
    pub name: String,
    /// The argument snapshot the tool received.
    pub arguments: JsonValue,
}

/// A sub-call the lane committed (`tool/code-dispatch`).
#[derive(Clone, Debug)]
pub struct DispatchSettled {
    /// The model-issued call the run descends from.
    pub root_call_id: Arc<str>,
    /// The `run_code` call.
    pub parent_call_id: Arc<str>,
    /// `<parent>:code:<n>`.
    pub sub_call_id: Arc<str>,
    /// The called tool.
    pub name: String,
    /// The argument snapshot the tool received.
    pub arguments: JsonValue,
    /// Whether the sub-call failed.
    pub is_error: bool,
    /// The sub-call's full rendered content (as reshaped by the log rewrite, if any).
    pub content: Vec<ContentBlock>,
}

/// Where the bridge's log-only events go (a session log). Called only for runs whose outer
/// call has an owning agent; a started sub-call settles exactly once, an abandoned one has
/// neither event. A panicking sink is contained and reported through `tracing`.
pub trait DispatchSink: Send + Sync + 'static {
    /// The lane started a sub-call.
    fn started(&self, event: &DispatchStarted);
    /// The lane committed a sub-call.
    fn settled(&self, event: &DispatchSettled);
}

/// Reshapes the content a settle event logs (e.g. a spill preview of a huge output);
/// `Err` or a panic keeps the original content (and is reported through `tracing`).
pub type LogRewrite =
    Arc<dyn Fn(&DispatchSettled) -> Result<Vec<ContentBlock>, String> + Send + Sync>;

/// The event sink and rewrite of one run.
#[derive(Clone)]
pub(crate) struct Events {
    sink: Arc<dyn DispatchSink>,
    rewrite: Option<LogRewrite>,
}

/// How `run_code` runs: the code runtime, the sub-call cap and the event sink.
#[derive(Clone)]
pub struct CodeModeConfig {
    runtime: Option<Arc<dyn CodeRuntime>>,
    max_parallel_sub_calls: NonZeroUsize,
    sink: Option<Arc<dyn DispatchSink>>,
    log_rewrite: Option<LogRewrite>,
}

impl Default for CodeModeConfig {
    fn default() -> Self {
        CodeModeConfig::new()
    }
}

impl CodeModeConfig {
    /// No runtime (a `run_code` call fails with [`REQUIRES_RUNTIME`]), a cap of
    /// [`DEFAULT_MAX_PARALLEL_SUB_CALLS`], no events.
    pub fn new() -> CodeModeConfig {
        CodeModeConfig {
            runtime: None,
            max_parallel_sub_calls: NonZeroUsize::new(DEFAULT_MAX_PARALLEL_SUB_CALLS)
                .unwrap_or(NonZeroUsize::MIN),
            sink: None,
            log_rewrite: None,
        }
    }

    /// Runs programs on `runtime` (its language picks the `run_code` flavour).
    #[must_use]
    pub fn with_runtime(mut self, runtime: Arc<dyn CodeRuntime>) -> CodeModeConfig {
        self.runtime = Some(runtime);
        self
    }

    /// At most `cap` concurrency-safe sub-call bodies of one run in flight at once.
    #[must_use]
    pub fn with_max_parallel_sub_calls(mut self, cap: NonZeroUsize) -> CodeModeConfig {
        self.max_parallel_sub_calls = cap;
        self
    }

    /// Delivers the dispatch events to `sink`.
    #[must_use]
    pub fn with_sink(mut self, sink: Arc<dyn DispatchSink>) -> CodeModeConfig {
        self.sink = Some(sink);
        self
    }

    /// Reshapes the content of settle events.
    #[must_use]
    pub fn with_log_rewrite(mut self, rewrite: LogRewrite) -> CodeModeConfig {
        self.log_rewrite = Some(rewrite);
        self
    }

    /// The runtime, if any.
    pub fn runtime(&self) -> Option<&Arc<dyn CodeRuntime>> {
        self.runtime.as_ref()
    }

    /// The language programs are written in (TypeScript without a runtime).
    pub fn language(&self) -> Language {
        self.runtime
            .as_ref()
            .map_or(Language::TypeScript, |runtime| runtime.language())
    }

    /// The sub-call cap.
    pub fn max_parallel_sub_calls(&self) -> NonZeroUsize {
        self.max_parallel_sub_calls
    }
}

impl fmt::Debug for CodeModeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeModeConfig")
            .field("language", &self.language())
            .field(
                "runtime",
                &self.runtime.as_ref().map(|r| r.isolation().to_owned()),
            )
            .field("max_parallel_sub_calls", &self.max_parallel_sub_calls)
            .field("sink", &self.sink.is_some())
            .field("log_rewrite", &self.log_rewrite.is_some())
            .finish()
    }
}

/// Installs the `run_code` transport into `pipeline`'s registry (replacing a previous
/// one). The definition holds the pipeline weakly, so it does not keep it alive.
///
/// # Errors
///
/// None in practice; the registry's error is passed on should the definition be refused.
pub fn install(pipeline: &Pipeline, config: &CodeModeConfig) -> Result<(), tools_registry::Error> {
    let definition = transport::definition(pipeline, config)?;
    pipeline.registry().install_code_transport(definition)
}

/// The tools the SDK of `agent`'s scope declares: its visible tools whose exposure puts them
/// in the SDK (direct and code-only ones) except `run_code`, sorted by name. Deferred tools
/// are left out: a program finds them with the tool-search helpers.
pub fn sdk_tools(registry: &Registry, agent: Option<&AgentScope>) -> Vec<ToolSdkSchema> {
    sdk_tools_of(&registry.view(agent))
}

fn sdk_tools_of(view: &View) -> Vec<ToolSdkSchema> {
    let mut tools: Vec<ToolSdkSchema> = view
        .sdk_tools()
        .map(|def| {
            ToolSdkSchema::new(
                def.name().as_str(),
                def.description(),
                def.enforced_parameters().clone(),
                def.output().schema().enforced_json().clone(),
            )
        })
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

/// The SDK prompt section of `agent`'s scope in `language`: empty when the scope's
/// effective mode is `native`. A scope with deferred tools also gets the tool-search
/// helpers (`tools.$search` / `tools.$describe` in TypeScript, `tools.search_tools` /
/// `tools.describe_tool` in Python: [`Language::tool_search`]); any other scope's section is
/// the tools alone.
pub fn sdk_section(registry: &Registry, agent: Option<&AgentScope>, language: Language) -> String {
    let view = registry.view(agent);
    if view.mode() == tools_registry::PresentationMode::Native {
        return String::new();
    }
    let options = SdkOptions::new().with_tool_search(view.has_deferred());
    language.render_section_with(&sdk_tools_of(&view), options)
}

/// The instruction that `run_code` is the only directly callable tool (the `tools:code-only`
/// prompt section; the host orders it before its per-tool guidance).
pub const CODE_ONLY_INSTRUCTION: &str = "`run_code` is the only tool you can call directly. \
    Call every other tool from inside a `run_code` program, through the `tools` object \
    declared in the SDK below.";

/// The `tools:code-only` prompt section of `agent`'s scope: [`CODE_ONLY_INSTRUCTION`] when
/// its effective mode is `code`, empty otherwise (under `both` the native tools stay
/// callable).
pub fn code_only_section(registry: &Registry, agent: Option<&AgentScope>) -> &'static str {
    match registry.view(agent).mode() {
        tools_registry::PresentationMode::Code => CODE_ONLY_INSTRUCTION,
        tools_registry::PresentationMode::Native | tools_registry::PresentationMode::Both => "",
    }
}
