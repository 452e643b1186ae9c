//! Tool definitions: what a tool is, and the raw builder for MCP-style tools.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tools_json::{CompiledSchema, JsonValue};
use tools_presentation::{ContentBlock, Presenter, RawResult};

use crate::output::{Output, OutputDecl};
use crate::{CallInfo, Error, Exposure, RunContext, ToolError, ToolHints, ToolName};

/// The largest timeout budget a tool may declare: 2 147 483 647 ms (about 24.8 days), the
/// limit of the timers the runtime's timeout policy is specified against.
pub const MAX_TIMEOUT: Duration = Duration::from_millis(2_147_483_647);

/// The future a tool body returns: the tool's canonical value, or a failure.
pub type BodyFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// A tool body: receives the immutable argument snapshot and a [`RunContext`].
///
/// Implemented for every `Fn(JsonValue, RunContext) -> impl Future<Output = Result<Value,
/// ToolError>>` closure that is `Send + Sync + 'static`.
pub trait ToolBody: Send + Sync + 'static {
    /// Runs the tool.
    fn call(&self, args: JsonValue, ctx: RunContext) -> BodyFuture;
}

impl<F, Fut> ToolBody for F
where
    F: Fn(JsonValue, RunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn call(&self, args: JsonValue, ctx: RunContext) -> BodyFuture {
        Box::pin(self(args, ctx))
    }
}

/// The last-mile content transform, applied once to every outcome; `None` keeps the content.
pub type FinalizeFn =
    Arc<dyn Fn(&CallInfo, &ResultView<'_>) -> Option<Vec<ContentBlock>> + Send + Sync>;
/// The per-call concurrency classifier: `true` makes the call parallel.
pub type ClassifierFn = Arc<dyn Fn(&JsonValue) -> bool + Send + Sync>;
/// The key an approval for the session or for always is remembered under, from the
/// arguments (e.g. a path, a command prefix).
pub type ApprovalKeyFn = Arc<dyn Fn(&JsonValue) -> String + Send + Sync>;
/// A check of the arguments that runs without the body: `Err` is the failure the body gives
/// the same arguments before it starts (see [`DefinitionBuilder::argument_check`]).
pub type ArgumentCheckFn = Arc<dyn Fn(&JsonValue) -> Result<(), ToolError> + Send + Sync>;

/// A read-only view of a normalized outcome, as `finalize_content` sees it.
#[derive(Clone, Copy, Debug)]
pub struct ResultView<'a> {
    /// The content the model will see.
    pub content: &'a [ContentBlock],
    /// Whether the call failed.
    pub is_error: bool,
    /// The success value, if the call succeeded.
    pub value: Option<&'a JsonValue>,
    /// The failure, if the call failed.
    pub error: Option<&'a ToolError>,
    /// The replayable presentation payload, if any.
    pub meta: Option<&'a JsonValue>,
}

/// A registered tool: what the model sees (name, description, parameters) and what the
/// runtime uses (output declaration, body, budget, classifier, presenters).
///
/// Build one with [`ToolDefinition::builder`] (raw, MCP-style: the body validates its own
/// input) or with [`crate::define_tool`] (typed). Cloning is cheap (every part is shared).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_registry::{OutputDecl, ToolDefinition};
///
/// let echo = ToolDefinition::builder("echo", "echo arguments back")
///     .parameters(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///     .output(OutputDecl::text(json!({"type": "string"})))
///     .body(|args, _ctx| async move {
///         Ok(args.get("text").cloned().unwrap_or(json!("")))
///     })
///     .build()?;
/// assert_eq!(echo.name().as_str(), "echo");
/// # Ok::<(), tools_registry::Error>(())
/// ```
#[derive(Clone)]
pub struct ToolDefinition {
    inner: Arc<Parts>,
}

struct Parts {
    name: ToolName,
    description: Arc<str>,
    parameters: ParametersJson,
    output: Output,
    body: Arc<dyn ToolBody>,
    finalize_content: Option<FinalizeFn>,
    timeout: Option<Duration>,
    concurrency: Option<ClassifierFn>,
    presenter: Option<Arc<dyn Presenter>>,
    hints: ToolHints,
    exposure: Exposure,
    namespace: Option<Arc<str>>,
    foreign: Option<CompiledSchema>,
    argument_check: Option<ArgumentCheckFn>,
    approval_key: Option<ApprovalKeyFn>,
}

