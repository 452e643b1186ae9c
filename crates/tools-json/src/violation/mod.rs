//! Violations: what is wrong, and where.

use std::fmt;
use std::ops::Deref;

use serde_json::Value;

use crate::Path;

mod message;

/// The seven JSON Schema types of the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `"object"`.
    Object,
    /// `"array"`.
    Array,
    /// `"string"`.
    String,
    /// `"number"`: any finite JSON number other than negative zero.
    Number,
    /// `"integer"`: a number with no fractional part (`1.0` counts).
    Integer,
    /// `"boolean"`.
    Boolean,
    /// `"null"`.
    Null,
}

impl JsonType {
    /// Every type, in the order the subset lists them.
    pub const ALL: [JsonType; 7] = [
        JsonType::Object,
        JsonType::Array,
        JsonType::String,
        JsonType::Number,
        JsonType::Integer,
        JsonType::Boolean,
        JsonType::Null,
    ];

    /// The schema spelling, e.g. `"integer"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Null => "null",
        }
    }

    /// Parses the schema spelling.
    pub fn from_name(name: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether the type is one of the five scalar types (which may carry `enum`/`const`).
    pub const fn is_scalar(self) -> bool {
        !matches!(self, JsonType::Object | JsonType::Array)
    }

    /// The type with its article, for messages: `"an integer"`, `"a string"`, `"null"`.
    pub const fn with_article(self) -> &'static str {
        match self {
            JsonType::Object => "an object",
            JsonType::Array => "an array",
            JsonType::String => "a string",
            JsonType::Number => "a number",
            JsonType::Integer => "an integer",
            JsonType::Boolean => "a boolean",
            JsonType::Null => "null",
        }
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which container a losslessness violation is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LosslessScope {
    /// A value checked by an unconstrained schema (`{}`).
    Value,
    /// An object whose undeclared members were checked.
    Object,
    /// An array whose elements had no `items` schema.
    Array,
}

/// What a count bound counts ([`ViolationKind::TooFew`], [`ViolationKind::TooMany`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CountUnit {
    /// Characters of a string: Unicode code points (`minLength`, `maxLength`).
    Characters,
    /// Items of an array (`minItems`, `maxItems`).
    Items,
    /// Members of an object (`minProperties`, `maxProperties`).
    Properties,
}

impl CountUnit {
    /// The unit's name for `count` of them: `"1 character"`, `"2 items"`.
    fn noun(self, count: u64) -> &'static str {
        match (self, count == 1) {
            (CountUnit::Characters, true) => "character",
            (CountUnit::Characters, false) => "characters",
            (CountUnit::Items, true) => "item",
            (CountUnit::Items, false) => "items",
            (CountUnit::Properties, true) => "property",
            (CountUnit::Properties, false) => "properties",
        }
    }
}

/// Which bound on compiling a `pattern` a pattern exceeds
/// ([`ViolationKind::PatternTooLarge`]). Each variant carries the limit in force.
///
/// A pattern is data a schema's author (or an MCP server) chooses, so compiling one is
/// bounded in time and memory: its text, its Unicode property escapes and its group nesting
/// are bounded before it is parsed, its compiled matcher while it is built, and the compile
/// work of all the patterns of one schema together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PatternBound {
    /// The pattern's text is longer than `limit` bytes (UTF-8).
    Length {
        /// The most bytes a pattern may have.
        limit: usize,
    },
    /// The pattern has more than `limit` Unicode property escapes (`\p{…}`, `\P{…}`).
    PropertyEscapes {
        /// The most property escapes a pattern may have.
        limit: usize,
    },
    /// The pattern's groups nest deeper than `limit`.
    Nesting {
        /// The deepest group nesting a pattern may have.
        limit: usize,
    },
    /// The pattern's compiled matcher would be larger than `limit` bytes.
    CompiledSize {
        /// The largest compiled matcher, in bytes.
        limit: usize,
    },
    /// The schema's patterns together need more compile work than `limit` bytes of
    /// compiled matchers: this pattern and the ones after it (in the support check's walk
    /// order) that do not fit are refused.
    SchemaTotal {
        /// The compile budget of one schema, in bytes.
        limit: usize,
    },
}

