//! The enforced JSON Schema subset: support check, compilation and validation.

mod allowed;
mod bounds;
pub mod build;
mod check;
mod compile;
mod direct;
mod foreign;
mod keys;
mod number;
mod pattern;
mod properties;
mod source;
mod supported;
mod unique;
mod validate;
mod walk;

use std::fmt;
use std::sync::Arc;

use serde_json::{Number, Value};

use crate::{Error, JsonValue, Limits, Path, Violation, ViolationKind, Violations};

pub use bounds::BOUND_KEYWORDS;
pub(crate) use compile::{Node, NodeId};

/// A schema that passed the support check, compiled once into a form that validates fast.
///
/// Compile at registration, validate per call. Cloning is an `Arc` clone.
///
/// # Examples
///
/// ```
/// use tools_json::CompiledSchema;
/// use serde_json::json;
///
/// let schema = CompiledSchema::compile(&json!({
///     "type": "object",
///     "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
///     "required": ["path"]
/// })).unwrap();
///
/// assert!(schema.validate(&json!({"path": "/tmp/a", "limit": 10.0}), "").is_empty());
///
/// let violations = schema.validate(&json!({"limit": "ten"}), "");
/// assert_eq!(
///     violations.to_string(),
///     "path: required property is missing; limit: must be an integer"
/// );
/// ```
#[derive(Clone)]
pub struct CompiledSchema(Arc<Inner>);

struct Inner {
    /// The model-facing JSON, shared with whoever projects the schema to a model (no second
    /// copy); for a DSL spec, rendered on first use.
    source: source::Source,
    nodes: Box<[Node]>,
    /// Whether the schema is shallow enough for the direct (recursive) validator; deeper
    /// ones are validated by the iterative walk.
    direct: bool,
    /// Unique per compiled schema (never reused): what a snapshot remembers it passed.
    id: u64,
    /// For a foreign schema, what of it the validator does not enforce (empty otherwise).
    unenforced: Box<[Violation]>,
    /// For a foreign schema that had to be changed to fit the subset, the lowered schema
    /// the validator enforces (`None`: the source itself is enforced).
    enforced: Option<JsonValue>,
}

