//! What a provider is told about a tool, and what the runtime holds the call to: foreign
//! keywords the subset does not enforce are reported, strict declarations come from the
//! enforced schema and are lowered to what each provider's strict mode takes (the rest is
//! still enforced), integer types carry no full-range bounds, and tool names the wires
//! refuse are declared under wire names that parse back.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_runtime::prelude::*;
use tools_runtime::{JsonValue, ToolRuntime, provider::Provider};

const PROVIDERS: [Provider; 3] = [
    Provider::OpenAiResponses,
    Provider::OpenAiChat,
    Provider::Anthropic,
];

/// A raw tool answering `"ok"` with the arguments it got, on a foreign parameter schema.
fn foreign(name: &str, parameters: Value) -> ToolDefinition {
    ToolDefinition::builder(name, "A tool.")
        .foreign_parameters(parameters)
        .output(OutputDecl::text(json!({})))
        .body(|args, _ctx| async move { Ok(args.as_value().clone()) })
        .build()
        .unwrap()
}

/// A raw tool with a parameter schema inside the subset (or the default one).
fn raw(name: &str, parameters: Option<Value>) -> ToolDefinition {
    let builder = ToolDefinition::builder(name, "A tool.");
    let builder = match parameters {
        Some(parameters) => builder.parameters(parameters),
        None => builder,
    };
    builder
        .output(OutputDecl::text(json!({})))
        .body(|args, _ctx| async move { Ok(args.as_value().clone()) })
        .build()
        .unwrap()
}

/// The parameter schema of `tool` as `declarations` declare it, and its `strict` flag.
fn declared<'a>(provider: Provider, tools: &'a [Value], name: &str) -> (&'a Value, &'a Value) {
    let tool = tools
        .iter()
        .find(|t| match provider {
            Provider::OpenAiChat => t["function"]["name"] == name,
            _ => t["name"] == name,
        })
        .unwrap_or_else(|| panic!("{name} is not declared"));
    match provider {
        Provider::OpenAiChat => (&tool["function"]["parameters"], &tool["function"]["strict"]),
        Provider::OpenAiResponses => (&tool["parameters"], &tool["strict"]),
        _ => (&tool["input_schema"], &tool["strict"]),
    }
}

fn call(provider: Provider, id: &str, name: &str, args: &str) -> Value {
    match provider {
        Provider::OpenAiResponses => json!({"output": [{
            "type": "function_call", "call_id": id, "name": name, "arguments": args
        }]}),
        Provider::OpenAiChat => {
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{
                "id": id, "type": "function", "function": {"name": name, "arguments": args}
            }]}}]})
        }
        _ => json!({"content": [{
            "type": "tool_use", "id": id, "name": name,
            "input": serde_json::from_str::<Value>(args).unwrap()
        }]}),
    }
}