impl fmt::Display for PatternBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternBound::Length { limit } => {
                write!(f, "its text is longer than the limit of {limit} bytes")
            }
            PatternBound::PropertyEscapes { limit } => write!(
                f,
                "it has more than the limit of {limit} Unicode property escapes"
            ),
            PatternBound::Nesting { limit } => {
                write!(f, "its groups nest deeper than the limit of {limit}")
            }
            PatternBound::CompiledSize { limit } => write!(
                f,
                "its compiled matcher would exceed the limit of {limit} bytes"
            ),
            PatternBound::SchemaTotal { limit } => write!(
                f,
                "the schema's patterns together exceed the compile budget of {limit} bytes"
            ),
        }
    }
}

/// What is wrong at a [`Violation`]'s path.
///
/// The kinds fall in three families: schema problems (the support check of a raw schema,
/// such as [`ViolationKind::UnsupportedKeyword`], and the author DSL's checks in
/// `tools-schema`, such as [`ViolationKind::OpennessNotExplicit`]), the validation of a value
/// against a compiled schema, and the lossless JSON boundary. [`ViolationKind::family`] tells
/// which. The vocabulary lives here, in the lowest crate, so that every crate reports
/// violations of one type.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ViolationKind {
    // ----- support check of a raw schema -----
    /// A schema node is not a JSON object (boolean schemas included).
    NotASchemaObject,
    /// A keyword outside the subset; the path ends in the keyword.
    UnsupportedKeyword {
        /// The keyword as written.
        keyword: Box<str>,
    },
    /// A `default` or `examples` annotation that is not lossless JSON.
    AnnotationNotLossless,
    /// A `description` or `title` that is not a string.
    AnnotationNotString,
    /// A node declares both `type` and `oneOf`.
    TypeWithOneOf,
    /// A constraint keyword on a node with neither `type` nor `oneOf`.
    RequiresTypeOrOneOf,
    /// `oneOf` is not an array of at least two schemas.
    OneOfMalformed,
    /// A constraint keyword beside `oneOf`.
    BesideOneOf,
    /// `type` is an array of types.
    TypeArray,
    /// `type` is not one of the seven type names.
    UnknownType,
    /// A keyword that does not apply to the node's type.
    KeywordOnWrongType {
        /// The node's declared type.
        ty: JsonType,
    },
    /// `properties` is not an object of schemas.
    PropertiesNotObject,
    /// `required` is not an array of strings.
    RequiredMalformed,
    /// `required` names a key that `properties` does not declare.
    RequiredUndeclared {
        /// The undeclared name.
        name: Box<str>,
    },
    /// `additionalProperties` is not a boolean (schema-valued forms are not supported).
    AdditionalPropertiesNotBoolean,
    /// `enum` is not a non-empty array of values of the node's type.
    EnumInvalid {
        /// The node's declared type.
        ty: JsonType,
    },
    /// `const` is not a value of the node's type.
    ConstInvalid {
        /// The node's declared type.
        ty: JsonType,
    },
    /// `const` is not one of the `enum` values.
    ConstNotInEnum,
    /// A structured-output schema whose root is not `type: "object"`.
    NotObjectRooted,
    /// A bound keyword whose own value has the wrong shape (`minLength: -1`,
    /// `multipleOf: 0`, `uniqueItems: "yes"`); the path ends in the keyword.
    BoundMalformed {
        /// What the keyword takes, e.g. `"a non-negative integer"`.
        expected: &'static str,
    },
    /// A `pattern` that is not an ECMA-262 regular expression, or that uses a construct
    /// with no linear-time match (backreferences, lookaround, inline modifiers).
    PatternInvalid {
        /// Why, for the author.
        reason: Box<str>,
    },
    /// A `pattern` over one of the bounds on compiling patterns (its length, its property
    /// escapes, its nesting, its compiled size, or the schema's total); a foreign schema
    /// leaves it unenforced.
    PatternTooLarge {
        /// The bound it exceeds.
        bound: PatternBound,
    },
    /// A `deprecated`, `readOnly` or `writeOnly` annotation that is not a boolean.
    AnnotationNotBoolean,
    /// In a foreign schema (docs/decisions.md, entry 27): a `oneOf` left unenforced because
    /// one of its branches had to be loosened (with a looser branch, "exactly one" could
    /// refuse a value the schema accepts).
    OneOfLoosened,

    // ----- the author DSL (`tools-schema`), reported before compilation -----
    /// An author schema node that is not an object.
    NotAValueSchema,
    /// A parameter or property map that is not an object.
    PropertyMapNotObject,
    /// A property's `required` flag that is not `true`.
    RequiredNotTrue,
    /// A key outside the author DSL's vocabulary for this node; the path ends in the key.
    UnsupportedByDsl {
        /// The key as written.
        key: Box<str>,
    },
    /// An object node without an explicit boolean `additionalProperties`.
    OpennessNotExplicit,
    /// An author `oneOf` that is not an array.
    DslOneOfMalformed,
    /// An author `enum` that is not an array.
    DslEnumMalformed,
    /// A missing or unknown author `type`.
    UnknownDslType,

    // ----- value validation -----
    /// The value has the wrong JSON type.
    ExpectedType {
        /// The type the schema asks for.
        expected: JsonType,
    },
    /// A number that is negative zero (the only non-finite-like number `serde_json` holds).
    NotFiniteNumber,
    /// The value is not one of the schema's `enum` values.
    NotInEnum {
        /// The allowed values.
        allowed: Vec<Value>,
    },
    /// The value is not the schema's `const` value.
    ConstMismatch {
        /// The required value.
        expected: Value,
    },
    /// A required property is absent; the path names the property.
    MissingRequired,
    /// A property not declared by a closed object; the path names the property.
    UndeclaredProperty,
    /// Part of the value is not lossless JSON (it holds negative zero).
    NotLossless {
        /// What was checked.
        scope: LosslessScope,
    },
    /// The value matched zero or several `oneOf` branches.
    OneOfMismatch {
        /// How many branches matched.
        matched: usize,
    },
    /// A number below `minimum` (or not above `exclusiveMinimum`).
    BelowMinimum {
        /// The bound.
        limit: serde_json::Number,
        /// Whether the bound itself is excluded (`exclusiveMinimum`).
        exclusive: bool,
    },
    /// A number above `maximum` (or not below `exclusiveMaximum`).
    AboveMaximum {
        /// The bound.
        limit: serde_json::Number,
        /// Whether the bound itself is excluded (`exclusiveMaximum`).
        exclusive: bool,
    },
    /// A number that is not a whole multiple of `multipleOf`.
    NotMultipleOf {
        /// The divisor.
        divisor: serde_json::Number,
    },
    /// Fewer characters, items or properties than the minimum.
    TooFew {
        /// What was counted.
        unit: CountUnit,
        /// The minimum.
        limit: u64,
    },
    /// More characters, items or properties than the maximum.
    TooMany {
        /// What was counted.
        unit: CountUnit,
        /// The maximum.
        limit: u64,
    },
    /// A string with no match of the schema's `pattern`.
    PatternMismatch {
        /// The pattern as written in the schema.
        pattern: Box<str>,
    },
    /// Two equal items in an array with `uniqueItems: true`.
    DuplicateItems {
        /// The index of the earlier item.
        first: usize,
        /// The index of the later, equal item.
        second: usize,
    },

    // ----- the lossless boundary -----
    /// Negative zero, which JSON cannot carry losslessly.
    NegativeZero,
    /// A NaN or infinite number offered through [`crate::JsonValue::from_f64`].
    NonFiniteNumber,
    /// Containers nested deeper than the configured limit.
    TooDeep {
        /// The limit in force.
        limit: usize,
    },
}

