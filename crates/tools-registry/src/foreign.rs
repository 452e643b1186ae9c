//! The argument check of a tool with a foreign parameter schema (decision 26).

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
        let violations = self.schema.validate_snapshot(&args, "");
        if violations.is_empty() {
            return self.inner.call(args, ctx);
        }
        let error = ToolError::with_code(
            ErrorCode::InvalidArgs,
            format!("invalid arguments: {violations}"),
        );
        Box::pin(async move { Err(error) })
    }
}
