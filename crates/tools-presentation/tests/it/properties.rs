//! Property tests: every view survives a serde round trip; the ACP mapping never panics
//! and its output survives the ACP crate's JSON; the session presenter keeps its rules on
//! any event sequence; meta narrowing is total and inverts the views' JSON; diff hunks
//! cover the change.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_presentation::{
    CallCard, ContentBlock, DiffCallView, DiffOptions, DiffResultView, FileDiff, FileLocation,
    GenericCallView, GenericResultView, Presenter, RawResult, ReadResultView, ResultCard,
    ResultOrigin, SearchFileMatches, SearchMatchesView, SearchPathsView, SearchResultView,
    SessionPresenter, TerminalCallView, TerminalResultView, ToolCallKind, ToolCallView,
    ToolResultView, WebFetchView, WebSearchView, WebSource, diffs_from_meta, read_view_from_meta,
    search_view_from_meta, web_fetch_view_from_meta, web_search_view_from_meta,
};

fn text() -> impl Strategy<Value = String> {
    "[a-z /.`\n-]{0,8}"
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,3}(/[a-z.]{1,3}){0,2}",
        "/home/u/proj(/[a-z.]{1,3}){0,2}",
        "/(etc|tmp)/[a-z]{1,3}",
        Just(String::new()),
    ]
}

/// Lossless, canonical JSON (what crosses the workspace's boundary).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![Just(0.5f64), Just(-2.25f64), Just(1e300f64)].prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        text().prop_map(ContentBlock::text),
        text().prop_map(ContentBlock::reasoning),
        (
            prop_oneof![Just("image"), Just("tool-call"), Just("x")],
            json_value()
        )
            .prop_map(|(kind, extra)| {
                let mut map = Map::new();
                map.insert("type".into(), json!(kind));
                map.insert("data".into(), extra);
                ContentBlock::from_json(&Value::Object(map)).unwrap()
            }),
    ]
}

fn blocks() -> impl Strategy<Value = Vec<ContentBlock>> {
    prop::collection::vec(block(), 0..3)
}

fn location() -> impl Strategy<Value = FileLocation> {
    (path(), 0u32..4).prop_map(|(p, line)| FileLocation::new(p).at_line(line))
}

fn file_diff() -> impl Strategy<Value = FileDiff> {
    (path(), prop::option::of(text()), text()).prop_map(|(p, old, new)| FileDiff::new(p, old, new))
}

fn kind() -> impl Strategy<Value = ToolCallKind> {
    prop::sample::select(ToolCallKind::ALL.to_vec())
}

fn call_view() -> impl Strategy<Value = ToolCallView> {
    prop_oneof![
        (
            text(),
            kind(),
            prop::option::of(json_value()),
            prop::option::of(blocks()),
            prop::option::of(prop::collection::vec(location(), 0..3)),
        )
            .prop_map(|(title, kind, raw, content, locations)| {
                let mut view = GenericCallView::new(title).with_kind(kind);
                if let Some(raw) = raw {
                    view = view.with_raw_input(raw);
                }
                if let Some(content) = content {
                    view = view.with_content(content);
                }
                if let Some(locations) = locations {
                    view = view.with_locations(locations);
                }
                ToolCallView::from(view)
            }),
        (text(), prop::option::of(text()), prop::option::of(path())).prop_map(
            |(title, description, cwd)| {
                let mut view = TerminalCallView::new(title);
                if let Some(description) = description {
                    view = view.with_description(description);
                }
                if let Some(cwd) = cwd {
                    view = view.with_cwd(cwd);
                }
                ToolCallView::from(view)
            }
        ),
        (
            text(),
            prop::collection::vec(file_diff(), 0..3),
            prop::option::of(prop::collection::vec(location(), 0..2)),
        )
            .prop_map(|(title, diffs, locations)| {
                let mut view = DiffCallView::new(title, diffs);
                if let Some(locations) = locations {
                    view = view.with_locations(locations);
                }
                ToolCallView::from(view)
            }),
    ]
}

fn titled<V>(view: V, title: Option<String>, with: impl Fn(V, String) -> V) -> V {
    match title {
        Some(title) => with(view, title),
        None => view,
    }
}

