//! Code Mode SDK commands, and the `docs/tool-catalog.md` generator.
//!
//! - `cargo xtask sdk --lang typescript|python --catalog FILE.json [--section]
//!   [--allow-unsupported]`: prints the SDK declarations (with `--section`, the whole
//!   `tools:sdk` prompt section) for a catalog file, a JSON array of
//!   `{"name", "description", "parameters", "output"}` with raw JSON Schemas.
//! - `cargo xtask sdk-check`: renders the SDK of `xtask/sdk-check/catalog.json` in both
//!   languages and proves it with the real checkers: `tsc --strict --noEmit` (TypeScript from
//!   the npm registry, installed into `target/sdk-check/node`) and `mypy --strict` (from
//!   PyPI, installed into the virtual environment `target/sdk-check/venv`). The well-typed
//!   programs `good.ts` / `good.py` must be accepted; every line marked `wrong:` in
//!   `bad.ts` / `bad.py` must be rejected, and nothing else. `runtime.d.ts` declares the
//!   one global a TypeScript program has besides the SDK (`console`).
//! - [`tool_catalog_md`]: the model-facing schemas and both SDK renderings of the example
//!   tools in `xtask/sdk-check/examples.json`.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tools_codemode::{Language, ToolSdkSchema};
use tools_json::{JsonValue, Segment, Violation};

use crate::project_root;

/// The TypeScript release `sdk-check` installs.
const TYPESCRIPT_VERSION: &str = "5.9.3";
/// The mypy release `sdk-check` installs.
const MYPY_VERSION: &str = "2.4.1";
/// The oldest Python the SDK targets (`typing.NotRequired` arrived in 3.11).
const PYTHON_TARGET: &str = "3.11";
/// The fewest tools the sdk-check catalog must have.
const MIN_CHECK_TOOLS: usize = 40;
/// The marker of a line that a checker must reject.
const WRONG_MARKER: &str = "wrong:";

/// The example tools of `docs/tool-catalog.md`.
const EXAMPLES: &str = include_str!("../sdk-check/examples.json");

const SDK_USAGE: &str = "usage: cargo xtask sdk --lang typescript|python --catalog FILE.json [--section] [--allow-unsupported]

  --section            print the whole tools:sdk prompt section, not only the declarations
  --allow-unsupported  render schemas outside the enforced subset (they degrade to unknown / Any)
                       instead of failing";

/// `cargo xtask sdk`.
pub(crate) fn sdk(args: &[String]) -> Result<(), String> {
    let mut language = None;
    let mut catalog = None;
    let mut section = false;
    let mut allow_unsupported = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lang" | "--language" => {
                let name = args
                    .next()
                    .ok_or_else(|| format!("--lang needs a value\n\n{SDK_USAGE}"))?;
                language = Some(name.parse::<Language>().map_err(|e| e.to_string())?);
            }
            "--catalog" => {
                let path = args
                    .next()
                    .ok_or_else(|| format!("--catalog needs a file\n\n{SDK_USAGE}"))?;
                catalog = Some(PathBuf::from(path));
            }
            "--section" => section = true,
            "--allow-unsupported" => allow_unsupported = true,
            "-h" | "--help" => {
                println!("{SDK_USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}\n\n{SDK_USAGE}")),
        }
    }
    let language = language.ok_or_else(|| format!("missing --lang\n\n{SDK_USAGE}"))?;
    let catalog = catalog.ok_or_else(|| format!("missing --catalog\n\n{SDK_USAGE}"))?;
    let tools = load_catalog(&catalog, !allow_unsupported)?;
    if section {
        println!("{}", language.render_section(&tools));
    } else {
        println!("{}", language.render_declarations(&tools));
    }
    Ok(())
}

/// Reads a catalog file; see [`parse_catalog`].
fn load_catalog(path: &Path, strict: bool) -> Result<Vec<ToolSdkSchema>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read catalog {}: {e}", path.display()))?;
    parse_catalog(&text, strict).map_err(|e| format!("catalog {}: {e}", path.display()))
}

