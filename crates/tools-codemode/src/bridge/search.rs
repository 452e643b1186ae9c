//! The tool-search helpers of a `run_code` program: `tools.$search(query, { limit })` and
//! `tools.$describe(name)` in TypeScript, `tools.search_tools(query, limit=5)` and
//! `tools.describe_tool(name)` in Python. They are bound only in a scope with deferred tools
//! (the SDK then declares them), and they answer with values: names, descriptions,
//! signatures and schemas, never prompt text.
//!
//! They are not tool calls and do not go through the pipeline: they call no tool and change
//! nothing, they only read the view the run's names were bound from (the `run_code` call's
//! agent scope, taken when the run started). So no guard, approval, budget or observer sees
//! them, they are not numbered as sub-calls and they have no dispatch events. What they
//! return is limited to that view: a search looks only through the scope's deferred tools
//! (a tool restricted away or hidden is never found), and both return only tools the
//! program may call (the names bound in its `tools` object). Calling a tool found this way
//! is an ordinary binding call, a sub-call through the whole pipeline.

use std::sync::Arc;

use serde_json::{Map, Value};
use tools_codemode_sdk::{
    DEFAULT_SEARCH_LIMIT, Language, MAX_SEARCH_LIMIT, ToolSdkSchema, ToolSearchSdk,
};
use tools_json::{ErrorCode, JsonValue};
use tools_registry::{ToolDefinition, View};

use crate::runtime::{BindingError, BindingNamespace, BindingOutcome};

/// One of the helpers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Helper {
    /// `$search` / `search_tools`.
    Search,
    /// `$describe` / `describe_tool`.
    Describe,
}

/// The tool search of one run: the view its names were bound from, and its language's
/// helpers.
pub(crate) struct ToolSearch {
    view: Arc<View>,
    language: Language,
    sdk: ToolSearchSdk,
}

impl ToolSearch {
    /// The helpers of a run in `language` over `view`.
    pub(crate) fn new(view: Arc<View>, language: Language) -> ToolSearch {
        ToolSearch {
            view,
            language,
            sdk: language.tool_search(),
        }
    }

    /// Which helper `name` is, if it is one.
    pub(crate) fn helper(&self, name: &str) -> Option<Helper> {
        if name == self.sdk.search {
            Some(Helper::Search)
        } else if name == self.sdk.describe {
            Some(Helper::Describe)
        } else {
            None
        }
    }

    /// Adds the helpers, with their signatures, to the run's namespace.
    pub(crate) fn bind(&self, namespace: BindingNamespace) -> BindingNamespace {
        let mut namespace = namespace;
        namespace.names.push(self.sdk.search.to_owned());
        namespace.names.push(self.sdk.describe.to_owned());
        namespace
            .with_signature(self.sdk.search, self.sdk.search_parameters.iter().copied())
            .with_signature(
                self.sdk.describe,
                self.sdk.describe_parameters.iter().copied(),
            )
    }

    /// Answers one helper call; `callable` tells the tool names bound in the program's
    /// namespace.
    pub(crate) fn answer(
        &self,
        helper: Helper,
        global: &str,
        args: &JsonValue,
        callable: &dyn Fn(&str) -> bool,
    ) -> BindingOutcome {
        let value = match helper {
            Helper::Search => self.search(global, args.as_value(), callable)?,
            Helper::Describe => self.describe(global, args.as_value(), callable)?,
        };
        let name = match helper {
            Helper::Search => self.sdk.search,
            Helper::Describe => self.sdk.describe,
        };
        // The answer holds a schema, which may nest; past the one depth limit it is refused
        // like any value that cannot cross, naming the helper.
        JsonValue::new(value).map_err(|error| {
            BindingError::with_code(
                ErrorCode::InvalidToolOutput,
                format!("the answer of {global}.{name} cannot cross: {error}"),
            )
        })
    }

