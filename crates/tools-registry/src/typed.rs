//! `define_tool`: a typed tool built on `tools-schema`.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tools_json::{ErrorCode, JsonValue};
use tools_presentation::{ContentBlock, Typed, TypedPresenter};
use tools_schema::{ArgsSchema, OutputSchema, ToolArgs, ToolSchema, Validated};

use crate::output::{OutputDecl, RenderFn};
use crate::{CallInfo, Error, ResultView, RunContext, ToolBody, ToolDefinition, ToolError};

type TypedRender<A, O> =
    Arc<dyn Fn(&A, &Validated<O>) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync>;
type TypedMeta<A, O> = Arc<dyn Fn(&A, &Validated<O>) -> Result<Value, ToolError> + Send + Sync>;
/// How a typed tool's calls are classified for concurrency.
enum TypedClassifier<A> {
    /// Concurrency-safe whenever the arguments are valid: only validated (the pass is
    /// remembered by the snapshot, so the body does not validate again), never
    /// deserialized.
    Always,
    /// The author's classifier, over the parsed arguments.
    Classify(Arc<dyn Fn(&A) -> bool + Send + Sync>),
}
type TypedKey<A> = Arc<dyn Fn(&A) -> String + Send + Sync>;
/// The typed body, kept generic until `build` knows the compiled argument schema: it then
/// becomes one [`ToolBody`] whose future is the user's future wrapped in place, so a call
/// boxes one future, not two.
type TypedBody<A> = Box<dyn FnOnce(Arc<ArgsSchema<A>>) -> Arc<dyn ToolBody> + Send + Sync>;

/// Starts a typed tool: arguments deserialize into `A` after validation, the body returns
/// an `O`, and the render and presentation payload receive the typed arguments and the
/// validated typed value.
///
/// The schemas come from the types, so the body and the schemas cannot disagree: the
/// parameter map is `A`'s [`ToolArgs`] (derive it: `#[derive(Deserialize, ToolArgs)]`) and
/// the output schema is `O`'s [`ToolSchema`](tools_schema::ToolSchema) (implemented for
/// the standard types; derive it for your own). A parameter map the derive cannot produce
/// is written by implementing `ToolArgs` by hand for the argument type: that is the escape
/// hatch (pin it with `tools_schema::testing::check_args_type`). A tool without parameters
/// takes [`NoArgs`](tools_schema::NoArgs).
///
/// What the typed wrapper adds to a raw definition:
/// - the arguments are validated against the compiled parameter map before the body runs
///   (a failure is an `INVALID_ARGS` error result; the body counts as invoked, as in the
///   reference), and the definition can run the same validation without the body
///   ([`ToolDefinition::check_arguments`], which the pipeline runs before it asks for an
///   approval);
/// - the classifier and the presenter see typed arguments, and arguments that do not parse
///   make the call exclusive / give the generic card (soft validation for replays).
///
/// # Examples
///
/// ```
/// use serde::Deserialize;
/// use tools_registry::{Registry, define_tool};
/// use tools_schema::ToolArgs;
///
/// #[derive(Deserialize, ToolArgs)]
/// struct EchoArgs {
///     /// The text to echo.
///     text: String,
///     uppercase: Option<bool>,
/// }
///
/// let echo = define_tool::<EchoArgs, String>("typed-echo", "Echo the text back.")
///     .body(|args: EchoArgs, _ctx| async move {
///         Ok(if args.uppercase == Some(true) { args.text.to_uppercase() } else { args.text })
///     })
///     .concurrency(|_args: &EchoArgs| true)
///     .build()?;
///
/// let registry = Registry::new();
/// registry.register(echo)?.keep();
/// let schema = &registry.schemas(None)[0];
/// assert_eq!(
///     schema.parameters.to_string(),
///     r#"{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."},"uppercase":{"type":"boolean"}},"required":["text"]}"#
/// );
/// # Ok::<(), tools_registry::Error>(())
/// ```
pub fn define_tool<A, O>(
    name: impl Into<String>,
    description: impl Into<String>,
) -> TypedToolBuilder<A, O>
where
    A: ToolArgs + Send + 'static,
    O: ToolSchema + Serialize + DeserializeOwned + Send + 'static,
{
    TypedToolBuilder {
        name: name.into(),
        description: description.into(),
        render: None,
        meta: None,
        body: None,
        timeout: None,
        concurrency: None,
        presenter: None,
        finalize: None,
        hints: crate::ToolHints::default(),
        exposure: crate::Exposure::Direct,
        namespace: None,
        approval_key: None,
        _types: PhantomData,
    }
}

