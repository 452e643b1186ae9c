//! The runtime half of the derives: what the generated code calls (public as
//! `tools_schema::__private`, not a stable API).
//!
//! Bounds written on a field are merged with the bounds its type already has by keeping
//! the tighter one (an `u8` field with `#[tool(range = 1..=500)]` keeps `maximum: 255`),
//! so a schema never admits a value the type cannot hold. Each bound function takes a
//! `PhantomData` of the field's type only to check, at compile time, that the bound applies
//! to it.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::marker::PhantomData;

use serde_json::{Map, Number, Value};

use super::{ArrayBounds, Formatted, NumericBounds, ObjectBounds, StringBounds};
use crate::Schema;

pub use serde::de::DeserializeOwned;

/// The type marker the bound functions check.
pub fn ty<T: ?Sized>() -> PhantomData<T> {
    PhantomData
}

/// Whether an author spec admits `null`: a `null` or `json` node, or a `oneOf` with a
/// branch that does.
pub(crate) fn admits_null(spec: &Value) -> bool {
    let mut stack = vec![spec];
    while let Some(node) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        if matches!(
            map.get("type").and_then(Value::as_str),
            Some("null" | "json")
        ) {
            return true;
        }
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            stack.extend(branches);
        }
    }
    false
}

/// `schema` or `null`; `schema` itself when it already admits `null`.
pub fn nullable(schema: Schema) -> Schema {
    if admits_null(schema.as_json()) {
        schema
    } else {
        Schema::one_of([schema, Schema::null().into()]).into()
    }
}