/// The next [`Inner::id`]; 0 is never handed out (it means "not validated").
static NEXT_SCHEMA_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl CompiledSchema {
    /// Checks `schema` against the subset and compiles it, with the default [`Limits`]
    /// for its annotations.
    ///
    /// Any JSON root is accepted (string, array, object, `oneOf`, `{}`).
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] with every violation of the support check, paths rooted
    /// at `schema`.
    pub fn compile(schema: &Value) -> Result<CompiledSchema, Error> {
        CompiledSchema::compile_with(schema, &Limits::default())
    }

    /// As [`CompiledSchema::compile`], with explicit limits for `default`/`examples` data.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] with every violation.
    pub fn compile_with(schema: &Value, limits: &Limits) -> Result<CompiledSchema, Error> {
        let mut patterns = pattern::Patterns::default();
        let violations = check::check(schema, "schema", limits, &mut patterns);
        if !violations.is_empty() {
            return Err(Error::UnsupportedSchema { violations });
        }
        Ok(CompiledSchema::from_checked(
            crate::clone_deep(schema),
            &mut patterns,
        ))
    }

    /// As [`CompiledSchema::compile`], taking the schema by value (no copy is made).
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`] with every violation; the schema is dropped.
    pub fn compile_owned(schema: Value) -> Result<CompiledSchema, Error> {
        let mut patterns = pattern::Patterns::default();
        let violations = check::check(&schema, "schema", &Limits::default(), &mut patterns);
        if !violations.is_empty() {
            crate::drop_deep(schema);
            return Err(Error::UnsupportedSchema { violations });
        }
        Ok(CompiledSchema::from_checked(schema, &mut patterns))
    }

    /// Checks and compiles a structured-output schema, which must be object-rooted.
    ///
    /// When the support check finds violations, only those are reported; otherwise a root
    /// that is not `type: "object"` (including `{}` and a root `oneOf`) is one violation.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedSchema`].
    pub fn compile_object_rooted(schema: &Value) -> Result<CompiledSchema, Error> {
        let compiled = CompiledSchema::compile(schema)?;
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            Ok(compiled)
        } else {
            Err(Error::UnsupportedSchema {
                violations: vec![Violation::new(
                    Path::root("schema").key("type"),
                    ViolationKind::NotObjectRooted,
                )]
                .into(),
            })
        }
    }

    /// Compiles a schema this project did not write (an MCP server's, another host's), as
    /// entry 27 of docs/decisions.md says: never rejected, never dropped.
    /// [`CompiledSchema::as_json`] is the schema as given (the model sees it verbatim,
    /// numbers canonical); validation enforces every keyword of it that the subset
    /// enforces, and [`CompiledSchema::unenforced`] lists the rest, each at its path with
    /// the support check's kind.
    ///
    /// Every repair loosens the schema, never tightens it: a value the schema accepts is
    /// never refused. See the module `schema::foreign` for the table of repairs.
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_json::CompiledSchema;
    /// use serde_json::json;
    ///
    /// let schema = CompiledSchema::compile_foreign(&json!({
    ///     "$schema": "http://json-schema.org/draft-07/schema#",
    ///     "type": "object",
    ///     "properties": {
    ///         "timezone": {"type": "string", "minLength": 1},
    ///         "when": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    ///     },
    ///     "required": ["timezone"]
    /// }));
    /// assert!(!schema.is_fully_enforced());
    /// assert_eq!(schema.unenforced()[0].path.to_string(), "schema.properties.when.anyOf");
    /// // What is enforced is enforced; the model still sees `anyOf`.
    /// assert!(!schema.is_valid(&json!({"timezone": ""})));
    /// assert!(schema.is_valid(&json!({"timezone": "UTC", "when": true})));
    /// assert!(schema.as_json()["properties"]["when"].get("anyOf").is_some());
    /// // A code generator types what is enforced: `when` is any JSON there.
    /// assert_eq!(schema.enforced_json()["properties"]["when"], json!({}));
    /// ```
    pub fn compile_foreign(schema: &Value) -> CompiledSchema {
        let mut patterns = pattern::Patterns::default();
        let (lowered, unenforced) = foreign::lower(schema, &mut patterns);
        let nodes = compile::compile(&lowered, &mut patterns);
        let mut source = crate::clone_deep(schema);
        foreign::scrub_negative_zero(&mut source);
        let enforced = if crate::eq_deep(&lowered, &source) {
            crate::drop_deep(lowered);
            None
        } else {
            Some(JsonValue::from_checked(lowered, "schema"))
        };
        let source = JsonValue::from_checked(source, "schema");
        let id = NEXT_SCHEMA_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CompiledSchema(Arc::new(Inner {
            source: source::Source::Ready(source),
            direct: direct::nesting(&nodes) <= direct::MAX_DEPTH,
            nodes,
            id,
            unenforced: unenforced.into_boxed_slice(),
            enforced,
        }))
    }

    /// Whether validation enforces the whole schema: always for schemas inside the subset,
    /// and for a foreign schema when nothing of it had to be loosened.
    pub fn is_fully_enforced(&self) -> bool {
        self.0.unenforced.is_empty()
    }

    /// What of a foreign schema validation does not enforce (empty for schemas inside the
    /// subset), each at its path in the schema with the support check's kind.
    pub fn unenforced(&self) -> &[Violation] {
        &self.0.unenforced
    }

    /// The schema the validator enforces, inside the subset: the source itself, or for a
    /// foreign schema that had to be loosened, the lowered schema (what a code generator
    /// can type precisely; the model still sees [`CompiledSchema::as_json`]).
    pub fn enforced_json(&self) -> &Value {
        self.0
            .enforced
            .as_ref()
            .unwrap_or_else(|| self.0.source.get())
            .as_value()
    }

    fn from_checked(source: Value, patterns: &mut pattern::Patterns) -> CompiledSchema {
        let source = JsonValue::from_checked(source, "schema");
        let nodes = compile::compile(source.as_value(), patterns);
        let id = NEXT_SCHEMA_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CompiledSchema(Arc::new(Inner {
            source: source::Source::Ready(source),
            direct: direct::nesting(&nodes) <= direct::MAX_DEPTH,
            nodes,
            id,
            unenforced: Box::new([]),
            enforced: None,
        }))
    }

    /// A schema from [`build::Builder::finish`]: `nodes` nest `nesting` levels deep, and
    /// `render` makes the model-facing JSON when first read.
    fn deferred(
        nodes: Box<[Node]>,
        nesting: usize,
        render: Box<dyn FnOnce() -> Value + Send>,
    ) -> CompiledSchema {
        let id = NEXT_SCHEMA_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CompiledSchema(Arc::new(Inner {
            source: source::Source::deferred(render),
            direct: nesting <= direct::MAX_DEPTH,
            nodes,
            id,
            unenforced: Box::new([]),
            enforced: None,
        }))
    }

    /// The schema as given, with integral floats written as integers (the model-facing
    /// JSON).
    pub fn as_json(&self) -> &Value {
        self.0.source.get().as_value()
    }

    /// The schema as a shared lossless value: cloning it is an `Arc` clone, so a tool
    /// definition and its model projection hold the compiled schema's own copy.
    pub fn json(&self) -> &JsonValue {
        self.0.source.get()
    }

    /// Whether the model-facing JSON exists yet: always, except for a schema from
    /// [`build::Builder::finish`] that nothing has read ([`CompiledSchema::as_json`],
    /// [`CompiledSchema::json`], `Debug`, `==`) since it was compiled.
    pub fn is_json_rendered(&self) -> bool {
        self.0.source.is_rendered()
    }

    /// Validates `value`, returning every violation in walk order (empty when valid).
    ///
    /// `root` labels the root in paths: `"value"`, `"output"`, or `""` for tool arguments
    /// (whose children then render without a leading dot, and whose root is named
    /// `arguments` in messages).
    ///
    /// Total: any `serde_json::Value` is accepted, of any depth, and the call never panics.
    pub fn validate(&self, value: &Value, root: &str) -> Violations {
        if self.0.direct {
            direct::validate(&self.0.nodes, value, root)
        } else {
            validate::validate(&self.0.nodes, value, root)
        }
    }

    /// As [`CompiledSchema::validate`], for a lossless snapshot, which remembers a success:
    /// validating the same snapshot against the same schema again (a classifier, then the
    /// body, both parsing one call's arguments) costs one atomic load.
    ///
    /// A snapshot remembers the last schema it passed, by an id no other schema ever gets,
    /// and both are immutable, so the answer cannot go stale.
    pub fn validate_snapshot(&self, value: &JsonValue, root: &str) -> Violations {
        if value.validated_by() == self.0.id {
            return Violations::new();
        }
        let violations = self.validate(value.as_value(), root);
        if violations.is_empty() {
            value.mark_validated_by(self.0.id);
        }
        violations
    }

    /// As [`CompiledSchema::is_valid`] for a snapshot, which remembers a pass as
    /// [`CompiledSchema::validate_snapshot`] does (and answers from it).
    pub fn is_valid_snapshot(&self, value: &JsonValue) -> bool {
        if value.validated_by() == self.0.id {
            return true;
        }
        let valid = self.is_valid(value.as_value());
        if valid {
            value.mark_validated_by(self.0.id);
        }
        valid
    }

    /// Whether `value` is valid; stops at the first violation.
    pub fn is_valid(&self, value: &Value) -> bool {
        if self.0.direct {
            direct::is_valid(&self.0.nodes, value)
        } else {
            validate::is_valid(&self.0.nodes, value)
        }
    }

    /// Whether the root is `type: "object"`.
    pub fn is_object_rooted(&self) -> bool {
        matches!(self.0.nodes.first(), Some(Node::Object { .. }))
    }
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The source is printed only when shallow: `serde_json`'s printer recurses.
        let source = self.0.source.get();
        if depth_within(source.as_value(), 64) {
            write!(f, "CompiledSchema({source})")
        } else {
            write!(f, "CompiledSchema(<{} nodes>)", self.0.nodes.len())
        }
    }
}