/// Parses catalog text: a JSON array of `{"name", "description", "parameters", "output"}`.
///
/// `name` and `parameters` are required; `description` defaults to none and `output` to
/// `{}` (any JSON). With `strict`, both schemas must be inside the enforced subset. Every
/// error names the entry, the tool and the path of the problem.
fn parse_catalog(text: &str, strict: bool) -> Result<Vec<ToolSdkSchema>, String> {
    let root = JsonValue::parse(text).map_err(|e| lossless_error(text, &e))?;
    let Value::Array(entries) = root.as_value() else {
        return Err(format!(
            "expected a JSON array of tools, found {}",
            kind(root.as_value())
        ));
    };
    let mut tools = Vec::with_capacity(entries.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("[{index}]");
        let Value::Object(map) = entry else {
            return Err(format!(
                "{at}: expected a tool object, found {}",
                kind(entry)
            ));
        };
        let name = match map.get("name") {
            Some(Value::String(name)) if name.is_empty() => {
                return Err(format!("{at}.name: a tool name cannot be empty"));
            }
            Some(Value::String(name)) if name == "run_code" => {
                return Err(format!(
                    "{at}.name: \"run_code\" is reserved for the Code Mode transport"
                ));
            }
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(format!(
                    "{at}.name: expected a string, found {}",
                    kind(other)
                ));
            }
            None => return Err(format!("{at}: missing \"name\"")),
        };
        let tool = format!("tool {name:?} ({at})");
        for key in map.keys() {
            if !matches!(
                key.as_str(),
                "name" | "description" | "parameters" | "output"
            ) {
                return Err(format!(
                    "{tool}: unknown key {key:?} (a tool has name, description, parameters, output)"
                ));
            }
        }
        if let Some(first) = seen.insert(name.clone(), index) {
            return Err(format!("{tool}: the name is already used by [{first}]"));
        }
        let description = match map.get("description") {
            None => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => {
                return Err(format!(
                    "{tool}: {at}.description: expected a string, found {}",
                    kind(other)
                ));
            }
        };
        let parameters = map
            .get("parameters")
            .ok_or_else(|| format!("{tool}: missing \"parameters\" (a JSON Schema)"))?;
        let output = map
            .get("output")
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        if strict {
            for (field, schema) in [("parameters", parameters), ("output", &output)] {
                let violations = tools_json::check_schema(schema);
                if !violations.is_empty() {
                    let list: Vec<String> = violations
                        .iter()
                        .map(|v| {
                            let path = tools_json::Path::from_parts(
                                &format!("{at}.{field}"),
                                v.path.segments().to_vec(),
                            );
                            Violation::new(path, v.kind.clone()).to_string()
                        })
                        .collect();
                    return Err(format!(
                        "{tool}: {field} is outside the supported JSON Schema subset \
                         (pass --allow-unsupported to render it as unknown / Any):\n  - {}",
                        list.join("\n  - ")
                    ));
                }
            }
        }
        tools.push(ToolSdkSchema::new(
            name,
            description,
            tools_json::clone_deep(parameters),
            output,
        ));
    }
    Ok(tools)
}

/// A boundary error, with each lossless violation attributed to its tool.
fn lossless_error(text: &str, error: &tools_json::Error) -> String {
    if !matches!(error, tools_json::Error::NotLossless { .. }) {
        return error.to_string();
    }
    let names = entry_names(text);
    let lines: Vec<String> = error
        .violations()
        .iter()
        .map(|v| match v.path.segments() {
            [Segment::Index(i), rest @ ..] => {
                let path = tools_json::Path::from_parts(&format!("[{i}]"), rest.to_vec());
                let violation = Violation::new(path, v.kind.clone());
                match names.get(*i).cloned().flatten() {
                    Some(name) => format!("tool {name:?} ([{i}]): {violation}"),
                    None => violation.to_string(),
                }
            }
            _ => v.to_string(),
        })
        .collect();
    format!("not lossless JSON:\n  - {}", lines.join("\n  - "))
}

