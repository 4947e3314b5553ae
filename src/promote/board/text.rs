//! The board as a text table, markdown and JSON.

use super::{age, Board, Cell, Change, Gate, Incoming};
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

/// `soak 24h: held: web (soak: 23 h left)`, `wave 1: open`,
/// `freeze …: closed until Mon 08:00 CET`.
fn gate_text(g: &Gate) -> String {
    match (&g.closed, g.holds.as_slice()) {
        (Some(until), _) => format!("{}: closed until {until}", g.text),
        (None, []) => format!("{}: open", g.text),
        (None, holds) => {
            let held: Vec<String> = holds.iter().map(|(a, w)| format!("{a} ({w})")).collect();
            format!("{}: held: {}", g.text, held.join(", "))
        }
    }
}

impl Board {
    /// Whether the board has a graph worth drawing apart from the table:
    /// an environment promotes into several, or one has gates. A plain
    /// chain without gates reads as well in the table's columns, which
    /// are in promotion order.
    fn draws_graph(&self) -> bool {
        self.layers.iter().any(|l| l.len() > 1) || self.columns.iter().any(|c| !c.gates.is_empty())
    }

    /// The environments in graph order, layer by layer, each with its
    /// `promotesTo` edges, its gates' states and every app's version, how
    /// long it has been there and what comes next: one line per fact, with
    /// its depth (0: the layers; 1: an environment; 2: its gates and apps);
    /// `code` marks a version up (markdown's back quotes).
    fn graph_lines(&self, code: &dyn Fn(&str) -> String) -> Vec<(usize, String)> {
        let mut out = vec![(
            0,
            self.layers
                .iter()
                .map(|l| l.join(", "))
                .collect::<Vec<_>>()
                .join(" → "),
        )];
        for name in self.layers.iter().flatten() {
            let Some(i) = self.columns.iter().position(|c| &c.name == name) else {
                continue;
            };
            let c = &self.columns[i];
            let mut head = c.name.clone();
            if let Some(w) = c.wave {
                head.push_str(&format!(" (wave {w})"));
            }
            if !c.to.is_empty() {
                head.push_str(&format!(" → {}", c.to.join(", ")));
            }
            out.push((1, head));
            for g in &c.gates {
                out.push((2, format!("gate {}", gate_text(g))));
            }
            for a in &self.apps {
                let Some(cell) = &a.cells[i] else { continue };
                let mut line = format!("{} {}", a.app, code(&versions(cell)));
                if let Some(t) = cell.since {
                    line.push_str(&format!(" for {}", age(t, self.generated)));
                }
                for inc in &cell.incoming {
                    let theirs: Vec<String> = inc.versions.iter().map(|v| v.short()).collect();
                    let theirs = code(&theirs.join(", "));
                    match &inc.held {
                        None => line.push_str(&format!("; ← {} {theirs} ready", inc.from)),
                        Some(why) => line.push_str(&format!("; {} {theirs} held: {why}", inc.from)),
                    }
                }
                out.push((2, line));
            }
        }
        out
    }

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
        if self.draws_graph() {
            for (depth, line) in self.graph_lines(&|s| s.to_string()) {
                out.push_str(&format!("{}{line}\n", "  ".repeat(depth)));
            }
            out.push('\n');
        }
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
        if self.draws_graph() {
            for (depth, line) in self.graph_lines(&|s| format!("`{s}`")) {
                match depth {
                    0 => out.push_str(&format!("**{line}**\n\n")),
                    d => out.push_str(&format!("{}- {line}\n", "  ".repeat(d - 1))),
                }
            }
            out.push('\n');
        }
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
            "graph": {
                "layers": self.layers,
                "edges": self.columns.iter().flat_map(|c| c.to.iter().map(move |t| json!({"from": c.name, "to": t}))).collect::<Vec<_>>(),
            },
            "environments": self.columns.iter().map(|c| json!({
                "name": c.name,
                "promotedFrom": c.from,
                "promotesTo": c.to,
                "wave": c.wave,
                "gates": c.gates.iter().map(|g| json!({
                    "gate": g.kind,
                    "text": g.text,
                    "state": g.state(),
                    "until": g.closed,
                    "holds": g.holds.iter().map(|(a, w)| json!({"app": a, "why": w})).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
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
