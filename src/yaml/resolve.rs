//! Scalar resolution: which type a plain scalar has, as go-yaml decides it.
//!
//! Two resolvers exist because the tools we copy use two go-yaml versions:
//! kustomize's kyaml reads inputs with go-yaml v3 (YAML 1.2 booleans: `yes`
//! stays a string), while Helm and `sigs.k8s.io/yaml` use go-yaml v2 (YAML 1.1:
//! `yes`, `on`, `y` are booleans). Both strip `_` from numbers and read `0777`
//! as octal. The v2 rules also decide what the emitter must quote.

use super::node::Tag;

/// Which go-yaml version's rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolver {
    /// go-yaml v2 / YAML 1.1 (Helm values, `fromYaml`, what the emitter quotes).
    V2,
    /// go-yaml v3 (kustomize inputs).
    V3,
}

/// The text without `_` (go-yaml strips them from numbers), borrowed when
/// there are none.
pub fn strip_underscores(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('_') {
        std::borrow::Cow::Owned(text.replace('_', ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// An integer as go-yaml decodes it: `int64` when it fits, else `uint64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int {
    /// Fits `int64`.
    Signed(i64),
    /// Only fits `uint64`.
    Unsigned(u64),
}

/// The tag a plain scalar resolves to.
// go-yaml resolve.go: the first byte picks a hint, then a table, then numbers.
pub fn resolve_plain(text: &str, resolver: Resolver) -> Tag {
    let Some(&first) = text.as_bytes().first() else {
        return Tag::Null;
    };
    if let Some(tag) = table(text, resolver) {
        return tag;
    }
    match first {
        b'.' => {
            if go_parse_float(text).is_some() {
                Tag::Float
            } else {
                Tag::Str
            }
        }
        b'0'..=b'9' | b'+' | b'-' => resolve_number(text),
        _ => Tag::Str,
    }
}

fn table(text: &str, resolver: Resolver) -> Option<Tag> {
    let tag = match text {
        // YAML 1.2's core booleans (go-yaml v3); v2 adds YAML 1.1's.
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => Tag::Bool,
        "~" | "null" | "Null" | "NULL" => Tag::Null,
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => Tag::Float,
        _ if resolver == Resolver::V2 && yaml11_bool(text).is_some() => Tag::Bool,
        _ => return None,
    };
    Some(tag)
}

/// go-yaml v2's boolean table (YAML 1.1, resolve.go): the value of a plain
/// scalar that resolves as a boolean, `None` for any other text.
pub fn yaml11_bool(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Some(false)
        }
        _ => None,
    }
}

fn resolve_number(text: &str) -> Tag {
    if is_timestamp(text) {
        return Tag::Timestamp;
    }
    let plain = strip_underscores(text);
    if parse_int(&plain).is_some() {
        return Tag::Int;
    }
    if is_yaml_style_float(&plain) && go_parse_float(&plain).is_some() {
        return Tag::Float;
    }
    Tag::Str
}

/// Parses an integer the way go-yaml does after `_` removal: Go's
/// `strconv.ParseInt(s, 0, 64)`, then `ParseUint`, then `0b`/`-0b`/`0o` forms.
pub fn parse_int(plain: &str) -> Option<Int> {
    let (neg, digits) = match plain.as_bytes().first()? {
        b'-' => (true, &plain[1..]),
        b'+' => (false, &plain[1..]),
        _ => (false, plain),
    };
    let magnitude = parse_uint_base0(digits)?;
    if neg {
        if magnitude <= i64::MAX as u64 + 1 {
            Some(Int::Signed((magnitude as i128).wrapping_neg() as i64))
        } else {
            None
        }
    } else if magnitude <= i64::MAX as u64 {
        Some(Int::Signed(magnitude as i64))
    } else if plain.starts_with('+') {
        // Go: ParseUint rejects a sign, so "+18446744073709551615" is not an int.
        None
    } else {
        Some(Int::Unsigned(magnitude))
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)` for an unsigned literal (no `_`).
fn parse_uint_base0(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let (radix, body) = if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => (16, &s[2..]),
            b'o' | b'O' => (8, &s[2..]),
            b'b' | b'B' => (2, &s[2..]),
            _ => (8, &s[1..]),
        }
    } else {
        (10, s)
    };
    if body.is_empty() {
        // "0" alone is decimal zero; "0x" is an error.
        return if s == "0" { Some(0) } else { None };
    }
    if !body.bytes().all(|c| (c as char).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(body, radix).ok()
}

fn is_yaml_style_float(s: &str) -> bool {
    // go-yaml: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms YAML produces,
/// including `.5`, `1.`, `1e3`, `inf`/`nan` spellings; `None` when Go errors
/// (out of range counts as an error there too).
pub fn go_parse_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if lower.len() - unsigned.len() > 1 {
        return None;
    }
    if matches!(unsigned, "inf" | "infinity") {
        return Some(if lower.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if unsigned == "nan" {
        return (lower.len() == 3).then_some(f64::NAN);
    }
    if unsigned.starts_with("0x") || s.contains('_') {
        return None;
    }
    let valid = unsigned
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'));
    if !valid {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(f)
}

/// go-yaml's timestamp check: `YYYY-` then one of a few layouts that Go's
/// `time.Parse` accepts (date only, date and time with `T`/`t`/space).
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = Cursor { b, i: 5 };
    // "2006-1-2": month and day of one or two digits.
    if !p.num(1, 2, 1, 12) || !p.eat(b'-') || !p.num(1, 2, 1, 31) {
        return false;
    }
    if p.done() {
        return true;
    }
    let sep = b[p.i];
    p.i += 1;
    let zoned = sep == b'T' || sep == b't';
    if !(zoned || sep == b' ') {
        return false;
    }
    if !p.num(1, 2, 0, 23) || !p.eat(b':') || !p.num(1, 2, 0, 59) || !p.eat(b':') {
        return false;
    }
    if !p.num(1, 2, 0, 59) {
        return false;
    }
    if p.eat(b'.') {
        let start = p.i;
        while p.i < b.len() && b[p.i].is_ascii_digit() {
            p.i += 1;
        }
        if p.i == start {
            return false;
        }
    }
    if !zoned {
        return p.done();
    }
    if p.eat(b'Z') {
        return p.done();
    }
    if !(p.eat(b'+') || p.eat(b'-')) {
        return false;
    }
    p.num(2, 2, 0, 23) && p.eat(b':') && p.num(2, 2, 0, 59) && p.done()
}

/// How Go prints a timestamp scalar decoded into `interface{}` by go-yaml v3
/// and then marshalled to JSON: RFC 3339 with nanoseconds, trailing zeros of
/// the fraction dropped, `Z` for UTC (no zone means UTC).
pub fn timestamp_rfc3339(s: &str) -> Option<String> {
    if !is_timestamp(s) {
        return None;
    }
    let nums: Vec<&str> = s
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .collect();
    let n = |i: usize| nums.get(i).and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        n(0),
        n(1),
        n(2),
        n(3),
        n(4),
        n(5)
    );
    let time_part = s.get(10..).unwrap_or_default();
    if let Some(dot) = time_part.find('.') {
        let frac: String = time_part[dot + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(&frac[..frac.len().min(9)]);
        }
    }
    match time_part.rfind(['+', '-']) {
        Some(i) if time_part.len() - i == 6 && &time_part[i + 1..] != "00:00" => {
            out.push_str(&time_part[i..])
        }
        _ => out.push('Z'),
    }
    Some(out)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        if hit {
            self.i += 1;
        }
        hit
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
    fn num(&mut self, min: usize, max: usize, lo: u32, hi: u32) -> bool {
        let start = self.i;
        while self.i < self.b.len() && self.i - start < max && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        if self.i - start < min {
            return false;
        }
        let v: u32 = self.b[start..self.i]
            .iter()
            .fold(0, |a, d| a * 10 + u32::from(d - b'0'));
        (lo..=hi).contains(&v)
    }
}

/// go-yaml v2 `isBase60Float`: `1:20` must be quoted on output for YAML 1.1 readers.
pub fn is_base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let g = &b[start..i];
        let ok = match g.len() {
            1 => true,
            2 => g[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(s: &str) -> Tag {
        resolve_plain(s, Resolver::V2)
    }
    fn v3(s: &str) -> Tag {
        resolve_plain(s, Resolver::V3)
    }

    #[test]
    fn yaml11_booleans_only_in_v2() {
        for s in ["yes", "on", "y", "N", "Off"] {
            assert_eq!(v2(s), Tag::Bool, "{s}");
            assert_eq!(v3(s), Tag::Str, "{s}");
        }
        assert_eq!(v3("True"), Tag::Bool);
        assert_eq!(v3("tRue"), Tag::Str);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_int("0777"), Some(Int::Signed(511)));
        assert_eq!(parse_int("0x1F"), Some(Int::Signed(31)));
        assert_eq!(parse_int("0o17"), Some(Int::Signed(15)));
        assert_eq!(parse_int("-0b101"), Some(Int::Signed(-5)));
        assert_eq!(
            parse_int("18446744073709551615"),
            Some(Int::Unsigned(u64::MAX))
        );
        assert_eq!(
            parse_int("-9223372036854775808"),
            Some(Int::Signed(i64::MIN))
        );
        assert_eq!(parse_int("08"), None);
        assert_eq!(v3("1_000"), Tag::Int);
        assert_eq!(v2("08"), Tag::Float);
        assert_eq!(v2("1.10"), Tag::Float);
        assert_eq!(v2("1e3"), Tag::Float);
        assert_eq!(v2(".5"), Tag::Float);
        assert_eq!(v2("1."), Tag::Float);
        assert_eq!(v2("1.2.3"), Tag::Str);
        assert_eq!(v2("-"), Tag::Str);
        assert_eq!(v2("0x"), Tag::Str);
        assert_eq!(v2("+"), Tag::Str);
        assert_eq!(v2("1e"), Tag::Str);
        assert_eq!(v2("123abc"), Tag::Str);
    }

    #[test]
    fn nulls_and_specials() {
        assert_eq!(v2(""), Tag::Null);
        assert_eq!(v2("~"), Tag::Null);
        assert_eq!(v3("NULL"), Tag::Null);
        assert_eq!(v3(".inf"), Tag::Float);
        assert_eq!(v3(".nan"), Tag::Float);
        assert_eq!(v3(".x"), Tag::Str);
    }

    #[test]
    fn timestamps() {
        assert!(is_timestamp("2001-12-14"));
        assert!(is_timestamp("2001-1-2"));
        assert!(is_timestamp("2001-12-14t21:59:43.10Z"));
        assert!(is_timestamp("2001-12-14 21:59:43.10"));
        assert!(is_timestamp("2001-12-14T21:59:43+05:00"));
        assert!(!is_timestamp("2001-12-14 21:59:43 -5"));
        assert!(!is_timestamp("2001-13-01"));
        assert!(!is_timestamp("200-12-14"));
        assert_eq!(v2("2001-12-14"), Tag::Timestamp);
    }

    #[test]
    fn timestamps_print_as_go_does() {
        assert_eq!(
            timestamp_rfc3339("2001-12-14").as_deref(),
            Some("2001-12-14T00:00:00Z")
        );
        assert_eq!(
            timestamp_rfc3339("2001-12-14t21:59:43.10-05:00").as_deref(),
            Some("2001-12-14T21:59:43.1-05:00")
        );
        assert_eq!(
            timestamp_rfc3339("2001-1-2 3:04:05").as_deref(),
            Some("2001-01-02T03:04:05Z")
        );
        assert_eq!(timestamp_rfc3339("x"), None);
    }

    #[test]
    fn base60() {
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("190:20:30.15"));
        assert!(!is_base60_float("1:60"));
        assert!(!is_base60_float("12:345"));
        assert!(!is_base60_float("a:1"));
    }
}
