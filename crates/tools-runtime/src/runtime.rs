//! `ToolRuntime`: the registry and the pipeline behind one handle.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Instant;

use tools_pipeline::{
    Approval, ApprovalStore, DispatchRequest, Hook, HookOptions, Hooked, Pipeline, PostRequest,
    PreRequest, ToolCall, ToolResult,
};
use tools_registry::{
    AgentScope, Change, ExecutionMode, Guard, PresentationMode, Registration, Registry,
    ToolDefinition, ToolFilter, ToolSpec, View,
};
use tracing::Instrument;

use tools_codemode::{CodeModeConfig, CodeRuntime, DispatchSink};

use crate::Error;
use crate::approval::BatchApproval;
use crate::budget::{MemoryResultStore, OutputBudget, ResultStore};
use crate::span::{call_span, record_outcome};
use crate::timeout::TimeoutPolicy;

/// How a [`ToolRuntime`] is set up.
#[derive(Clone)]
pub struct RuntimeConfig {
    pub(crate) mode: PresentationMode,
    pub(crate) max_parallel_tool_calls: NonZeroUsize,
    pub(crate) max_parallel_sub_calls: NonZeroUsize,
    pub(crate) timeout_policy: bool,
    pub(crate) approval: Option<Arc<dyn Approval>>,
    pub(crate) approval_store: Option<Arc<dyn ApprovalStore>>,
    pub(crate) batch_approval: Option<Arc<dyn BatchApproval>>,
    pub(crate) code_runtime: Option<Arc<dyn CodeRuntime>>,
    pub(crate) dispatch_sink: Option<Arc<dyn DispatchSink>>,
    pub(crate) output_budget: Option<OutputBudget>,
    pub(crate) result_store: Option<Arc<dyn ResultStore>>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            mode: PresentationMode::Native,
            max_parallel_tool_calls: NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN),
            max_parallel_sub_calls: NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN),
            timeout_policy: true,
            approval: None,
            approval_store: None,
            batch_approval: None,
            code_runtime: None,
            dispatch_sink: None,
            output_budget: None,
            result_store: None,
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

    /// The code runtime `run_code` programs run on, if any.
    pub fn code_runtime(&self) -> Option<&Arc<dyn CodeRuntime>> {
        self.code_runtime.as_ref()
    }

    /// The Code Mode configuration this runtime installs.
    pub fn code_mode(&self) -> CodeModeConfig {
        let mut config =
            CodeModeConfig::new().with_max_parallel_sub_calls(self.max_parallel_sub_calls);
        if let Some(runtime) = &self.code_runtime {
            config = config.with_runtime(Arc::clone(runtime));
        }
        if let Some(sink) = &self.dispatch_sink {
            config = config.with_sink(Arc::clone(sink));
        }
        config
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
            .field("approval_store", &self.approval_store.is_some())
            .field("batch_approval", &self.batch_approval.is_some())
            .field(
                "code_runtime",
                &self.code_runtime.as_ref().map(|r| r.language().as_str()),
            )
            .field("dispatch_sink", &self.dispatch_sink.is_some())
            .field("output_budget", &self.output_budget)
            .finish()
    }
}

/// Builds a [`ToolRuntime`].
#[derive(Debug, Default)]
#[must_use]
pub struct RuntimeBuilder {
    config: RuntimeConfig,
    error: Option<Error>,
    pipeline: Option<Pipeline>,
}

