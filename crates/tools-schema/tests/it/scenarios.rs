//! The reference implementation's author-DSL scenarios that belong to this crate, written
//! with the Rust builders. (Scenarios 31, 32, 35 and 36 are about `define_tool` and raw
//! tools in the registry; they are tested there.)

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tools_json::JsonValue;
use tools_schema::{
    ArgsSchema, Error, ErrorCode, OutputSchema, Params, Schema, ViolationKind, params,
    testing::check_args_type,
};

fn compiled_text(params: &Params) -> String {
    params.compile().unwrap().as_json().to_string()
}

fn violations(params: &Params, args: Value) -> Vec<String> {
    params
        .compile()
        .unwrap()
        .validate(&args, "")
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn s01_s04_value_nodes_compile_in_the_fixed_key_order() {
    let text = |s: Schema| s.compile().unwrap().as_json().to_string();
    assert_eq!(
        text(
            Schema::string()
                .constant("a")
                .enum_values(["a", "b"])
                .into()
        ),
        r#"{"type":"string","enum":["a","b"],"const":"a"}"#
    );
    assert_eq!(text(Schema::integer().into()), r#"{"type":"integer"}"#);
    assert_eq!(
        text(Schema::array(Schema::json()).into()),
        r#"{"type":"array","items":{}}"#
    );
    assert_eq!(text(Schema::array_of_any().into()), r#"{"type":"array"}"#);
    assert_eq!(
        text(
            Schema::json()
                .examples(json!([{"nested": true}]))
                .default_value(Value::Null)
                .title("Any JSON")
                .describe("anything")
                .into()
        ),
        r#"{"description":"anything","title":"Any JSON","default":null,"examples":[{"nested":true}]}"#
    );
    assert_eq!(
        text(
            Schema::one_of([Schema::from(Schema::string()), Schema::null().into()])
                .describe("maybe")
                .into()
        ),
        r#"{"oneOf":[{"type":"string"},{"type":"null"}],"description":"maybe"}"#
    );
}

#[test]
fn s05_nested_required_and_open_root() {
    let spec = params()
        .required(
            "closed",
            Schema::closed_object().required("id", Schema::integer()),
        )
        .optional("open", Schema::open_object());
    assert_eq!(
        compiled_text(&spec),
        r#"{"type":"object","properties":{"closed":{"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer"}},"required":["id"]},"open":{"type":"object","additionalProperties":true}},"required":["closed"]}"#
    );
}

#[test]
fn s06_s07_empty_map_descriptions_and_defaults() {
    assert_eq!(
        compiled_text(&params()),
        r#"{"type":"object","properties":{}}"#
    );
    let spec = params()
        .required("path", Schema::string().describe("Absolute path"))
        .optional("offset", Schema::number())
        .optional(
            "limit",
            Schema::number().describe("Max lines").default_value(25),
        )
        .optional(
            "level",
            Schema::string()
                .enum_values(["info", "warn"])
                .default_value("info"),
        );
    assert_eq!(
        compiled_text(&spec),
        r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute path"},"offset":{"type":"number"},"limit":{"type":"number","description":"Max lines","default":25},"level":{"type":"string","default":"info","enum":["info","warn"]}},"required":["path"]}"#
    );
}

#[test]
fn s09_s12_typed_builders_still_report_bad_values_at_compile_time() {
    let err = Schema::one_of([Schema::from(Schema::string())]).into_schema_err();
    assert_eq!(err.violations()[0].kind, ViolationKind::OneOfMalformed);
    let err = Schema::from(Schema::string().enum_values(Vec::<String>::new()))
        .compile()
        .unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.enum");
    let err = Schema::from(Schema::string().enum_values(["a"]).constant("b"))
        .compile()
        .unwrap_err();
    assert_eq!(err.violations()[0].kind, ViolationKind::ConstNotInEnum);
    let err = Schema::from(Schema::number().constant(-0.0))
        .compile()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
    let err = Schema::from(Schema::number().enum_values([1.0, f64::NAN]))
        .compile()
        .unwrap_err();
    assert_eq!(err.violations()[0].path.to_string(), "schema.enum");
}

trait IntoSchemaErr {
    fn into_schema_err(self) -> Error;
}

impl<T: Into<Schema>> IntoSchemaErr for T {
    fn into_schema_err(self) -> Error {
        self.into().compile().unwrap_err()
    }
}

#[test]
fn s18_s19_output_errors_are_all_collected_under_the_schema_label() {
    let err = Params::from_json(json!({"n": {"type": "number", "enum": ["1", "2"]}, "m": {"type": "integer", "const": 1.5}}))
        .compile()
        .unwrap_err();
    let paths: Vec<String> = err
        .violations()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(
        paths,
        ["schema.properties.n.enum", "schema.properties.m.const"]
    );
}

#[test]
fn s20_a_property_named_proto_is_ordinary() {
    let spec = params().required("__proto__", Schema::string());
    assert_eq!(
        compiled_text(&spec),
        r#"{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]}"#
    );
}

#[test]
fn s22_s24_arguments_root() {
    let spec = params()
        .required("path", Schema::string())
        .optional("limit", Schema::number().default_value(25));
    assert!(violations(&spec, json!({"path": "/srv/x"})).is_empty());
    assert!(violations(&spec, json!({"path": "/srv/x", "limit": 5})).is_empty());
    for bad in [json!(null), json!("nope"), json!([])] {
        assert_eq!(violations(&spec, bad), ["arguments: must be an object"]);
    }
    assert_eq!(
        violations(&spec, json!({})),
        ["path: required property is missing"]
    );
    assert!(violations(&spec, json!({"path": "/srv/x", "extra": 1})).is_empty());
    // No default injection: the arguments are not touched.
    let args = JsonValue::parse(r#"{"path": "/srv/x"}"#).unwrap();
    let before = args.to_string();
    let _ = spec.compile().unwrap().validate(&args, "");
    assert_eq!(args.to_string(), before);
}

#[test]
fn s25_primitives_and_enums() {
    let spec = params()
        .optional("s", Schema::string())
        .optional("n", Schema::number())
        .optional("b", Schema::boolean())
        .optional("color", Schema::string().enum_values(["red", "green"]))
        .optional("k", Schema::number().enum_values([1.0, 2.0]));
    assert_eq!(
        violations(
            &spec,
            json!({"s": 1, "n": "x", "b": "x", "color": "blue", "k": 3})
        ),
        [
            "s: must be a string",
            "n: must be a number",
            "b: must be a boolean",
            r#"color: must be one of ["red","green"]"#,
            "k: must be one of [1,2]",
        ]
    );
}

#[test]
fn s26_a_bad_spec_is_a_schema_error_not_a_violation_list() {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Args {
        n: Option<f64>,
    }
    let bad = Params::from_json(json!({"n": {"type": "number", "enum": ["1", "2"]}}));
    let err = ArgsSchema::<Args>::new(&bad).unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsupportedSchema);
    let weird = Params::from_json(json!({"n": {"type": "weird"}}));
    assert!(matches!(
        ArgsSchema::<Args>::new(&weird),
        Err(Error::UnsupportedSchema { .. })
    ));
}

#[test]
fn s27_s29_nested_order_arrays_and_array_roots() {
    let spec = params()
        .required(
            "config",
            Schema::open_object()
                .required("host", Schema::string())
                .optional("port", Schema::integer()),
        )
        .optional("bag", Schema::open_object())
        .optional("tags", Schema::array(Schema::string()))
        .optional("raw", Schema::array_of_any())
        .optional(
            "servers",
            Schema::array(Schema::open_object().required("host", Schema::string())),
        );
    assert_eq!(
        violations(&spec, json!({"config": {"port": 9}, "bag": 5})),
        [
            "config.host: required property is missing",
            "bag: must be an object"
        ]
    );
    assert_eq!(
        violations(&spec, json!({"config": {"host": "h"}, "tags": ["a", 2]})),
        ["tags[1]: must be a string"]
    );
    assert_eq!(
        violations(&spec, json!({"config": {"host": "h"}, "tags": "nope"})),
        ["tags: must be an array"]
    );
    assert!(violations(&spec, json!({"config": {"host": "h"}, "raw": [1, {}, "x"]})).is_empty());
    assert_eq!(
        violations(
            &spec,
            json!({"config": {"host": "h"}, "servers": [{"host": "a"}, {}]})
        ),
        ["servers[1].host: required property is missing"]
    );
}

#[derive(Debug, Deserialize, PartialEq)]
struct PathArgs {
    path: String,
    limit: Option<i64>,
}

fn path_args() -> ArgsSchema<PathArgs> {
    ArgsSchema::new(
        &params()
            .required("path", Schema::string())
            .optional("limit", Schema::integer()),
    )
    .unwrap()
}

#[test]
fn s30_the_args_error_carries_every_violation_in_order() {
    let err = path_args().parse_value(json!({"limit": "x"})).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    assert_eq!(err.violations().len(), 2);
    assert_eq!(
        err.to_string(),
        "invalid arguments: path: required property is missing; limit: must be an integer"
    );
}

#[test]
fn s33_soft_parsing_never_fails() {
    let schema = path_args();
    assert_eq!(schema.parse_soft(&json!({})), None);
    assert_eq!(schema.parse_soft(&json!({"wrong": 1})), None);
    assert_eq!(schema.parse_soft(&json!("not an object")), None);
    assert_eq!(schema.parse_soft(&json!({"path": -0.0})), None);
    assert_eq!(
        schema.parse_soft(&json!({"path": "/a", "limit": 3.0})),
        Some(PathArgs {
            path: "/a".into(),
            limit: Some(3)
        })
    );
}

#[test]
fn s34_outputs_are_validated_before_rendering() {
    let strings = OutputSchema::<Value>::new(Schema::string()).unwrap();
    let err = strings.validate(json!(42)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidToolOutput);
    assert!(err.to_string().contains("value: must be a string"));
    let numbers = OutputSchema::<f64>::new(Schema::number()).unwrap();
    let err = numbers.validate(-0.0).unwrap_err();
    assert_eq!(err.violations()[0].kind, ViolationKind::NegativeZero);
    let ok = numbers.validate(2.0).unwrap();
    assert_eq!(ok.json().to_string(), "2");

    #[derive(Debug, Serialize)]
    struct Unserializable(std::collections::BTreeMap<(i32, i32), i32>);
    let any = OutputSchema::<Unserializable>::new(Schema::json()).unwrap();
    let mut map = std::collections::BTreeMap::new();
    map.insert((1, 2), 3);
    let err = any.validate(Unserializable(map)).unwrap_err();
    assert!(matches!(err, Error::OutputNotSerializable { .. }));
    assert_eq!(err.code(), ErrorCode::InvalidToolOutput);
}

#[test]
fn s40_integral_floats_reach_integer_fields() {
    let schema = path_args();
    for text in [
        r#"{"path": "/a", "limit": 1.0}"#,
        r#"{"path": "/a", "limit": 1e2}"#,
    ] {
        let args = JsonValue::parse(text).unwrap();
        assert!(schema.validate(&args).is_empty());
        assert!(schema.parse(&args).unwrap().limit.is_some());
    }
}

#[test]
fn s41_null_is_not_absent() {
    let err = path_args()
        .parse_value(json!({"path": "/a", "limit": null}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments: limit: must be an integer"
    );
}

#[test]
fn valid_arguments_that_do_not_fit_the_type_are_an_args_type_error() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Wrong {
        path: u32,
    }
    let schema = ArgsSchema::<Wrong>::new(&params().required("path", Schema::string())).unwrap();
    let err = schema.parse_value(json!({"path": "/a"})).unwrap_err();
    assert!(matches!(err, Error::ArgsType { .. }));
    assert_eq!(err.code(), ErrorCode::InvalidArgs);
    // The test helper finds the same mismatch ahead of time.
    let mismatch = check_args_type(&schema).unwrap_err();
    assert!(mismatch.to_string().contains("path"), "{mismatch}");
}

#[test]
fn check_args_type_covers_enums_branches_and_optional_properties() {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }
    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum Target {
        Name(String),
        Id(u64),
    }
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Args {
        mode: Mode,
        target: Option<Target>,
        tags: Option<Vec<String>>,
    }
    let spec = params()
        .required("mode", Schema::string().enum_values(["fast", "slow"]))
        .optional(
            "target",
            Schema::one_of([Schema::from(Schema::string()), Schema::integer().into()]),
        )
        .optional("tags", Schema::array(Schema::string()));
    let checked = check_args_type(&ArgsSchema::<Args>::new(&spec).unwrap()).unwrap();
    assert!(checked >= 8);

    // A Rust enum missing one of the schema's values is caught.
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Narrow {
        mode: OnlyFast,
    }
    #[derive(Deserialize)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum OnlyFast {
        Fast,
    }
    let narrow = params().required("mode", Schema::string().enum_values(["fast", "slow"]));
    let mismatch = check_args_type(&ArgsSchema::<Narrow>::new(&narrow).unwrap()).unwrap_err();
    assert_eq!(mismatch.sample, json!({"mode": "slow"}));
}
