//! Go's float formatting (`strconv.FormatFloat` shortest forms and
//! `encoding/json`'s choice of form), which decides how numbers print.

/// Shortest decimal digits of `f` (no sign) and the decimal point position:
/// `f = 0.DIGITS × 10^dp`, as Go's `strconv` computes them.
fn shortest(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-trip digits, like Go's.
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    if digits == "0" {
        return (digits, 1);
    }
    (digits, exp + 1)
}

/// `strconv.FormatFloat(f, 'e', -1, 64)`: `1.5e+06`.
pub fn format_e(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    let (digits, dp) = shortest(f);
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let exp = if digits == "0" { 0 } else { dp - 1 };
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
    out
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`: no exponent.
pub fn format_f(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    let (digits, dp) = shortest(f);
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    if dp <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', dp.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if dp as usize >= digits.len() {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', dp as usize - digits.len()));
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, which is also `%v` of a float64:
/// exponent form when the exponent is < -4 or >= 21 digits... no: >= 6 here,
/// because Go uses precision 6 for the decision in shortest mode.
pub fn format_g(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    let (digits, dp) = shortest(f);
    let exp = if digits == "0" { 0 } else { dp - 1 };
    if !(-4..6).contains(&exp) {
        format_e(f)
    } else {
        format_f(f)
    }
}

/// `encoding/json`'s text for a float64: `f` form, but `e` form (with `e-7`
/// not `e-07`) below 1e-6 and from 1e21 on.
pub fn format_json(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format_e(f);
        // json: "clean up e-09 to e-9"
        if let Some(i) = s.find("e-0") {
            return format!("{}e-{}", &s[..i], &s[i + 3..]);
        }
        return s;
    }
    format_f(f)
}

fn special(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_go() {
        assert_eq!(format_g(1e6), "1e+06");
        assert_eq!(format_g(123456.0), "123456");
        assert_eq!(format_g(1234567.5), "1.2345675e+06");
        assert_eq!(format_g(0.0001), "0.0001");
        assert_eq!(format_g(0.00001), "1e-05");
        assert_eq!(format_g(1.5), "1.5");
        assert_eq!(format_g(-2.0), "-2");
        assert_eq!(format_g(0.0), "0");
        assert_eq!(format_g(1.2345678901234567e19), "1.2345678901234567e+19");
        assert_eq!(format_g(f64::INFINITY), "+Inf");
    }

    #[test]
    fn json_matches_go() {
        assert_eq!(format_json(1e6), "1000000");
        assert_eq!(format_json(1e20), "100000000000000000000");
        assert_eq!(format_json(1e21), "1e+21");
        assert_eq!(format_json(1e-7), "1e-7");
        assert_eq!(format_json(0.000001), "0.000001");
        assert_eq!(format_json(-0.5), "-0.5");
    }
}
