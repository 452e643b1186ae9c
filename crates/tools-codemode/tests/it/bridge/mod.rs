//! The Code Mode bridge (`run_code` over a `tools-pipeline` pipeline) against the reference
//! implementation's scheduler and bridge scenarios (its Code Mode scenarios 17–50).
//!
//! Most tests drive the bridge with a scripted in-process runtime: a [`FakeRuntime`] ignores
//! the program text and runs a Rust closure that makes the binding calls through
//! `request.host.call("tools", …)`, exactly what a program's `await tools.name(args)` does.
//! Overlap is proven with barriers and gates, never with sleeps; every outer call runs
//! under a bounded `timeout` as a hang guard only. A few end-to-end tests run real
//! TypeScript programs on the QuickJS runtime.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Barrier, Notify, watch};
use tokio_util::sync::CancellationToken;
use tools_codemode::{
    BindingHost, CodeModeConfig, CodeRunFailure, CodeRunRequest, CodeRunResult, CodeRuntime,
    ContractError, DispatchSettled, DispatchSink, DispatchStarted, ErrorClass, FailureKind,
    IMAGE_CONTEXT_SOURCE, Language, MAX_JSON_DEPTH, NO_OUTPUT, RunFuture, install,
    render_run_code_output,
};
use tools_json::JsonValue;
use tools_pipeline::{
    ErrorCode, Pipeline, PostDecision, PostNext, PostRequest, PreDecision, PreNext, PreRequest,
    ToolCall, ToolContext, ToolError, ToolResult, from_fn,
};
use tools_presentation::ContentBlock;
use tools_registry::{
    AgentScope, ExecutionToken, OutputDecl, PresentationMode, RUN_CODE, Registry, RunContext,
    ToolDefinition,
};

/// The hang guard of one outer call (a correct bridge finishes in milliseconds).
const HANG_GUARD: Duration = Duration::from_secs(20);

/// Yields this often inside a gate so that a scheduler that wrongly lets another stage or
/// body run would do so now (the assertions never depend on it for a correct bridge).
const YIELDS: usize = 64;

async fn yield_many() {
    for _ in 0..YIELDS {
        tokio::task::yield_now().await;
    }
}

// ---------------------------------------------------------------------------------------
// The scripted runtime.
// ---------------------------------------------------------------------------------------

type Script = Arc<dyn Fn(CodeRunRequest) -> RunFuture + Send + Sync>;

/// A TypeScript "runtime" whose program is a Rust closure.
struct FakeRuntime {
    script: Script,
    runs: AtomicUsize,
    namespaces: Mutex<Vec<tools_codemode::BindingNamespace>>,
}

impl CodeRuntime for FakeRuntime {
    fn language(&self) -> Language {
        Language::TypeScript
    }

    fn isolation(&self) -> &str {
        "in-process-test"
    }

    fn run(&self, request: CodeRunRequest) -> RunFuture {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.namespaces
            .lock()
            .unwrap()
            .clone_from(&request.namespaces);
        (self.script)(request)
    }
}

impl FakeRuntime {
    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// A runtime running `program` for every request.
fn scripted<F, Fut>(program: F) -> Arc<FakeRuntime>
where
    F: Fn(CodeRunRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CodeRunResult, ContractError>> + Send + 'static,
{
    Arc::new(FakeRuntime {
        script: Arc::new(move |request| Box::pin(program(request)) as RunFuture),
        runs: AtomicUsize::new(0),
        namespaces: Mutex::new(Vec::new()),
    })
}

/// `await tools.<name>(args)`: the binding call is made (and so numbered) synchronously,
/// the returned future waits for the settlement.
fn call(
    host: &Arc<dyn BindingHost>,
    name: &str,
    args: Value,
) -> impl Future<Output = Result<Value, String>> + Send + 'static {
    let pending = host.call("tools", name, JsonValue::new(args).unwrap());
    async move {
        pending
            .await
            .map(JsonValue::into_value)
            .map_err(|error| error.message)
    }
}

/// A completed run: `value` (if any) and `logs`.
fn completed(value: Option<Value>, logs: &[&str]) -> Result<CodeRunResult, ContractError> {
    Ok(CodeRunResult {
        value: value.map(|v| JsonValue::new(v).unwrap()),
        logs: logs.iter().map(|l| (*l).to_owned()).collect(),
        error: None,
    })
}

/// A failed run.
fn failed(kind: FailureKind, message: &str, logs: &[&str]) -> Result<CodeRunResult, ContractError> {
    Ok(CodeRunResult {
        value: None,
        logs: logs.iter().map(|l| (*l).to_owned()).collect(),
        error: Some(CodeRunFailure::new(kind, message)),
    })
}

/// What a program reports for a binding outcome: the value, or `{"error": message}`.
fn outcome(result: Result<Value, String>) -> Value {
    match result {
        Ok(value) => value,
        Err(message) => json!({ "error": message }),
    }
}

// ---------------------------------------------------------------------------------------
// Recording: a shared log, the dispatch sink, concurrency gauges.
// ---------------------------------------------------------------------------------------

/// A shared, ordered log of strings.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn position(&self, entry: &str) -> usize {
        let entries = self.entries();
        entries
            .iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("{entry:?} not in {entries:?}"))
    }
}