thread_local! {
    /// The derived types whose schema is being built on this thread, outermost first.
    static BUILDING: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// Proof that a derived type's schema is being built; dropping it ends the build.
#[derive(Debug)]
pub struct Building(());

impl Drop for Building {
    fn drop(&mut self) {
        BUILDING.with(|stack| {
            stack.borrow_mut().pop();
        });
    }
}

/// Starts building the schema of the type named `name`, or returns the schema that
/// reports a recursive type (the subset has no references, so a type that contains itself
/// has no finite schema; compiling it fails with the type's name in the violation).
///
/// # Errors
///
/// The reporting schema, when `name` is already being built on this thread.
pub fn enter(name: &'static str) -> Result<Building, Schema> {
    BUILDING.with(|stack| {
        let mut stack = stack.borrow_mut();
        if stack.contains(&name) {
            let key = format!("recursive type `{name}` (the schema subset has no references)");
            let mut spec = Map::new();
            spec.insert("type".into(), Value::String("json".into()));
            spec.insert(key, Value::Bool(true));
            return Err(Schema::from_json(Value::Object(spec)));
        }
        stack.push(name);
        Ok(Building(()))
    })
}

/// Sets the `description` annotation when there is one.
pub fn describe(schema: Schema, description: Option<&str>) -> Schema {
    match description {
        Some(text) => schema.describe(text),
        None => schema,
    }
}

/// Sets the `examples` annotation when there are examples.
pub fn examples(mut schema: Schema, examples: Vec<Value>) -> Schema {
    if !examples.is_empty() {
        schema.set("examples", Value::Array(examples));
    }
    schema
}

/// One example value (`null` when it does not serialize to JSON).
pub fn example<E: serde::Serialize + ?Sized>(value: &E) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The string enum of an enum's unit variant names.
pub fn names(names: &[&str]) -> Schema {
    Schema::string().enum_values(names.iter().copied()).into()
}

/// The schema of a tag's one value.
pub fn tag(name: &str) -> Schema {
    Schema::string().constant(name).into()
}

/// A closed object whose one key, `key`, is required: an externally tagged variant.
pub fn wrapped(key: &str, inner: Schema) -> Schema {
    Schema::closed_object().required(key, inner).into()
}

/// `oneOf` the branches; one branch is itself (`oneOf` needs two).
pub fn one_of(mut branches: Vec<Schema>) -> Schema {
    if branches.len() == 1
        && let Some(branch) = branches.pop()
    {
        return branch;
    }
    Schema::one_of(branches).into()
}

/// A bound value: an integer or a float (NaN and infinities become `null`, which
/// compilation reports).
pub trait BoundNumber {
    /// The JSON number.
    fn into_bound(self) -> Value;
}

macro_rules! bound_numbers {
    ($($ty:ty),*) => {$(
        impl BoundNumber for $ty {
            fn into_bound(self) -> Value {
                Value::from(self)
            }
        }
    )*};
}

bound_numbers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl BoundNumber for f64 {
    fn into_bound(self) -> Value {
        Number::from_f64(self).map_or(Value::Null, Value::Number)
    }
}

impl BoundNumber for f32 {
    fn into_bound(self) -> Value {
        f64::from(self).into_bound()
    }
}

/// A length or a count.
pub trait BoundCount {
    /// The count.
    fn into_count(self) -> u64;
}

macro_rules! bound_counts {
    ($($ty:ty),*) => {$(
        impl BoundCount for $ty {
            fn into_count(self) -> u64 {
                u64::try_from(self).unwrap_or(u64::MAX)
            }
        }
    )*};
}

bound_counts!(u8, u16, u32, u64, usize);

/// Two JSON numbers in order (exact for integers).
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    let (Value::Number(a), Value::Number(b)) = (a, b) else {
        return None;
    };
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// Sets `key` to `value`, or keeps the existing value when it is tighter (`keep` is the
/// ordering of existing against new under which the existing one wins).
fn tighten(schema: &mut Schema, key: &str, value: Value, keep: Ordering) {
    let existing = schema.as_json().get(key);
    if let Some(existing) = existing
        && compare(existing, &value).is_some_and(|o| o == keep || o == Ordering::Equal)
    {
        return;
    }
    schema.set(key, value);
}

/// Drops the inclusive or the exclusive bound on one side when the other implies it.
fn prune(schema: &mut Schema, inclusive: &str, exclusive: &str, lower: bool) {
    let (Some(i), Some(e)) = (
        schema.as_json().get(inclusive),
        schema.as_json().get(exclusive),
    ) else {
        return;
    };
    // Lower side: `x > e` implies `x >= i` when `e >= i`. Upper side: mirrored.
    let exclusive_wins = match compare(e, i) {
        Some(Ordering::Equal) => true,
        Some(Ordering::Greater) => lower,
        Some(Ordering::Less) => !lower,
        None => return,
    };
    let drop = if exclusive_wins { inclusive } else { exclusive };
    schema.remove(drop);
}

fn numeric(mut schema: Schema, key: &str, value: Value) -> Schema {
    match key {
        "minimum" | "exclusiveMinimum" => tighten(&mut schema, key, value, Ordering::Greater),
        "maximum" | "exclusiveMaximum" => tighten(&mut schema, key, value, Ordering::Less),
        _ => schema.set(key, value),
    }
    prune(&mut schema, "minimum", "exclusiveMinimum", true);
    prune(&mut schema, "maximum", "exclusiveMaximum", false);
    schema
}

fn count(mut schema: Schema, key: &str, value: u64, lower: bool) -> Schema {
    let keep = if lower {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    tighten(&mut schema, key, Value::from(value), keep);
    schema
}

/// `minimum`.
pub fn minimum<T: NumericBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundNumber,
) -> Schema {
    numeric(s, "minimum", v.into_bound())
}

/// `maximum`.
pub fn maximum<T: NumericBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundNumber,
) -> Schema {
    numeric(s, "maximum", v.into_bound())
}

/// `exclusiveMinimum`.
pub fn exclusive_minimum<T: NumericBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundNumber,
) -> Schema {
    numeric(s, "exclusiveMinimum", v.into_bound())
}

/// `exclusiveMaximum`.
pub fn exclusive_maximum<T: NumericBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundNumber,
) -> Schema {
    numeric(s, "exclusiveMaximum", v.into_bound())
}