/// The `name` of each catalog entry (for messages). The boundary has already checked the
/// nesting against its limit, so the recursive parser runs on a thread with a large stack.
fn entry_names(text: &str) -> Vec<Option<String>> {
    let text = text.to_owned();
    let parse = move || {
        let mut de = serde_json::Deserializer::from_str(&text);
        de.disable_recursion_limit();
        let Some(Ok(Value::Array(entries))) = de.into_iter::<Value>().next() else {
            return Vec::new();
        };
        let names = entries
            .iter()
            .map(|e| e.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect();
        tools_json::drop_deep(Value::Array(entries));
        names
    };
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(parse)
        .ok()
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `cargo xtask sdk-check`.
pub(crate) fn sdk_check(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!(
            "sdk-check takes no arguments (got {arg:?}); it reads xtask/sdk-check/"
        ));
    }
    let root = project_root();
    let inputs = root.join("xtask/sdk-check");
    let tools = load_catalog(&inputs.join("catalog.json"), false)?;
    if tools.len() < MIN_CHECK_TOOLS {
        return Err(format!(
            "xtask/sdk-check/catalog.json has {} tools; the check needs at least {MIN_CHECK_TOOLS}",
            tools.len()
        ));
    }
    println!(
        "sdk-check: {} tools from xtask/sdk-check/catalog.json",
        tools.len()
    );
    let work = target_dir(&root).join("sdk-check");

    let typescript = check_typescript(&tools, &inputs, &work)?;
    let python = check_python(&tools, &inputs, &work)?;
    println!("sdk-check: {typescript}");
    println!("sdk-check: {python}");
    println!("sdk-check: passed");
    Ok(())
}

/// The Cargo target folder (`CARGO_TARGET_DIR` when set).
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        })
        .unwrap_or_else(|| root.join("target"))
}

fn check_typescript(tools: &[ToolSdkSchema], inputs: &Path, work: &Path) -> Result<String, String> {
    let good = read(&inputs.join("good.ts"))?;
    let bad = read(&inputs.join("bad.ts"))?;
    check_coverage(tools, &good, "good.ts", ts_call_forms)?;
    let dir = work.join("ts");
    create_dir(&dir)?;
    let sdk = format!(
        "// Generated by `cargo xtask sdk-check` from xtask/sdk-check/catalog.json.\n{}\n",
        Language::TypeScript.render_declarations(tools)
    );
    write(&dir.join("sdk.ts"), &sdk)?;
    write(
        &dir.join("runtime.d.ts"),
        &read(&inputs.join("runtime.d.ts"))?,
    )?;
    write(&dir.join("good.ts"), &good)?;
    write(&dir.join("bad.ts"), &bad)?;

    let tsc = ensure_typescript(&work.join("node"))?;
    let run = |program: &str| -> Result<Output, String> {
        let mut command = Command::new("node");
        command.arg(&tsc).args([
            "--strict",
            "--noEmit",
            "--pretty",
            "false",
            "--target",
            "es2022",
            "--lib",
            "es2022",
            "--skipLibCheck",
            "runtime.d.ts",
            "sdk.ts",
            program,
        ]);
        command.current_dir(&dir);
        output_of(command, "tsc")
    };
    let accepted = run("good.ts")?;
    if !accepted.status.success() {
        return Err(format!(
            "tsc --strict rejected the well-typed program (work files in {}):\n{}",
            dir.display(),
            text_of(&accepted)
        ));
    }
    let rejected = run("bad.ts")?;
    let errors = error_lines(&text_of(&rejected), "bad.ts(")?;
    let marked = expect_rejections("tsc", &rejected, &bad, "bad.ts", &errors, &dir)?;
    Ok(format!(
        "TypeScript {TYPESCRIPT_VERSION}: `tsc --strict --noEmit` accepts the SDK and good.ts (calls all {} tools) and rejects all {marked} wrong lines of bad.ts",
        tools.len()
    ))
}

fn check_python(tools: &[ToolSdkSchema], inputs: &Path, work: &Path) -> Result<String, String> {
    let good = read(&inputs.join("good.py"))?;
    let bad = read(&inputs.join("bad.py"))?;
    check_coverage(tools, &good, "good.py", py_call_forms)?;
    let dir = work.join("py");
    create_dir(&dir)?;
    let sdk = format!(
        "# Generated by `cargo xtask sdk-check` from xtask/sdk-check/catalog.json.\n{}\n",
        Language::Python.render_declarations(tools)
    );
    write(&dir.join("sdk.py"), &sdk)?;
    write(&dir.join("good.py"), &good)?;
    write(&dir.join("bad.py"), &bad)?;

    let python = ensure_mypy(&work.join("venv"))?;
    let cache = work.join("mypy-cache");
    let run = |program: &str| -> Result<Output, String> {
        let mut command = Command::new(&python);
        command
            .args(["-m", "mypy", "--strict", "--python-version", PYTHON_TARGET])
            .arg("--cache-dir")
            .arg(&cache)
            .args(["--no-color-output", "--no-error-summary", "sdk.py", program]);
        command.current_dir(&dir);
        output_of(command, "mypy")
    };
    let accepted = run("good.py")?;
    if !accepted.status.success() {
        return Err(format!(
            "mypy --strict rejected the well-typed program (work files in {}):\n{}",
            dir.display(),
            text_of(&accepted)
        ));
    }
    let rejected = run("bad.py")?;
    let errors = error_lines(&text_of(&rejected), "bad.py:")?;
    let marked = expect_rejections("mypy", &rejected, &bad, "bad.py", &errors, &dir)?;
    Ok(format!(
        "mypy {MYPY_VERSION}: `mypy --strict` (Python {PYTHON_TARGET}) accepts the SDK and good.py (calls all {} tools) and rejects all {marked} wrong lines of bad.py",
        tools.len()
    ))
}

