//! Sprig v3.3.0 date functions (`date.go`) on a UTC-only `time.Time`:
//! Go's reference-layout formatting and parsing, `Time.String()`,
//! `time.Duration` printing and parsing. Every zone is UTC (renders run
//! with TZ=UTC and no zone database is consulted). `now`, `ago` and `date`
//! of a non-time read the clock: they work but warn.

use std::sync::Arc;

use super::sprig_encoding::warn_random;
use super::{ArgType, FuncCtx, FuncMap, Signature};
use crate::gotmpl::value::{Object, Value};

use ArgType::{Any, String as Str};

/// A `time.Time` in UTC: seconds since the Unix epoch plus nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Time {
    secs: i64,
    nanos: u32,
}

/// Seconds from 0001-01-01 to 1970-01-01 (Go's zero time is year 1).
const ZERO_UNIX: i64 = -62_135_596_800;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1-12, day) of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl Time {
    /// Go's zero `time.Time`.
    pub const ZERO: Time = Time {
        secs: ZERO_UNIX,
        nanos: 0,
    };

    /// `time.Unix(secs, 0)`.
    pub fn unix(secs: i64) -> Time {
        Time { secs, nanos: 0 }
    }

    /// The current time (only for the functions that are documented to read it).
    fn now() -> Time {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Time {
            secs: d.as_secs() as i64,
            nanos: d.subsec_nanos(),
        }
    }

    fn fields(&self) -> (i64, i64, i64, i64, i64, i64) {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
    }

    fn add_nanos(&self, n: i128) -> Time {
        let total = i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos) + n;
        Time {
            secs: total.div_euclid(1_000_000_000) as i64,
            nanos: total.rem_euclid(1_000_000_000) as u32,
        }
    }

    /// Go's `Time.Format` with the reference layout.
    pub fn format(&self, layout: &str) -> String {
        let (y, mo, d, h, mi, s) = self.fields();
        let wd = (self.secs.div_euclid(86_400) + 4).rem_euclid(7) as usize;
        let yday = days_from_civil(y, mo, d) - days_from_civil(y, 1, 1) + 1;
        let mut out = String::new();
        let mut rest = layout;
        while !rest.is_empty() {
            let (tok, len) = std_chunk(rest);
            match tok {
                None => {
                    let c = rest.chars().next().map_or(1, char::len_utf8);
                    out.push_str(&rest[..c]);
                    rest = &rest[c..];
                    continue;
                }
                Some(t) => {
                    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
                    let piece = match t {
                        "2006" => format!("{y:04}"),
                        "06" => format!("{:02}", y.rem_euclid(100)),
                        "January" => MONTHS[(mo - 1) as usize].to_string(),
                        "Jan" => MONTHS[(mo - 1) as usize][..3].to_string(),
                        "01" => format!("{mo:02}"),
                        "1" => mo.to_string(),
                        "Monday" => DAYS[wd].to_string(),
                        "Mon" => DAYS[wd][..3].to_string(),
                        "02" => format!("{d:02}"),
                        "_2" => format!("{d:>2}"),
                        "2" => d.to_string(),
                        "002" => format!("{yday:03}"),
                        "__2" => format!("{yday:>3}"),
                        "15" => format!("{h:02}"),
                        "03" => format!("{h12:02}"),
                        "3" => h12.to_string(),
                        "04" => format!("{mi:02}"),
                        "4" => mi.to_string(),
                        "05" => format!("{s:02}"),
                        "5" => s.to_string(),
                        "PM" => (if h >= 12 { "PM" } else { "AM" }).to_string(),
                        "pm" => (if h >= 12 { "pm" } else { "am" }).to_string(),
                        "MST" => "UTC".to_string(),
                        "Z0700" | "Z07:00" | "Z07" | "Z070000" | "Z07:00:00" => "Z".to_string(),
                        "-0700" => "+0000".to_string(),
                        "-07:00" => "+00:00".to_string(),
                        "-07" => "+00".to_string(),
                        "-070000" => "+000000".to_string(),
                        "-07:00:00" => "+00:00:00".to_string(),
                        frac => fraction(frac, self.nanos),
                    };
                    out.push_str(&piece);
                    // A layout token is ASCII: `len` ends on a char boundary.
                    rest = rest.get(len.max(1)..).unwrap_or_default();
                }
            }
        }
        out
    }

    /// `Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`.
    pub fn go_string(&self) -> String {
        self.format("2006-01-02 15:04:05.999999999 -0700 MST")
    }
}

