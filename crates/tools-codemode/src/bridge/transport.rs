//! The `run_code` tool: its model-facing schema, its output rendering, its call card and
//! its body (which hands the program to the code runtime and the sub-calls to the lane).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;

use serde_json::{Map, Value, json};
use tools_json::{ErrorCode, JsonValue, to_pretty_capped};
use tools_pipeline::{Pipeline, WeakPipeline};
use tools_presentation::{ContentBlock, GenericCallView, Presenter, ToolCallKind, ToolCallView};
use tools_registry::{
    BodyFuture, OutputDecl, RUN_CODE, RunContext, ToolBody, ToolDefinition, ToolError, ToolName,
};

use super::lane::{Lane, RunState};
use super::search::ToolSearch;
use super::{CodeModeConfig, Events, MAX_JSON_DEPTH};
use crate::runtime::{
    BindingNamespace, CodeRunRequest, CodeRunResult, ErrorClass, invalid_output_at,
};
use tools_codemode_sdk::Language;

/// The description of `run_code`'s `description` parameter (the same in every language).
pub const DESCRIPTION_PARAMETER: &str = "Clear, concise description of what this program does \
    in active voice, 5-10 words (shown in the UI). Examples: \"Count TODO comments per file\", \
    \"Rename the config key in every service\", \"Summarize open issues by label\".";

/// The content of a run that printed nothing and returned nothing.
pub const NO_OUTPUT: &str = "(run_code completed with no output)";

/// The failure of a `run_code` call when no code runtime is configured.
pub const REQUIRES_RUNTIME: &str =
    "run_code requires a code runtime, and this deployment has none configured";

/// The failure of a `run_code` call whose `description` is blank.
pub const INVALID_DESCRIPTION: &str = "invalid description: expected a non-empty string";

/// The JSON Schema of `run_code`'s arguments in `language`'s flavour.
pub fn run_code_parameters(language: Language) -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": language.run_code_flavour().code_parameter,
            },
            "description": {
                "type": "string",
                "description": DESCRIPTION_PARAMETER,
            },
        },
        "required": ["code", "description"],
    })
}

/// The JSON Schema of `run_code`'s canonical value: `{ logs: string[], result?: any }`.
pub fn run_code_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "logs": {"type": "array", "items": {"type": "string"}},
            "result": {},
        },
        "required": ["logs"],
        "additionalProperties": false,
    })
}

