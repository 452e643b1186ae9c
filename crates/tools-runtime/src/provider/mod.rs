//! Provider adapters: the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages
//! wires on both sides of a turn.
//!
//! - [`Provider::declare`]: the tools as the provider's request declares them, in strict
//!   mode where a tool's schema has a strict form, and the typed reason ([`NotStrict`])
//!   where it has none (that tool is declared without `strict`, never with a wrong schema).
//!   A strict form is derived from the schema the runtime enforces, and lowered to what the
//!   provider's strict mode accepts: a keyword it refuses is left out of the declaration
//!   ([`Declarations::left_out`]) and still enforced when the call arrives. A tool name the
//!   wires refuse (`^[a-zA-Z0-9_-]{1,64}$`) is declared under a wire name made for it
//!   ([`Declarations::wire_name`]), which [`Provider::parse`] maps back.
//! - [`Provider::parse`]: a model response's tool calls as [`ToolCall`]s, in the model's
//!   order, call ids kept. Arguments that are not JSON, or not lossless, become an
//!   `INVALID_ARGS` result the model reads, quoting a bounded excerpt of the text; arguments
//!   decoded under a strict schema are mapped back first.
//! - [`Provider::render`]: the results as the provider's result messages, one per call in
//!   the model's order, then every call's additional contexts (and, for the wires whose tool
//!   results cannot carry images, the images) after all the results of the step.
//! - [`ToolRuntime::run_turn`](crate::ToolRuntime::run_turn) does the three with
//!   `run_batch` in between.
//!
//! The wire types are written here as `serde_json` values, against the providers' API
//! references, and checked against the official Python SDKs' own types (pydantic models of
//! `openai` and `anthropic`) by `cargo xtask wire-check`. A Rust SDK crate would bring an
//! HTTP client and the whole API for the three shapes used here.
//!
//! # Layout
//!
//! Each wire is one file implementing the private trait `Wire` (its tool declaration,
//! its walk of a response, its result messages, and the strict mode it takes):
//! `openai_responses.rs`, `openai_chat.rs`, `anthropic.rs`. What the wires share stays
//! apart from them: the declaration loop and the dispatch here, the strict lowering and
//! its `Dialect`s (`strict.rs`), the wire names (`names.rs`), the response walking
//! helpers and the making of a call from its arguments (`parse.rs`), and the pieces of a
//! result (`render.rs`). The public methods of [`Provider`] reach the wire through one
//! match (`with_wire!`), statically: each operation is a monomorphic function of its
//! wire.
//!
//! Adding a wire takes a file implementing `Wire` (a `mod` line here), a [`Provider`]
//! variant, and its arm in `with_wire!`; a strict mode no existing `Dialect` describes
//! is written in the wire's file (`Dialect::accepting`). Nothing else in the crate matches
//! on [`Provider`]; the crate's tests, the `tests/wire` fixtures and `cargo xtask
//! wire-check` list the wires they cover and take the new one only when told.

mod anthropic;
mod names;
mod openai_chat;
mod openai_responses;
mod parse;
mod render;
mod search;
mod strict;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{ToolCall, ToolResult};
use tools_registry::{AgentScope, SEARCH_TOOLS, ToolSpec};

pub use search::{DEFAULT_SEARCH_LIMIT, SearchOffer, SearchStep};
pub use strict::NotStrict;

use crate::ToolRuntime;
use names::WireNames;
use strict::{Dialect, Strict};

/// Adds `"strict": strict` to a wire's tool declaration (`object`) when the declaration
/// says whether the tool is strict.
fn add_strict(object: Option<&mut serde_json::Map<String, Value>>, strict: Option<bool>) {
    if let (Some(map), Some(strict)) = (object, strict) {
        map.insert("strict".into(), Value::Bool(strict));
    }
}

/// One wire: what a provider's declarations, responses and result messages look like.
/// Implemented by a unit type in the wire's own file; [`Provider`]'s methods call it
/// through `with_wire!`, with static dispatch.
trait Wire {
    /// The strict mode of the provider: the constraint keywords its strict declarations
    /// may carry (the others are left out and enforced by the runtime).
    const STRICT: Dialect;

    /// One tool's declaration: its wire `name`, its `description`, its parameter `schema`
    /// (the strict form when it has one), and `"strict": strict` when strict mode was
    /// asked for (`None` when it was not).
    fn tool(name: &str, description: &str, schema: Value, strict: Option<bool>) -> Value;