#[derive(Clone, Debug)]
enum Event {
    Started(DispatchStarted),
    Settled(DispatchSettled),
}

/// The dispatch sink: every event, and its id on the shared timeline.
struct Recorder {
    events: Mutex<Vec<Event>>,
    timeline: Log,
}

impl DispatchSink for Recorder {
    fn started(&self, event: &DispatchStarted) {
        self.timeline.push(format!("started {}", event.sub_call_id));
        self.events
            .lock()
            .unwrap()
            .push(Event::Started(event.clone()));
    }

    fn settled(&self, event: &DispatchSettled) {
        self.timeline.push(format!("settled {}", event.sub_call_id));
        self.events
            .lock()
            .unwrap()
            .push(Event::Settled(event.clone()));
    }
}

impl Recorder {
    fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    /// `started <id>` / `settled <id>` in delivery order.
    fn summary(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|event| match event {
                Event::Started(e) => format!("started {}", e.sub_call_id),
                Event::Settled(e) => format!("settled {}", e.sub_call_id),
            })
            .collect()
    }

    fn settles(&self) -> Vec<DispatchSettled> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Settled(e) => Some(e),
                Event::Started(_) => None,
            })
            .collect()
    }
}

/// Bodies in flight now and at most.
#[derive(Default)]
struct Gauge {
    active: AtomicUsize,
    peak: AtomicUsize,
}

impl Gauge {
    fn enter(&self) -> usize {
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        now
    }

    fn exit(&self) {
        self.active.fetch_sub(1, Ordering::SeqCst);
    }

    fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

// ---------------------------------------------------------------------------------------
// Tools.
// ---------------------------------------------------------------------------------------

/// A raw string tool; `safe` gives it a classifier that always answers "concurrency-safe".
fn tool<F, Fut>(name: &str, safe: bool, body: F) -> ToolDefinition
where
    F: Fn(JsonValue, RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let builder = ToolDefinition::builder(name, format!("test tool {name}"))
        .parameters(json!({"type": "object", "properties": {}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(body);
    let builder = if safe {
        builder.concurrency(|_| true)
    } else {
        builder
    };
    builder.build().unwrap()
}

fn text_arg(args: &JsonValue, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `echo` (exclusive): `{text}` → `echo:<text>`, recording the arguments and identity.
fn echo(seen: &Log) -> ToolDefinition {
    let seen = seen.clone();
    tool("echo", false, move |args, ctx| {
        let seen = seen.clone();
        async move {
            let call = ctx.call();
            seen.push(format!(
                "{} root={} args={}",
                call.call_id,
                call.root_call_id,
                args.as_value()
            ));
            Ok(Value::String(format!("echo:{}", text_arg(&args, "text"))))
        }
    })
}

// ---------------------------------------------------------------------------------------
// The harness.
// ---------------------------------------------------------------------------------------

/// A published execution: `(call id, token, parent)`.
type Published = (String, ExecutionToken, Option<ExecutionToken>);

struct Harness {
    registry: Registry,
    pipeline: Pipeline,
    agent: AgentScope,
    runtime: Arc<FakeRuntime>,
    sink: Arc<Recorder>,
    /// Sink events and `published <call id>` of every result, in order.
    timeline: Log,
    /// `(call id, token, parent)` of every published execution.
    executions: Arc<Mutex<Vec<Published>>>,
}

fn harness(runtime: Arc<FakeRuntime>, tools: Vec<ToolDefinition>) -> Harness {
    harness_with(runtime, tools, |config| config)
}

fn harness_with(
    runtime: Arc<FakeRuntime>,
    tools: Vec<ToolDefinition>,
    configure: impl FnOnce(CodeModeConfig) -> CodeModeConfig,
) -> Harness {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    for tool in tools {
        registry.register(tool).unwrap().keep();
    }
    let pipeline = Pipeline::new(registry.clone());
    let timeline = Log::default();
    let sink = Arc::new(Recorder {
        events: Mutex::new(Vec::new()),
        timeline: timeline.clone(),
    });
    let config = configure(
        CodeModeConfig::new()
            .with_runtime(Arc::clone(&runtime) as Arc<dyn CodeRuntime>)
            .with_sink(Arc::clone(&sink) as Arc<dyn DispatchSink>),
    );
    install(&pipeline, &config).unwrap();
    let executions = Arc::new(Mutex::new(Vec::new()));
    let (published, seen) = (timeline.clone(), Arc::clone(&executions));
    pipeline
        .on_result(move |exec, _result| {
            published.push(format!("published {}", exec.call_id()));
            seen.lock()
                .unwrap()
                .push((exec.call_id().to_owned(), exec.token(), exec.parent()));
        })
        .keep();
    let agent = registry.scope();
    Harness {
        registry,
        pipeline,
        agent,
        runtime,
        sink,
        timeline,
        executions,
    }
}

impl Harness {
    /// The model's `run_code` call `call-1`, made by the harness's agent.
    fn outer(&self) -> ToolCall {
        outer_call("return await scripted();", "Run the scripted program")
            .with_agent(self.agent.clone())
    }

    async fn run(&self) -> ToolResult {
        self.execute(self.outer()).await
    }

    async fn execute(&self, call: ToolCall) -> ToolResult {
        tokio::time::timeout(HANG_GUARD, self.pipeline.execute(call))
            .await
            .expect("run_code did not settle")
    }

    fn token_of(&self, call_id: &str) -> ExecutionToken {
        self.executions
            .lock()
            .unwrap()
            .iter()
            .find(|(id, _, _)| id == call_id)
            .map(|(_, token, _)| *token)
            .unwrap_or_else(|| panic!("{call_id} was not published"))
    }

    fn parent_of(&self, call_id: &str) -> Option<ExecutionToken> {
        self.executions
            .lock()
            .unwrap()
            .iter()
            .find(|(id, _, _)| id == call_id)
            .and_then(|(_, _, parent)| *parent)
    }
}

/// A Code Mode harness (a `code` registry with `tools`) running real programs on `runtime`.
fn real_harness(runtime: Arc<dyn CodeRuntime>, tools: Vec<ToolDefinition>) -> Harness {
    let timeline = Log::default();
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    for tool in tools {
        registry.register(tool).unwrap().keep();
    }
    let pipeline = Pipeline::new(registry.clone());
    let sink = Arc::new(Recorder {
        events: Mutex::new(Vec::new()),
        timeline: timeline.clone(),
    });
    install(
        &pipeline,
        &CodeModeConfig::new()
            .with_runtime(runtime)
            .with_sink(Arc::clone(&sink) as Arc<dyn DispatchSink>),
    )
    .unwrap();
    let agent = registry.scope();
    Harness {
        registry,
        pipeline,
        agent,
        // Unused: the programs run on the real runtime.
        runtime: scripted(|_request: CodeRunRequest| async { completed(None, &[]) }),
        sink,
        timeline,
        executions: Arc::new(Mutex::new(Vec::new())),
    }
}

fn outer_call(code: &str, description: &str) -> ToolCall {
    ToolCall::new(
        "call-1",
        RUN_CODE,
        json!({"code": code, "description": description}),
    )
    .unwrap()
}

fn value_of(result: &ToolResult) -> Value {
    result
        .value()
        .unwrap_or_else(|| panic!("expected a success, got {result:?}"))
        .as_value()
        .clone()
}

fn context_texts(result: &ToolResult) -> Vec<String> {
    result
        .contexts()
        .iter()
        .map(|c| {
            c.content
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// A sub-call's number from its id `call-1:code:<n>`.
fn sub_number(call_id: &str) -> Option<&str> {
    call_id.strip_prefix("call-1:code:")
}

/// A pre-execute hook over the sub-calls only (the outer `run_code` passes through).
fn on_sub_pre<F, Fut>(pipeline: &Pipeline, hook: F)
where
    F: Fn(PreRequest) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Option<Result<PreDecision, ToolError>>> + Send + 'static,
{
    pipeline
        .on_pre_execute(from_fn(move |request: PreRequest, next: PreNext| {
            let hook = hook.clone();
            async move {
                if request.execution().parent().is_none() {
                    return next.run(request).await;
                }
                match hook(request.clone()).await {
                    Some(decision) => decision,
                    None => next.run(request).await,
                }
            }
        }))
        .keep();
}

/// A post-execute hook over the sub-calls only.
fn on_sub_post<F, Fut>(pipeline: &Pipeline, hook: F)
where
    F: Fn(PostRequest) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<PostDecision, ToolError>> + Send + 'static,
{
    pipeline
        .on_post_execute(from_fn(move |request: PostRequest, next: PostNext| {
            let hook = hook.clone();
            async move {
                if request.execution().parent().is_none() {
                    return next.run(request).await;
                }
                hook(request).await
            }
        }))
        .keep();
}

/// `cancel_outer` (exclusive) cancels `token` from inside its body and returns; `counted`
/// (exclusive) counts the times its body runs.
fn abort_tools(token: &CancellationToken, bodies: &Arc<AtomicUsize>) -> Vec<ToolDefinition> {
    let token = token.clone();
    let bodies = Arc::clone(bodies);
    vec![
        tool("cancel_outer", false, move |_args, _ctx| {
            token.cancel();
            async { Ok(Value::String("cancelled".into())) }
        }),
        tool("counted", false, move |_args, _ctx| {
            bodies.fetch_add(1, Ordering::SeqCst);
            async { Ok(Value::String("counted".into())) }
        }),
    ]
}

/// A `depth`-deep nested array around the string `leaf`.
fn nested(depth: usize) -> Value {
    let mut value = json!("leaf");
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

fn depth_and_leaf(value: &Value) -> (usize, Value) {
    let (mut depth, mut cursor) = (0, value);
    while let Some(inner) = cursor.as_array().and_then(|a| a.first()) {
        depth += 1;
        cursor = inner;
    }
    (depth, cursor.clone())
}

mod bodies;
mod cancellation;
mod depth_limit;
mod outcomes;
mod quickjs;
mod scheduler;
mod tool_search;
