//! The reference implementation's presentation scenarios in their ACP form: views through
//! `AcpBridge`/`AcpContext` into the real `agent-client-protocol-schema` types, compared as
//! typed values with the expected wire JSON, and sent through the ACP crate's JSON and
//! back.

use serde_json::{Value, json};
use tools_presentation::acp::schema::v1::{
    ClientCapabilities, Diff, SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolKind,
};
use tools_presentation::acp::{AcpBridge, AcpContext, TERMINAL_OUTPUT_CAPABILITY};
use tools_presentation::{
    ContentBlock, DiffCallView, DiffResultView, FileDiff, FileLocation, GenericCallView,
    GenericResultView, PresenterStage, RawResult, ReadResultView, ResultOrigin, SearchPathsView,
    TerminalCallView, TerminalResultView, ToolCallKind, ToolCallView, ToolResultView, WebFetchView,
    parse_call_args,
};

use crate::support::{Fns, bash, described, edit, image, panicking, presenter, recording_sink};

const CWD: &str = "/home/u/proj";

fn capable() -> AcpContext {
    AcpContext::new()
        .with_terminal_output(true)
        .with_session_cwd(CWD)
}

fn plain() -> AcpContext {
    AcpContext::new().with_session_cwd(CWD)
}

/// Removes what the ACP crate leaves out of its JSON: a default `kind` or `status`, empty
/// `content`/`locations` of a `tool_call`, and a `null` old text.
fn strip_defaults(mut json: Value) -> Value {
    let is_call = json["sessionUpdate"] == "tool_call";
    if let Some(map) = json.as_object_mut() {
        if map.get("kind") == Some(&json!("other")) {
            map.remove("kind");
        }
        if map.get("status") == Some(&json!("pending")) {
            map.remove("status");
        }
        for key in ["content", "locations"] {
            if is_call && map.get(key) == Some(&json!([])) {
                map.remove(key);
            }
        }
        if let Some(Value::Array(content)) = map.get_mut("content") {
            for item in content {
                if let Some(item) = item.as_object_mut()
                    && item.get("oldText") == Some(&Value::Null)
                {
                    item.remove("oldText");
                }
            }
        }
    }
    json
}

/// `update` equals the update the reference JSON `expected` describes (typed, through the
/// ACP crate), every key of `expected` was understood, and the update survives the ACP
/// crate's JSON both ways.
#[track_caller]
fn check(update: &SessionUpdate, expected: Value) {
    let typed: SessionUpdate = serde_json::from_value(expected.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        strip_defaults(expected),
        "the expected JSON has keys the ACP crate ignored"
    );
    assert_eq!(update, &typed);
    let wire = serde_json::to_string(update).unwrap();
    let back: SessionUpdate = serde_json::from_str(&wire).unwrap();
    assert_eq!(&back, update);
}

fn as_call(update: SessionUpdate) -> ToolCall {
    match update {
        SessionUpdate::ToolCall(call) => call,
        other => panic!("not a tool_call: {other:?}"),
    }
}

fn as_update(update: Option<SessionUpdate>) -> ToolCallUpdate {
    match update {
        Some(SessionUpdate::ToolCallUpdate(update)) => update,
        other => panic!("not a tool_call_update: {other:?}"),
    }
}

fn text(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

#[test]
fn s102_a_tool_without_presenters() {
    let mut bridge = AcpBridge::new(plain());
    let call = bridge.tool_call("c1", "bash", &parse_call_args(r#"{"command":"ls"}"#), None);
    check(
        &call,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "bash", "name": "bash",
               "kind": "other", "status": "in_progress", "rawInput": {"command": "ls"}}),
    );
    let call = as_call(bridge.tool_call("c2", "bash", &parse_call_args("not json"), None));
    assert_eq!(call.raw_input, Some(json!("not json")));
    let call = as_call(bridge.tool_call("c3", "bash", &parse_call_args(""), None));
    assert_eq!(call.raw_input, Some(json!({})));

    let done = bridge.tool_result("c1", &RawResult::text("out"), ResultOrigin::Executed);
    check(
        done.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "content": [text("out")]}),
    );
    let failed = RawResult::error(vec![ContentBlock::text("boom")]);
    let update = as_update(bridge.tool_result("c2", &failed, ResultOrigin::Executed));
    assert_eq!(update.fields.status, Some(ToolCallStatus::Failed));
    let images = RawResult::new(vec![image()]);
    let dropped = bridge.tool_result("c3", &images, ResultOrigin::Executed);
    check(
        dropped.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c3", "status": "completed",
               "content": []}),
    );
}