async fn turn(
    runtime: &ToolRuntime,
    provider: Provider,
    declarations: &tools_runtime::provider::Declarations,
    name: &str,
    args: &str,
) -> ToolResult {
    let step = runtime
        .run_turn(
            provider,
            call(provider, "c1", name, args),
            Some(declarations),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    step.results.into_iter().next().unwrap()
}

/// Finding 1: an `enum` on an array (its members lists) is not enforced by the subset, so
/// the tool is not fully validated and the keyword is named where unenforced keywords are.
#[test]
fn an_enum_on_an_array_is_reported_as_unenforced() {
    for enumeration in [
        json!({"type": "array", "items": {"type": "string"}, "enum": [["Sports"], ["News"]]}),
        json!({"type": "array", "items": {"type": "string"}, "const": ["Sports"]}),
        json!({"type": "object", "properties": {}, "enum": [{"a": 1}]}),
    ] {
        let tool = foreign(
            "classify",
            json!({"type": "object", "properties": {"intents": enumeration}, "required": ["intents"]}),
        );
        assert!(!tool.is_fully_validated(), "{enumeration}");
        let unenforced = tool.foreign_parameters().unwrap().unenforced();
        let paths: Vec<String> = unenforced.iter().map(|v| v.path.to_string()).collect();
        assert!(
            paths[0].starts_with("schema.properties.intents.")
                && (paths[0].ends_with(".enum") || paths[0].ends_with(".const")),
            "{paths:?}"
        );
        // The model still sees the keyword.
        assert!(
            tool.parameters().as_value()["properties"]["intents"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| k == "enum" || k == "const")
        );
    }
}

/// Finding 2: strict declarations are derived from the enforced schema. An `enum` that
/// contradicts its type or sits on an array is not enforced, so the tool is declared as
/// given (not strict, with the reason); a tool without parameters is strict as the closed
/// empty object.
#[test]
fn strict_declarations_come_from_the_enforced_schema() {
    let runtime = ToolRuntime::new();
    let tools = [
        foreign(
            "mistyped",
            json!({"type": "object", "properties": {"n": {"type": "integer", "enum": ["a"]}}, "required": ["n"]}),
        ),
        foreign(
            "classify",
            json!({"type": "object", "properties": {"intents": {
                "type": "array", "items": {"type": "string"}, "enum": [["Sports"], ["News"]]
            }}, "required": ["intents"]}),
        ),
        // Exact repairs keep the tool strict: `minimum` on a string constrains nothing.
        foreign(
            "named",
            json!({"type": "object", "properties": {"name": {"type": "string", "minimum": 3}}, "required": ["name"]}),
        ),
        raw("ping", None),
        raw("noop", Some(json!({"type": "object", "properties": {}}))),
        raw("bare", Some(json!({"type": "object"}))),
    ];
    for tool in tools {
        runtime.register(tool).unwrap().keep();
    }
    let schemas = runtime.wire_schemas(None);
    for provider in PROVIDERS {
        let declarations = provider.declare(&schemas, true);
        for (name, path) in [
            ("mistyped", "properties.n.enum"),
            ("classify", "properties.intents.enum"),
        ] {
            assert!(!declarations.is_strict(name), "{provider:?} {name}");
            let (parameters, strict) = declared(provider, declarations.tools(), name);
            assert_eq!(strict, &json!(false), "{provider:?} {name}");
            // Declared as given: the model reads the enum.
            assert!(
                parameters
                    .pointer(&format!("/{}", path.replace('.', "/")))
                    .is_some()
            );
            let reason = &declarations
                .refused()
                .iter()
                .find(|(t, _)| t == name)
                .unwrap_or_else(|| panic!("{provider:?} {name} has no reason"))
                .1;
            assert_eq!(
                reason.to_string(),
                format!(
                    "`{path}` is not enforced by the runtime ({}): a strict declaration would hide it from the model",
                    if name == "mistyped" {
                        "enum_invalid"
                    } else {
                        "keyword_on_wrong_type"
                    }
                ),
                "{provider:?}"
            );
        }
        assert!(declarations.is_strict("named"), "{provider:?}");
        let (named, _) = declared(provider, declarations.tools(), "named");
        assert_eq!(named["properties"]["name"], json!({"type": "string"}));
        for name in ["ping", "noop", "bare"] {
            assert!(declarations.is_strict(name), "{provider:?} {name}");
            let (parameters, strict) = declared(provider, declarations.tools(), name);
            assert_eq!(strict, &json!(true));
            assert_eq!(
                parameters,
                &json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
                "{provider:?} {name}"
            );
        }
    }
}

#[derive(Deserialize, ToolArgs)]
struct Page {
    /// Where to start.
    offset: Option<u64>,
    /// A short tag.
    #[tool(max_length = 3)]
    tag: Option<String>,
}

/// Finding 3: a keyword a provider's strict mode refuses is left out of its strict
/// declaration (and written into the description), not a reason to drop strict mode; the
/// runtime still enforces it when the call arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_keywords_are_lowered_out_of_strict_declarations_and_still_enforced() {
    let runtime = ToolRuntime::new();
    let page = define_tool::<Page, Value>("page", "Read a page.")
        .body(|args: Page, _ctx| async move { Ok(json!({"offset": args.offset, "tag": args.tag})) })
        .build()
        .unwrap();
    runtime.register(page).unwrap().keep();
    for provider in PROVIDERS {
        let declarations = provider.declare(&runtime.wire_schemas(None), true);
        assert!(
            declarations.is_strict("page"),
            "{provider:?}: {:?}",
            declarations.refused()
        );
        let (parameters, strict) = declared(provider, declarations.tools(), "page");
        assert_eq!(strict, &json!(true));
        let offset = &parameters["properties"]["offset"];
        let tag = &parameters["properties"]["tag"];
        // `maxLength`: no strict mode takes it. `minimum`: OpenAI's does, Anthropic's not.
        assert_eq!(tag["anyOf"][0], json!({"type": "string"}), "{provider:?}");
        assert!(
            tag["description"]
                .as_str()
                .unwrap()
                .ends_with("\n\n{maxLength: 3}")
        );
        let mut left_out = vec![("properties.tag".to_owned(), "maxLength")];
        if provider == Provider::Anthropic {
            assert_eq!(offset["anyOf"][0], json!({"type": "integer"}));
            assert_eq!(
                offset["description"],
                json!("Where to start.\n\n{minimum: 0}")
            );
            left_out.insert(0, ("properties.offset".to_owned(), "minimum"));
        } else {
            assert_eq!(offset["anyOf"][0], json!({"type": "integer", "minimum": 0}));
        }
        assert_eq!(declarations.left_out("page"), left_out, "{provider:?}");

        // Still enforced: strict decoding under the lowered form can send these, and the
        // runtime refuses them.
        for args in [
            r#"{"offset": -1, "tag": null}"#,
            r#"{"offset": null, "tag": "long"}"#,
        ] {
            let result = turn(&runtime, provider, &declarations, "page", args).await;
            assert_eq!(
                result.error_code(),
                Some(ErrorCode::InvalidArgs),
                "{provider:?} {args}"
            );
        }
        // And the nulls of omitted optional properties are mapped back.
        let result = turn(
            &runtime,
            provider,
            &declarations,
            "page",
            r#"{"offset": 7, "tag": null}"#,
        )
        .await;
        assert_eq!(result.error_code(), None, "{provider:?}: {}", result.text());
    }
}

