//! The worker's `boot` frame: the runtime limits and binding namespaces it carries, checked
//! as strictly as the host's own builders check them, and the resource limits the worker
//! applies to itself before it acknowledges the frame.

use std::time::Duration;

use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit, rlim_t, setrlimit};
use serde_json::{Map, Value};
use tools_json::drop_deep;

use tools_codemode::kit::wire;
use tools_codemode::{BindingNamespace, ErrorClass, RuntimeLimits, validate_bindings};

/// The deepest boot frame accepted: frame, `namespaces`, one namespace, its `names`,
/// `errorClass` or `signatures` (a signature, its `parameters`), with room for unknown
/// fields.
const BOOT_DEPTH: usize = 16;

/// What a valid `boot` frame sets.
#[derive(Debug)]
pub(super) struct Boot {
    /// The limits of the run (checked by [`RuntimeLimits::validate`]).
    pub(super) limits: RuntimeLimits,
    /// The namespaces bound as globals (checked by [`validate_bindings`]).
    pub(super) namespaces: Vec<BindingNamespace>,
    /// `RLIMIT_CPU` of the worker: soft at this many seconds, hard one second later.
    pub(super) cpu_seconds: u64,
    /// `RLIMIT_AS` of the worker, soft and hard.
    pub(super) address_space_bytes: u64,
    /// `RLIMIT_NPROC` of the worker, soft and hard, when the host sent one (sandboxed runs).
    pub(super) max_processes: Option<u64>,
}

/// Parses and checks one `boot` line; `Err` says what is wrong, for the diagnostic.
pub(super) fn parse(line: &str) -> Result<Boot, String> {
    let parsed = wire::parse(line, BOOT_DEPTH).ok_or("the line is not a JSON text")?;
    let Value::Object(frame) = parsed.value else {
        drop_deep(parsed.value);
        return Err("the frame is not a JSON object".to_owned());
    };
    let checked = check(&frame, parsed.lossy_number);
    drop_deep(Value::Object(frame));
    checked
}

/// Reads the fields of a parsed frame.
fn check(frame: &Map<String, Value>, lossy_number: bool) -> Result<Boot, String> {
    if frame.get("type").and_then(Value::as_str) != Some("boot") {
        return Err("the frame's `type` is not \"boot\"".to_owned());
    }
    if lossy_number {
        return Err("a number of the frame has no exact value".to_owned());
    }
    let uint = |key: &str| -> Result<u64, String> {
        frame
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer"))
    };
    let size = |key: &str| -> Result<usize, String> {
        usize::try_from(uint(key)?).map_err(|_| format!("`{key}` does not fit a usize"))
    };
    let millis = |key: &str| uint(key).map(Duration::from_millis);
    let limits = RuntimeLimits {
        compute: millis("computeMillis")?,
        wall: millis("wallMillis")?,
        memory_bytes: uint("memoryBytes")?,
        max_output_bytes: size("maxOutputBytes")?,
        max_json_depth: size("maxDepth")?,
        stack_bytes: size("stackBytes")?,
        settle_grace: millis("settleGraceMillis")?,
    };
    limits.validate().map_err(|error| error.to_string())?;
    let cpu_seconds = uint("cpuSeconds")?;
    if cpu_seconds == 0 {
        return Err("`cpuSeconds` must be positive".to_owned());
    }
    let address_space_bytes = uint("addressSpaceBytes")?;
    if address_space_bytes == 0 {
        return Err("`addressSpaceBytes` must be positive".to_owned());
    }
    let max_processes = match frame.get("maxProcesses") {
        None => None,
        Some(_) => match uint("maxProcesses")? {
            0 => return Err("`maxProcesses` must be positive".to_owned()),
            max => Some(max),
        },
    };
    let namespaces = namespaces(frame.get("namespaces"))?;
    validate_bindings(&namespaces).map_err(|error| error.to_string())?;
    Ok(Boot {
        limits,
        namespaces,
        cpu_seconds,
        address_space_bytes,
        max_processes,
    })
}

/// The `namespaces` array.
fn namespaces(value: Option<&Value>) -> Result<Vec<BindingNamespace>, String> {
    let Some(Value::Array(specs)) = value else {
        return Err("`namespaces` must be an array".to_owned());
    };
    specs.iter().map(namespace).collect()
}

