//! The bound keywords of the builders (docs/decisions.md, entry 28): numeric bounds, string
//! lengths and `pattern`, item and property counts. Each is enforced by `tools-json`.

use serde_json::Value;

use super::{ArraySchema, IntegerSchema, NumberSchema, ObjectSchema, StringSchema, number_value};

/// Adds the numeric bound methods to a number or integer builder.
macro_rules! numeric_bounds {
    ($ty:ident, $num:ty, $to_json:expr) => {
        impl $ty {
            /// The smallest allowed value, inclusive (`minimum`).
            #[must_use]
            pub fn minimum(mut self, value: $num) -> Self {
                self.set("minimum", $to_json(value));
                self
            }

            /// The largest allowed value, inclusive (`maximum`).
            #[must_use]
            pub fn maximum(mut self, value: $num) -> Self {
                self.set("maximum", $to_json(value));
                self
            }

            /// A value every allowed value must be greater than (`exclusiveMinimum`).
            #[must_use]
            pub fn exclusive_minimum(mut self, value: $num) -> Self {
                self.set("exclusiveMinimum", $to_json(value));
                self
            }

            /// A value every allowed value must be less than (`exclusiveMaximum`).
            #[must_use]
            pub fn exclusive_maximum(mut self, value: $num) -> Self {
                self.set("exclusiveMaximum", $to_json(value));
                self
            }

            /// Allowed values are whole multiples of `value`, which must be positive
            /// (`multipleOf`; decided in decimal, see `tools-json`).
            #[must_use]
            pub fn multiple_of(mut self, value: $num) -> Self {
                self.set("multipleOf", $to_json(value));
                self
            }

            /// The allowed range, written as a Rust range: `1..=500` sets `minimum` and
            /// `maximum`, `0..10` sets `minimum` and `exclusiveMaximum`, `1..` only
            /// `minimum`.
            #[must_use]
            pub fn range(mut self, range: impl std::ops::RangeBounds<$num>) -> Self {
                use std::ops::Bound;
                match range.start_bound() {
                    Bound::Included(v) => self.set("minimum", $to_json(*v)),
                    Bound::Excluded(v) => self.set("exclusiveMinimum", $to_json(*v)),
                    Bound::Unbounded => {}
                }
                match range.end_bound() {
                    Bound::Included(v) => self.set("maximum", $to_json(*v)),
                    Bound::Excluded(v) => self.set("exclusiveMaximum", $to_json(*v)),
                    Bound::Unbounded => {}
                }
                self
            }
        }
    };
}

numeric_bounds!(NumberSchema, f64, number_value);
numeric_bounds!(IntegerSchema, i64, Value::from);

impl IntegerSchema {
    /// The largest allowed value, inclusive, for bounds above `i64::MAX` (`maximum`; the
    /// range of `u64` is `minimum(0).maximum_u64(u64::MAX)`).
    #[must_use]
    pub fn maximum_u64(mut self, value: u64) -> Self {
        self.set("maximum", Value::from(value));
        self
    }
}

impl StringSchema {
    /// The fewest characters (Unicode code points) allowed (`minLength`).
    #[must_use]
    pub fn min_length(mut self, length: u64) -> Self {
        self.set("minLength", Value::from(length));
        self
    }

    /// The most characters (Unicode code points) allowed (`maxLength`).
    #[must_use]
    pub fn max_length(mut self, length: u64) -> Self {
        self.set("maxLength", Value::from(length));
        self
    }

    /// An ECMA-262 regular expression the value must contain a match of (`pattern`;
    /// unanchored, as JSON Schema says: write `^…$` to match the whole value).
    #[must_use]
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.set("pattern", Value::String(pattern.into()));
        self
    }

    /// The `format` annotation (`"date-time"`, `"uri"`, …): shown to the model, never
    /// enforced.
    #[must_use]
    pub fn format(mut self, format: impl Into<String>) -> Self {
        self.set("format", Value::String(format.into()));
        self
    }
}

impl ArraySchema {
    /// The fewest items allowed (`minItems`).
    #[must_use]
    pub fn min_items(mut self, count: u64) -> Self {
        self.set("minItems", Value::from(count));
        self
    }

    /// The most items allowed (`maxItems`).
    #[must_use]
    pub fn max_items(mut self, count: u64) -> Self {
        self.set("maxItems", Value::from(count));
        self
    }

    /// Whether items must be pairwise distinct (`uniqueItems`; numbers compare by value,
    /// objects ignore key order).
    #[must_use]
    pub fn unique_items(mut self, unique: bool) -> Self {
        self.set("uniqueItems", Value::Bool(unique));
        self
    }
}

impl ObjectSchema {
    /// The fewest members allowed (`minProperties`).
    #[must_use]
    pub fn min_properties(mut self, count: u64) -> Self {
        self.set("minProperties", Value::from(count));
        self
    }

    /// The most members allowed (`maxProperties`).
    #[must_use]
    pub fn max_properties(mut self, count: u64) -> Self {
        self.set("maxProperties", Value::from(count));
        self
    }
}