/// The family a [`ViolationKind`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViolationFamily {
    /// Reported by the support check of a raw schema (code `UNSUPPORTED_SCHEMA`).
    Schema,
    /// Reported by validating a value against a compiled schema.
    Value,
    /// Reported by the lossless JSON boundary.
    Lossless,
}

impl ViolationKind {
    /// The family of this kind.
    pub fn family(&self) -> ViolationFamily {
        use ViolationKind::*;
        match self {
            NotASchemaObject
            | UnsupportedKeyword { .. }
            | AnnotationNotLossless
            | AnnotationNotString
            | TypeWithOneOf
            | RequiresTypeOrOneOf
            | OneOfMalformed
            | BesideOneOf
            | TypeArray
            | UnknownType
            | KeywordOnWrongType { .. }
            | PropertiesNotObject
            | RequiredMalformed
            | RequiredUndeclared { .. }
            | AdditionalPropertiesNotBoolean
            | EnumInvalid { .. }
            | ConstInvalid { .. }
            | ConstNotInEnum
            | NotObjectRooted
            | BoundMalformed { .. }
            | PatternInvalid { .. }
            | PatternTooLarge { .. }
            | AnnotationNotBoolean
            | OneOfLoosened
            | NotAValueSchema
            | PropertyMapNotObject
            | RequiredNotTrue
            | UnsupportedByDsl { .. }
            | OpennessNotExplicit
            | DslOneOfMalformed
            | DslEnumMalformed
            | UnknownDslType => ViolationFamily::Schema,
            ExpectedType { .. }
            | NotFiniteNumber
            | NotInEnum { .. }
            | ConstMismatch { .. }
            | MissingRequired
            | UndeclaredProperty
            | NotLossless { .. }
            | OneOfMismatch { .. }
            | BelowMinimum { .. }
            | AboveMaximum { .. }
            | NotMultipleOf { .. }
            | TooFew { .. }
            | TooMany { .. }
            | PatternMismatch { .. }
            | DuplicateItems { .. } => ViolationFamily::Value,
            NegativeZero | NonFiniteNumber | TooDeep { .. } => ViolationFamily::Lossless,
        }
    }

