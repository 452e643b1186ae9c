//! Batch approval: one question for every call of a batch that asks.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_pipeline::{PreDecision, PreNext, PreRequest, from_fn};
use tools_registry::ToolError;
use tools_runtime::{
    ToolCall, ToolRuntime,
    approval::{ApprovalOutcome, ApprovalRequest},
};

use crate::support::{Log, instant};

#[tokio::test(flavor = "current_thread")]
async fn one_question_for_the_whole_batch() {
    let asked: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let a = Arc::clone(&asked);
    let runtime = ToolRuntime::builder()
        .batch_approval(move |requests: Vec<ApprovalRequest>| {
            a.lock()
                .unwrap()
                .push(requests.iter().map(|r| r.call_id.to_string()).collect());
            let outcomes = requests
                .iter()
                .map(|r| {
                    if &*r.call_id == "c2" {
                        ApprovalOutcome::Rejected
                    } else {
                        ApprovalOutcome::AllowedOnce
                    }
                })
                .collect();
            async move { Ok::<_, ToolError>(outcomes) }
        })
        .build()
        .unwrap();
    let log = Log::default();
    runtime
        .register(instant("risky", true, &log, "risky", false))
        .unwrap()
        .keep();
    runtime
        .register(instant("safe", true, &log, "safe", false))
        .unwrap()
        .keep();
    runtime
        .on_pre_execute(from_fn(|r: PreRequest, n: PreNext| async move {
            if r.execution().name().as_str() == "risky" {
                return Ok(PreDecision::Ask(Some("risky tool".into())));
            }
            n.run(r).await
        }))
        .keep();
    let agent = runtime.scope();
    let calls = vec![
        ToolCall::new("c1", "risky", json!({"id": "1"}))
            .unwrap()
            .with_agent(agent.clone()),
        ToolCall::new("c2", "risky", json!({"id": "2"}))
            .unwrap()
            .with_agent(agent.clone()),
        ToolCall::new("c3", "safe", json!({"id": "3"}))
            .unwrap()
            .with_agent(agent.clone()),
    ];
    let results = runtime.run_batch(calls, CancellationToken::new()).await;
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        [vec!["c1".to_owned(), "c2".to_owned()]]
    );
    assert_eq!(results[0].text(), "1");
    assert_eq!(results[1].text(), "Error: the user rejected tool \"risky\"");
    assert_eq!(results[2].text(), "3");
    assert_eq!(log.entries(), ["risky-1", "safe-3"]);
}
