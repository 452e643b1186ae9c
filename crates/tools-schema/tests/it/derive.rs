//! `#[derive(ToolArgs)]` and `#[derive(ToolSchema)]`: the compiled JSON of representative
//! types, pinned as text (renames, `rename_all`, `default`, `skip`, `flatten`,
//! `deny_unknown_fields`, every enum representation, doc comments, bounds), and what the
//! schemas accept.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tools_schema::testing::check_args_type;
use tools_schema::{ArgsSchema, OutputSchema, Schema, ToolArgs, ToolSchema};

fn params_text<T: ToolArgs>() -> String {
    T::tool_params()
        .compile()
        .map(|c| c.as_json().to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn schema_text<T: ToolSchema + ?Sized>() -> String {
    T::tool_schema()
        .compile()
        .map(|c| c.as_json().to_string())
        .unwrap_or_else(|e| e.to_string())
}

/// Search the service logs.
#[derive(Debug, Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct SearchLogs {
    /// What to look for.
    ///
    /// Plain text, case-sensitive.
    #[tool(min_length = 1, max_length = 200)]
    query_text: String,
    #[serde(rename = "max")]
    #[tool(range = 1..=500)]
    max_results: Option<u16>,
    #[serde(default)]
    include_archived: bool,
    #[serde(skip)]
    cache_key: String,
    #[tool(pattern = "^[a-z]+$", example = "api")]
    service: Option<String>,
    #[tool(min_items = 1, unique_items)]
    levels: Vec<Level>,
    #[tool(format = "date-time", description = "ISO 8601, UTC.")]
    since: Option<String>,
    r#type: Option<char>,
}

/// How loud a log line is.
#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Level {
    Debug,
    Info,
    #[serde(rename = "warning")]
    Warn,
    Error,
}

#[test]
fn a_parameter_map_is_derived_from_the_struct_and_its_serde_attributes() {
    assert_eq!(
        params_text::<SearchLogs>(),
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""queryText":{"type":"string","description":"What to look for.\n\nPlain text, case-sensitive.","minLength":1,"maxLength":200},"#,
            r#""max":{"type":"integer","minimum":1,"maximum":500},"#,
            r#""includeArchived":{"type":"boolean"},"#,
            r#""service":{"type":"string","examples":["api"],"pattern":"^[a-z]+$"},"#,
            r#""levels":{"type":"array","minItems":1,"uniqueItems":true,"#,
            r#""items":{"type":"string","description":"How loud a log line is.","enum":["debug","info","warning","error"]}},"#,
            r#""since":{"type":"string","description":"ISO 8601, UTC.","format":"date-time"},"#,
            r#""type":{"type":"string","minLength":1,"maxLength":1}},"#,
            r#""required":["queryText","levels"]}"#
        )
    );
}

/// Paging, shared by list tools.
#[derive(Debug, Deserialize, ToolArgs, PartialEq)]
#[serde(deny_unknown_fields)]
struct Page {
    /// Items to skip.
    offset: Option<u32>,
    #[tool(range = 1..=100)]
    limit: Option<u8>,
}

#[derive(Debug, Deserialize, ToolArgs, PartialEq)]
struct ListUsers {
    team: String,
    #[serde(flatten)]
    page: Page,
}

#[test]
fn deny_unknown_fields_closes_the_root_and_flatten_merges_properties() {
    assert_eq!(
        params_text::<Page>(),
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"#,
            r#""offset":{"type":"integer","description":"Items to skip.","minimum":0,"maximum":4294967295},"#,
            r#""limit":{"type":"integer","minimum":1,"maximum":100}}}"#
        )
    );
    assert_eq!(
        params_text::<ListUsers>(),
        concat!(
            r#"{"type":"object","properties":{"team":{"type":"string"},"#,
            r#""offset":{"type":"integer","description":"Items to skip.","minimum":0,"maximum":4294967295},"#,
            r#""limit":{"type":"integer","minimum":1,"maximum":100}},"required":["team"]}"#
        )
    );
    let schema = ArgsSchema::<ListUsers>::new(&ListUsers::tool_params()).unwrap();
    assert_eq!(
        schema
            .parse_value(json!({"team": "a", "limit": 7}))
            .unwrap(),
        ListUsers {
            team: "a".into(),
            page: Page {
                offset: None,
                limit: Some(7)
            }
        }
    );
    let closed = ArgsSchema::<Page>::new(&Page::tool_params()).unwrap();
    let err = closed
        .parse_value(json!({"limit": 0, "extra": 1}))
        .unwrap_err();
    assert_eq!(err.violations().len(), 2, "{err}");
}