/// `.000`/`.999` (or `,`) fractional seconds.
fn fraction(tok: &str, nanos: u32) -> String {
    let digits = tok.len() - 1;
    let all = format!("{nanos:09}");
    let mut f = all[..digits.min(9)].to_string();
    if tok.as_bytes().get(1) == Some(&b'9') {
        f = f.trim_end_matches('0').to_string();
        if f.is_empty() {
            return String::new();
        }
    }
    format!("{}{f}", &tok[..1])
}

/// Go's `nextStdChunk` reduced to a lookup at the start of `s`:
/// (token, byte length), or (None, 0) for a literal character.
fn std_chunk(s: &str) -> (Option<&'static str>, usize) {
    const TOKENS: [&str; 37] = [
        "January",
        "Monday",
        "-07:00:00",
        "Z07:00:00",
        "-070000",
        "Z070000",
        "2006",
        "-07:00",
        "Z07:00",
        "-0700",
        "Z0700",
        "Jan",
        "Mon",
        "MST",
        "002",
        "__2",
        "-07",
        "Z07",
        "01",
        "02",
        "03",
        "04",
        "05",
        "06",
        "15",
        "_2",
        "PM",
        "pm",
        "1",
        "2",
        "3",
        "4",
        "5",
        "",
        "",
        "",
        "",
    ];
    for t in TOKENS.iter().filter(|t| !t.is_empty()) {
        if let Some(after) = s.strip_prefix(t) {
            // Go: "Jan"/"Mon" only when not followed by a lower-case letter.
            if (*t == "Jan" || *t == "Mon" || *t == "MST")
                && after.starts_with(|c: char| c.is_ascii_lowercase())
            {
                continue;
            }
            return (Some(t), t.len());
        }
    }
    if s.starts_with(['.', ',']) {
        let b = s.as_bytes();
        if let Some(&d) = b.get(1) {
            if d == b'0' || d == b'9' {
                let n = b[1..].iter().take_while(|&&x| x == d).count();
                // Only when not followed by another digit.
                if !b.get(1 + n).is_some_and(u8::is_ascii_digit) {
                    let tok = if d == b'0' {
                        FRAC0[n.min(9)]
                    } else {
                        FRAC9[n.min(9)]
                    };
                    return (Some(tok), n + 1);
                }
            }
        }
    }
    (None, 0)
}

const FRAC0: [&str; 10] = [
    ".",
    ".0",
    ".00",
    ".000",
    ".0000",
    ".00000",
    ".000000",
    ".0000000",
    ".00000000",
    ".000000000",
];
const FRAC9: [&str; 10] = [
    ".",
    ".9",
    ".99",
    ".999",
    ".9999",
    ".99999",
    ".999999",
    ".9999999",
    ".99999999",
    ".999999999",
];

