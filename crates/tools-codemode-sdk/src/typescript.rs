//! Schema → TypeScript type text, and the TypeScript declarations of the `tools:sdk`
//! section.
//!
//! The walk writes straight into one output buffer in document order, driven by an
//! explicit task stack, so a schema thousands of levels deep neither recurses nor copies
//! its text once per level. The one thing that needs a look ahead, whether an array's item
//! text contains `|` or `&` (then it is parenthesised), is computed for every array item in
//! one iterative post-order pass before the walk.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SdkOptions, ToolSdkSchema, ToolSearchSdk};

use super::text::{collapse_js_whitespace, description_of, js_number, json_string, sorted_order};

/// Indentation stops growing past this many levels, so that the text of a deep schema
/// stays linear in its size (the reference indents without bound; TypeScript does not
/// care about white space).
pub(crate) const MAX_INDENT_LEVELS: usize = 64;

/// The `unknown` text of a schema outside the subset.
const UNKNOWN: &str = "unknown";

/// The instructions before the declarations (our own wording; the facts follow the
/// reference implementation's).
pub(crate) const INSTRUCTIONS: &str = "\
`run_code` takes two required arguments: `code`, the program, and `description`, a short \
active-voice summary of what the program does (shown to the user).

`code` is the body of an async TypeScript function, so top-level `await` and `return` work. \
Types are stripped before the program runs, so use erasable syntax only: annotations, \
interfaces and type aliases are fine, but `enum`, namespaces with values and parameter \
properties are not. Annotations are advisory; nothing checks them at run time.

Every tool declared below is an async function on the global `tools` object: \
`const out = await tools.name(args)`. A name that is not a plain identifier needs \
bracket access with a quoted name: `await tools[\"my-server.tool\"](args)`. A call \
resolves to the tool's result as typed JSON (its entry in `ToolOutputMap`). Arguments \
must be lossless JSON: plain objects, arrays, strings, booleans, null and finite numbers \
(no `undefined`, `NaN`, `-0`, `Date`, `Map` or class instances). A failed call rejects \
with a `ToolCallError` whose `toolName` says which tool failed and whose `code` says why \
(`INVALID_ARGS`, `DENIED`, `APPROVAL_DENIED`, `TOOL_TIMEOUT`, …); catch it to recover.

Independent calls may overlap: `await Promise.all([tools.a(x), tools.b(y)])`. Read-only \
tools then run concurrently, while tools that change state run alone, in the order the \
program called them. Sequence dependent work with `await`.

The program's output is what it prints with `console.log` and the value it returns; \
intermediate tool results are not shown unless the program prints or returns them. \
Images produced by tools are attached after the run.

The tools available to the program:";

/// The tool-search helpers of the TypeScript SDK.
pub(crate) const TOOL_SEARCH: ToolSearchSdk = ToolSearchSdk {
    search: "$search",
    search_parameters: &["query", "options"],
    describe: "$describe",
    describe_parameters: &["name"],
    instructions: "\
Not every tool is declared below: more are found by searching. \
`await tools.$search(\"what you need\")` looks through the others by what they do and \
resolves to their names, descriptions and signatures as values (nothing is added to this \
prompt). Call a tool it found by its name, like a declared one (the call is checked like any \
other): `const [hit] = await tools.$search(\"weather\"); await tools[hit.name](args)`. \
`await tools.$describe(name)` resolves to one tool's signature and the JSON Schema of its \
arguments.",
};

/// The declarations the TypeScript SDK adds for tool search: the result types, then (after
/// the `tools` object's mapped type) the helpers.
const SEARCH_TYPES: &str = "\
interface FoundTool {
  name: string;
  description: string;
  /** The tool's signature, written like the declarations above. */
  signature: string;
}

interface ToolDescription extends FoundTool {
  /** The JSON Schema of the tool's arguments. */
  parameters: { [key: string]: JsonValue };
}

";

