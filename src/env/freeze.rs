//! Freeze windows of a `promotion.freeze` gate, parsed from the text the
//! environment file gives: a weekly window (`Fri 16:00 – Mon 08:00
//! Europe/Berlin`) or a span of dates (`2026-12-20 – 2027-01-04`, both days
//! included; times allowed: `2026-12-20 18:00 – 2027-01-04 08:00 UTC`). The
//! time zone is an IANA name (chrono-tz), UTC when left out. It reads no
//! clock: the caller passes the instant it asks about.

use chrono::{
    DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike, Weekday,
};
use chrono_tz::{OffsetName, Tz};

const WEEK_MINUTES: i64 = 7 * 24 * 60;

/// One freeze window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Freeze {
    /// As written.
    pub text: String,
    /// Its line in the environment file.
    pub line: u32,
    span: Span,
    tz: Tz,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Span {
    /// Minutes from Monday 00:00, local time; the end excluded.
    Weekly { start: i64, end: i64 },
    /// Local date-times; the end excluded.
    Dates {
        start: NaiveDateTime,
        end: NaiveDateTime,
    },
}

impl Freeze {
    /// Parses `text`; the error says what is expected.
    pub fn parse(text: &str, line: u32) -> Result<Freeze, String> {
        let (left, right) = split(text).ok_or_else(|| {
            format!("freeze `{text}`: expected `START – END [ZONE]`, e.g. `Fri 16:00 – Mon 08:00 Europe/Berlin` or `2026-12-20 – 2027-01-04`")
        })?;
        let mut words: Vec<&str> = right.split_whitespace().collect();
        let tz = match words.last().and_then(|w| w.parse::<Tz>().ok()) {
            Some(tz) => {
                words.pop();
                tz
            }
            None if words.last().is_some_and(|w| w.contains('/')) => {
                return Err(format!(
                    "freeze `{text}`: unknown time zone `{}` (an IANA name, as `Europe/Berlin`)",
                    words.last().copied().unwrap_or_default()
                ))
            }
            None => Tz::UTC,
        };
        let left: Vec<&str> = left.split_whitespace().collect();
        let bad = |what: &str| format!("freeze `{text}`: {what}");
        let span = match (weekly(&left), weekly(&words)) {
            (Some(start), Some(end)) if start != end => Span::Weekly { start, end },
            (Some(_), Some(_)) => return Err(bad("the window starts where it ends")),
            _ => {
                let start = moment(&left, false).ok_or_else(|| {
                    bad("expected `Fri 16:00` or `2026-12-20` [`18:00`] before the dash")
                })?;
                let end = moment(&words, true).ok_or_else(|| bad("expected `Mon 08:00` or `2027-01-04` [`08:00`] after the dash, then an optional time zone"))?;
                if end <= start {
                    return Err(bad("the window ends before it starts"));
                }
                Span::Dates { start, end }
            }
        };
        Ok(Freeze {
            text: text.to_string(),
            line,
            span,
            tz,
        })
    }

    /// When the window that holds `now` (Unix seconds) opens again, as
    /// Unix seconds; None when `now` is outside it.
    pub fn until(&self, now: i64) -> Option<i64> {
        let local = self.tz.timestamp_opt(now, 0).single()?.naive_local();
        match &self.span {
            Span::Dates { start, end } => {
                (start <= &local && &local < end).then(|| self.instant(*end))
            }
            Span::Weekly { start, end } => {
                let n = minute_of_week(&local);
                let inside = if start < end {
                    *start <= n && n < *end
                } else {
                    n >= *start || n < *end
                };
                if !inside {
                    return None;
                }
                let at_minute = local.with_second(0)?;
                let open = at_minute + Duration::minutes((end - n).rem_euclid(WEEK_MINUTES));
                Some(self.instant(open))
            }
        }
    }

    /// `instant` (Unix seconds) as the window's zone reads it: `Mon 08:00
    /// CET` for a weekly window, `2027-01-05 00:00 UTC` for dates.
    pub fn describe(&self, instant: i64) -> String {
        let Some(t) = self.tz.timestamp_opt(instant, 0).single() else {
            return instant.to_string();
        };
        let zone = t.offset().abbreviation().unwrap_or(self.tz.name());
        match self.span {
            Span::Weekly { .. } => format!(
                "{} {:02}:{:02} {zone}",
                day_name(t.weekday()),
                t.hour(),
                t.minute()
            ),
            Span::Dates { .. } => format!(
                "{:04}-{:02}-{:02} {:02}:{:02} {zone}",
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute()
            ),
        }
    }

