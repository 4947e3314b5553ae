//! Sprig v3.3.0 integer/float helpers (`numeric.go`) on top of
//! `spf13/cast`'s lenient conversions: unparsable input becomes 0.

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::strconv::{parse_float, parse_int0};
use crate::gotmpl::value::{Elem, Value};

use ArgType::{Any, Int, String as Str};

/// Go's `int64(f)` on amd64: out-of-range and NaN give the minimum int64.
fn f2i(f: f64) -> i64 {
    // 2^63 bounds; NaN is outside every range.
    if !(-9_223_372_036_854_775_808f64..9_223_372_036_854_775_808f64).contains(&f) {
        return i64::MIN;
    }
    f.trunc() as i64
}

/// cast's `trimZeroDecimal`: "12.000" → "12" (other decimals unchanged).
fn trim_zero_decimal(s: &str) -> &str {
    match s.split_once('.') {
        Some((int, frac))
            if !int.is_empty() && !frac.is_empty() && frac.bytes().all(|b| b == b'0') =>
        {
            int
        }
        _ => s,
    }
}

/// `cast.ToInt64`: ints, truncated floats, base-0 strings, bools; else 0.
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint8(u) => *u as i64,
        Value::Float(f) => f2i(*f),
        Value::Str(s) => parse_int0(trim_zero_decimal(s)).unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// `cast.ToFloat64`: numbers, `strconv.ParseFloat` of strings, bools; else 0.
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint8(u) => *u as f64,
        Value::Float(f) => *f,
        Value::Str(s) => parse_float(s).unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// Sprig's `untilStep` (Go `[]int`).
fn until_step(start: i64, stop: i64, step: i64) -> Result<Value, String> {
    // Go would allocate until memory runs out; refuse absurd lengths instead.
    let len = if step != 0 {
        (stop as i128 - start as i128) / step as i128
    } else {
        0
    };
    if len > super::MAX_RESULT_ITEMS as i128 {
        return Err(format!(
            "runtime error: makeslice: len out of range ({len} elements)"
        ));
    }
    let mut v = Vec::new();
    let mut i = start;
    if stop < start {
        while step < 0 && i > stop {
            v.push(Value::Int(i));
            i += step;
        }
    } else {
        while step > 0 && i < stop {
            v.push(Value::Int(i));
            i += step;
        }
    }
    Ok(Value::typed_list(Elem::Int, v))
}

/// Sprig's `round`: half-way rule `round_on` (default .5) at `places`.
fn round(val: f64, places: f64, round_on: f64) -> f64 {
    let pow = 10f64.powf(places);
    let digit = pow * val;
    let frac = digit - digit.trunc();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    r / pow
}

fn i64s(a: &[Value]) -> impl Iterator<Item = i64> + '_ {
    a.iter().map(to_int64)
}

/// Registers Sprig's integer and float helpers.
pub fn register(m: &mut FuncMap) {
    let one = Signature::fixed(&[Any]);
    let two = Signature::fixed(&[Any, Any]);
    m.insert("int", one.clone(), |_, a| Ok(Value::Int(to_int64(&a[0]))));
    m.insert("int64", one.clone(), |_, a| {
        Ok(Value::Int64(to_int64(&a[0])))
    });
    m.insert("float64", one.clone(), |_, a| {
        Ok(Value::Float(to_float64(&a[0])))
    });
    m.insert("atoi", Signature::fixed(&[Str]), |_, a| {
        let s = a[0].as_str().unwrap_or_default();
        let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
        let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        Ok(Value::Int(if ok { s.parse().unwrap_or(0) } else { 0 }))
    });
    m.insert("add", Signature::variadic(&[], Any), |_, a| {
        Ok(Value::Int64(i64s(a).fold(0i64, i64::wrapping_add)))
    });
    m.insert("add1", one.clone(), |_, a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1)))
    });
    m.insert("sub", two.clone(), |_, a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
    });
    m.insert("mul", Signature::variadic(&[Any], Any), |_, a| {
        Ok(Value::Int64(i64s(a).fold(1i64, i64::wrapping_mul)))
    });
    m.insert("div", two.clone(), |_, a| {
        let (x, y) = (to_int64(&a[0]), to_int64(&a[1]));
        if y == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int64(x.wrapping_div(y)))
    });
    m.insert("mod", two, |_, a| {
        let (x, y) = (to_int64(&a[0]), to_int64(&a[1]));
        if y == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int64(x.wrapping_rem(y)))
    });
    m.insert("max", Signature::variadic(&[Any], Any), |_, a| {
        Ok(Value::Int64(i64s(a).max().unwrap_or(0)))
    });
    m.insert("min", Signature::variadic(&[Any], Any), |_, a| {
        Ok(Value::Int64(i64s(a).min().unwrap_or(0)))
    });
    m.insert("floor", one.clone(), |_, a| {
        Ok(Value::Float(to_float64(&a[0]).floor()))
    });
    m.insert("ceil", one, |_, a| {
        Ok(Value::Float(to_float64(&a[0]).ceil()))
    });
    m.insert(
        "round",
        Signature::variadic(&[Any, Int], ArgType::Float64),
        |_, a| {
            let round_on = a.get(2).map_or(0.5, to_float64);
            Ok(Value::Float(round(
                to_float64(&a[0]),
                to_int64(&a[1]) as f64,
                round_on,
            )))
        },
    );
    m.insert("until", Signature::fixed(&[Int]), |_, a| {
        let n = to_int64(&a[0]);
        until_step(0, n, if n < 0 { -1 } else { 1 })
    });
    m.insert("untilStep", Signature::fixed(&[Int, Int, Int]), |_, a| {
        until_step(to_int64(&a[0]), to_int64(&a[1]), to_int64(&a[2]))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_conversions() {
        assert_eq!(to_int64(&Value::from("12abc")), 0);
        assert_eq!(to_int64(&Value::from("0x1F")), 31);
        assert_eq!(to_int64(&Value::from("12.000")), 12);
        assert_eq!(to_int64(&Value::from("1.5")), 0);
        assert_eq!(to_int64(&Value::Float(-3.99)), -3);
        assert_eq!(to_int64(&Value::Float(f64::NAN)), i64::MIN);
        assert_eq!(to_float64(&Value::from("1.5e3")), 1500.0);
        assert_eq!(to_int64(&Value::Nil), 0);
    }

    #[test]
    fn sprig_round_and_ranges() {
        assert_eq!(round(2.675, 2.0, 0.5), 2.68);
        assert_eq!(round(1.4, 0.0, 0.5), 1.0);
        assert!(until_step(0, i64::MAX, 1).is_err());
        let Ok(Value::List(l)) = until_step(0, 10, 3) else {
            return;
        };
        assert_eq!(l.items.len(), 4);
        let Ok(Value::List(l)) = until_step(3, 0, -1) else {
            return;
        };
        assert_eq!(l.items.len(), 3);
    }
}
