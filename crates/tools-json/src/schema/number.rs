//! Exact arithmetic on JSON numbers for the numeric bounds.
//!
//! `serde_json` holds a number as an `i64`, a `u64` or an `f64`. Comparisons
//! (`minimum`, `maximum` and their exclusive forms) are exact across the three: an integer
//! is never rounded to a float to be compared (9007199254740993 is greater than the float
//! 9007199254740992.0).
//!
//! `multipleOf` is decided in decimal: each number is taken as the shortest decimal that
//! reads back as the same value (the digits its JSON text shows, as `ryu` prints them), so
//! `0.0075` is a multiple of `0.0001` although neither is exact in binary, and integers of
//! any size `serde_json` carries are exact. The test is modular arithmetic on the decimal
//! digits (at most 20 of them), never a floating-point division, so `1e308` against
//! `0.123456789` is decided, not overflowed.

use std::cmp::Ordering;

use serde_json::Number;

/// 2^127 as a float: integral floats below it in magnitude convert to `i128` exactly.
const TWO_POW_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

/// Compares two JSON numbers exactly. NaN cannot occur (`serde_json` holds none); it would
/// compare equal.
pub(crate) fn compare(a: &Number, b: &Number) -> Ordering {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => int_vs_float(x, b.as_f64().unwrap_or(0.0)),
        (None, Some(y)) => int_vs_float(y, a.as_f64().unwrap_or(0.0)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn as_int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Compares an integer with a float exactly.
fn int_vs_float(i: i128, f: f64) -> Ordering {
    if f >= TWO_POW_127 {
        return Ordering::Less;
    }
    if f < -TWO_POW_127 {
        return Ordering::Greater;
    }
    let floor = f.floor();
    // Exact: `floor` is integral and within ±2^127.
    #[allow(clippy::cast_possible_truncation)]
    let whole = floor as i128;
    match i.cmp(&whole) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    }
}

/// A non-negative decimal `digits × 10^exponent` (the sign never matters to divisibility).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    digits: u128,
    exponent: i32,
}

impl Decimal {
    /// The decimal value of a JSON number: exact for integers, the shortest round-trip
    /// decimal for floats.
    pub(crate) fn of(n: &Number) -> Decimal {
        if let Some(i) = as_int(n) {
            return Decimal {
                digits: i.unsigned_abs(),
                exponent: 0,
            }
            .normalized();
        }
        let f = n.as_f64().unwrap_or(0.0);
        let mut buffer = ryu::Buffer::new();
        Decimal::parse(buffer.format_finite(f.abs())).normalized()
    }

    /// Reads `ryu`'s output: digits, an optional fraction, an optional `e±N`.
    fn parse(text: &str) -> Decimal {
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
            None => (text, 0),
        };
        let mut digits: u128 = 0;
        let mut fraction = 0i32;
        let mut after_point = false;
        for c in mantissa.chars() {
            match c {
                '.' => after_point = true,
                c => {
                    if let Some(d) = c.to_digit(10) {
                        digits = digits.saturating_mul(10).saturating_add(u128::from(d));
                        if after_point {
                            fraction += 1;
                        }
                    }
                }
            }
        }
        Decimal {
            digits,
            exponent: exponent - fraction,
        }
    }

    /// Moves trailing zeros of the digits into the exponent.
    fn normalized(mut self) -> Decimal {
        if self.digits == 0 {
            return Decimal {
                digits: 0,
                exponent: 0,
            };
        }
        while self.digits.is_multiple_of(10) {
            self.digits /= 10;
            self.exponent += 1;
        }
        self
    }

    /// Whether `self` is a whole multiple of `divisor` (which must be non-zero).
    pub(crate) fn is_multiple_of(self, divisor: Decimal) -> bool {
        if self.digits == 0 {
            return true;
        }
        if divisor.digits == 0 {
            return false;
        }
        let shift = i64::from(self.exponent) - i64::from(divisor.exponent);
        if shift >= 0 {
            // divisor.digits | self.digits × 10^shift
            let m = divisor.digits;
            mul_mod(self.digits % m, pow10_mod(shift, m), m) == 0
        } else {
            // divisor.digits × 10^-shift | self.digits
            let mut scaled = divisor.digits;
            for _ in 0..shift.unsigned_abs() {
                match scaled.checked_mul(10) {
                    Some(next) if next <= self.digits => scaled = next,
                    _ => return false,
                }
            }
            self.digits.is_multiple_of(scaled)
        }
    }
}

