//! `ask` answered by the MCP client through elicitation (a form with one boolean).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::ElicitationMode;
use serde_json::{Value, json};
use tools_runtime::{
    ToolError,
    approval::{Approval, ApprovalOutcome, ApprovalRequest},
};

/// The property of the approval form the client sets to `true` to allow the call.
pub const APPROVE_FIELD: &str = "approve";
/// The optional property of the approval form that, set to `true` with `approve`, allows
/// the same call for the rest of the session without asking again.
pub const SESSION_FIELD: &str = "session";

/// Whether the client declared form elicitation.
pub(super) fn client_can_answer(peer: &rmcp::Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// An approval service that asks the client: accepted with `approve: true` allows the call
/// once (with `session: true` too, for the rest of the session: the runtime's approval
/// store remembers it for the served scope); accepted with `approve: false` or declined rejects it; cancelled cancels it; a
/// failed request is an error (all three refusals are `APPROVAL_DENIED`).
pub(super) fn by_elicitation(peer: rmcp::Peer<RoleServer>) -> Arc<dyn Approval> {
    Arc::new(move |request: ApprovalRequest| {
        let peer = peer.clone();
        async move { ask(&peer, &request).await }
    })
}

async fn ask(
    peer: &rmcp::Peer<RoleServer>,
    request: &ApprovalRequest,
) -> Result<ApprovalOutcome, ToolError> {
    let mut message = format!("Allow the tool call {:?}?", request.tool.as_str());
    if let Some(reason) = &request.reason {
        message.push_str(" Reason: ");
        message.push_str(reason);
    }
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                APPROVE_FIELD: {
                    "type": "boolean",
                    "title": "Allow this call",
                    "description": format!("Allow {} to run", request.tool.as_str())
                },
                SESSION_FIELD: {
                    "type": "boolean",
                    "title": "Also allow it again this session",
                    "description": "Do not ask again for the same call in this session",
                    "default": false
                }
            },
            "required": [APPROVE_FIELD]
        }
    }))
    .map_err(|e| ToolError::new(format!("could not build the approval form: {e}")))?;
    let answer = tokio::select! {
        answer = peer.create_elicitation(params) => answer,
        () = request.cancel.cancelled() => return Ok(ApprovalOutcome::Cancelled),
    };
    let answer = answer.map_err(|e| ToolError::new(format!("the client did not answer: {e}")))?;
    Ok(match answer.action {
        ElicitationAction::Accept => {
            let field = |name: &str| {
                answer
                    .content
                    .as_ref()
                    .and_then(|content| content.get(name))
                    .and_then(Value::as_bool)
                    == Some(true)
            };
            match (field(APPROVE_FIELD), field(SESSION_FIELD)) {
                (true, true) => ApprovalOutcome::AllowedForSession,
                (true, false) => ApprovalOutcome::AllowedOnce,
                (false, _) => ApprovalOutcome::Rejected,
            }
        }
        ElicitationAction::Cancel => ApprovalOutcome::Cancelled,
        // `Decline`, and any answer a later protocol adds: not an approval.
        _ => ApprovalOutcome::Rejected,
    })
}