/// The ways a TypeScript program can call `name`: as a member, or by a quoted name written
/// raw or with every non-ASCII character escaped (`"a\u200cb"`).
fn ts_call_forms(name: &str) -> Vec<String> {
    let quoted = serde_json::to_string(name).unwrap_or_default();
    let mut escaped = String::new();
    for c in quoted.chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(escaped, "\\u{unit:04x}");
            }
        }
    }
    vec![
        format!("tools.{name}("),
        format!("tools[{quoted}]("),
        format!("tools[{escaped}]("),
    ]
}

/// The ways a Python program can call `name`.
fn py_call_forms(name: &str) -> Vec<String> {
    ts_call_forms(name)
}

/// Every tool of the catalog is called by the well-typed program.
fn check_coverage(
    tools: &[ToolSdkSchema],
    program: &str,
    file: &str,
    forms: fn(&str) -> Vec<String>,
) -> Result<(), String> {
    let missing: Vec<&str> = tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|name| !forms(name).iter().any(|f| program.contains(f.as_str())))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "xtask/sdk-check/{file} does not call every tool of the catalog; missing: {missing:?}"
        ))
    }
}

/// The 1-based line numbers that a checker's output reports errors on in `prefix…` files.
fn error_lines(output: &str, prefix: &str) -> Result<BTreeSet<usize>, String> {
    let mut lines = BTreeSet::new();
    let is_error = |l: &&str| l.contains(": error TS") || l.contains(": error:");
    for line in output
        .lines()
        .filter(|l| l.starts_with(prefix))
        .filter(is_error)
    {
        let number = line[prefix.len()..]
            .split([',', ')', ':'])
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| format!("cannot read the line number of {line:?}"))?;
        lines.insert(number);
    }
    Ok(lines)
}

/// Checks that the checker rejected `file` exactly at its `wrong:` lines; returns how many.
fn expect_rejections(
    checker: &str,
    output: &Output,
    program: &str,
    file: &str,
    errors: &BTreeSet<usize>,
    dir: &Path,
) -> Result<usize, String> {
    // A marked line is code followed by a comment containing the marker.
    let comment = if file.ends_with(".py") { "#" } else { "//" };
    let marker = format!("{comment} {WRONG_MARKER}");
    let marked: BTreeSet<usize> = program
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains(&marker) && !line.trim_start().starts_with(comment))
        .map(|(i, _)| i + 1)
        .collect();
    if marked.is_empty() {
        return Err(format!(
            "xtask/sdk-check/{file} marks no line with `{WRONG_MARKER}`"
        ));
    }
    if output.status.success() {
        return Err(format!(
            "{checker} accepted {file}, a program with {} wrong calls (work files in {})",
            marked.len(),
            dir.display()
        ));
    }
    let accepted: Vec<usize> = marked.difference(errors).copied().collect();
    let unexpected: Vec<usize> = errors.difference(&marked).copied().collect();
    if !accepted.is_empty() || !unexpected.is_empty() {
        return Err(format!(
            "{checker} on {file}: wrong lines accepted: {accepted:?}; errors on lines not marked `{WRONG_MARKER}`: {unexpected:?} (work files in {})\n{}",
            dir.display(),
            text_of(output)
        ));
    }
    Ok(marked.len())
}

