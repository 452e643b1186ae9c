//! Property tests: rendering is total on arbitrary JSON, deterministic and independent of
//! input order; a schema degrades to `unknown` / `Any` exactly when
//! `tools_json::check_schema` rejects it; generated Python names are identifiers and
//! TypeScript keys round-trip.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_codemode_sdk::{
    Language, SdkOptions, ToolSdkSchema, json_schema_to_py, json_schema_to_ts,
};

/// Names that exercise every naming rule.
const NAMES: [&str; 24] = [
    "a",
    "bash",
    "my-tool",
    "my.tool",
    "_x",
    "__meta__",
    "__token",
    "class",
    "match",
    "1st",
    "ünï",
    "搜索",
    "\u{FB01}nd",
    "a\u{200C}b",
    "\u{301}abc",
    "",
    "$ok",
    "list",
    "str",
    "Phase",
    "phase",
    "a|b",
    "x&y",
    "\u{10400}\u{10428}",
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&NAMES[..]).prop_map(str::to_owned),
        1 => "\\PC{0,6}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop_oneof![Just(-0.0f64), Just(1e21f64), Just(0.5f64), -1e6f64..1e6f64]
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,5}".prop_map(Value::String),
        prop::sample::select(&["a|b", "*/", "\"", "\\", "\u{0}", "\u{85}"][..])
            .prop_map(|s| Value::String(s.to_owned())),
    ]
}

/// Arbitrary JSON (most of which is not a schema at all).
fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

const TYPES: [&str; 8] = [
    "string", "number", "integer", "boolean", "null", "array", "object", "weird",
];
const KEYS: [&str; 15] = [
    "type",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "description",
    "title",
    "default",
    "examples",
    "format",
    "$ref",
    "minimum",
];

/// Schema-like JSON: mostly inside the subset, with every kind of near miss.
fn schema_like() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({})),
        prop::sample::select(&TYPES[..]).prop_map(|t| json!({"type": t})),
        (
            prop::sample::select(&TYPES[..5]),
            prop::collection::vec(scalar(), 0..3)
        )
            .prop_map(|(t, members)| json!({"type": t, "enum": members})),
        (prop::sample::select(&TYPES[..5]), scalar())
            .prop_map(|(t, c)| json!({"type": t, "const": c})),
        ("\\PC{0,8}", prop::sample::select(&TYPES[..5]))
            .prop_map(|(d, t)| json!({"type": t, "description": d})),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|b| json!({"oneOf": b})),
            inner
                .clone()
                .prop_map(|i| json!({"type": "array", "items": i})),
            (
                prop::collection::vec((name(), inner.clone()), 0..4),
                prop::collection::vec(name(), 0..3),
                prop::option::of(any::<bool>()),
            )
                .prop_map(|(props, required, additional)| {
                    let mut map = Map::new();
                    map.insert("type".into(), json!("object"));
                    map.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                    map.insert("required".into(), json!(required));
                    if let Some(additional) = additional {
                        map.insert("additionalProperties".into(), json!(additional));
                    }
                    Value::Object(map)
                }),
            (inner.clone(), prop::sample::select(&KEYS[..]), any_json()).prop_map(|(s, k, v)| {
                let mut s = s;
                if let Some(map) = s.as_object_mut() {
                    map.insert(k.to_owned(), v);
                }
                s
            }),
        ]
    })
}

fn tools() -> impl Strategy<Value = Vec<ToolSdkSchema>> {
    let schema = prop_oneof![schema_like(), any_json()];
    prop::collection::vec((name(), "\\PC{0,10}", schema.clone(), schema), 0..5).prop_map(|tools| {
        tools
            .into_iter()
            .map(|(n, d, p, o)| ToolSdkSchema::new(n, d, p, o))
            .collect()
    })
}

