//! Lossless output budgets: the model reads a bounded head and tail with a header; the full
//! result is kept and `read_result` returns every byte; values stay whole.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_runtime::prelude::*;
use tools_runtime::{
    ToolRuntime, budget::OutputBudget, presentation::ContentBlock, tools::PresentationMode,
};

const BUDGET: usize = 4096;

/// A tool whose output is `size` bytes of numbered lines (with multi-byte characters), and
/// whose value is a structure holding the same text.
fn big(size: usize) -> ToolDefinition {
    ToolDefinition::builder("dump", "Dump a large file.")
        .output(OutputDecl::new(
            json!({"type": "object", "properties": {"text": {"type": "string"}, "lines": {"type": "integer"}}}),
            |_args, value| Ok(vec![ContentBlock::text(value.as_value()["text"].as_str().unwrap_or_default())]),
        ))
        .body(move |_a, _c| async move {
            let mut text = String::with_capacity(size + 64);
            let mut n = 0u64;
            while text.len() < size {
                n += 1;
                text.push_str(&format!("line {n}: héllo wörld 😀\n"));
            }
            Ok(json!({"text": text, "lines": n}))
        })
        .build()
        .unwrap()
}

fn runtime() -> ToolRuntime {
    ToolRuntime::builder()
        .output_budget(OutputBudget::bytes(BUDGET))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn a_5_mb_output_reaches_the_model_cut_and_read_result_returns_every_byte() {
    let runtime = runtime();
    runtime.register(big(5 << 20)).unwrap().keep();
    let observed: Arc<Mutex<Option<Value>>> = Arc::default();
    let full_seen: Arc<Mutex<Option<usize>>> = Arc::default();
    let (seen, full_len) = (Arc::clone(&observed), Arc::clone(&full_seen));
    let store = runtime.result_store();
    runtime
        .on_result(move |_exec, result| {
            *seen.lock().unwrap() = result.value().map(|v| v.as_value().clone());
            // The model's view is the content; the full text is one lookup away.
            if let Some(handle) = tools_runtime::budget::cut_handle(result) {
                *full_len.lock().unwrap() = store.get(handle).map(|full| full.text.len());
            }
        })
        .keep();
    let result = runtime
        .execute(ToolCall::new("c1", "dump", json!({})).unwrap())
        .await;
    let view = result.text();
    assert!(view.len() <= BUDGET, "{} bytes", view.len());
    let full = result.value().unwrap().as_value()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let header = view.lines().next().unwrap();
    assert!(
        header.contains(&format!(
            "{} bytes in {} lines",
            full.len(),
            full.lines().count()
        )),
        "{header}"
    );
    let handle = header
        .split("handle=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    // Head and tail are the original's own.
    let body = &view[header.len() + 1..];
    let head = body.split("\n[… ").next().unwrap();
    assert!(full.starts_with(head) && head.len() > 1000);
    assert!(full.ends_with(view.rsplit("cut …]\n").next().unwrap()));
    assert_eq!(*full_seen.lock().unwrap(), Some(full.len()));
    // The structured value is whole, for the caller and for observers.
    assert_eq!(
        observed.lock().unwrap().as_ref().unwrap()["text"]
            .as_str()
            .unwrap()
            .len(),
        full.len()
    );
    // Page by page, read_result gives back every byte.
    let mut read = String::new();
    let mut offset = Some(0u64);
    let mut pages = 0;
    while let Some(at) = offset {
        let page = runtime
            .execute(
                ToolCall::new(
                    "r",
                    "read_result",
                    json!({"handle": handle, "offset": at, "limit": 300_000}),
                )
                .unwrap(),
            )
            .await;
        let page = page.value().unwrap().as_value().clone();
        read.push_str(page["text"].as_str().unwrap());
        offset = page["next_offset"].as_u64();
        pages += 1;
        assert!(pages < 10_000);
    }
    assert_eq!(read, full);
}

#[tokio::test(flavor = "current_thread")]
async fn small_outputs_and_unknown_handles() {
    let runtime = runtime();
    runtime.register(big(100)).unwrap().keep();
    let small = runtime
        .execute(ToolCall::new("c1", "dump", json!({})).unwrap())
        .await;
    assert!(!small.text().starts_with("[output cut"));
    let missing = runtime
        .execute(ToolCall::new("r", "read_result", json!({"handle": "res_999"})).unwrap())
        .await;
    assert!(missing.is_error());
    assert!(missing.text().contains("res_999"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_calls_are_never_cut_only_the_final_output_is() {
    let js = tools_quickjs::QuickJsRuntime::new(tools_runtime::codemode::RuntimeLimits::default())
        .unwrap();
    let runtime = ToolRuntime::builder()
        .output_budget(OutputBudget::bytes(BUDGET))
        .mode(PresentationMode::Both)
        .code_runtime(Arc::new(js))
        .build()
        .unwrap();
    runtime.register(big(200_000)).unwrap().keep();
    let agent = runtime.scope();
    let code = "const d = await tools.dump({}); return {length: d.text.length, lines: d.lines, text: d.text};";
    let result = runtime
        .execute(
            ToolCall::new(
                "c1",
                "run_code",
                json!({"description": "measure", "code": code}),
            )
            .unwrap()
            .with_agent(agent),
        )
        .await;
    let value = result.value().unwrap().as_value();
    // The program saw the whole value (UTF-16 length of the JS string, > the budget).
    assert!(
        value["result"]["length"].as_u64().unwrap() > 150_000,
        "{}",
        result.text()
    );
    // The model's view of run_code's own output is cut.
    assert!(
        result.text().starts_with("[output cut to fit"),
        "{}",
        &result.text()[..200]
    );
    assert!(
        result.text().len() <= BUDGET,
        "{} bytes in {:?}",
        result.text().len(),
        result
            .content()
            .iter()
            .map(|b| b.block_type().to_owned())
            .collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn budgets_per_tool_and_per_call() {
    let runtime = ToolRuntime::builder()
        .output_budget(OutputBudget::bytes(BUDGET).for_tool("dump", 1024))
        .build()
        .unwrap();
    runtime.register(big(50_000)).unwrap().keep();
    let per_tool = runtime
        .execute(ToolCall::new("c1", "dump", json!({})).unwrap())
        .await;
    assert!(
        per_tool.text().len() <= 1024 && per_tool.text().len() > 600,
        "{}",
        per_tool.text().len()
    );
    let per_call = runtime
        .execute(
            ToolCall::new("c2", "dump", json!({}))
                .unwrap()
                .with_output_budget(20_000),
        )
        .await;
    assert!(
        per_call.text().len() <= 20_000 && per_call.text().len() > 15_000,
        "{}",
        per_call.text().len()
    );
    assert_eq!(OutputBudget::tokens(1000).of("x"), 4000);
}