/// The helpers, intersected with the `tools` object's mapped type.
fn search_helpers() -> String {
    format!(
        " & {{\n  \
         /** Finds tools not declared above by what they do, best match first: at most `limit` (default {DEFAULT_SEARCH_LIMIT}, at most {MAX_SEARCH_LIMIT}). Call one as `await tools[hit.name](args)`. */\n  \
         $search(query: string, options?: {{ limit?: number }}): Promise<FoundTool[]>;\n  \
         /** Describes a tool the program may call (declared above or found by `$search`); `null` for any other name. */\n  \
         $describe(name: string): Promise<ToolDescription | null>;\n}}"
    )
}

/// Renders `schema` as TypeScript type text; `indent` is the nesting level of the enclosing
/// member (two spaces per level), used for the lines of object literals.
///
/// A schema outside the enforced subset (anywhere) renders as `unknown`; any JSON is
/// accepted, of any depth, and the call never panics.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_codemode_sdk::json_schema_to_ts;
///
/// let schema = json!({
///     "type": "object",
///     "additionalProperties": false,
///     "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
///     "required": ["id"]
/// });
/// assert_eq!(json_schema_to_ts(&schema, 0), "{\n  id: number;\n  tags?: string[];\n}");
/// assert_eq!(json_schema_to_ts(&json!({"$ref": "#/x"}), 0), "unknown");
/// ```
pub fn json_schema_to_ts(schema: &Value, indent: usize) -> String {
    let mut out = String::new();
    write_ts(&mut out, schema, indent);
    out
}

/// Appends the TypeScript text of `schema` to `out`.
fn write_ts(out: &mut String, schema: &Value, indent: usize) {
    if !tools_json::is_schema_supported(schema) {
        out.push_str(UNKNOWN);
        return;
    }
    let parenthesise = item_flags(schema);
    let mut stack: Vec<Task<'_>> = vec![Task::Node(schema, indent)];
    while let Some(task) = stack.pop() {
        match task {
            Task::Text(text) => out.push_str(text),
            Task::Owned(text) => out.push_str(&text),
            Task::Node(node, indent) => node_task(out, &mut stack, &parenthesise, node, indent),
        }
    }
}

enum Task<'a> {
    Node(&'a Value, usize),
    Text(&'static str),
    Owned(String),
}

/// Renders one (supported) node: scalars directly, containers as tasks.
fn node_task<'a>(
    out: &mut String,
    stack: &mut Vec<Task<'a>>,
    parenthesise: &HashMap<*const Value, bool>,
    node: &'a Value,
    indent: usize,
) {
    let Some(map) = node.as_object() else {
        out.push_str(UNKNOWN);
        return;
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        for (i, branch) in branches.iter().enumerate().rev() {
            stack.push(Task::Node(branch, indent));
            if i > 0 {
                stack.push(Task::Text(" | "));
            }
        }
        return;
    }
    match map.get("type").and_then(Value::as_str) {
        None => out.push_str("JsonValue"),
        Some("array") => match map.get("items") {
            None => out.push_str("JsonValue[]"),
            Some(items) => {
                let wrap = parenthesise
                    .get(&std::ptr::from_ref(items))
                    .copied()
                    .unwrap_or(true);
                if wrap {
                    out.push('(');
                    stack.push(Task::Text(")[]"));
                } else {
                    stack.push(Task::Text("[]"));
                }
                stack.push(Task::Node(items, indent));
            }
        },
        Some("object") => object_task(out, stack, map, indent),
        Some(ty) => scalar(out, map, ty),
    }
}

fn object_task<'a>(
    out: &mut String,
    stack: &mut Vec<Task<'a>>,
    map: &'a Map<String, Value>,
    indent: usize,
) {
    let open = map.get("additionalProperties") != Some(&Value::Bool(false));
    let properties = map.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        out.push_str(if open {
            "Record<string, JsonValue>"
        } else {
            "Record<string, never>"
        });
        return;
    };
    let required = required_names(map);
    out.push_str("{\n");
    let mut close = pad(indent);
    close.push('}');
    if open {
        close.push_str(" & Record<string, JsonValue>");
    }
    stack.push(Task::Owned(close));
    let member_pad = pad(indent + 1);
    for (name, child) in properties.iter().rev() {
        stack.push(Task::Text(";\n"));
        stack.push(Task::Node(child, indent + 1));
        let mut head = String::new();
        if let Some(doc) = description_of(child).and_then(|d| doc_comment(&d)) {
            head.push_str(&member_pad);
            head.push_str(&doc);
            head.push('\n');
        }
        head.push_str(&member_pad);
        head.push_str(&property_key(name));
        if !required.contains(name.as_str()) {
            head.push('?');
        }
        head.push_str(": ");
        stack.push(Task::Owned(head));
    }
}