#[test]
fn s103_a_generic_presenter() {
    let mut bridge = AcpBridge::new(plain());
    let args = json!({"command": "npm test", "description": "Run the tests"});
    check(
        &bridge.tool_call("c1", "sh", &args, described()),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run the tests",
               "name": "sh", "kind": "execute", "status": "in_progress", "rawInput": "npm test"}),
    );
    let update = bridge.tool_result("c1", &RawResult::text("passed"), ResultOrigin::Executed);
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "content": [text("PASSED")]}),
    );
}

#[test]
fn s104_minimal_views() {
    let mut bridge = AcpBridge::new(plain());
    let minimal = presenter(Fns(
        |_: &Value| Some(GenericCallView::new("Only a title").into()),
        |_: &Value, _: &RawResult| Some(GenericResultView::new().with_title("Done").into()),
    ));
    let call = as_call(bridge.tool_call("c1", "t", &json!({"x": 1}), minimal));
    assert_eq!(call.kind, ToolKind::Other);
    assert_eq!(call.raw_input, None);
    let update = bridge.tool_result("c1", &RawResult::text("raw"), ResultOrigin::Executed);
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "title": "Done", "content": [text("raw")]}),
    );
}

#[test]
fn s105_the_pending_entry_is_consumed() {
    let mut bridge = AcpBridge::new(plain());
    bridge.tool_call(
        "c1",
        "sh",
        &json!({"command": "x", "description": "d"}),
        described(),
    );
    let first = as_update(bridge.tool_result("c1", &RawResult::text("a"), ResultOrigin::Executed));
    assert_eq!(first.fields.content.unwrap().len(), 1);
    for id in ["c1", "unknown"] {
        let update = bridge.tool_result(id, &RawResult::text("b"), ResultOrigin::Executed);
        check(
            update.as_ref().unwrap(),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed",
                   "content": [text("b")]}),
        );
    }
}

#[test]
fn s106_panicking_presenters() {
    for with_sink in [true, false] {
        let (seen, sink) = recording_sink();
        let mut bridge = AcpBridge::new(plain());
        if with_sink {
            bridge = bridge.with_failure_sink(sink);
        }
        let call = bridge.tool_call("c1", "fragile", &json!({"a": 1}), panicking());
        check(
            &call,
            json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "fragile",
                   "name": "fragile", "status": "in_progress", "rawInput": {"a": 1}}),
        );
        let update = bridge.tool_result("c1", &RawResult::text("r"), ResultOrigin::Executed);
        check(
            update.as_ref().unwrap(),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                   "content": [text("r")]}),
        );
        let stages: Vec<PresenterStage> = seen.lock().unwrap().iter().map(|f| f.stage).collect();
        let expected: &[PresenterStage] = if with_sink {
            &[PresenterStage::Call, PresenterStage::Result]
        } else {
            &[]
        };
        assert_eq!(stages, expected);
    }
}

#[test]
fn s108_a_terminal_for_a_capable_client() {
    let mut bridge = AcpBridge::new(capable());
    let args = json!({"command": "echo hi", "description": "Greet"});
    check(
        &bridge.tool_call("c1", "bash", &args, bash()),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "echo hi",
               "name": "bash", "kind": "execute", "status": "in_progress", "rawInput": "echo hi",
               "content": [text("Greet"), {"type": "terminal", "terminalId": "c1"}],
               "_meta": {"terminal_info": {"terminal_id": "c1", "cwd": CWD}}}),
    );
    let update = bridge.tool_result(
        "c1",
        &RawResult::text("hi\n[exit 0]"),
        ResultOrigin::Executed,
    );
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "_meta": {"terminal_output": {"terminal_id": "c1", "data": "hi\n"},
                         "terminal_exit": {"terminal_id": "c1", "exit_code": 0}}}),
    );
    assert_eq!(
        as_update(update).fields.content,
        None,
        "content would clobber the terminal"
    );
}

