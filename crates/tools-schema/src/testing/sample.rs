//! The sample generator behind [`super::samples`]: `sample(schema, variant)` is one valid
//! value, `None` when this variant cannot make one (a `pattern` without an example, bounds
//! that leave no value). Varying `variant` walks the alternatives: `enum` values, `oneOf`
//! branches, optional properties present or not, and the edges of every bound.

use serde_json::{Map, Number, Value};

/// Schemas nested deeper than this are not sampled.
const MAX_SAMPLE_DEPTH: usize = 32;
/// The longest string or array a sample gets when the bounds allow longer ones.
const LONGEST: u64 = 8;
/// A sample needing a longer string or array than this is not made.
const HUGE: u64 = 4096;
/// How many distinct candidates a number node offers.
const CANDIDATES: usize = 16;

pub(super) fn samples(schema: &Value) -> Result<Vec<Value>, String> {
    let alternatives = max_alternatives(schema);
    let count = (4 * alternatives.max(3)).min(64);
    let mut out = Vec::with_capacity(count);
    for variant in 0..count {
        if let Some(value) = sample(schema, variant, 0)? {
            out.push(value);
        }
    }
    Ok(out)
}

fn max_alternatives(schema: &Value) -> usize {
    let mut max = 1;
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Some(map) = node.as_object() else {
            continue;
        };
        for key in ["enum", "oneOf"] {
            if let Some(list) = map.get(key).and_then(Value::as_array) {
                max = max.max(list.len());
            }
        }
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            stack.extend(branches);
        }
        if let Some(items) = map.get("items") {
            stack.push(items);
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            stack.extend(properties.values());
        }
    }
    max
}

fn pick(list: &[Value], variant: usize) -> Option<&Value> {
    list.get(variant.checked_rem(list.len())?)
}

/// A non-negative integer keyword (integral floats count).
fn count(map: &Map<String, Value>, key: &str) -> Option<u64> {
    let n = map.get(key)?.as_number()?;
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (f >= 0.0 && f.fract() == 0.0).then_some(f as u64)
    })
}

fn sample(schema: &Value, variant: usize, depth: usize) -> Result<Option<Value>, String> {
    if depth > MAX_SAMPLE_DEPTH {
        return Err(format!(
            "the schema nests deeper than {MAX_SAMPLE_DEPTH} levels; not sampled"
        ));
    }
    let Some(map) = schema.as_object() else {
        return Ok(Some(Value::Null));
    };
    if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
        let n = branches.len();
        for attempt in 0..n {
            if let Some(branch) = branches.get((variant + attempt) % n)
                && let Some(value) = sample(branch, variant / n, depth + 1)?
            {
                return Ok(Some(value));
            }
        }
        return Ok(None);
    }
    if let Some(constant) = map.get("const") {
        return Ok(Some(constant.clone()));
    }
    if let Some(value) = map
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| pick(e, variant))
    {
        return Ok(Some(value.clone()));
    }
    let value = match map.get("type").and_then(Value::as_str) {
        None => Some(match variant % 3 {
            0 => Value::Null,
            1 => Value::from(1),
            _ => serde_json::json!({"key": ["value", true]}),
        }),
        Some("string") => string(map, variant),
        Some("number") => number(map, variant),
        Some("integer") => integer(map, variant),
        Some("boolean") => Some(Value::Bool(variant.is_multiple_of(2))),
        Some("null") => Some(Value::Null),
        Some("array") => return array(map, variant, depth),
        Some("object") => return object(map, variant, depth),
        Some(_) => Some(Value::Null),
    };
    Ok(value)
}

/// `len` characters that vary with `variant` (the tail of `sample-<variant>`, padded).
fn text(len: u64, variant: usize) -> String {
    let seed = format!("sample-{variant}");
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    match seed.len().checked_sub(len) {
        Some(skip) => seed.get(skip..).unwrap_or_default().to_owned(),
        None => seed.clone() + &"x".repeat(len - seed.len()),
    }
}