    /// The tool calls of a model response (as [`Provider::parse`] takes it), in the
    /// model's order, each made by `parse::from_text` or `parse::from_value`; `bad` makes
    /// the error for a response that does not have the wire's shape.
    fn calls(
        response: parse::Part<'_>,
        declarations: Option<&Declarations>,
        bad: impl Fn(String) -> crate::Error,
    ) -> Result<Vec<ModelCall>, crate::Error>;

    /// The result messages of one step ([`Provider::render`]): one per call in `calls`'
    /// order, then the step's contexts. `results[i]` is the result of `calls[i]`.
    fn messages(calls: &[ModelCall], results: &[ToolResult]) -> Vec<Value>;
}

/// Evaluates `$body` with the type `$wire` naming the [`Wire`] of `$provider`: the one
/// place that lists the wires.
macro_rules! with_wire {
    ($provider:expr, $wire:ident => $body:expr) => {
        match $provider {
            Provider::OpenAiResponses => {
                type $wire = openai_responses::OpenAiResponses;
                $body
            }
            Provider::OpenAiChat => {
                type $wire = openai_chat::OpenAiChat;
                $body
            }
            Provider::Anthropic => {
                type $wire = anthropic::Anthropic;
                $body
            }
        }
    };
}

/// A model API whose tool wire the runtime speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Responses: `function` tools, `function_call` items, `function_call_output`.
    OpenAiResponses,
    /// OpenAI Chat Completions: `tools[].function`, `tool_calls`, `role: tool` messages.
    OpenAiChat,
    /// Anthropic Messages: `tools[].input_schema`, `tool_use` and `tool_result` blocks.
    Anthropic,
}

impl Provider {
    /// The tools as this provider's request declares them. With `strict`, each tool whose
    /// schema has a strict form is declared strict; the others are declared as they are,
    /// and [`Declarations::refused`] says why.
    ///
    /// A strict form is derived from the schema the runtime enforces (the parameter schema
    /// lowered to the enforced subset): a tool whose schema has a part the runtime does not
    /// enforce is not declared strict ([`NotStrict::Unenforced`]). A keyword the provider's
    /// strict mode refuses (Anthropic: `minimum`, …) is left out of the strict form and
    /// written into the node's `description` (`{minimum: 0}`); the runtime still enforces
    /// it, so a call that breaks it is refused with `INVALID_ARGS`
    /// ([`Declarations::left_out`] lists them). A tool without parameters is strict as the
    /// closed empty object.
    ///
    /// A tool whose name the wires refuse (`^[a-zA-Z0-9_-]{1,64}$`: `math.factorial`) is
    /// declared under a wire name made for it (`math_factorial`, with a suffix when another
    /// tool has that name; [`Declarations::wire_name`]); [`Provider::parse`] maps it back
    /// when given these declarations.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_runtime::{ToolDefinition, ToolRuntime, tools::OutputDecl, provider::Provider};
    ///
    /// let runtime = ToolRuntime::new();
    /// let tool = ToolDefinition::builder("math.pow", "Raise to a power.")
    ///     .parameters(json!({
    ///         "type": "object",
    ///         "properties": {"n": {"type": "integer", "minimum": 0}},
    ///         "required": ["n"],
    ///         "additionalProperties": false
    ///     }))
    ///     .output(OutputDecl::text(json!({"type": "integer"})))
    ///     .body(|args, _ctx| async move { Ok(args.as_value()["n"].clone()) })
    ///     .build()?;
    /// runtime.register(tool)?.keep();
    ///
    /// let declarations = Provider::Anthropic.declare(&runtime.wire_schemas(None), true);
    /// assert!(declarations.is_strict("math.pow"));
    /// assert_eq!(declarations.wire_name("math.pow"), "math_pow");
    /// assert_eq!(declarations.tools()[0]["name"], "math_pow");
    /// // Anthropic's strict mode refuses `minimum`: left out, and enforced by the runtime.
    /// assert_eq!(declarations.left_out("math.pow"), [("properties.n".to_owned(), "minimum")]);
    /// let n = &declarations.tools()[0]["input_schema"]["properties"]["n"];
    /// assert_eq!(n, &json!({"description": "{minimum: 0}", "type": "integer"}));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn declare(self, tools: &[ToolSpec], strict: bool) -> Declarations {
        with_wire!(self, W => declare::<W>(self, tools, strict))
    }

    /// The tool calls of a model response (the whole response, or its `output` list, its
    /// message, or its `content` list), in the model's order.
    ///
    /// Pass the declarations the request was made with: a call decoded under a strict
    /// declaration is mapped back to the tool's own shape, and a call to a wire name made
    /// for a tool ([`Declarations::wire_name`]) is a call to that tool. Without them, each
    /// call is to the name the model wrote, with the arguments as sent.
    ///
    /// The response may be borrowed (`&Value`: the calls' ids, names and arguments are
    /// copied out of it) or handed over (`Value`: they are moved out, and the rest is
    /// dropped). A host that parsed the response only to run its calls hands it over:
    /// for Anthropic, whose arguments are JSON values, that saves a deep copy per call.
    /// Both give the same calls.
    ///
    /// # Errors
    ///
    /// [`crate::Error::ProviderResponse`] when the response does not have this provider's
    /// shape (a call without an id or a name, a `content` that is not a list, …).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_runtime::provider::Provider;
    ///
    /// let response = json!({"content": [
    ///     {"type": "text", "text": "Reading it."},
    ///     {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "/a"}},
    /// ]});
    /// let borrowed = Provider::Anthropic.parse(&response, None)?;
    /// let owned = Provider::Anthropic.parse(response, None)?;
    /// assert_eq!(borrowed[0].call_id, "toolu_1");
    /// assert_eq!(owned[0].call_id, "toolu_1");
    /// let Ok(call) = &owned[0].call else { unreachable!() };
    /// assert_eq!(call.json_arguments().map(|a| a.to_string()), Some(r#"{"path":"/a"}"#.into()));
    /// # Ok::<(), tools_runtime::Error>(())
    /// ```
    pub fn parse<'a>(
        self,
        response: impl Into<ModelResponse<'a>>,
        declarations: Option<&Declarations>,
    ) -> Result<Vec<ModelCall>, crate::Error> {
        let bad = |message: String| crate::Error::ProviderResponse {
            provider: self,
            message,
        };
        with_wire!(self, W => W::calls(response.into().0, declarations, bad))
    }

    /// The result messages of one step: one per call in `calls`' order, then the step's
    /// contexts. `results[i]` is the result of `calls[i]`.
    pub fn render(self, calls: &[ModelCall], results: &[ToolResult]) -> Vec<Value> {
        with_wire!(self, W => W::messages(calls, results))
    }
}