impl ToolDefinition {
    /// A raw definition builder.
    pub fn builder(name: impl Into<String>, description: impl Into<String>) -> DefinitionBuilder {
        DefinitionBuilder {
            name: name.into(),
            description: description.into(),
            parameters: None,
            output: None,
            body: None,
            finalize_content: None,
            timeout: None,
            concurrency: None,
            presenter: None,
            hints: ToolHints::default(),
            exposure: Exposure::Direct,
            namespace: None,
            argument_check: None,
            approval_key: None,
        }
    }

    /// The name.
    pub fn name(&self) -> &ToolName {
        &self.inner.name
    }

    /// The description shown to the model.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// The raw parameter schema shown to the model (lossless JSON).
    pub fn parameters(&self) -> &JsonValue {
        match &self.inner.parameters {
            ParametersJson::Ready(json) => json,
            ParametersJson::Compiled(schema) => schema.json(),
        }
    }

    /// The compiled foreign parameter schema the arguments are validated against, for a
    /// tool built with [`DefinitionBuilder::foreign_parameters`] (decision 27,
    /// docs/decisions.md).
    pub fn foreign_parameters(&self) -> Option<&CompiledSchema> {
        self.inner.foreign.as_ref()
    }

    /// The parameter schema a code generator types: the part of a foreign schema the
    /// validator enforces (inside the subset), else [`ToolDefinition::parameters`].
    pub fn enforced_parameters(&self) -> &Value {
        match &self.inner.foreign {
            Some(schema) => schema.enforced_json(),
            None => self.parameters().as_value(),
        }
    }

    /// Whether every keyword of the parameter and output schemas is enforced: `false` for
    /// a foreign schema that uses keywords outside the subset (they reach the model, but
    /// only the subset's keywords are validated).
    pub fn is_fully_validated(&self) -> bool {
        self.inner
            .foreign
            .as_ref()
            .is_none_or(CompiledSchema::is_fully_enforced)
            && self.inner.output.schema.is_fully_enforced()
    }

    /// The behaviour hints (MCP tool annotations).
    pub fn hints(&self) -> &ToolHints {
        &self.inner.hints
    }

    /// The exposure the tool was defined with (a scope's rules may override it; see
    /// [`crate::View::exposure`]).
    pub fn exposure(&self) -> Exposure {
        self.inner.exposure
    }

    /// The group the tool belongs to (an imported MCP server's name, or a host-declared
    /// group): searched, and declared as a namespace where the provider has them.
    pub fn namespace(&self) -> Option<&str> {
        self.inner.namespace.as_deref()
    }

    /// The key an approval "for the session" or "always" of a call with `args` is
    /// remembered under: the tool's own key function
    /// ([`DefinitionBuilder::approval_key`], prefixed with the tool's name), else the tool's
    /// name and its canonical arguments (object keys sorted), so any change of the arguments
    /// is asked about again. A panicking key function gives the default key.
    pub fn approval_key(&self, args: &JsonValue) -> String {
        let name = self.inner.name.as_str();
        if let Some(key) = &self.inner.approval_key
            && let Ok(key) = catch_unwind(AssertUnwindSafe(|| key(args)))
        {
            return format!("{name} {key}");
        }
        format!("{name} {}", crate::canonical::json(args.as_value()))
    }

    /// Checks `args` as the body checks them before it starts, without running the body:
    /// against the foreign parameter schema ([`DefinitionBuilder::foreign_parameters`]),
    /// then with the declared check ([`DefinitionBuilder::argument_check`]; a typed tool
    /// from [`crate::define_tool`] declares its compiled parameter map's). `Ok` when neither
    /// is declared: a raw body checks its own input, and nothing is known about it here.
    ///
    /// The pipeline runs it before it asks a person to approve a call, so that nobody is
    /// asked about a call that could never run; an allowed call is checked by its body
    /// alone. A schema check that passes is remembered by the argument snapshot, so the
    /// body does not validate the same snapshot again.
    ///
    /// # Errors
    ///
    /// The failure the body would give the same arguments: `INVALID_ARGS` naming every
    /// violation, with the body's own message. A check that panics fails with its panic.
    pub fn check_arguments(&self, args: &JsonValue) -> Result<(), ToolError> {
        if let Some(schema) = &self.inner.foreign {
            crate::foreign::check(schema, args)?;
        }
        match &self.inner.argument_check {
            None => Ok(()),
            Some(check) => catch_unwind(AssertUnwindSafe(|| check(args)))
                .unwrap_or_else(|panic| Err(ToolError::from_panic(&*panic))),
        }
    }

    /// The output: compiled schema and projections.
    pub fn output(&self) -> &Output {
        &self.inner.output
    }

    /// The body.
    pub fn body(&self) -> &Arc<dyn ToolBody> {
        &self.inner.body
    }

