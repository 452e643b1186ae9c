//! Tool search in Code Mode: the SDK of a scope with deferred tools declares the helpers
//! (`tools.$search` / `tools.$describe`, `tools.search_tools` / `tools.describe_tool`)
//! instead of those tools; a real program finds a deferred tool, reads its signature and
//! calls it, and the call is a sub-call through the whole pipeline. Searches see only the
//! scope; bad queries are exceptions the program catches; native-only and hidden tools stay
//! out of programs.

use super::*;

use std::time::Duration;

use tools_codemode::{
    MAX_SEARCH_LIMIT, RuntimeLimits, SdkOptions, ToolSdkSchema, sdk_section, sdk_tools,
};
use tools_quickjs::QuickJsRuntime;
use tools_registry::{Exposure, ToolFilter};
use tools_sandbox::PythonRuntime;

/// The description every program checks it got back.
const WEATHER: &str = "Current weather for a city: the temperature in degrees Celsius.";

fn weather_parameters() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"city": {"type": "string", "description": "City name."}},
        "required": ["city"]
    })
}

fn weather_output() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"]
    })
}

/// `get_weather` (deferred): `{city}` → `{city, celsius: 21}`.
fn get_weather() -> ToolDefinition {
    ToolDefinition::builder("get_weather", WEATHER)
        .parameters(weather_parameters())
        .output(OutputDecl::text(weather_output()))
        .exposure(Exposure::Deferred)
        .body(
            |args, _ctx| async move { Ok(json!({"city": text_arg(&args, "city"), "celsius": 21})) },
        )
        .build()
        .unwrap()
}

/// A string tool of `exposure` that answers `<name>:ok`.
fn exposed(name: &str, description: &str, exposure: Exposure) -> ToolDefinition {
    let answer = format!("{name}:ok");
    ToolDefinition::builder(name, description)
        .parameters(json!({"type": "object", "properties": {}}))
        .output(OutputDecl::text(json!({"type": "string"})))
        .exposure(exposure)
        .body(move |_args, _ctx| {
            let answer = answer.clone();
            async move { Ok(Value::String(answer)) }
        })
        .build()
        .unwrap()
}

/// Every exposure: the deferred `get_weather` and `send_mail`, a direct, a code-only, a
/// native-only and a hidden tool (the last two described with "weather" too, so a search
/// that let them through would find them).
fn catalogue() -> Vec<ToolDefinition> {
    vec![
        get_weather(),
        exposed(
            "send_mail",
            "Send an email message to a recipient.",
            Exposure::Deferred,
        ),
        exposed(
            "list_files",
            "List the files of a folder.",
            Exposure::Direct,
        ),
        exposed(
            "code_helper",
            "A helper only programs call.",
            Exposure::CodeOnly,
        ),
        exposed(
            "native_note",
            "Note the weather for the user (native only).",
            Exposure::NativeOnly,
        ),
        exposed(
            "host_weather",
            "Weather telemetry the host dispatches itself.",
            Exposure::Hidden,
        ),
    ]
}

fn quickjs() -> Arc<dyn CodeRuntime> {
    Arc::new(QuickJsRuntime::new(RuntimeLimits::default()).unwrap())
}

fn python() -> Arc<dyn CodeRuntime> {
    Arc::new(
        PythonRuntime::new(RuntimeLimits {
            wall: Duration::from_secs(120),
            ..RuntimeLimits::default()
        })
        .unwrap(),
    )
}

async fn run_as(h: &Harness, agent: &AgentScope, code: &str) -> Value {
    let result = h
        .execute(outer_call(code, "Search the tools").with_agent(agent.clone()))
        .await;
    assert!(!result.is_error(), "{}", result.text());
    value_of(&result)["result"].clone()
}

/// The signature the SDK generator writes for `get_weather` in `language`.
fn weather_signature(language: Language) -> String {
    language.render_signature(&ToolSdkSchema::new(
        "get_weather",
        WEATHER,
        weather_parameters(),
        weather_output(),
    ))
}

// ---------------------------------------------------------------------------------------
// The SDK section.
// ---------------------------------------------------------------------------------------

