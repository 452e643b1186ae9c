//! The Code Mode bridge (`run_code` over a `tools-pipeline` pipeline) against the spec's
//! scheduler and bridge scenarios (A2, A4–A9, A13 17–50).
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
    async move { pending.await.map(JsonValue::into_value) }
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

// ---------------------------------------------------------------------------------------
// Scheduler (A6, A13 17–25).
// ---------------------------------------------------------------------------------------

/// 17: three concurrency-safe calls under `Promise.all` are all in flight at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s17_three_safe_calls_are_in_flight_at_once() {
    let gauge = Arc::new(Gauge::default());
    let barrier = Arc::new(Barrier::new(3));
    let (g, b) = (Arc::clone(&gauge), Arc::clone(&barrier));
    let safe_read = tool("safe_read", true, move |args, _ctx| {
        let (gauge, barrier) = (Arc::clone(&g), Arc::clone(&b));
        async move {
            gauge.enter();
            // Released only once all three bodies are in flight together.
            barrier.wait().await;
            gauge.exit();
            Ok(Value::String(format!(
                "safe_read:{}",
                text_arg(&args, "key")
            )))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "safe_read", json!({"key": "a"})),
            call(&host, "safe_read", json!({"key": "b"})),
            call(&host, "safe_read", json!({"key": "c"})),
        );
        let joined = [a, b, c]
            .into_iter()
            .map(|r| r.unwrap().as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join(",");
        completed(Some(Value::String(joined)), &[])
    });
    let h = harness(runtime, vec![safe_read]);
    let result = h.run().await;
    assert_eq!(result.text(), "safe_read:a,safe_read:b,safe_read:c");
    assert_eq!(gauge.peak(), 3);
    let summary = h.sink.summary();
    let started: Vec<&String> = summary
        .iter()
        .filter(|e| e.starts_with("started"))
        .collect();
    let settled: Vec<&String> = summary
        .iter()
        .filter(|e| e.starts_with("settled"))
        .collect();
    assert_eq!(
        started,
        [
            "started call-1:code:1",
            "started call-1:code:2",
            "started call-1:code:3"
        ]
    );
    assert_eq!(
        settled,
        [
            "settled call-1:code:1",
            "settled call-1:code:2",
            "settled call-1:code:3"
        ]
    );
}

/// 18: safe r1, r2, exclusive w, safe r3 → w waits for r1/r2 to drain; r3 waits for w.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_an_exclusive_call_is_a_barrier() {
    let log = Log::default();
    let reads = Arc::new(Gauge::default());
    let writer_active = Arc::new(AtomicUsize::new(0));
    let violations = Log::default();
    let pair = Arc::new(Barrier::new(2));
    let read = {
        let (log, reads, writer_active, violations, pair) = (
            log.clone(),
            Arc::clone(&reads),
            Arc::clone(&writer_active),
            violations.clone(),
            Arc::clone(&pair),
        );
        tool("read", true, move |args, _ctx| {
            let (log, reads, writer_active, violations, pair) = (
                log.clone(),
                Arc::clone(&reads),
                Arc::clone(&writer_active),
                violations.clone(),
                Arc::clone(&pair),
            );
            async move {
                let id = text_arg(&args, "id");
                log.push(format!("start {id}"));
                if writer_active.load(Ordering::SeqCst) != 0 {
                    violations.push(format!("{id} started while the writer ran"));
                }
                reads.enter();
                if id != "r3" {
                    // r1 and r2 overlap: neither finishes until both are in flight.
                    pair.wait().await;
                }
                yield_many().await;
                if writer_active.load(Ordering::SeqCst) != 0 {
                    violations.push(format!("the writer started while {id} ran"));
                }
                reads.exit();
                log.push(format!("end {id}"));
                Ok(Value::String(id))
            }
        })
    };
    let write = {
        let (log, reads, writer_active, violations) = (
            log.clone(),
            Arc::clone(&reads),
            Arc::clone(&writer_active),
            violations.clone(),
        );
        tool("write", false, move |_args, _ctx| {
            let (log, reads, writer_active, violations) = (
                log.clone(),
                Arc::clone(&reads),
                Arc::clone(&writer_active),
                violations.clone(),
            );
            async move {
                log.push("start w");
                if reads.active() != 0 {
                    violations.push(format!("w started with {} reads in flight", reads.active()));
                }
                writer_active.store(1, Ordering::SeqCst);
                yield_many().await;
                writer_active.store(0, Ordering::SeqCst);
                log.push("end w");
                Ok(Value::String("w".into()))
            }
        })
    };
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (r1, r2, w, r3) = tokio::join!(
            call(&host, "read", json!({"id": "r1"})),
            call(&host, "read", json!({"id": "r2"})),
            call(&host, "write", json!({})),
            call(&host, "read", json!({"id": "r3"})),
        );
        completed(
            Some(json!([outcome(r1), outcome(r2), outcome(w), outcome(r3)])),
            &[],
        )
    });
    let h = harness(runtime, vec![read, write]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["r1", "r2", "w", "r3"]));
    assert!(
        violations.entries().is_empty(),
        "{:?}",
        violations.entries()
    );
    assert_eq!(reads.peak(), 2);
    // w starts after both reads ended; r3 after w ended.
    let start_w = log.position("start w");
    assert!(log.position("end r1") < start_w && log.position("end r2") < start_w);
    assert!(log.position("end w") < log.position("start r3"));
    assert!(log.position("start r1") < log.position("end r1"));
    assert!(
        log.position("start r2") < log.position("end r1"),
        "r1 and r2 overlap"
    );
}

/// 19: with a cap of 2, the third safe call waits for a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_the_parallel_cap_holds() {
    let gauge = Arc::new(Gauge::default());
    let log = Log::default();
    let (started, _) = watch::channel(0_usize);
    let started = Arc::new(started);
    let (g, l, s) = (Arc::clone(&gauge), log.clone(), Arc::clone(&started));
    let read = tool("read", true, move |args, _ctx| {
        let (gauge, log, started) = (Arc::clone(&g), l.clone(), Arc::clone(&s));
        async move {
            let id = text_arg(&args, "id");
            gauge.enter();
            log.push(format!("start {id}"));
            started.send_modify(|n| *n += 1);
            // Hold the slot until two bodies have been in flight, then give a wrong
            // scheduler every chance to start a third.
            let mut seen = started.subscribe();
            seen.wait_for(|n| *n >= 2).await.unwrap();
            yield_many().await;
            log.push(format!("end {id}"));
            gauge.exit();
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "read", json!({"id": "a"})),
            call(&host, "read", json!({"id": "b"})),
            call(&host, "read", json!({"id": "c"})),
        );
        completed(Some(json!([outcome(a), outcome(b), outcome(c)])), &[])
    });
    let h = harness_with(runtime, vec![read], |config| {
        config.with_max_parallel_sub_calls(std::num::NonZeroUsize::new(2).unwrap())
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["a", "b", "c"]));
    assert_eq!(gauge.peak(), 2, "{:?}", log.entries());
    let start_c = log.position("start c");
    assert!(
        log.position("end a") < start_c || log.position("end b") < start_c,
        "{:?}",
        log.entries()
    );
}

/// 20: a tool unregistered after the bindings were enumerated rejects as unknown; its body
/// never runs.
#[tokio::test(flavor = "current_thread")]
async fn s20_an_unregistered_tool_rejects_as_unknown() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let ephemeral = tool("ephemeral", true, move |_args, _ctx| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok(Value::String("ran".into())) }
    });
    let registration: Arc<Mutex<Option<tools_registry::Registration>>> = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&registration);
    let runtime = scripted(move |request: CodeRunRequest| {
        let slot = Arc::clone(&slot);
        async move {
            let names = request.namespaces[0].names.clone();
            assert_eq!(names, ["echo", "ephemeral"]);
            // Unregister between enumeration and the call.
            drop(slot.lock().unwrap().take());
            let answer = call(&request.host, "ephemeral", json!({})).await;
            completed(Some(outcome(answer)), &[])
        }
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    *registration.lock().unwrap() = Some(h.registry.register(ephemeral).unwrap());
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "unknown tool \"ephemeral\""})
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert!(settled[0].is_error);
}