fn terminal_info(context: &AcpContext, view: TerminalCallView) -> Option<Value> {
    let call = context.tool_call("c1", "bash", &view.into());
    call.meta
        .and_then(|meta| meta.get("terminal_info").cloned())
}

#[test]
fn s109_terminal_cwd_resolution_and_exits() {
    let view = || TerminalCallView::new("pwd");
    let info = |cwd: &str| json!({"terminal_id": "c1", "cwd": cwd});
    assert_eq!(
        terminal_info(&capable(), view().with_cwd("/explicit/abs")),
        Some(info("/explicit/abs"))
    );
    assert_eq!(
        terminal_info(&capable(), view().with_cwd("sub/dir")),
        Some(info("/home/u/proj/sub/dir"))
    );
    let no_session = AcpContext::new().with_terminal_output(true);
    assert_eq!(
        terminal_info(&no_session, view().with_cwd("rel/only")),
        Some(info("rel/only"))
    );
    assert_eq!(terminal_info(&capable(), view()), Some(info(CWD)));
    assert_eq!(
        terminal_info(&no_session, view()),
        Some(json!({"terminal_id": "c1"}))
    );

    let context = capable();
    let ok = RawResult::text("");
    let signalled = TerminalResultView::new()
        .with_output("x")
        .with_signal("SIGKILL");
    check(
        &SessionUpdate::ToolCallUpdate(context.tool_call_update("c1", &signalled.into(), &ok)),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "_meta": {"terminal_output": {"terminal_id": "c1", "data": "x"},
                         "terminal_exit": {"terminal_id": "c1", "signal": "SIGKILL"}}}),
    );
    let no_exit = TerminalResultView::new().with_output("x");
    let update = context.tool_call_update("c1", &no_exit.into(), &ok);
    assert!(!update.meta.unwrap().contains_key("terminal_exit"));
    let title_only = TerminalResultView::new().with_title("Ran");
    check(
        &SessionUpdate::ToolCallUpdate(context.tool_call_update("c1", &title_only.into(), &ok)),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "title": "Ran",
               "_meta": {"terminal_output": {"terminal_id": "c1", "data": ""}}}),
    );
}

#[test]
fn s110_a_terminal_for_a_client_without_terminal_output() {
    let mut bridge = AcpBridge::new(plain());
    let args = json!({"command": "echo hi", "description": "Greet"});
    check(
        &bridge.tool_call("c1", "bash", &args, bash()),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "echo hi",
               "name": "bash", "kind": "execute", "status": "in_progress", "rawInput": "echo hi",
               "content": [text("Greet")]}),
    );
    let update = bridge.tool_result(
        "c1",
        &RawResult::text("hi\n[exit 0]"),
        ResultOrigin::Executed,
    );
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "content": [text("```console\nhi\n```")]}),
    );
    let titled = TerminalResultView::new()
        .with_output("a\n\n")
        .with_title("Greeted");
    let update = plain().tool_call_update("c1", &titled.into(), &RawResult::text(""));
    assert_eq!(update.fields.title.as_deref(), Some("Greeted"));
    assert_eq!(update.meta, None);

    let call = plain().tool_call("c2", "bash", &TerminalCallView::new("true").into());
    let wire = serde_json::to_value(SessionUpdate::ToolCall(call)).unwrap();
    assert!(wire.get("content").is_none(), "{wire}");
    assert!(wire.get("_meta").is_none(), "{wire}");
}

#[test]
fn s111_the_orphan_guard() {
    let mut bridge = AcpBridge::new(capable());
    let orphaning = presenter(Fns(
        |_: &Value| Some(GenericCallView::new("Generic").into()),
        |_: &Value, _: &RawResult| {
            Some(
                TerminalResultView::new()
                    .with_output("o")
                    .with_exit_code(1)
                    .into(),
            )
        },
    ));
    bridge.tool_call("c1", "t", &json!({}), orphaning);
    let update = bridge.tool_result("c1", &RawResult::text("raw"), ResultOrigin::Executed);
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "content": [text("raw")]}),
    );
}

