//! `ToolRuntime`: the registry and the pipeline behind one handle.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Instant;

use tools_pipeline::{
    Approval, DispatchService, HookOptions, Hooked, Pipeline, PostService, PreService, ToolCall,
    ToolResult,
};
use tools_registry::{
    AgentScope, ExecutionMode, Guard, PresentationMode, Registration, Registry, ToolDefinition,
    ToolFilter, ToolSchema,
};
use tower::{BoxError, Layer, Service};
use tracing::Instrument;

use crate::batch::BatchApproval;
use crate::{Error, TimeoutPolicyLayer};

/// How a [`ToolRuntime`] is set up.
#[derive(Clone)]
pub struct RuntimeConfig {
    pub(crate) mode: PresentationMode,
    pub(crate) max_parallel_tool_calls: NonZeroUsize,
    pub(crate) max_parallel_sub_calls: NonZeroUsize,
    pub(crate) timeout_policy: bool,
    pub(crate) approval: Option<Arc<dyn Approval>>,
    pub(crate) batch_approval: Option<Arc<dyn BatchApproval>>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            mode: PresentationMode::Native,
            max_parallel_tool_calls: NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN),
            max_parallel_sub_calls: NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN),
            timeout_policy: true,
            approval: None,
            batch_approval: None,
        }
    }
}

impl RuntimeConfig {
    /// The presentation mode of scopes that declare none.
    pub fn mode(&self) -> PresentationMode {
        self.mode
    }

    /// The cap on overlapping bodies of one batch.
    pub fn max_parallel_tool_calls(&self) -> usize {
        self.max_parallel_tool_calls.get()
    }

    /// The cap on overlapping bodies of one Code Mode program.
    pub fn max_parallel_sub_calls(&self) -> usize {
        self.max_parallel_sub_calls.get()
    }

    /// Whether the timeout policy is installed.
    pub fn timeout_policy(&self) -> bool {
        self.timeout_policy
    }
}

impl fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("mode", &self.mode)
            .field("max_parallel_tool_calls", &self.max_parallel_tool_calls)
            .field("max_parallel_sub_calls", &self.max_parallel_sub_calls)
            .field("timeout_policy", &self.timeout_policy)
            .field("approval", &self.approval.is_some())
            .field("batch_approval", &self.batch_approval.is_some())
            .finish()
    }
}

/// Builds a [`ToolRuntime`].
#[derive(Debug, Default)]
#[must_use]
pub struct RuntimeBuilder {
    config: RuntimeConfig,
    error: Option<Error>,
}

impl RuntimeBuilder {
    /// The presentation mode of scopes that declare none (default `native`).
    pub fn mode(mut self, mode: PresentationMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// How many sibling calls of one batch may run their bodies at once (default 10; 1 is
    /// serial).
    pub fn max_parallel_tool_calls(mut self, cap: usize) -> Self {
        match NonZeroUsize::new(cap) {
            Some(cap) => self.config.max_parallel_tool_calls = cap,
            None => {
                self.error = Some(Error::InvalidCap {
                    name: "max_parallel_tool_calls",
                });
            }
        }
        self
    }

    /// How many Code Mode sub-calls of one program may run their bodies at once
    /// (default 10).
    pub fn max_parallel_sub_calls(mut self, cap: usize) -> Self {
        match NonZeroUsize::new(cap) {
            Some(cap) => self.config.max_parallel_sub_calls = cap,
            None => {
                self.error = Some(Error::InvalidCap {
                    name: "max_parallel_sub_calls",
                });
            }
        }
        self
    }

    /// Whether the timeout policy is installed (default yes).
    pub fn timeout_policy(mut self, on: bool) -> Self {
        self.config.timeout_policy = on;
        self
    }

    /// The service that answers `ask` decisions.
    pub fn approval(mut self, approval: impl Approval) -> Self {
        self.config.approval = Some(Arc::new(approval));
        self
    }

    /// Opt-in: in a batch, ask one question for every call whose pre-execute decision is
    /// `ask` (the pre-execute hooks of the whole batch then run before its first body).
    pub fn batch_approval(mut self, approval: impl BatchApproval) -> Self {
        self.config.batch_approval = Some(Arc::new(approval));
        self
    }

    /// The runtime.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCap`] for a zero cap.
    pub fn build(self) -> Result<ToolRuntime, Error> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(ToolRuntime::from_config(self.config)),
        }
    }
}

