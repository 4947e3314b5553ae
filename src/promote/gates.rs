//! The gates of TO's `promotion:` (soak, freeze, requires, after) and the
//! wave order among the targets of one source, decided from git history
//! and the clock only: the commit trailers `history` reads, the approval
//! notes, the environments' pins, and `now`, which the caller injects (the
//! library reads no clock). A gate that holds adds a refusal for the app
//! that names the gate and when it opens; `--force` lets it through and the
//! commit records `Hydrate-Forced: <gate>`.

use super::history::{brought, HistoryEntry, APPROVED_BY};
use super::pin::Pin;
use super::plan::{Plan, Refusal};
use crate::env::Environment;

/// The notes ref `hydrate approve` writes and the gates read.
pub const APPROVALS_REF: &str = "refs/notes/hydrate-approvals";

/// What the gates read.
pub struct Inputs<'a> {
    /// FROM.
    pub from: &'a Environment,
    /// TO.
    pub to: &'a Environment,
    /// FROM's pins.
    pub from_pins: &'a [Pin],
    /// Every recorded change, the last to reach the branch first.
    pub history: &'a [HistoryEntry],
    /// The `Hydrate-Approved-By` lines of a commit's approval note.
    pub notes: &'a dyn Fn(&str) -> Vec<String>,
    /// The environments an `after:` gate or a lower wave names, each with
    /// its pins.
    pub others: &'a [(&'a Environment, Vec<Pin>)],
    /// (environment, app) pairs promoted earlier in this run: they do not
    /// carry a version yet for `after:` and waves (nothing has deployed it).
    pub fresh: &'a [(String, String)],
    /// The clock, Unix seconds.
    pub now: i64,
}

/// The environments TO must wait for: its `after:` list, and the targets of
/// FROM in a lower wave than TO's.
pub fn waits_for<'e>(
    envs: &'e [Environment],
    from: &Environment,
    to: &Environment,
) -> Vec<&'e Environment> {
    let mut out: Vec<&Environment> = Vec::new();
    let named = to.promotion.after.iter().map(|(n, _)| n.as_str());
    let lower = from.promotes_to.iter().map(String::as_str).filter(|t| {
        let wave = envs.iter().find(|e| e.name == *t).and_then(|e| e.wave);
        matches!((wave, to.wave), (Some(w), Some(mine)) if w < mine)
    });
    for n in named.chain(lower) {
        if let Some(e) = envs.iter().find(|e| e.name == n) {
            if !out.iter().any(|o| o.name == e.name) {
                out.push(e);
            }
        }
    }
    out
}

/// Adds a refusal for each gate that holds an app of `plan`.
pub fn check(plan: &mut Plan, g: &Inputs) {
    let mut apps: Vec<&str> = plan
        .items
        .iter()
        .map(|i| i.app.as_str())
        .chain(plan.copies.iter().map(|c| c.app.as_str()))
        .collect();
    apps.sort_unstable();
    apps.dedup();
    let mut refusals = Vec::new();
    for app in apps {
        let why = holds(plan, g, app);
        refusals.extend(why.into_iter().map(|(gate, why)| Refusal::Gate {
            app: app.to_string(),
            gate,
            why,
        }));
    }
    plan.refusals.extend(refusals);
}