    /// Starts the body. A panic while creating the future becomes an error future; a panic
    /// while polling it is the pipeline's to catch.
    pub fn call(&self, args: JsonValue, ctx: RunContext) -> BodyFuture {
        match catch_unwind(AssertUnwindSafe(|| self.inner.body.call(args, ctx))) {
            Ok(future) => future,
            Err(panic) => {
                let error = ToolError::from_panic(&*panic);
                Box::pin(async move { Err(error) })
            }
        }
    }

    /// The timeout budget, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.inner.timeout
    }

    /// The last-mile content transform, if any.
    pub fn finalize_content(&self) -> Option<&FinalizeFn> {
        self.inner.finalize_content.as_ref()
    }

    /// Applies `finalize_content`: `Ok(None)` keeps the content (also when none is
    /// declared), `Ok(Some(content))` replaces it.
    ///
    /// # Errors
    ///
    /// The transform's panic, as a [`ToolError`].
    pub fn finalize(
        &self,
        call: &CallInfo,
        result: &ResultView<'_>,
    ) -> Result<Option<Vec<ContentBlock>>, ToolError> {
        let Some(finalize) = self.inner.finalize_content.as_ref() else {
            return Ok(None);
        };
        catch_unwind(AssertUnwindSafe(|| finalize(call, result)))
            .map_err(|panic| ToolError::from_panic(&*panic))
    }

    /// Whether a call with these arguments may run beside others: only an exact `true`
    /// from the classifier; no classifier, `false` or a panic mean exclusive.
    pub fn is_concurrency_safe(&self, args: &JsonValue) -> bool {
        let Some(classify) = &self.inner.concurrency else {
            return false;
        };
        catch_unwind(AssertUnwindSafe(|| classify(args))).unwrap_or(false)
    }

    /// Whether a classifier is declared.
    pub fn has_concurrency_classifier(&self) -> bool {
        self.inner.concurrency.is_some()
    }

    /// The presenter, if any.
    pub fn presenter(&self) -> Option<&Arc<dyn Presenter>> {
        self.inner.presenter.as_ref()
    }

    /// The pending call's view, or `None` for the generic card (also when the presenter
    /// panics).
    pub fn present_call(&self, args: &Value) -> Option<tools_presentation::ToolCallView> {
        let presenter = self.inner.presenter.as_ref()?;
        catch_unwind(AssertUnwindSafe(|| presenter.present_call(args))).unwrap_or(None)
    }

    /// The completed call's view, or `None` for the generic card (also when the presenter
    /// panics).
    pub fn present_result(
        &self,
        args: &Value,
        result: &RawResult,
    ) -> Option<tools_presentation::ToolResultView> {
        let presenter = self.inner.presenter.as_ref()?;
        catch_unwind(AssertUnwindSafe(|| presenter.present_result(args, result))).unwrap_or(None)
    }

    /// Whether two handles are the same definition.
    pub fn ptr_eq(a: &ToolDefinition, b: &ToolDefinition) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.inner.name)
            .field("description", &self.inner.description)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// Builds a raw [`ToolDefinition`]; see [`ToolDefinition::builder`].
#[must_use]
pub struct DefinitionBuilder {
    name: String,
    description: String,
    parameters: Option<Parameters>,
    output: Option<OutputDecl>,
    body: Option<Arc<dyn ToolBody>>,
    finalize_content: Option<FinalizeFn>,
    timeout: Option<Duration>,
    concurrency: Option<ClassifierFn>,
    presenter: Option<Arc<dyn Presenter>>,
    hints: ToolHints,
    exposure: Exposure,
    namespace: Option<Arc<str>>,
    argument_check: Option<ArgumentCheckFn>,
    approval_key: Option<ApprovalKeyFn>,
}

