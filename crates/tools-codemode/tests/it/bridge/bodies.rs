//! Bodies that finish in their first poll and bodies that wait, in one run: the lane keeps
//! the box of a finished body for the next one, and a body that waits moves into a task
//! of its own in its box. Every mix must give each call its own result, in order.

use super::*;

/// A concurrency-safe tool `step` (`{n}` → `"s<n>"`) that waits (one yield) when `n` is
/// odd, and an exclusive tool `mark` (`{n}` → `"m<n>"`) that waits when `n` is a multiple
/// of 3; every body records when it ends.
fn tools(log: &Log) -> Vec<ToolDefinition> {
    vec![
        counted(log, "step", true, |n| n % 2 == 1),
        counted(log, "mark", false, |n| n % 3 == 0),
    ]
}

/// A tool `name` (`{n}` → its first letter and `n`) whose body yields once first when
/// `waits(n)`, and logs `<name> <n>` when it ends.
fn counted(log: &Log, name: &'static str, safe: bool, waits: fn(u64) -> bool) -> ToolDefinition {
    let log = log.clone();
    tool(name, safe, move |args, _ctx| {
        let log = log.clone();
        async move {
            let n = args.get("n").and_then(Value::as_u64).unwrap_or(0);
            if waits(n) {
                tokio::task::yield_now().await;
            }
            log.push(format!("{name} {n}"));
            Ok(json!(format!("{}{n}", &name[..1])))
        }
    })
}

/// Runs the program with both tools; the program's value (the run must not fail).
async fn run(runtime: Arc<FakeRuntime>, log: &Log) -> Value {
    let result = harness(runtime, tools(log)).run().await;
    assert!(!result.is_error(), "{result:?}");
    value_of(&result)["result"].clone()
}

/// Sequential calls that alternate between finishing at once and waiting, on both tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l1_sequential_bodies_that_finish_at_once_or_wait_each_get_their_own_result() {
    let log = Log::default();
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let mut values = Vec::new();
        for n in 0..12u64 {
            let name = if n % 4 == 3 { "mark" } else { "step" };
            values.push(outcome(call(&host, name, json!({ "n": n })).await));
        }
        completed(Some(Value::Array(values)), &[])
    });
    assert_eq!(
        run(runtime, &log).await,
        json!([
            "s0", "s1", "s2", "m3", "s4", "s5", "s6", "m7", "s8", "s9", "s10", "m11"
        ])
    );
    let expected: Vec<String> = (0..12u64)
        .map(|n| match n % 4 {
            3 => format!("mark {n}"),
            _ => format!("step {n}"),
        })
        .collect();
    assert_eq!(log.entries(), expected);
}

/// Calls issued at once: the concurrency-safe ones overlap, some finishing in their first
/// poll and some waiting; an exclusive one in the middle is a barrier. Results come back
/// to each caller in submission order whatever order the bodies end in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_joined_bodies_that_finish_at_once_or_wait_each_get_their_own_result() {
    let log = Log::default();
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = request.host;
        let calls: Vec<_> = (0..10u64)
            .map(|n| {
                let name = if n == 5 { "mark" } else { "step" };
                call(&host, name, json!({ "n": n }))
            })
            .collect();
        let mut values = Vec::new();
        for pending in calls {
            values.push(outcome(pending.await));
        }
        completed(Some(Value::Array(values)), &[])
    });
    assert_eq!(
        run(runtime, &log).await,
        json!(["s0", "s1", "s2", "s3", "s4", "m5", "s6", "s7", "s8", "s9"])
    );
    let ended = log.entries();
    assert_eq!(ended.len(), 10, "{ended:?}");
    // The exclusive call runs alone: every earlier body ended before it, every later one
    // after it.
    let at = |entry: &str| ended.iter().position(|e| e == entry).unwrap();
    for n in 0..5 {
        assert!(at(&format!("step {n}")) < at("mark 5"), "{ended:?}");
    }
    for n in 6..10 {
        assert!(at(&format!("step {n}")) > at("mark 5"), "{ended:?}");
    }
}