/// A name outside the bound namespace (a non-conforming runtime, or `run_code` itself:
/// no recursion path) is refused by the host: nothing is dispatched or logged.
#[tokio::test(flavor = "current_thread")]
async fn a_name_that_was_not_bound_never_reaches_the_pipeline() {
    let runtime = scripted(|request: CodeRunRequest| async move {
        let recursive = call(
            &request.host,
            "run_code",
            json!({"code": "", "description": "x"}),
        )
        .await;
        let forged = call(&request.host, "not_bound", json!({})).await;
        completed(Some(json!([outcome(recursive), outcome(forged)])), &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!([
            {"error": "unknown tool \"run_code\""},
            {"error": "unknown tool \"not_bound\""}
        ])
    );
    assert!(h.sink.settles().is_empty(), "nothing was dispatched");
}

/// 21: call 2's pre-execute does not enter while call 1's slow async pre-execute pends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s21_pre_execute_stages_never_overlap() {
    let stages = Log::default();
    let submitted = Arc::new(Notify::new());
    let read = tool("read", true, |args, _ctx| async move {
        Ok(Value::String(text_arg(&args, "id")))
    });
    let s = Arc::clone(&submitted);
    let runtime = scripted(move |request: CodeRunRequest| {
        let submitted = Arc::clone(&s);
        async move {
            let host = request.host;
            let first = call(&host, "read", json!({"id": "1"}));
            let second = call(&host, "read", json!({"id": "2"}));
            // Both binding calls are accepted: a concurrent scheduler could start call 2.
            submitted.notify_one();
            let (a, b) = tokio::join!(first, second);
            completed(Some(json!([outcome(a), outcome(b)])), &[])
        }
    });
    let h = harness(runtime, vec![read]);
    let (log, s) = (stages.clone(), Arc::clone(&submitted));
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let (log, submitted) = (log.clone(), Arc::clone(&s));
        async move {
            let n = sub_number(request.execution().call_id())
                .unwrap()
                .to_owned();
            log.push(format!("pre-enter {n}"));
            if n == "1" {
                submitted.notified().await;
                yield_many().await;
            }
            log.push(format!("pre-exit {n}"));
            None
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["1", "2"]));
    assert_eq!(
        stages.entries(),
        ["pre-enter 1", "pre-exit 1", "pre-enter 2", "pre-exit 2"]
    );
}

/// 22: a safe read queued behind an exclusive writer starts only after the writer's
/// post-execute finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s22_the_exclusive_barrier_lasts_through_post_execute() {
    let log = Log::default();
    let l = log.clone();
    let writer = tool("writer", false, move |_args, _ctx| {
        let log = l.clone();
        async move {
            log.push("writer body");
            Ok(Value::String("written".into()))
        }
    });
    let l = log.clone();
    let read = tool("read", true, move |_args, _ctx| {
        let log = l.clone();
        async move {
            log.push("read body");
            Ok(Value::String("read".into()))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (w, r) = tokio::join!(
            call(&host, "writer", json!({})),
            call(&host, "read", json!({}))
        );
        completed(Some(json!([outcome(w), outcome(r)])), &[])
    });
    let h = harness(runtime, vec![writer, read]);
    let l = log.clone();
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let log = l.clone();
        async move {
            log.push(format!("pre {}", request.execution().name()));
            None
        }
    });
    let l = log.clone();
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let log = l.clone();
        async move {
            let name = request.execution().name().to_string();
            log.push(format!("post-enter {name}"));
            if name == "writer" {
                yield_many().await;
            }
            log.push(format!("post-exit {name}"));
            Ok(PostDecision::accept())
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["written", "read"]));
    assert_eq!(
        log.entries(),
        [
            "pre writer",
            "writer body",
            "post-enter writer",
            "post-exit writer",
            "pre read",
            "read body",
            "post-enter read",
            "post-exit read"
        ]
    );
}

/// 23: the program returns while a sub-call's post-execute is mid-flight → exactly one
/// settle event, an error, delivered before `run_code` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_a_commit_in_progress_is_finished_and_logged_before_return() {
    let in_post = Arc::new(Notify::new());
    let read = tool("read", true, |_args, _ctx| async {
        Ok(Value::String("read".into()))
    });
    let p = Arc::clone(&in_post);
    let runtime = scripted(move |request: CodeRunRequest| {
        let in_post = Arc::clone(&p);
        async move {
            let pending = call(&request.host, "read", json!({}));
            in_post.notified().await;
            // The program returns without awaiting its call.
            drop(pending);
            completed(Some(json!("returned early")), &[])
        }
    });
    let h = harness(runtime, vec![read]);
    let p = Arc::clone(&in_post);
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let in_post = Arc::clone(&p);
        async move {
            in_post.notify_one();
            // The sub-call's caller token is the run-scoped one: it is cancelled when the
            // program settles.
            request
                .execution()
                .caller_cancellation()
                .expect("the test gives the call a token")
                .cancelled()
                .await;
            Ok(PostDecision::accept())
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("returned early"));
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert_eq!(&*settled[0].sub_call_id, "call-1:code:1");
    assert!(settled[0].is_error, "{settled:?}");
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 24: post-execute runs, and contexts are forwarded, in submission order even when the
/// bodies finish out of order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_commits_follow_submission_order() {
    let log = Log::default();
    let second_done = Arc::new(Notify::new());
    let (l, d) = (log.clone(), Arc::clone(&second_done));
    let read = tool("read", true, move |args, _ctx| {
        let (log, second_done) = (l.clone(), Arc::clone(&d));
        async move {
            let id = text_arg(&args, "id");
            if id == "1" {
                // Finish only after call 2 has finished.
                second_done.notified().await;
            }
            log.push(format!("body-end {id}"));
            if id == "2" {
                second_done.notify_one();
            }
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b) = tokio::join!(
            call(&host, "read", json!({"id": "1"})),
            call(&host, "read", json!({"id": "2"}))
        );
        completed(Some(json!([outcome(a), outcome(b)])), &[])
    });
    let h = harness(runtime, vec![read]);
    let l = log.clone();
    on_sub_post(&h.pipeline, move |request: PostRequest| {
        let log = l.clone();
        async move {
            let id = request.execution().call_id().to_owned();
            log.push(format!("post {id}"));
            Ok(PostDecision::accept().with_contexts(vec![ToolContext::text(format!("ctx:{id}"))]))
        }
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["1", "2"]));
    assert_eq!(
        log.entries(),
        [
            "body-end 2",
            "body-end 1",
            "post call-1:code:1",
            "post call-1:code:2"
        ]
    );
    assert_eq!(
        context_texts(&result),
        ["ctx:call-1:code:1", "ctx:call-1:code:2"]
    );
}

