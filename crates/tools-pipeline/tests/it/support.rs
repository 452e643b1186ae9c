//! Fixtures shared by the pipeline tests.

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_pipeline::{
    DispatchNext, DispatchRequest, Hook, Pipeline, PostDecision, PostNext, PostRequest,
    PreDecision, PreNext, PreRequest, ToolCall, ToolError, ToolResult, from_fn,
};
use tools_registry::{AgentScope, OutputDecl, Registry, ToolDefinition, define_tool};
use tools_schema::ToolArgs;

/// A registry with `echo` and a pipeline over it, with the invariant checker installed
/// (it fails the test when the last handle is dropped, at the test's end, with a violation).
pub(crate) fn setup() -> (Registry, Checked) {
    let registry = Registry::new();
    registry.register(echo()).unwrap().keep();
    (registry.clone(), checked(registry))
}

/// A pipeline over `registry` with the invariant checker installed.
pub(crate) fn checked(registry: Registry) -> Checked {
    let pipeline = Pipeline::new(registry);
    let checker = tools_pipeline::testing::InvariantChecker::install(&pipeline);
    Checked { pipeline, checker }
}

/// A pipeline with its invariant checker: derefs to the pipeline; the check runs when the
/// last clone is dropped, which is when the test that holds it ends.
#[derive(Clone)]
pub(crate) struct Checked {
    pipeline: Pipeline,
    #[allow(dead_code)] // held for its drop
    checker: tools_pipeline::testing::InvariantChecker,
}

impl std::ops::Deref for Checked {
    type Target = Pipeline;

    fn deref(&self) -> &Pipeline {
        &self.pipeline
    }
}

#[derive(Deserialize, ToolArgs)]
pub(crate) struct EchoArgs {
    pub(crate) text: Option<String>,
}

/// The catalogue's typed `echo`: `{text?: string}` → string.
pub(crate) fn echo() -> ToolDefinition {
    define_tool::<EchoArgs, String>("echo", "echo arguments back")
        .body(|args: EchoArgs, _ctx| async move { Ok(args.text.unwrap_or_default()) })
        .build()
        .unwrap()
}

/// The catalogue's raw `t(name)`: returns `ran:<name>`.
pub(crate) fn t(name: &str) -> ToolDefinition {
    t_builder(name).build().unwrap()
}

/// The builder of `t(name)`, for a variant of it.
pub(crate) fn t_builder(name: &str) -> tools_registry::DefinitionBuilder {
    let reply = format!("ran:{name}");
    ToolDefinition::builder(name, "test tool")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_a, _c| {
            let reply = reply.clone();
            async move { Ok(Value::String(reply)) }
        })
}

/// A raw string tool whose body is `body`.
pub(crate) fn tool_with<F, Fut>(name: &str, body: F) -> ToolDefinition
where
    F: Fn(tools_json::JsonValue, tools_registry::RunContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, tools_registry::ToolError>> + Send + 'static,
{
    ToolDefinition::builder(name, "test tool")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(body)
        .build()
        .unwrap()
}

pub(crate) fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("c1", name, args).unwrap()
}

pub(crate) fn call_as(name: &str, args: Value, agent: &AgentScope) -> ToolCall {
    call(name, args).with_agent(agent.clone())
}

pub(crate) fn call_cancellable(name: &str, args: Value, cancel: &CancellationToken) -> ToolCall {
    call(name, args).with_cancellation(cancel.clone())
}

/// A shared log of strings.
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.lock().unwrap().push(entry.into());
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A pre-execute hook from a closure over the request (no access to `next`): `None` means
/// "delegate".
pub(crate) fn pre_hook<F>(f: F) -> impl Hook<PreRequest>
where
    F: Fn(&PreRequest) -> Option<Result<PreDecision, ToolError>> + Send + Sync + 'static,
{
    from_fn(move |request: PreRequest, next: PreNext| {
        let decided = f(&request);
        async move {
            match decided {
                Some(decision) => decision,
                None => next.run(request).await,
            }
        }
    })
}

/// A post-execute hook deciding from the result alone.
pub(crate) fn post_hook<F>(f: F) -> impl Hook<PostRequest>
where
    F: Fn(&PostRequest) -> Result<PostDecision, ToolError> + Send + Sync + 'static,
{
    from_fn(move |request: PostRequest, _next: PostNext| {
        let decided = f(&request);
        async move { decided }
    })
}

/// An around-dispatch hook that returns `result` without calling `next`.
pub(crate) fn short_circuit(result: ToolResult) -> impl Hook<DispatchRequest> {
    from_fn(move |_request: DispatchRequest, _next: DispatchNext| {
        let result = result.clone();
        async move { Ok(result) }
    })
}
