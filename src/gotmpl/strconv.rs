//! The parts of Go's `strconv` that template parsing relies on: base-0 integer
//! parsing with `_` separators, float parsing and literal unquoting, and
//! Go's `parse.newNumber` on top of them.

use super::ast::Number;

/// Go's `strconv.ErrSyntax` / `ErrRange` distinction.
#[derive(Debug, PartialEq, Eq)]
pub enum NumError {
    /// Not a number of that kind.
    Syntax,
    /// Out of range for the type.
    Range,
}

/// Go's `underscoreOK`: `_` may only separate digits (or follow a base prefix).
fn underscore_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// Go's `strconv.ParseUint(s, 0, 64)`.
pub fn parse_uint0(s: &str) -> Result<u64, NumError> {
    if s.is_empty() {
        return Err(NumError::Syntax);
    }
    let (base, digits) = split_base(s);
    let mut underscores = false;
    let mut n: u64 = 0;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            underscores = true;
            continue;
        }
        let d = c.to_digit(base).ok_or(NumError::Syntax)?;
        any = true;
        n = n
            .checked_mul(base as u64)
            .and_then(|n| n.checked_add(d as u64))
            .ok_or(NumError::Range)?;
    }
    if !any || (underscores && !underscore_ok(s)) {
        return Err(NumError::Syntax);
    }
    Ok(n)
}

/// Splits a base prefix (`0x`, `0o`, `0b`, or a bare leading `0` for octal).
fn split_base(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        return match b[1].to_ascii_lowercase() {
            b'x' => (16, &s[2..]),
            b'o' => (8, &s[2..]),
            b'b' => (2, &s[2..]),
            _ => (8, &s[1..]),
        };
    }
    (10, s)
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
pub fn parse_int0(s: &str) -> Result<i64, NumError> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint0(body)?;
    if neg {
        if u > i64::MAX as u64 + 1 {
            return Err(NumError::Range);
        }
        Ok((u as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(u).map_err(|_| NumError::Range)
    }
}

/// Go's `strconv.ParseFloat(s, 64)` for the syntaxes the lexer lets through
/// (decimal with `_`, hexadecimal with `p` exponent).
pub fn parse_float(s: &str) -> Result<f64, NumError> {
    if s.contains('_') && !underscore_ok(s) {
        return Err(NumError::Syntax);
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex)?
    } else {
        if !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return Err(NumError::Syntax);
        }
        body.parse::<f64>().map_err(|_| NumError::Syntax)?
    };
    if v.is_infinite() {
        return Err(NumError::Range);
    }
    Ok(if neg { -v } else { v })
}

fn parse_hex_float(s: &str) -> Result<f64, NumError> {
    let (mant, exp) = s.split_once('p').ok_or(NumError::Syntax)?;
    let exp: i32 = exp.parse().map_err(|_| NumError::Syntax)?;
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(NumError::Syntax);
    }
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16).ok_or(NumError::Syntax)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16).ok_or(NumError::Syntax)? as f64 * scale;
        scale /= 16.0;
    }
    Ok(v * 2f64.powi(exp))
}

/// Decodes one escape or character from `s` inside a literal quoted with
/// `quote` (Go's `strconv.UnquoteChar`). Returns bytes (Go `\x` escapes
/// produce raw bytes) and the rest of the input.
fn unquote_char(s: &str, quote: char) -> Result<(Vec<u8>, &str), NumError> {
    let mut chars = s.chars();
    let c = chars.next().ok_or(NumError::Syntax)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(NumError::Syntax);
    }
    if c != '\\' {
        let mut buf = [0u8; 4];
        return Ok((c.encode_utf8(&mut buf).as_bytes().to_vec(), chars.as_str()));
    }
    let e = chars.next().ok_or(NumError::Syntax)?;
    let rest = chars.as_str();
    let simple = match e {
        'a' => Some(7u8),
        'b' => Some(8),
        'f' => Some(12),
        'n' => Some(b'\n'),
        'r' => Some(b'\r'),
        't' => Some(b'\t'),
        'v' => Some(11),
        '\\' => Some(b'\\'),
        '\'' | '"' if e == quote => Some(e as u8),
        _ => None,
    };
    if let Some(b) = simple {
        return Ok((vec![b], rest));
    }
    let hex = |n: usize| -> Result<(u32, &str), NumError> {
        let digits = rest.get(..n).ok_or(NumError::Syntax)?;
        let v = u32::from_str_radix(digits, 16).map_err(|_| NumError::Syntax)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NumError::Syntax);
        }
        Ok((v, &rest[n..]))
    };
    match e {
        'x' => {
            let (v, r) = hex(2)?;
            Ok((vec![v as u8], r))
        }
        'u' | 'U' => {
            let (v, r) = hex(if e == 'u' { 4 } else { 8 })?;
            let c = char::from_u32(v).ok_or(NumError::Syntax)?;
            let mut buf = [0u8; 4];
            Ok((c.encode_utf8(&mut buf).as_bytes().to_vec(), r))
        }
        '0'..='7' => {
            let digits = s.get(1..4).ok_or(NumError::Syntax)?;
            let v = u32::from_str_radix(digits, 8).map_err(|_| NumError::Syntax)?;
            if v > 255 || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(NumError::Syntax);
            }
            Ok((vec![v as u8], &s[4..]))
        }
        _ => Err(NumError::Syntax),
    }
}