/// 25: the program throws while exclusive w1 is in flight and w2 is queued → w2 is
/// abandoned without events.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s25_queued_calls_are_abandoned_when_the_run_is_over() {
    let started = Arc::new(Notify::new());
    let log = Log::default();
    let (s, l) = (Arc::clone(&started), log.clone());
    let writer = tool("writer", false, move |args, ctx| {
        let (started, log) = (Arc::clone(&s), l.clone());
        async move {
            let n = text_arg(&args, "n");
            log.push(format!("start {n}"));
            started.notify_one();
            ctx.cancellation().cancelled().await;
            log.push(format!("cancelled {n}"));
            Ok(Value::String(format!("late {n}")))
        }
    });
    let w2_future: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (s, slot) = (Arc::clone(&started), Arc::clone(&w2_future));
    let runtime = scripted(move |request: CodeRunRequest| {
        let (started, slot) = (Arc::clone(&s), Arc::clone(&slot));
        async move {
            let host = request.host;
            let w1 = host.call(
                "tools",
                "writer",
                JsonValue::new(json!({"n": "1"})).unwrap(),
            );
            let w2 = host.call(
                "tools",
                "writer",
                JsonValue::new(json!({"n": "2"})).unwrap(),
            );
            started.notified().await;
            *slot.lock().unwrap() = Some(w2);
            drop(w1);
            failed(FailureKind::Exception, "Error: boom", &["before the throw"])
        }
    });
    let h = harness(runtime, vec![writer]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Error: code run failed (exception): Error: boom\nCaptured output:\nbefore the throw"
    );
    assert_eq!(log.entries(), ["start 1", "cancelled 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    let w2 = w2_future.lock().unwrap().take().unwrap();
    let rejection = tokio::time::timeout(HANG_GUARD, w2).await.unwrap();
    assert_eq!(
        rejection,
        Err("run_code run is over (run_code settled); writer tool call abandoned".to_owned())
    );
}

/// 29: three non-concurrency-safe calls under `Promise.all` never overlap and run in
/// submission order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_exclusive_calls_run_alone_in_order() {
    let gauge = Arc::new(Gauge::default());
    let log = Log::default();
    let (g, l) = (Arc::clone(&gauge), log.clone());
    let write = tool("write", false, move |args, _ctx| {
        let (gauge, log) = (Arc::clone(&g), l.clone());
        async move {
            gauge.enter();
            let id = text_arg(&args, "id");
            log.push(format!("start {id}"));
            yield_many().await;
            log.push(format!("end {id}"));
            gauge.exit();
            Ok(Value::String(id))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let (a, b, c) = tokio::join!(
            call(&host, "write", json!({"id": "a"})),
            call(&host, "write", json!({"id": "b"})),
            call(&host, "write", json!({"id": "c"})),
        );
        completed(Some(json!([outcome(a), outcome(b), outcome(c)])), &[])
    });
    let h = harness(runtime, vec![write]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!(["a", "b", "c"]));
    assert_eq!(gauge.peak(), 1);
    assert_eq!(
        log.entries(),
        ["start a", "end a", "start b", "end b", "start c", "end c"]
    );
}

// ---------------------------------------------------------------------------------------
// Bridge (A2, A4, A5, A7–A9, A13 26–50).
// ---------------------------------------------------------------------------------------

/// 26: two sequential echo calls: value, content, arguments, identity, settle events.
#[tokio::test(flavor = "current_thread")]
async fn b26_sequential_calls_value_content_identity_and_events() {
    let seen = Log::default();
    let identities = Arc::new(Mutex::new(Vec::new()));
    let ids = Arc::clone(&identities);
    let whoami = tool("whoami", false, move |_args, ctx| {
        let ids = Arc::clone(&ids);
        async move {
            let call = ctx.call();
            ids.lock().unwrap().push((
                call.call_id.to_string(),
                call.root_call_id.to_string(),
                call.parent,
                call.agent.as_ref().map(AgentScope::key),
            ));
            Ok(Value::String("me".into()))
        }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let first = call(&host, "echo", json!({"text": "one"})).await.unwrap();
        let log = format!("saw {}", first.as_str().unwrap());
        let second = call(&host, "echo", json!({"text": "two"})).await.unwrap();
        call(&host, "whoami", json!({})).await.unwrap();
        completed(Some(second), &[&log])
    });
    let h = harness(runtime, vec![echo(&seen), whoami]);
    let result = h.run().await;

    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        value_of(&result),
        json!({"logs": ["saw echo:one"], "result": "echo:two"})
    );
    assert_eq!(
        result.content(),
        [ContentBlock::text("saw echo:one\necho:two")]
    );
    assert_eq!(result.meta(), None);
    assert!(result.contexts().is_empty());
    assert!(!result.concludes_turn());
    assert_eq!(
        seen.entries(),
        [
            r#"call-1:code:1 root=call-1 args={"text":"one"}"#,
            r#"call-1:code:2 root=call-1 args={"text":"two"}"#
        ]
    );

    // The binding map: one namespace `tools`, sorted names, no `run_code`.
    let namespaces = h.runtime.namespaces.lock().unwrap().clone();
    assert_eq!(namespaces.len(), 1);
    assert_eq!(namespaces[0].global, "tools");
    assert_eq!(namespaces[0].names, ["echo", "whoami"]);
    assert_eq!(
        namespaces[0].error_class,
        Some(ErrorClass::tool_call_error())
    );

    // Sub-call identity (A5): the parent token is the outer execution's token.
    let outer = h.token_of("call-1");
    assert_eq!(h.parent_of("call-1"), None);
    for n in 1..=3 {
        assert_eq!(h.parent_of(&format!("call-1:code:{n}")), Some(outer));
    }
    assert_eq!(
        *identities.lock().unwrap(),
        [(
            "call-1:code:3".to_owned(),
            "call-1".to_owned(),
            Some(outer),
            Some(h.agent.key())
        )]
    );

    // Events (A8): start and settle per call, the full field set.
    let events = h.sink.events();
    assert_eq!(events.len(), 6);
    let Event::Started(start) = &events[0] else {
        panic!("expected a start event first: {events:?}");
    };
    assert_eq!(&*start.root_call_id, "call-1");
    assert_eq!(&*start.parent_call_id, "call-1");
    assert_eq!(&*start.sub_call_id, "call-1:code:1");
    assert_eq!(start.name, "echo");
    assert_eq!(start.arguments, json!({"text": "one"}));
    let settled = h.sink.settles();
    let expected = [("call-1:code:1", "one"), ("call-1:code:2", "two")];
    for (event, (id, text)) in settled.iter().zip(expected) {
        assert_eq!(&*event.root_call_id, "call-1");
        assert_eq!(&*event.parent_call_id, "call-1");
        assert_eq!(&*event.sub_call_id, id);
        assert_eq!(event.name, "echo");
        assert_eq!(event.arguments, json!({ "text": text }));
        assert!(!event.is_error);
        assert_eq!(event.content, [ContentBlock::text(format!("echo:{text}"))]);
    }
    assert_eq!(
        h.sink.summary(),
        [
            "started call-1:code:1",
            "settled call-1:code:1",
            "started call-1:code:2",
            "settled call-1:code:2",
            "started call-1:code:3",
            "settled call-1:code:3"
        ]
    );
}

/// A tool that concludes the turn.
fn finisher() -> ToolDefinition {
    tool("finish", false, |_args, ctx| async move {
        ctx.conclude_turn();
        Ok(Value::String("finished".into()))
    })
}

/// 28: a sub-call concluding the turn concludes the outer call; not when post-execute
/// blocked it and the program caught the failure.
#[tokio::test(flavor = "current_thread")]
async fn b28_a_concluding_sub_call_concludes_the_outer_call() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "finish", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let h = harness(scripted(program), vec![finisher()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("finished"));
    assert!(result.concludes_turn());

    let h = harness(scripted(program), vec![finisher()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::block("finish is blocked here"))
    });
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "finish is blocked here"})
    );
    assert!(!result.concludes_turn());
}

/// 30: a failing tool and a pre-execute denial reject the binding with their messages.
#[tokio::test(flavor = "current_thread")]
async fn b30_failures_and_denials_reject_the_binding() {
    let broken = tool("broken", false, |_args, _ctx| async {
        Err(ToolError::with_code(
            ErrorCode::InvalidToolOutput,
            "deliberate failure",
        ))
    });
    let guarded = tool("guarded", false, |_args, _ctx| async {
        Ok(Value::String("should not run".into()))
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let a = call(&host, "broken", json!({})).await;
        let b = call(&host, "guarded", json!({})).await;
        completed(Some(json!([outcome(a), outcome(b)])), &[])
    });
    let h = harness(runtime, vec![broken, guarded]);
    on_sub_pre(&h.pipeline, |request: PreRequest| async move {
        (request.execution().name().as_str() == "guarded")
            .then(|| Ok(PreDecision::Deny("not on my watch".into())))
    });
    let result = h.run().await;
    let value = value_of(&result);
    // Only the message reaches the program: no code, no `Error: ` prefix.
    assert_eq!(value["result"][0], json!({"error": "deliberate failure"}));
    let denial = value["result"][1]["error"].as_str().unwrap();
    assert!(denial.contains("not on my watch"), "{denial}");
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 2);
    assert!(settled.iter().all(|e| e.is_error));
}