#[test]
fn s112_transcript_rewrites_add_no_update() {
    let mut bridge = AcpBridge::new(capable());
    let pruned = RawResult::text("[pruned]");
    let mut updates = Vec::new();
    updates.push(bridge.tool_call("t1", "bash", &json!({"command": "ls"}), bash()));
    updates.extend(bridge.tool_result(
        "t1",
        &RawResult::text("a\n[exit 0]"),
        ResultOrigin::Executed,
    ));
    updates.extend(bridge.tool_result("t1", &pruned, ResultOrigin::Rewritten));
    assert_eq!(updates.len(), 2);

    let mut bridge = AcpBridge::new(capable());
    let args = json!({"path": "/home/u/proj/a.txt", "old_string": "a", "new_string": "b"});
    let meta = json!({"diffs": [{"path": "/home/u/proj/a.txt", "oldText": "a", "newText": "b"}]});
    let mut updates = vec![bridge.tool_call("d1", "edit", &args, edit())];
    updates.extend(bridge.tool_result(
        "d1",
        &RawResult::text("ok").with_meta(meta),
        ResultOrigin::Executed,
    ));
    updates.extend(bridge.tool_result("d1", &pruned, ResultOrigin::Rewritten));
    assert_eq!(updates.len(), 2);
}

#[test]
fn s113_a_diff_call() {
    let view: ToolCallView = DiffCallView::new(
        "Write /home/u/proj/a.txt",
        [FileDiff::created("/home/u/proj/a.txt", "hello")],
    )
    .into();
    let call = SessionUpdate::ToolCall(plain().tool_call("c1", "write", &view));
    check(
        &call,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write a.txt",
               "name": "write", "kind": "edit", "status": "in_progress",
               "content": [{"type": "diff", "path": "/home/u/proj/a.txt", "oldText": null, "newText": "hello"}]}),
    );
    let wire = serde_json::to_value(&call).unwrap();
    assert!(wire.get("locations").is_none());
    assert!(
        wire["content"][0].get("oldText").is_none(),
        "no before-image: no oldText key"
    );

    let empty: ToolCallView =
        ToolCallView::from_json(&json!({"card": "diff", "title": "Write", "diffs": []})).unwrap();
    let wire = serde_json::to_value(SessionUpdate::ToolCall(
        plain().tool_call("c2", "write", &empty),
    ))
    .unwrap();
    assert!(wire.get("content").is_none(), "{wire}");
}

#[test]
fn s114_a_diff_result() {
    let mut bridge = AcpBridge::new(plain());
    let path = "/home/u/proj/src/b.ts";
    let args = json!({"path": path, "old_string": "a", "new_string": "b"});
    let call = as_call(bridge.tool_call("c1", "edit", &args, edit()));
    assert_eq!(call.title, "Edit src/b.ts");
    assert_eq!(call.locations, vec![ToolCallLocation::new(path)]);
    let meta = json!({"diffs": [{"path": path, "oldText": "x\na\ny\n", "newText": "x\nb\ny\n"}]});
    let update = bridge.tool_result(
        "c1",
        &RawResult::text("edited").with_meta(meta),
        ResultOrigin::Executed,
    );
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "title": "Edit src/b.ts",
               "content": [{"type": "diff", "path": path, "oldText": "x\na\ny\n", "newText": "x\nb\ny\n"}]}),
    );

    bridge.tool_call("c2", "edit", &args, edit());
    let failed = RawResult::error(vec![ContentBlock::text("no match")]);
    let update = bridge.tool_result("c2", &failed, ResultOrigin::Executed);
    check(
        update.as_ref().unwrap(),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "failed",
               "content": [text("no match")]}),
    );

    let empty = ToolResultView::from(DiffResultView::new([]));
    let update = plain().tool_call_update("c3", &empty, &RawResult::text("x"));
    assert_eq!(
        serde_json::to_value(&update).unwrap(),
        json!({"toolCallId": "c3", "status": "completed"})
    );
}