/// Go's `time.Parse` for the common layouts (UTC only). Errors use Go's
/// `parsing time "V" as "L": cannot parse "R" as "T"` form.
pub fn parse(layout: &str, value: &str) -> Result<Time, String> {
    let err = |rest: &str, tok: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            crate::gotmpl::fmt::quote(value),
            crate::gotmpl::fmt::quote(layout),
            crate::gotmpl::fmt::quote(rest),
            crate::gotmpl::fmt::quote(tok)
        )
    };
    let (mut y, mut mo, mut d, mut h, mut mi, mut s, mut ns, mut pm) =
        (0i64, 1i64, 1i64, 0i64, 0i64, 0i64, 0i64, None);
    // A layout without a year parses to year 0 (Go's time.Parse zero year).
    let mut l = layout;
    let mut v = value;
    while !l.is_empty() {
        let (tok, len) = std_chunk(l);
        let Some(tok) = tok else {
            let c = l.chars().next().map_or(1, char::len_utf8);
            if !v.starts_with(&l[..c]) {
                return Err(err(v, &l[..c]));
            }
            v = &v[c..];
            l = &l[c..];
            continue;
        };
        l = &l[len..];
        let num = |v: &str, min: usize, max: usize| -> Option<(i64, usize)> {
            let n = v.bytes().take(max).take_while(u8::is_ascii_digit).count();
            (n >= min).then(|| (v[..n].parse().unwrap_or(0), n))
        };
        let (val, used) = match tok {
            "2006" => num(v, 4, 4).ok_or_else(|| err(v, tok))?,
            "06" => num(v, 2, 2)
                .map(|(x, n)| (if x >= 69 { 1900 + x } else { 2000 + x }, n))
                .ok_or_else(|| err(v, tok))?,
            "01" | "02" | "15" | "03" | "04" | "05" => num(v, 2, 2).ok_or_else(|| err(v, tok))?,
            "1" | "2" | "3" | "4" | "5" => num(v, 1, 2).ok_or_else(|| err(v, tok))?,
            "_2" => {
                let t = v.strip_prefix(' ').unwrap_or(v);
                let (x, n) = num(t, 1, 2).ok_or_else(|| err(v, tok))?;
                (x, n + v.len() - t.len())
            }
            "January" | "Jan" => {
                let idx = MONTHS.iter().position(|m| {
                    let name = if tok == "Jan" { &m[..3] } else { m };
                    v.get(..name.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(name))
                });
                let i = idx.ok_or_else(|| err(v, tok))?;
                (i as i64 + 1, if tok == "Jan" { 3 } else { MONTHS[i].len() })
            }
            "Monday" | "Mon" => {
                let idx = DAYS.iter().position(|m| {
                    let name = if tok == "Mon" { &m[..3] } else { m };
                    v.get(..name.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(name))
                });
                let i = idx.ok_or_else(|| err(v, tok))?;
                (-1, if tok == "Mon" { 3 } else { DAYS[i].len() })
            }
            "PM" | "pm" => {
                let p = v.get(..2).map(str::to_ascii_uppercase);
                match p.as_deref() {
                    Some("PM") => (1, 2),
                    Some("AM") => (0, 2),
                    _ => return Err(err(v, tok)),
                }
            }
            "MST" => {
                let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                if n < 3 {
                    return Err(err(v, tok));
                }
                (0, n)
            }
            t if t.starts_with('Z') && v.starts_with('Z') => (0, 1),
            t if t.starts_with(['Z', '-']) => {
                let n = v
                    .bytes()
                    .take_while(|b| b.is_ascii_digit() || b"+-:".contains(b))
                    .count();
                if n < 3 {
                    return Err(err(v, tok));
                }
                (0, n)
            }
            frac => {
                // Fractional seconds: a separator then digits.
                let digits = v
                    .get(1..)
                    .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
                if !v.starts_with(['.', ','])
                    || (frac.as_bytes().get(1) == Some(&b'0') && digits != frac.len() - 1)
                {
                    return Err(err(v, tok));
                }
                let text = format!("{:0<9}", &v[1..1 + digits.min(9)]);
                (text.parse().unwrap_or(0), digits + 1)
            }
        };
        match tok {
            "2006" | "06" => y = val,
            "01" | "1" | "January" | "Jan" => mo = val,
            "02" | "2" | "_2" => d = val,
            "15" => h = val,
            "03" | "3" => h = val,
            "04" | "4" => mi = val,
            "05" | "5" => s = val,
            "PM" | "pm" => pm = Some(val == 1),
            t if t.starts_with(['.', ',']) => ns = val,
            _ => {}
        }
        v = &v[used..];
    }
    if !v.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            crate::gotmpl::fmt::quote(value),
            crate::gotmpl::fmt::quote(v)
        ));
    }
    if let Some(p) = pm {
        if p && h < 12 {
            h += 12;
        } else if !p && h == 12 {
            h = 0;
        }
    }
    let dim = days_from_civil(y + i64::from(mo == 12), mo % 12 + 1, 1) - days_from_civil(y, mo, 1);
    if !(1..=12).contains(&mo) || d < 1 || d > dim || h > 23 || mi > 59 || s > 59 {
        return Err(format!(
            "parsing time {}: {} out of range",
            crate::gotmpl::fmt::quote(value),
            if !(1..=12).contains(&mo) {
                "month"
            } else if d < 1 || d > dim {
                "day"
            } else {
                "hour"
            }
        ));
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    Ok(Time {
        secs,
        nanos: ns as u32,
    })
}