/// The tool runtime an agent host uses: register tools, show them to a model, and run every
/// model-issued call through the guarded pipeline, alone or as a batch of siblings.
///
/// Cheap to clone, `Send + Sync`. Every method delegates to the crate that owns the
/// behaviour (`tools-registry`, `tools-pipeline`); the runtime adds the batch scheduler, the
/// timeout policy (installed by default) and one `tracing` span per call.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_runtime::{ToolCall, ToolRuntime};
/// use tools_registry::{OutputDecl, ToolDefinition};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let runtime = ToolRuntime::new();
/// runtime
///     .register(
///         ToolDefinition::builder("echo", "Echo the text back.")
///             .output(OutputDecl::text(json!({"type": "string"})))
///             .body(|args, _ctx| async move { Ok(args.get("text").cloned().unwrap_or(json!(""))) })
///             .build()?,
///     )?
///     .keep();
/// let result = runtime.execute(ToolCall::new("c1", "echo", json!({"text": "hi"}))?).await;
/// assert_eq!(result.text(), "hi");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ToolRuntime {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) registry: Registry,
    pub(crate) pipeline: Pipeline,
    pub(crate) config: RuntimeConfig,
    _timeout: Option<Hooked>,
}

impl Default for ToolRuntime {
    fn default() -> Self {
        ToolRuntime::new()
    }
}

impl ToolRuntime {
    /// A runtime with the default configuration (native mode, caps of 10, the timeout
    /// policy, no approval service).
    pub fn new() -> ToolRuntime {
        ToolRuntime::from_config(RuntimeConfig::default())
    }

    fn from_config(config: RuntimeConfig) -> ToolRuntime {
        let registry = Registry::builder().default_mode(config.mode).build();
        let pipeline = Pipeline::new(registry.clone());
        pipeline.set_approval(config.approval.clone());
        let timeout = config
            .timeout_policy
            .then(|| pipeline.on_execute(TimeoutPolicyLayer::new(registry.clone())));
        ToolRuntime {
            inner: Arc::new(Inner {
                registry,
                pipeline,
                config,
                _timeout: timeout,
            }),
        }
    }

