//! A tool's output declaration: the schema its values must match and how a validated value
//! renders into model-facing content.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;
use tools_json::{CompiledSchema, JsonValue};
use tools_presentation::ContentBlock;

use crate::{Error, ToolError};

/// Projects the validated value into model-facing content: `(arguments, value)`.
pub type RenderFn =
    Arc<dyn Fn(&JsonValue, &JsonValue) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync>;
/// Projects the validated value into a replayable presentation payload.
pub type MetaFn = Arc<dyn Fn(&JsonValue, &JsonValue) -> Result<Value, ToolError> + Send + Sync>;

/// How a tool declares its output: the schema its values must match (raw JSON Schema in the
/// subset, any root) and how a validated value renders into model-facing content. The
/// schema is checked when the definition is built.
#[derive(Clone)]
pub struct OutputDecl {
    schema: SchemaSource,
    render: Render,
    presentation_meta: Option<MetaFn>,
    max_depth: usize,
}

/// How a validated value becomes content.
#[derive(Clone)]
enum Render {
    /// One text block: [`text_of`] the value. Known to the pipeline, which renders it only
    /// when the content is first read ([`Output::renders_text`]).
    Text,
    /// The author's projection.
    Custom(RenderFn),
}

#[derive(Clone)]
enum SchemaSource {
    Raw(Value),
    Compiled(CompiledSchema),
}

impl OutputDecl {
    /// The schema and the render projection `(arguments, value) -> content`.
    pub fn new(
        schema: Value,
        render: impl Fn(&JsonValue, &JsonValue) -> Result<Vec<ContentBlock>, ToolError>
        + Send
        + Sync
        + 'static,
    ) -> OutputDecl {
        OutputDecl::of(SchemaSource::Raw(schema), Render::Custom(Arc::new(render)))
    }

    fn of(schema: SchemaSource, render: Render) -> OutputDecl {
        OutputDecl {
            schema,
            render,
            presentation_meta: None,
            max_depth: tools_json::DEFAULT_MAX_DEPTH,
        }
    }

    /// An output declaration from an already compiled schema.
    pub fn compiled(schema: CompiledSchema, render: RenderFn) -> OutputDecl {
        OutputDecl::of(SchemaSource::Compiled(schema), Render::Custom(render))
    }

    /// An output rendered as one text block: strings as themselves, other values as compact
    /// JSON ([`text_of`]).
    ///
    /// The pipeline renders this content only when something reads it (a host sending it
    /// to the model, a hook, an observer): a Code Mode sub-call, whose program receives
    /// the value, never pays for it.
    pub fn text(schema: Value) -> OutputDecl {
        OutputDecl::of(SchemaSource::Raw(schema), Render::Text)
    }

    /// [`OutputDecl::text`] with an already compiled schema.
    pub fn compiled_text(schema: CompiledSchema) -> OutputDecl {
        OutputDecl::of(SchemaSource::Compiled(schema), Render::Text)
    }

    /// Adds the replayable presentation payload, computed only for top-level calls.
    #[must_use]
    pub fn with_presentation_meta(
        mut self,
        meta: impl Fn(&JsonValue, &JsonValue) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> OutputDecl {
        self.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The deepest success value the pipeline accepts from the body (container nesting;
    /// default [`tools_json::DEFAULT_MAX_DEPTH`], the limit of the lossless boundary).
    /// Deeper values fail the call as `INVALID_TOOL_OUTPUT`.
    ///
    /// For a tool whose value wraps a value that is itself held to the default limit:
    /// `run_code`'s `{logs, result}` takes one level more than the program's result.
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> OutputDecl {
        self.max_depth = max_depth;
        self
    }

    pub(crate) fn compile(self, tool: &str) -> Result<Output, Error> {
        let schema = match self.schema {
            SchemaSource::Compiled(schema) => schema,
            SchemaSource::Raw(raw) => {
                CompiledSchema::compile_owned(raw).map_err(|e| Error::UnsupportedSchema {
                    tool: tool.to_owned(),
                    violations: e.violations().to_vec().into(),
                })?
            }
        };
        Ok(Output {
            schema,
            render: self.render,
            presentation_meta: self.presentation_meta,
            max_depth: self.max_depth,
        })
    }
}

impl fmt::Debug for OutputDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputDecl")
            .field("presentation_meta", &self.presentation_meta.is_some())
            .field("max_depth", &self.max_depth)
            .finish_non_exhaustive()
    }
}

/// A value as one line of text: a string as itself, anything else as compact JSON.
pub fn text_of(value: &JsonValue) -> String {
    match value.as_str() {
        Some(text) => text.to_owned(),
        None => value.to_string(),
    }
}

/// A built tool's output: the compiled schema and the projections.
#[derive(Clone)]
pub struct Output {
    pub(crate) schema: CompiledSchema,
    render: Render,
    presentation_meta: Option<MetaFn>,
    max_depth: usize,
}

impl Output {
    /// The deepest success value accepted ([`OutputDecl::with_max_depth`]).
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The compiled output schema.
    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }

    /// Renders a validated value. A panic in the render becomes an error.
    ///
    /// # Errors
    ///
    /// The render's own error, or its panic.
    pub fn render(
        &self,
        args: &JsonValue,
        value: &JsonValue,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        match &self.render {
            Render::Text => Ok(vec![ContentBlock::text(text_of(value))]),
            Render::Custom(render) => catch_unwind(AssertUnwindSafe(|| render(args, value)))
                .unwrap_or_else(|panic| Err(ToolError::from_panic(&*panic))),
        }
    }

    /// Whether the content is the value as one text block ([`OutputDecl::text`], or a typed
    /// tool without a render): it cannot fail and depends on the value alone, so the
    /// pipeline may render it when it is first read.
    pub fn renders_text(&self) -> bool {
        matches!(self.render, Render::Text)
    }

    /// Whether a presentation payload is declared.
    pub fn has_presentation_meta(&self) -> bool {
        self.presentation_meta.is_some()
    }

    /// The presentation payload of a validated value, if one is declared. A panic becomes
    /// an error.
    pub fn presentation_meta(
        &self,
        args: &JsonValue,
        value: &JsonValue,
    ) -> Option<Result<Value, ToolError>> {
        let meta = self.presentation_meta.as_ref()?;
        Some(
            catch_unwind(AssertUnwindSafe(|| meta(args, value)))
                .unwrap_or_else(|panic| Err(ToolError::from_panic(&*panic))),
        )
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output")
            .field("schema", &self.schema)
            .field("presentation_meta", &self.presentation_meta.is_some())
            .finish_non_exhaustive()
    }
}