impl Object for Time {
    fn type_name(&self) -> String {
        "time.Time".into()
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(name, "Unix" | "Year" | "Format" | "String" | "UTC")
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        Ok(match name {
            "Unix" => Value::Int64(self.secs),
            "Year" => Value::Int(self.fields().0),
            "Format" => {
                Value::from(self.format(args.first().and_then(Value::as_str).unwrap_or("")))
            }
            "UTC" => Value::Object(Arc::new(*self)),
            _ => Value::from(self.go_string()),
        })
    }

    fn to_go_string(&self) -> Option<String> {
        Some(self.go_string())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn marshal(&self) -> Option<Value> {
        Some(Value::from(
            self.format("2006-01-02T15:04:05.999999999Z07:00"),
        ))
    }
}

fn as_time(v: &Value) -> Option<Time> {
    match v {
        Value::Object(o) => o.as_any()?.downcast_ref::<Time>().copied(),
        _ => None,
    }
}

fn time_value(t: Time) -> Value {
    Value::Object(Arc::new(t))
}

/// Sprig's `dateInZone` input: a time, or Unix seconds as int/int64;
/// anything else means "now".
fn date_input(ctx: &FuncCtx<'_>, v: &Value) -> Time {
    match v {
        Value::Int(i) | Value::Int64(i) => Time::unix(*i),
        other => as_time(other).unwrap_or_else(|| {
            warn_random(ctx, "date of the current time");
            Time::now()
        }),
    }
}

/// Go's `time.Duration.String`.
pub fn duration_string(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let mut out = if u < 1_000_000_000 {
        let (unit, div) = if u < 1_000 {
            ("ns", 1)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        format!("{}{unit}", frac_text(u, div))
    } else {
        let secs = u / 1_000_000_000;
        let (h, m) = (secs / 3600, secs / 60 % 60);
        let s = frac_text(u % 60_000_000_000, 1_000_000_000);
        if h > 0 {
            format!("{h}h{m}m{s}s")
        } else if m > 0 {
            format!("{m}m{s}s")
        } else {
            format!("{s}s")
        }
    };
    if neg {
        out.insert(0, '-');
    }
    out
}

fn frac_text(v: u64, div: u64) -> String {
    let int = v / div;
    let frac = v % div;
    if frac == 0 {
        return int.to_string();
    }
    let width = div.to_string().len() - 1;
    let f = format!("{frac:0width$}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

/// Go's `time.ParseDuration` (nanoseconds).
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let bad = || format!("time: invalid duration {}", crate::gotmpl::fmt::quote(s));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if n == 0 {
            return Err(bad());
        }
        let num: f64 = rest[..n].parse().map_err(|_| bad())?;
        rest = &rest[n..];
        let u = rest
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let unit = match &rest[..u] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => {
                return Err(format!(
                    "time: missing unit in duration {}",
                    crate::gotmpl::fmt::quote(s)
                ))
            }
            other => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    crate::gotmpl::fmt::quote(other),
                    crate::gotmpl::fmt::quote(s)
                ))
            }
        };
        rest = &rest[u..];
        total += num * unit;
    }
    if total > 9.223_372_036_854_775e18 {
        return Err(bad());
    }
    Ok(if neg { -(total as i64) } else { total as i64 })
}

