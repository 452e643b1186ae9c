//! Approval comes last: on the path where a person would be asked (`ask`, no remembered
//! approval, no answer yet) the guards run and the arguments are validated first, so nobody
//! is asked about a call that could never run; the result of such a call is exactly the one
//! an allowed call gets.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde_json::{Value, json};
use tools_pipeline::{
    ApprovalOutcome, ApprovalRequest, ErrorCode, PreDecision, Prepared, ToolError, ToolResult,
};
use tools_registry::{AgentScope, CallInfo, OutputDecl, Registry, ToolDefinition, define_tool};
use tools_schema::ToolArgs;

use crate::support::{Checked, Log, checked, pre_hook};

#[derive(Deserialize, ToolArgs)]
struct WriteArgs {
    path: String,
    content: String,
}

/// The typed `write_file`: `{path, content}`; each run is logged.
fn write_file(runs: &Log) -> ToolDefinition {
    let runs = runs.clone();
    define_tool::<WriteArgs, String>("write_file", "Write a file.")
        .body(move |args: WriteArgs, _ctx| {
            runs.push(format!("write_file {}", args.path));
            async move {
                Ok(format!(
                    "wrote {} bytes to {}",
                    args.content.len(),
                    args.path
                ))
            }
        })
        .build()
        .unwrap()
}

/// An imported tool: a foreign parameter schema (`path` required, `n` at least 1).
fn convert(runs: &Log) -> ToolDefinition {
    let runs = runs.clone();
    ToolDefinition::builder("convert", "An imported tool.")
        .foreign_parameters(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "n": {"type": "integer", "minimum": 1}
            },
            "required": ["path", "n"]
        }))
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(move |_args, _ctx| {
            runs.push("convert");
            async { Ok(json!("converted")) }
        })
        .build()
        .unwrap()
}

/// A host: `write_file` and `convert`, a guard that keeps paths under `/work/` (counting its
/// runs), a pipeline whose pre-execute hook asks about every call, and a counting approval
/// service answering `outcome`. `allowing` is a second pipeline over the same registry,
/// without the hook: what the same calls give when they are allowed.
struct Host {
    registry: Registry,
    asking: Checked,
    allowing: Checked,
    agent: AgentScope,
    asked: Arc<AtomicUsize>,
    guarded: Arc<AtomicUsize>,
    runs: Log,
}

fn host(outcome: ApprovalOutcome) -> Host {
    let registry = Registry::new();
    let runs = Log::default();
    registry.register(write_file(&runs)).unwrap().keep();
    registry.register(convert(&runs)).unwrap().keep();
    let guarded = Arc::new(AtomicUsize::new(0));
    let g = Arc::clone(&guarded);
    registry
        .guard(move |call: &CallInfo| {
            g.fetch_add(1, Ordering::SeqCst);
            let path = call.arguments.get("path")?.as_str()?;
            (!path.starts_with("/work/")).then(|| format!("{path} is outside the allowed root"))
        })
        .keep();
    let asking = checked(registry.clone());
    asking
        .on_pre_execute(pre_hook(|_| {
            Some(Ok(PreDecision::Ask(Some("writes a file".into()))))
        }))
        .keep();
    let asked = Arc::new(AtomicUsize::new(0));
    let a = Arc::clone(&asked);
    asking.set_approval(Some(Arc::new(move |_request: ApprovalRequest| {
        a.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, ToolError>(outcome) }
    })));
    let allowing = checked(registry.clone());
    let agent = registry.scope();
    Host {
        registry,
        asking,
        allowing,
        agent,
        asked,
        guarded,
        runs,
    }
}

impl Host {
    fn call(&self, name: &str, args: Value) -> tools_pipeline::ToolCall {
        tools_pipeline::ToolCall::new("c1", name, args)
            .unwrap()
            .with_agent(self.agent.clone())
    }

    /// The call through the asking pipeline.
    async fn ask(&self, name: &str, args: Value) -> ToolResult {
        self.asking.execute(self.call(name, args)).await
    }