    /// A local time as Unix seconds: the earlier of two (a clock set back),
    /// an hour on when the clock skipped it.
    fn instant(&self, local: NaiveDateTime) -> i64 {
        let at = |l: NaiveDateTime| {
            self.tz
                .from_local_datetime(&l)
                .earliest()
                .map(|t: DateTime<Tz>| t.timestamp())
        };
        at(local)
            .or_else(|| at(local + Duration::hours(1)))
            .unwrap_or_else(|| local.and_utc().timestamp())
    }
}

/// The two sides of `START – END`: an en or em dash, or a hyphen with
/// spaces around it (dates hold hyphens of their own).
fn split(text: &str) -> Option<(&str, &str)> {
    let (l, r) = text
        .split_once('–')
        .or_else(|| text.split_once('—'))
        .or_else(|| text.split_once(" - "))?;
    Some((l.trim(), r.trim()))
}

/// `Fri 16:00` as minutes from Monday 00:00.
fn weekly(words: &[&str]) -> Option<i64> {
    let [day, time] = words else { return None };
    let day: Weekday = day.parse().ok()?;
    let t = NaiveTime::parse_from_str(time, "%H:%M").ok()?;
    Some(i64::from(day.num_days_from_monday()) * 1440 + i64::from(t.hour() * 60 + t.minute()))
}

/// `2026-12-20` or `2026-12-20 18:00`; a date alone as an end means the
/// end of that day.
fn moment(words: &[&str], end: bool) -> Option<NaiveDateTime> {
    let date = NaiveDate::parse_from_str(words.first()?, "%Y-%m-%d").ok()?;
    match words {
        [_] if end => date.succ_opt()?.and_hms_opt(0, 0, 0),
        [_] => date.and_hms_opt(0, 0, 0),
        [_, time] => Some(date.and_time(NaiveTime::parse_from_str(time, "%H:%M").ok()?)),
        _ => None,
    }
}

fn minute_of_week(t: &NaiveDateTime) -> i64 {
    i64::from(t.weekday().num_days_from_monday()) * 1440 + i64::from(t.hour() * 60 + t.minute())
}

fn day_name(d: Weekday) -> &'static str {
    ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][d.num_days_from_monday() as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .timestamp()
    }

    #[test]
    fn a_weekly_window_across_the_weekend() {
        let f = Freeze::parse("Fri 16:00 – Mon 08:00 Europe/Berlin", 3).unwrap();
        // 2026-12-04 is a Friday; Berlin is UTC+1 in winter.
        assert_eq!(f.until(at("2026-12-04T14:59:00Z")), None);
        let open = f.until(at("2026-12-04T15:00:00Z")).unwrap();
        assert_eq!(open, at("2026-12-07T07:00:00Z"));
        assert_eq!(f.describe(open), "Mon 08:00 CET");
        assert_eq!(f.until(at("2026-12-06T12:34:56Z")), Some(open));
        assert_eq!(f.until(at("2026-12-07T07:00:00Z")), None);
        // Summer time: the same window in CEST.
        let open = f.until(at("2026-07-04T10:00:00Z")).unwrap();
        assert_eq!(f.describe(open), "Mon 08:00 CEST");
    }

    #[test]
    fn a_span_of_dates_includes_its_last_day() {
        let f = Freeze::parse("2026-12-20 – 2027-01-04", 1).unwrap();
        assert_eq!(f.until(at("2026-12-19T23:59:59Z")), None);
        let open = f.until(at("2027-01-04T23:00:00Z")).unwrap();
        assert_eq!(f.describe(open), "2027-01-05 00:00 UTC");
        assert_eq!(f.until(open), None);
        let f = Freeze::parse("2026-12-20 18:00 - 2026-12-21 08:00 America/New_York", 1).unwrap();
        assert_eq!(
            f.until(at("2026-12-20T23:30:00Z")),
            Some(at("2026-12-21T13:00:00Z"))
        );
    }

    #[test]
    fn bad_windows_say_what_is_expected() {
        for bad in [
            "Fri 16:00",
            "Fri 16:00 – Mon 08:00 Mars/Olympus",
            "2027-01-04 – 2026-12-20",
            "Fri 16:00 – Fri 16:00",
            "Fri 25:00 – Mon 08:00",
        ] {
            assert!(Freeze::parse(bad, 1).is_err(), "{bad}");
        }
    }
}