/// `a × b mod m` without overflow (`a, b < m`).
fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    if let Some(product) = a.checked_mul(b) {
        return product % m;
    }
    // Double-and-add: only reached for moduli above 2^64, which 20-digit decimals are not.
    let (mut result, mut a, mut b) = (0u128, a % m, b);
    while b > 0 {
        if b & 1 == 1 {
            result = add_mod(result, a, m);
        }
        a = add_mod(a, a, m);
        b >>= 1;
    }
    result
}

fn add_mod(a: u128, b: u128, m: u128) -> u128 {
    let (sum, overflow) = a.overflowing_add(b);
    if overflow || sum >= m {
        sum.wrapping_sub(m)
    } else {
        sum
    }
}

/// `10^exponent mod m` by square-and-multiply.
fn pow10_mod(mut exponent: i64, m: u128) -> u128 {
    let (mut result, mut base) = (1 % m, 10 % m);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exponent >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn n(v: serde_json::Value) -> Number {
        v.as_number().cloned().unwrap()
    }

    #[test]
    fn comparisons_are_exact_across_representations() {
        assert_eq!(
            compare(
                &n(json!(9_007_199_254_740_993u64)),
                &n(json!(9_007_199_254_740_992.0))
            ),
            Ordering::Greater
        );
        assert_eq!(compare(&n(json!(1)), &n(json!(1.0))), Ordering::Equal);
        assert_eq!(compare(&n(json!(1)), &n(json!(1.5))), Ordering::Less);
        assert_eq!(compare(&n(json!(-2)), &n(json!(-1.5))), Ordering::Less);
        assert_eq!(
            compare(&n(json!(u64::MAX)), &n(json!(1e300))),
            Ordering::Less
        );
        assert_eq!(
            compare(&n(json!(i64::MIN)), &n(json!(-1e300))),
            Ordering::Greater
        );
        assert_eq!(compare(&n(json!(2.5)), &n(json!(2.25))), Ordering::Greater);
    }

    #[test]
    fn multiples_are_decided_in_decimal() {
        let m = |a: serde_json::Value, b: serde_json::Value| {
            Decimal::of(&n(a)).is_multiple_of(Decimal::of(&n(b)))
        };
        assert!(m(json!(0.0075), json!(0.0001)));
        assert!(!m(json!(0.00751), json!(0.0001)));
        assert!(m(json!(4.5), json!(1.5)));
        assert!(!m(json!(35), json!(1.5)));
        assert!(m(json!(12_391_239_123u64), json!(1e-8)));
        assert!(!m(json!(1e308), json!(0.123456789)));
        assert!(m(json!(1e308), json!(2)));
        assert!(m(json!(0), json!(7)));
        assert!(m(json!(u64::MAX), json!(u64::MAX)));
        assert!(!m(json!(u64::MAX - 1), json!(u64::MAX)));
        assert!(m(json!(-21), json!(7)));
        assert!(m(json!(1), json!(1e-300)));
        assert!(m(json!(3), json!(1e-300)));
    }

    #[test]
    fn decimals_strip_trailing_zeros() {
        assert_eq!(
            Decimal::of(&n(json!(1200))),
            Decimal {
                digits: 12,
                exponent: 2
            }
        );
        assert_eq!(
            Decimal::of(&n(json!(0.5))),
            Decimal {
                digits: 5,
                exponent: -1
            }
        );
        assert_eq!(
            Decimal::of(&n(json!(1e21))),
            Decimal {
                digits: 1,
                exponent: 21
            }
        );
    }
}