    /// A short stable name of the kind, e.g. `"unsupported_keyword"`, for logs and
    /// structural comparisons.
    pub fn name(&self) -> &'static str {
        use ViolationKind::*;
        match self {
            NotASchemaObject => "not_a_schema_object",
            UnsupportedKeyword { .. } => "unsupported_keyword",
            AnnotationNotLossless => "annotation_not_lossless",
            AnnotationNotString => "annotation_not_string",
            TypeWithOneOf => "type_with_one_of",
            RequiresTypeOrOneOf => "requires_type_or_one_of",
            OneOfMalformed => "one_of_malformed",
            BesideOneOf => "beside_one_of",
            TypeArray => "type_array",
            UnknownType => "unknown_type",
            KeywordOnWrongType { .. } => "keyword_on_wrong_type",
            PropertiesNotObject => "properties_not_object",
            RequiredMalformed => "required_malformed",
            RequiredUndeclared { .. } => "required_undeclared",
            AdditionalPropertiesNotBoolean => "additional_properties_not_boolean",
            EnumInvalid { .. } => "enum_invalid",
            ConstInvalid { .. } => "const_invalid",
            ConstNotInEnum => "const_not_in_enum",
            NotObjectRooted => "not_object_rooted",
            BoundMalformed { .. } => "bound_malformed",
            PatternInvalid { .. } => "pattern_invalid",
            PatternTooLarge { .. } => "pattern_too_large",
            AnnotationNotBoolean => "annotation_not_boolean",
            OneOfLoosened => "one_of_loosened",
            NotAValueSchema => "not_a_value_schema",
            PropertyMapNotObject => "property_map_not_object",
            RequiredNotTrue => "required_not_true",
            UnsupportedByDsl { .. } => "unsupported_by_dsl",
            OpennessNotExplicit => "openness_not_explicit",
            DslOneOfMalformed => "dsl_one_of_malformed",
            DslEnumMalformed => "dsl_enum_malformed",
            UnknownDslType => "unknown_dsl_type",
            ExpectedType { .. } => "expected_type",
            NotFiniteNumber => "not_finite_number",
            NotInEnum { .. } => "not_in_enum",
            ConstMismatch { .. } => "const_mismatch",
            MissingRequired => "missing_required",
            UndeclaredProperty => "undeclared_property",
            NotLossless { .. } => "not_lossless",
            OneOfMismatch { .. } => "one_of_mismatch",
            BelowMinimum { .. } => "below_minimum",
            AboveMaximum { .. } => "above_maximum",
            NotMultipleOf { .. } => "not_multiple_of",
            TooFew { .. } => "too_few",
            TooMany { .. } => "too_many",
            PatternMismatch { .. } => "pattern_mismatch",
            DuplicateItems { .. } => "duplicate_items",
            NegativeZero => "negative_zero",
            NonFiniteNumber => "non_finite_number",
            TooDeep { .. } => "too_deep",
        }
    }
}