fn string(map: &Map<String, Value>, variant: usize) -> Option<Value> {
    if map.contains_key("pattern") {
        let examples: Vec<Value> = map
            .get("examples")
            .and_then(Value::as_array)
            .map(|e| e.iter().filter(|v| v.is_string()).cloned().collect())
            .unwrap_or_default();
        return match pick(&examples, variant) {
            Some(example) => Some(example.clone()),
            None => map.get("default").filter(|d| d.is_string()).cloned(),
        };
    }
    let natural = format!("sample-{variant}");
    let (min, max) = (count(map, "minLength"), count(map, "maxLength"));
    if min.is_none() && max.is_none() {
        return Some(Value::String(natural));
    }
    let min = min.unwrap_or(0);
    let max = max.unwrap_or(u64::MAX);
    if min > max || min > HUGE {
        return None;
    }
    let longest = max.min(min.max(LONGEST));
    let natural_len = u64::try_from(natural.len()).unwrap_or(u64::MAX);
    let len = [natural_len.clamp(min, longest), min, longest][variant % 3];
    Some(Value::String(text(len, variant)))
}

/// The lower and upper bound of a number node: the tighter of the inclusive and the
/// exclusive keyword on each side, and whether it is exclusive.
fn bounds(map: &Map<String, Value>) -> [Option<(&Number, bool)>; 2] {
    let get = |key: &str| map.get(key).and_then(Value::as_number);
    [
        tighter(get("minimum"), get("exclusiveMinimum"), true),
        tighter(get("maximum"), get("exclusiveMaximum"), false),
    ]
}

fn tighter<'a>(
    inclusive: Option<&'a Number>,
    exclusive: Option<&'a Number>,
    lower: bool,
) -> Option<(&'a Number, bool)> {
    match (inclusive, exclusive) {
        (Some(i), Some(e)) => {
            let (fi, fe) = (i.as_f64()?, e.as_f64()?);
            let exclusive_wins = if lower { fe >= fi } else { fe <= fi };
            Some(if exclusive_wins {
                (e, true)
            } else {
                (i, false)
            })
        }
        (Some(i), None) => Some((i, false)),
        (None, Some(e)) => Some((e, true)),
        (None, None) => None,
    }
}

/// `multipleOf` as a decimal fraction `p / q` in lowest terms.
fn fraction(map: &Map<String, Value>) -> Option<(i128, i128)> {
    let text = map.get("multipleOf")?.as_number()?.to_string();
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text.as_str(), 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: i128 = format!("{whole}{frac}").parse().ok()?;
    let scale = exponent - i32::try_from(frac.len()).ok()?;
    if !(-30..=30).contains(&scale) || digits <= 0 {
        return None;
    }
    let ten = |n: i32| 10i128.checked_pow(n.unsigned_abs());
    let (p, q) = if scale >= 0 {
        (digits.checked_mul(ten(scale)?)?, 1)
    } else {
        (digits, ten(scale)?)
    };
    let (mut a, mut b) = (p, q);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    Some((p / a, q / a))
}

/// Distinct integers in `[lower, upper]`, multiples of `step`: the edges first, then the
/// usual small values, then steps in from the edges.
fn integers(lower: Option<i128>, upper: Option<i128>, step: i128) -> Vec<i128> {
    let first =
        lower.map(|l| l.div_euclid(step) * step + if l.rem_euclid(step) == 0 { 0 } else { step });
    let last = upper.map(|u| u.div_euclid(step) * step);
    if let (Some(f), Some(l)) = (first, last)
        && f > l
    {
        return Vec::new();
    }
    let fits = |v: i128| first.is_none_or(|f| v >= f) && last.is_none_or(|l| v <= l);
    let mut out: Vec<i128> = Vec::new();
    let push = |v: Option<i128>, out: &mut Vec<i128>| {
        if let Some(v) = v
            && fits(v)
            && !out.contains(&v)
            && out.len() < CANDIDATES
        {
            out.push(v);
        }
    };
    push(first, &mut out);
    push(last, &mut out);
    for usual in [0, 1, 42] {
        push(Some(usual * step), &mut out);
    }
    for k in 1..i128::try_from(CANDIDATES).unwrap_or(16) {
        push(first.map(|f| f.saturating_add(k * step)), &mut out);
        push(last.map(|l| l.saturating_sub(k * step)), &mut out);
        if first.is_none() && last.is_none() {
            push(Some((k + 1) * step), &mut out);
        }
    }
    out
}

