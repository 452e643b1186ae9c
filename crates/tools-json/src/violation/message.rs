//! The messages of violations: `Display` for [`ViolationKind`] (the text after `<path>: `).

use std::fmt;

use serde_json::Value;

use super::{JsonType, LosslessScope, ViolationKind};

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ViolationKind::*;
        match self {
            NotASchemaObject => f.write_str("a schema must be a JSON object"),
            UnsupportedKeyword { keyword } => write!(
                f,
                "keyword {keyword:?} is outside the supported subset (type, oneOf, properties, required, additionalProperties, items, enum, const, the bounds minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, pattern, minItems, maxItems, uniqueItems, minProperties, maxProperties; annotations description, title, default, examples, format, deprecated, readOnly, writeOnly, $schema, $id, $comment)"
            ),
            AnnotationNotLossless => f.write_str("annotation must be lossless JSON"),
            AnnotationNotString => f.write_str("annotation must be a string"),
            TypeWithOneOf => f.write_str("declares both type and oneOf; use one of them"),
            RequiresTypeOrOneOf => f.write_str("needs a type or oneOf beside it"),
            OneOfMalformed => f.write_str("oneOf must be an array of at least two schemas"),
            BesideOneOf => f.write_str("cannot stand beside oneOf"),
            TypeArray => {
                f.write_str("type arrays are not supported; use one type string, or oneOf")
            }
            UnknownType => f.write_str(
                "type must be one of object, array, string, number, integer, boolean, null",
            ),
            KeywordOnWrongType { ty } => write!(f, "does not apply to type {:?}", ty.as_str()),
            PropertiesNotObject => {
                f.write_str("properties must be an object mapping names to schemas")
            }
            RequiredMalformed => f.write_str("required must be an array of strings"),
            RequiredUndeclared { name } => {
                write!(
                    f,
                    "required names {name:?}, which properties does not declare"
                )
            }
            AdditionalPropertiesNotBoolean => {
                f.write_str("additionalProperties must be true or false")
            }
            EnumInvalid { ty } => write!(f, "enum must be a non-empty array of {ty} values"),
            ConstInvalid { ty } => write!(f, "const must be {} value", article_for_value(*ty)),
            ConstNotInEnum => f.write_str("const must be one of the enum values"),
            NotObjectRooted => {
                f.write_str("structured output must be object-rooted (type \"object\")")
            }
            BoundMalformed { expected } => write!(f, "must be {expected}"),
            PatternInvalid { reason } => write!(f, "pattern {reason}"),
            PatternTooLarge { bound } => write!(f, "pattern is too large to compile: {bound}"),
            AnnotationNotBoolean => f.write_str("annotation must be true or false"),
            OneOfLoosened => f.write_str(
                "is not enforced: a branch could not be enforced in full, and exactly-one over looser branches could refuse valid values",
            ),
            NotAValueSchema => f.write_str("a value schema must be a JSON object"),
            PropertyMapNotObject => {
                f.write_str("must be an object mapping property names to value schemas")
            }
            RequiredNotTrue => f.write_str("required must be true when present"),
            UnsupportedByDsl { key } => {
                write!(f, "key {key:?} is not part of the value schema DSL for this node")
            }
            OpennessNotExplicit => f.write_str(
                "an object schema must set additionalProperties explicitly to true or false",
            ),
            DslOneOfMalformed => f.write_str("oneOf must be an array of at least two value schemas"),
            DslEnumMalformed => f.write_str("enum must be a non-empty array of scalar values"),
            UnknownDslType => f.write_str(
                "type must be string, number, integer, boolean, null, array, object or json (or use oneOf)",
            ),
            ExpectedType { expected } => write!(f, "must be {}", expected.with_article()),
            NotFiniteNumber => {
                f.write_str("must be a finite JSON number (negative zero is not allowed)")
            }
            NotInEnum { allowed } => {
                write!(f, "must be one of {}", Value::Array(allowed.clone()))
            }
            ConstMismatch { expected } => write!(f, "must be {expected}"),
            MissingRequired => f.write_str("required property is missing"),
            UndeclaredProperty => {
                f.write_str("is not a declared property (additionalProperties is false)")
            }
            NotLossless { scope } => match scope {
                LosslessScope::Value => f.write_str("must be a lossless JSON value"),
                LosslessScope::Object => f.write_str("must be a lossless JSON object"),
                LosslessScope::Array => f.write_str("must be a dense lossless JSON array"),
            },
            OneOfMismatch { matched } => {
                write!(
                    f,
                    "must match exactly one oneOf branch, but matched {matched}"
                )
            }
            BelowMinimum { limit, exclusive } => {
                write!(f, "must be {} {limit}", if *exclusive { ">" } else { ">=" })
            }
            AboveMaximum { limit, exclusive } => {
                write!(f, "must be {} {limit}", if *exclusive { "<" } else { "<=" })
            }
            NotMultipleOf { divisor } => write!(f, "must be a multiple of {divisor}"),
            TooFew { unit, limit } => {
                write!(f, "must have at least {limit} {}", unit.noun(*limit))
            }
            TooMany { unit, limit } => {
                write!(f, "must have at most {limit} {}", unit.noun(*limit))
            }
            PatternMismatch { pattern } => write!(f, "must match the pattern {pattern:?}"),
            DuplicateItems { first, second } => write!(
                f,
                "must have unique items, but items {first} and {second} are equal"
            ),
            NegativeZero => f.write_str("negative zero cannot be carried losslessly by JSON"),
            NonFiniteNumber => f.write_str("NaN and infinities are not JSON numbers"),
            TooDeep { limit } => write!(f, "nesting exceeds the depth limit of {limit}"),
        }
    }
}

fn article_for_value(ty: JsonType) -> &'static str {
    match ty {
        JsonType::Object => "an object",
        JsonType::Array => "an array",
        JsonType::String => "a string",
        JsonType::Number => "a number",
        JsonType::Integer => "an integer",
        JsonType::Boolean => "a boolean",
        JsonType::Null => "a null",
    }
}