/// A shape to draw.
#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(rename_all = "snake_case", rename_all_fields = "camelCase")]
enum External {
    /// A dot.
    Point,
    Origin,
    /// A circle around the origin.
    Circle {
        radius_cm: f64,
    },
    Label(String),
}

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
struct Named {
    name: String,
}

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(tag = "kind")]
enum Internal {
    Started,
    Moved { x: i8, y: i8 },
    Named(Named),
}

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(tag = "t", content = "c", deny_unknown_fields)]
enum Adjacent {
    Ping,
    Text(String),
    Move { dx: i8 },
}

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(untagged)]
enum Untagged {
    Number(u32),
    Name(String),
    Pair { a: bool },
    Nothing,
}

#[test]
fn each_enum_representation_has_its_schema() {
    assert_eq!(
        schema_text::<External>(),
        concat!(
            r#"{"oneOf":[{"type":"string","enum":["point","origin"]},"#,
            r#"{"type":"object","description":"A circle around the origin.","additionalProperties":false,"#,
            r#""properties":{"circle":{"type":"object","additionalProperties":true,"#,
            r#""properties":{"radiusCm":{"type":"number"}},"required":["radiusCm"]}},"required":["circle"]},"#,
            r#"{"type":"object","additionalProperties":false,"properties":{"label":{"type":"string"}},"required":["label"]}],"#,
            r#""description":"A shape to draw."}"#
        )
    );
    assert_eq!(
        schema_text::<Internal>(),
        concat!(
            r#"{"oneOf":[{"type":"object","additionalProperties":true,"#,
            r#""properties":{"kind":{"type":"string","const":"Started"}},"required":["kind"]},"#,
            r#"{"type":"object","additionalProperties":true,"properties":{"kind":{"type":"string","const":"Moved"},"#,
            r#""x":{"type":"integer","minimum":-128,"maximum":127},"y":{"type":"integer","minimum":-128,"maximum":127}},"#,
            r#""required":["kind","x","y"]},"#,
            r#"{"type":"object","additionalProperties":true,"#,
            r#""properties":{"kind":{"type":"string","const":"Named"},"name":{"type":"string"}},"required":["kind","name"]}]}"#
        )
    );
    assert_eq!(
        schema_text::<Adjacent>(),
        concat!(
            r#"{"oneOf":[{"type":"object","additionalProperties":false,"#,
            r#""properties":{"t":{"type":"string","const":"Ping"}},"required":["t"]},"#,
            r#"{"type":"object","additionalProperties":false,"#,
            r#""properties":{"t":{"type":"string","const":"Text"},"c":{"type":"string"}},"required":["t","c"]},"#,
            r#"{"type":"object","additionalProperties":false,"properties":{"t":{"type":"string","const":"Move"},"#,
            r#""c":{"type":"object","additionalProperties":false,"#,
            r#""properties":{"dx":{"type":"integer","minimum":-128,"maximum":127}},"required":["dx"]}},"#,
            r#""required":["t","c"]}]}"#
        )
    );
    assert_eq!(
        schema_text::<Untagged>(),
        concat!(
            r#"{"oneOf":[{"type":"integer","minimum":0,"maximum":4294967295},{"type":"string"},"#,
            r#"{"type":"object","additionalProperties":true,"properties":{"a":{"type":"boolean"}},"required":["a"]},"#,
            r#"{"type":"null"}]}"#
        )
    );
    assert_eq!(
        schema_text::<Level>(),
        r#"{"type":"string","description":"How loud a log line is.","enum":["debug","info","warning","error"]}"#
    );
}

