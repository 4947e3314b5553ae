//! Sprig v3.3.0 float math (`addf`, `subf`, `mulf`, `divf`, `add1f`),
//! which goes through shopspring/decimal: each float64 becomes the decimal
//! of its shortest text (`NewFromFloat`), the operation is exact
//! (division rounds to 16 places), and the result is parsed back. Also
//! `maxf`, `minf` and `toDecimal`.

use super::sprig_math::to_float64;
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::fmt::to_string;
use crate::gotmpl::value::Value;

use ArgType::Any;

/// A decimal `mant × 10^exp`.
#[derive(Clone, Copy, Debug)]
struct Dec {
    mant: i128,
    exp: i32,
}

/// shopspring's `DivisionPrecision`.
const DIV_PRECISION: i32 = 16;

impl Dec {
    /// `decimal.NewFromFloat`: the shortest decimal that round-trips.
    fn from_f64(f: f64) -> Result<Dec, String> {
        if !f.is_finite() {
            return Err(format!(
                "Cannot create a Decimal from {}",
                to_string(&Value::Float(f))
            ));
        }
        let text = format!("{f:e}");
        let (m, e) = text.split_once('e').unwrap_or((&text, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let neg = m.starts_with('-');
        let m = m.trim_start_matches('-');
        let (int, frac) = m.split_once('.').unwrap_or((m, ""));
        let digits = format!("{int}{frac}");
        let mant: i128 = digits.parse().unwrap_or(0);
        Ok(Dec {
            mant: if neg { -mant } else { mant },
            exp: e - frac.len() as i32,
        })
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mant, self.exp)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// Both at the smaller exponent, if that fits.
    fn align(a: Dec, b: Dec) -> Option<(i128, i128, i32)> {
        let exp = a.exp.min(b.exp);
        let scale = |d: Dec| -> Option<i128> {
            let p = u32::try_from(d.exp - exp).ok()?;
            d.mant.checked_mul(10i128.checked_pow(p)?)
        };
        Some((scale(a)?, scale(b)?, exp))
    }
}

type Op = fn(Dec, Dec) -> Result<Option<Dec>, String>;

fn add(a: Dec, b: Dec) -> Result<Option<Dec>, String> {
    Ok(Dec::align(a, b).and_then(|(x, y, exp)| {
        Some(Dec {
            mant: x.checked_add(y)?,
            exp,
        })
    }))
}

fn sub(a: Dec, b: Dec) -> Result<Option<Dec>, String> {
    Ok(Dec::align(a, b).and_then(|(x, y, exp)| {
        Some(Dec {
            mant: x.checked_sub(y)?,
            exp,
        })
    }))
}

fn mul(a: Dec, b: Dec) -> Result<Option<Dec>, String> {
    Ok(a.mant.checked_mul(b.mant).map(|mant| Dec {
        mant,
        exp: a.exp + b.exp,
    }))
}

/// `Div`: `DivRound(d2, 16)`, half away from zero.
fn div(a: Dec, b: Dec) -> Result<Option<Dec>, String> {
    if b.mant == 0 {
        return Err("decimal division by zero".into());
    }
    // a/b = (ma/mb) × 10^(ea-eb); want the quotient at 10^-16.
    let shift = a.exp - b.exp + DIV_PRECISION;
    let num = if shift >= 0 {
        10i128
            .checked_pow(shift as u32)
            .and_then(|p| a.mant.checked_mul(p))
    } else {
        None
    };
    let (num, den) = match num {
        Some(n) => (n, b.mant),
        None => {
            let p = 10i128.checked_pow((-shift).max(0) as u32);
            match p.and_then(|p| b.mant.checked_mul(p)) {
                Some(d) if shift < 0 => (a.mant, d),
                _ => return Ok(None),
            }
        }
    };
    let q = num / den;
    let r = num % den;
    let round_up = r.unsigned_abs() * 2 >= den.unsigned_abs();
    let neg = (num < 0) != (den < 0);
    let mant = match (round_up, neg) {
        (true, true) => q - 1,
        (true, false) => q + 1,
        _ => q,
    };
    Ok(Some(Dec {
        mant,
        exp: -DIV_PRECISION,
    }))
}

/// Sprig's `execDecimalOp`; falls back to float64 arithmetic when a value
/// is beyond 128-bit decimal range.
fn decimal_op(
    first: &Value,
    rest: &[Value],
    op: Op,
    float_op: fn(f64, f64) -> f64,
) -> Result<Value, String> {
    let mut acc = Dec::from_f64(to_float64(first))?;
    let mut fallback: Option<f64> = None;
    for x in rest {
        let fx = to_float64(x);
        let d = Dec::from_f64(fx)?;
        if let Some(f) = fallback {
            fallback = Some(float_op(f, fx));
            continue;
        }
        match op(acc, d)? {
            Some(r) => acc = r,
            None => fallback = Some(float_op(acc.to_f64(), fx)),
        }
    }
    Ok(Value::Float(fallback.unwrap_or_else(|| acc.to_f64())))
}

/// Registers the float functions.
pub fn register(m: &mut FuncMap) {
    m.insert("addf", Signature::variadic(&[], Any), |_, a| {
        decimal_op(&Value::Float(0.0), a, add, |x, y| x + y)
    });
    m.insert("add1f", Signature::fixed(&[Any]), |_, a| {
        decimal_op(&a[0], &[Value::Int(1)], add, |x, y| x + y)
    });
    m.insert("subf", Signature::variadic(&[Any], Any), |_, a| {
        decimal_op(&a[0], &a[1..], sub, |x, y| x - y)
    });
    m.insert("mulf", Signature::variadic(&[Any], Any), |_, a| {
        decimal_op(&a[0], &a[1..], mul, |x, y| x * y)
    });
    m.insert("divf", Signature::variadic(&[Any], Any), |_, a| {
        decimal_op(&a[0], &a[1..], div, |x, y| x / y)
    });
    m.insert("maxf", Signature::variadic(&[Any], Any), |_, a| {
        Ok(Value::Float(
            a.iter()
                .skip(1)
                .fold(to_float64(&a[0]), |acc, v| go_max(acc, to_float64(v))),
        ))
    });
    m.insert("minf", Signature::variadic(&[Any], Any), |_, a| {
        Ok(Value::Float(
            a.iter()
                .skip(1)
                .fold(to_float64(&a[0]), |acc, v| go_min(acc, to_float64(v))),
        ))
    });
    m.insert("toDecimal", Signature::fixed(&[Any]), |_, a| {
        let text = to_string(&a[0]);
        Ok(Value::Int64(parse_octal(&text).unwrap_or(0)))
    });
    m.alias("biggest", "max");
}

/// Go's `math.Max` (NaN wins, +0 beats -0).
fn go_max(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { y } else { x };
    }
    x.max(y)
}

/// Go's `math.Min` (NaN wins, -0 beats +0).
fn go_min(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        return if x.is_sign_negative() { x } else { y };
    }
    x.min(y)
}