    /// A builder.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        &self.inner.pipeline
    }

    /// Registers a tool globally; see [`Registry::register`].
    ///
    /// # Errors
    ///
    /// As [`Registry::register`].
    pub fn register(
        &self,
        definition: ToolDefinition,
    ) -> Result<Registration, tools_registry::Error> {
        self.inner.registry.register(definition)
    }

    /// A new top-level agent scope.
    pub fn scope(&self) -> AgentScope {
        self.inner.registry.scope()
    }

    /// A new agent scope under `parent`.
    pub fn child_scope(&self, parent: &AgentScope) -> AgentScope {
        self.inner.registry.child_scope(parent)
    }

    /// Masks what `scope` inherits; see [`AgentScope::restrict`].
    ///
    /// # Errors
    ///
    /// As [`AgentScope::restrict`].
    pub fn restrict(
        &self,
        scope: &AgentScope,
        filter: ToolFilter,
    ) -> Result<Registration, tools_registry::Error> {
        scope.restrict(filter)
    }

    /// Declares `scope`'s presentation mode; see [`AgentScope::present_as`].
    ///
    /// # Errors
    ///
    /// As [`AgentScope::present_as`].
    pub fn present_as(
        &self,
        scope: &AgentScope,
        mode: PresentationMode,
    ) -> Result<Registration, tools_registry::Error> {
        scope.present_as(mode)
    }

    /// Adds a global guard.
    pub fn guard(&self, guard: impl Guard) -> Registration {
        self.inner.registry.guard(guard)
    }

    /// Adds a pre-execute layer; see [`Pipeline::on_pre_execute_with`].
    pub fn on_pre_execute<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<PreService> + Send + Sync + 'static,
        L::Service: Service<tools_pipeline::PreRequest, Response = tools_pipeline::PreDecision>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<tools_pipeline::PreRequest>>::Error: Into<BoxError>,
        <L::Service as Service<tools_pipeline::PreRequest>>::Future: Send + 'static,
    {
        self.inner.pipeline.on_pre_execute_with(options, layer)
    }

    /// Adds an around-dispatch layer (any tower middleware); see
    /// [`Pipeline::on_execute_with`].
    pub fn on_execute<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<DispatchService> + Send + Sync + 'static,
        L::Service: Service<tools_pipeline::DispatchRequest, Response = ToolResult>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<tools_pipeline::DispatchRequest>>::Error: Into<BoxError>,
        <L::Service as Service<tools_pipeline::DispatchRequest>>::Future: Send + 'static,
    {
        self.inner.pipeline.on_execute_with(options, layer)
    }

    /// Adds a post-execute layer; see [`Pipeline::on_post_execute_with`].
    pub fn on_post_execute<L>(&self, options: HookOptions, layer: L) -> Hooked
    where
        L: Layer<PostService> + Send + Sync + 'static,
        L::Service: Service<tools_pipeline::PostRequest, Response = tools_pipeline::PostDecision>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<tools_pipeline::PostRequest>>::Error: Into<BoxError>,
        <L::Service as Service<tools_pipeline::PostRequest>>::Future: Send + 'static,
    {
        self.inner.pipeline.on_post_execute_with(options, layer)
    }

    /// Adds a result observer; see [`Pipeline::on_result_with`].
    pub fn on_result(
        &self,
        options: HookOptions,
        observer: impl Fn(&tools_pipeline::Execution, &ToolResult) + Send + Sync + 'static,
    ) -> Hooked {
        self.inner.pipeline.on_result_with(options, observer)
    }

    /// The model-facing tool schemas of `agent`.
    pub fn schemas(&self, agent: Option<&AgentScope>) -> Arc<[ToolSchema]> {
        self.inner.registry.schemas(agent)
    }

    /// Whether `call` may overlap with its siblings.
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        self.inner.pipeline.execution_mode(call)
    }

    /// Runs one call through the pipeline, inside a `tool_call` span (fields `tool`,
    /// `call_id`, `agent`, `outcome`, `duration_us`). Never fails.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; cancel through the call's token instead.
    pub async fn execute(&self, call: ToolCall) -> ToolResult {
        let span = call_span(&call);
        let started = Instant::now();
        let result = self
            .inner
            .pipeline
            .execute(call)
            .instrument(span.clone())
            .await;
        record_outcome(&span, &result, started);
        result
    }
}

impl fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("config", &self.inner.config)
            .field("registry", &self.inner.registry)
            .field("pipeline", &self.inner.pipeline)
            .finish()
    }
}

/// The span of one call.
pub(crate) fn call_span(call: &ToolCall) -> tracing::Span {
    let agent = call.agent().map(AgentScope::key);
    tracing::info_span!(
        "tool_call",
        tool = call.name(),
        call_id = call.call_id(),
        agent = ?agent,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    )
}

/// Records the outcome code (`OK` for a success) and the duration on a call's span.
pub(crate) fn record_outcome(span: &tracing::Span, result: &ToolResult, started: Instant) {
    let outcome = if result.is_error() {
        result.code().map_or("ERROR", tools_registry::Code::as_str)
    } else {
        "OK"
    };
    span.record("outcome", outcome);
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
}