/// Every variant of every representation serializes to JSON its schema accepts, and that
/// JSON reads back (what a tool output goes through).
#[test]
fn enum_values_round_trip_through_their_schemas() {
    fn check<T>(values: Vec<T>)
    where
        T: ToolSchema + Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let output = OutputSchema::<T>::new(T::tool_schema()).unwrap();
        for value in values {
            let json = serde_json::to_value(&value).unwrap();
            let validated = output.validate(value).unwrap();
            let back = output.read(validated.json().clone()).unwrap();
            assert_eq!(back.value(), validated.value(), "{json}");
        }
    }
    check(vec![
        External::Point,
        External::Origin,
        External::Circle { radius_cm: 2.5 },
        External::Label("x".into()),
    ]);
    check(vec![
        Internal::Started,
        Internal::Moved { x: -128, y: 127 },
        Internal::Named(Named { name: "n".into() }),
    ]);
    check(vec![
        Adjacent::Ping,
        Adjacent::Text("t".into()),
        Adjacent::Move { dx: 3 },
    ]);
    check(vec![
        Untagged::Number(7),
        Untagged::Name("n".into()),
        Untagged::Pair { a: true },
        Untagged::Nothing,
    ]);
}

/// A file slice, as a tool returns it.
#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(deny_unknown_fields)]
struct Slice {
    /// The lines.
    text: String,
    next_offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    level: Option<Level>,
}

#[test]
fn option_fields_of_values_admit_null_because_serde_writes_it() {
    assert_eq!(
        schema_text::<Slice>(),
        concat!(
            r#"{"type":"object","description":"A file slice, as a tool returns it.","additionalProperties":false,"#,
            r#""properties":{"text":{"type":"string","description":"The lines."},"#,
            r#""next_offset":{"oneOf":[{"type":"integer","minimum":0},{"type":"null"}]},"#,
            r#""warnings":{"type":"array","items":{"type":"string"}},"#,
            r#""level":{"oneOf":[{"type":"string","description":"How loud a log line is.","enum":["debug","info","warning","error"]},{"type":"null"}]}},"#,
            r#""required":["text"]}"#
        )
    );
    let output = OutputSchema::<Slice>::new(Slice::tool_schema()).unwrap();
    let value = Slice {
        text: "a".into(),
        next_offset: None,
        warnings: Vec::new(),
        level: None,
    };
    let validated = output.validate(value).unwrap();
    assert_eq!(
        validated.json().to_string(),
        r#"{"text":"a","next_offset":null,"level":null}"#
    );
}

