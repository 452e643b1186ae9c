//! The text parser against `serde_json::from_str`, on hand-picked texts and number
//! lexemes, and on very deep texts.
use super::*;

fn same_as_serde_json(text: &str) {
    let ours = parse_text(text);
    let theirs = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
    assert_eq!(ours, theirs, "{text:?}");
}

#[test]
fn matches_serde_json_on_hand_picked_texts() {
    for text in [
        "",
        " ",
        "null",
        "nul",
        "nulx",
        "tru",
        "[1,2",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{",
        "{\"a\"",
        "{\"a\" 1}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":1,2}",
        "{1:2}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1,\"a\":2,\"b\":3}",
        "-",
        "-a",
        "01",
        "1.",
        "1.x",
        "1e",
        "1e+",
        "1ex",
        "1e400",
        "-1e400",
        "1.5e-400",
        "123456789012345678901234567890",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "-0",
        "-0.0e-0",
        "\"abc",
        "\"a\\x\"",
        "\"a\nb\"",
        "[\"a\",\n \"b\\u12\"]",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud83d\\ude00\"",
        "\"\\u00e9\\n\\t\\\"\\\\\\/\"",
        "[1] x",
        "[1]\n\n  x",
        "{\"k\": [true, false, null, {\"x\": []}]}\n",
        "\"\u{1F600}\"",
        "[\n1,\n\"\u{e9}\u{e9}\n\"]",
    ] {
        same_as_serde_json(text);
    }
}

#[test]
fn a_very_deep_text_parses_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let depth = 50_000;
            let text = "[".repeat(depth) + &"]".repeat(depth);
            let value = parse_text(&text);
            assert!(value.is_ok());
            if let Ok(value) = value {
                drop_deep(value);
            }
            // A failure deep down drops what was built so far without recursion.
            let broken = "[".repeat(depth) + "[1]" + &"]".repeat(depth - 1);
            assert!(parse_text(&broken).is_err());
        })
        .unwrap();
    assert!(handle.join().is_ok());
}

/// The value and its representation (`Number`'s `Debug` tells an integer from a float and
/// `-0.0` from `0.0`, which `==` does not).
fn exactly(parsed: Result<Value, String>) -> Result<String, String> {
    parsed.map(|value| format!("{value:?}"))
}

#[test]
fn numbers_read_directly_are_the_numbers_serde_json_reads() {
    for lexeme in [
        "0",
        "-0",
        "7",
        "-7",
        "999999999999999999",
        "-999999999999999999",
        "1000000000000000000",
        "9223372036854775807",
        "-9223372036854775808",
        "0.0",
        "-0.0",
        "1.0",
        "1e2",
        "1E+2",
        "-1e-2",
        "0.1",
        "2.5e-324",
        "1e-400",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "1e400",
        "-1e400",
        "123456789012345678901234567890.5",
    ] {
        let theirs = serde_json::from_str::<Value>(lexeme).map_err(|e| e.to_string());
        assert_eq!(exactly(parse_text(lexeme)), exactly(theirs), "{lexeme}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

    /// Any number lexeme (integers up to 25 digits, fractions, exponents), alone and in an
    /// array: the same value and representation as `serde_json::from_str`, or the same
    /// refusal.
    #[test]
    fn any_number_reads_as_serde_json_reads_it(
        lexeme in "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
    ) {
        for text in [lexeme.clone(), format!("[{lexeme}, {lexeme}]")] {
            let theirs = serde_json::from_str::<Value>(&text).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(exactly(parse_text(&text)), exactly(theirs), "{}", text);
        }
    }
}

/// The parser keeps its lists in a thread local; a parse in another thread local's
/// destructor, after that one is gone, uses fresh lists instead of panicking (a panic
/// there would abort the process).
#[test]
fn a_parse_in_a_thread_local_destructor_still_parses() {
    struct ParsesOnDrop;
    impl Drop for ParsesOnDrop {
        fn drop(&mut self) {
            let parsed = parse_text("[1, {\"a\": [2]}]");
            assert_eq!(parsed.ok(), Some(serde_json::json!([1, {"a": [2]}])));
        }
    }
    thread_local! {
        static GUARD: ParsesOnDrop = const { ParsesOnDrop };
    }
    let handle = std::thread::spawn(|| {
        // The guard's destructor is registered first, so it runs after the parser's
        // lists (registered by the first parse) are destroyed.
        GUARD.with(|_| {});
        assert!(parse_text("[1]").is_ok());
    });
    assert!(handle.join().is_ok());
}

#[test]
fn what_a_thread_keeps_between_parses_is_bounded() {
    let wide = format!("[{}]", vec!["{\"k\": [1, 2]}"; 2 * KEPT].join(","));
    assert!(parse_text(&wide).is_ok());
    OPEN.with(|kept| {
        let kept = kept.borrow();
        assert!(kept.items.capacity() <= KEPT && kept.members.capacity() <= KEPT);
        assert!(kept.frames.is_empty() && kept.items.is_empty() && kept.members.is_empty());
    });
    // A failure deep inside leaves nothing behind either.
    assert!(parse_text("[{\"a\": [1, 2, {\"b\": x}]}]").is_err());
    OPEN.with(|kept| {
        let kept = kept.borrow();
        assert!(kept.frames.is_empty() && kept.items.is_empty() && kept.members.is_empty());
    });
}