/// Installs TypeScript into `prefix` with npm unless that exact version is there; returns
/// the path of `tsc`'s script.
fn ensure_typescript(prefix: &Path) -> Result<PathBuf, String> {
    let package = prefix.join("node_modules/typescript");
    let tsc = package.join("bin/tsc");
    let installed = std::fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|manifest| manifest["version"] == TYPESCRIPT_VERSION);
    if installed && tsc.is_file() {
        return Ok(tsc);
    }
    println!(
        "sdk-check: installing typescript@{TYPESCRIPT_VERSION} into {}",
        prefix.display()
    );
    create_dir(prefix)?;
    let mut npm = Command::new("npm");
    npm.arg("install").arg("--prefix").arg(prefix).args([
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        &format!("typescript@{TYPESCRIPT_VERSION}"),
    ]);
    let output = output_of(npm, "npm")?;
    if !output.status.success() || !tsc.is_file() {
        return Err(format!(
            "npm install typescript@{TYPESCRIPT_VERSION} failed:\n{}",
            text_of(&output)
        ));
    }
    Ok(tsc)
}

/// Creates the virtual environment `venv` with mypy unless that exact version is there;
/// returns the environment's Python.
fn ensure_mypy(venv: &Path) -> Result<PathBuf, String> {
    let python = venv.join("bin/python");
    let version = Command::new(&python)
        .args(["-m", "mypy", "--version"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if version.starts_with(&format!("mypy {MYPY_VERSION} ")) {
        return Ok(python);
    }
    println!(
        "sdk-check: installing mypy=={MYPY_VERSION} into {}",
        venv.display()
    );
    if !python.is_file() {
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(venv);
        let output = output_of(create, "python3 -m venv")?;
        if !output.status.success() {
            return Err(format!(
                "python3 -m venv {} failed:\n{}",
                venv.display(),
                text_of(&output)
            ));
        }
    }
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--quiet",
        &format!("mypy=={MYPY_VERSION}"),
    ]);
    let output = output_of(pip, "pip")?;
    if !output.status.success() {
        return Err(format!(
            "pip install mypy=={MYPY_VERSION} failed:\n{}",
            text_of(&output)
        ));
    }
    Ok(python)
}

fn output_of(mut command: Command, name: &str) -> Result<Output, String> {
    command
        .output()
        .map_err(|e| format!("cannot start {name}: {e} (is it installed and on PATH?)"))
}

