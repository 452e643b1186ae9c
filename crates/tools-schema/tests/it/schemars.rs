//! The schemars bridge (feature `schemars`): realistic `schemars::JsonSchema` derives
//! converted to the author DSL, the compiled JSON pinned as text, the values of the types
//! accepted by their own schemas (a property test), samples of the schemas accepted by the
//! types, and the refusals (recursion, maps) with every path.

use std::collections::HashMap;

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tools_schema::testing::check_args_type;
use tools_schema::{ArgsSchema, ErrorCode, OutputSchema, Params, Schema, ViolationKind};

/// Read a text file.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadFile {
    /// Absolute path of the file.
    path: String,
    /// The first line to read, 1-based.
    offset: Option<u32>,
    /// How many lines to read at most.
    limit: Option<u8>,
    /// Added to every printed line number.
    shift: i64,
    /// Keep only the lines that contain one of these.
    filters: Vec<String>,
    encoding: Encoding,
    /// Only this byte range.
    range: Option<ByteRange>,
    options: Options,
}

/// How the bytes are decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Encoding {
    Utf8,
    Latin1,
}

/// A half-open byte range.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
struct ByteRange {
    start: u64,
    end: u64,
}

/// Reader options.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
struct Options {
    /// Follow symbolic links.
    #[serde(default)]
    follow_links: bool,
    tab_width: u8,
}

/// Where a fetch reads from.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Source {
    /// A local file.
    File { path: String },
    /// A URL, with a timeout.
    Url {
        url: String,
        timeout_ms: Option<u32>,
    },
    /// Standard input.
    Stdin,
}

/// A tree of names (recursive).
#[derive(JsonSchema, Serialize)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

/// A linked list (recursive through `Option<Box<_>>`).
#[derive(JsonSchema, Serialize)]
struct Node {
    value: i32,
    next: Option<Box<Node>>,
}

/// Environment for a command.
#[derive(JsonSchema, Serialize)]
struct Env {
    vars: HashMap<String, String>,
    inner: Inner,
}

#[derive(JsonSchema, Serialize)]
struct Inner {
    counts: HashMap<String, u32>,
    next: Option<Box<Env>>,
}