fn int_value(v: i128) -> Option<Value> {
    i64::try_from(v)
        .map(Value::from)
        .ok()
        .or_else(|| u64::try_from(v).ok().map(Value::from))
}

/// A finite float as JSON, integral values as integers (so equal values are equal JSON).
fn float_value(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

fn integer(map: &Map<String, Value>, variant: usize) -> Option<Value> {
    let [lower, upper] = bounds(map);
    let exact = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    #[allow(clippy::cast_possible_truncation)]
    let lower = lower.map(|(n, exclusive)| match exact(n) {
        Some(v) => v + i128::from(exclusive),
        None => {
            let f = n.as_f64().unwrap_or(0.0);
            if exclusive {
                f.floor() as i128 + 1
            } else {
                f.ceil() as i128
            }
        }
    });
    #[allow(clippy::cast_possible_truncation)]
    let upper = upper.map(|(n, exclusive)| match exact(n) {
        Some(v) => v - i128::from(exclusive),
        None => {
            let f = n.as_f64().unwrap_or(0.0);
            if exclusive {
                f.ceil() as i128 - 1
            } else {
                f.floor() as i128
            }
        }
    });
    let step = match map.get("multipleOf") {
        None => 1,
        Some(_) => fraction(map)?.0,
    };
    let candidates: Vec<Value> = integers(lower, upper, step)
        .into_iter()
        .filter_map(int_value)
        .collect();
    pick(&candidates, variant).cloned()
}

fn number(map: &Map<String, Value>, variant: usize) -> Option<Value> {
    let [lower, upper] = bounds(map);
    let lower = lower.and_then(|(n, e)| Some((n.as_f64()?, e)));
    let upper = upper.and_then(|(n, e)| Some((n.as_f64()?, e)));
    let inside = |f: f64| {
        lower.is_none_or(|(l, e)| if e { f > l } else { f >= l })
            && upper.is_none_or(|(u, e)| if e { f < u } else { f <= u })
    };
    let mut floats: Vec<f64> = Vec::new();
    if map.contains_key("multipleOf") {
        let (p, q) = fraction(map)?;
        let step = (p as f64) / (q as f64);
        let decimals = usize::try_from(q.ilog10()).unwrap_or(0);
        #[allow(clippy::cast_possible_truncation)]
        let n = |f: f64, up: bool| {
            (if up {
                (f / step).ceil()
            } else {
                (f / step).floor()
            }) as i128
        };
        let lo = lower.map(|(l, _)| n(l, true));
        let hi = upper.map(|(u, _)| n(u, false));
        for k in integers(lo.map(|v| v - 1), hi.map(|v| v + 1), 1) {
            let value = format!("{:.decimals$}", (k as f64) * step);
            if let Ok(f) = value.parse::<f64>() {
                floats.push(f);
            }
        }
    } else {
        let offsets = [0.5, 1.0, 2.25, 3.5, 4.75, 8.0, 16.5];
        let fractions = [0.5, 0.25, 0.75, 0.125, 0.875];
        match (lower, upper) {
            (Some((l, _)), Some((u, _))) => {
                floats.extend([l, u]);
                floats.extend(fractions.iter().map(|f| l + (u - l) * f));
            }
            (Some((l, _)), None) => {
                floats.push(l);
                floats.extend(offsets.iter().map(|d| l + d));
            }
            (None, Some((u, _))) => {
                floats.push(u);
                floats.extend(offsets.iter().map(|d| u - d));
            }
            (None, None) => floats.extend(offsets),
        }
    }
    let mut candidates: Vec<Value> = Vec::new();
    for f in floats.into_iter().filter(|f| f.is_finite() && inside(*f)) {
        if let Some(v) = float_value(f)
            && !candidates.contains(&v)
        {
            candidates.push(v);
        }
    }
    pick(&candidates, variant).cloned()
}

fn array(map: &Map<String, Value>, variant: usize, depth: usize) -> Result<Option<Value>, String> {
    let natural = 1 + u64::try_from(variant % 2).unwrap_or(0);
    let (min, max) = (count(map, "minItems"), count(map, "maxItems"));
    let wanted = if min.is_none() && max.is_none() {
        natural
    } else {
        let min = min.unwrap_or(0);
        let max = max.unwrap_or(u64::MAX);
        if min > max || min > HUGE {
            return Ok(None);
        }
        let longest = max.min(min.max(LONGEST));
        [natural.clamp(min, longest), min, longest][variant % 3]
    };
    let unique = map.get("uniqueItems") == Some(&Value::Bool(true));
    let wanted = usize::try_from(wanted).unwrap_or(usize::MAX);
    let mut items: Vec<Value> = Vec::with_capacity(wanted);
    let attempts = wanted.saturating_mul(8).saturating_add(8);
    for i in 0..attempts {
        if items.len() >= wanted {
            break;
        }
        let item = match map.get("items") {
            Some(schema) => sample(schema, variant + i, depth + 1)?,
            None => Some(match i {
                0 => Value::from(1),
                1 => Value::from("x"),
                n => Value::from(n),
            }),
        };
        let Some(item) = item else {
            continue;
        };
        if unique && items.iter().any(|other| tools_json::eq_deep(other, &item)) {
            continue;
        }
        items.push(item);
    }
    let least = usize::try_from(min.unwrap_or(0)).unwrap_or(usize::MAX);
    if items.len() < least {
        return Ok(None);
    }
    Ok(Some(Value::Array(items)))
}

fn object(map: &Map<String, Value>, variant: usize, depth: usize) -> Result<Option<Value>, String> {
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let properties = map
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let open = map.get("additionalProperties") != Some(&Value::Bool(false));
    let mut out = Map::new();
    let mut left_out = Vec::new();
    for (name, property) in properties {
        let is_required = required.contains(&name.as_str());
        if variant % 2 == 1 || is_required {
            match sample(property, variant, depth + 1)? {
                Some(value) => {
                    out.insert(name.clone(), value);
                }
                None if is_required => return Ok(None),
                None => {}
            }
        } else {
            left_out.push((name, property));
        }
    }
    if open && variant % 4 == 3 && !out.contains_key("extra_key") {
        out.insert("extra_key".into(), Value::from("extra"));
    }
    if let Some(max) = count(map, "maxProperties") {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        while out.len() > max {
            let optional = out
                .keys()
                .rev()
                .find(|k| !required.contains(&k.as_str()))
                .cloned();
            match optional {
                Some(key) => {
                    out.shift_remove(&key);
                }
                None => return Ok(None),
            }
        }
    }
    let min = usize::try_from(count(map, "minProperties").unwrap_or(0)).unwrap_or(usize::MAX);
    for (name, property) in left_out {
        if out.len() >= min {
            break;
        }
        if let Some(value) = sample(property, variant, depth + 1)? {
            out.insert(name.clone(), value);
        }
    }
    let mut extra = 0;
    while open && out.len() < min && extra <= min {
        let key = format!("extra_key_{extra}");
        if !properties.contains_key(&key) {
            out.insert(key, Value::from("extra"));
        }
        extra += 1;
    }
    if out.len() < min {
        return Ok(None);
    }
    Ok(Some(Value::Object(out)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn all(schema: Value) -> Vec<Value> {
        samples(&schema).unwrap()
    }

    #[test]
    fn numbers_probe_their_edges() {
        let u8s = all(json!({"type": "integer", "minimum": 0, "maximum": 255}));
        assert!(u8s.contains(&json!(0)) && u8s.contains(&json!(255)));
        assert!(
            u8s.iter()
                .all(|v| v.as_i64().is_some_and(|n| (0..=255).contains(&n)))
        );
        let open = all(json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}));
        assert!(open.contains(&json!(1)) && open.contains(&json!(9)));
        assert!(
            open.iter()
                .all(|v| v.as_i64().is_some_and(|n| (1..=9).contains(&n)))
        );
        let steps = all(json!({"type": "integer", "minimum": 1, "multipleOf": 2.5}));
        assert!(
            steps
                .iter()
                .all(|v| v.as_i64().is_some_and(|n| n >= 5 && n % 5 == 0))
        );
        let floats = all(json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1}));
        assert!(floats.contains(&json!(1)));
        assert!(
            floats
                .iter()
                .all(|v| v.as_f64().is_some_and(|f| f > 0.0 && f <= 1.0))
        );
        let tenths = all(json!({"type": "number", "minimum": 0.3, "multipleOf": 0.1}));
        assert!(tenths.contains(&json!(0.3)));
        assert!(all(json!({"type": "integer", "minimum": 3, "maximum": 2})).is_empty());
        assert_eq!(
            all(json!({"type": "integer"}))[..3],
            [json!(0), json!(1), json!(42)]
        );
    }

    #[test]
    fn strings_arrays_and_objects_respect_their_counts() {
        let strings = all(json!({"type": "string", "minLength": 2, "maxLength": 3}));
        assert!(
            strings
                .iter()
                .all(|s| s.as_str().is_some_and(|s| (2..=3).contains(&s.len())))
        );
        assert!(
            strings
                .iter()
                .any(|s| s.as_str().is_some_and(|s| s.len() == 2))
        );
        let chars = all(json!({"type": "string", "minLength": 1, "maxLength": 1}));
        assert!(
            chars
                .iter()
                .all(|s| s.as_str().is_some_and(|s| s.chars().count() == 1))
        );
        let sets = all(json!({
            "type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": true,
            "items": {"type": "integer", "minimum": 0, "maximum": 2}
        }));
        assert!(!sets.is_empty());
        for set in &sets {
            let items = set.as_array().unwrap();
            assert!((2..=3).contains(&items.len()), "{set}");
            assert!(
                items
                    .iter()
                    .enumerate()
                    .all(|(i, a)| items[..i].iter().all(|b| a != b))
            );
        }
        assert!(all(json!({"type": "array", "minItems": 3, "uniqueItems": true, "items": {"type": "boolean"}})).is_empty());
        let objects = all(json!({
            "type": "object", "additionalProperties": true, "minProperties": 2, "maxProperties": 2,
            "properties": {"a": {"type": "string"}}
        }));
        assert!(
            objects
                .iter()
                .all(|o| o.as_object().is_some_and(|o| o.len() == 2))
        );
    }

    #[test]
    fn patterns_use_examples_or_are_left_out() {
        let with = all(json!({"type": "string", "pattern": "^a+$", "examples": ["a", "aa", 3]}));
        assert!(with.iter().all(|s| s == "a" || s == "aa"));
        let object = all(json!({
            "type": "object", "additionalProperties": false,
            "properties": {"id": {"type": "string", "pattern": "^x"}, "n": {"type": "integer"}}
        }));
        assert!(!object.is_empty());
        assert!(object.iter().all(|o| o.get("id").is_none()));
        let required = json!({
            "type": "object", "additionalProperties": false, "required": ["id"],
            "properties": {"id": {"type": "string", "pattern": "^x"}}
        });
        assert!(all(required).is_empty());
    }
}