/// [`Provider::declare`] for the wire `W` of `provider`.
fn declare<W: Wire>(provider: Provider, tools: &[ToolSpec], strict: bool) -> Declarations {
    let mut declared = Vec::with_capacity(tools.len());
    let mut strict_forms = HashMap::new();
    let mut refused = Vec::new();
    let names = WireNames::new(tools.iter().map(|tool| tool.name.as_str()));
    for tool in tools {
        let parameters = tool.parameters.as_value();
        let form = if strict {
            match Strict::new(parameters, W::STRICT) {
                Ok(form) => Some(form),
                Err(reason) => {
                    refused.push((tool.name.as_str().to_owned(), reason));
                    None
                }
            }
        } else {
            None
        };
        let schema = form.as_ref().map_or(parameters, |f| &f.schema).clone();
        let is_strict = form.is_some();
        let name = names.wire(tool.name.as_str());
        declared.push(W::tool(
            name,
            &tool.description,
            schema,
            strict.then_some(is_strict),
        ));
        if let Some(form) = form {
            strict_forms.insert(tool.name.as_str().to_owned(), form);
        }
    }
    Declarations {
        provider,
        tools: declared,
        strict: Arc::new(strict_forms),
        refused,
        names: Arc::new(names),
        search: false,
    }
}

/// A model response handed to [`Provider::parse`] or
/// [`ToolRuntime::run_turn`](crate::ToolRuntime::run_turn): borrowed (`&Value`) or owned
/// (`Value`), made by `into()`.
#[derive(Clone, Debug)]
pub struct ModelResponse<'a>(Cow<'a, Value>);

impl<'a> From<&'a Value> for ModelResponse<'a> {
    fn from(response: &'a Value) -> ModelResponse<'a> {
        ModelResponse(Cow::Borrowed(response))
    }
}

impl From<Value> for ModelResponse<'static> {
    fn from(response: Value) -> ModelResponse<'static> {
        ModelResponse(Cow::Owned(response))
    }
}

/// A provider's tool declarations, and what strict mode could not cover.
#[derive(Clone, Debug)]
pub struct Declarations {
    provider: Provider,
    tools: Vec<Value>,
    strict: Arc<HashMap<String, Strict>>,
    refused: Vec<(String, NotStrict)>,
    names: Arc<WireNames>,
    /// Whether the runtime answers the model's searches (a client search was declared).
    search: bool,
}

impl Declarations {
    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The `tools` array of the request.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// The tools declared without `strict` although it was asked for, and why.
    pub fn refused(&self) -> &[(String, NotStrict)] {
        &self.refused
    }