impl PartialEq for CompiledSchema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || self.0.source.get().as_value() == other.0.source.get().as_value()
    }
}

/// Runs the support check over a raw schema and returns every violation (empty when the
/// schema is inside the subset). Paths are rooted at `schema`.
///
/// # Examples
///
/// ```
/// use tools_json::check_schema;
/// use serde_json::json;
///
/// let violations = check_schema(&json!({"type": "integer", "pattern": "^a", "anyOf": []}));
/// assert_eq!(violations.len(), 2);
/// assert_eq!(violations[0].path.to_string(), "schema.anyOf");
/// assert_eq!(violations[1].path.to_string(), "schema.pattern");
/// ```
pub fn check_schema(schema: &Value) -> Violations {
    check::check(
        schema,
        "schema",
        &Limits::default(),
        &mut pattern::Patterns::default(),
    )
}

/// Whether `schema` is inside the enforced subset: exactly when [`check_schema`] reports no
/// violation, but the walk stops at the first one and builds no paths, so it stays linear
/// on a pathological schema. Iterative and total over any JSON.
///
/// ```
/// use serde_json::json;
/// assert!(tools_json::is_schema_supported(&json!({"type": "string", "enum": ["a"]})));
/// assert!(tools_json::is_schema_supported(&json!({"type": "string", "pattern": "a+"})));
/// assert!(!tools_json::is_schema_supported(&json!({"type": "string", "pattern": "(a)\\1"})));
/// ```
pub fn is_schema_supported(schema: &Value) -> bool {
    supported::is_supported(schema)
}