#[test]
fn s115_title_relativization() {
    let context = plain();
    let generic = |path: &str| -> ToolCallView {
        GenericCallView::new(format!("Read {path}"))
            .with_kind(ToolCallKind::Read)
            .with_locations([FileLocation::new(path).at_line(3)])
            .into()
    };
    let call = context.tool_call("c1", "read", &generic("/home/u/proj/src/a.rs"));
    assert_eq!(call.title, "Read src/a.rs");
    assert_eq!(
        call.locations,
        vec![ToolCallLocation::new("/home/u/proj/src/a.rs").line(3)]
    );

    assert_eq!(
        context
            .tool_call("c", "read", &generic("/etc/passwd"))
            .title,
        "Read /etc/passwd"
    );
    assert_eq!(
        context
            .tool_call("c", "read", &generic("/home/u/proj/..cache/x.ts"))
            .title,
        "Read ..cache/x.ts"
    );
    assert_eq!(
        context
            .tool_call("c", "read", &generic("/home/u/proj/../x.ts"))
            .title,
        "Read /home/u/proj/../x.ts"
    );
    assert_eq!(
        context
            .tool_call("c", "read", &generic("/home/u/proj"))
            .title,
        "Read /home/u/proj"
    );
    assert_eq!(
        context
            .tool_call("c", "read", &generic("/home/u/project/a"))
            .title,
        "Read /home/u/project/a"
    );
    let no_session = AcpContext::new();
    assert_eq!(
        no_session
            .tool_call("c", "read", &generic("/home/u/proj/a.rs"))
            .title,
        "Read /home/u/proj/a.rs"
    );
    // A relative path keeps the title, but is sent absolute (docs/decisions.md, entry 20).
    let relative = context.tool_call("c", "read", &generic("src/a.rs"));
    assert_eq!(relative.title, "Read src/a.rs");
    assert_eq!(
        relative.locations,
        vec![ToolCallLocation::new("/home/u/proj/src/a.rs").line(3)]
    );
    // Every occurrence is replaced.
    assert_eq!(
        context.display_title("/home/u/proj/a → /home/u/proj/a.bak", "/home/u/proj/a"),
        "a → a.bak"
    );

    let diff = DiffResultView::new([FileDiff::new(
        "/home/u/proj/src/b.ts",
        Some("a".into()),
        "b",
    )])
    .with_title("Edit /home/u/proj/src/b.ts");
    let update = context.tool_call_update("c1", &diff.into(), &RawResult::text(""));
    assert_eq!(update.fields.title.as_deref(), Some("Edit src/b.ts"));
    let Some(contents) = update.fields.content else {
        panic!("diff content")
    };
    assert_eq!(
        contents,
        vec![ToolCallContent::Diff(
            Diff::new("/home/u/proj/src/b.ts", "b").old_text("a".to_owned())
        )]
    );
}

#[test]
fn read_search_and_web_results_degrade_to_text_with_raw_output() {
    let context = plain();
    let raw = RawResult::text("<file>\n1\tfn x\n</file>");
    let read = ReadResultView::new("/home/u/proj/a.rs", 1, 1, [(1, "fn x")])
        .unwrap()
        .with_title("Read /home/u/proj/a.rs")
        .with_content([ContentBlock::text("fn x")]);
    let view = ToolResultView::from(read);
    let update = context.tool_call_update("c1", &view, &raw);
    check(
        &SessionUpdate::ToolCallUpdate(update),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "title": "Read a.rs", "content": [text("fn x")], "rawOutput": view.to_json()}),
    );

    let search = ToolResultView::from(SearchPathsView::complete(vec!["a".into(), "b".into()]));
    let update = context.tool_call_update("c2", &search, &RawResult::text("a\nb"));
    assert_eq!(update.fields.raw_output, Some(search.to_json()));
    assert_eq!(update.fields.content.map(|c| c.len()), Some(1));
    assert_eq!(update.fields.title, None);

    let web = ToolResultView::from(WebFetchView::new("https://a.example", 200, false));
    let update = context.tool_call_update("c3", &web, &RawResult::new(vec![image()]));
    assert_eq!(update.fields.content, Some(vec![]));
    assert_eq!(
        ToolResultView::from_json(update.fields.raw_output.as_ref().unwrap()),
        Ok(web)
    );
}