    /// Whether `tool` is declared strict.
    pub fn is_strict(&self, tool: &str) -> bool {
        self.strict.contains_key(tool)
    }

    /// The keywords of `tool`'s enforced schema its strict declaration leaves out, because
    /// the provider's strict mode refuses them: each as the path of its node in the
    /// parameter schema (`properties.n`, `""` for the root) and the keyword (`minimum`).
    /// The runtime still enforces them when the call arrives. Empty for a tool not declared
    /// strict.
    pub fn left_out(&self, tool: &str) -> &[(String, &'static str)] {
        self.strict.get(tool).map_or(&[], Strict::left_out)
    }

    /// The name `tool` is declared under: its own name when the wires take it
    /// (`^[a-zA-Z0-9_-]{1,64}$`), else the wire name made for it.
    pub fn wire_name<'a>(&'a self, tool: &'a str) -> &'a str {
        self.names.wire(tool)
    }

    /// The tool a name on the wire stands for: the tool a wire name was made for, else the
    /// name itself.
    pub fn tool_name<'a>(&'a self, wire: &'a str) -> &'a str {
        self.names.tool(wire)
    }

    /// Whether these declarations offer the runtime's own tool search (`search_tools`, or
    /// the client `tool_search` of Responses), which
    /// [`ToolRuntime::run_turn`](crate::ToolRuntime::run_turn) answers.
    pub fn offers_search(&self) -> bool {
        self.search
    }

    pub(crate) fn strict_form(&self, tool: &str) -> Option<&Strict> {
        self.strict.get(tool)
    }
}

/// One tool call of a model response: its id, its name, and the call to run, or the
/// result it already has (arguments that are not JSON or not lossless).
#[derive(Clone, Debug)]
pub struct ModelCall {
    /// The provider's call id (`call_id`, `id`), echoed in the result message.
    pub call_id: String,
    /// The tool's name as the model wrote it (a wire name made for a tool stays as
    /// written; the call carries the tool's own name).
    pub name: String,
    /// The call, or its `INVALID_ARGS` result. Arguments read from the wire are checked
    /// at the lossless boundary here, once: the call carries that snapshot
    /// ([`ToolCall::json_arguments`]) and the pipeline runs on it without copying or
    /// checking it again (arguments decoded under a strict declaration are mapped back
    /// first). Only an object some gateways send in place of text stays a wire value
    /// ([`ToolCall::arguments`]), which the pipeline checks as it checks any.
    pub call: Result<ToolCall, ToolResult>,
}

/// One step of a turn: the results in the model's order and the messages to send next.
#[derive(Clone, Debug)]
pub struct TurnStep {
    /// The calls, as parsed.
    pub calls: Vec<ModelCall>,
    /// One result per call, in the same order.
    pub results: Vec<ToolResult>,
    /// The result messages ([`Provider::render`]), with the answers of the step's searches
    /// (a Responses `tool_search_output` comes first).
    pub messages: Vec<Value>,
    /// The searches the model asked for in the step (docs/decisions.md, entry 35), in the
    /// model's order; what each found is loaded in the scope.
    pub searches: Vec<SearchStep>,
}

impl ToolRuntime {
    /// The tools of a request for `agent`'s scope, as `provider` declares them (see
    /// [`Provider::declare`] for `strict`). Without deferred tools this is
    /// `provider.declare(&self.wire_schemas(agent), strict)`; with them, the request offers
    /// a search as `offer` says (docs/decisions.md, entry 35): Responses declares the
    /// deferred tools with `defer_loading: true` and a `tool_search` tool, Anthropic the
    /// deferred tools with `defer_loading: true` and a `search_tools` tool, Chat
    /// Completions a `search_tools` function and, from the step after a search, the tools
    /// it found. [`ToolRuntime::run_turn`] answers the searches.
    pub fn declare(
        &self,
        provider: Provider,
        agent: Option<&AgentScope>,
        strict: bool,
        offer: &SearchOffer,
    ) -> Declarations {
        let view = self.inner.registry.view(agent);
        if search::offers(&view) {
            search::declare(provider, &view, strict, offer)
        } else {
            provider.declare(&view.wire_schemas(), strict)
        }
    }

    /// Loads deferred tools in `agent`'s conversation (the registry's own for `None`).
    fn load(&self, agent: Option<&AgentScope>, names: &[String]) {
        let loaded = match agent {
            Some(agent) => agent.load(names),
            None => self.inner.registry.load(names),
        };
        if let Err(error) = loaded {
            tracing::warn!(%error, "the tools a search found could not be loaded");
        }
    }