fn search_view() -> impl Strategy<Value = SearchResultView> {
    prop_oneof![
        (
            prop::collection::vec(
                (path(), prop::collection::vec((1u32..50, text()), 0..3)),
                0..3
            ),
            any::<bool>(),
            0u64..5,
            prop::option::of(text()),
        )
            .prop_map(|(files, truncated, extra, title)| {
                let files: Vec<SearchFileMatches> = files
                    .into_iter()
                    .map(|(p, matches)| {
                        let matches = matches
                            .into_iter()
                            .map(|(n, line)| {
                                serde_json::from_value(json!({"lineNumber": n, "line": line}))
                                    .unwrap()
                            })
                            .collect();
                        SearchFileMatches::new(p, matches)
                    })
                    .collect();
                let retained: u64 = files.iter().map(|f| f.matches.len() as u64).sum();
                let total = if truncated {
                    retained + extra
                } else {
                    retained
                };
                let view = SearchMatchesView::new(files, truncated, total).unwrap();
                SearchResultView::Matches(titled(view, title, SearchMatchesView::with_title))
            }),
        (
            prop::collection::vec(path(), 0..4),
            any::<bool>(),
            0u64..5,
            prop::option::of(text()),
        )
            .prop_map(|(paths, truncated, extra, title)| {
                let total = paths.len() as u64 + if truncated { extra } else { 0 };
                let view = SearchPathsView::new(paths, truncated, total).unwrap();
                SearchResultView::Paths(titled(view, title, SearchPathsView::with_title))
            }),
    ]
}

fn read_view() -> impl Strategy<Value = ReadResultView> {
    (
        path(),
        1u32..5,
        prop::collection::btree_set(1u32..12, 0..5),
        0u32..3,
        prop::option::of(prop::option::of(text())),
        prop::option::of(blocks()),
        prop::option::of(text()),
    )
        .prop_map(|(p, offset, numbers, slack, lang, content, title)| {
            let lines: Vec<(u32, String)> = numbers
                .into_iter()
                .filter(|n| *n >= offset)
                .map(|n| (n, format!("line {n}")))
                .collect();
            let total = lines.last().map_or(0, |(n, _)| *n) + slack;
            let mut view = ReadResultView::new(p, offset, total, lines).unwrap();
            if let Some(lang) = lang {
                view = view.with_lang(lang);
            }
            if let Some(content) = content {
                view = view.with_content(content);
            }
            titled(view, title, ReadResultView::with_title)
        })
}

fn web_source() -> impl Strategy<Value = WebSource> {
    (
        text(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
    )
        .prop_map(|(url, title, snippet, published)| {
            let mut source = WebSource::new(url);
            source.title = title;
            source.snippet = snippet;
            source.published_at = published;
            source
        })
}

fn result_view() -> impl Strategy<Value = ToolResultView> {
    prop_oneof![
        (prop::option::of(text()), prop::option::of(blocks())).prop_map(|(title, content)| {
            let mut view = GenericResultView::new();
            if let Some(content) = content {
                view = view.with_content(content);
            }
            ToolResultView::from(titled(view, title, GenericResultView::with_title))
        }),
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop_oneof![
                Just(None),
                any::<i64>().prop_map(|c| Some(Ok(c))),
                "SIG[A-Z]{2,4}".prop_map(|s| Some(Err(s))),
            ],
        )
            .prop_map(|(title, output, exit)| {
                let mut view = TerminalResultView::new();
                if let Some(output) = output {
                    view = view.with_output(output);
                }
                view = match exit {
                    Some(Ok(code)) => view.with_exit_code(code),
                    Some(Err(signal)) => view.with_signal(signal),
                    None => view,
                };
                ToolResultView::from(titled(view, title, TerminalResultView::with_title))
            }),
        (
            prop::option::of(text()),
            prop::collection::vec(file_diff(), 0..3)
        )
            .prop_map(|(title, diffs)| {
                let view = DiffResultView::new(diffs);
                ToolResultView::from(titled(view, title, DiffResultView::with_title))
            }),
        search_view().prop_map(ToolResultView::from),
        read_view().prop_map(ToolResultView::from),
        (
            prop::collection::vec(web_source(), 0..3),
            any::<bool>(),
            prop::option::of(text()),
            prop::option::of(text()),
        )
            .prop_map(|(sources, truncated, answer, title)| {
                let mut view = WebSearchView::new(sources, truncated);
                if let Some(answer) = answer {
                    view = view.with_answer(answer);
                }
                ToolResultView::from(titled(view, title, WebSearchView::with_title))
            }),
        (text(), 100u16..600, any::<bool>(), prop::option::of(text())).prop_map(
            |(url, status, truncated, title)| {
                let view = WebFetchView::new(url, status, truncated);
                ToolResultView::from(titled(view, title, WebFetchView::with_title))
            }
        ),
    ]
}

fn raw_result() -> impl Strategy<Value = RawResult> {
    (blocks(), any::<bool>(), prop::option::of(json_value())).prop_map(
        |(content, is_error, meta)| {
            let mut result = if is_error {
                RawResult::error(content)
            } else {
                RawResult::new(content)
            };
            result.meta = meta;
            result
        },
    )
}

/// Removes `card` and `title` from a view's JSON: what a tool's `meta` payload carries.
fn as_meta(view: &ToolResultView) -> Value {
    let mut json = view.to_json();
    if let Some(map) = json.as_object_mut() {
        map.remove("card");
        map.remove("title");
    }
    json
}

