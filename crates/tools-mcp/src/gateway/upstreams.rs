//! The gateway's resources and prompts: every upstream server's, served under the same
//! identity, policy and audit as its tools.
//!
//! - Prompts are renamed `<server>__<prompt>` like tools; resources and templates keep
//!   their URIs (a client hands them back as given) and get `<server>__<name>` names. A
//!   read is routed to the server that listed the URI, or whose template matches it; a URI
//!   no listing has is looked for once more, in fresh listings, before it is refused.
//! - The policy sees a read as a call of `<server>__<uri>` and a prompt as
//!   `<server>__<prompt>` (with the prompt's arguments), so `deny` and `ask` globs and
//!   identity rules apply. Nobody can be asked about a read or a prompt, so `ask` refuses:
//!   fail closed.
//! - Each read and fetch is one audit line (`kind` `resource` or `prompt`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use regex::Regex;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};
use serde_json::{Map, Value, json};
use tools_runtime::hooks::PreDecision;
use tools_runtime::tools::Registry;

use super::policy::{self, SharedPolicy};
use crate::audit::AuditLog;
use crate::{Caller, ImportedServer, Passthrough, PassthroughFuture, SEPARATOR};

/// Where resource URIs lead: the URIs and templates of the last listings, by server index.
#[derive(Default)]
struct Routes {
    uris: Vec<(String, usize)>,
    templates: Vec<(Regex, usize)>,
}

/// The upstream servers' resources and prompts.
pub(crate) struct Upstreams {
    servers: Arc<Vec<ImportedServer>>,
    policy: SharedPolicy,
    registry: Registry,
    audit: Option<AuditLog>,
    routes: Mutex<Routes>,
}