fn is_python_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || unicode_ident::is_xid_start(c))
        && chars.all(unicode_ident::is_xid_continue)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn type_text_is_total_and_deterministic(schema in prop_oneof![schema_like(), any_json()], indent in 0usize..4) {
        let ts = json_schema_to_ts(&schema, indent);
        prop_assert_eq!(&ts, &json_schema_to_ts(&schema, indent));
        let py = json_schema_to_py(&schema);
        prop_assert_eq!(&py, &json_schema_to_py(&schema));
        let supported = tools_json::check_schema(&schema).is_empty();
        prop_assert_eq!(ts == "unknown", !supported);
        prop_assert_eq!(py == "Any", !supported || schema.as_object().is_some_and(|m| !m.contains_key("type") && !m.contains_key("oneOf")));
    }

    #[test]
    fn sections_are_total_deterministic_and_order_independent(tools in tools()) {
        let reversed: Vec<ToolSdkSchema> = tools.iter().rev().cloned().collect();
        for language in Language::ALL {
            let section = language.render_section(&tools);
            prop_assert_eq!(&section, &language.render_section(&tools));
            // Equal names keep their input order, so only sets of distinct names are
            // independent of the input order.
            let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            if names.len() == tools.len() {
                prop_assert_eq!(&section, &language.render_section(&reversed));
            }
            prop_assert!(section.ends_with("\n```"));
        }
    }

    #[test]
    fn generated_python_names_are_identifiers(tools in tools()) {
        let text = Language::Python.render_declarations(&tools);
        let mut classes = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("class ") {
                let name = rest.split('(').next().unwrap_or_default();
                prop_assert!(is_python_identifier(name), "class {:?}", name);
                prop_assert!(name.encode_utf16().count() <= 140);
                classes.push(name.to_owned());
            }
            if let Some(rest) = line.strip_prefix("    async def ") {
                let name = rest.split('(').next().unwrap_or_default();
                prop_assert!(is_python_identifier(name), "method {:?}", name);
                prop_assert!(!name.starts_with('_'));
            }
            if let Some((field, _)) = line
                .strip_prefix("    ")
                .filter(|_| !line.starts_with("    #"))
                .and_then(|rest| rest.split_once(": "))
                && !field.starts_with("async def")
                && !field.contains(' ')
            {
                prop_assert!(is_python_identifier(field), "field {:?}", field);
            }
        }
        let mut unique = classes.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), classes.len(), "class names are unique");
    }

    #[test]
    fn tool_search_keeps_the_sdk_rules_and_signatures_stay_on_one_line(tools in tools()) {
        let search = SdkOptions::new().with_tool_search(true);
        let helper_lines = [
            (Language::TypeScript, "\n  $search(query: string, options?: { limit?: number })"),
            (Language::Python, "\n    async def search_tools(self, query: str, limit: int = 5)"),
        ];
        for (language, helper_line) in helper_lines {
            prop_assert_eq!(
                language.render_section_with(&tools, SdkOptions::new()),
                language.render_section(&tools)
            );
            let section = language.render_section_with(&tools, search);
            prop_assert_eq!(&section, &language.render_section_with(&tools, search));
            prop_assert_eq!(section.matches(helper_line).count(), 1, "{}", section);
            for tool in &tools {
                let signature = language.render_signature(tool);
                prop_assert!(!signature.contains('\n'), "{:?}", signature);
                prop_assert_eq!(&signature, &language.render_signature(tool));
            }
        }
        let text = Language::Python.render_declarations_with(&tools, search);
        let mut classes: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("class "))
            .map(|rest| rest.split('(').next().unwrap_or_default())
            .collect();
        let count = classes.len();
        classes.sort_unstable();
        classes.dedup();
        prop_assert_eq!(classes.len(), count, "class names are unique");
        prop_assert!(classes.contains(&"FoundTool") && classes.contains(&"ToolDescription"));
    }

    #[test]
    fn typescript_keys_are_bare_identifiers_or_round_trip_as_strings(key in name()) {
        let schema = json!({"type": "object", "additionalProperties": false, "properties": {key.clone(): {}}});
        let text = json_schema_to_ts(&schema, 0);
        let line = text.lines().nth(1).unwrap_or_default();
        let rendered = line.trim_start().strip_suffix("?: JsonValue;").unwrap_or_default();
        if rendered.starts_with('"') {
            let parsed: String = serde_json::from_str(rendered).unwrap_or_default();
            prop_assert_eq!(parsed, key);
        } else {
            prop_assert_eq!(rendered, key.as_str());
            prop_assert!(rendered.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$'));
        }
    }
}
