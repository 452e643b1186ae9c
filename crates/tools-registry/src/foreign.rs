//! The argument check of a tool with a foreign parameter schema (docs/decisions.md, entry
//! 27).

use std::sync::Arc;

use tools_json::{CompiledSchema, ErrorCode, JsonValue};

use crate::{BodyFuture, RunContext, ToolBody, ToolError};

/// A body that validates the arguments against `schema` (every keyword the subset enforces)
/// before running `inner`; a failure is `INVALID_ARGS` naming every violation.
pub(crate) fn validating(schema: CompiledSchema, inner: Arc<dyn ToolBody>) -> Arc<dyn ToolBody> {
    Arc::new(Validating { schema, inner })
}

struct Validating {
    schema: CompiledSchema,
    inner: Arc<dyn ToolBody>,
}

impl ToolBody for Validating {
    fn call(&self, args: JsonValue, ctx: RunContext) -> BodyFuture {
        match check(&self.schema, &args) {
            Ok(()) => self.inner.call(args, ctx),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }
}

/// The check the validating body runs, on its own (for
/// [`crate::ToolDefinition::check_arguments`]): `INVALID_ARGS` naming every violation. A
/// pass is remembered by the snapshot, so the body does not validate it again.
pub(crate) fn check(schema: &CompiledSchema, args: &JsonValue) -> Result<(), ToolError> {
    let violations = schema.validate_snapshot(args, "");
    if violations.is_empty() {
        return Ok(());
    }
    Err(ToolError::with_code(
        ErrorCode::InvalidArgs,
        format!("invalid arguments: {violations}"),
    )
    .with_violations(violations.to_json()))
}