#[derive(Deserialize, ToolArgs)]
struct Sizes {
    /// Unsigned, 64 bits.
    big: u64,
    /// Signed, 64 bits.
    signed: Option<i64>,
    /// Unsigned, 32 bits.
    small: Option<u32>,
}

/// Finding 4: the full range of a 64-bit integer type is not written into its schema
/// (`u64` keeps `minimum: 0`; `u32` keeps its real bounds); out-of-range values are still
/// `INVALID_ARGS`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_types_carry_no_full_range_bounds_and_still_refuse_out_of_range_values() {
    let runtime = ToolRuntime::new();
    let sizes = define_tool::<Sizes, Value>("sizes", "Echo sizes.")
        .body(|args: Sizes, _ctx| async move {
            Ok(json!({"big": args.big, "signed": args.signed, "small": args.small}))
        })
        .build()
        .unwrap();
    runtime.register(sizes).unwrap().keep();
    let schemas = runtime.wire_schemas(None);
    let properties = &schemas[0].parameters.as_value()["properties"];
    assert_eq!(
        properties["big"],
        json!({"type": "integer", "description": "Unsigned, 64 bits.", "minimum": 0})
    );
    assert_eq!(
        properties["signed"],
        json!({"type": "integer", "description": "Signed, 64 bits."})
    );
    assert_eq!(
        properties["small"],
        json!({"type": "integer", "description": "Unsigned, 32 bits.", "minimum": 0, "maximum": 4_294_967_295u32})
    );
    for args in [
        r#"{"big": -1}"#,
        r#"{"big": 18446744073709551616}"#,
        r#"{"big": 1, "signed": 9223372036854775808}"#,
        r#"{"big": 1, "small": 4294967296}"#,
    ] {
        let result = runtime
            .execute(ToolCall::from_json("c", "sizes", JsonValue::parse(args).unwrap()).unwrap())
            .await;
        assert_eq!(result.error_code(), Some(ErrorCode::InvalidArgs), "{args}");
    }
    let result = runtime
        .execute(
            ToolCall::from_json(
                "c",
                "sizes",
                JsonValue::parse(
                    r#"{"big": 18446744073709551615, "signed": -9223372036854775808}"#,
                )
                .unwrap(),
            )
            .unwrap(),
        )
        .await;
    assert_eq!(result.error_code(), None, "{}", result.text());
    // With the bounds gone, Anthropic's strict mode takes `u64` as it is.
    let declarations = Provider::Anthropic.declare(&schemas, true);
    assert!(declarations.is_strict("sizes"));
}

/// Finding 5: a tool name the wires refuse (`^[a-zA-Z0-9_-]{1,64}$`) is declared under a
/// wire name made for it, on every wire, and a call to that name runs the tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_the_wires_refuse_are_declared_under_wire_names_that_parse_back() {
    let runtime = ToolRuntime::new();
    for name in ["math.factorial", "math_factorial", "files/read"] {
        let tool =
            ToolDefinition::builder(name, "A tool.")
                .parameters(json!({
                    "type": "object", "properties": {"n": {"type": "integer"}},
                    "required": ["n"], "additionalProperties": false
                }))
                .output(OutputDecl::text(json!({})))
                .body(move |args, _ctx| async move {
                    Ok(json!(format!("{name} {}", args.as_value()["n"])))
                })
                .build()
                .unwrap();
        runtime.register(tool).unwrap().keep();
    }
    let valid = |name: &str| {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    for provider in PROVIDERS {
        for strict in [true, false] {
            let declarations = provider.declare(&runtime.wire_schemas(None), strict);
            let mut names: Vec<&str> = declarations
                .tools()
                .iter()
                .map(|t| match provider {
                    Provider::OpenAiChat => t["function"]["name"].as_str().unwrap(),
                    _ => t["name"].as_str().unwrap(),
                })
                .collect();
            assert!(names.iter().all(|n| valid(n)), "{provider:?}: {names:?}");
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), 3, "{provider:?}: {names:?}");
            for tool in ["math.factorial", "math_factorial", "files/read"] {
                let wire = declarations.wire_name(tool);
                assert!(names.contains(&wire));
                assert_eq!(declarations.tool_name(wire), tool);
                assert_eq!(declarations.is_strict(tool), strict);
                let result = turn(&runtime, provider, &declarations, wire, r#"{"n": 3}"#).await;
                assert_eq!(result.text(), format!("{tool} 3"), "{provider:?}");
            }
            // The tool that has the plain name keeps it.
            assert_eq!(declarations.wire_name("math_factorial"), "math_factorial");
            assert_eq!(declarations.wire_name("math.factorial"), "math_factorial_2");
            assert_eq!(declarations.wire_name("files/read"), "files_read");
        }
    }
}
