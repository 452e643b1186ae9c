//! The output ledger against `serde_json`: its byte count is the length of the JSON text of
//! the logs (plus value or message), and truncation never splits a code point.

use proptest::prelude::*;
use tools_codemode::{CodeRunFailure, FailureKind, OutputLedger, json_string_len, json_value_len};
use tools_json::JsonValue;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,40}", "[\\x00-\\x1f\"\\\\a€😀]{0,40}", any::<String>(),]
}

proptest! {
    #[test]
    fn the_count_equals_the_serialised_length(logs in prop::collection::vec(text(), 0..12), value in text(), message in text()) {
        let mut ledger = OutputLedger::new(usize::MAX);
        for log in &logs {
            prop_assert!(ledger.push(log));
        }
        let serialised = serde_json::to_string(&logs).unwrap();
        prop_assert_eq!(ledger.used(), serialised.len());
        let as_json = serde_json::Value::String(value.clone());
        prop_assert_eq!(json_value_len(&as_json), serde_json::to_string(&value).unwrap().len());
        prop_assert_eq!(json_string_len(&message), serde_json::to_string(&message).unwrap().len());

        // Exactly at the cap succeeds, one byte under fails.
        let total = serialised.len() + serde_json::to_string(&value).unwrap().len();
        let complete = |cap: usize| {
            let mut ledger = OutputLedger::new(cap);
            for log in &logs {
                ledger.push(log);
            }
            ledger.complete(Some(JsonValue::new(as_json.clone()).unwrap()))
        };
        prop_assert!(complete(total).error.is_none());
        let over = complete(total - 1).error.unwrap();
        prop_assert_eq!(over.kind, FailureKind::OutputLimit);
        let total = serialised.len() + json_string_len(&message);
        let fail = |cap: usize| {
            let mut ledger = OutputLedger::new(cap);
            for log in &logs {
                ledger.push(log);
            }
            ledger.fail(CodeRunFailure::new(FailureKind::Exception, message.clone()))
        };
        prop_assert_eq!(fail(total).error.unwrap().kind, FailureKind::Exception);
        prop_assert_eq!(fail(total - 1).error.unwrap().kind, FailureKind::OutputLimit);
    }

    #[test]
    fn truncation_keeps_whole_code_points_and_fits(logs in prop::collection::vec(text(), 1..12), cap in 4usize..400) {
        let mut ledger = OutputLedger::new(cap);
        for log in &logs {
            ledger.push(log);
        }
        let result = ledger.complete(None);
        let kept = serde_json::to_string(&result.logs).unwrap().len();
        match &result.error {
            None => {
                prop_assert_eq!(&result.logs, &logs);
                prop_assert!(kept <= cap);
            }
            Some(error) => {
                prop_assert_eq!(error.kind, FailureKind::OutputLimit);
                prop_assert_eq!(&error.message, &format!("outer output exceeded {cap} bytes"));
                if !result.logs.is_empty() {
                    prop_assert!(kept + json_string_len(&error.message) <= cap);
                }
                // Every kept entry is a prefix of the entry it came from (strings are
                // always valid UTF-8, so a cut can only be on a code-point boundary).
                prop_assert!(result.logs.len() <= logs.len());
                for (kept, original) in result.logs.iter().zip(&logs) {
                    prop_assert!(original.starts_with(kept.as_str()));
                    prop_assert!(original.is_char_boundary(kept.len()));
                }
                if result.logs.len() > 1 {
                    let whole = &result.logs[..result.logs.len() - 1];
                    prop_assert_eq!(whole, &logs[..whole.len()]);
                }
            }
        }
    }
}