/// 32: a pre-execute listener that fails: the program sees its message; neither the body
/// nor post-execute runs; the settle event is an error.
#[tokio::test(flavor = "current_thread")]
async fn b32_a_failing_pre_execute_listener() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let gated = tool("gated", false, move |_args, _ctx| {
        r.fetch_add(1, Ordering::SeqCst);
        async { Ok(Value::String("ran".into())) }
    });
    let runtime = scripted(|request: CodeRunRequest| async move {
        let answer = call(&request.host, "gated", json!({})).await;
        completed(Some(outcome(answer)), &[])
    });
    let h = harness(runtime, vec![gated]);
    on_sub_pre(&h.pipeline, |_request: PreRequest| async {
        Some(Err::<PreDecision, ToolError>("gate exploded".into()))
    });
    let posts = Arc::new(AtomicUsize::new(0));
    let p = Arc::clone(&posts);
    on_sub_post(&h.pipeline, move |_request: PostRequest| {
        p.fetch_add(1, Ordering::SeqCst);
        async { Ok(PostDecision::accept()) }
    });
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"error": "gate exploded"})
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(posts.load(Ordering::SeqCst), 0);
    let settled = h.sink.settles();
    assert_eq!(settled.len(), 1);
    assert!(settled[0].is_error);
    assert_eq!(
        settled[0].content,
        [ContentBlock::text("Error: gate exploded")]
    );
}

/// 35: contexts added by post-execute reach the outer result in order with their sources,
/// also when the program later fails.
#[tokio::test(flavor = "current_thread")]
async fn b35_contexts_are_forwarded_in_order_and_survive_a_failure() {
    let add_context = |pipeline: &Pipeline| {
        on_sub_post(pipeline, |request: PostRequest| async move {
            let id = request.execution().call_id().to_owned();
            Ok(PostDecision::accept().with_contexts(vec![
                ToolContext::text(format!("ctx:{id}")).with_source("policy"),
            ]))
        });
    };
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        call(&host, "echo", json!({"text": "a"})).await.unwrap();
        call(&host, "echo", json!({"text": "b"})).await.unwrap();
        completed(None, &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    add_context(&h.pipeline);
    let result = h.run().await;
    assert!(!result.is_error());
    assert_eq!(
        context_texts(&result),
        ["ctx:call-1:code:1", "ctx:call-1:code:2"]
    );
    assert!(
        result
            .contexts()
            .iter()
            .all(|c| c.source.as_deref() == Some("policy"))
    );

    let runtime = scripted(|request: CodeRunRequest| async move {
        call(&request.host, "echo", json!({"text": "a"}))
            .await
            .unwrap();
        failed(FailureKind::Exception, "Error: later failure", &[])
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    add_context(&h.pipeline);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(context_texts(&result), ["ctx:call-1:code:1"]);
}

/// A tool rendering its value as a text block and an image block.
fn picture() -> ToolDefinition {
    ToolDefinition::builder("picture", "returns a picture")
        .output(OutputDecl::new(
            json!({"type": "string"}),
            |_args, value| {
                Ok(vec![
                    ContentBlock::text(value.as_str().unwrap_or_default()),
                    ContentBlock::from_json(
                        &json!({"type": "image", "attachment": {"id": "img-1"}}),
                    )
                    .unwrap(),
                ])
            },
        ))
        .body(|_args, _ctx| async { Ok(Value::String("a cat".into())) })
        .build()
        .unwrap()
}

/// 36: an image result is forwarded once as a context from `tools-code-mode` with all its
/// blocks; not when post-execute blocks or replaces it.
#[tokio::test(flavor = "current_thread")]
async fn b36_image_results_are_forwarded_as_a_context() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "picture", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let h = harness(scripted(program), vec![picture()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("a cat"));
    assert_eq!(result.contexts().len(), 1);
    let context = &result.contexts()[0];
    assert_eq!(context.source.as_deref(), Some(IMAGE_CONTEXT_SOURCE));
    assert_eq!(IMAGE_CONTEXT_SOURCE, "tools-code-mode");
    assert_eq!(
        context.content,
        [
            ContentBlock::text("a cat"),
            ContentBlock::from_json(&json!({"type": "image", "attachment": {"id": "img-1"}}))
                .unwrap()
        ]
    );

    let h = harness(scripted(program), vec![picture()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::block("no pictures"))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"error": "no pictures"}));
    assert!(result.contexts().is_empty());

    let h = harness(scripted(program), vec![picture()]);
    on_sub_post(&h.pipeline, |_request: PostRequest| async {
        Ok(PostDecision::accept_content(vec![ContentBlock::text(
            "[picture withheld]",
        )]))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!("a cat"));
    assert!(result.contexts().is_empty());
}

/// 37: a failed run becomes a `CODE_RUN_FAILED` error result with the captured output.
#[tokio::test(flavor = "current_thread")]
async fn b37_failed_runs_render_with_their_captured_output() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(
                FailureKind::Timeout,
                "compute budget exhausted (300ms busy)",
                &["got this far"],
            )
        }),
        vec![],
    );
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(result.code().unwrap().as_str(), "CODE_RUN_FAILED");
    let text = result.text();
    assert!(text.contains("code run failed (timeout)"), "{text}");
    assert!(
        text.contains("compute budget exhausted (300ms busy)"),
        "{text}"
    );
    assert!(text.contains("got this far"), "{text}");

    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(
                FailureKind::OutputLimit,
                "outer output exceeded 8 bytes",
                &["captured before failure"],
            )
        }),
        vec![],
    );
    let result = h.run().await;
    assert_eq!(
        result.content(),
        [ContentBlock::text(
            "Error: code run failed (output-limit): outer output exceeded 8 bytes\nCaptured output:\ncaptured before failure"
        )]
    );
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));

    // Without logs there is no captured-output section.
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            failed(FailureKind::WorkerExit, "worker exited with code 7", &[])
        }),
        vec![],
    );
    assert_eq!(
        h.run().await.text(),
        "Error: code run failed (worker-exit): worker exited with code 7"
    );
}

/// A slow exclusive tool: logs its start, waits for its cancellation, logs it.
fn slow(log: &Log, started: &Arc<Notify>) -> ToolDefinition {
    let (l, s) = (log.clone(), Arc::clone(started));
    tool("slow", false, move |args, ctx| {
        let (log, started) = (l.clone(), Arc::clone(&s));
        async move {
            let n = args.get("n").map(ToString::to_string).unwrap_or_default();
            log.push(format!("start {n}"));
            started.notify_one();
            ctx.cancellation().cancelled().await;
            log.push(format!("aborted {n}"));
            Err(ToolError::new(format!("slow {n} interrupted")))
        }
    })
}

