//! Depth safety: a raw input as deep as the workspace's depth limit goes through every
//! path of the crate on a 2 MiB thread (the size of a test thread) in a debug build.

use serde_json::{Value, json};
use tools_presentation::{
    GenericCallView, RawResult, ResultOrigin, SessionPresenter, ToolCallView, parse_call_args,
};

/// `levels` nested arrays around `1`.
fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn arguments_at_the_depth_limit_are_presented_and_read_back() {
    on_small_stack(|| {
        let text = format!(
            r#"{{"deep": {}}}"#,
            nested(tools_json::DEFAULT_MAX_DEPTH - 1)
        );
        let args = parse_call_args(&text);
        assert!(args.is_object());
        let mut session = SessionPresenter::new();
        let view = session.present_call("c1", "t", &args, None);
        let json = view.to_json();
        let stored = serde_json::to_string(&json).unwrap();
        assert_eq!(ToolCallView::from_json_str(&stored), Ok(view.clone()));
        assert_eq!(ToolCallView::from_json(&json), Ok(view));
        session.present_result("c1", &RawResult::text("ok"), ResultOrigin::Executed);

        #[cfg(feature = "acp")]
        {
            use tools_presentation::acp::AcpContext;
            use tools_presentation::acp::schema::v1::SessionUpdate;
            let view: ToolCallView = GenericCallView::new("t").with_raw_input(args).into();
            let call = SessionUpdate::ToolCall(AcpContext::new().tool_call("c1", "t", &view));
            let wire = serde_json::to_value(&call).unwrap();
            let back: SessionUpdate = serde_json::from_value(wire).unwrap();
            assert_eq!(back, call);
        }
    });
}

#[test]
fn arguments_past_the_depth_limit_stay_text() {
    let text = nested(tools_json::DEFAULT_MAX_DEPTH + 1);
    assert_eq!(parse_call_args(&text), Value::String(text.clone()));
    let view: ToolCallView = GenericCallView::new("t").with_raw_input(json!(text)).into();
    assert_eq!(view.title(), "t");
}