/// Whether a number is an integer in the subset's sense: finite, not negative zero, with no
/// fractional part (`1.0` counts).
pub(crate) fn is_integer(number: &Number) -> bool {
    if number.is_i64() || number.is_u64() {
        return true;
    }
    number
        .as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && !(f == 0.0 && f.is_sign_negative()))
}

/// A number as an exact integer where it is integral, else as a float.
#[derive(PartialEq)]
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(number: &Number) -> Exact {
    if let Some(i) = number.as_i64() {
        return Exact::Int(i128::from(i));
    }
    if let Some(u) = number.as_u64() {
        return Exact::Int(i128::from(u));
    }
    let f = number.as_f64().unwrap_or(f64::NAN);
    // Integral floats within ±2^64 are exact integers.
    if f.fract() == 0.0 && f.abs() < 18_446_744_073_709_551_616.0 {
        #[allow(clippy::cast_possible_truncation)]
        return Exact::Int(f as i128);
    }
    Exact::Float(f)
}

/// Equality of scalar JSON values with numbers compared by value (`1 == 1.0`).
pub(crate) fn json_scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => exact(x) == exact(y),
        _ => a == b,
    }
}

/// Whether `value`'s container depth is at most `limit` (iterative).
pub(crate) fn depth_within(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) if depth < limit => {
                stack.extend(items.iter().map(|child| (child, depth + 1)));
            }
            Value::Object(map) if depth < limit => {
                stack.extend(map.values().map(|child| (child, depth + 1)));
            }
            Value::Array(_) | Value::Object(_) => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn scalar_equality_compares_numbers_by_value() {
        assert!(json_scalar_eq(&json!(1), &json!(1.0)));
        assert!(json_scalar_eq(&json!(-2), &json!(-2.0)));
        assert!(!json_scalar_eq(&json!(1), &json!(1.5)));
        assert!(!json_scalar_eq(
            &json!(9_007_199_254_740_993u64),
            &json!(9_007_199_254_740_992.0)
        ));
        assert!(json_scalar_eq(&json!("a"), &json!("a")));
        assert!(!json_scalar_eq(&json!("1"), &json!(1)));
    }

    #[test]
    fn integers_include_integral_floats_only() {
        let n = |v: Value| v.as_number().cloned().unwrap();
        assert!(is_integer(&n(json!(1))));
        assert!(is_integer(&n(json!(1.0))));
        assert!(is_integer(&n(json!(1e300))));
        assert!(!is_integer(&n(json!(1.5))));
        assert!(!is_integer(&n(json!(-0.0))));
    }

    #[test]
    fn depth_within_counts_containers() {
        assert!(depth_within(&json!(1), 0));
        assert!(!depth_within(&json!([]), 0));
        assert!(depth_within(&json!([[]]), 2));
        assert!(!depth_within(&json!([[[]]]), 2));
    }

    #[test]
    fn the_object_rooted_check_reports_only_the_walk_when_it_fails() {
        let err = CompiledSchema::compile_object_rooted(&json!({"type": "weird"})).unwrap_err();
        assert_eq!(err.violations().len(), 1);
        assert_eq!(err.violations()[0].kind, ViolationKind::UnknownType);
        let err = CompiledSchema::compile_object_rooted(&json!({})).unwrap_err();
        assert_eq!(err.violations()[0].kind, ViolationKind::NotObjectRooted);
        assert!(CompiledSchema::compile_object_rooted(&json!({"type": "object"})).is_ok());
    }
}