fn compiled_params<T: JsonSchema>() -> String {
    Params::from_schemars::<T>()
        .and_then(|p| p.compile())
        .map(|c| c.as_json().to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn compiled_schema<T: JsonSchema>() -> String {
    Schema::from_schemars::<T>()
        .and_then(|s| s.compile())
        .map(|c| c.as_json().to_string())
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn read_file_args_compile_to_the_pinned_schema() {
    assert_eq!(
        compiled_params::<ReadFile>(),
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"#,
            r#""path":{"type":"string","description":"Absolute path of the file."},"#,
            r#""offset":{"oneOf":[{"type":"integer","format":"uint32","minimum":0},{"type":"null"}],"description":"The first line to read, 1-based."},"#,
            r#""limit":{"oneOf":[{"type":"integer","format":"uint8","minimum":0,"maximum":255},{"type":"null"}],"description":"How many lines to read at most."},"#,
            r#""shift":{"type":"integer","description":"Added to every printed line number.","format":"int64"},"#,
            r#""filters":{"type":"array","description":"Keep only the lines that contain one of these.","items":{"type":"string"}},"#,
            r#""encoding":{"type":"string","description":"How the bytes are decoded.","enum":["utf8","latin1"]},"#,
            r#""range":{"oneOf":[{"type":"object","description":"A half-open byte range.","additionalProperties":true,"#,
            r#""properties":{"start":{"type":"integer","format":"uint64","minimum":0},"end":{"type":"integer","format":"uint64","minimum":0}},"required":["start","end"]},"#,
            r#"{"type":"null"}],"description":"Only this byte range."},"#,
            r#""options":{"type":"object","description":"Reader options.","additionalProperties":true,"properties":{"#,
            r#""follow_links":{"type":"boolean","description":"Follow symbolic links.","default":false},"#,
            r#""tab_width":{"type":"integer","format":"uint8","minimum":0,"maximum":255}},"required":["tab_width"]}},"#,
            r#""required":["path","shift","filters","encoding","options"]}"#,
        )
    );
    assert!(Params::from_schemars::<ReadFile>().unwrap().is_closed());
}

#[test]
fn the_author_spec_is_the_dsl_form() {
    let spec = Schema::from_schemars::<ByteRange>().unwrap();
    assert_eq!(
        spec.as_json().to_string(),
        concat!(
            r#"{"type":"object","description":"A half-open byte range.","title":"ByteRange","additionalProperties":true,"#,
            r#""properties":{"start":{"type":"integer","format":"uint64","minimum":0,"required":true},"#,
            r#""end":{"type":"integer","format":"uint64","minimum":0,"required":true}}}"#,
        )
    );
    // A parameter map has no slot for the root's annotations.
    let params = Params::from_schemars::<ByteRange>().unwrap();
    assert_eq!(
        params.as_json().to_string(),
        concat!(
            r#"{"start":{"type":"integer","format":"uint64","minimum":0,"required":true},"#,
            r#""end":{"type":"integer","format":"uint64","minimum":0,"required":true}}"#,
        )
    );
}

#[test]
fn an_internally_tagged_enum_is_a_one_of_of_objects() {
    assert_eq!(
        compiled_schema::<Source>(),
        concat!(
            r#"{"oneOf":["#,
            r#"{"type":"object","description":"A local file.","additionalProperties":true,"properties":{"kind":{"type":"string","const":"file"},"path":{"type":"string"}},"required":["kind","path"]},"#,
            r#"{"type":"object","description":"A URL, with a timeout.","additionalProperties":true,"properties":{"kind":{"type":"string","const":"url"},"url":{"type":"string"},"#,
            r#""timeout_ms":{"oneOf":[{"type":"integer","format":"uint32","minimum":0},{"type":"null"}]}},"required":["kind","url"]},"#,
            r#"{"type":"object","description":"Standard input.","additionalProperties":true,"properties":{"kind":{"type":"string","const":"stdin"}},"required":["kind"]}"#,
            r#"],"description":"Where a fetch reads from.","title":"Source"}"#,
        )
    );
}

#[test]
fn an_optional_tagged_enum_nests_its_one_of() {
    #[derive(JsonSchema, Serialize)]
    struct Fetch {
        source: Option<Source>,
    }
    let schema = OutputSchema::<Fetch>::new(Schema::from_schemars::<Fetch>().unwrap()).unwrap();
    for source in [
        None,
        Some(Source::Stdin),
        Some(Source::File { path: "/a".into() }),
        Some(Source::Url {
            url: "https://x".into(),
            timeout_ms: Some(5),
        }),
    ] {
        schema.validate(Fetch { source }).unwrap();
    }
}

#[test]
fn recursion_is_refused_at_the_ref_that_closes_the_cycle() {
    let err = Schema::from_schemars::<Tree>().unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
    let paths: Vec<String> = err
        .violations()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(paths, ["schema.properties.children.items.$ref"]);
    assert_eq!(
        err.violations()[0].kind,
        ViolationKind::UnsupportedKeyword {
            keyword: "$ref".into()
        }
    );

    let err = Params::from_schemars::<Node>().unwrap_err();
    let paths: Vec<String> = err
        .violations()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(paths, ["schema.properties.next.anyOf[0].$ref"]);
}

#[test]
fn maps_and_recursion_are_all_reported() {
    let err = Params::from_schemars::<Env>().unwrap_err();
    let listed: Vec<String> = err
        .violations()
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    assert_eq!(
        listed,
        [
            "schema.properties.vars.additionalProperties additional_properties_not_boolean",
            "schema.$defs.Inner.properties.counts.additionalProperties additional_properties_not_boolean",
            "schema.$defs.Inner.properties.next.anyOf[0].$ref unsupported_keyword",
        ]
    );
}

#[test]
fn schema_samples_deserialize_into_the_type() {
    let args = ArgsSchema::<ReadFile>::new(&Params::from_schemars::<ReadFile>().unwrap()).unwrap();
    let checked = check_args_type(&args).unwrap();
    assert!(checked > 3, "{checked}");
}

#[test]
fn bounds_from_integer_types_are_enforced() {
    let args = ArgsSchema::<ReadFile>::new(&Params::from_schemars::<ReadFile>().unwrap()).unwrap();
    let bad = json!({
        "path": "/etc/hosts",
        "limit": 256,
        "offset": -1,
        "shift": 0,
        "filters": [],
        "encoding": "utf16",
        "options": {"tab_width": 8},
        "extra": true
    });
    assert_eq!(
        args.validate(&bad).to_string(),
        concat!(
            "offset: must match exactly one oneOf branch, but matched 0; ",
            "limit: must match exactly one oneOf branch, but matched 0; ",
            r#"encoding: must be one of ["utf8","latin1"]; "#,
            "extra: is not a declared property (additionalProperties is false)",
        )
    );
    let good = json!({
        "path": "/etc/hosts",
        "limit": 255,
        "offset": 0,
        "shift": i64::MIN,
        "filters": [],
        "encoding": "latin1",
        "range": null,
        "options": {"tab_width": 8}
    });
    assert_eq!(args.validate(&good).to_string(), "");
    assert!(!args.parse_value(good).unwrap().options.follow_links);
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop_oneof![Just(Encoding::Utf8), Just(Encoding::Latin1)]
}

prop_compose! {
    fn read_file()(
        path in "[ -~]{0,12}",
        offset in proptest::option::of(any::<u32>()),
        limit in proptest::option::of(any::<u8>()),
        shift in any::<i64>(),
        filters in proptest::collection::vec("\\PC{0,4}", 0..3),
        encoding in encoding(),
        range in proptest::option::of((any::<u64>(), any::<u64>())),
        follow_links in any::<bool>(),
        tab_width in any::<u8>(),
    ) -> ReadFile {
        ReadFile {
            path,
            offset,
            limit,
            shift,
            filters,
            encoding,
            range: range.map(|(start, end)| ByteRange { start, end }),
            options: Options { follow_links, tab_width },
        }
    }
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        Just(Source::Stdin),
        "\\PC{0,8}".prop_map(|path| Source::File { path }),
        ("\\PC{0,8}", proptest::option::of(any::<u32>()))
            .prop_map(|(url, timeout_ms)| Source::Url { url, timeout_ms }),
    ]
}

proptest! {
    #[test]
    fn every_read_file_value_is_accepted_and_round_trips(value in read_file()) {
        let args = ArgsSchema::<ReadFile>::new(&Params::from_schemars::<ReadFile>().unwrap()).unwrap();
        let json = serde_json::to_value(&value).unwrap();
        let violations = args.validate(&json);
        prop_assert!(violations.is_empty(), "{json}: {violations}");
        prop_assert_eq!(args.parse_value(json).unwrap(), value);
    }

    #[test]
    fn every_source_value_is_accepted(value in source()) {
        let schema = OutputSchema::<Source>::new(Schema::from_schemars::<Source>().unwrap()).unwrap();
        let validated = schema.validate(value.clone());
        prop_assert!(validated.is_ok(), "{:?}: {:?}", value, validated.err());
    }
}

#[test]
fn draft_07_and_openapi_3_settings_convert_to_the_same_spec() {
    use schemars::generate::SchemaSettings;
    let default = Schema::from_schemars::<ReadFile>().unwrap();
    for settings in [SchemaSettings::draft07(), SchemaSettings::openapi3()] {
        let schema = settings.into_generator().into_root_schema_for::<ReadFile>();
        let converted = Schema::from_schemars_schema(&schema).unwrap();
        assert_eq!(converted, default, "{}", schema.as_value());
        let params = Params::from_schemars_schema(&schema).unwrap();
        assert_eq!(params, Params::from_schemars::<ReadFile>().unwrap());
    }
}

/// A value that is either a literal or a reference.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
#[serde(untagged)]
enum Operand {
    Literal(String),
    Reference { var: String },
}

/// An externally tagged enum.
#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
enum Action {
    Stop,
    Wait(u16),
    Move { dx: i8, dy: i8 },
}

#[derive(Clone, Debug, PartialEq, JsonSchema, Serialize, Deserialize)]
struct Misc {
    operand: Operand,
    action: Action,
    encoding: Option<Encoding>,
    payload: serde_json::Value,
    unit: (),
    letter: char,
    #[schemars(length(min = 1, max = 3))]
    tags: std::collections::BTreeSet<String>,
}

#[test]
fn untagged_and_externally_tagged_enums_and_any_json() {
    assert_eq!(
        compiled_schema::<Misc>(),
        concat!(
            r#"{"type":"object","title":"Misc","additionalProperties":true,"properties":{"#,
            r#""operand":{"oneOf":[{"type":"string"},{"type":"object","additionalProperties":true,"properties":{"var":{"type":"string"}},"required":["var"]}],"#,
            r#""description":"A value that is either a literal or a reference."},"#,
            r#""action":{"oneOf":[{"type":"string","enum":["Stop"]},"#,
            r#"{"type":"object","additionalProperties":false,"properties":{"Wait":{"type":"integer","format":"uint16","minimum":0,"maximum":65535}},"required":["Wait"]},"#,
            r#"{"type":"object","additionalProperties":false,"properties":{"Move":{"type":"object","additionalProperties":true,"properties":{"#,
            r#""dx":{"type":"integer","format":"int8","minimum":-128,"maximum":127},"dy":{"type":"integer","format":"int8","minimum":-128,"maximum":127}},"required":["dx","dy"]}},"required":["Move"]}],"#,
            r#""description":"An externally tagged enum."},"#,
            r#""encoding":{"oneOf":[{"type":"string","description":"How the bytes are decoded.","enum":["utf8","latin1"]},{"type":"null"}]},"#,
            r#""payload":{},"unit":{"type":"null"},"letter":{"type":"string","minLength":1,"maxLength":1},"#,
            r#""tags":{"type":"array","minItems":1,"maxItems":3,"uniqueItems":true,"items":{"type":"string"}}},"#,
            r#""required":["operand","action","payload","unit","letter","tags"]}"#,
        )
    );
    let schema = OutputSchema::<Misc>::new(Schema::from_schemars::<Misc>().unwrap()).unwrap();
    let value = Misc {
        operand: Operand::Reference { var: "x".into() },
        action: Action::Move { dx: -128, dy: 127 },
        encoding: None,
        payload: json!({"any": [1, "json"]}),
        unit: (),
        letter: 'é',
        tags: ["a".to_owned()].into(),
    };
    schema.validate(value.clone()).unwrap();
    for action in [Action::Stop, Action::Wait(65535)] {
        schema
            .validate(Misc {
                action,
                ..value.clone()
            })
            .unwrap();
    }
    let empty = Misc {
        tags: Default::default(),
        ..value
    };
    assert_eq!(
        schema.validate(empty).unwrap_err().to_string(),
        "invalid tool output: value.tags: must have at least 1 item"
    );
}

#[test]
fn tuples_and_overlapping_untagged_variants_are_refused() {
    #[derive(JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Number {
        Int(i64),
        Float(f64),
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Refused {
        pair: (u8, String),
        number: Number,
    }
    let err = Schema::from_schemars::<Refused>().unwrap_err();
    let listed: Vec<String> = err
        .violations()
        .iter()
        .map(|v| format!("{} {}", v.path, v.kind.name()))
        .collect();
    assert_eq!(
        listed,
        [
            "schema.properties.pair.prefixItems unsupported_keyword",
            "schema.$defs.Number.anyOf unsupported_keyword",
        ]
    );
}