/// 38: the outer call is cancelled while one slow call runs and another is queued: the
/// first sees its abort, the second never starts, the run fails as `abort`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b38_outer_cancellation_aborts_the_run() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let outer_cancel = CancellationToken::new();
    let queued: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (s, c, slot) = (
        Arc::clone(&started),
        outer_cancel.clone(),
        Arc::clone(&queued),
    );
    let runtime = scripted(move |request: CodeRunRequest| {
        let (started, outer_cancel, slot) = (Arc::clone(&s), c.clone(), Arc::clone(&slot));
        async move {
            let host = request.host;
            let first = call(&host, "slow", json!({"n": 1}));
            let second = host.call("tools", "slow", JsonValue::new(json!({"n": 2})).unwrap());
            started.notified().await;
            outer_cancel.cancel();
            // The cancellation reaches the runtime through the run-scoped token; the
            // runtime then fails the run as `abort` and drops its pending calls.
            request.cancel.cancelled().await;
            *slot.lock().unwrap() = Some(second);
            drop(first);
            failed(FailureKind::Abort, "run aborted", &["was running"])
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(
        result.text(),
        "Error: code run failed (abort): run aborted\nCaptured output:\nwas running"
    );
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    let second = queued.lock().unwrap().take().unwrap();
    assert_eq!(
        tokio::time::timeout(HANG_GUARD, second).await.unwrap(),
        Err("run_code run is over (tool call aborted); slow tool call abandoned".to_owned())
    );
}

/// 39: the runtime rejects the run while a call is in flight: the call is aborted and
/// logged before `run_code` returns; the error carries the rejection.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b39_a_rejecting_runtime_still_drains_its_calls() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let s = Arc::clone(&started);
    let runtime = scripted(move |request: CodeRunRequest| {
        let started = Arc::clone(&s);
        async move {
            let in_flight = call(&request.host, "slow", json!({"n": 1}));
            started.notified().await;
            drop(in_flight);
            Err(ContractError::InvalidLimit {
                limit: "backend",
                reason: "backend exploded".into(),
            })
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    let text = result.text();
    assert!(text.contains("backend exploded"), "{text}");
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 39 (a panicking runtime): a runtime whose run future panics while a call is in flight
/// is treated like a rejecting one: the call is cancelled, committed and logged before
/// `run_code` returns a `CODE_RUN_FAILED` error.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn b39_a_panicking_runtime_still_drains_its_calls() {
    let log = Log::default();
    let started = Arc::new(Notify::new());
    let s = Arc::clone(&started);
    let runtime = scripted(move |request: CodeRunRequest| {
        let started = Arc::clone(&s);
        async move {
            let in_flight = call(&request.host, "slow", json!({"n": 1}));
            started.notified().await;
            drop(in_flight);
            panic!("backend exploded");
        }
    });
    let h = harness(runtime, vec![slow(&log, &started)]);
    let result = h.run().await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(
        result.text(),
        "Error: code run failed: the code runtime panicked: backend exploded"
    );
    assert_eq!(log.entries(), ["start 1", "aborted 1"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    assert!(h.sink.settles()[0].is_error);
    assert!(
        h.timeline.position("settled call-1:code:1") < h.timeline.position("published call-1"),
        "{:?}",
        h.timeline.entries()
    );
}

/// 40: a call without an owning agent dispatches but logs nothing.
#[tokio::test(flavor = "current_thread")]
async fn b40_no_agent_no_events() {
    let seen = Log::default();
    let runtime = scripted(|request: CodeRunRequest| async move {
        let answer = call(&request.host, "echo", json!({"text": "x"})).await;
        completed(Some(outcome(answer)), &[])
    });
    let h = harness(runtime, vec![echo(&seen)]);
    let result = h
        .execute(outer_call("return 1", "Echo without an agent"))
        .await;
    assert_eq!(value_of(&result)["result"], json!("echo:x"));
    assert_eq!(seen.entries().len(), 1);
    assert!(h.sink.events().is_empty());
}

/// 41: without a runtime, `run_code` is an error result, not a crash.
#[tokio::test(flavor = "current_thread")]
async fn b41_no_runtime_is_an_error_result() {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    let pipeline = Pipeline::new(registry.clone());
    install(&pipeline, &CodeModeConfig::new()).unwrap();
    let result = tokio::time::timeout(
        HANG_GUARD,
        pipeline.execute(outer_call("return 1", "Return one")),
    )
    .await
    .unwrap();
    assert!(result.is_error());
    assert!(
        result.text().contains("requires a code runtime"),
        "{}",
        result.text()
    );
}

/// 42: the call card, and a blank description.
#[tokio::test(flavor = "current_thread")]
async fn b42_call_card_and_blank_description() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async { completed(None, &[]) }),
        vec![],
    );
    let definition = h.registry.get(RUN_CODE, Some(&h.agent)).unwrap();
    let card = definition
        .present_call(&json!({"code": "return 1;", "description": "Count TODO comments per file"}))
        .unwrap();
    assert_eq!(
        card.to_json(),
        json!({
            "card": "generic",
            "title": "Count TODO comments per file",
            "kind": "execute",
            "rawInput": "return 1;"
        })
    );
    // No result presenter: the generic fallback renders the durable content.
    let raw = tools_presentation::RawResult::text("x");
    assert!(definition.present_result(&json!({}), &raw).is_none());

    let result = h
        .execute(outer_call("return 1;", "   ").with_agent(h.agent.clone()))
        .await;
    assert!(result.is_error());
    assert!(
        result.text().contains("invalid description"),
        "{}",
        result.text()
    );
    assert_eq!(h.runtime.runs(), 0);
}

/// 43: rendering of the canonical value.
#[tokio::test(flavor = "current_thread")]
async fn b43_rendering_of_the_canonical_value() {
    let cases: Vec<(Option<Value>, Vec<&str>, &str)> = vec![
        (None, vec!["a", "b"], "a\nb"),
        (Some(json!("raw text")), vec![], "raw text"),
        (Some(json!("r")), vec!["l"], "l\nr"),
        (None, vec![], NO_OUTPUT),
        (
            Some(json!({"a": [1, {}], "b": {}, "c": []})),
            vec![],
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {},\n  \"c\": []\n}",
        ),
        (Some(json!([])), vec![], "[]"),
        (Some(Value::Null), vec![], "null"),
        (Some(json!(42)), vec!["n"], "n\n42"),
    ];
    for (value, logs, expected) in cases {
        let script_value = value.clone();
        let script_logs: Vec<String> = logs.iter().map(|l| (*l).to_owned()).collect();
        let h = harness(
            scripted(move |_request: CodeRunRequest| {
                let (value, logs) = (script_value.clone(), script_logs.clone());
                async move {
                    Ok(CodeRunResult {
                        value: value.map(|v| JsonValue::new(v).unwrap()),
                        logs,
                        error: None,
                    })
                }
            }),
            vec![],
        );
        let result = h.run().await;
        assert_eq!(result.content(), [ContentBlock::text(expected)]);
        let mut canonical = json!({ "logs": logs });
        if let Some(value) = value {
            canonical["result"] = value;
        }
        assert_eq!(value_of(&result), canonical);
        assert_eq!(render_run_code_output(&canonical), expected);
    }
}

/// 49: an outer call cancelled before dispatch never reaches the runtime.
#[tokio::test(flavor = "current_thread")]
async fn b49_pre_aborted_outer_call() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async { completed(Some(json!(1)), &[]) }),
        vec![],
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = h.execute(h.outer().with_cancellation(cancel)).await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::AbortedBeforeDispatch));
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(h.runtime.runs(), 0);
}

/// 50: the outer call is cancelled mid-run, then the program calls a tool: the binding
/// rejects without dispatching, and the outer result is `ABORTED`.
#[tokio::test(flavor = "current_thread")]
async fn b50_a_binding_call_after_the_outer_abort_is_not_dispatched() {
    let seen = Log::default();
    let outer_cancel = CancellationToken::new();
    let rejection = Log::default();
    let (c, r) = (outer_cancel.clone(), rejection.clone());
    let runtime = scripted(move |request: CodeRunRequest| {
        let (outer_cancel, rejection) = (c.clone(), r.clone());
        async move {
            outer_cancel.cancel();
            request.cancel.cancelled().await;
            let answer = call(&request.host, "echo", json!({"text": "late"})).await;
            rejection.push(answer.unwrap_err());
            completed(Some(json!("finished anyway")), &[])
        }
    });
    let h = harness(runtime, vec![echo(&seen)]);
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert!(result.is_error());
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted));
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_eq!(
        rejection.entries(),
        ["run_code run is over (tool call aborted); echo not dispatched"]
    );
    assert!(seen.entries().is_empty());
    assert!(h.sink.events().is_empty());
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