/// `strconv.ParseInt(s, 8, 64)` (sign allowed, no prefix, no `_`).
fn parse_octal(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let v = i128::from_str_radix(digits, 8).ok()?;
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: Result<Value, String>) -> f64 {
        match v {
            Ok(Value::Float(x)) => x,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn decimal_arithmetic_is_exact() {
        let a = [Value::Float(0.1), Value::Float(0.2)];
        assert_eq!(
            f(decimal_op(&Value::Float(0.0), &a, add, |x, y| x + y)),
            0.3
        );
        assert_eq!(
            f(decimal_op(
                &Value::Float(1.1),
                &[Value::Float(3.0)],
                mul,
                |x, y| x * y
            )),
            3.3
        );
        assert_eq!(
            f(decimal_op(&Value::Int(1), &[Value::Int(3)], div, |x, y| x / y)),
            0.3333333333333333
        );
        assert_eq!(
            f(decimal_op(&Value::Int(2), &[Value::Int(3)], div, |x, y| x / y)),
            0.6666666666666667
        );
        assert!(decimal_op(&Value::Int(1), &[Value::Int(0)], div, |x, y| x / y).is_err());
        assert_eq!(
            f(decimal_op(
                &Value::Float(1e300),
                &[Value::Float(1e300)],
                mul,
                |x, y| x * y
            )),
            f64::INFINITY
        );
    }

    #[test]
    fn octal_and_minmax() {
        assert_eq!(parse_octal("0777"), Some(511));
        assert_eq!(parse_octal("-10"), Some(-8));
        assert_eq!(parse_octal("9"), None);
        assert!(go_max(1.0, f64::NAN).is_nan());
        assert!(go_min(-0.0, 0.0).is_sign_negative());
    }
}