/// `multipleOf`.
pub fn multiple_of<T: NumericBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundNumber,
) -> Schema {
    numeric(s, "multipleOf", v.into_bound())
}

/// `minLength`.
pub fn min_length<T: StringBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "minLength", v.into_count(), true)
}

/// `maxLength`.
pub fn max_length<T: StringBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "maxLength", v.into_count(), false)
}

/// `pattern`.
pub fn pattern<T: StringBounds + ?Sized>(
    _: PhantomData<T>,
    mut s: Schema,
    v: impl Into<String>,
) -> Schema {
    s.set("pattern", Value::String(v.into()));
    s
}

/// `format`.
pub fn format<T: Formatted + ?Sized>(
    _: PhantomData<T>,
    mut s: Schema,
    v: impl Into<String>,
) -> Schema {
    s.set("format", Value::String(v.into()));
    s
}

/// `minItems`.
pub fn min_items<T: ArrayBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "minItems", v.into_count(), true)
}

/// `maxItems`.
pub fn max_items<T: ArrayBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "maxItems", v.into_count(), false)
}

/// `uniqueItems` (`false` does not lift the uniqueness of a set).
pub fn unique_items<T: ArrayBounds + ?Sized>(_: PhantomData<T>, mut s: Schema, v: bool) -> Schema {
    if v {
        s.set("uniqueItems", Value::Bool(true));
    }
    s
}

/// `minProperties`.
pub fn min_properties<T: ObjectBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "minProperties", v.into_count(), true)
}

/// `maxProperties`.
pub fn max_properties<T: ObjectBounds + ?Sized>(
    _: PhantomData<T>,
    s: Schema,
    v: impl BoundCount,
) -> Schema {
    count(s, "maxProperties", v.into_count(), false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolSchema;

    #[test]
    fn field_bounds_never_widen_the_type() {
        let s = maximum(ty::<u8>(), u8::tool_schema(), 500);
        let s = minimum(ty::<u8>(), s, 1);
        assert_eq!(
            s.as_json(),
            &json!({"type": "integer", "minimum": 1, "maximum": 255})
        );
        let s = exclusive_maximum(ty::<u8>(), u8::tool_schema(), 10);
        assert_eq!(
            s.as_json(),
            &json!({"type": "integer", "minimum": 0, "exclusiveMaximum": 10})
        );
        let s = exclusive_minimum(ty::<u8>(), u8::tool_schema(), 0);
        assert_eq!(
            s.as_json(),
            &json!({"type": "integer", "maximum": 255, "exclusiveMinimum": 0})
        );
        let s = exclusive_minimum(ty::<u8>(), u8::tool_schema(), -5);
        assert_eq!(
            s.as_json(),
            &json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        let s = minimum(ty::<f64>(), f64::tool_schema(), 0.5);
        assert_eq!(s.as_json(), &json!({"type": "number", "minimum": 0.5}));
        let s = max_length(ty::<char>(), char::tool_schema(), 4u64);
        assert_eq!(s.as_json()["maxLength"], json!(1));
        let s = unique_items(ty::<Vec<u8>>(), Vec::<u8>::tool_schema(), false);
        assert!(s.as_json().get("uniqueItems").is_none());
    }

    #[test]
    fn recursion_is_reported_not_overflowed() {
        let outer = enter("T");
        assert!(outer.is_ok());
        let report = enter("T").unwrap_err();
        let err = report.compile().err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("recursive type `T`")));
        drop(outer);
        assert!(enter("T").is_ok());
    }

    #[test]
    fn one_branch_is_no_one_of() {
        assert_eq!(one_of(vec![tag("a")]), tag("a"));
        assert_eq!(
            one_of(vec![tag("a"), tag("b")]).as_json()["oneOf"],
            json!([{"type": "string", "const": "a"}, {"type": "string", "const": "b"}])
        );
    }
}