/// Go's `strconv.Unquote` for `"..."` and `` `...` `` literals. Invalid UTF-8
/// produced by byte escapes is replaced (Rust strings must be UTF-8).
pub fn unquote(s: &str) -> Result<String, NumError> {
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') {
        let inner = &s[1..s.len() - 1];
        if inner.contains('`') {
            return Err(NumError::Syntax);
        }
        return Ok(inner.replace('\r', ""));
    }
    if s.len() < 2 || !s.starts_with('"') || !s.ends_with('"') {
        return Err(NumError::Syntax);
    }
    let mut rest = &s[1..s.len() - 1];
    let mut out = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        if rest.starts_with('\n') {
            return Err(NumError::Syntax);
        }
        let (bytes, r) = unquote_char(rest, '"')?;
        out.extend_from_slice(&bytes);
        rest = r;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Decodes the first character of a Go character literal body (the text
/// after the opening `'`), returning its value and the rest (which must be
/// exactly `'` for a well-formed literal).
pub fn unquote_rune_prefix(body: &str) -> Result<(u32, &str), NumError> {
    let (bytes, rest) = unquote_char(body, '\'')?;
    let value = match std::str::from_utf8(&bytes) {
        Ok(t) if bytes.len() > 1 || bytes[0] < 0x80 => {
            t.chars().next().map(|c| c as u32).ok_or(NumError::Syntax)?
        }
        _ => bytes[0] as u32,
    };
    Ok((value, rest))
}

/// Value of a Go character literal such as `'a'` or `'\n'`.
/// Go's `newNumber`: records every interpretation the text allows.
pub fn number(text: &str, is_char: bool) -> Result<Number, String> {
    let mut n = Number {
        is_int: false,
        is_uint: false,
        is_float: false,
        int: 0,
        uint: 0,
        float: 0.0,
    };
    if is_char {
        let r = match unquote_rune_prefix(text.get(1..).unwrap_or_default()) {
            Ok((r, "'")) => r,
            Ok(_) => return Err(format!("malformed character constant: {text}")),
            Err(_) => return Err("invalid syntax".into()),
        };
        (n.is_int, n.is_uint, n.is_float) = (true, true, true);
        (n.int, n.uint, n.float) = (r as i64, r as u64, r as f64);
        return Ok(n);
    }
    if text.ends_with('i') {
        // Complex constants are not supported by this engine.
        return Err(format!(
            "illegal number syntax: {}",
            crate::gotmpl::fmt::quote(text)
        ));
    }
    let u = parse_uint0(text);
    if let Ok(u) = u {
        n.is_uint = true;
        n.uint = u;
    }
    if let Ok(i) = parse_int0(text) {
        n.is_int = true;
        n.int = i;
        if i == 0 {
            n.is_uint = true; // -0
            n.uint = 0;
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float = n.int as f64;
    } else if n.is_uint {
        n.is_float = true;
        n.float = n.uint as f64;
    } else if let Ok(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!(
                "integer overflow: {}",
                crate::gotmpl::fmt::quote(text)
            ));
        }
        n.is_float = true;
        n.float = f;
        if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
            n.is_int = true;
            n.int = f as i64;
        }
        if f.fract() == 0.0 && f >= 0.0 && f < u64::MAX as f64 {
            n.is_uint = true;
            n.uint = f as u64;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(format!(
            "illegal number syntax: {}",
            crate::gotmpl::fmt::quote(text)
        ));
    }
    Ok(n)
}

#[cfg(test)]
pub fn unquote_rune(s: &str) -> Result<u32, NumError> {
    let body = s.strip_prefix('\'').ok_or(NumError::Syntax)?;
    match unquote_rune_prefix(body)? {
        (r, "'") => Ok(r),
        _ => Err(NumError::Syntax),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_base_zero() {
        assert_eq!(parse_int0("0x10"), Ok(16));
        assert_eq!(parse_int0("0o17"), Ok(15));
        assert_eq!(parse_int0("017"), Ok(15));
        assert_eq!(parse_int0("0b101"), Ok(5));
        assert_eq!(parse_int0("1_000"), Ok(1000));
        assert_eq!(parse_int0("-42"), Ok(-42));
        assert_eq!(parse_int0("0"), Ok(0));
        assert_eq!(parse_int0("1__0"), Err(NumError::Syntax));
        assert_eq!(parse_int0("1.5"), Err(NumError::Syntax));
        assert_eq!(parse_int0("99999999999999999999"), Err(NumError::Range));
        assert_eq!(parse_uint0("-1"), Err(NumError::Syntax));
        assert_eq!(parse_int0("09"), Err(NumError::Syntax));
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float("1e3"), Ok(1000.0));
        assert_eq!(parse_float("1_0.5"), Ok(10.5));
        assert_eq!(parse_float("0x1p-2"), Ok(0.25));
        assert_eq!(parse_float(".5"), Ok(0.5));
        assert_eq!(parse_float("1e400"), Err(NumError::Range));
        assert_eq!(parse_float("1e"), Err(NumError::Syntax));
    }

    #[test]
    fn unquoting() {
        assert_eq!(unquote(r#""a\tb\u00e9\x41\101""#).as_deref(), Ok("a\tbéAA"));
        assert_eq!(unquote("`a\\n`").as_deref(), Ok("a\\n"));
        assert_eq!(unquote(r#""\q""#), Err(NumError::Syntax));
        assert_eq!(unquote_rune("'a'"), Ok(97));
        assert_eq!(unquote_rune(r"'\n'"), Ok(10));
        assert_eq!(unquote_rune("'☃'"), Ok(0x2603));
        assert_eq!(unquote_rune("'ab'"), Err(NumError::Syntax));
    }
}
