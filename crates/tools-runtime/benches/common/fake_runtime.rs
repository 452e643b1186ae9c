//! The in-process fake code runtime of scenarios f1 and f2, and scenario f3's program,
//! shared by the Code Mode benchmark and the `hot_loop` example (included with `#[path]`).
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tools_codemode::{CodeRunRequest, CodeRunResult, Language, RunFuture};
use tools_json::JsonValue;
use tools_runtime::codemode::CodeRuntime;

/// Sub-calls per run.
pub(crate) const SUB_CALLS: usize = 100;

/// Scenario f3's program, verbatim.
pub(crate) const F3_PROGRAM: &str = "let n: number = 0; for (let i = 0; i < 100; i++) { const v = await tools.noop({ text: `x${i}`, n: i }); if (v === \"ok\") n++ } return n";

/// The arguments of the sub-calls: `{"text":"x<i>","n":i}`.
pub(crate) fn sub_call_args() -> Arc<[Value]> {
    (0..SUB_CALLS)
        .map(|i| json!({"text": format!("x{i}"), "n": i}))
        .collect()
}

/// A TypeScript "runtime" whose program is Rust: 100 `noop` sub-calls through the binding
/// host, awaited one after the other (f1) or issued at once and joined (f2); it returns the
/// number of sub-calls that resolved to `"ok"`.
pub(crate) struct FakeRuntime {
    /// Issue the sub-calls at once and join them (f2) rather than one after the other (f1).
    pub(crate) joined: bool,
    /// The sub-calls' arguments ([`sub_call_args`]).
    pub(crate) args: Arc<[Value]>,
}

fn is_ok(outcome: &tools_codemode::BindingOutcome) -> bool {
    matches!(outcome, Ok(v) if v.as_str() == Some("ok"))
}

impl CodeRuntime for FakeRuntime {
    fn language(&self) -> Language {
        Language::TypeScript
    }

    fn isolation(&self) -> &str {
        "in-process-bench"
    }

    fn run(&self, request: CodeRunRequest) -> RunFuture {
        let args = Arc::clone(&self.args);
        let joined = self.joined;
        Box::pin(async move {
            let host = &request.host;
            let call = |a: &Value| host.call("tools", "noop", JsonValue::new(a.clone()).unwrap());
            let count = if joined {
                let outcomes = join_all(args.iter().map(call)).await;
                outcomes.iter().filter(|o| is_ok(o)).count()
            } else {
                let mut count = 0;
                for a in args.iter() {
                    if is_ok(&call(a).await) {
                        count += 1;
                    }
                }
                count
            };
            Ok(CodeRunResult {
                value: Some(JsonValue::new(json!(count)).unwrap()),
                logs: vec![],
                error: None,
            })
        })
    }
}