/// One `{"global", "names", "errorClass"?, "signatures"?}` entry; a signature is
/// `{"name", "parameters": [...]}`.
fn namespace(spec: &Value) -> Result<BindingNamespace, String> {
    let string = |value: Option<&Value>, what: &str| {
        value
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("a namespace's `{what}` must be a string"))
    };
    let Value::Object(spec) = spec else {
        return Err("a namespace must be a JSON object".to_owned());
    };
    let global = string(spec.get("global"), "global")?;
    let Some(Value::Array(names)) = spec.get("names") else {
        return Err("a namespace's `names` must be an array".to_owned());
    };
    let names = names
        .iter()
        .map(|name| string(Some(name), "names"))
        .collect::<Result<Vec<_>, _>>()?;
    let error_class = match spec.get("errorClass") {
        None | Some(Value::Null) => None,
        Some(Value::Object(class)) => Some(ErrorClass::new(
            string(class.get("name"), "errorClass.name")?,
            string(
                class.get("memberNameProperty"),
                "errorClass.memberNameProperty",
            )?,
        )),
        Some(_) => return Err("a namespace's `errorClass` must be an object".to_owned()),
    };
    let mut namespace = BindingNamespace::new(global, names, error_class);
    match spec.get("signatures") {
        None | Some(Value::Null) => {}
        Some(Value::Array(signatures)) => {
            for signature in signatures {
                let Value::Object(signature) = signature else {
                    return Err("a namespace's signature must be an object".to_owned());
                };
                let name = string(signature.get("name"), "signatures[].name")?;
                let Some(Value::Array(parameters)) = signature.get("parameters") else {
                    return Err(
                        "a namespace's `signatures[].parameters` must be an array".to_owned()
                    );
                };
                let parameters = parameters
                    .iter()
                    .map(|parameter| string(Some(parameter), "signatures[].parameters"))
                    .collect::<Result<Vec<_>, _>>()?;
                namespace = namespace.with_signature(name, parameters);
            }
        }
        Some(_) => return Err("a namespace's `signatures` must be an array".to_owned()),
    }
    Ok(namespace)
}

/// `wanted`, lowered to a finite hard limit already in force (an unprivileged process can
/// only lower it).
fn within(wanted: u64, hard: rlim_t) -> rlim_t {
    let wanted = wanted as rlim_t;
    if hard == RLIM_INFINITY {
        wanted
    } else {
        wanted.min(hard)
    }
}

