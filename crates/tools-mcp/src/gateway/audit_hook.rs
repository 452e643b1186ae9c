//! The gateway's audit: a pre-execute hook that notes when each call started (and refuses
//! calls while the log cannot be written), and a result observer that writes the call's
//! line before its result is returned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Map, json};
use sha2::{Digest, Sha256};
use tools_runtime::hooks::{Execution, PreDecision, PreNext, PreRequest, from_fn};
use tools_runtime::tools::Registry;
use tools_runtime::{ErrorCode, ToolError, ToolResult};

use super::policy::{self, SharedPolicy};
use crate::audit::AuditLog;
use crate::auth::hex;

/// The most calls whose start is remembered at once; past it the oldest notes are dropped
/// (their lines say `duration_ms: null`). A note outlives its call only when the call's
/// future was dropped before it completed.
const MAX_STARTS: usize = 1 << 16;

/// What the audit hooks share.
pub(crate) struct Audit {
    log: AuditLog,
    policy: SharedPolicy,
    registry: Registry,
    starts: Mutex<HashMap<tools_registry::ExecutionToken, Instant>>,
}

impl Audit {
    pub(crate) fn new(log: AuditLog, policy: SharedPolicy, registry: Registry) -> Arc<Audit> {
        Arc::new(Audit {
            log,
            policy,
            registry,
            starts: Mutex::new(HashMap::new()),
        })
    }

    fn starts(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<tools_registry::ExecutionToken, Instant>> {
        self.starts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pre-execute hook (installed first, so it sees every call the policy sees).
    pub(crate) fn hook(self: &Arc<Audit>) -> impl tools_runtime::hooks::Hook<PreRequest> {
        let audit = Arc::clone(self);
        from_fn(move |req: PreRequest, next: PreNext| {
            let audit = Arc::clone(&audit);
            async move {
                {
                    let mut starts = audit.starts();
                    if starts.len() >= MAX_STARTS {
                        starts.clear();
                    }
                    starts.insert(req.execution().token(), Instant::now());
                }
                if !audit.log.is_healthy() {
                    return Ok::<_, ToolError>(PreDecision::Deny(
                        "the gateway's audit log cannot be written, so no call runs".to_owned(),
                    ));
                }
                next.run(req).await
            }
        })
    }

    /// The result observer: one line per call.
    pub(crate) fn observe(&self, exec: &Execution, result: &ToolResult) {
        let started = self.starts().remove(&exec.token());
        let tool = exec.name().as_str();
        let arguments = exec.arguments().as_value();
        let args_text = serde_json::to_vec(arguments).unwrap_or_default();
        let code = result.error_code();
        let (decision, reason) = match code {
            Some(ErrorCode::Denied) => ("deny", Some(result.text())),
            Some(ErrorCode::ApprovalDenied) => ("ask", Some(result.text())),
            Some(ErrorCode::RateLimited) => ("limited", Some(result.text())),
            Some(ErrorCode::ToolChanged) => ("withheld", Some(result.text())),
            _ => {
                let policy = self.policy.load();
                match policy::decide(
                    &policy,
                    &self.registry,
                    tool,
                    arguments,
                    exec.principal().map(|p| &**p),
                ) {
                    Some(PreDecision::Ask(reason)) => ("ask", reason),
                    _ => ("allow", None),
                }
            }
        };
        let principal = exec.principal();
        let mut line = Map::with_capacity(18);
        line.insert("session".into(), json!(exec.session()));
        line.insert("principal".into(), json!(principal.map(|p| p.subject())));
        line.insert(
            "token_id".into(),
            json!(principal.and_then(|p| p.token_id())),
        );
        line.insert("tool".into(), json!(tool));
        line.insert(
            "server".into(),
            json!(crate::split_exposed_name(tool).map(|(server, _)| server)),
        );
        line.insert("call_id".into(), json!(exec.call_id()));
        if exec.parent().is_some() {
            line.insert("root_call_id".into(), json!(exec.root_call_id()));
        }
        line.insert("decision".into(), json!(decision));
        line.insert("reason".into(), json!(reason));
        line.insert(
            "code".into(),
            json!(result.code().map(|c| c.as_str().to_owned())),
        );
        line.insert(
            "duration_ms".into(),
            json!(started.map(|s| (s.elapsed().as_secs_f64() * 1e6).round() / 1e3)),
        );
        line.insert("bytes_in".into(), json!(args_text.len()));
        line.insert("bytes_out".into(), json!(bytes_out(result)));
        line.insert(
            "args_sha256".into(),
            json!(hex(&Sha256::digest(&args_text))),
        );
        if self.log.config().arguments {
            line.insert("arguments".into(), arguments.clone());
        }
        // An error is logged and makes the log unhealthy (the next calls are refused).
        let _ = self.log.write(line);
    }
}

/// The bytes of the result as JSON (its content, value and error).
fn bytes_out(result: &ToolResult) -> usize {
    serde_json::to_vec(&result.to_json()).map_or(0, |b| b.len())
}