/// Sprig's `durationRound`.
fn duration_round(d: i64) -> String {
    let u = d.unsigned_abs();
    let hour = 3_600_000_000_000u64;
    let units = [
        (hour * 24 * 365, "y"),
        (hour * 24 * 30, "mo"),
        (hour * 24, "d"),
        (hour, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ];
    for (size, name) in units {
        if u > size {
            return format!("{}{name}", u / size);
        }
    }
    "0s".into()
}

/// Registers the date functions.
pub fn register(m: &mut FuncMap) {
    m.insert("date", Signature::fixed(&[Str, Any]), |ctx, a| {
        Ok(Value::from(
            date_input(ctx, &a[1]).format(a[0].as_str().unwrap_or("")),
        ))
    });
    for name in ["dateInZone", "date_in_zone"] {
        m.insert(name, Signature::fixed(&[Str, Any, Str]), |ctx, a| {
            Ok(Value::from(
                date_input(ctx, &a[1]).format(a[0].as_str().unwrap_or("")),
            ))
        });
    }
    m.insert("htmlDate", Signature::fixed(&[Any]), |ctx, a| {
        Ok(Value::from(date_input(ctx, &a[0]).format("2006-01-02")))
    });
    m.insert("htmlDateInZone", Signature::fixed(&[Any, Str]), |ctx, a| {
        Ok(Value::from(date_input(ctx, &a[0]).format("2006-01-02")))
    });
    m.insert("toDate", Signature::fixed(&[Str, Str]), |_, a| {
        let t = parse(a[0].as_str().unwrap_or(""), a[1].as_str().unwrap_or(""));
        Ok(time_value(t.unwrap_or(Time::ZERO)))
    });
    m.insert("mustToDate", Signature::fixed(&[Str, Str]), |_, a| {
        parse(a[0].as_str().unwrap_or(""), a[1].as_str().unwrap_or("")).map(time_value)
    });
    m.insert("unixEpoch", Signature::fixed(&[Any]), |_, a| {
        let t = as_time(&a[0]).ok_or("wrong type for value; expected time.Time")?;
        Ok(Value::from(t.secs.to_string()))
    });
    for (name, must) in [
        ("dateModify", false),
        ("date_modify", false),
        ("mustDateModify", true),
        ("must_date_modify", true),
    ] {
        m.insert(name, Signature::fixed(&[Str, Any]), move |_, a| {
            let t = as_time(&a[1]).ok_or("wrong type for value; expected time.Time")?;
            match parse_duration(a[0].as_str().unwrap_or("")) {
                Ok(d) => Ok(time_value(t.add_nanos(i128::from(d)))),
                Err(e) if must => Err(e),
                Err(_) => Ok(time_value(t)),
            }
        });
    }
    m.insert("duration", Signature::fixed(&[Any]), |_, a| {
        let n = match &a[0] {
            Value::Str(s) => s.parse::<i64>().unwrap_or(0),
            Value::Int64(i) => *i,
            _ => 0,
        };
        Ok(Value::from(duration_string(n.wrapping_mul(1_000_000_000))))
    });
    m.insert("durationRound", Signature::fixed(&[Any]), |ctx, a| {
        let d = match &a[0] {
            Value::Str(s) => parse_duration(s).unwrap_or(0),
            Value::Int64(i) => *i,
            other => match as_time(other) {
                Some(t) => {
                    warn_random(ctx, "durationRound of a time");
                    let now = Time::now();
                    (now.secs - t.secs).saturating_mul(1_000_000_000)
                }
                None => 0,
            },
        };
        Ok(Value::from(duration_round(d)))
    });
    m.insert("now", Signature::fixed(&[]), |ctx, _| {
        warn_random(ctx, "now");
        Ok(time_value(Time::now()))
    });
    m.insert("ago", Signature::fixed(&[Any]), |ctx, a| {
        warn_random(ctx, "ago");
        let t = date_input(ctx, &a[0]);
        let d = Time::now().secs - t.secs;
        Ok(Value::from(duration_string(
            d.saturating_mul(1_000_000_000),
        )))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_string() {
        let t = Time::unix(1_700_000_000);
        assert_eq!(
            t.format("2006-01-02T15:04:05Z07:00"),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            t.format("Mon Jan 2 2006 03:04:05 PM MST"),
            "Tue Nov 14 2023 10:13:20 PM UTC"
        );
        assert_eq!(Time::ZERO.go_string(), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(
            t.add_nanos(5_000_000).format("05.000|05.999"),
            "20.005|20.005"
        );
    }

    #[test]
    fn parse_layouts() {
        let t = parse("2006-01-02", "2024-02-29").unwrap_or(Time::ZERO);
        assert_eq!(t.secs, 1_709_164_800);
        assert!(parse("2006-01-02", "not-a-date").is_err());
        assert!(parse("2006-01-02", "2023-02-29").is_err());
        let t = parse("02/01/2006 3:04PM", "31/12/2017 1:05PM").unwrap_or(Time::ZERO);
        assert_eq!(t.format("2006-01-02 15:04"), "2017-12-31 13:05");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_string(61_000_000_000), "1m1s");
        assert_eq!(duration_string(3_661_000_000_000), "1h1m1s");
        assert_eq!(duration_string(1_500_000), "1.5ms");
        assert_eq!(parse_duration("+90m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert!(parse_duration("x").is_err());
        assert_eq!(duration_round(7_500_000_000_000), "2h");
        assert_eq!(duration_round(86_400_000_000_000), "24h");
    }
}
