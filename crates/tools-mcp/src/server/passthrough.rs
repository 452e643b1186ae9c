//! Resources and prompts a front serves besides its tools: a [`Passthrough`] (the gateway's
//! upstream servers) answers `resources/*` and `prompts/*` for every session, told who is
//! asking.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};
use tools_runtime::hooks::Principal;

/// A boxed future of a passthrough's answer.
pub type PassthroughFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, McpError>> + Send + 'a>>;

/// Who is asking: the principal the HTTP front authenticated (none over stdio or without
/// `[auth]`), and the session.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    /// The authenticated principal.
    pub principal: Option<Arc<Principal>>,
    /// The streamable-HTTP session id.
    pub session: Option<String>,
}

/// Resources, resource templates and prompts served next to the tools.
pub trait Passthrough: Send + Sync + 'static {
    /// `resources/list`.
    fn list_resources<'a>(&'a self, caller: &'a Caller) -> PassthroughFuture<'a, Vec<Resource>>;
    /// `resources/templates/list`.
    fn list_resource_templates<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> PassthroughFuture<'a, Vec<ResourceTemplate>>;
    /// `resources/read` of `uri`.
    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
        caller: &'a Caller,
    ) -> PassthroughFuture<'a, ReadResourceResult>;
    /// `prompts/list`.
    fn list_prompts<'a>(&'a self, caller: &'a Caller) -> PassthroughFuture<'a, Vec<Prompt>>;
    /// `prompts/get` of `name` with `arguments`.
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        caller: &'a Caller,
    ) -> PassthroughFuture<'a, GetPromptResult>;
}