/// A user id.
#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
struct UserId(#[tool(min_length = 3)] String);

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
#[serde(transparent)]
struct Meters {
    #[tool(minimum = 0.0)]
    value: f64,
}

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
struct Marker;

#[derive(Debug, Deserialize, Serialize, ToolSchema, PartialEq)]
struct Listing<T> {
    items: Vec<T>,
    #[tool(unique_items)]
    pages: [u8; 3],
}

#[test]
fn newtype_transparent_unit_and_generic_structs() {
    assert_eq!(
        schema_text::<UserId>(),
        r#"{"type":"string","description":"A user id.","minLength":3}"#
    );
    assert_eq!(schema_text::<Meters>(), r#"{"type":"number","minimum":0}"#);
    assert_eq!(schema_text::<Marker>(), r#"{"type":"null"}"#);
    assert_eq!(
        schema_text::<Listing<UserId>>(),
        concat!(
            r#"{"type":"object","additionalProperties":true,"properties":{"#,
            r#""items":{"type":"array","items":{"type":"string","description":"A user id.","minLength":3}},"#,
            r#""pages":{"type":"array","minItems":3,"maxItems":3,"uniqueItems":true,"#,
            r#""items":{"type":"integer","minimum":0,"maximum":255}}},"required":["items","pages"]}"#
        )
    );
}

/// A tree: it contains itself, which the subset (no references) cannot describe.
#[derive(Debug, Deserialize, ToolArgs)]
#[allow(dead_code)]
struct Tree {
    children: Vec<Tree>,
}

fn lowercase() -> Schema {
    Schema::string().pattern("^[a-z]+$").into()
}

mod as_text {
    use serde::{Deserialize, Deserializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Deserialize, ToolArgs)]
#[allow(dead_code)]
struct Overridden {
    #[tool(schema = lowercase, description = "Lower-case letters.")]
    name: String,
    #[serde(deserialize_with = "as_text::deserialize")]
    #[tool(schema = "tools_schema::Schema::string")]
    count: u32,
    #[serde(default, deserialize_with = "as_text::deserialize")]
    #[tool(schema = "tools_schema::Schema::string")]
    limit: u32,
}

#[test]
fn recursion_is_an_error_and_overrides_replace_the_schema() {
    let err = params_text::<Tree>();
    assert!(
        err.contains("recursive type `")
            && err.contains("Tree` (the schema subset has no references)"),
        "{err}"
    );
    assert_eq!(
        params_text::<Overridden>(),
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""name":{"type":"string","description":"Lower-case letters.","pattern":"^[a-z]+$"},"#,
            r#""count":{"type":"string"},"limit":{"type":"string"}},"required":["name","count"]}"#
        )
    );
}

#[test]
fn derived_argument_types_agree_with_their_schemas() {
    let search = ArgsSchema::<SearchLogs>::new(&SearchLogs::tool_params()).unwrap();
    assert!(check_args_type(&search).unwrap() > 0);
    let users = ArgsSchema::<ListUsers>::new(&ListUsers::tool_params()).unwrap();
    assert!(check_args_type(&users).unwrap() > 0);
    // Bounds are enforced before serde runs: every violation at once.
    let err = search
        .parse_value(json!({"queryText": "", "max": 501, "levels": [], "type": "ab"}))
        .unwrap_err();
    let text = err.to_string();
    for path in ["queryText", "max", "levels", "type"] {
        assert!(text.contains(&format!("{path}: ")), "{text}");
    }
    let ok: Value = json!({"queryText": "x", "max": 500, "levels": ["warning", "error"]});
    assert_eq!(
        search.parse_value(ok).unwrap().levels,
        [Level::Warn, Level::Error]
    );
}

/// A schema/type mismatch that only deserializing finds: the schema allows any string `id`,
/// the type wants a number.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Mismatched {
    id: u32,
}

impl ToolArgs for Mismatched {
    fn tool_params() -> tools_schema::Params {
        tools_schema::params().required("id", Schema::string())
    }
}

#[test]
fn check_fails_exactly_as_parse_does() {
    let schema = ArgsSchema::<ListUsers>::new(&ListUsers::tool_params()).unwrap();
    for invalid in [
        json!({}),
        json!({"team": 1, "limit": 0}),
        json!({"team": "a", "offset": -1}),
        json!([]),
    ] {
        let args = tools_schema::JsonValue::new(invalid).unwrap();
        let checked = schema.check(&args).unwrap_err();
        assert_eq!(checked, schema.parse(&args).unwrap_err());
        assert_eq!(checked.code(), tools_schema::ErrorCode::InvalidArgs);
    }
    let valid = tools_schema::JsonValue::new(json!({"team": "a", "limit": 7})).unwrap();
    assert_eq!(schema.check(&valid), Ok(()));
    assert_eq!(schema.parse(&valid).unwrap().page.limit, Some(7));
    // What only deserializing finds fails the check too, as it fails `parse`.
    let mismatched = ArgsSchema::<Mismatched>::new(&Mismatched::tool_params()).unwrap();
    let args = tools_schema::JsonValue::new(json!({"id": "seven"})).unwrap();
    let checked = mismatched.check(&args).unwrap_err();
    assert!(matches!(checked, tools_schema::Error::ArgsType { .. }));
    assert_eq!(checked, mismatched.parse(&args).unwrap_err());
    assert_eq!(checked.code(), tools_schema::ErrorCode::InvalidArgs);
}