/// The names in an object's `required` list.
fn required_names(map: &Map<String, Value>) -> HashSet<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A scalar: `const` literal, else `enum` literals, else the base type.
fn scalar(out: &mut String, map: &Map<String, Value>, ty: &str) {
    if let Some(constant) = map.get("const") {
        push_literal(out, constant);
        return;
    }
    if let Some(members) = map.get("enum").and_then(Value::as_array) {
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            push_literal(out, member);
        }
        return;
    }
    out.push_str(match ty {
        "string" => "string",
        "number" | "integer" => "number",
        "boolean" => "boolean",
        "null" => "null",
        _ => UNKNOWN,
    });
}

/// A JSON scalar as a TypeScript literal type (`JSON.stringify` spelling).
fn push_literal(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => out.push_str(&json_string(s)),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Null => out.push_str("null"),
        Value::Array(_) | Value::Object(_) => out.push_str(UNKNOWN),
    }
}

/// Two spaces per level, capped at [`MAX_INDENT_LEVELS`].
fn pad(level: usize) -> String {
    "  ".repeat(level.min(MAX_INDENT_LEVELS))
}

/// Which characters a key may hold and still be written bare (unquoted) in JavaScript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BareKey {
    /// ASCII letters, digits, `_` and `$` only: the generated SDK and error paths, which
    /// stay readable in any terminal and match the JSON boundary's path style.
    Ascii,
    /// Unicode identifier characters (`XID_Start`/`XID_Continue`) too: how the sandbox's
    /// `console` shows an object literal.
    Unicode,
}

/// Whether `name` can be written as a bare key under `rule`: an identifier-start character,
/// `_` or `$`, then identifier characters, `_` or `$`. Reserved words are allowed, as they
/// are for keys.
pub fn is_bare_key(name: &str, rule: BareKey) -> bool {
    type CharRule = fn(char) -> bool;
    let (start, rest): (CharRule, CharRule) = match rule {
        BareKey::Ascii => (|c| c.is_ascii_alphabetic(), |c| c.is_ascii_alphanumeric()),
        BareKey::Unicode => (unicode_ident::is_xid_start, unicode_ident::is_xid_continue),
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| start(c) || c == '_' || c == '$')
        && chars.all(|c| rest(c) || c == '_' || c == '$')
}

/// A property or tool key: bare when it has the ASCII identifier shape, else quoted.
pub(crate) fn property_key(name: &str) -> String {
    if is_bare_key(name, BareKey::Ascii) {
        name.to_owned()
    } else {
        json_string(name)
    }
}

/// A `/** … */` doc comment: white space collapsed, `*/` escaped. A blank description has
/// none (docs/decisions.md, entry 19).
pub(crate) fn doc_comment(description: &str) -> Option<String> {
    let text = collapse_js_whitespace(description);
    if text.is_empty() {
        return None;
    }
    Some(format!("/** {} */", text.replace("*/", "*\\/")))
}