proptest! {
    #[test]
    fn call_views_survive_a_serde_round_trip(view in call_view()) {
        prop_assert_eq!(ToolCallView::from_json(&view.to_json()), Ok(view.clone()));
        let text = serde_json::to_string(&view).unwrap();
        prop_assert_eq!(serde_json::from_str::<ToolCallView>(&text).unwrap(), view.clone());
        prop_assert_eq!(ToolCallView::from_json_str(&text), Ok(view));
    }

    #[test]
    fn result_views_survive_a_serde_round_trip(view in result_view()) {
        prop_assert_eq!(ToolResultView::from_json(&view.to_json()), Ok(view.clone()));
        let text = serde_json::to_string(&view).unwrap();
        prop_assert_eq!(serde_json::from_str::<ToolResultView>(&text).unwrap(), view.clone());
        prop_assert_eq!(ToolResultView::from_json_str(&text), Ok(view));
    }

    #[test]
    fn raw_results_survive_a_serde_round_trip(result in raw_result()) {
        let text = serde_json::to_string(&result).unwrap();
        prop_assert_eq!(serde_json::from_str::<RawResult>(&text).unwrap(), result);
    }

    #[test]
    fn reading_any_json_as_a_view_never_panics(value in json_value(), card in "[a-z]{0,8}") {
        let _ = ToolCallView::from_json(&value);
        let _ = ToolResultView::from_json(&value);
        let mut tagged = value;
        if let Some(map) = tagged.as_object_mut() {
            map.insert("card".into(), json!(card));
        }
        let _ = ToolCallView::from_json(&tagged);
        let _ = ToolResultView::from_json(&tagged);
        let _ = ContentBlock::from_json(&tagged);
    }

    #[test]
    fn meta_narrowing_is_total(value in json_value()) {
        let _ = diffs_from_meta(&value);
        let _ = read_view_from_meta(&value);
        let _ = search_view_from_meta(&value);
        let _ = web_search_view_from_meta(&value);
        let _ = web_fetch_view_from_meta(&value);
    }

    #[test]
    fn meta_narrowing_inverts_the_views_json(view in result_view()) {
        let meta = as_meta(&view);
        match &view {
            ToolResultView::Read(read) if read.content().is_none() => {
                let mut expected = meta.clone();
                expected["card"] = json!("read");
                let back = read_view_from_meta(&meta).map(|v| ToolResultView::from(v).to_json());
                prop_assert_eq!(back, Some(expected));
            }
            ToolResultView::Search(search) => {
                let back = search_view_from_meta(&meta);
                prop_assert_eq!(back.as_ref().map(SearchResultView::total), Some(search.total()));
                prop_assert_eq!(back.as_ref().map(SearchResultView::title), Some(None));
            }
            ToolResultView::Diff(diff) => {
                let back = diffs_from_meta(&meta);
                let expected = (!diff.diffs().is_empty()).then(|| diff.diffs().to_vec());
                prop_assert_eq!(back, expected);
            }
            ToolResultView::Web(tools_presentation::WebResultView::Search(web)) => {
                let back = web_search_view_from_meta(&meta);
                prop_assert_eq!(back.as_ref().map(WebSearchView::sources), Some(web.sources()));
                prop_assert_eq!(back.as_ref().and_then(WebSearchView::answer), web.answer());
            }
            ToolResultView::Web(tools_presentation::WebResultView::Fetch(fetch)) => {
                let back = web_fetch_view_from_meta(&meta);
                prop_assert_eq!(back.as_ref().map(WebFetchView::url), Some(fetch.url()));
            }
            _ => {}
        }
    }

    #[test]
    fn hunks_cover_the_change(
        before in prop::collection::vec("[ab]{0,2}", 0..12),
        after in prop::collection::vec("[ab]{0,2}", 0..12),
        context in 0usize..4,
    ) {
        let before = before.join("\n");
        let after = after.join("\n");
        let hunks = DiffOptions::new().with_context_lines(context).file_diffs("f", Some(&before), &after);
        prop_assert_eq!(hunks.is_empty(), before == after);
        for hunk in &hunks {
            prop_assert!(hunk.old_text.as_deref() != Some(hunk.new_text.as_str()));
            prop_assert!(before.contains(hunk.old_text.as_deref().unwrap()));
            prop_assert!(after.contains(hunk.new_text.as_str()));
        }
        let whole = DiffOptions::new().with_context_lines(1 << 20).file_diffs("f", Some(&before), &after);
        if before != after {
            prop_assert_eq!(whole, vec![FileDiff::new("f", Some(before.clone()), after.clone())]);
        }
    }

    #[test]
    fn session_rules_hold_for_any_event_sequence(
        events in prop::collection::vec((0u8..3, 0u8..6, any::<bool>(), result_view(), call_view()), 0..12),
        result in raw_result(),
    ) {
        let mut session = SessionPresenter::new();
        for (id, action, flag, result_view, call_view) in events {
            let id = format!("c{id}");
            match action {
                0 => {
                    let shown = session.present_call(&id, "t", &json!({"n": 1}), Some(Arc::new(Fixed(Some(call_view.clone()), Some(result_view)))));
                    prop_assert_eq!(shown, call_view);
                }
                1 => {
                    let shown = session.present_call(&id, "t", &json!([]), Some(Arc::new(Panics)));
                    prop_assert_eq!(shown, ToolCallView::fallback("t", &json!([])));
                }
                2 => {
                    session.present_call(&id, "t", &json!(null), None);
                    prop_assert_eq!(session.pending_card(&id), Some(CallCard::Generic));
                }
                _ => {
                    let origin = if flag { ResultOrigin::Rewritten } else { ResultOrigin::Executed };
                    let card = session.pending_card(&id);
                    let view = session.present_result(&id, &result, origin);
                    if origin == ResultOrigin::Rewritten {
                        prop_assert!(view.is_none());
                        prop_assert_eq!(session.pending_card(&id), card);
                        continue;
                    }
                    let view = view.unwrap();
                    prop_assert!(!session.is_pending(&id));
                    if view.card() == ResultCard::Terminal {
                        prop_assert_eq!(card, Some(CallCard::Terminal));
                    }
                    if let ToolResultView::Generic(generic) = &view {
                        prop_assert!(generic.content().is_some());
                    }
                }
            }
            prop_assert!(session.pending_count() <= 3);
        }
    }
}