impl DefinitionBuilder {
    /// Where the tool is shown and from where it may be called (default
    /// [`Exposure::Direct`]).
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// The group the tool belongs to (see [`ToolDefinition::namespace`]).
    pub fn namespace(mut self, namespace: impl Into<Arc<str>>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The raw parameter schema (any JSON Schema; it is not checked against the subset, only
    /// for losslessness). Defaults to `{"type": "object", "properties": {}}`.
    pub fn parameters(mut self, schema: Value) -> Self {
        self.parameters = Some(Parameters::Raw(schema));
        self
    }

    /// A parameter schema this project did not write (an MCP server's, another host's),
    /// handled per docs/decisions.md, entry 27: the model sees it verbatim; the arguments
    /// are validated against every keyword of it the subset enforces before the body runs
    /// (a failure is `INVALID_ARGS`, listing every violation); what is not enforced is
    /// reported by [`ToolDefinition::is_fully_validated`]. Never refused for its keywords;
    /// only a schema that is not lossless JSON is refused at [`DefinitionBuilder::build`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_registry::{OutputDecl, ToolDefinition};
    ///
    /// let tool = ToolDefinition::builder("time__convert", "Convert a time.")
    ///     .foreign_parameters(json!({
    ///         "$schema": "http://json-schema.org/draft-07/schema#",
    ///         "type": "object",
    ///         "properties": {
    ///             "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
    ///             "zone": {"anyOf": [{"type": "string"}, {"type": "null"}]}
    ///         },
    ///         "required": ["time"]
    ///     }))
    ///     .output(OutputDecl::text(json!({"type": "string"})))
    ///     .body(|args, _ctx| async move { Ok(args.as_value()["time"].clone()) })
    ///     .build()?;
    /// assert!(tool.parameters().as_value()["properties"]["zone"].get("anyOf").is_some());
    /// assert!(!tool.is_fully_validated());
    /// assert_eq!(tool.enforced_parameters()["properties"]["zone"], json!({}));
    /// # Ok::<(), tools_registry::Error>(())
    /// ```
    pub fn foreign_parameters(mut self, schema: Value) -> Self {
        self.parameters = Some(Parameters::Foreign(schema));
        self
    }

    /// The behaviour hints shown to clients (MCP tool annotations).
    pub fn hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// What an approval for the session or for always covers: calls whose key is the same
    /// (e.g. `|args| args.as_value()["path"].to_string()` approves a path for any content).
    /// Default: the whole canonical arguments.
    pub fn approval_key(
        mut self,
        key: impl Fn(&JsonValue) -> String + Send + Sync + 'static,
    ) -> Self {
        self.approval_key = Some(Arc::new(key));
        self
    }

    /// Declares the tool read-only: the `read_only` hint, and concurrency-safe for every
    /// call (a tool that changes nothing may run beside its siblings).
    pub fn read_only(mut self) -> Self {
        self.hints.read_only = Some(true);
        self.concurrency = Some(Arc::new(|_: &JsonValue| true));
        self
    }

    /// The parameter schema as an already lossless value, shared rather than copied.
    pub fn parameters_json(mut self, schema: JsonValue) -> Self {
        self.parameters = Some(Parameters::Json(schema));
        self
    }

    /// The parameter schema as a compiled schema (from `tools-schema`'s DSL or a derive):
    /// the definition shows the model [`CompiledSchema::json`], read the first time the
    /// definition's parameters are (so a tool that is registered but never projected never
    /// builds that JSON). As with the other setters, the arguments are not validated
    /// against it here: the body does that, and [`DefinitionBuilder::argument_check`]
    /// declares the same check for [`ToolDefinition::check_arguments`] (how `define_tool`
    /// hands over its schema).
    pub fn parameters_compiled(mut self, schema: CompiledSchema) -> Self {
        self.parameters = Some(Parameters::Compiled(schema));
        self
    }

    /// Declares how the body checks its arguments before it starts, so that the check can
    /// run without the body ([`ToolDefinition::check_arguments`]: the pipeline runs it
    /// before it asks a person to approve a call). The check must fail exactly when, and
    /// exactly as, the body fails before doing anything (same code, same message), and pass
    /// every call the body would start: it only decides earlier what the body decides; it
    /// does not replace the body's own check, which still runs for every call. A foreign
    /// schema's check ([`DefinitionBuilder::foreign_parameters`]) runs before it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_registry::{ErrorCode, JsonValue, OutputDecl, ToolDefinition, ToolError};
    ///
    /// fn needs_path(args: &JsonValue) -> Result<(), ToolError> {
    ///     match args.get("path") {
    ///         Some(path) if path.is_string() => Ok(()),
    ///         _ => Err(ToolError::with_code(ErrorCode::InvalidArgs, "path must be a string")),
    ///     }
    /// }
    ///
    /// let tool = ToolDefinition::builder("stat", "Stat a path.")
    ///     .output(OutputDecl::text(json!({"type": "string"})))
    ///     .argument_check(needs_path)
    ///     .body(|args, _ctx| async move {
    ///         needs_path(&args)?;
    ///         Ok(args.as_value()["path"].clone())
    ///     })
    ///     .build()?;
    /// let missing = JsonValue::new(json!({}))?;
    /// assert_eq!(tool.check_arguments(&missing).unwrap_err().message(), "path must be a string");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn argument_check(
        mut self,
        check: impl Fn(&JsonValue) -> Result<(), ToolError> + Send + Sync + 'static,
    ) -> Self {
        self.argument_check = Some(Arc::new(check));
        self
    }

    /// The output declaration (mandatory).
    pub fn output(mut self, output: OutputDecl) -> Self {
        self.output = Some(output);
        self
    }

    /// The body (mandatory): an async closure over the argument snapshot and the run
    /// context.
    pub fn body<F, Fut>(mut self, body: F) -> Self
    where
        F: Fn(JsonValue, RunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.body = Some(Arc::new(body));
        self
    }

    /// The body, as a type implementing [`ToolBody`].
    pub fn body_impl(mut self, body: impl ToolBody) -> Self {
        self.body = Some(Arc::new(body));
        self
    }

    /// The body, already shared.
    pub fn body_arc(mut self, body: Arc<dyn ToolBody>) -> Self {
        self.body = Some(body);
        self
    }

    /// The last-mile content transform.
    pub fn finalize_content(
        mut self,
        finalize: impl Fn(&CallInfo, &ResultView<'_>) -> Option<Vec<ContentBlock>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.finalize_content = Some(Arc::new(finalize));
        self
    }

    /// The timeout budget the runtime's timeout policy enforces (positive, at most
    /// [`MAX_TIMEOUT`]).
    pub fn timeout(mut self, budget: Duration) -> Self {
        self.timeout = Some(budget);
        self
    }

    /// The per-call concurrency classifier.
    pub fn concurrency(
        mut self,
        classify: impl Fn(&JsonValue) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency = Some(Arc::new(classify));
        self
    }

    /// The presenter of the tool's call and result cards.
    pub fn presenter(mut self, presenter: impl Presenter + 'static) -> Self {
        self.presenter = Some(Arc::new(presenter));
        self
    }

    /// Checks the parts in the reference implementation's order (output declaration, output
    /// schema, timeout, then the name and the parameters' losslessness) and builds the
    /// definition. The reserved name is refused at registration, not here, so that the Code
    /// Mode transport can be built with this builder.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyName`], [`Error::MissingOutput`], [`Error::MissingBody`],
    /// [`Error::InvalidTimeout`], [`Error::ParametersNotLossless`].
    pub fn build(self) -> Result<ToolDefinition, Error> {
        let Some(output) = self.output else {
            return Err(Error::MissingOutput { tool: self.name });
        };
        let output = output.compile(&self.name)?;
        if self.timeout.is_some_and(|t| t.is_zero() || t > MAX_TIMEOUT) {
            return Err(Error::InvalidTimeout { tool: self.name });
        }
        let Some(body) = self.body else {
            return Err(Error::MissingBody { tool: self.name });
        };
        let name = ToolName::new(&self.name)?;
        let mut foreign = None;
        let parameters = match self.parameters {
            Some(Parameters::Json(parameters)) => ParametersJson::Ready(parameters),
            Some(Parameters::Compiled(schema)) => ParametersJson::Compiled(schema),
            raw => {
                let raw = match raw {
                    Some(Parameters::Raw(raw)) => raw,
                    Some(Parameters::Foreign(raw)) => {
                        foreign = Some(CompiledSchema::compile_foreign(&raw));
                        raw
                    }
                    _ => serde_json::json!({"type": "object", "properties": {}}),
                };
                let limits = tools_json::Limits::default().with_max_depth(usize::MAX);
                let json = JsonValue::with_limits_at(raw, &limits, "parameters").map_err(|e| {
                    Error::ParametersNotLossless {
                        tool: self.name.clone(),
                        violations: e.violations().to_vec().into(),
                    }
                })?;
                ParametersJson::Ready(json)
            }
        };
        let body = match &foreign {
            Some(schema) => crate::foreign::validating(schema.clone(), body),
            None => body,
        };
        Ok(ToolDefinition {
            inner: Arc::new(Parts {
                name,
                description: self.description.into(),
                parameters,
                output,
                body,
                finalize_content: self.finalize_content,
                timeout: self.timeout,
                concurrency: self.concurrency,
                presenter: self.presenter,
                hints: self.hints,
                exposure: self.exposure,
                namespace: self.namespace,
                foreign,
                argument_check: self.argument_check,
                approval_key: self.approval_key,
            }),
        })
    }
}

impl fmt::Debug for DefinitionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefinitionBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A builder's parameter schema: raw (checked lossless at `build`), foreign (also compiled
/// for validation) or already lossless.
enum Parameters {
    Raw(Value),
    Foreign(Value),
    Json(JsonValue),
    Compiled(CompiledSchema),
}

/// A definition's parameter schema: lossless JSON, or a compiled schema whose JSON is read
/// (and, for a DSL schema, rendered) the first time the model is shown it.
enum ParametersJson {
    Ready(JsonValue),
    Compiled(CompiledSchema),
}