#[test]
fn the_sdk_declares_the_helpers_only_for_a_scope_with_deferred_tools() {
    let registry = Registry::builder()
        .default_mode(PresentationMode::Code)
        .build();
    for tool in catalogue() {
        registry.register(tool).unwrap().keep();
    }
    let agent = registry.scope();
    let listed: Vec<String> = sdk_tools(&registry, Some(&agent))
        .into_iter()
        .map(|tool| tool.name.clone())
        .collect();
    assert_eq!(listed, ["code_helper", "list_files"]);
    for language in Language::ALL {
        let section = sdk_section(&registry, Some(&agent), language);
        let tools = sdk_tools(&registry, Some(&agent));
        assert_eq!(
            section,
            language.render_section_with(&tools, SdkOptions::new().with_tool_search(true))
        );
        let helpers = language.tool_search();
        assert!(
            section.contains(&format!("{}(", helpers.search)),
            "{section}"
        );
        assert!(
            section.contains(&format!("{}(", helpers.describe)),
            "{section}"
        );
        for absent in ["get_weather", "send_mail", "native_note", "host_weather"] {
            assert!(!section.contains(absent), "{absent} in {section}");
        }
    }

    // A scope whose deferred tools are all restricted away has none: the section is the
    // tools alone, exactly as before tool search existed.
    let narrow = registry.scope();
    narrow
        .restrict(ToolFilter::deny(["get_weather", "send_mail"]))
        .unwrap()
        .keep();
    for language in Language::ALL {
        let section = sdk_section(&registry, Some(&narrow), language);
        assert_eq!(
            section,
            language.render_section(&sdk_tools(&registry, Some(&narrow)))
        );
        assert!(
            !section.contains(language.tool_search().search),
            "{section}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// TypeScript on QuickJS.
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_a_program_finds_a_deferred_tool_and_calls_it_through_the_pipeline() {
    let h = real_harness(quickjs(), catalogue());
    let seen = Log::default();
    let pre = seen.clone();
    on_sub_pre(&h.pipeline, move |request: PreRequest| {
        let pre = pre.clone();
        async move {
            pre.push(format!("pre {}", request.execution().name()));
            None
        }
    });
    let value = run_as(
        &h,
        &h.agent,
        r#"
        const declared = typeof tools.get_weather;
        const found: FoundTool[] = await tools.$search("weather");
        const hit = found.find((tool) => tool.name === "get_weather");
        if (!hit) throw new Error(`not found in ${JSON.stringify(found)}`);
        const out = await tools[hit.name]({ city: "Paris" });
        return { declared, names: found.map((tool) => tool.name), hit, out };
        "#,
    )
    .await;
    assert_eq!(
        value,
        json!({
            "declared": "function",
            "names": ["get_weather"],
            "hit": {
                "name": "get_weather",
                "description": WEATHER,
                "signature": weather_signature(Language::TypeScript),
            },
            "out": {"city": "Paris", "celsius": 21},
        })
    );
    assert_eq!(
        weather_signature(Language::TypeScript),
        "get_weather(args: { /** City name. */ city: string; }): Promise<{ city: string; celsius: number; }>"
    );
    // The search is no sub-call; the tool call is one, seen by the pipeline's hooks.
    assert_eq!(seen.entries(), ["pre get_weather"]);
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    let settled = h.sink.settles();
    assert_eq!(settled[0].name, "get_weather");
    assert!(!settled[0].is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_a_search_sees_only_what_the_scope_sees() {
    let h = real_harness(quickjs(), catalogue());
    let program = r#"
        const found = await tools.$search("send an email message");
        return {
          names: found.map((tool) => tool.name),
          described: (await tools.$describe("send_mail"))?.name ?? null,
          bound: typeof tools.send_mail,
        };
        "#;
    // The agent's own scope sees `send_mail` …
    assert_eq!(
        run_as(&h, &h.agent, program).await,
        json!({"names": ["send_mail"], "described": "send_mail", "bound": "function"})
    );
    // … a scope that restricts it away neither finds, describes nor binds it.
    let narrow = h.registry.scope();
    narrow
        .restrict(ToolFilter::deny(["send_mail"]))
        .unwrap()
        .keep();
    assert_eq!(
        run_as(&h, &narrow, program).await,
        json!({"names": [], "described": null, "bound": "undefined"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_bad_queries_are_exceptions_the_program_catches() {
    let h = real_harness(quickjs(), catalogue());
    let value = run_as(
        &h,
        &h.agent,
        r#"
        const out = [];
        const attempt = async (label, call) => {
          try { await call(); out.push(`${label}: no error`); }
          catch (e) {
            out.push({ label, isToolCallError: e instanceof ToolCallError, code: e.code, toolName: e.toolName, message: e.message });
          }
        };
        await attempt("empty", () => tools.$search(""));
        await attempt("blank", () => tools.$search("   "));
        await attempt("long", () => tools.$search("x".repeat(10000)));
        await attempt("number", () => tools.$search(42));
        await attempt("negative", () => tools.$search("weather", { limit: -1 }));
        await attempt("fraction", () => tools.$search("weather", { limit: 1.5 }));
        await attempt("options", () => tools.$search("weather", 3));
        await attempt("extra", () => tools.$search("weather", {}, "more"));
        await attempt("describe", () => tools.$describe(7));
        return out;
        "#,
    )
    .await;
    let entries = value.as_array().unwrap();
    assert_eq!(entries.len(), 9, "{value}");
    for entry in entries {
        assert_eq!(entry["isToolCallError"], true, "{entry}");
        assert_eq!(entry["code"], "INVALID_ARGS", "{entry}");
    }
    let message = |i: usize| entries[i]["message"].as_str().unwrap().to_owned();
    assert_eq!(
        message(0),
        "the search query is empty: give a few words that describe the tool you need"
    );
    assert_eq!(entries[0]["toolName"], "$search");
    assert_eq!(message(1), message(0));
    assert_eq!(
        message(2),
        "the search query has 10000 characters; at most 1000 are allowed"
    );
    assert!(message(3).contains("the query must be a string"), "{value}");
    assert!(
        message(4).contains("the limit must be a non-negative integer")
            && message(4).contains("-1"),
        "{value}"
    );
    assert!(message(5).contains("not 1.5"), "{value}");
    assert!(
        message(6).contains("the options must be an object"),
        "{value}"
    );
    assert_eq!(message(7), "$search() takes at most 2 arguments (3 given)");
    assert_eq!(entries[8]["toolName"], "$describe");
    assert!(message(8).contains("the name must be a string"), "{value}");
    // Nothing reached the pipeline.
    assert!(h.sink.summary().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_the_limit_defaults_to_five_and_is_clamped() {
    let many: Vec<ToolDefinition> = (0..60)
        .map(|i| {
            exposed(
                &format!("forecast_{i:02}"),
                "Weather forecast for one region.",
                Exposure::Deferred,
            )
        })
        .collect();
    let h = real_harness(quickjs(), many);
    let value = run_as(
        &h,
        &h.agent,
        r#"
        const count = async (options) => (await tools.$search("weather forecast", options)).length;
        return [await count(undefined), await count({}), await count({ limit: null }), await count({ limit: 2 }), await count({ limit: 0 }), await count({ limit: 500 }), await count({ limit: 1e300 })];
        "#,
    )
    .await;
    assert_eq!(
        value,
        json!([5, 5, 5, 2, 0, MAX_SEARCH_LIMIT, MAX_SEARCH_LIMIT])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_describe_gives_the_schema_of_a_tool_the_program_may_call() {
    let h = real_harness(quickjs(), catalogue());
    let value = run_as(
        &h,
        &h.agent,
        r#"
        return {
          deferred: await tools.$describe("get_weather"),
          direct: (await tools.$describe("list_files"))?.signature ?? null,
          codeOnly: (await tools.$describe("code_helper"))?.name ?? null,
          unknown: await tools.$describe("no_such_tool"),
          runCode: await tools.$describe("run_code"),
        };
        "#,
    )
    .await;
    assert_eq!(
        value,
        json!({
            "deferred": {
                "name": "get_weather",
                "description": WEATHER,
                "signature": weather_signature(Language::TypeScript),
                "parameters": weather_parameters(),
            },
            "direct": "list_files(args: Record<string, JsonValue>): Promise<string>",
            "codeOnly": "code_helper",
            "unknown": null,
            "runCode": null,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_native_only_and_hidden_tools_stay_out_of_programs() {
    let h = real_harness(quickjs(), catalogue());
    let value = run_as(
        &h,
        &h.agent,
        r#"
        const found = await tools.$search("weather", { limit: 50 });
        let called;
        try { await tools["native_note"]({}); called = "called"; } catch (e) { called = e.constructor.name; }
        return {
          found: found.map((tool) => tool.name),
          native: await tools.$describe("native_note"),
          hidden: await tools.$describe("host_weather"),
          bound: [typeof tools.native_note, typeof tools.host_weather],
          called,
        };
        "#,
    )
    .await;
    assert_eq!(
        value,
        json!({
            "found": ["get_weather"],
            "native": null,
            "hidden": null,
            "bound": ["undefined", "undefined"],
            "called": "TypeError",
        })
    );
    assert!(h.sink.summary().is_empty());
}

/// What a runtime that calls the host by name gets for tools a program may not call: the
/// bridge refuses them as `UNKNOWN_TOOL` before the pipeline, while a deferred tool and the
/// helpers answer.
#[tokio::test]
async fn native_only_and_hidden_tools_are_unknown_tools_to_the_host() {
    let runtime = scripted(|request: CodeRunRequest| async move {
        let host = Arc::clone(&request.host);
        let args = |name: &str| JsonValue::new(json!({"city": name})).unwrap();
        let mut codes = Vec::new();
        for name in ["native_note", "host_weather", "run_code", "get_weather"] {
            let outcome = host.call("tools", name, args(name)).await;
            codes.push(match outcome {
                Ok(value) => json!({"ok": value.into_value()}),
                Err(error) => json!({"code": error.code, "message": error.message}),
            });
        }
        let found = host
            .call(
                "tools",
                "$search",
                JsonValue::new(json!({"query": "weather"})).unwrap(),
            )
            .await
            .map(JsonValue::into_value)
            .map_err(|error| error.message);
        codes.push(json!({"search": found.unwrap_or_else(Value::String)}));
        let names: Vec<String> = request
            .namespaces
            .iter()
            .flat_map(|ns| ns.names.clone())
            .collect();
        codes.push(json!({"names": names}));
        let lazy: Vec<String> = request
            .namespaces
            .iter()
            .flat_map(|ns| ns.lazy_names().to_vec())
            .collect();
        codes.push(json!({"lazy": lazy}));
        completed(Some(Value::Array(codes)), &[])
    });
    let h = harness(Arc::clone(&runtime), catalogue());
    let result = h.run().await;
    let value = value_of(&result)["result"].clone();
    assert_eq!(
        value[0],
        json!({"code": "UNKNOWN_TOOL", "message": "unknown tool \"native_note\""})
    );
    assert_eq!(
        value[1],
        json!({"code": "UNKNOWN_TOOL", "message": "unknown tool \"host_weather\""})
    );
    assert_eq!(value[2]["code"], "UNKNOWN_TOOL");
    // The deferred tool is reached, as a sub-call.
    assert_eq!(
        value[3],
        json!({"ok": {"city": "get_weather", "celsius": 21}})
    );
    assert_eq!(value[4]["search"][0]["name"], "get_weather");
    assert_eq!(
        value[5]["names"],
        json!([
            "code_helper",
            "list_files",
            "$search",
            "$describe",
            "get_weather",
            "send_mail"
        ])
    );
    // The deferred tools are the namespace's lazy tail, bound on first use.
    let lazy: Vec<&str> = request_lazy(&value[6]);
    assert_eq!(lazy, ["get_weather", "send_mail"]);
    // Only the deferred tool's call was a sub-call.
    assert_eq!(
        h.sink.summary(),
        ["started call-1:code:1", "settled call-1:code:1"]
    );
    let namespaces = runtime.namespaces.lock().unwrap().clone();
    assert_eq!(
        namespaces[0]
            .signature("$search")
            .map(|s| s.parameters.clone()),
        Some(vec!["query".to_owned(), "options".to_owned()])
    );
}

/// Without deferred tools nothing changes: no helper is bound.
#[tokio::test]
async fn a_scope_without_deferred_tools_binds_no_helper() {
    let runtime = scripted(|request: CodeRunRequest| async move {
        let names: Vec<String> = request
            .namespaces
            .iter()
            .flat_map(|ns| ns.names.clone())
            .collect();
        let refused = request
            .host
            .call(
                "tools",
                "$search",
                JsonValue::new(json!({"query": "x"})).unwrap(),
            )
            .await
            .err()
            .and_then(|error| error.code);
        completed(Some(json!({"names": names, "refused": refused})), &[])
    });
    let h = harness(
        Arc::clone(&runtime),
        vec![exposed("list_files", "List files.", Exposure::Direct)],
    );
    let result = h.run().await;
    assert_eq!(
        value_of(&result)["result"],
        json!({"names": ["list_files"], "refused": "UNKNOWN_TOOL"})
    );
    assert!(runtime.namespaces.lock().unwrap()[0].signatures.is_empty());
}

// ---------------------------------------------------------------------------------------
// Python, sandboxed.
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_a_program_finds_a_deferred_tool_and_calls_it_through_the_pipeline() {
    let h = real_harness(python(), catalogue());
    let value = run_as(
        &h,
        &h.agent,
        r#"
found = await tools.search_tools("weather")
hit = next(tool for tool in found if tool["name"] == "get_weather")
out = await tools[hit["name"]]({"city": "Paris"})
also = await tools.get_weather({"city": "Oslo"})
return {"names": [tool["name"] for tool in found], "hit": hit, "out": out, "also": also}
"#,
    )
    .await;
    assert_eq!(
        value,
        json!({
            "names": ["get_weather"],
            "hit": {
                "name": "get_weather",
                "description": WEATHER,
                "signature": weather_signature(Language::Python),
            },
            "out": {"city": "Paris", "celsius": 21},
            "also": {"city": "Oslo", "celsius": 21},
        })
    );
    assert_eq!(
        weather_signature(Language::Python),
        "async def get_weather(args: TypedDict[{\"city\": str}]) -> TypedDict[{\"city\": str, \"celsius\": float}]"
    );
    assert_eq!(
        h.sink.summary(),
        [
            "started call-1:code:1",
            "settled call-1:code:1",
            "started call-1:code:2",
            "settled call-1:code:2"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_bad_queries_raise_and_the_scope_bounds_what_is_found() {
    let h = real_harness(python(), catalogue());
    let narrow = h.registry.scope();
    narrow
        .restrict(ToolFilter::deny(["send_mail"]))
        .unwrap()
        .keep();
    let program = r#"
out = []
for query in ["", "x" * 10000]:
    try:
        await tools.search_tools(query)
        out.append("no error")
    except ToolCallError as error:
        out.append({"code": error.code, "tool": error.toolName, "message": str(error)})
for call in [
    lambda: tools.search_tools("weather", limit=-1),
    lambda: tools.search_tools("weather", bogus=1),
    lambda: tools.search_tools("weather", 1, limit=2),
    lambda: tools.search_tools("weather", 1, 2),
]:
    try:
        await call()
        out.append("no error")
    except ToolCallError as error:
        out.append({"code": error.code, "message": str(error)})
out.append([tool["name"] for tool in await tools.search_tools(query="send an email message", limit=3)])
out.append(await tools.describe_tool(name="send_mail"))
out.append([hasattr(tools, "native_note"), hasattr(tools, "host_weather")])
out.append(await tools.describe_tool("host_weather"))
out.append(len(await tools.search_tools("weather", 0)))
return out
"#;
    let value = run_as(&h, &narrow, program).await;
    let entries = value.as_array().unwrap();
    assert_eq!(
        entries[0],
        json!({"code": "INVALID_ARGS", "tool": "search_tools", "message": "the search query is empty: give a few words that describe the tool you need"})
    );
    assert_eq!(
        entries[1],
        json!({"code": "INVALID_ARGS", "tool": "search_tools", "message": "the search query has 10000 characters; at most 1000 are allowed"})
    );
    assert!(
        entries[2]["message"]
            .as_str()
            .unwrap()
            .contains("the limit must be a non-negative integer"),
        "{value}"
    );
    assert_eq!(
        entries[3],
        json!({"code": "INVALID_ARGS", "message": "search_tools() got an unexpected keyword argument 'bogus'"})
    );
    assert_eq!(
        entries[4],
        json!({"code": "INVALID_ARGS", "message": "search_tools() got multiple values for argument 'limit'"})
    );
    assert_eq!(
        entries[5],
        json!({"code": "INVALID_ARGS", "message": "search_tools() takes at most 2 arguments (3 given)"})
    );
    // Restricted away: not found, not described.
    assert_eq!(entries[6], json!([]));
    assert_eq!(entries[7], Value::Null);
    assert_eq!(entries[8], json!([false, false]));
    assert_eq!(entries[9], Value::Null);
    assert_eq!(entries[10], json!(0));
    assert_eq!(entries.len(), 11);
    // The unrestricted scope finds what the narrow one did not.
    let wide = run_as(
        &h,
        &h.agent,
        "return [t[\"name\"] for t in await tools.search_tools(\"send an email message\")]",
    )
    .await;
    assert_eq!(wide, json!(["send_mail"]));
    assert!(h.sink.summary().is_empty());
}

/// A tool named like a helper (here the function-style `search_tools` a gateway registers)
/// is shadowed in a scope with deferred tools: the SDK leaves it out and the name calls the
/// helper, which answers with values and calls no tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_a_helper_shadows_a_tool_of_its_name() {
    let mut tools = catalogue();
    tools.push(exposed(
        tools_registry::SEARCH_TOOLS,
        "The function-style tool search.",
        Exposure::Direct,
    ));
    let h = real_harness(python(), tools);
    let section = sdk_section(&h.registry, Some(&h.agent), Language::Python);
    assert!(
        !section.contains("The function-style tool search."),
        "{section}"
    );
    assert_eq!(section.matches("def search_tools(").count(), 1, "{section}");
    let value = run_as(
        &h,
        &h.agent,
        "return [tool[\"name\"] for tool in await tools.search_tools(\"weather\")]",
    )
    .await;
    assert_eq!(value, json!(["get_weather"]));
    assert!(h.sink.summary().is_empty(), "no tool was called");
}

/// The lazy names a scripted run recorded (`{"lazy": [...]}`).
fn request_lazy(recorded: &Value) -> Vec<&str> {
    recorded["lazy"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
