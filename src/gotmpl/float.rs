//! Go's `strconv.FormatFloat` for the `e`, `f` and `g` formats, built on
//! Rust's exact (correctly rounded, shortest round-trip) float printing.

/// Format letter of `strconv.FormatFloat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatVerb {
    /// `e`: d.dddde±dd.
    E,
    /// `E`.
    UpperE,
    /// `f`: ddd.dddd.
    F,
    /// `g`: `e` for large/small exponents, else `f`.
    G,
    /// `G`.
    UpperG,
    /// `x`: hexadecimal mantissa and binary exponent, `-0x1.23abcp+20`.
    X,
    /// `X`.
    UpperX,
    /// `b`: decimalless binary exponent, `-123456p-78`.
    B,
}

/// Go's `fmtX` for precision -1 (shortest) and `fmtB`.
fn format_binary(out: &mut String, x: f64, verb: FloatVerb) {
    let bits = x.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    let mut exp = raw_exp;
    if raw_exp == 0 {
        exp += 1;
    } else {
        mant |= 1u64 << 52;
    }
    exp -= 1023;
    if verb == FloatVerb::B {
        out.push_str(&format!(
            "{}p{}{}",
            mant,
            if exp - 52 >= 0 { "+" } else { "-" },
            (exp - 52).abs()
        ));
        return;
    }
    let upper = verb == FloatVerb::UpperX;
    if mant == 0 {
        exp = 0;
    }
    mant <<= 8;
    while mant != 0 && mant & (1u64 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    out.push_str(if upper { "0X" } else { "0x" });
    out.push(if (mant >> 60) & 1 == 1 { '1' } else { '0' });
    mant <<= 4;
    if mant != 0 {
        out.push('.');
        while mant != 0 {
            let d = ((mant >> 60) & 15) as u32;
            let c = char::from_digit(d, 16).unwrap_or('0');
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            mant <<= 4;
        }
    }
    out.push(if upper { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.abs()));
}

/// Decimal digits (no leading/trailing zeros) and decimal point position:
/// value = 0.d1d2d3... × 10^dp.
struct Digits {
    d: Vec<u8>,
    dp: i32,
}

/// Parses Rust's `{:e}` output ("1.2345e-7") into digits and point position.
fn digits_from_exp(s: &str) -> Digits {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut d: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    while d.last() == Some(&b'0') {
        d.pop();
    }
    if d.is_empty() {
        return Digits { d, dp: 0 };
    }
    Digits { d, dp: exp + 1 }
}

/// Shortest digits that round-trip (Go's precision -1).
fn shortest(x: f64) -> Digits {
    digits_from_exp(&format!("{:e}", x.abs()))
}

/// `n` significant digits, correctly rounded; trailing zeros dropped like Go.
fn significant(x: f64, n: usize) -> Digits {
    digits_from_exp(&format!("{:.*e}", n.saturating_sub(1), x.abs()))
}

fn fmt_e(out: &mut String, dg: &Digits, prec: usize, upper: bool) {
    out.push(dg.d.first().map_or('0', |&c| c as char));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            out.push(dg.d.get(i).map_or('0', |&c| c as char));
        }
    }
    out.push(if upper { 'E' } else { 'e' });
    let exp = if dg.d.is_empty() { 0 } else { dg.dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
}