impl RuntimeBuilder {
    /// The presentation mode of scopes that declare none (default `native`). With
    /// [`pipeline`](Self::pipeline), the mode is its registry's default mode instead.
    pub fn mode(mut self, mode: PresentationMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// Runs every call through `pipeline`, registering into its registry, instead of a
    /// fresh pipeline over a fresh registry: a host that also works on the registry or the
    /// pipeline directly (an MCP import, a shared registry, a test probe) keeps its own
    /// handles, and the runtime stays the one way in. The presentation mode of scopes that
    /// declare none is the registry's default mode ([`RegistryBuilder::default_mode`]).
    ///
    /// [`RegistryBuilder::default_mode`]: tools_registry::RegistryBuilder::default_mode
    pub fn pipeline(mut self, pipeline: Pipeline) -> Self {
        self.config.mode = pipeline.registry().default_mode();
        self.pipeline = Some(pipeline);
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

    /// Cuts what the model reads of a large output to `budget` (head, tail and a header);
    /// the full result stays in the result store and the built-in `read_result` tool
    /// (registered globally) reads it page by page. Off by default.
    pub fn output_budget(mut self, budget: OutputBudget) -> Self {
        self.config.output_budget = Some(budget);
        self
    }

    /// Where cut results are kept (default: a [`MemoryResultStore`] of 64 MiB).
    pub fn result_store(mut self, store: Arc<dyn ResultStore>) -> Self {
        self.config.result_store = Some(store);
        self
    }

    /// Where approvals "for the session" and "always" are remembered (default: a
    /// [`tools_pipeline::MemoryApprovalStore`]; a host persists "always" with its own).
    pub fn approval_store(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.config.approval_store = Some(store);
        self
    }

    /// Opt-in: in a batch, ask one question for every call whose pre-execute decision is
    /// `ask` (the pre-execute hooks of the whole batch then run before its first body).
    pub fn batch_approval(mut self, approval: impl BatchApproval) -> Self {
        self.config.batch_approval = Some(Arc::new(approval));
        self
    }

    /// The code runtime `run_code` programs run on; its language picks the `run_code`
    /// flavour and the SDK language. Required for a `code` or `both` mode.
    pub fn code_runtime(mut self, runtime: Arc<dyn CodeRuntime>) -> Self {
        self.config.code_runtime = Some(runtime);
        self
    }

    /// Where Code Mode sub-call events (`tool/code-dispatch-start`, `tool/code-dispatch`)
    /// go, for runs made by an agent.
    pub fn dispatch_sink(mut self, sink: Arc<dyn DispatchSink>) -> Self {
        self.config.dispatch_sink = Some(sink);
        self
    }

    /// The runtime.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCap`] for a zero cap; [`Error::CodeRuntimeRequired`] for a `code` or
    /// `both` default mode without a code runtime.
    pub fn build(self) -> Result<ToolRuntime, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if self.config.mode.offers_run_code() && self.config.code_runtime.is_none() {
            return Err(Error::CodeRuntimeRequired {
                mode: self.config.mode,
            });
        }
        ToolRuntime::try_from_config(self.config, self.pipeline)
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
/// use tools_runtime::{ToolCall, ToolDefinition, ToolRuntime, tools::OutputDecl};
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
    pub(crate) result_store: Arc<dyn ResultStore>,
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
        let config = RuntimeConfig::default();
        let registry = Registry::builder().default_mode(config.mode).build();
        ToolRuntime::assemble(Pipeline::new(registry), config)
    }

    fn try_from_config(
        mut config: RuntimeConfig,
        pipeline: Option<Pipeline>,
    ) -> Result<ToolRuntime, Error> {
        let pipeline = match pipeline {
            Some(pipeline) => {
                config.mode = pipeline.registry().default_mode();
                pipeline
            }
            None => Pipeline::new(Registry::builder().default_mode(config.mode).build()),
        };
        let runtime = ToolRuntime::assemble(pipeline, config);
        tools_codemode::install(&runtime.inner.pipeline, &runtime.inner.config.code_mode())?;
        if let Some(budget) = &runtime.inner.config.output_budget {
            let store = runtime.result_store();
            let page = budget.of(crate::budget::READ_RESULT);
            runtime
                .register(crate::budget::read_result(Arc::clone(&store), page)?)?
                .keep();
            runtime
                .inner
                .pipeline
                .on_post_execute(crate::budget::hook(budget.clone(), store))
                .keep();
        }
        Ok(runtime)
    }

    /// The store that keeps the full results the output budget cut (a
    /// [`MemoryResultStore`] unless the builder was given one).
    pub fn result_store(&self) -> Arc<dyn ResultStore> {
        Arc::clone(&self.inner.result_store)
    }

    fn assemble(pipeline: Pipeline, config: RuntimeConfig) -> ToolRuntime {
        let registry = pipeline.registry().clone();
        pipeline.set_approval(config.approval.clone());
        if let Some(store) = &config.approval_store {
            pipeline.set_approval_store(Arc::clone(store));
        }
        // While no registered tool declares a timeout the policy is a pass-through, and the
        // pipeline leaves it out of the stack: it costs one atomic load per call.
        let timeout = config.timeout_policy.then(|| {
            let budgets = registry.clone();
            pipeline.on_execute_with(
                HookOptions::new().active_when(move || budgets.has_timeouts()),
                TimeoutPolicy::new(),
            )
        });
        ToolRuntime {
            inner: Arc::new(Inner {
                registry,
                pipeline,
                result_store: config
                    .result_store
                    .clone()
                    .unwrap_or_else(|| Arc::new(MemoryResultStore::default())),
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

    /// The definition `agent` sees under `name`, if any; see [`Registry::get`].
    pub fn get(&self, name: &str, agent: Option<&AgentScope>) -> Option<ToolDefinition> {
        self.inner.registry.get(name, agent)
    }

    /// What `agent` sees (the tools, their modes, the model-facing projections); see
    /// [`Registry::view`].
    pub fn view(&self, agent: Option<&AgentScope>) -> Arc<View> {
        self.inner.registry.view(agent)
    }

    /// Calls `listener` after every change of the registry (registration, removal,
    /// restriction, presentation); dropping the returned registration stops it. See
    /// [`Registry::on_change`].
    pub fn on_change(&self, listener: impl Fn(&Change) + Send + Sync + 'static) -> Registration {
        self.inner.registry.on_change(listener)
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
    /// [`Error::CodeRuntimeRequired`] for `code` or `both` without a code runtime; the
    /// registry's refusals (an unscoped or second declaration) as [`Error::Registry`].
    pub fn present_as(
        &self,
        scope: &AgentScope,
        mode: PresentationMode,
    ) -> Result<Registration, Error> {
        if mode.offers_run_code() && self.inner.config.code_runtime.is_none() {
            return Err(Error::CodeRuntimeRequired { mode });
        }
        Ok(scope.present_as(mode)?)
    }

    /// The Code Mode SDK prompt section of `agent`'s scope: the declarations of every tool
    /// it can call from a `run_code` program, in the code runtime's language; empty for a
    /// scope whose effective mode is `native`. Byte-identical for an unchanged tool set.
    pub fn sdk_section(&self, agent: Option<&AgentScope>) -> String {
        let language = self.inner.config.code_mode().language();
        tools_codemode::sdk_section(&self.inner.registry, agent, language)
    }

    /// The `tools:code-only` prompt section of `agent`'s scope: that `run_code` is the only
    /// directly callable tool, under `code`; empty under `native` and `both`.
    pub fn code_only_section(&self, agent: Option<&AgentScope>) -> &'static str {
        tools_codemode::code_only_section(&self.inner.registry, agent)
    }

    /// Adds a global guard.
    pub fn guard(&self, guard: impl Guard) -> Registration {
        self.inner.registry.guard(guard)
    }

    /// Adds a pre-execute hook; see [`Pipeline::on_pre_execute`].
    pub fn on_pre_execute(&self, hook: impl Hook<PreRequest>) -> Hooked {
        self.inner.pipeline.on_pre_execute(hook)
    }

    /// Adds a pre-execute hook with options; see [`Pipeline::on_pre_execute_with`].
    pub fn on_pre_execute_with(&self, options: HookOptions, hook: impl Hook<PreRequest>) -> Hooked {
        self.inner.pipeline.on_pre_execute_with(options, hook)
    }

    /// Adds an around-dispatch hook (a `from_fn` wrapper, or any tower middleware through
    /// `layer`); see [`Pipeline::on_execute`].
    pub fn on_execute(&self, hook: impl Hook<DispatchRequest>) -> Hooked {
        self.inner.pipeline.on_execute(hook)
    }

    /// Adds an around-dispatch hook with options; see [`Pipeline::on_execute_with`].
    pub fn on_execute_with(
        &self,
        options: HookOptions,
        hook: impl Hook<DispatchRequest>,
    ) -> Hooked {
        self.inner.pipeline.on_execute_with(options, hook)
    }

    /// Adds a post-execute hook; see [`Pipeline::on_post_execute`].
    pub fn on_post_execute(&self, hook: impl Hook<PostRequest>) -> Hooked {
        self.inner.pipeline.on_post_execute(hook)
    }

    /// Adds a post-execute hook with options; see [`Pipeline::on_post_execute_with`].
    pub fn on_post_execute_with(
        &self,
        options: HookOptions,
        hook: impl Hook<PostRequest>,
    ) -> Hooked {
        self.inner.pipeline.on_post_execute_with(options, hook)
    }

    /// Adds a result observer; see [`Pipeline::on_result`].
    pub fn on_result(
        &self,
        observer: impl Fn(&tools_pipeline::Execution, &ToolResult) + Send + Sync + 'static,
    ) -> Hooked {
        self.inner.pipeline.on_result(observer)
    }

    /// Adds a result observer with options; see [`Pipeline::on_result_with`].
    pub fn on_result_with(
        &self,
        options: HookOptions,
        observer: impl Fn(&tools_pipeline::Execution, &ToolResult) + Send + Sync + 'static,
    ) -> Hooked {
        self.inner.pipeline.on_result_with(options, observer)
    }

    /// The model-facing tool schemas of `agent`.
    pub fn schemas(&self, agent: Option<&AgentScope>) -> Arc<[ToolSpec]> {
        self.inner.registry.schemas(agent)
    }

    /// The tools announced to the model in `agent`'s scope ([`View::wire_schemas`]): in
    /// `native` and `both` the declared ones (`Direct`, `NativeOnly`; `run_code` last),
    /// then the deferred ones loaded in the scope; only `run_code` in `code`. With deferred
    /// tools, [`ToolRuntime::declare`] adds the search a provider takes.
    ///
    /// [`View::wire_schemas`]: tools_registry::View::wire_schemas
    pub fn wire_schemas(&self, agent: Option<&AgentScope>) -> Arc<[ToolSpec]> {
        self.inner.registry.view(agent).wire_schemas()
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
        // Without a subscriber that wants the span there is nothing to record the duration
        // on: the clock is not read (two reads per call).
        let started = (!span.is_disabled()).then(Instant::now);
        let result = self
            .inner
            .pipeline
            .execute(call)
            .instrument(span.clone())
            .await;
        if let Some(started) = started {
            record_outcome(&span, &result, started);
        }
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