fn text_of(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn create_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// `docs/tool-catalog.md`: for the example tools of `xtask/sdk-check/examples.json`, the
/// model-facing schemas (what native presentation puts on the wire), then the TypeScript
/// and the Python `tools:sdk` declarations (what Code Mode puts in the prompt).
pub(crate) fn tool_catalog_md() -> String {
    let tools = match parse_catalog(EXAMPLES, true) {
        Ok(tools) => tools,
        // The examples are committed and covered by a test; keep the generator total.
        Err(e) => {
            return format!(
                "{PREAMBLE}\n\n# Tool catalog\n\nThe example catalog is invalid: {e}\n"
            );
        }
    };
    let mut order: Vec<&ToolSdkSchema> = tools.iter().collect();
    order.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
    let mut out = String::new();
    out.push_str(PREAMBLE);
    out.push_str("\n\n# Tool catalog\n\n");
    out.push_str(
        "The example tools of `xtask/sdk-check/examples.json` as a model sees them.\n\
         Native presentation sends each tool's schema; Code Mode sends only `run_code` and puts \
         the generated SDK (TypeScript or Python, after the code runtime's language) in the \
         system prompt.\n\
         Regenerate with `cargo xtask codegen`; `cargo xtask sdk` renders any catalog file.\n\n",
    );
    out.push_str("## Model-facing schemas\n\n| tool | description |\n| --- | --- |\n");
    for tool in &order {
        let _ = writeln!(
            out,
            "| `{}` | {} |",
            tool.name,
            tool.description.replace('|', "\\|").replace('\n', "<br>")
        );
    }
    for tool in &order {
        let _ = write!(
            out,
            "\n### `{}`\n\n{}\n\n",
            tool.name,
            tool.description.trim()
        );
        let _ = write!(
            out,
            "Parameters:\n\n```json\n{}\n```\n\nOutput (declared in the SDK only):\n\n```json\n{}\n```\n",
            pretty(&tool.parameters),
            pretty(&tool.output)
        );
    }
    for (language, title, fence) in [
        (Language::TypeScript, "TypeScript", "ts"),
        (Language::Python, "Python", "python"),
    ] {
        let _ = write!(
            out,
            "\n## Code Mode SDK: {title}\n\nThe declaration block of the `tools:sdk` section \
             (`cargo xtask sdk --lang {language} --catalog xtask/sdk-check/examples.json`); \
             the section opens with `{}` and our instructions.\n\n```{fence}\n{}\n```\n",
            tools_codemode::SDK_HEADING,
            language.render_declarations(&tools)
        );
    }
    out
}

/// The first line of every generated Markdown file (the same as `codegen.rs` writes).
const PREAMBLE: &str = "<!-- Generated by `cargo xtask codegen`; do not edit. -->";

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse_catalog(text, true) {
            Ok(tools) => panic!("accepted {} tools", tools.len()),
            Err(e) => e,
        }
    }

    #[test]
    fn a_bad_catalog_names_the_tool_and_the_path() {
        assert!(err("{}").contains("expected a JSON array of tools, found an object"));
        assert!(err("[1]").contains("[0]: expected a tool object, found a number"));
        assert!(err(r#"[{"parameters": {}}]"#).contains("[0]: missing \"name\""));
        assert!(
            err(r#"[{"name": "", "parameters": {}}]"#)
                .contains("[0].name: a tool name cannot be empty")
        );
        assert!(err(r#"[{"name": "run_code", "parameters": {}}]"#).contains("reserved"));
        assert!(err(r#"[{"name": "a"}]"#).contains("tool \"a\" ([0]): missing \"parameters\""));
        assert!(
            err(r#"[{"name": "a", "parameters": {}, "params": 1}]"#)
                .contains("unknown key \"params\"")
        );
        assert!(
            err(r#"[{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}]"#)
                .contains("tool \"a\" ([1]): the name is already used by [0]")
        );
        assert!(
            err(r#"[{"name": "a", "description": 7, "parameters": {}}]"#)
                .contains("[0].description: expected a string, found a number")
        );
        let e = err(
            r#"[{"name": "ok", "parameters": {}}, {"name": "b", "parameters": {"type": "object", "properties": {"x": {"type": "string", "contentEncoding": "base64"}}}}]"#,
        );
        assert!(e.contains("tool \"b\" ([1]): parameters is outside"), "{e}");
        assert!(
            e.contains("[1].parameters.properties.x.contentEncoding"),
            "{e}"
        );
        let e = err(
            r#"[{"name": "c", "parameters": {}, "output": {"type": "number", "enum": [-0.0]}}]"#,
        );
        assert!(e.contains("not lossless JSON"), "{e}");
        assert!(
            e.contains("tool \"c\" ([0]): [0].output.enum[0]: negative zero"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_schemas_render_when_allowed() {
        let tools = parse_catalog(
            r##"[{"name": "b", "parameters": {"$ref": "#/x"}, "output": {"type": "string", "minLength": 1}}]"##,
            false,
        )
        .unwrap();
        let ts = Language::TypeScript.render_declarations(&tools);
        assert!(ts.contains("  b: unknown;\n"));
    }

    #[test]
    fn the_check_catalog_and_the_examples_are_valid() {
        let root = project_root();
        let catalog = load_catalog(&root.join("xtask/sdk-check/catalog.json"), false).unwrap();
        assert!(catalog.len() >= MIN_CHECK_TOOLS);
        for (file, forms) in [
            ("good.ts", ts_call_forms as fn(&str) -> Vec<String>),
            ("good.py", py_call_forms),
        ] {
            let program = read(&root.join("xtask/sdk-check").join(file)).unwrap();
            check_coverage(&catalog, &program, file, forms).unwrap();
        }
        let examples = parse_catalog(EXAMPLES, true).unwrap();
        assert!(!examples.is_empty());
    }

    #[test]
    fn the_tool_catalog_shows_schemas_and_both_sdks() {
        let md = tool_catalog_md();
        assert!(md.starts_with(PREAMBLE));
        assert!(md.contains("## Model-facing schemas"));
        assert!(md.contains("```ts\ntype JsonValue ="));
        assert!(md.contains("```python\nfrom typing import "));
        assert!(md.contains("class Tools(Protocol):"));
    }

    #[test]
    fn error_lines_are_read_from_both_checkers() {
        let tsc =
            "bad.ts(12,5): error TS2322: Type 'number' is not assignable\nsdk.ts(1,1): error X\n";
        assert_eq!(error_lines(tsc, "bad.ts(").unwrap(), BTreeSet::from([12]));
        let mypy = "bad.py:7: error: Argument 1 has incompatible type  [arg-type]\nbad.py:9: note: ToolCallError: error\n";
        assert_eq!(error_lines(mypy, "bad.py:").unwrap(), BTreeSet::from([7]));
    }
}