#[test]
fn s117_conversion_to_the_real_acp_types() {
    for kind in ToolCallKind::ALL {
        let acp = ToolKind::from(kind);
        assert_eq!(serde_json::to_value(acp).unwrap(), json!(kind.as_str()));
        let view: ToolCallView = GenericCallView::new("t").with_kind(kind).into();
        assert_eq!(plain().tool_call("c", "t", &view).kind, acp);
    }
    let diff = plain().diff(&FileDiff::created("/a", "x"));
    assert_eq!(diff, Diff::new("/a", "x"));
    assert_eq!(diff.old_text, None);
    assert_eq!(
        serde_json::to_value(&diff).unwrap(),
        json!({"path": "/a", "newText": "x"})
    );
    let location = plain().location(&FileLocation::new("/a").at_line(7));
    assert_eq!(location.line, Some(7_u32));

    let call = capable().tool_call("c1", "bash", &TerminalCallView::new("ls").into());
    let meta: serde_json::Map<String, Value> = call.meta.clone().unwrap();
    assert_eq!(meta["terminal_info"]["terminal_id"], "c1");

    // The reference bridge's JSON (kind, null oldText and all) reads into the same value.
    // A relative diff path is sent absolute; the title has nothing to relativise.
    let reference = json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write a.txt",
        "kind": "edit", "status": "in_progress", "name": "write", "locations": [],
        "content": [{"type": "diff", "path": "/home/u/proj/a.txt", "oldText": null, "newText": "hello"}]});
    let ours = plain().tool_call(
        "c1",
        "write",
        &DiffCallView::new("Write a.txt", [FileDiff::created("a.txt", "hello")]).into(),
    );
    check(&SessionUpdate::ToolCall(ours), reference);
}

#[test]
fn s118_acp_kinds_without_a_counterpart_become_other() {
    assert_eq!(ToolCallKind::from(ToolKind::Think), ToolCallKind::Other);
    assert_eq!(
        ToolCallKind::from(ToolKind::SwitchMode),
        ToolCallKind::Other
    );
    assert_eq!(ToolCallKind::from(ToolKind::Other), ToolCallKind::Other);
    let unknown: ToolKind = serde_json::from_value(json!("summon")).unwrap();
    assert_eq!(ToolCallKind::from(unknown), ToolCallKind::Other);
    for kind in ToolCallKind::ALL {
        assert_eq!(ToolCallKind::from(ToolKind::from(kind)), kind);
    }
}

#[test]
fn the_terminal_capability_comes_from_the_client_meta() {
    let caps = |json: Value| -> ClientCapabilities { serde_json::from_value(json).unwrap() };
    assert!(
        AcpContext::for_client(&caps(json!({"_meta": {TERMINAL_OUTPUT_CAPABILITY: true}})))
            .terminal_output()
    );
    for off in [
        json!({}),
        json!({"_meta": {}}),
        json!({"_meta": {"terminal_output": "true"}}),
        json!({"_meta": {"terminal_output": false}}),
        json!({"terminal": true}),
    ] {
        assert!(
            !AcpContext::for_client(&caps(off.clone())).terminal_output(),
            "{off}"
        );
    }
}

#[test]
fn generic_call_content_maps_only_text() {
    let view: ToolCallView = GenericCallView::new("Background")
        .with_kind(ToolCallKind::Execute)
        .with_content([
            ContentBlock::text("Watching files"),
            image(),
            ContentBlock::reasoning("why"),
        ])
        .with_locations([])
        .into();
    let call = SessionUpdate::ToolCall(plain().tool_call("c1", "bash", &view));
    check(
        &call,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Background",
               "name": "bash", "kind": "execute", "status": "in_progress",
               "content": [text("Watching files")], "locations": []}),
    );
}

#[test]
fn the_official_sdk_holds_the_very_same_types() {
    use agent_client_protocol::v1::schema as sdk;
    let view: ToolCallView = TerminalCallView::new("ls").into();
    let call: sdk::ToolCall = capable().tool_call("c1", "bash", &view);
    let update: sdk::ToolCallUpdate = capable().tool_call_update(
        "c1",
        &TerminalResultView::new().with_exit_code(0).into(),
        &RawResult::text(""),
    );
    let kind: sdk::ToolKind = ToolCallKind::Fetch.into();
    let notification = sdk::SessionNotification::new("s1", sdk::SessionUpdate::ToolCall(call));
    let wire = serde_json::to_value(&notification).unwrap();
    assert_eq!(wire["update"]["sessionUpdate"], "tool_call");
    assert_eq!(wire["update"]["kind"], "execute");
    assert_eq!(update.fields.status, Some(sdk::ToolCallStatus::Completed));
    assert_eq!(kind, sdk::ToolKind::Fetch);
}
