//! Approval memory: answers "for the session" (per agent scope) and "always", remembered
//! under the tool's key; a batch whose calls are all remembered is not asked.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_pipeline::{PreDecision, PreNext, PreRequest, from_fn};
use tools_registry::{OutputDecl, ToolDefinition, ToolError};
use tools_runtime::{
    ErrorCode, ToolCall, ToolRuntime,
    approval::{ApprovalOutcome, ApprovalRequest},
    tools::AgentScope,
};

/// A runtime whose every call of `write` asks, answered by `answer`; the keys asked about.
fn runtime(answer: ApprovalOutcome) -> (ToolRuntime, Arc<Mutex<Vec<String>>>) {
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&asked);
    let runtime = ToolRuntime::builder()
        .approval(move |r: ApprovalRequest| {
            log.lock().unwrap().push(r.key.to_string());
            async move { Ok::<_, ToolError>(answer) }
        })
        .build()
        .unwrap();
    let write = ToolDefinition::builder("write", "Write a file.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("written")) })
        .build()
        .unwrap();
    runtime.register(write).unwrap().keep();
    // Keyed by path only: any content for an approved path.
    let append = ToolDefinition::builder("append", "Append to a file.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .approval_key(|args| args.as_value()["path"].to_string())
        .body(|_a, _c| async { Ok(json!("appended")) })
        .build()
        .unwrap();
    runtime.register(append).unwrap().keep();
    runtime
        .on_pre_execute(from_fn(|_r: PreRequest, _n: PreNext| async move {
            Ok(PreDecision::Ask(Some("writes".into())))
        }))
        .keep();
    (runtime, asked)
}

async fn call(runtime: &ToolRuntime, agent: &AgentScope, tool: &str, args: Value) -> String {
    let result = runtime
        .execute(
            ToolCall::new("c", tool, args)
                .unwrap()
                .with_agent(agent.clone()),
        )
        .await;
    assert_eq!(result.error_code(), None, "{}", result.text());
    result.text()
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_answer_holds_for_the_same_key_in_the_same_scope_only() {
    let (runtime, asked) = runtime(ApprovalOutcome::AllowedForSession);
    let first = runtime.scope();
    let args = json!({"path": "/a", "text": "x"});
    call(&runtime, &first, "write", args.clone()).await;
    // Same key, same scope: not asked again, whatever order the keys come in.
    call(&runtime, &first, "write", args.clone()).await;
    call(
        &runtime,
        &first,
        "write",
        json!({"text": "x", "path": "/a"}),
    )
    .await;
    assert_eq!(asked.lock().unwrap().len(), 1);
    // Another scope is asked.
    let second = runtime.scope();
    call(&runtime, &second, "write", args.clone()).await;
    assert_eq!(asked.lock().unwrap().len(), 2);
    // Another key is asked.
    call(
        &runtime,
        &first,
        "write",
        json!({"path": "/a", "text": "y"}),
    )
    .await;
    let keys = asked.lock().unwrap().clone();
    assert_eq!(
        keys,
        [
            r#"write {"path":"/a","text":"x"}"#,
            r#"write {"path":"/a","text":"x"}"#,
            r#"write {"path":"/a","text":"y"}"#
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_tool_keys_its_approvals_by_what_matters_to_it() {
    let (runtime, asked) = runtime(ApprovalOutcome::AllowedForSession);
    let agent = runtime.scope();
    call(
        &runtime,
        &agent,
        "append",
        json!({"path": "/log", "text": "1"}),
    )
    .await;
    call(
        &runtime,
        &agent,
        "append",
        json!({"path": "/log", "text": "2"}),
    )
    .await;
    call(
        &runtime,
        &agent,
        "append",
        json!({"path": "/other", "text": "3"}),
    )
    .await;
    assert_eq!(
        *asked.lock().unwrap(),
        [r#"append "/log""#, r#"append "/other""#]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn once_is_asked_every_time_and_always_holds_in_every_scope() {
    let (runtime, asked) = runtime(ApprovalOutcome::AllowedOnce);
    let agent = runtime.scope();
    for _ in 0..3 {
        call(&runtime, &agent, "write", json!({"path": "/a"})).await;
    }
    assert_eq!(asked.lock().unwrap().len(), 3);

    let (always, asked) = self::runtime(ApprovalOutcome::AllowedAlways);
    for _ in 0..3 {
        let scope = always.scope();
        call(&always, &scope, "write", json!({"path": "/a"})).await;
    }
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_is_not_remembered() {
    let (runtime, asked) = runtime(ApprovalOutcome::Rejected);
    let agent = runtime.scope();
    for _ in 0..2 {
        let result = runtime
            .execute(
                ToolCall::new("c", "write", json!({}))
                    .unwrap()
                    .with_agent(agent.clone()),
            )
            .await;
        assert_eq!(result.error_code(), Some(ErrorCode::ApprovalDenied));
    }
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn a_batch_does_not_ask_about_calls_approved_for_the_session() {
    let questions: Arc<Mutex<Vec<usize>>> = Arc::default();
    let log = Arc::clone(&questions);
    let runtime = ToolRuntime::builder()
        .batch_approval(move |requests: Vec<ApprovalRequest>| {
            log.lock().unwrap().push(requests.len());
            let outcomes = vec![ApprovalOutcome::AllowedForSession; requests.len()];
            async move { Ok::<_, ToolError>(outcomes) }
        })
        .build()
        .unwrap();
    let write = ToolDefinition::builder("write", "Write a file.")
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("written")) })
        .build()
        .unwrap();
    runtime.register(write).unwrap().keep();
    runtime
        .on_pre_execute(from_fn(|_r: PreRequest, _n: PreNext| async move {
            Ok(PreDecision::Ask(None))
        }))
        .keep();
    let agent = runtime.scope();
    let batch = |ids: [&str; 2]| {
        ids.iter()
            .map(|id| {
                ToolCall::new(*id, "write", json!({"path": id}))
                    .unwrap()
                    .with_agent(agent.clone())
            })
            .collect::<Vec<_>>()
    };
    let first = runtime
        .run_batch(batch(["a", "b"]), CancellationToken::new())
        .await;
    assert!(first.iter().all(|r| r.text() == "written"));
    let second = runtime
        .run_batch(batch(["a", "b"]), CancellationToken::new())
        .await;
    assert!(second.iter().all(|r| r.text() == "written"));
    // One question for the first batch; the second is covered.
    assert_eq!(*questions.lock().unwrap(), [2]);
}

/// A store that records which scopes it was told to forget.
#[derive(Default)]
struct Recording {
    forgotten: Mutex<Vec<u64>>,
    inner: tools_runtime::approval::MemoryApprovalStore,
}

impl tools_runtime::approval::ApprovalStore for Recording {
    fn is_approved(&self, agent: &AgentScope, key: &str) -> bool {
        self.inner.is_approved(agent, key)
    }
    fn remember(&self, agent: &AgentScope, key: &str, outcome: ApprovalOutcome) {
        self.inner.remember(agent, key, outcome);
    }
    fn forget_scope(&self, scope: u64) {
        self.forgotten.lock().unwrap().push(scope);
        self.inner.forget_scope(scope);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_disposed_scope_is_forgotten_by_the_store() {
    let store = Arc::new(Recording::default());
    let runtime = ToolRuntime::builder()
        .approval_store(Arc::clone(&store) as Arc<dyn tools_runtime::approval::ApprovalStore>)
        .build()
        .unwrap();
    let scope = runtime.scope();
    let key = scope.key();
    drop(scope);
    assert_eq!(*store.forgotten.lock().unwrap(), [key]);
}
