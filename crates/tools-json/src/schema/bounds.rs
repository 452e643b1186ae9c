//! The bound keywords of the subset (docs/decisions.md, entry 28): what each accepts, how
//! it compiles, and how a value is held to it.
//!
//! | keyword | applies to | value |
//! | --- | --- | --- |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | numbers, integers | a number |
//! | `multipleOf` | numbers, integers | a number greater than 0 |
//! | `minLength`, `maxLength` | strings (Unicode code points) | a non-negative integer |
//! | `pattern` | strings | an ECMA-262 regular expression, within the bounds on compiling patterns ([`super::pattern`]) |
//! | `minItems`, `maxItems` | arrays | a non-negative integer |
//! | `uniqueItems` | arrays | a boolean |
//! | `minProperties`, `maxProperties` | objects | a non-negative integer |
//!
//! Beside a `type`, a bound must apply to that type (`pattern` on an integer could never
//! be enforced, so it is refused). On a node without `type` or `oneOf`, bounds apply as
//! JSON Schema says: each to the values of its own type, other values pass. Beside `oneOf`
//! they are refused (write them in the branch they are about). Counts written as integral
//! floats (`2.0`) are counts.

use serde_json::{Number, Value};

use super::number::{Decimal, compare};
use super::pattern::{Pattern, PatternError, Patterns};
use crate::{CountUnit, JsonType, ViolationKind};

/// Which values a bound keyword is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Numeric,
    String,
    Array,
    Object,
}

impl Family {
    /// Whether values of `ty` are held to bounds of this family.
    pub(crate) fn admits(self, ty: JsonType) -> bool {
        matches!(
            (self, ty),
            (Family::Numeric, JsonType::Number | JsonType::Integer)
                | (Family::String, JsonType::String)
                | (Family::Array, JsonType::Array)
                | (Family::Object, JsonType::Object)
        )
    }
}

/// What a bound keyword's own value must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Number,
    Positive,
    Count,
    Flag,
    Regex,
}

/// The bound keywords, in the order they are reported and stored.
pub(crate) const KEYWORDS: [(&str, Family, Shape); 13] = [
    ("minimum", Family::Numeric, Shape::Number),
    ("maximum", Family::Numeric, Shape::Number),
    ("exclusiveMinimum", Family::Numeric, Shape::Number),
    ("exclusiveMaximum", Family::Numeric, Shape::Number),
    ("multipleOf", Family::Numeric, Shape::Positive),
    ("minLength", Family::String, Shape::Count),
    ("maxLength", Family::String, Shape::Count),
    ("pattern", Family::String, Shape::Regex),
    ("minItems", Family::Array, Shape::Count),
    ("maxItems", Family::Array, Shape::Count),
    ("uniqueItems", Family::Array, Shape::Flag),
    ("minProperties", Family::Object, Shape::Count),
    ("maxProperties", Family::Object, Shape::Count),
];

/// The bound keywords of the subset (docs/decisions.md, entry 28), in the order the support
/// check reports them and the author DSL emits them: the one list every crate reads.
pub const BOUND_KEYWORDS: [&str; 13] = {
    let mut names = [""; 13];
    let mut i = 0;
    while i < names.len() {
        names[i] = KEYWORDS[i].0;
        i += 1;
    }
    names
};

/// The index of a bound keyword in [`KEYWORDS`].
pub(crate) fn index_of(name: &str) -> Option<usize> {
    KEYWORDS.iter().position(|(k, _, _)| *k == name)
}

/// The family of the bound keyword at `index`.
pub(crate) fn family(index: usize) -> Option<Family> {
    KEYWORDS.get(index).map(|(_, family, _)| *family)
}

/// What is wrong with a bound keyword's own value, if anything. Compiles `pattern`, as
/// part of the current walk of `patterns` (which holds it to the bounds on patterns).
pub(crate) fn malformed(
    index: usize,
    value: &Value,
    patterns: &mut Patterns,
) -> Option<ViolationKind> {
    let (_, _, shape) = KEYWORDS.get(index)?;
    let number = value.as_number().filter(|n| !crate::is_negative_zero(n));
    let ok = match shape {
        Shape::Number => number.is_some(),
        Shape::Positive => number.is_some_and(|n| n.as_f64().is_some_and(|f| f > 0.0)),
        Shape::Count => count(value).is_some(),
        Shape::Flag => value.is_boolean(),
        Shape::Regex => {
            return match value.as_str() {
                None => Some(ViolationKind::BoundMalformed {
                    expected: "a string",
                }),
                Some(source) => patterns.admit(source).err().map(pattern_violation),
            };
        }
    };
    (!ok).then_some(ViolationKind::BoundMalformed {
        expected: match shape {
            Shape::Number => "a number",
            Shape::Positive => "a number greater than 0",
            Shape::Count => "a non-negative integer",
            Shape::Flag => "true or false",
            Shape::Regex => "a string",
        },
    })
}

fn pattern_violation(error: PatternError) -> ViolationKind {
    match error {
        PatternError::TooLarge(bound) => ViolationKind::PatternTooLarge { bound },
        error => ViolationKind::PatternInvalid {
            reason: error.to_string().into(),
        },
    }
}

/// A non-negative integer (integral floats count), saturating at `u64::MAX`.
fn count(value: &Value) -> Option<u64> {
    let n = value.as_number()?;
    if let Some(u) = n.as_u64() {
        return Some(u);
    }
    let f = n.as_f64()?;
    if f >= 0.0 && f.fract() == 0.0 && !crate::is_negative_zero(n) {
        // Saturating: no string, array or object is that long anyway.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Some(f as u64);
    }
    None
}