/// Applies the worker's own resource limits: no core dumps, `RLIMIT_CPU` (soft at
/// `cpuSeconds`, hard one second later, so the soft limit's `SIGXCPU` comes first) and
/// `RLIMIT_AS` (soft and hard at `addressSpaceBytes`).
pub(super) fn apply_rlimits(boot: &Boot) -> Result<(), String> {
    let fail = |what: &str, error: nix::Error| format!("setrlimit({what}): {error}");
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(|e| fail("RLIMIT_CORE", e))?;
    let (_, cpu_hard) = getrlimit(Resource::RLIMIT_CPU).map_err(|e| fail("RLIMIT_CPU", e))?;
    let hard = within(boot.cpu_seconds.saturating_add(1), cpu_hard);
    let soft = within(boot.cpu_seconds, hard);
    setrlimit(Resource::RLIMIT_CPU, soft, hard).map_err(|e| fail("RLIMIT_CPU", e))?;
    let (_, as_hard) = getrlimit(Resource::RLIMIT_AS).map_err(|e| fail("RLIMIT_AS", e))?;
    let limit = within(boot.address_space_bytes, as_hard);
    setrlimit(Resource::RLIMIT_AS, limit, limit).map_err(|e| fail("RLIMIT_AS", e))?;
    if let Some(max) = boot.max_processes {
        let (_, nproc_hard) =
            getrlimit(Resource::RLIMIT_NPROC).map_err(|e| fail("RLIMIT_NPROC", e))?;
        let limit = within(max, nproc_hard);
        setrlimit(Resource::RLIMIT_NPROC, limit, limit).map_err(|e| fail("RLIMIT_NPROC", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"{"type":"boot","cpuSeconds":3,"addressSpaceBytes":1073741824,"maxLogBytes":100,"maxValueBytes":100,"maxDepth":50,"namespaces":[{"global":"tools","names":["echo","a b"],"errorClass":{"name":"ToolCallError","memberNameProperty":"toolName"}},{"global":"other","names":[],"errorClass":null}],"computeMillis":1500,"wallMillis":9000,"memoryBytes":33554432,"stackBytes":1048576,"maxOutputBytes":4096,"settleGraceMillis":250,"future":{"field":[1]}}"#;

    fn reason(line: &str) -> String {
        parse(line).map_or_else(|reason| reason, |_| String::new())
    }

    #[test]
    fn a_valid_boot_frame_sets_every_limit() {
        let boot = parse(VALID).unwrap_or_else(|reason| panic!("{reason}"));
        assert_eq!(
            boot.limits,
            RuntimeLimits {
                compute: Duration::from_millis(1500),
                wall: Duration::from_millis(9000),
                memory_bytes: 33_554_432,
                max_output_bytes: 4096,
                max_json_depth: 50,
                stack_bytes: 1_048_576,
                settle_grace: Duration::from_millis(250),
            }
        );
        assert_eq!(boot.cpu_seconds, 3);
        assert_eq!(boot.address_space_bytes, 1_073_741_824);
        assert_eq!(
            boot.namespaces,
            [
                BindingNamespace::new(
                    "tools",
                    ["echo", "a b"],
                    Some(ErrorClass::tool_call_error())
                ),
                BindingNamespace::new("other", Vec::<String>::new(), None),
            ]
        );
    }

    #[test]
    fn signatures_cross_the_boot_frame_and_are_checked() {
        let with = |signatures: &str| {
            VALID.replace(
                r#""names":["echo","a b"],"#,
                &format!(r#""names":["echo","a b"],"signatures":{signatures},"#),
            )
        };
        let boot = parse(&with(
            r#"[{"name":"a b","parameters":["query","options"]}]"#,
        ))
        .unwrap_or_else(|reason| panic!("{reason}"));
        assert_eq!(
            boot.namespaces[0]
                .signature("a b")
                .map(|s| s.parameters.clone()),
            Some(vec!["query".to_owned(), "options".to_owned()])
        );
        assert!(boot.namespaces[0].signature("echo").is_none());
        for (signatures, fragment) in [
            (r#"[{"name":"nope","parameters":[]}]"#, "has no function"),
            (
                r#"[{"name":"echo","parameters":["not valid"]}]"#,
                "not a usable",
            ),
            (
                r#"[{"name":"echo","parameters":"q"}]"#,
                "`signatures[].parameters`",
            ),
            (r#"[{"name":1,"parameters":[]}]"#, "`signatures[].name`"),
            (r#"[1]"#, "signature must be an object"),
            (r#"{}"#, "`signatures` must be an array"),
        ] {
            let why = reason(&with(signatures));
            assert!(why.contains(fragment), "{signatures}: {why}");
        }
    }

    #[test]
    fn invalid_boot_frames_are_refused_with_a_reason() {
        let cases = [
            ("", "not a JSON text"),
            ("[]", "not a JSON object"),
            (r#"{"type":"run"}"#, "`type`"),
            (&VALID.replace("1500", "0"), "`compute`"),
            (&VALID.replace("1500", "-1"), "`computeMillis`"),
            (&VALID.replace("1500", "1.5"), "`computeMillis`"),
            (&VALID.replace("1500", "\"1500\""), "`computeMillis`"),
            (&VALID.replace(r#""wallMillis":9000,"#, ""), "`wallMillis`"),
            (&VALID.replace("33554432", "1024"), "`memory_bytes`"),
            (&VALID.replace("1048576", "1024"), "`stack_bytes`"),
            (
                &VALID.replace(r#""maxDepth":50"#, r#""maxDepth":0"#),
                "`max_json_depth`",
            ),
            (
                &VALID.replace("\"cpuSeconds\":3", "\"cpuSeconds\":0"),
                "`cpuSeconds`",
            ),
            (&VALID.replace("1073741824", "0"), "`addressSpaceBytes`"),
            (&VALID.replace("1073741824", "1e400"), "no exact value"),
            (
                &VALID.replace("\"global\":\"tools\"", "\"global\":\"class\""),
                "class",
            ),
            (
                &VALID.replace("\"global\":\"other\"", "\"global\":\"tools\""),
                "more than one",
            ),
            (&VALID.replace("[\"echo\",\"a b\"]", "[1]"), "`names`"),
            (
                &VALID.replace("\"errorClass\":null", "\"errorClass\":1"),
                "`errorClass`",
            ),
            (
                &VALID.replace("\"ToolCallError\"", "null"),
                "errorClass.name",
            ),
            (
                &VALID.replace(r#"{"field":[1]}"#, &"[".repeat(20)),
                "not a JSON text",
            ),
        ];
        for (line, expected) in cases {
            let message = reason(line);
            assert!(message.contains(expected), "{line}: {message:?}");
        }
    }

    #[test]
    fn limits_stay_within_a_finite_hard_limit() {
        assert_eq!(within(5, RLIM_INFINITY), 5);
        assert_eq!(within(5, 3), 3);
        assert_eq!(within(2, 3), 2);
    }
}
