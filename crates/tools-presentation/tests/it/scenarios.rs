//! The reference implementation's presentation scenarios at the level of views (no ACP):
//! the session's fallbacks, the closed unions and their stable format, meta narrowing,
//! typed presenters and diff cards. The ACP forms of the same scenarios live in `acp.rs`.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_presentation::{
    CallCard, ContentBlock, DiffCallView, DiffResultView, Error, FileDiff, FileLocation,
    GenericCallView, GenericResultView, PresenterStage, RawResult, ReadResultView, ResultOrigin,
    SearchMatchesView, SearchPathsView, SessionPresenter, TerminalCallView, TerminalResultView,
    ToolCallKind, ToolCallView, ToolResultView, Typed, TypedPresenter, WebFetchView, WebSearchView,
    WebSource, diffs_from_meta, parse_call_args, read_view_from_meta, search_view_from_meta,
    web_search_view_from_meta,
};

use crate::support::{bash, described, edit, image, panicking, recording_sink};

fn raw_view(content: Vec<ContentBlock>) -> ToolResultView {
    GenericResultView::new().with_content(content).into()
}

// 102: a tool without presenters.
#[test]
fn s102_without_presenters_the_call_is_the_tool_name_and_its_arguments() {
    let mut session = SessionPresenter::new();
    let view = session.present_call("c1", "bash", &parse_call_args(r#"{"command":"ls"}"#), None);
    assert_eq!(
        view.to_json(),
        json!({"card": "generic", "title": "bash", "rawInput": {"command": "ls"}})
    );
    assert_eq!(
        view.kind(),
        ToolCallKind::Other,
        "never sniffed from the name"
    );

    let view = session.present_call("c2", "bash", &parse_call_args("not json"), None);
    assert_eq!(view.to_json()["rawInput"], json!("not json"));
    let view = session.present_call("c3", "bash", &parse_call_args(""), None);
    assert_eq!(view.to_json()["rawInput"], json!({}));

    let ok = session.present_result("c1", &RawResult::text("out"), ResultOrigin::Executed);
    assert_eq!(ok, Some(raw_view(vec![ContentBlock::text("out")])));
    let failed = RawResult::error(vec![ContentBlock::text("boom")]);
    let err = session.present_result("c2", &failed, ResultOrigin::Executed);
    assert_eq!(err, Some(raw_view(vec![ContentBlock::text("boom")])));
    // Non-text blocks stay in the view; only a UI mapping drops them.
    let images = RawResult::new(vec![image()]);
    let view = session.present_result("c3", &images, ResultOrigin::Executed);
    assert_eq!(view, Some(raw_view(vec![image()])));
    assert_eq!(session.pending_count(), 0);
}

// 103: a generic presenter on both sides.
#[test]
fn s103_generic_presenters_shape_the_call_and_reformat_the_result() {
    let mut session = SessionPresenter::new();
    let args = json!({"command": "npm test", "description": "Run the tests"});
    let view = session.present_call("c1", "sh", &args, described());
    assert_eq!(
        view,
        GenericCallView::new("Run the tests")
            .with_kind(ToolCallKind::Execute)
            .with_raw_input(json!("npm test"))
            .into()
    );
    let view = session.present_result("c1", &RawResult::text("ok"), ResultOrigin::Executed);
    assert_eq!(view, Some(raw_view(vec![ContentBlock::text("OK")])));
}

// 104: minimal views.
#[test]
fn s104_a_title_only_result_keeps_the_raw_content() {
    let mut session = SessionPresenter::new();
    let minimal = crate::support::presenter(crate::support::Fns(
        |_: &Value| Some(GenericCallView::new("Only a title").into()),
        |_: &Value, _: &RawResult| Some(GenericResultView::new().with_title("Done").into()),
    ));
    let call = session.present_call("c1", "t", &json!({"x": 1}), minimal);
    let ToolCallView::Generic(call) = call else {
        panic!("a generic card")
    };
    assert_eq!(call.kind(), ToolCallKind::Other);
    assert_eq!(call.raw_input(), None);
    let result = session.present_result("c1", &RawResult::text("raw"), ResultOrigin::Executed);
    assert_eq!(
        result,
        Some(
            GenericResultView::new()
                .with_title("Done")
                .with_content([ContentBlock::text("raw")])
                .into()
        )
    );
}

// 105: the pending entry is consumed by the first result.
#[test]
fn s105_late_and_unknown_results_pass_the_raw_content_through() {
    let mut session = SessionPresenter::new();
    session.present_call(
        "c1",
        "sh",
        &json!({"command": "x", "description": "d"}),
        described(),
    );
    let first = session.present_result("c1", &RawResult::text("a"), ResultOrigin::Executed);
    assert_eq!(first, Some(raw_view(vec![ContentBlock::text("A")])));
    let second = session.present_result("c1", &RawResult::text("b"), ResultOrigin::Executed);
    assert_eq!(second, Some(raw_view(vec![ContentBlock::text("b")])));
    let unknown = session.present_result("nope", &RawResult::text("c"), ResultOrigin::Executed);
    assert_eq!(unknown, Some(raw_view(vec![ContentBlock::text("c")])));
}

// 106: panicking presenters.
#[test]
fn s106_panicking_presenters_fall_back_and_are_reported() {
    let (seen, sink) = recording_sink();
    let mut session = SessionPresenter::new().with_failure_sink(sink);
    let args = json!({"a": 1});
    let call = session.present_call("c1", "fragile", &args, panicking());
    assert_eq!(call, ToolCallView::fallback("fragile", &args));
    let result = session.present_result("c1", &RawResult::text("r"), ResultOrigin::Executed);
    assert_eq!(result, Some(raw_view(vec![ContentBlock::text("r")])));

    let seen = seen.lock().unwrap();
    let stages: Vec<PresenterStage> = seen.iter().map(|f| f.stage).collect();
    assert_eq!(stages, [PresenterStage::Call, PresenterStage::Result]);
    assert_eq!(seen[0].message, "call exploded");
    assert_eq!(seen[1].tool_name, "fragile");
    assert!(seen[0].to_string().contains("present_call"), "{}", seen[0]);
    assert!(
        seen[1].to_string().contains("present_result"),
        "{}",
        seen[1]
    );

    // Without a sink: the same fallbacks, nothing propagates.
    let mut quiet = SessionPresenter::new();
    assert_eq!(
        quiet.present_call("c1", "fragile", &args, panicking()),
        ToolCallView::fallback("fragile", &args)
    );
    assert_eq!(
        quiet.present_result("c1", &RawResult::text("r"), ResultOrigin::Executed),
        Some(raw_view(vec![ContentBlock::text("r")]))
    );
}

// 107: the closed unions and the stable format of every card.
#[test]
fn s107_every_card_has_a_stable_json_form() {
    let calls: Vec<(ToolCallView, Value)> = vec![
        (
            GenericCallView::new("Search")
                .with_kind(ToolCallKind::Search)
                .with_raw_input(json!("q"))
                .with_content([ContentBlock::text("hint")])
                .with_locations([FileLocation::new("a").at_line(2)])
                .into(),
            json!({"card": "generic", "title": "Search", "kind": "search", "rawInput": "q",
                   "content": [{"type": "text", "text": "hint"}],
                   "locations": [{"path": "a", "line": 2}]}),
        ),
        (
            TerminalCallView::new("ls -la")
                .with_description("List")
                .with_cwd("sub")
                .into(),
            json!({"card": "terminal", "title": "ls -la", "description": "List", "cwd": "sub"}),
        ),
        (
            DiffCallView::new("Write a", [FileDiff::created("a", "x")])
                .with_locations([FileLocation::new("a")])
                .into(),
            json!({"card": "diff", "title": "Write a",
                   "diffs": [{"path": "a", "oldText": null, "newText": "x"}],
                   "locations": [{"path": "a"}]}),
        ),
    ];
    for (view, expected) in calls {
        assert_eq!(view.to_json(), expected);
        assert_eq!(ToolCallView::from_json(&expected), Ok(view.clone()));
        let text = serde_json::to_string(&view).unwrap();
        assert_eq!(ToolCallView::from_json_str(&text), Ok(view));
    }

    let results: Vec<(ToolResultView, Value)> = vec![
        (
            GenericResultView::new()
                .with_title("T")
                .with_content([])
                .into(),
            json!({"card": "generic", "title": "T", "content": []}),
        ),
        (
            TerminalResultView::new()
                .with_output("o")
                .with_signal("SIGTERM")
                .into(),
            json!({"card": "terminal", "output": "o", "signal": "SIGTERM"}),
        ),
        (
            DiffResultView::new([FileDiff::new("a", Some("x".into()), "y")]).into(),
            json!({"card": "diff", "diffs": [{"path": "a", "oldText": "x", "newText": "y"}]}),
        ),
        (
            SearchMatchesView::from_matches([("a.rs", 3, "fn x")])
                .unwrap()
                .into(),
            json!({"card": "search", "shape": "matches",
                   "files": [{"path": "a.rs", "matches": [{"lineNumber": 3, "line": "fn x"}]}],
                   "truncated": false, "total": 1}),
        ),
        (
            SearchPathsView::new(vec!["a".into()], true, 10)
                .unwrap()
                .with_title("Found")
                .into(),
            json!({"card": "search", "shape": "paths", "title": "Found", "paths": ["a"],
                   "truncated": true, "total": 10}),
        ),
        (
            ReadResultView::new("a.py", 2, 9, [(2, "x = 1")])
                .unwrap()
                .with_content([ContentBlock::text("x = 1")])
                .into(),
            json!({"card": "read", "path": "a.py", "offset": 2,
                   "lines": [{"number": 2, "text": "x = 1"}], "totalLines": 9, "lang": "py",
                   "content": [{"type": "text", "text": "x = 1"}]}),
        ),
        (
            WebSearchView::new(
                vec![WebSource::new("https://a.example").with_published_at("2025-01-01")],
                false,
            )
            .with_answer("42")
            .into(),
            json!({"card": "web", "kind": "search",
                   "sources": [{"url": "https://a.example", "publishedAt": "2025-01-01"}],
                   "answer": "42", "truncated": false}),
        ),
        (
            WebFetchView::new("https://a.example/", 301, false)
                .with_title("Fetched")
                .into(),
            json!({"card": "web", "kind": "fetch", "title": "Fetched", "url": "https://a.example/",
                   "statusCode": 301, "truncated": false}),
        ),
    ];
    for (view, expected) in results {
        assert_eq!(view.to_json(), expected);
        assert_eq!(ToolResultView::from_json(&expected), Ok(view.clone()));
        let text = serde_json::to_string(&view).unwrap();
        assert_eq!(ToolResultView::from_json_str(&text), Ok(view));
    }

    for unknown in [
        json!({"card": "chart", "title": "x"}),
        json!({"card": "search", "shape": "tree", "truncated": false, "total": 0}),
        json!({"card": "web", "kind": "crawl", "url": "u", "truncated": false}),
        json!({"card": "read", "path": "a", "offset": 1, "lines": [{"number": 2, "text": ""}], "totalLines": 1}),
    ] {
        let err = ToolResultView::from_json(&unknown).unwrap_err();
        assert!(matches!(err, Error::Malformed { .. }), "{unknown}: {err}");
    }
    assert!(ToolCallView::from_json(&json!({"card": "read", "title": "x"})).is_err());
}

// A malformed stored view falls back to the generic card, never panics.
#[test]
fn malformed_stored_views_fall_back_to_the_generic_card() {
    let stored = json!({"card": "diff", "title": "Edit", "diffs": "not a list"});
    let args = json!({"path": "a"});
    let view =
        ToolCallView::from_json(&stored).unwrap_or_else(|_| ToolCallView::fallback("edit", &args));
    assert_eq!(view.title(), "edit");
    let result = ToolResultView::from_json(&json!(["nope"])).unwrap_or_default();
    assert_eq!(result, ToolResultView::fallback());
}

// 111 at the view level: the orphan guard.
#[test]
fn s111_a_terminal_result_of_a_generic_call_is_raw_content() {
    let mut session = SessionPresenter::new();
    let generic_call = crate::support::presenter(crate::support::Fns(
        |_: &Value| Some(GenericCallView::new("not a terminal").into()),
        |_: &Value, _: &RawResult| Some(TerminalResultView::new().with_output("o").into()),
    ));
    session.present_call("c1", "t", &json!({}), generic_call);
    let view = session.present_result("c1", &RawResult::text("raw"), ResultOrigin::Executed);
    assert_eq!(view, Some(raw_view(vec![ContentBlock::text("raw")])));

    // A real terminal call keeps its terminal result.
    session.present_call("c2", "bash", &json!({"command": "ls"}), bash());
    assert_eq!(session.pending_card("c2"), Some(CallCard::Terminal));
    let view = session.present_result(
        "c2",
        &RawResult::text("a\n[exit 0]"),
        ResultOrigin::Executed,
    );
    assert_eq!(
        view,
        Some(
            TerminalResultView::new()
                .with_output("a\n")
                .with_exit_code(0)
                .into()
        )
    );
}

// 112 at the view level: a transcript rewrite is not an execution.
#[test]
fn s112_transcript_rewrites_produce_no_view() {
    let mut session = SessionPresenter::new();
    let mut views = 0;
    session.present_call("c1", "bash", &json!({"command": "ls"}), bash());
    views += 1;
    let done = RawResult::text("x\n[exit 0]");
    views += usize::from(
        session
            .present_result("c1", &done, ResultOrigin::Executed)
            .is_some(),
    );
    let pruned = RawResult::text("[pruned]");
    views += usize::from(
        session
            .present_result("c1", &pruned, ResultOrigin::Rewritten)
            .is_some(),
    );
    assert_eq!(views, 2);
}

// 113 and 114 at the view level: a mutation's call diff from its arguments, its result
// diff from the replayable meta, and no diff for a failed edit.
#[test]
fn s114_diff_views_come_from_arguments_and_meta() {
    let mut session = SessionPresenter::new();
    let args = json!({"path": "src/b.ts", "old_string": "a", "new_string": "b"});
    let call = session.present_call("c1", "edit", &args, edit());
    assert_eq!(
        call,
        DiffCallView::new(
            "Edit src/b.ts",
            [FileDiff::new("src/b.ts", Some("a".into()), "b")]
        )
        .with_locations([FileLocation::new("src/b.ts")])
        .into()
    );
    let meta = json!({"diffs": [{"path": "src/b.ts", "oldText": "x\na\n", "newText": "x\nb\n"}]});
    let done = RawResult::text("edited").with_meta(meta);
    let view = session.present_result("c1", &done, ResultOrigin::Executed);
    assert_eq!(
        view,
        Some(
            DiffResultView::new([FileDiff::new("src/b.ts", Some("x\na\n".into()), "x\nb\n")])
                .with_title("Edit src/b.ts")
                .into()
        )
    );

    session.present_call("c2", "edit", &args, edit());
    let failed =
        RawResult::error(vec![ContentBlock::text("no match")]).with_meta(json!({"diffs": []}));
    let view = session.present_result("c2", &failed, ResultOrigin::Executed);
    assert_eq!(view, Some(raw_view(vec![ContentBlock::text("no match")])));
}

// 116: narrowing of meta payloads.
#[test]
fn s116_meta_narrowing_is_strict_and_total() {
    let read = |patch: Value| {
        let mut meta = json!({"path": "a.ts", "offset": 2, "totalLines": 5,
                              "lines": [{"number": 2, "text": "b"}, {"number": 3, "text": "c"}]});
        for (k, v) in patch.as_object().unwrap() {
            meta[k] = v.clone();
        }
        read_view_from_meta(&meta)
    };
    assert!(read(json!({})).is_some());
    assert!(read(json!({"offset": 0})).is_none(), "offset 0");
    assert!(
        read(json!({"lines": [{"number": 2.5, "text": "b"}]})).is_none(),
        "non-integer line"
    );
    assert!(
        read(json!({"lines": [{"number": 3, "text": "c"}, {"number": 3, "text": "c"}]})).is_none(),
        "non-increasing lines"
    );
    assert!(
        read(json!({"lines": [{"number": 6, "text": "f"}]})).is_none(),
        "past totalLines"
    );
    assert!(
        read(json!({"lines": [{"number": 1, "text": "a"}]})).is_none(),
        "before offset"
    );
    assert!(read(json!({"lang": 3})).is_none(), "non-string lang");
    assert!(read(json!({"lang": null})).is_none(), "null lang");
    assert!(read(json!({"path": 1})).is_none());
    let empty = read(json!({"offset": 9, "lines": []})).unwrap();
    assert_eq!(
        (empty.offset(), empty.lines().len()),
        (9, 0),
        "valid empty window kept"
    );
    assert_eq!(
        read(json!({"lang": "typescript"})).unwrap().lang(),
        Some("typescript")
    );

    let no_files = json!({"shape": "matches", "files": [], "truncated": false, "total": 0});
    assert!(search_view_from_meta(&no_files).is_some());
    let no_paths = json!({"shape": "paths", "paths": [], "truncated": false, "total": 0});
    assert!(search_view_from_meta(&no_paths).is_some());
    let no_shape = json!({"files": [], "truncated": false, "total": 0});
    assert!(search_view_from_meta(&no_shape).is_none());
    let bad_flag = json!({"shape": "paths", "paths": [], "truncated": "no", "total": 0});
    assert!(search_view_from_meta(&bad_flag).is_none());

    assert!(diffs_from_meta(&json!({"diffs": []})).is_none());
    assert!(diffs_from_meta(&json!({})).is_none());

    let sources = |source: Value| json!({"sources": [source], "truncated": false});
    assert!(web_search_view_from_meta(&sources(json!({"url": "https://a"}))).is_some());
    assert!(web_search_view_from_meta(&sources(json!({"title": "no url"}))).is_none());
    assert!(web_search_view_from_meta(&sources(json!({"url": "u", "snippet": 1}))).is_none());
    let answered = json!({"sources": [], "truncated": true, "answer": "yes"});
    assert_eq!(
        web_search_view_from_meta(&answered).unwrap().answer(),
        Some("yes")
    );
    assert!(
        web_search_view_from_meta(&json!({"sources": [], "truncated": true, "answer": 1}))
            .is_none()
    );
}

#[derive(Deserialize)]
struct OpenArgs {
    path: String,
}

struct Open;

impl TypedPresenter for Open {
    type Args = OpenArgs;

    fn present_call(&self, args: &OpenArgs) -> Option<ToolCallView> {
        Some(
            GenericCallView::new(format!("Open {}", args.path))
                .with_kind(ToolCallKind::Read)
                .with_raw_input(json!(args.path))
                .into(),
        )
    }

    fn present_result(&self, args: &OpenArgs, result: &RawResult) -> Option<ToolResultView> {
        Some(
            GenericResultView::new()
                .with_title(format!("Opened {}", args.path))
                .with_content(result.content.clone())
                .into(),
        )
    }
}

// The reference's typed-helper presenter scenario: presenters validate their arguments softly.
#[test]
fn typed_presenters_give_no_view_for_arguments_of_another_shape() {
    use tools_presentation::Presenter;
    let open = Typed(Open);
    assert_eq!(
        open.present_call(&json!({"path": "/a", "n": 2}))
            .map(|v| v.to_json()),
        Some(json!({"card": "generic", "title": "Open /a", "kind": "read", "rawInput": "/a"}))
    );
    assert_eq!(
        open.present_result(&json!({"path": "/a"}), &RawResult::text("x"))
            .map(|v| v.to_json()),
        Some(
            json!({"card": "generic", "title": "Opened /a", "content": [{"type": "text", "text": "x"}]})
        )
    );
    assert_eq!(open.present_call(&json!({})), None);
    assert_eq!(
        open.present_result(&json!({"wrong": 1}), &RawResult::text("x")),
        None
    );

    struct Silent;
    impl tools_presentation::Presenter for Silent {}
    assert_eq!(Silent.present_call(&json!({})), None);
}

// The diff helper: applied hunks with context, or the whole file.
#[test]
fn diff_cards_from_before_and_after_text() {
    let before = "fn a() {}\n\nfn b() {\n    1\n}\n";
    let after = "fn a() {}\n\nfn b() {\n    2\n}\n";
    let view =
        DiffResultView::from_change("src/b.rs", Some(before), after).with_title("Edit src/b.rs");
    assert_eq!(
        view.diffs(),
        [FileDiff::new("src/b.rs", Some(before.into()), after)],
        "a short file fits in one hunk with its context"
    );
    let created = DiffResultView::from_change("new.rs", None, "fn main() {}\n");
    assert_eq!(
        created.diffs(),
        [FileDiff::created("new.rs", "fn main() {}\n")]
    );
    let unchanged = DiffResultView::from_change("same.rs", Some("x"), "x");
    assert!(unchanged.diffs().is_empty());
}