/// Each gate holding `app`: its name and why, with when it opens.
fn holds(plan: &Plan, g: &Inputs, app: &str) -> Vec<(&'static str, String)> {
    let p = &g.to.promotion;
    let mut out = Vec::new();
    let change = brought(g.history, &g.from.name, g.from_pins, app);
    if let Some(soak) = p.soak {
        match change {
            None => out.push((
                "soak",
                format!(
                    "soak: no recorded change brought {app}'s pins into {} (set by hand?), so its age is unknown",
                    g.from.name
                ),
            )),
            Some(c) => {
                let ready = c.reached_at.saturating_add_unsigned(soak);
                if ready > g.now {
                    out.push(("soak", format!("soak: {} left", left(ready - g.now))));
                }
            }
        }
    }
    for f in &p.freeze {
        if let Some(open) = f.until(g.now) {
            out.push(("freeze", format!("freeze until {}", f.describe(open))));
            break;
        }
    }
    for role in &p.requires {
        let approved = change.is_some_and(|c| {
            c.approved_by
                .iter()
                .cloned()
                .chain((g.notes)(&c.sha))
                .any(|a| a.split_whitespace().next() == Some(role.as_str()))
        });
        if !approved {
            let what = change.map_or(format!("{}'s change", g.from.name), |c| {
                format!("{}'s change {}", g.from.name, short(&c.sha))
            });
            out.push((
                "requires",
                format!(
                    "requires: {role} has not approved {what} (hydrate approve {} --as {role})",
                    g.from.name
                ),
            ));
        }
    }
    let wanted: Vec<(&str, &str)> = plan
        .items
        .iter()
        .filter(|i| i.app == app)
        .filter_map(|i| Some((i.pin.as_str(), i.new.as_deref()?)))
        .collect();
    for (env, pins) in g.others {
        // An environment without the app does not gate it.
        if !pins.iter().any(|p| p.app == app) {
            continue;
        }
        let fresh = g.fresh.iter().any(|(e, a)| e == &env.name && a == app);
        let carries = !fresh
            && wanted.iter().all(|(pin, v)| {
                pins.iter()
                    .any(|p| p.app == app && p.name == *pin && p.value.as_deref() == Some(v))
            });
        if carries {
            continue;
        }
        let version = wanted.first().map_or("", |(_, v)| v);
        let when = if fresh {
            "; promoted in this run, the next run follows"
        } else {
            ""
        };
        let named = p.after.iter().any(|(n, _)| n == &env.name);
        let (gate, label) = match (named, g.to.wave) {
            (true, _) | (false, None) => ("after", "after".to_string()),
            (false, Some(w)) => ("wave", format!("wave {w}")),
        };
        out.push((
            gate,
            format!(
                "{label}: {} does not carry {app} {version} yet{when}",
                env.name
            ),
        ));
    }
    out
}

/// `5 h 12 min`, `40 min`, `2 days 3 h`, `30 s`, rounded up to the minute.
pub fn left(seconds: i64) -> String {
    if seconds < 60 {
        return format!("{} s", seconds.max(0));
    }
    let m = (seconds + 59) / 60;
    let (d, h, m) = (m / 1440, m / 60 % 24, m % 60);
    let days = match d {
        0 => String::new(),
        1 => "1 day ".to_string(),
        _ => format!("{d} days "),
    };
    match (h, m) {
        (0, 0) => days,
        (0, m) => format!("{days}{m} min"),
        (h, 0) => format!("{days}{h} h"),
        (h, m) => format!("{days}{h} h {m} min"),
    }
    .trim_end()
    .to_string()
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The `Hydrate-Approved-By` values of a note's text.
pub fn approvals_in(note: &str) -> Vec<String> {
    crate::git::trailers(&format!("x\n\n{note}"))
        .into_iter()
        .filter(|(k, _)| k == APPROVED_BY)
        .map(|(_, v)| v)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_reads_as_people_say_it() {
        assert_eq!(left(5 * 3600 + 12 * 60), "5 h 12 min");
        assert_eq!(left(5 * 3600 + 11 * 60 + 1), "5 h 12 min");
        assert_eq!(left(40 * 60), "40 min");
        assert_eq!(left(3600), "1 h");
        assert_eq!(left(86_400 + 3 * 3600), "1 day 3 h");
        assert_eq!(left(2 * 86_400), "2 days");
        assert_eq!(left(30), "30 s");
    }

    #[test]
    fn approvals_are_read_from_note_lines() {
        let note = "Hydrate-Approved-By: qa <ann@example.com>\nHydrate-Approved-By: sec <bo@example.com>\n";
        assert_eq!(
            approvals_in(note),
            ["qa <ann@example.com>", "sec <bo@example.com>"]
        );
        assert!(approvals_in("just text\n").is_empty());
    }
}