/// For every array's `items` node: whether its rendered text contains `|` or `&`
/// (keys, doc comments and string literals included), computed bottom-up without
/// recursion. Keys are node addresses, stable while `root` is borrowed.
fn item_flags(root: &Value) -> HashMap<*const Value, bool> {
    enum Frame<'a> {
        Enter(&'a Value, bool),
        Exit(&'a Value, bool, usize),
    }
    let mut flags = HashMap::new();
    let mut results: Vec<bool> = Vec::new();
    let mut stack = vec![Frame::Enter(root, false)];
    while let Some(frame) = stack.pop() {
        match frame {
            Frame::Enter(node, record) => {
                let start = stack.len();
                let mut children = 0;
                for (child, is_items) in children_of(node) {
                    stack.push(Frame::Enter(child, is_items));
                    children += 1;
                }
                // Children are visited in document order; their results come back in it.
                stack[start..].reverse();
                stack.insert(start, Frame::Exit(node, record, children));
            }
            Frame::Exit(node, record, children) => {
                let child_results = results.split_off(results.len().saturating_sub(children));
                let flag = has_bar_or_amp(node, &child_results);
                if record {
                    flags.insert(std::ptr::from_ref(node), flag);
                }
                results.push(flag);
            }
        }
    }
    flags
}

/// The child schemas of a (supported) node, in document order, each marked when it is
/// an array's `items`.
fn children_of(node: &Value) -> Vec<(&Value, bool)> {
    let Some(map) = node.as_object() else {
        return Vec::new();
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        return branches.iter().map(|b| (b, false)).collect();
    }
    match map.get("type").and_then(Value::as_str) {
        Some("array") => map
            .get("items")
            .map(|i| vec![(i, true)])
            .unwrap_or_default(),
        Some("object") => map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.values().map(|v| (v, false)).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Whether a node's text contains `|` or `&`, given the answers for its children.
fn has_bar_or_amp(node: &Value, children: &[bool]) -> bool {
    let special = |s: &str| s.contains(['|', '&']);
    let Some(map) = node.as_object() else {
        return false;
    };
    if map.contains_key("oneOf") {
        return true;
    }
    match map.get("type").and_then(Value::as_str) {
        None => false,
        Some("array") => children.first().copied().unwrap_or(false),
        Some("object") => {
            let open = map.get("additionalProperties") != Some(&Value::Bool(false));
            match map.get("properties").and_then(Value::as_object) {
                Some(properties) if !properties.is_empty() => {
                    open || children.iter().any(|c| *c)
                        || properties.iter().any(|(name, child)| {
                            special(name) || description_of(child).is_some_and(|d| special(&d))
                        })
                }
                _ => false,
            }
        }
        Some(_) => {
            let literal = |v: &Value| v.as_str().is_some_and(special);
            if let Some(constant) = map.get("const") {
                literal(constant)
            } else if let Some(members) = map.get("enum").and_then(Value::as_array) {
                members.len() > 1 || members.iter().any(literal)
            } else {
                false
            }
        }
    }
}

/// The fenced declaration block of the TypeScript SDK (without the fence lines).
pub(crate) fn declarations(tools: &[ToolSdkSchema], options: SdkOptions) -> String {
    let search = options.tool_search();
    // With tool search, a tool named like a helper is left out: the helper takes its name.
    let tools: Vec<&ToolSdkSchema> = tools
        .iter()
        .filter(|tool| !(search && TOOL_SEARCH.is_helper(&tool.name)))
        .collect();
    let order = sorted_order(tools.iter().map(|t| t.name.as_str()));
    let mut out = String::from(
        "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }\n\n",
    );
    if order.is_empty() {
        out.push_str("interface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n\n");
    } else {
        out.push_str("interface ToolArgsMap {\n");
        for &i in &order {
            let tool = tools[i];
            if let Some(doc) = doc_comment(&tool.description) {
                out.push_str("  ");
                out.push_str(&doc);
                out.push('\n');
            }
            out.push_str("  ");
            out.push_str(&property_key(&tool.name));
            out.push_str(": ");
            write_ts(&mut out, &tool.parameters, 1);
            out.push_str(";\n");
        }
        out.push_str("}\n\ninterface ToolOutputMap {\n");
        for &i in &order {
            let tool = tools[i];
            out.push_str("  ");
            out.push_str(&property_key(&tool.name));
            out.push_str(": ");
            write_ts(&mut out, &tool.output, 1);
            out.push_str(";\n");
        }
        out.push_str("}\n\n");
    }
    out.push_str("type ToolName = keyof ToolOutputMap\n\n");
    out.push_str("type ToolErrorCode = ");
    for (i, code) in tools_json::ErrorCode::ALL.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        out.push('"');
        out.push_str(code.as_str());
        out.push('"');
    }
    out.push_str(
        ";\n\n\
         declare class ToolCallError extends Error {\n  \
         readonly name: \"ToolCallError\";\n  \
         readonly toolName: ToolName;\n  \
         readonly code: ToolErrorCode | (string & {}) | undefined;\n}\n\n",
    );
    if search {
        out.push_str(SEARCH_TYPES);
    }
    out.push_str(
        "declare const tools: {\n  \
         [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}",
    );
    if search {
        out.push_str(&search_helpers());
    }
    out
}

/// One tool's signature on one line: `name(args: A): Promise<O>`, with `A` and `O` the
/// SDK's types of its arguments and output, their line breaks (and the indentation after
/// them) folded into single spaces.
pub(crate) fn signature(tool: &ToolSdkSchema) -> String {
    let mut text = property_key(&tool.name);
    text.push_str("(args: ");
    write_ts(&mut text, &tool.parameters, 0);
    text.push_str("): Promise<");
    write_ts(&mut text, &tool.output, 0);
    text.push('>');
    one_line(&text)
}

/// Folds every line break of generated type text, with the indentation after it, into one
/// space. Generated text breaks lines only between members (string literals and doc
/// comments never hold a raw line break), so nothing else changes.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push(' ');
            out.push_str(line.trim_start_matches(' '));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_bare_only_for_ascii_identifier_shapes() {
        assert_eq!(property_key("$ok"), "$ok");
        assert_eq!(property_key("_x1"), "_x1");
        assert_eq!(property_key("class"), "class");
        assert_eq!(property_key("my-key"), "\"my-key\"");
        assert_eq!(property_key("1abc"), "\"1abc\"");
        assert_eq!(property_key("ünï"), "\"ünï\"");
        assert_eq!(property_key(""), "\"\"");
    }

    #[test]
    fn doc_comments_collapse_escape_and_skip_blanks() {
        assert_eq!(
            doc_comment("  multi\n  line\t*/ close */  ").as_deref(),
            Some("/** multi line *\\/ close *\\/ */")
        );
        assert_eq!(doc_comment("   "), None);
        assert_eq!(doc_comment(""), None);
    }

    #[test]
    fn bare_keys_follow_the_rule_asked_for() {
        for (key, ascii, unicode) in [
            ("a", true, true),
            ("$_x1", true, true),
            ("_", true, true),
            ("", false, false),
            ("1a", false, false),
            ("a-b", false, false),
            ("caf\u{e9}", false, true),
            ("\u{3b1}\u{3b2}", false, true),
            // Superscript two is alphanumeric but not an identifier character.
            ("a\u{b2}", false, false),
            ("a b", false, false),
        ] {
            assert_eq!(is_bare_key(key, BareKey::Ascii), ascii, "{key:?} (ascii)");
            assert_eq!(
                is_bare_key(key, BareKey::Unicode),
                unicode,
                "{key:?} (unicode)"
            );
        }
    }

    #[test]
    fn the_flag_pass_sees_bars_in_keys_docs_and_literals() {
        let item = |items: Value| json_schema_to_ts(&json!({"type": "array", "items": items}), 0);
        assert_eq!(
            item(json!({"type": "string", "const": "a&b"})),
            "(\"a&b\")[]"
        );
        assert_eq!(item(json!({"type": "string", "enum": ["ab"]})), "\"ab\"[]");
        assert_eq!(
            item(
                json!({"type": "object", "additionalProperties": false, "properties": {"a|b": {}}})
            ),
            "({\n  \"a|b\"?: JsonValue;\n})[]"
        );
        assert_eq!(
            item(json!({"type": "object", "additionalProperties": false, "properties": {"a": {}}})),
            "{\n  a?: JsonValue;\n}[]"
        );
    }

    #[test]
    fn indentation_is_capped() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_INDENT_LEVELS + 5) {
            schema = json!({"type": "object", "additionalProperties": false, "properties": {"a": schema}});
        }
        let text = json_schema_to_ts(&schema, 0);
        let widest = text.lines().map(|l| l.len() - l.trim_start().len()).max();
        assert_eq!(widest, Some(2 * MAX_INDENT_LEVELS));
    }
}