/// 50, abort is final: a tool body cancels the outer call's token; the program's next
/// binding call is rejected without being prepared or dispatched (its body never runs, no
/// event), and the outer result is `ABORTED`. Deterministic: nothing waits for the
/// cancellation to travel.
#[tokio::test(flavor = "current_thread")]
async fn b50_the_call_after_a_body_cancelled_the_outer_call_never_runs() {
    let outer_cancel = CancellationToken::new();
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "cancel_outer", json!({})).await;
            answers.push(format!("{first:?}"));
            // Made at once, without waiting for the run token: the abort is already final.
            let next = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{next:?}"));
            completed(Some(json!("finished anyway")), &[])
        }
    });
    let h = harness(runtime, abort_tools(&outer_cancel, &bodies));
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted), "{result:?}");
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_eq!(bodies.load(Ordering::SeqCst), 0);
    assert_eq!(
        answers.entries(),
        [
            // The body finished after its own token was cancelled: `ABORTED`.
            r#"Err("tool call aborted")"#,
            r#"Err("run_code run is over (tool call aborted); counted not dispatched")"#
        ]
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// 50, queued: a call submitted before the abort and still queued behind the cancelling
/// call is abandoned, never prepared or dispatched.
#[tokio::test(flavor = "current_thread")]
async fn b50_a_call_queued_behind_the_abort_is_abandoned() {
    let outer_cancel = CancellationToken::new();
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "cancel_outer", json!({}));
            let queued = call(&request.host, "counted", json!({}));
            let (first, queued) = tokio::join!(first, queued);
            answers.push(format!("{first:?}"));
            answers.push(format!("{queued:?}"));
            completed(None, &[])
        }
    });
    let h = harness(runtime, abort_tools(&outer_cancel, &bodies));
    let prepared = Log::default();
    let p = prepared.clone();
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let p = p.clone();
        async move {
            p.push(request.execution().call_id().to_owned());
            None
        }
    });
    let result = h
        .execute(h.outer().with_cancellation(outer_cancel.clone()))
        .await;
    assert_eq!(result.error_code(), Some(ErrorCode::Aborted), "{result:?}");
    assert_eq!(bodies.load(Ordering::SeqCst), 0);
    assert_eq!(prepared.entries(), ["call-1:code:1"]);
    assert_eq!(
        answers.entries()[1],
        r#"Err("run_code run is over (tool call aborted); counted tool call abandoned")"#
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// The run-scoped token (the one the runtime is handed) cancelled by the runtime itself:
/// the next binding call is rejected without being prepared or dispatched.
#[tokio::test(flavor = "current_thread")]
async fn a_binding_call_after_the_run_token_is_cancelled_never_runs() {
    let bodies = Arc::new(AtomicUsize::new(0));
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            let first = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{first:?}"));
            request.cancel.cancel();
            let next = call(&request.host, "counted", json!({})).await;
            answers.push(format!("{next:?}"));
            failed(FailureKind::Abort, "run aborted", &[])
        }
    });
    let h = harness(runtime, abort_tools(&CancellationToken::new(), &bodies));
    let result = h.run().await;
    assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
    assert_eq!(bodies.load(Ordering::SeqCst), 1);
    assert_eq!(
        answers.entries(),
        [
            r#"Ok(String("counted"))"#,
            r#"Err("run_code run is over (tool call aborted); counted not dispatched")"#
        ]
    );
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
}

/// A6.5: a binding whose commit landed before the run ended, but which the program reads
/// only afterwards, rejects with `result discarded`.
#[tokio::test(flavor = "current_thread")]
async fn a6_5_a_result_read_after_the_run_is_discarded() {
    let committed = Arc::new(Notify::new());
    let unread: Arc<Mutex<Option<tools_codemode::BindingFuture>>> = Arc::new(Mutex::new(None));
    let (c, slot) = (Arc::clone(&committed), Arc::clone(&unread));
    let runtime = scripted(move |request: CodeRunRequest| {
        let (committed, slot) = (Arc::clone(&c), Arc::clone(&slot));
        async move {
            let pending = request.host.call(
                "tools",
                "echo",
                JsonValue::new(json!({"text": "x"})).unwrap(),
            );
            // Settled and committed, but not read before the program returns.
            committed.notified().await;
            *slot.lock().unwrap() = Some(pending);
            completed(None, &[])
        }
    });
    let h = harness(runtime, vec![echo(&Log::default())]);
    let c = Arc::clone(&committed);
    h.pipeline
        .on_result(move |exec, _result| {
            if exec.call_id() == "call-1:code:1" {
                c.notify_one();
            }
        })
        .keep();
    let result = h.run().await;
    assert_eq!(result.text(), NO_OUTPUT);
    assert_eq!(h.sink.settles().len(), 1);
    assert!(!h.sink.settles()[0].is_error);
    let pending = unread.lock().unwrap().take().unwrap();
    assert_eq!(
        tokio::time::timeout(HANG_GUARD, pending).await.unwrap(),
        Err("run_code run is over (run_code settled); echo result discarded".to_owned())
    );
}

/// A tool rendering a 300-character text and a reasoning block.
fn verbose() -> ToolDefinition {
    ToolDefinition::builder("verbose", "talks a lot")
        .output(OutputDecl::new(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            |_args, _value| {
                Ok(vec![
                    ContentBlock::text("x".repeat(300)),
                    ContentBlock::reasoning("thinking it over"),
                ])
            },
        ))
        .body(|_args, _ctx| async { Ok(json!({"n": 300})) })
        .build()
        .unwrap()
}

/// 31, 45: the settle event carries the full rendered content (all block types, long text
/// untruncated) while the program gets the structured value; a log rewrite reshapes it,
/// and a failing rewrite keeps the original.
#[tokio::test(flavor = "current_thread")]
async fn b31_b45_settle_content_and_the_log_rewrite() {
    let program = |request: CodeRunRequest| async move {
        let answer = call(&request.host, "verbose", json!({})).await;
        completed(Some(outcome(answer)), &[])
    };
    let original = vec![
        ContentBlock::text("x".repeat(300)),
        ContentBlock::reasoning("thinking it over"),
    ];

    let h = harness(scripted(program), vec![verbose()]);
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"n": 300}));
    assert_eq!(h.sink.settles()[0].content, original);

    let h = harness_with(scripted(program), vec![verbose()], |config| {
        config.with_log_rewrite(Arc::new(|event: &DispatchSettled| {
            Ok(vec![ContentBlock::text(format!(
                "[{} blocks spilled for {}]",
                event.content.len(),
                event.sub_call_id
            ))])
        }))
    });
    let result = h.run().await;
    assert_eq!(value_of(&result)["result"], json!({"n": 300}));
    assert_eq!(
        h.sink.settles()[0].content,
        [ContentBlock::text("[2 blocks spilled for call-1:code:1]")]
    );

    let h = harness_with(scripted(program), vec![verbose()], |config| {
        config.with_log_rewrite(Arc::new(|_event: &DispatchSettled| {
            Err("spill store unavailable".to_owned())
        }))
    });
    h.run().await;
    assert_eq!(h.sink.settles()[0].content, original);
}