/// Renders `run_code`'s canonical value into the one text the model reads: the logs joined
/// with `\n`, then the result (a string raw, any other value pretty-printed with two-space
/// indentation, containers five levels down and deeper compact), the two joined with `\n`;
/// [`NO_OUTPUT`] when there is neither.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_codemode::render_run_code_output;
///
/// assert_eq!(render_run_code_output(&json!({"logs": ["saw one"], "result": "two"})), "saw one\ntwo");
/// assert_eq!(render_run_code_output(&json!({"logs": [], "result": {"a": [1]}})), "{\n  \"a\": [\n    1\n  ]\n}");
/// assert_eq!(render_run_code_output(&json!({"logs": []})), "(run_code completed with no output)");
/// ```
pub fn render_run_code_output(value: &Value) -> String {
    let logs = value
        .get("logs")
        .and_then(Value::as_array)
        .map(|logs| {
            logs.iter()
                .map(|line| {
                    line.as_str()
                        .map_or_else(|| line.to_string(), str::to_owned)
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let result = value.get("result").map(|result| match result {
        Value::String(text) => text.clone(),
        other => to_pretty_capped(other),
    });
    let has_logs = value
        .get("logs")
        .and_then(Value::as_array)
        .is_some_and(|logs| !logs.is_empty());
    match (has_logs, result) {
        (true, Some(result)) => format!("{logs}\n{result}"),
        (true, None) => logs,
        (false, Some(result)) => result,
        (false, None) => NO_OUTPUT.to_owned(),
    }
}

/// The call card of `run_code`: a generic card of kind `execute` titled with the model's
/// `description`, the program as its raw input. No result presenter: the generic card
/// shows the durable content.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunCodePresenter;

impl Presenter for RunCodePresenter {
    fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        let description = args.get("description")?.as_str()?;
        let code = args.get("code")?.as_str()?;
        let view = GenericCallView::new(description)
            .with_kind(ToolCallKind::Execute)
            .with_raw_input(Value::String(code.to_owned()));
        Some(view.into())
    }
}

/// Builds the `run_code` definition over `pipeline` (held weakly: the definition lives in
/// the pipeline's own registry).
pub(crate) fn definition(
    pipeline: &Pipeline,
    config: &CodeModeConfig,
) -> Result<ToolDefinition, tools_registry::Error> {
    let language = config.language();
    let flavour = language.run_code_flavour();
    let body = RunCodeBody {
        pipeline: pipeline.downgrade(),
        config: Arc::new(config.clone()),
    };
    ToolDefinition::builder(RUN_CODE, flavour.tool_description)
        .parameters(run_code_parameters(language))
        .output(
            OutputDecl::new(run_code_output_schema(), |_, value| {
                Ok(vec![ContentBlock::text(render_run_code_output(
                    value.as_value(),
                ))])
            })
            // `{logs, result}` wraps a result of up to `MAX_JSON_DEPTH` levels.
            .with_max_depth(MAX_JSON_DEPTH + 1),
        )
        .presenter(RunCodePresenter)
        .body_impl(body)
        .build()
}

struct RunCodeBody {
    pipeline: WeakPipeline,
    config: Arc<CodeModeConfig>,
}

impl ToolBody for RunCodeBody {
    fn call(&self, args: JsonValue, ctx: RunContext) -> BodyFuture {
        let pipeline = self.pipeline.upgrade();
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let code = args.get("code").and_then(Value::as_str).unwrap_or_default();
            let description = args
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if description.trim().is_empty() {
                return Err(ToolError::new(INVALID_DESCRIPTION));
            }
            let Some(runtime) = config.runtime.clone() else {
                return Err(ToolError::new(REQUIRES_RUNTIME));
            };
            let Some(pipeline) = pipeline else {
                return Err(ToolError::new(
                    "run_code cannot run: its tool runtime has been dropped",
                ));
            };
            run(&pipeline, &config, runtime, code.to_owned(), ctx).await
        })
    }
}

/// One `run_code` execution: the program runs in the code runtime while the lane serves
/// its sub-calls; both end before the outcome is built.
async fn run(
    pipeline: &Pipeline,
    config: &CodeModeConfig,
    runtime: Arc<dyn crate::runtime::CodeRuntime>,
    code: String,
    ctx: RunContext,
) -> Result<Value, ToolError> {
    let outer = ctx.call();
    let view = pipeline.registry().view(outer.agent.as_ref());
    // A scope with deferred tools gets the tool-search helpers, and its deferred tools are
    // bound (callable once found) though the SDK does not declare them; a tool named like a
    // helper is shadowed by it.
    let search = view
        .has_deferred()
        .then(|| ToolSearch::new(Arc::clone(&view), runtime.language()));
    let mut bound: Vec<ToolName> = view.sdk_tools().map(|def| def.name().clone()).collect();
    // The deferred tools are bound on first use where the runtime can (a program calls few
    // of them): they are the namespace's lazy tail.
    let mut deferred: Vec<ToolName> = Vec::new();
    if let Some(search) = &search {
        deferred.extend(view.deferred().map(|def| def.name().clone()));
        bound.retain(|name| search.helper(name.as_str()).is_none());
        deferred.retain(|name| search.helper(name.as_str()).is_none());
    }
    drop(view);
    bound.sort_unstable();
    bound.dedup();
    let names: Vec<String> = bound.iter().map(|name| name.as_str().to_owned()).collect();
    let lazy: Vec<String> = deferred
        .iter()
        .filter(|name| bound.binary_search(name).is_err())
        .map(|name| name.as_str().to_owned())
        .collect();
    bound.extend(deferred);
    let events = match (&config.sink, &outer.agent) {
        (Some(sink), Some(_)) => Some(Events {
            sink: Arc::clone(sink),
            rewrite: config.log_rewrite.clone(),
        }),
        _ => None,
    };
    let namespace = BindingNamespace::new("tools", names, Some(ErrorClass::tool_call_error()));
    let namespace = match &search {
        Some(search) => search.bind(namespace).with_lazy(lazy),
        None => namespace,
    };
    let (state, submissions) = RunState::new(
        ctx.cancellation().child_token(),
        bound.into_iter().collect(),
        search,
    );
    let lane = Lane::new(
        pipeline.clone(),
        Arc::clone(&state),
        ctx.clone(),
        config.max_parallel_sub_calls.get(),
        events,
    );
    let request =
        CodeRunRequest::new(code, vec![namespace], state.host()).with_cancel(state.token().clone());
    let program = async {
        let outcome = run_contained(&*runtime, request).await;
        state.end("run_code settled");
        outcome
    };
    let (outcome, ()) = tokio::join!(program, lane.run(submissions));
    let outcome = outcome.map_err(|panic| {
        ToolError::with_code(
            ErrorCode::CodeRunFailed,
            format!("code run failed: the code runtime {}", panic.message()),
        )
    })?;
    // A runtime configured deeper than Code Mode's one limit: its result is refused like
    // any result that is not lossless JSON, naming the side and the limit.
    let outcome = outcome.map(|result| match result.value {
        Some(ref value) if value.depth() > MAX_JSON_DEPTH => CodeRunResult {
            value: None,
            logs: result.logs,
            error: Some(invalid_output_at(Some(MAX_JSON_DEPTH), None)),
        },
        _ => result,
    });
    match outcome {
        Err(contract) => Err(ToolError::with_code(
            ErrorCode::CodeRunFailed,
            format!("code run failed: the code runtime rejected the run: {contract}"),
        )),
        Ok(CodeRunResult {
            error: Some(failure),
            logs,
            ..
        }) => {
            let mut message = format!(
                "code run failed ({}): {}",
                failure.kind.as_str(),
                failure.message
            );
            if !logs.is_empty() {
                message.push_str("\nCaptured output:\n");
                message.push_str(&logs.join("\n"));
            }
            Err(ToolError::with_code(ErrorCode::CodeRunFailed, message))
        }
        Ok(CodeRunResult { value, logs, .. }) => {
            let mut output = Map::new();
            output.insert(
                "logs".to_owned(),
                Value::Array(logs.into_iter().map(Value::String).collect()),
            );
            if let Some(value) = value {
                output.insert("result".to_owned(), value.into_value());
            }
            Ok(Value::Object(output))
        }
    }
}

/// Runs `request` on `runtime`, turning a panic (while the run future is created or
/// polled) into an error instead of unwinding.
///
/// Without this, a panicking runtime unwinds through `run`'s `join!` and drops the lane
/// mid-run: in-flight sub-calls are dropped instead of cancelled and committed (no
/// post-execute, no observers, a start event without its settle event). Contained, the
/// panic settles the run like a rejection: the run is ended and the lane drains first.
async fn run_contained(
    runtime: &dyn crate::runtime::CodeRuntime,
    request: CodeRunRequest,
) -> Result<Result<CodeRunResult, crate::runtime::ContractError>, ToolError> {
    let mut run = catch_unwind(AssertUnwindSafe(|| runtime.run(request)))
        .map_err(|panic| ToolError::from_panic(&*panic))?;
    std::future::poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => Poll::Ready(Err(ToolError::from_panic(&*panic))),
        },
    )
    .await
}