/// The compiled bounds of one node (only the keywords present).
#[derive(Debug, Default)]
pub(crate) struct Bounds {
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    multiple_of: Option<(Number, Decimal)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<(Box<str>, Pattern)>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
}

impl Bounds {
    /// Compiles the bounds of a checked node (`values` in [`KEYWORDS`] order), taking its
    /// `pattern` from `patterns` (which the check built it in); `None` when the node has
    /// none that constrain anything.
    pub(crate) fn compile(
        values: &[Option<&Value>; 13],
        patterns: &mut Patterns,
    ) -> Option<Box<Bounds>> {
        if values.iter().all(Option::is_none) {
            return None;
        }
        // Canonical, as the schema's own JSON is: `1.0` is held and reported as `1`.
        let number = |i: usize| {
            values[i]
                .and_then(Value::as_number)
                .map(crate::lossless::canonical_number)
        };
        let counted = |i: usize| values[i].and_then(count);
        let bounds = Bounds {
            minimum: number(0),
            maximum: number(1),
            exclusive_minimum: number(2),
            exclusive_maximum: number(3),
            multiple_of: number(4).map(|n| {
                let decimal = Decimal::of(&n);
                (n, decimal)
            }),
            min_length: counted(5),
            max_length: counted(6),
            pattern: values[7]
                .and_then(Value::as_str)
                .and_then(|s| patterns.pattern(s).map(|p| (s.into(), p))),
            min_items: counted(8),
            max_items: counted(9),
            unique_items: values[10] == Some(&Value::Bool(true)),
            min_properties: counted(11),
            max_properties: counted(12),
        };
        Some(Box::new(bounds))
    }

    /// Calls `fail` with every bound `value` breaks (the bounds of its own type only), in
    /// [`KEYWORDS`] order; stops early when `fail` returns `false`.
    pub(crate) fn check(&self, value: &Value, mut fail: impl FnMut(ViolationKind) -> bool) {
        match value {
            Value::Number(n) => self.check_number(n, fail),
            Value::String(s) => self.check_string(s, fail),
            Value::Array(items) => {
                let len = items.len() as u64;
                if self.min_items.is_some_and(|min| len < min)
                    && !fail(ViolationKind::TooFew {
                        unit: CountUnit::Items,
                        limit: self.min_items.unwrap_or(0),
                    })
                {
                    return;
                }
                if self.max_items.is_some_and(|max| len > max)
                    && !fail(ViolationKind::TooMany {
                        unit: CountUnit::Items,
                        limit: self.max_items.unwrap_or(0),
                    })
                {
                    return;
                }
                if self.unique_items
                    && let Some((first, second)) = super::unique::first_duplicate(items)
                {
                    fail(ViolationKind::DuplicateItems { first, second });
                }
            }
            Value::Object(map) => {
                let len = map.len() as u64;
                if self.min_properties.is_some_and(|min| len < min)
                    && !fail(ViolationKind::TooFew {
                        unit: CountUnit::Properties,
                        limit: self.min_properties.unwrap_or(0),
                    })
                {
                    return;
                }
                if let Some(max) = self.max_properties.filter(|max| len > *max) {
                    fail(ViolationKind::TooMany {
                        unit: CountUnit::Properties,
                        limit: max,
                    });
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn check_number(&self, n: &Number, mut fail: impl FnMut(ViolationKind) -> bool) {
        use std::cmp::Ordering::{Greater, Less};
        let checks = [
            (&self.minimum, Less, false),
            (&self.maximum, Greater, false),
            (&self.exclusive_minimum, Less, true),
            (&self.exclusive_maximum, Greater, true),
        ];
        for (i, (limit, outside, exclusive)) in checks.into_iter().enumerate() {
            let Some(limit) = limit else { continue };
            let order = compare(n, limit);
            let broken = order == outside || (exclusive && order.is_eq());
            if broken {
                let limit = limit.clone();
                let kind = if i % 2 == 0 {
                    ViolationKind::BelowMinimum { limit, exclusive }
                } else {
                    ViolationKind::AboveMaximum { limit, exclusive }
                };
                if !fail(kind) {
                    return;
                }
            }
        }
        if let Some((divisor, decimal)) = &self.multiple_of
            && !Decimal::of(n).is_multiple_of(*decimal)
        {
            fail(ViolationKind::NotMultipleOf {
                divisor: divisor.clone(),
            });
        }
    }

    fn check_string(&self, s: &str, mut fail: impl FnMut(ViolationKind) -> bool) {
        if self.min_length.is_some() || self.max_length.is_some() {
            // A string has at most as many code points as bytes: count only when needed.
            let bytes = s.len() as u64;
            let chars = || s.chars().count() as u64;
            if let Some(min) = self.min_length
                && (bytes < min || chars() < min)
                && !fail(ViolationKind::TooFew {
                    unit: CountUnit::Characters,
                    limit: min,
                })
            {
                return;
            }
            if let Some(max) = self.max_length
                && bytes > max
                && chars() > max
                && !fail(ViolationKind::TooMany {
                    unit: CountUnit::Characters,
                    limit: max,
                })
            {
                return;
            }
        }
        if let Some((source, pattern)) = &self.pattern
            && !pattern.is_match(s)
        {
            fail(ViolationKind::PatternMismatch {
                pattern: source.clone(),
            });
        }
    }
}