impl Upstreams {
    pub(crate) fn new(
        servers: Arc<Vec<ImportedServer>>,
        policy: SharedPolicy,
        registry: Registry,
        audit: Option<AuditLog>,
    ) -> Upstreams {
        Upstreams {
            servers,
            policy,
            registry,
            audit,
            routes: Mutex::new(Routes::default()),
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every server's resources and templates, listed now; the routes follow them. A
    /// server that fails is left out (and logged).
    async fn list_all(&self) -> (Vec<Resource>, Vec<ResourceTemplate>) {
        let (mut resources, mut templates) = (Vec::new(), Vec::new());
        let mut routes = Routes::default();
        for (index, server) in self.servers.iter().enumerate() {
            match server.list_resources().await {
                Ok(listed) => {
                    for mut resource in listed {
                        if routes.uris.iter().any(|(uri, _)| *uri == resource.uri) {
                            tracing::warn!(server = %server.name(), uri = %resource.uri, "another server lists this resource URI first; reads go there");
                            continue;
                        }
                        routes.uris.push((resource.uri.clone(), index));
                        resource.name = format!("{}{SEPARATOR}{}", server.name(), resource.name);
                        resources.push(resource);
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %server.name(), error = %e, "resources not listed")
                }
            }
            match server.list_resource_templates().await {
                Ok(listed) => {
                    for mut template in listed {
                        if let Some(regex) = template_regex(&template.uri_template) {
                            routes.templates.push((regex, index));
                        }
                        template.name = format!("{}{SEPARATOR}{}", server.name(), template.name);
                        templates.push(template);
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %server.name(), error = %e, "resource templates not listed")
                }
            }
        }
        *self.routes() = routes;
        (resources, templates)
    }

    /// The server a read of `uri` goes to, from the last listings.
    fn route(&self, uri: &str) -> Option<usize> {
        let routes = self.routes();
        routes
            .uris
            .iter()
            .find(|(listed, _)| listed == uri)
            .map(|(_, index)| *index)
            .or_else(|| {
                routes
                    .templates
                    .iter()
                    .find(|(regex, _)| regex.is_match(uri))
                    .map(|(_, index)| *index)
            })
    }

    /// The policy's verdict on `name` (with `args`) for `caller`: `Err` refuses.
    fn check(
        &self,
        name: &str,
        args: &Value,
        caller: &Caller,
    ) -> Result<(), (String, &'static str)> {
        let policy = self.policy.load();
        match policy::decide(
            &policy,
            &self.registry,
            name,
            args,
            caller.principal.as_deref(),
        ) {
            Some(PreDecision::Deny(reason)) => Err((reason, "DENIED")),
            Some(PreDecision::Ask(reason)) => Err((
                format!(
                    "{}; nobody can be asked about a resource or prompt, so it is refused",
                    reason.unwrap_or_else(|| format!("{name:?} needs approval"))
                ),
                "APPROVAL_DENIED",
            )),
            Some(PreDecision::Allow) | None => Ok(()),
        }
    }

    /// One audit line for a read or a fetch.
    #[allow(clippy::too_many_arguments)]
    fn audit(
        &self,
        kind: &str,
        name: &str,
        server: Option<&str>,
        caller: &Caller,
        outcome: Outcome<'_>,
        started: Instant,
        bytes_out: usize,
    ) {
        let Some(log) = &self.audit else {
            return;
        };
        let mut line = Map::new();
        line.insert("kind".into(), json!(kind));
        line.insert("session".into(), json!(caller.session));
        line.insert(
            "principal".into(),
            json!(caller.principal.as_ref().map(|p| p.subject())),
        );
        line.insert(
            "token_id".into(),
            json!(caller.principal.as_ref().and_then(|p| p.token_id())),
        );
        line.insert("name".into(), json!(name));
        line.insert("server".into(), json!(server));
        let (decision, reason, code) = match outcome {
            Outcome::Done => ("allow", None, None),
            Outcome::Failed(why) => ("allow", Some(why), Some("UPSTREAM_ERROR")),
            Outcome::Refused(reason, code) => (
                if code == "DENIED" { "deny" } else { "ask" },
                Some(reason),
                Some(code),
            ),
        };
        line.insert("decision".into(), json!(decision));
        line.insert("reason".into(), json!(reason));
        line.insert("code".into(), json!(code));
        line.insert(
            "duration_ms".into(),
            json!((started.elapsed().as_secs_f64() * 1e6).round() / 1e3),
        );
        line.insert("bytes_out".into(), json!(bytes_out));
        let _ = log.write(line);
    }

    async fn read(&self, uri: &str, caller: &Caller) -> Result<ReadResourceResult, McpError> {
        let started = Instant::now();
        if self.audit.as_ref().is_some_and(|log| !log.is_healthy()) {
            return Err(refusal(
                "the gateway's audit log cannot be written",
                "DENIED",
            ));
        }
        let index = match self.route(uri) {
            Some(index) => Some(index),
            None => {
                self.list_all().await;
                self.route(uri)
            }
        };
        let Some(server) = index.and_then(|i| self.servers.get(i)) else {
            return Err(McpError::resource_not_found(
                format!("no upstream server lists the resource {uri:?}"),
                None,
            ));
        };
        let name = format!("{}{SEPARATOR}{uri}", server.name());
        if let Err((reason, code)) = self.check(&name, &Value::Null, caller) {
            let refused = Outcome::Refused(&reason, code);
            self.audit(
                "resource",
                &name,
                Some(server.name()),
                caller,
                refused,
                started,
                0,
            );
            return Err(refusal(&reason, code));
        }
        let result = server.read_resource(uri).await;
        let bytes = result
            .as_ref()
            .map_or(0, |r| serde_json::to_vec(r).map_or(0, |b| b.len()));
        let failed = result.as_ref().err().map(ToString::to_string);
        self.audit(
            "resource",
            &name,
            Some(server.name()),
            caller,
            failed.as_deref().map_or(Outcome::Done, Outcome::Failed),
            started,
            bytes,
        );
        result.map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        caller: &Caller,
    ) -> Result<GetPromptResult, McpError> {
        let started = Instant::now();
        if self.audit.as_ref().is_some_and(|log| !log.is_healthy()) {
            return Err(refusal(
                "the gateway's audit log cannot be written",
                "DENIED",
            ));
        }
        let Some((server_name, prompt)) = crate::split_exposed_name(name) else {
            return Err(McpError::invalid_params(
                format!("unknown prompt {name:?}: gateway prompts are named <server>__<prompt>"),
                None,
            ));
        };
        let Some(server) = self.servers.iter().find(|s| s.name() == server_name) else {
            return Err(McpError::invalid_params(
                format!("unknown prompt {name:?}"),
                None,
            ));
        };
        let args = arguments.clone().map_or(Value::Null, Value::Object);
        if let Err((reason, code)) = self.check(name, &args, caller) {
            let refused = Outcome::Refused(&reason, code);
            self.audit(
                "prompt",
                name,
                Some(server_name),
                caller,
                refused,
                started,
                0,
            );
            return Err(refusal(&reason, code));
        }
        let result = server.get_prompt(prompt, arguments).await;
        let bytes = result
            .as_ref()
            .map_or(0, |r| serde_json::to_vec(r).map_or(0, |b| b.len()));
        let failed = result.as_ref().err().map(ToString::to_string);
        self.audit(
            "prompt",
            name,
            Some(server_name),
            caller,
            failed.as_deref().map_or(Outcome::Done, Outcome::Failed),
            started,
            bytes,
        );
        result.map_err(|e| McpError::internal_error(e.to_string(), None))
    }
}

/// How a read or a fetch ended, for its audit line.
#[derive(Clone, Copy)]
enum Outcome<'a> {
    /// Answered by the server.
    Done,
    /// The server failed (the error).
    Failed(&'a str),
    /// Refused by the policy (reason, code).
    Refused(&'a str, &'a str),
}

/// The JSON-RPC error of a refused read or fetch, with the code in its data.
fn refusal(reason: &str, code: &str) -> McpError {
    McpError::invalid_request(reason.to_owned(), Some(json!({ "code": code })))
}

/// A regex matching the URIs an RFC 6570 template expands to: literal text as is, a
/// simple or reserved expression as any run of characters without (simple) or with
/// (reserved: `+`, `#`) `/`, `?` and `#`; other operators as any text.
fn template_regex(template: &str) -> Option<Regex> {
    let mut pattern = String::from("^");
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        pattern.push_str(&regex::escape(&rest[..open]));
        let close = rest[open..].find('}')? + open;
        let expression = &rest[open + 1..close];
        pattern.push_str(match expression.chars().next() {
            Some('+' | '#' | '?' | '&' | ';' | '/' | '.') => ".*",
            _ => "[^/?#]*",
        });
        rest = &rest[close + 1..];
    }
    pattern.push_str(&regex::escape(rest));
    pattern.push('$');
    Regex::new(&pattern).ok()
}

impl Passthrough for Upstreams {
    fn list_resources<'a>(&'a self, _caller: &'a Caller) -> PassthroughFuture<'a, Vec<Resource>> {
        Box::pin(async move { Ok(self.list_all().await.0) })
    }