/// A presenter returning fixed views.
struct Fixed(Option<ToolCallView>, Option<ToolResultView>);

impl Presenter for Fixed {
    fn present_call(&self, _: &Value) -> Option<ToolCallView> {
        self.0.clone()
    }

    fn present_result(&self, _: &Value, _: &RawResult) -> Option<ToolResultView> {
        self.1.clone()
    }
}

/// A presenter whose hooks panic.
struct Panics;

impl Presenter for Panics {
    fn present_call(&self, _: &Value) -> Option<ToolCallView> {
        panic!("call")
    }

    fn present_result(&self, _: &Value, _: &RawResult) -> Option<ToolResultView> {
        panic!("result")
    }
}

#[cfg(feature = "acp")]
mod acp {
    use super::*;
    use tools_presentation::acp::AcpContext;
    use tools_presentation::acp::schema::v1::{SessionUpdate, ToolCall, ToolCallUpdate};

    fn context() -> impl Strategy<Value = AcpContext> {
        (
            any::<bool>(),
            prop::option::of(prop_oneof![
                Just("/home/u/proj"),
                Just("/home/u/proj/"),
                Just("/"),
                Just("rel/cwd"),
                Just(""),
            ]),
        )
            .prop_map(|(terminal, cwd)| {
                let context = AcpContext::new().with_terminal_output(terminal);
                match cwd {
                    Some(cwd) => context.with_session_cwd(cwd),
                    None => context,
                }
            })
    }

    proptest! {
        #[test]
        fn acp_calls_never_panic_and_survive_the_acp_json(
            view in call_view(),
            context in context(),
            id in "[a-z0-9-]{0,6}",
        ) {
            let call = context.tool_call(&id, "tool", &view);
            prop_assert_eq!(call.kind, view.kind().into());
            let wire = serde_json::to_string(&SessionUpdate::ToolCall(call.clone())).unwrap();
            let back: SessionUpdate = serde_json::from_str(&wire).unwrap();
            prop_assert_eq!(back, SessionUpdate::ToolCall(call.clone()));
            let direct: ToolCall = serde_json::from_value(serde_json::to_value(&call).unwrap()).unwrap();
            prop_assert_eq!(direct, call);
        }

        #[test]
        fn acp_updates_never_panic_and_survive_the_acp_json(
            view in result_view(),
            result in raw_result(),
            context in context(),
            id in "[a-z0-9-]{0,6}",
        ) {
            let update = context.tool_call_update(&id, &view, &result);
            let wire = serde_json::to_string(&SessionUpdate::ToolCallUpdate(update.clone())).unwrap();
            let back: SessionUpdate = serde_json::from_str(&wire).unwrap();
            prop_assert_eq!(back, SessionUpdate::ToolCallUpdate(update.clone()));
            let direct: ToolCallUpdate = serde_json::from_value(serde_json::to_value(&update).unwrap()).unwrap();
            prop_assert_eq!(&direct, &update);
            if matches!(view, ToolResultView::Terminal(_)) && context.terminal_output() {
                prop_assert!(update.fields.content.is_none());
                prop_assert!(update.meta.is_some());
            }
        }
    }
}