/// 44: a post-execute hook on `run_code` itself replaces the outer content.
#[tokio::test(flavor = "current_thread")]
async fn b44_post_execute_replaces_the_outer_content() {
    let h = harness(
        scripted(|_request: CodeRunRequest| async {
            completed(Some(json!("a very long output")), &["and logs"])
        }),
        vec![],
    );
    h.pipeline
        .on_post_execute(from_fn(|request: PostRequest, next: PostNext| async move {
            if request.execution().name().as_str() == RUN_CODE {
                return Ok(PostDecision::accept_content(vec![ContentBlock::text(
                    "[output spilled: preview]",
                )]));
            }
            next.run(request).await
        }))
        .keep();
    let result = h.run().await;
    assert_eq!(result.text(), "[output spilled: preview]");
    assert_eq!(
        value_of(&result),
        json!({"logs": ["and logs"], "result": "a very long output"})
    );
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

// One depth limit (`MAX_JSON_DEPTH`, the pipeline's 512) on every side: program result,
// sub-call arguments, tool outputs. Values are built with a raised boundary limit, as a
// runtime configured past the default would hand them over.

/// A `JsonValue` admitted whatever its depth.
fn deep_json(value: Value) -> JsonValue {
    JsonValue::with_limits(value, &tools_json::Limits::default().with_max_depth(10_000)).unwrap()
}

/// `{"value": [[…"leaf"…]]}` nesting exactly `depth` containers (the object included).
fn args_of_depth(depth: usize) -> JsonValue {
    // Not `json!`: it serialises embedded values recursively.
    deep_json(Value::Object(
        [("value".to_owned(), nested(depth - 1))]
            .into_iter()
            .collect(),
    ))
}

/// 46, under the one limit: arguments nesting 511 and 512 levels cross intact to the tool
/// and into the start and settle events; 513 and 600 are refused in the host, named, before
/// numbering: nothing is prepared, dispatched or logged.
#[tokio::test(flavor = "current_thread")]
async fn b46_arguments_cross_up_to_the_depth_limit() {
    assert_eq!(MAX_JSON_DEPTH, 512);
    let seen = Log::default();
    let s = seen.clone();
    let deep = tool("deep", false, move |args, ctx| {
        let (depth, leaf) = depth_and_leaf(&args["value"]);
        s.push(format!("{} {} {leaf}", ctx.call().call_id, depth + 1));
        async { Ok(Value::String("ok".into())) }
    });
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            for depth in [511, 512, 513, 600] {
                let answer = request
                    .host
                    .call("tools", "deep", args_of_depth(depth))
                    .await;
                answers.push(format!("{depth}: {:?}", answer.map(|v| v.to_string())));
            }
            completed(None, &[])
        }
    });
    let h = harness(runtime, vec![deep]);
    let result = h.run().await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        answers.entries(),
        [
            r#"511: Ok("\"ok\"")"#,
            r#"512: Ok("\"ok\"")"#,
            r#"513: Err("arguments of tools.deep nest deeper than the depth limit of 512")"#,
            r#"600: Err("arguments of tools.deep nest deeper than the depth limit of 512")"#,
        ]
    );
    assert_eq!(
        seen.entries(),
        [r#"call-1:code:1 511 "leaf""#, r#"call-1:code:2 512 "leaf""#]
    );
    assert_eq!(
        h.sink.summary(),
        [
            "started call-1:code:1",
            "settled call-1:code:1",
            "started call-1:code:2",
            "settled call-1:code:2"
        ]
    );
    let settles = h.sink.settles();
    assert_eq!(
        depth_and_leaf(&settles[1].arguments["value"]),
        (511, json!("leaf"))
    );
}

/// A tool returning `[[…"leaf"…]]` of `args.depth` containers (`nested`); its
/// output schema accepts any value; `max_depth` raises its own output limit.
fn deep_output_tool(name: &str, max_depth: Option<usize>) -> ToolDefinition {
    let output = OutputDecl::text(json!({}));
    let output = match max_depth {
        Some(depth) => output.with_max_depth(depth),
        None => output,
    };
    ToolDefinition::builder(name, "returns a deep value")
        .parameters(json!({"type": "object", "properties": {"depth": {"type": "integer"}}}))
        .output(output)
        .body(|args: JsonValue, _ctx: RunContext| {
            let depth = args["depth"].as_u64().unwrap_or(0);
            async move { Ok(nested(usize::try_from(depth).unwrap())) }
        })
        .build()
        .unwrap()
}