    fn list_resource_templates<'a>(
        &'a self,
        _caller: &'a Caller,
    ) -> PassthroughFuture<'a, Vec<ResourceTemplate>> {
        Box::pin(async move { Ok(self.list_all().await.1) })
    }

    fn read_resource<'a>(
        &'a self,
        uri: &'a str,
        caller: &'a Caller,
    ) -> PassthroughFuture<'a, ReadResourceResult> {
        Box::pin(self.read(uri, caller))
    }

    fn list_prompts<'a>(&'a self, _caller: &'a Caller) -> PassthroughFuture<'a, Vec<Prompt>> {
        Box::pin(async move {
            let mut prompts = Vec::new();
            for server in self.servers.iter() {
                match server.list_prompts().await {
                    Ok(listed) => prompts.extend(listed.into_iter().map(|mut prompt| {
                        prompt.name = format!("{}{SEPARATOR}{}", server.name(), prompt.name);
                        prompt
                    })),
                    Err(e) => {
                        tracing::warn!(server = %server.name(), error = %e, "prompts not listed")
                    }
                }
            }
            Ok(prompts)
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        caller: &'a Caller,
    ) -> PassthroughFuture<'a, GetPromptResult> {
        Box::pin(self.prompt(name, arguments, caller))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_what_they_expand_to() {
        let t = template_regex("test://template/{id}/data").unwrap();
        assert!(t.is_match("test://template/42/data"));
        assert!(!t.is_match("test://template/4/2/data"));
        assert!(!t.is_match("test://template/42/data/x"));
        let t = template_regex("file:///{+path}").unwrap();
        assert!(t.is_match("file:///etc/passwd"));
        let t = template_regex("db://{table}{?limit}").unwrap();
        assert!(t.is_match("db://users?limit=3"));
        // Literal text is literal.
        let t = template_regex("a.b://{x}").unwrap();
        assert!(!t.is_match("aXb://y"));
        assert!(template_regex("broken://{x").is_none());
    }
}