/// Builds a typed tool; see [`define_tool`].
#[must_use]
pub struct TypedToolBuilder<A, O> {
    name: String,
    description: String,
    render: Option<TypedRender<A, O>>,
    meta: Option<TypedMeta<A, O>>,
    body: Option<TypedBody<A>>,
    timeout: Option<Duration>,
    concurrency: Option<TypedClassifier<A>>,
    presenter: Option<Arc<dyn tools_presentation::Presenter>>,
    finalize: Option<crate::definition::FinalizeFn>,
    hints: crate::ToolHints,
    exposure: crate::Exposure,
    namespace: Option<Arc<str>>,
    approval_key: Option<TypedKey<A>>,
    _types: PhantomData<fn(A) -> O>,
}

impl<A, O> TypedToolBuilder<A, O>
where
    A: ToolArgs + Send + 'static,
    O: ToolSchema + Serialize + DeserializeOwned + Send + 'static,
{
    /// How a validated value renders (default: one text block, strings as themselves and
    /// other values as compact JSON).
    pub fn render(
        mut self,
        render: impl Fn(&A, &Validated<O>) -> Vec<ContentBlock> + Send + Sync + 'static,
    ) -> Self {
        self.render = Some(Arc::new(move |a: &A, o: &Validated<O>| Ok(render(a, o))));
        self
    }

    /// The replayable presentation payload of top-level calls.
    pub fn presentation_meta(
        mut self,
        meta: impl Fn(&A, &Validated<O>) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.meta = Some(Arc::new(move |a: &A, o: &Validated<O>| Ok(meta(a, o))));
        self
    }

    /// The body (mandatory).
    pub fn body<F, Fut>(mut self, body: F) -> Self
    where
        F: Fn(A, RunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        self.body = Some(Box::new(move |schema: Arc<ArgsSchema<A>>| {
            Arc::new(move |raw_args: JsonValue, ctx: RunContext| {
                let parsed = schema.parse(&raw_args);
                let started = parsed.map(|typed| body(typed, ctx));
                async move {
                    let value = started.map_err(ToolError::from)?.await?;
                    output_value(value).map_err(|e| {
                        ToolError::with_code(
                            ErrorCode::InvalidToolOutput,
                            format!(
                                "invalid tool output: the value cannot be serialized to JSON: {e}"
                            ),
                        )
                    })
                }
            }) as Arc<dyn ToolBody>
        }));
        self
    }

    /// The timeout budget (must be positive).
    pub fn timeout(mut self, budget: Duration) -> Self {
        self.timeout = Some(budget);
        self
    }

    /// The concurrency classifier over typed arguments (invalid arguments: exclusive).
    ///
    /// For a tool whose every valid call is concurrency-safe, prefer
    /// [`TypedToolBuilder::concurrency_safe`]: a classifier needs the arguments
    /// deserialized once more per call.
    pub fn concurrency(mut self, classify: impl Fn(&A) -> bool + Send + Sync + 'static) -> Self {
        self.concurrency = Some(TypedClassifier::Classify(Arc::new(classify)));
        self
    }

    /// Declares every call with valid arguments concurrency-safe (invalid arguments:
    /// exclusive, as with a classifier). The arguments are validated, not deserialized, to
    /// classify, and the body does not validate them again.
    pub fn concurrency_safe(mut self) -> Self {
        self.concurrency = Some(TypedClassifier::Always);
        self
    }

    /// What an approval for the session or for always covers, from the typed arguments
    /// (e.g. `|a: &WriteArgs| a.path.clone()`); arguments that do not parse get the default
    /// key (the canonical arguments).
    pub fn approval_key(mut self, key: impl Fn(&A) -> String + Send + Sync + 'static) -> Self {
        self.approval_key = Some(Arc::new(key));
        self
    }

    /// The behaviour hints shown to clients (MCP tool annotations).
    pub fn hints(mut self, hints: crate::ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// Where the tool is shown and from where it may be called (default `Direct`).
    pub fn exposure(mut self, exposure: crate::Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// The group the tool belongs to (see [`ToolDefinition::namespace`]).
    pub fn namespace(mut self, namespace: impl Into<Arc<str>>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Declares the tool read-only: the `read_only` hint, and concurrency-safe for every
    /// call.
    pub fn read_only(mut self) -> Self {
        self.hints.read_only = Some(true);
        self.concurrency_safe()
    }

    /// The presenter over typed arguments (invalid arguments: the generic card).
    pub fn presenter<P>(mut self, presenter: P) -> Self
    where
        P: TypedPresenter<Args = A> + 'static,
    {
        self.presenter = Some(Arc::new(Typed(presenter)));
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
        self.finalize = Some(Arc::new(finalize));
        self
    }

    /// Compiles the schemas of `A` and `O` once and builds the definition.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] when the parameter map or the output schema does not
    /// compile (a hand-written `ToolArgs` or `ToolSchema`, a `#[tool(schema = …)]`
    /// override, a bad `pattern`, a recursive type), and the errors of
    /// [`crate::DefinitionBuilder::build`].
    pub fn build(self) -> Result<ToolDefinition, Error> {
        let name = self.name;
        let schema_error = |e: tools_schema::Error| Error::UnsupportedSchema {
            tool: name.clone(),
            violations: e.violations().to_vec().into(),
        };
        let output: Arc<OutputSchema<O>> =
            Arc::new(OutputSchema::new(O::tool_schema()).map_err(schema_error)?);
        let args: Arc<ArgsSchema<A>> =
            Arc::new(ArgsSchema::new(&A::tool_params()).map_err(schema_error)?);

        let mut decl = match self.render {
            None => OutputDecl::compiled_text(output.schema().clone()),
            Some(render) => {
                let schema = output.schema().clone();
                let (args, output) = (Arc::clone(&args), Arc::clone(&output));
                let render: RenderFn = Arc::new(move |raw_args: &JsonValue, value: &JsonValue| {
                    let (typed_args, typed_value) = typed_pair(&args, &output, raw_args, value)?;
                    render(&typed_args, &typed_value)
                });
                OutputDecl::compiled(schema, render)
            }
        };
        if let Some(meta) = self.meta {
            let (args, output) = (Arc::clone(&args), Arc::clone(&output));
            decl = decl.with_presentation_meta(move |raw_args, value| {
                let (typed_args, typed_value) = typed_pair(&args, &output, raw_args, value)?;
                meta(&typed_args, &typed_value)
            });
        }

        let check = Arc::clone(&args);
        let mut builder = ToolDefinition::builder(&name, self.description)
            .parameters_compiled(args.schema().clone())
            // The body's own parse, without the body, for a caller that checks the
            // arguments before the body runs (the pipeline, before it asks for an approval).
            .argument_check(move |raw: &JsonValue| check.check(raw).map_err(ToolError::from))
            .hints(self.hints)
            .exposure(self.exposure)
            .output(decl);
        if let Some(namespace) = self.namespace {
            builder = builder.namespace(namespace);
        }
        if let Some(body) = self.body {
            builder = builder.body_arc(body(Arc::clone(&args)));
        }
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        match self.concurrency {
            None => {}
            Some(TypedClassifier::Always) => {
                let args = Arc::clone(&args);
                builder = builder.concurrency(move |raw: &JsonValue| args.accepts(raw));
            }
            Some(TypedClassifier::Classify(classify)) => {
                let args = Arc::clone(&args);
                builder = builder.concurrency(move |raw: &JsonValue| {
                    args.parse(raw).is_ok_and(|typed| classify(&typed))
                });
            }
        }
        if let Some(presenter) = self.presenter {
            builder = builder.presenter(SharedPresenter(presenter));
        }
        if let Some(key) = self.approval_key {
            let args = Arc::clone(&args);
            builder = builder.approval_key(move |raw: &JsonValue| match args.parse(raw) {
                Ok(typed) => key(&typed),
                Err(_) => crate::canonical::json(raw.as_value()),
            });
        }
        if let Some(finalize) = self.finalize {
            builder = builder.finalize_content(move |call, result| finalize(call, result));
        }
        builder.build()
    }
}

/// A typed body's output as JSON, taken by value: a `String` or `serde_json::Value` output
/// is moved in (no copy, no walk); any other type is serialized, as `serde_json::to_value`
/// does. Both give the same JSON: serializing a `Value` or a `String` is the identity.
fn output_value<O: Serialize + 'static>(value: O) -> Result<Value, serde_json::Error> {
    let mut slot = Some(value);
    let any: &mut dyn Any = &mut slot;
    if let Some(value) = any.downcast_mut::<Option<Value>>().and_then(Option::take) {
        return Ok(value);
    }
    if let Some(text) = any.downcast_mut::<Option<String>>().and_then(Option::take) {
        return Ok(Value::String(text));
    }
    match slot {
        Some(value) => serde_json::to_value(&value),
        None => Ok(Value::Null),
    }
}

fn typed_pair<A, O>(
    args: &ArgsSchema<A>,
    output: &OutputSchema<O>,
    raw_args: &JsonValue,
    value: &JsonValue,
) -> Result<(A, Validated<O>), ToolError>
where
    A: DeserializeOwned,
    O: Serialize + DeserializeOwned,
{
    let typed_args = args.parse(raw_args).map_err(ToolError::from)?;
    let typed_value = output.read(value.clone()).map_err(ToolError::from)?;
    Ok((typed_args, typed_value))
}

/// A presenter shared behind an `Arc`.
struct SharedPresenter(Arc<dyn tools_presentation::Presenter>);

impl tools_presentation::Presenter for SharedPresenter {
    fn present_call(&self, args: &Value) -> Option<tools_presentation::ToolCallView> {
        self.0.present_call(args)
    }

    fn present_result(
        &self,
        args: &Value,
        result: &tools_presentation::RawResult,
    ) -> Option<tools_presentation::ToolResultView> {
        self.0.present_result(args, result)
    }
}

impl<A, O> fmt::Debug for TypedToolBuilder<A, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedToolBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::{Value, json};

    use super::output_value;

    #[derive(Serialize)]
    struct Report {
        text: String,
        lines: Option<u32>,
    }

    /// The by-value path gives exactly what `serde_json::to_value` gives, for the types it
    /// moves and for those it serializes.
    #[test]
    fn output_value_is_to_value() {
        let value = json!({"a": [1, 2.5, -0, "x", null, {"b": true}], "c": u64::MAX});
        assert_eq!(
            output_value(value.clone()).unwrap(),
            serde_json::to_value(&value).unwrap()
        );
        for text in ["", "ok", "ünï\u{1F600}\n\"q\""] {
            assert_eq!(output_value(text.to_owned()).unwrap(), Value::from(text));
        }
        let report = Report {
            text: "t".into(),
            lines: None,
        };
        assert_eq!(
            output_value(Some("x".to_owned())).unwrap(),
            serde_json::to_value(Some("x")).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            output_value(report).unwrap()
        );
        assert_eq!(output_value(()).unwrap(), Value::Null);
    }
}