/// Tool outputs under the one limit: 511 and 512 levels resolve the binding intact; 513
/// and 600 are refused by the pipeline (`INVALID_TOOL_OUTPUT`, naming the tool and the
/// limit), and by the bridge for a tool that raised its own output limit.
#[tokio::test(flavor = "current_thread")]
async fn tool_outputs_cross_up_to_the_depth_limit() {
    let answers = Log::default();
    let a = answers.clone();
    let runtime = scripted(move |request: CodeRunRequest| {
        let answers = a.clone();
        async move {
            for name in ["deep_out", "deep_raised"] {
                for depth in [511, 512, 513, 600] {
                    let answer = call(&request.host, name, json!({ "depth": depth })).await;
                    answers.push(match answer {
                        Ok(value) => format!("{name} {depth}: ok {:?}", depth_and_leaf(&value)),
                        Err(message) => format!("{name} {depth}: {message}"),
                    });
                }
            }
            completed(None, &[])
        }
    });
    let h = harness(
        runtime,
        vec![
            deep_output_tool("deep_out", None),
            deep_output_tool("deep_raised", Some(1_000)),
        ],
    );
    let result = h.run().await;
    assert!(!result.is_error(), "{result:?}");
    let answers = answers.entries();
    assert_eq!(answers[0], r#"deep_out 511: ok (511, String("leaf"))"#);
    assert_eq!(answers[1], r#"deep_out 512: ok (512, String("leaf"))"#);
    for (i, depth) in [(2, 513), (3, 600)] {
        let prefix = format!("deep_out {depth}: tool \"deep_out\" returned invalid output: ");
        assert!(answers[i].starts_with(&prefix), "{}", &answers[i][..80]);
        assert!(
            answers[i].ends_with("nesting exceeds the depth limit of 512)"),
            "{}",
            answers[i]
        );
    }
    assert_eq!(
        answers[4..],
        [
            r#"deep_raised 511: ok (511, String("leaf"))"#,
            r#"deep_raised 512: ok (512, String("leaf"))"#,
            "deep_raised 513: output of tool deep_raised nests deeper than the depth limit of 512",
            "deep_raised 600: output of tool deep_raised nests deeper than the depth limit of 512",
        ]
    );
    // Every call ran and was committed; the refused ones settle as errors.
    let settles = h.sink.settles();
    assert_eq!(settles.len(), 8);
    let errors: Vec<bool> = settles.iter().map(|s| s.is_error).collect();
    assert_eq!(
        errors,
        [false, false, true, true, false, false, false, false],
        "the bridge's refusal of a raised output happens after the commit"
    );
}

/// 48 under the one limit: a program result nesting 511 or 512 levels is `run_code`'s
/// result (its `{logs, result}` one level deeper), rendered compactly past the indentation
/// cap; 513 and 600 fail the run, named, instead of an `INVALID_TOOL_OUTPUT` blamed on
/// `run_code`.
#[tokio::test(flavor = "current_thread")]
async fn b48_program_results_cross_up_to_the_depth_limit() {
    for depth in [511, 512, 513, 600] {
        let runtime = scripted(move |_request: CodeRunRequest| async move {
            Ok(CodeRunResult {
                value: Some(deep_json(nested(depth))),
                logs: vec!["built it".to_owned()],
                error: None,
            })
        });
        let h = harness(runtime, vec![]);
        let result = h.run().await;
        if depth <= 512 {
            assert!(!result.is_error(), "{depth}: {result:?}");
            let value = result.value().unwrap();
            assert_eq!(value.depth(), depth + 1);
            assert_eq!(depth_and_leaf(&value["result"]), (depth, json!("leaf")));
            assert!(result.text().starts_with("built it\n[\n  [\n    ["));
        } else {
            assert_eq!(
                result.error_code(),
                Some(ErrorCode::CodeRunFailed),
                "{depth}"
            );
            assert_eq!(
                result.text(),
                "Error: code run failed (invalid-output): program result nesting exceeds the \
                 depth limit of 512\nCaptured output:\nbuilt it"
            );
        }
    }
}

fn assert_deep_rendering(text: &str) {
    assert!(
        text.starts_with("[\n  [\n    ["),
        "{}",
        &text[..text.len().min(80)]
    );
    assert!(text.ends_with(']'));
    assert!(text.len() < 11_000, "{}", text.len());
}

/// 48 (the rendering): a 5 000-deep value renders compactly past the indentation cap,
/// without overflowing. Through `run_code` a result is held to the depth limit (512, see
/// `b48_program_results_cross_up_to_the_depth_limit`); the render itself is total.
#[test]
fn b48_a_deep_result_renders() {
    let mut canonical = serde_json::Map::new();
    canonical.insert("logs".to_owned(), json!([]));
    canonical.insert("result".to_owned(), nested(5_000));
    assert_deep_rendering(&render_run_code_output(&Value::Object(canonical)));
}

// ---------------------------------------------------------------------------------------
// End to end on QuickJS.
// ---------------------------------------------------------------------------------------

#[cfg(feature = "quickjs")]
mod quickjs {
    use super::*;
    use tools_codemode::{QuickJsRuntime, RuntimeLimits};

    fn quickjs_harness(tools: Vec<ToolDefinition>) -> Harness {
        quickjs_harness_with(tools, RuntimeLimits::default())
    }

    fn quickjs_harness_with(tools: Vec<ToolDefinition>, limits: RuntimeLimits) -> Harness {
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
        let runtime = QuickJsRuntime::new(limits).unwrap();
        install(
            &pipeline,
            &CodeModeConfig::new()
                .with_runtime(Arc::new(runtime))
                .with_sink(Arc::clone(&sink) as Arc<dyn DispatchSink>),
        )
        .unwrap();
        let agent = registry.scope();
        Harness {
            registry,
            pipeline,
            agent,
            // Unused by these tests: the program runs on QuickJS.
            runtime: scripted(|_request: CodeRunRequest| async { completed(None, &[]) }),
            sink,
            timeline,
            executions: Arc::new(Mutex::new(Vec::new())),
        }
    }

    async fn run_program(h: &Harness, code: &str) -> ToolResult {
        h.execute(outer_call(code, "Run a TypeScript program").with_agent(h.agent.clone()))
            .await
    }

    /// `deep_args`: the depth of its `value` argument plus one (the arguments object).
    fn deep_args() -> ToolDefinition {
        tool("deep_args", false, |args, _ctx| {
            let (depth, _) = depth_and_leaf(&args["value"]);
            async move { Ok(Value::String(format!("args depth {}", depth + 1))) }
        })
    }

    /// A program sending arguments of `args` levels, then returning `result` levels.
    fn depth_program(args: usize, result: usize) -> String {
        format!(
            r#"
            const nest = (n) => {{ let v = "leaf"; for (let i = 0; i < n; i++) v = [v]; return v; }};
            try {{ console.log(await tools.deep_args({{ value: nest({}) }})); }}
            catch (e) {{ console.log(`refused: ${{e.message}}`); }}
            return nest({result});
            "#,
            args - 1
        )
    }

    /// The one limit end to end, with the runtime at its default (512, the pipeline's):
    /// 512 levels cross on both sides; 513 is refused inside the sandbox.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_the_depth_limit_at_the_default() {
        let h = quickjs_harness(vec![deep_args()]);
        let result = run_program(&h, &depth_program(512, 512)).await;
        assert!(!result.is_error(), "{result:?}");
        assert_eq!(result.value().unwrap().depth(), 513);
        assert_eq!(value_of(&result)["logs"], json!(["args depth 512"]));

        let result = run_program(&h, &depth_program(513, 513)).await;
        assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
        let text = result.text();
        assert!(
            text.starts_with("Error: code run failed (invalid-output): "),
            "{text}"
        );
        assert!(
            text.contains("refused: binding arguments must be lossless JSON: ")
                && text.contains("nesting exceeds the depth limit of 512"),
            "{text}"
        );
    }

    /// A runtime configured past the default lets 600 levels through; the bridge holds
    /// them to the one limit and names the side.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_the_bridge_holds_a_raised_runtime_to_the_depth_limit() {
        let limits = RuntimeLimits {
            max_json_depth: 10_000,
            ..RuntimeLimits::default()
        };
        let h = quickjs_harness_with(vec![deep_args()], limits);
        let result = run_program(&h, &depth_program(600, 600)).await;
        assert_eq!(result.error_code(), Some(ErrorCode::CodeRunFailed));
        assert_eq!(
            result.text(),
            "Error: code run failed (invalid-output): program result nesting exceeds the depth \
             limit of 512\nCaptured output:\nrefused: arguments of tools.deep_args nest deeper \
             than the depth limit of 512"
        );
        let result = run_program(&h, &depth_program(512, 512)).await;
        assert!(!result.is_error(), "{result:?}");
        assert_eq!(value_of(&result)["logs"], json!(["args depth 512"]));
    }

    /// 50 on QuickJS, whose program runs on its own thread: once a body cancelled the
    /// outer call, the program's next binding call never reaches its body. (A regression
    /// guard only: the engine thread is rarely fast enough to have shown the old lag; the
    /// deterministic proofs are the scripted `b50_*` tests.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_b50_abort_is_final() {
        let outer_cancel = CancellationToken::new();
        let bodies = Arc::new(AtomicUsize::new(0));
        let h = quickjs_harness(abort_tools(&outer_cancel, &bodies));
        let program = r#"
            try { await tools.cancel_outer({}); } catch (e) { console.log(`first: ${e.message}`); }
            try { await tools.counted({}); } catch (e) { console.log(`next: ${e.message}`); }
            return "finished";
            "#;
        let call = outer_call(program, "Cancel, then call again")
            .with_agent(h.agent.clone())
            .with_cancellation(outer_cancel.clone());
        let result = h.execute(call).await;
        assert!(result.is_error(), "{result:?}");
        // The run either completes (the success becomes `ABORTED`) or sees its token first
        // and fails as `abort`: both are the abort; the second body never runs either way.
        assert!(
            matches!(
                result.error_code(),
                Some(ErrorCode::Aborted | ErrorCode::CodeRunFailed)
            ),
            "{result:?}"
        );
        assert_eq!(bodies.load(Ordering::SeqCst), 0);
        assert_eq!(
            h.sink.summary(),
            ["started call-1:code:1", "settled call-1:code:1"]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_a_typescript_program_calls_echo_twice() {
        let seen = Log::default();
        let h = quickjs_harness(vec![echo(&seen)]);
        let result = run_program(
            &h,
            r#"
            const first: string = await tools.echo({ text: "one" });
            console.log(`saw ${first}`);
            return await tools.echo({ text: "two" });
            "#,
        )
        .await;
        assert!(!result.is_error(), "{result:?}");
        assert_eq!(result.text(), "saw echo:one\necho:two");
        assert_eq!(
            value_of(&result),
            json!({"logs": ["saw echo:one"], "result": "echo:two"})
        );
        assert_eq!(
            seen.entries(),
            [
                r#"call-1:code:1 root=call-1 args={"text":"one"}"#,
                r#"call-1:code:2 root=call-1 args={"text":"two"}"#
            ]
        );
        assert_eq!(h.sink.settles().len(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_promise_all_overlaps_safe_calls() {
        let gauge = Arc::new(Gauge::default());
        let barrier = Arc::new(Barrier::new(3));
        let (g, b) = (Arc::clone(&gauge), Arc::clone(&barrier));
        let safe_read = tool("safe_read", true, move |args, _ctx| {
            let (gauge, barrier) = (Arc::clone(&g), Arc::clone(&b));
            async move {
                gauge.enter();
                barrier.wait().await;
                gauge.exit();
                Ok(Value::String(format!(
                    "safe_read:{}",
                    text_arg(&args, "key")
                )))
            }
        });
        let h = quickjs_harness(vec![safe_read]);
        let result = run_program(
            &h,
            r#"
            const keys: string[] = ["a", "b", "c"];
            const values = await Promise.all(keys.map((key) => tools.safe_read({ key })));
            return values.join(",");
            "#,
        )
        .await;
        assert_eq!(result.text(), "safe_read:a,safe_read:b,safe_read:c");
        assert_eq!(gauge.peak(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn qjs_a_failed_call_is_a_typed_tool_call_error() {
        let broken = tool("broken", false, |_args, _ctx| async {
            Err(ToolError::new("deliberate failure"))
        });
        let h = quickjs_harness(vec![broken]);
        let result = run_program(
            &h,
            r#"
            try {
              await tools.broken({});
              return "not reached";
            } catch (e) {
              if (!(e instanceof ToolCallError)) throw e;
              return { name: e.name, toolName: e.toolName, message: e.message };
            }
            "#,
        )
        .await;
        assert_eq!(
            value_of(&result)["result"],
            json!({"name": "ToolCallError", "toolName": "broken", "message": "deliberate failure"})
        );
        assert_eq!(
            result.text(),
            "{\n  \"name\": \"ToolCallError\",\n  \"toolName\": \"broken\",\n  \"message\": \"deliberate failure\"\n}"
        );
        let settled = h.sink.settles();
        assert_eq!(settled.len(), 1);
        assert!(settled[0].is_error);
    }
}