    /// Runs one model response's tool calls: parses them ([`Provider::parse`]), runs the
    /// runnable ones as one batch (`run_batch`, as `agent`, cancelled by `cancel`), and
    /// renders every result ([`Provider::render`]). A response without tool calls gives an
    /// empty step. The response may be borrowed or handed over, as for
    /// [`Provider::parse`]; handing it over saves copying the calls' arguments out of it.
    ///
    /// # Errors
    ///
    /// [`crate::Error::ProviderResponse`] when the response does not have the provider's
    /// shape.
    pub async fn run_turn<'a>(
        &self,
        provider: Provider,
        response: impl Into<ModelResponse<'a>>,
        declarations: Option<&Declarations>,
        agent: Option<&AgentScope>,
        cancel: CancellationToken,
    ) -> Result<TurnStep, crate::Error> {
        let response = response.into();
        let registry = &self.inner.registry;
        let view = registry.view(agent);
        let searching =
            declarations.is_some_and(Declarations::offers_search) && search::offers(&view);
        // What the provider's own search loaded, and the Responses client searches.
        let provider_loaded = search::provider_loaded(provider, &response.0);
        let search_items = if searching && provider == Provider::OpenAiResponses {
            search::responses_search_calls(&response.0)
        } else {
            Vec::new()
        };
        let calls = provider.parse(response, declarations)?;
        let tool_name =
            |wire: &str| -> String { declarations.map_or(wire, |d| d.tool_name(wire)).to_owned() };
        if !provider_loaded.is_empty() {
            let names: Vec<String> = provider_loaded.iter().map(|n| tool_name(n)).collect();
            self.load(agent, &names);
        }
        // The searches run first, so that a call of a tool found in the same step passes.
        let mut searches = Vec::new();
        let mut answers: Vec<(String, Result<Vec<tools_registry::ToolDefinition>, String>)> =
            Vec::new();
        let search_calls = calls.iter().filter_map(|call| match &call.call {
            Ok(tool) if searching && tool.name() == SEARCH_TOOLS => Some((
                call.call_id.clone(),
                tool.json_arguments()
                    .map(|a| a.as_value().clone())
                    .or_else(|| tool.arguments().cloned())
                    .unwrap_or(Value::Null),
            )),
            _ => None,
        });
        for (call_id, arguments) in search_items.into_iter().chain(search_calls) {
            let (query, outcome) = match search::run(&view, &arguments) {
                Ok((query, found)) => {
                    let found: Vec<tools_registry::ToolDefinition> =
                        found.into_iter().cloned().collect();
                    let names: Vec<String> =
                        found.iter().map(|def| def.name().to_string()).collect();
                    self.load(agent, &names);
                    (query, Ok(found))
                }
                Err((query, error)) => (query, Err(error)),
            };
            searches.push(SearchStep {
                call_id: call_id.clone(),
                query,
                found: outcome
                    .as_ref()
                    .map(|found| found.iter().map(|def| def.name().clone()).collect())
                    .unwrap_or_default(),
                error: outcome.as_ref().err().cloned(),
            });
            answers.push((call_id, outcome));
        }
        let answer_of =
            |call_id: &str| answers.iter().find(|(id, _)| id == call_id).map(|(_, a)| a);
        let mut runnable = Vec::new();
        for call in &calls {
            if let Ok(call_value) = &call.call
                && answer_of(&call.call_id).is_none()
            {
                runnable.push(match agent {
                    Some(agent) => call_value.clone().with_agent(agent.clone()),
                    None => call_value.clone(),
                });
            }
        }
        let mut ran = self.run_batch(runnable, cancel).await.into_iter();
        let mut results = Vec::with_capacity(calls.len());
        for call in &calls {
            let result = match (&call.call, answer_of(&call.call_id)) {
                (Ok(_), Some(Ok(found))) => search::answered(&found.iter().collect::<Vec<_>>()),
                (Ok(_), Some(Err(error))) => {
                    ToolResult::coded(tools_json::ErrorCode::InvalidArgs, error.clone())
                }
                (Ok(_), None) => ran
                    .next()
                    .unwrap_or_else(ToolResult::aborted_before_dispatch),
                (Err(result), _) => result.clone(),
            };
            results.push(result);
        }
        let mut messages = provider.render(&calls, &results);
        if let Some(declarations) = declarations {
            search::answer(provider, &answers, declarations, &mut messages);
        }
        Ok(TurnStep {
            calls,
            results,
            messages,
            searches,
        })
    }
}