    /// `$search`: the scope's deferred tools that match `query`, best first.
    fn search(
        &self,
        global: &str,
        args: &Value,
        callable: &dyn Fn(&str) -> bool,
    ) -> Result<Value, BindingError> {
        let name = self.sdk.search;
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return Err(invalid(format!(
                "{global}.{name}: the query must be a string (a few words that describe the tool you need)"
            )));
        };
        let limit = self.limit(global, args)?;
        let found = self
            .view
            .search(query, limit)
            .map_err(|error| BindingError::with_code(error.code(), error.to_string()))?;
        Ok(Value::Array(
            found
                .into_iter()
                .filter(|def| callable(def.name().as_str()))
                .map(|def| Value::Object(self.summary(def)))
                .collect(),
        ))
    }

    /// The limit of a search: `limit` (Python) or `options.limit` (TypeScript), absent or
    /// `null` for [`DEFAULT_SEARCH_LIMIT`], clamped to [`MAX_SEARCH_LIMIT`].
    fn limit(&self, global: &str, args: &Value) -> Result<usize, BindingError> {
        let name = self.sdk.search;
        let given = match (args.get("limit"), args.get("options")) {
            (Some(limit), _) if !limit.is_null() => Some(limit),
            (_, None | Some(Value::Null)) => None,
            (_, Some(Value::Object(options))) => options.get("limit").filter(|l| !l.is_null()),
            (_, Some(_)) => {
                return Err(invalid(format!(
                    "{global}.{name}: the options must be an object such as {{ limit: 5 }}"
                )));
            }
        };
        let Some(given) = given else {
            return Ok(DEFAULT_SEARCH_LIMIT);
        };
        // An integer too large for `u64` (a double such as `1e300`) only clamps.
        let whole = |f: f64| f.is_finite() && f >= 0.0 && f.fract() == 0.0;
        let limit = given
            .as_u64()
            .or_else(|| given.as_f64().filter(|f| whole(*f)).map(|_| u64::MAX));
        let Some(limit) = limit else {
            return Err(invalid(format!(
                "{global}.{name}: the limit must be a non-negative integer (at most {MAX_SEARCH_LIMIT} tools are returned), not {given}"
            )));
        };
        Ok(usize::try_from(limit)
            .unwrap_or(MAX_SEARCH_LIMIT)
            .min(MAX_SEARCH_LIMIT))
    }

    /// `$describe`: one tool the program may call, or `null`.
    fn describe(
        &self,
        global: &str,
        args: &Value,
        callable: &dyn Fn(&str) -> bool,
    ) -> Result<Value, BindingError> {
        let Some(tool) = args.get("name").and_then(Value::as_str) else {
            return Err(invalid(format!(
                "{global}.{}: the name must be a string",
                self.sdk.describe
            )));
        };
        if !callable(tool) {
            return Ok(Value::Null);
        }
        let Some(def) = self.view.get(tool) else {
            return Ok(Value::Null);
        };
        let mut described = self.summary(def);
        described.insert(
            "parameters".to_owned(),
            tools_json::clone_deep(def.enforced_parameters()),
        );
        Ok(Value::Object(described))
    }

    /// `{name, description, signature}` of a tool, the signature written like the SDK.
    fn summary(&self, def: &ToolDefinition) -> Map<String, Value> {
        let sdk = ToolSdkSchema::new(
            def.name().as_str(),
            def.description(),
            tools_json::clone_deep(def.enforced_parameters()),
            tools_json::clone_deep(def.output().schema().enforced_json()),
        );
        let mut summary = Map::new();
        summary.insert("name".to_owned(), Value::String(sdk.name.clone()));
        summary.insert(
            "description".to_owned(),
            Value::String(sdk.description.clone()),
        );
        summary.insert(
            "signature".to_owned(),
            Value::String(self.language.render_signature(&sdk)),
        );
        summary
    }
}

/// A helper call with arguments it cannot use.
fn invalid(message: String) -> BindingError {
    BindingError::with_code(ErrorCode::InvalidArgs, message)
}