/// One problem found in a schema or a value: where ([`Path`]) and what ([`ViolationKind`]).
///
/// `Display` renders `<path>: <message>`, naming the root of tool arguments `arguments`.
///
/// # Examples
///
/// ```
/// use tools_json::{JsonType, Path, Violation, ViolationKind};
///
/// let v = Violation::new(
///     Path::root("").key("count"),
///     ViolationKind::ExpectedType { expected: JsonType::Integer },
/// );
/// assert_eq!(v.to_string(), "count: must be an integer");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Where the problem is.
    pub path: Path,
    /// What the problem is.
    pub kind: ViolationKind,
}

impl Violation {
    /// A violation of `kind` at `path`.
    pub fn new(path: Path, kind: ViolationKind) -> Violation {
        Violation { path, kind }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display_name(), self.kind)
    }
}

/// Every violation found by one check, in walk order.
///
/// Derefs to a slice; `Display` joins the violations with `"; "`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// An empty list.
    pub const fn new() -> Violations {
        Violations(Vec::new())
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The violations as a vector.
    pub fn into_vec(self) -> Vec<Violation> {
        self.0
    }

    /// Appends a violation.
    pub fn push(&mut self, violation: Violation) {
        self.0.push(violation);
    }

    /// The violations as data, in order: one object each with the `path` as the message
    /// names it (`items[3].qty`), its JSON Pointer below the checked value
    /// (`/items/3/qty`, RFC 6901) and the `message`; what a `ToolError`'s detail carries.
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::json;
    /// use tools_json::{Path, Violation, ViolationKind, Violations};
    ///
    /// let mut violations = Violations::new();
    /// violations.push(Violation::new(
    ///     Path::root("").key("a/b").index(2),
    ///     ViolationKind::MissingRequired,
    /// ));
    /// let data = violations.to_json();
    /// assert_eq!(data[0]["pointer"], json!("/a~1b/2"));
    /// assert_eq!(data[0]["path"], json!("a/b[2]"));
    /// ```
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|violation| {
                    let mut entry = serde_json::Map::with_capacity(3);
                    entry.insert("path".into(), violation.path.display_name().into());
                    entry.insert("pointer".into(), violation.path.pointer().into());
                    entry.insert("message".into(), violation.kind.to_string().into());
                    Value::Object(entry)
                })
                .collect(),
        )
    }
}

impl From<Vec<Violation>> for Violations {
    fn from(violations: Vec<Violation>) -> Self {
        Violations(violations)
    }
}

impl Deref for Violations {
    type Target = [Violation];

    fn deref(&self) -> &[Violation] {
        &self.0
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}