fn fmt_f(out: &mut String, dg: &Digits, prec: usize) {
    if dg.dp > 0 {
        for i in 0..dg.dp as usize {
            out.push(dg.d.get(i).map_or('0', |&c| c as char));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 1..=prec as i64 {
            let j = dg.dp as i64 + i - 1;
            let c = if j >= 0 {
                dg.d.get(j as usize).copied()
            } else {
                None
            };
            out.push(c.map_or('0', |c| c as char));
        }
    }
}

/// Go's `strconv.FormatFloat(x, verb, prec, 64)`; `prec == None` is -1
/// (shortest representation).
pub fn format_float(x: f64, verb: FloatVerb, prec: Option<usize>) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let mut out = String::new();
    if x.is_sign_negative() {
        out.push('-');
    }
    match verb {
        FloatVerb::F => match prec {
            Some(p) => out.push_str(&format!("{:.*}", p, x.abs())),
            None => {
                let dg = shortest(x);
                let p = (dg.d.len() as i32 - dg.dp).max(0) as usize;
                fmt_f(&mut out, &dg, p);
            }
        },
        FloatVerb::E | FloatVerb::UpperE => {
            let upper = verb == FloatVerb::UpperE;
            match prec {
                Some(p) => {
                    let dg = significant(x, p + 1);
                    fmt_e(&mut out, &dg, p, upper);
                }
                None => {
                    let dg = shortest(x);
                    fmt_e(&mut out, &dg, dg.d.len().saturating_sub(1), upper);
                }
            }
        }
        FloatVerb::G | FloatVerb::UpperG => format_g(&mut out, x, prec, verb == FloatVerb::UpperG),
        FloatVerb::X | FloatVerb::UpperX | FloatVerb::B => format_binary(&mut out, x.abs(), verb),
    }
    out
}

fn format_g(out: &mut String, x: f64, prec: Option<usize>, upper: bool) {
    let (dg, mut p, eprec) = match prec {
        None => {
            let dg = shortest(x);
            let n = dg.d.len();
            (dg, n, 6)
        }
        Some(p) => {
            let p = p.max(1);
            let dg = significant(x, p);
            let mut eprec = p as i32;
            if eprec > dg.d.len() as i32 && dg.d.len() as i32 >= dg.dp {
                eprec = dg.d.len() as i32;
            }
            (dg, p, eprec)
        }
    };
    // Zero has no digits and decimal point 0, so Go's `exp := digs.dp - 1`
    // is -1: always %f (`%.10g` of 0 is "0", as gojsonschema prints it).
    let exp = if dg.d.is_empty() { -1 } else { dg.dp - 1 };
    if exp < -4 || exp >= eprec {
        if p > dg.d.len() {
            p = dg.d.len();
        }
        fmt_e(out, &dg, p.saturating_sub(1), upper);
        return;
    }
    if p as i32 > dg.dp {
        p = dg.d.len();
    }
    fmt_f(out, &dg, (p as i32 - dg.dp).max(0) as usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        format_float(x, FloatVerb::G, None)
    }

    #[test]
    fn shortest_g_matches_go_v() {
        assert_eq!(g(1e6), "1e+06");
        assert_eq!(g(100000.0), "100000");
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(0.0), "0");
        assert_eq!(format_float(0.0, FloatVerb::G, Some(10)), "0");
        assert_eq!(format_float(-0.0, FloatVerb::G, Some(1)), "-0");
        assert_eq!(g(9007199254740992.0), "9.007199254740992e+15");
        assert_eq!(g(1.2345678901234567e19), "1.2345678901234567e+19");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(1e21), "1e+21");
        assert_eq!(g(f64::INFINITY), "+Inf");
    }

    #[test]
    fn fixed_precisions() {
        assert_eq!(
            format_float(1234.5678, FloatVerb::E, Some(6)),
            "1.234568e+03"
        );
        assert_eq!(format_float(3.14158, FloatVerb::F, Some(2)), "3.14");
        assert_eq!(format_float(2.675, FloatVerb::F, Some(2)), "2.67");
        assert_eq!(format_float(0.000012, FloatVerb::G, Some(3)), "1.2e-05");
        assert_eq!(format_float(1.0, FloatVerb::G, Some(3)), "1");
        assert_eq!(format_float(123456.0, FloatVerb::G, Some(3)), "1.23e+05");
        assert_eq!(format_float(0.0, FloatVerb::E, Some(2)), "0.00e+00");
        assert_eq!(format_float(1e-7, FloatVerb::E, None), "1e-07");
        assert_eq!(format_float(3.5, FloatVerb::X, None), "0x1.cp+01");
        assert_eq!(format_float(-1.0, FloatVerb::UpperX, None), "-0X1P+00");
        assert_eq!(
            format_float(3.5, FloatVerb::B, None),
            "7881299347898368p-51"
        );
    }
}
