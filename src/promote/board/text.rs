//! The board as a text table, markdown and JSON.

use super::{age, Board, Cell, Change, Incoming};
use crate::output::rfc3339;

/// The legend of the `←` marker.
const LEGEND: &str = "← ENV: ENV, which promotes into this environment, has a newer version (`hydrate promote ENV` brings it); held: a policy keeps it back. (3 days): how long the version has been there.";

/// `1.4.2`, or `web 1.4.2, sidecar 0.3` when the app has several.
fn versions(c: &Cell) -> String {
    let parts: Vec<String> = c
        .versions
        .iter()
        .map(|v| match &v.label {
            Some(l) => format!("{l} {}", v.short()),
            None => v.short(),
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// `← staging`, `held: policy `redis`` for each environment promoting in.
fn marks(c: &Cell) -> Vec<String> {
    c.incoming
        .iter()
        .map(|i: &Incoming| match &i.held {
            None => format!("← {}", i.from),
            Some(why) => format!("(held: {why})"),
        })
        .collect()
}

/// `promotion from dev, 3 days ago (50c2ddc4f615)`, `none recorded`.
fn change_text(c: &Option<Change>, now: i64) -> String {
    let Some(c) = c else {
        return "none recorded".into();
    };
    let what = match &c.from {
        Some(f) => format!("{} from {f}", c.kind.name()),
        None => c.kind.name().to_string(),
    };
    let when = match age(c.time, now).as_str() {
        "now" => "just now".to_string(),
        a => format!("{a} ago"),
    };
    let merged = c
        .merged_by
        .as_deref()
        .map(|m| format!(", merged in {}", short_sha(m)))
        .unwrap_or_default();
    format!("{what}, {when} ({}{merged})", short_sha(&c.sha))
}

fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

impl Board {
    /// The header line: repository, commit, generation time.
    fn heading(&self) -> String {
        let repo = match &self.repository {
            Some(r) => match &r.url {
                Some(u) => format!("{} ({u})", r.name),
                None => r.name.clone(),
            },
            None => "(no repository)".into(),
        };
        let commit = match &self.commit {
            Some(c) => format!("commit {}", short_sha(c)),
            None => "no commit".into(),
        };
        format!("{repo} · {commit} · generated {}", rfc3339(self.generated))
    }

    /// A plain text table: one row per app, then the last change into
    /// each environment.
    pub fn text(&self) -> String {
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("APP".to_string())
            .chain(self.columns.iter().map(|c| c.name.to_uppercase()))
            .collect()];
        for a in &self.apps {
            let mut row = vec![a.app.clone()];
            row.extend(a.cells.iter().map(|c| match c {
                None => "(not deployed)".into(),
                Some(c) => {
                    let mut parts = vec![versions(c)];
                    parts.extend(c.since.map(|t| format!("({})", age(t, self.generated))));
                    parts.extend(marks(c));
                    parts.join(" ")
                }
            }));
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = format!("{}\n\n", self.heading());
        for r in rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            out.push_str(line.join("   ").trim_end());
            out.push('\n');
        }
        out.push_str("\nLast change:\n");
        let w = self
            .columns
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        for c in &self.columns {
            let text = change_text(&c.last_change, self.generated);
            out.push_str(&format!("  {:<w$}  {text}\n", c.name));
        }
        out.push_str(&format!("\n{LEGEND}\n"));
        out
    }

    /// A markdown table, the same content as [`Board::text`].
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let names: Vec<String> = self.columns.iter().map(|c| esc(&c.name)).collect();
        let mut out = format!("{}\n\n", esc(&self.heading()));
        out.push_str(&format!("| app | {} |\n", names.join(" | ")));
        out.push_str(&format!("|---|{}\n", "---|".repeat(names.len())));
        for a in &self.apps {
            let cells: Vec<String> = a
                .cells
                .iter()
                .map(|c| match c {
                    None => "(not deployed)".into(),
                    Some(c) => {
                        let mut parts = vec![format!("`{}`", esc(&versions(c)))];
                        parts.extend(c.since.map(|t| format!("({})", age(t, self.generated))));
                        parts.extend(marks(c).iter().map(|m| esc(m)));
                        parts.join(" ")
                    }
                })
                .collect();
            out.push_str(&format!("| {} | {} |\n", esc(&a.app), cells.join(" | ")));
        }
        let last: Vec<String> = self
            .columns
            .iter()
            .map(|c| esc(&change_text(&c.last_change, self.generated)))
            .collect();
        out.push_str(&format!("| *last change* | {} |\n", last.join(" | ")));
        out.push_str(&format!("\n{LEGEND}\n"));
        out
    }

    /// JSON: the header, the environments with their last change and
    /// promotion, each app's versions per environment, and every pin.
    pub fn json(&self) -> serde_json::Value {
        use serde_json::json;
        let change = |c: &Option<Change>| {
            c.as_ref().map(|c| {
                json!({
                    "kind": c.kind.name(),
                    "commit": c.sha,
                    "date": rfc3339(c.time),
                    "from": c.from,
                    "mergedBy": c.merged_by,
                })
            })
        };
        let version = |v: &super::Version| json!({"label": v.label, "tag": v.tag, "digest": v.digest, "rendered": v.rendered});
        let envs = self.columns.iter().map(|c| &c.name);
        json!({
            "repository": self.repository.as_ref().map(|r| json!({"name": r.name, "url": r.url})),
            "commit": self.commit,
            "generated": rfc3339(self.generated),
            "environments": self.columns.iter().map(|c| json!({
                "name": c.name,
                "promotedFrom": c.from,
                "lastChange": change(&c.last_change),
                "lastPromotion": change(&c.last_promotion),
            })).collect::<Vec<_>>(),
            "apps": self.apps.iter().map(|a| json!({
                "app": a.app,
                "environments": envs.clone().zip(&a.cells).map(|(e, c)| (e.clone(), match c {
                    None => serde_json::Value::Null,
                    Some(c) => json!({
                        "versions": c.versions.iter().map(version).collect::<Vec<_>>(),
                        "since": c.since.map(rfc3339),
                        "incoming": c.incoming.iter().map(|i| json!({
                            "from": i.from,
                            "versions": i.versions.iter().map(version).collect::<Vec<_>>(),
                            "heldBy": i.held,
                        })).collect::<Vec<_>>(),
                    }),
                })).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "pins": self.rows.iter().map(|r| json!({
                "app": r.app,
                "pin": r.pin,
                "values": envs.clone().zip(&r.values).map(|(e, v)| (e.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
                "awaitsPromotion": envs.clone().zip(&r.awaits).filter(|(_, a)| **a).map(|(e, _)| e.clone()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }
}