    /// The same call allowed: what it gives without a question.
    async fn allowed(&self, name: &str, args: Value) -> ToolResult {
        self.allowing.execute(self.call(name, args)).await
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }

    fn guarded(&self) -> usize {
        self.guarded.load(Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_ask_call_with_invalid_arguments_settles_invalid_args_without_asking() {
    let host = host(ApprovalOutcome::AllowedOnce);
    for (name, args) in [
        // A typed tool (a derived parameter map): `content` is missing.
        ("write_file", json!({"path": "/work/notes.txt"})),
        // A foreign schema: `n` breaks its minimum.
        ("convert", json!({"path": "/work/in.csv", "n": 0})),
    ] {
        let asked = host.ask(name, args.clone()).await;
        assert_eq!(asked.error_code(), Some(ErrorCode::InvalidArgs), "{name}");
        assert_eq!(host.asked(), 0, "{name}: nobody is asked");
        // Exactly what the body gives the same call when it is allowed.
        let allowed = host.allowed(name, args).await;
        assert_eq!(allowed.error_code(), Some(ErrorCode::InvalidArgs));
        assert_eq!(asked.text(), allowed.text(), "{name}");
    }
    assert_eq!(
        host.ask("write_file", json!({"path": "/work/notes.txt"}))
            .await
            .text(),
        "Error: invalid arguments: content: required property is missing"
    );
    assert_eq!(host.asked(), 0);
    assert!(host.runs.entries().is_empty(), "no body ran");
}

#[tokio::test(flavor = "current_thread")]
async fn an_ask_call_the_guards_deny_settles_denied_without_asking() {
    let host = host(ApprovalOutcome::AllowedOnce);
    let outside = json!({"path": "/etc/passwd", "content": "x"});
    let denied = host.ask("write_file", outside.clone()).await;
    assert_eq!(denied.error_code(), Some(ErrorCode::Denied));
    assert_eq!(
        denied.text(),
        "Error: /etc/passwd is outside the allowed root"
    );
    assert_eq!(host.asked(), 0, "nobody is asked");
    assert_eq!(host.guarded(), 1, "the guards ran once");
    // Outside the root and invalid: the guards answer first, as for an allowed call.
    for (name, args) in [
        ("write_file", json!({"path": "/etc/passwd"})),
        ("convert", json!({"path": "/etc/passwd", "n": 0})),
    ] {
        let asked = host.ask(name, args.clone()).await;
        assert_eq!(asked.error_code(), Some(ErrorCode::Denied), "{name}");
        assert_eq!(
            asked.text(),
            host.allowed(name, args).await.text(),
            "{name}"
        );
    }
    assert_eq!(host.asked(), 0);
    assert!(host.runs.entries().is_empty(), "no body ran");
}

#[tokio::test(flavor = "current_thread")]
async fn a_valid_ask_call_is_asked_once_and_its_guards_run_once() {
    let host = host(ApprovalOutcome::AllowedOnce);
    let result = host
        .ask(
            "write_file",
            json!({"path": "/work/a.txt", "content": "hello"}),
        )
        .await;
    assert_eq!(result.text(), "wrote 5 bytes to /work/a.txt");
    assert_eq!(host.asked(), 1);
    assert_eq!(
        host.guarded(),
        1,
        "the guards are not run again after approval"
    );
    let converted = host
        .ask("convert", json!({"path": "/work/in.csv", "n": 2}))
        .await;
    assert_eq!(converted.text(), "converted");
    assert_eq!(host.asked(), 2);
    assert_eq!(host.runs.entries(), ["write_file /work/a.txt", "convert"]);

    // A refusal still refuses a call that could run.
    let refusing = crate::support::checked(host.registry.clone());
    refusing
        .on_pre_execute(pre_hook(|_| Some(Ok(PreDecision::Ask(None)))))
        .keep();
    refusing.set_approval(Some(Arc::new(|_r: ApprovalRequest| async {
        Ok::<_, ToolError>(ApprovalOutcome::Rejected)
    })));
    let rejected = refusing
        .execute(host.call("write_file", json!({"path": "/work/b", "content": ""})))
        .await;
    assert_eq!(rejected.error_code(), Some(ErrorCode::ApprovalDenied));
    assert_eq!(host.runs.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn a_remembered_approval_runs_without_asking() {
    let host = host(ApprovalOutcome::AllowedForSession);
    let args = json!({"path": "/work/a.txt", "content": "hello"});
    assert_eq!(
        host.ask("write_file", args.clone()).await.text(),
        "wrote 5 bytes to /work/a.txt"
    );
    assert_eq!(host.asked(), 1);
    assert_eq!(
        host.ask("write_file", args).await.text(),
        "wrote 5 bytes to /work/a.txt"
    );
    assert_eq!(
        host.asked(),
        1,
        "the remembered approval covers the second call"
    );
    assert_eq!(host.guarded(), 2, "each call's guards ran once");
    assert_eq!(host.runs.entries().len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_without_an_approval_service_or_agent_still_reports_why_it_could_not_run() {
    let host = host(ApprovalOutcome::AllowedOnce);
    host.asking.set_approval(None);
    let invalid = host
        .ask("write_file", json!({"path": "/work/notes.txt"}))
        .await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InvalidArgs));
    let valid = host
        .ask("write_file", json!({"path": "/work/a", "content": ""}))
        .await;
    assert_eq!(valid.error_code(), Some(ErrorCode::ApprovalDenied));
    let no_agent =
        tools_pipeline::ToolCall::new("c1", "convert", json!({"path": "/etc/x", "n": 1})).unwrap();
    let denied = host.asking.execute(no_agent).await;
    assert_eq!(denied.error_code(), Some(ErrorCode::Denied));
    assert!(host.runs.entries().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn the_batch_path_requests_approval_only_for_calls_that_could_run() {
    let host = host(ApprovalOutcome::AllowedOnce);
    let pipeline = &host.asking;
    let invalid = pipeline
        .decide(host.call("write_file", json!({"path": "/work/notes.txt"})))
        .await;
    let outside = pipeline
        .decide(host.call("convert", json!({"path": "/etc/passwd", "n": 1})))
        .await;
    let valid = pipeline
        .decide(host.call("write_file", json!({"path": "/work/a", "content": "hi"})))
        .await;
    assert!(invalid.approval_request().is_none(), "invalid arguments");
    assert!(outside.approval_request().is_none(), "denied by a guard");
    let request = valid
        .approval_request()
        .expect("a call that could run asks");
    assert_eq!(request.tool.as_str(), "write_file");
    // Asking again gives the same request and checks nothing again.
    assert!(valid.approval_request().is_some());
    assert_eq!(host.guarded(), 3, "each call's guards ran once");

    // Resumed without an answer, the calls nobody was asked about settle without a question.
    for (decided, code) in [
        (invalid, ErrorCode::InvalidArgs),
        (outside, ErrorCode::Denied),
    ] {
        let Prepared::Settled(pending) = pipeline.resume(decided, None).await else {
            panic!("a call that could never run was dispatched");
        };
        assert_eq!(pipeline.complete(pending).await.error_code(), Some(code));
    }
    // The answered call runs, and its guards are not run again.
    let Prepared::Dispatch(ready) = pipeline
        .resume(valid, Some(ApprovalOutcome::AllowedOnce))
        .await
    else {
        panic!("the approved call did not dispatch");
    };
    let pending = pipeline.dispatch(ready).await;
    assert_eq!(
        pipeline.complete(pending).await.text(),
        "wrote 2 bytes to /work/a"
    );
    assert_eq!(host.asked(), 0, "the installed service was never asked");
    assert_eq!(host.guarded(), 3);
    assert_eq!(host.runs.entries(), ["write_file /work/a"]);
}
