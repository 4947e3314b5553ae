//! The pins board behind `hydrate pins`: every pin of every app in each
//! environment, which environments await a promotion (their value differs
//! from the environment that promotes into them), and the last promotion
//! into each; printed as a text table, JSON, markdown or one static HTML
//! page with no external assets.

use std::path::Path;

use super::history::{history, Kind};
use super::pins::{self, Pin};
use super::Error;
use crate::env::{self, PinDecl};

/// One pin across environments.
#[derive(Clone, Debug)]
pub struct BoardRow {
    /// The app.
    pub app: String,
    /// The pin.
    pub pin: String,
    /// Its value per environment (None: not set or app absent).
    pub values: Vec<Option<String>>,
    /// Per environment: whether it awaits a promotion.
    pub awaits: Vec<bool>,
}

/// The board.
#[derive(Clone, Debug)]
pub struct Board {
    /// Environment names, in file order.
    pub envs: Vec<String>,
    /// Per environment: the last promotion into it (sha, time).
    pub last: Vec<Option<(String, i64)>>,
    /// The pins.
    pub rows: Vec<BoardRow>,
}

/// Builds the board for `only` environments (all when empty).
pub fn board(root: &Path, only: &[String]) -> Result<Board, Error> {
    let all = env::load_environments(root)?;
    for o in only {
        if !all.iter().any(|e| &e.name == o) {
            return Err(Error::Usage(format!("no environment named `{o}`")));
        }
    }
    let envs: Vec<_> = all
        .iter()
        .filter(|e| only.is_empty() || only.contains(&e.name))
        .collect();
    let decls = |app: &str| -> Vec<PinDecl> {
        let mut out: Vec<PinDecl> = Vec::new();
        for e in &all {
            for a in e.apps.iter().filter(|a| a.name == app) {
                out.extend(
                    a.pins
                        .iter()
                        .filter(|d| !out.contains(d))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
        }
        out
    };
    let mut per_env: Vec<Vec<Pin>> = Vec::new();
    for e in &all {
        per_env.push(pins::env_pins(root, e, &decls)?);
    }
    let value = |env: &str, app: &str, pin: &str| -> Option<String> {
        let i = all.iter().position(|e| e.name == env)?;
        per_env[i]
            .iter()
            .find(|p| p.app == app && p.name == pin)
            .and_then(|p| p.value.clone())
    };
    let mut keys: Vec<(String, String)> = Vec::new();
    for e in &envs {
        let i = all.iter().position(|x| x.name == e.name).unwrap_or(0);
        for p in &per_env[i] {
            let k = (p.app.clone(), p.name.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort();
    let awaits = |env: &str, app: &str, pin: &str| {
        all.iter()
            .filter(|p| p.promotes_to.as_deref() == Some(env))
            .any(|p| {
                let up = value(&p.name, app, pin);
                up.is_some() && up != value(env, app, pin)
            })
    };
    let rows = keys
        .into_iter()
        .map(|(app, pin)| BoardRow {
            values: envs.iter().map(|e| value(&e.name, &app, &pin)).collect(),
            awaits: envs.iter().map(|e| awaits(&e.name, &app, &pin)).collect(),
            app,
            pin,
        })
        .collect();
    let last = envs
        .iter()
        .map(|e| {
            history(root, &e.name).ok().and_then(|h| {
                h.into_iter()
                    .find(|x| x.kind == Kind::Promotion)
                    .map(|x| (x.sha, x.time))
            })
        })
        .collect();
    Ok(Board {
        envs: envs.iter().map(|e| e.name.clone()).collect(),
        last,
        rows,
    })
}

fn cell(v: &Option<String>, awaits: bool) -> String {
    let mut s = v.as_deref().map_or("-".to_string(), super::message::short);
    if awaits {
        s.push_str(" (awaits promotion)");
    }
    s
}

fn last_text(l: &Option<(String, i64)>) -> String {
    match l {
        Some((sha, t)) => format!(
            "{} {}",
            &sha[..sha.len().min(12)],
            crate::output::rfc3339(*t)
        ),
        None => "never".into(),
    }
}

impl Board {
    /// A plain text table.
    pub fn text(&self) -> String {
        let mut rows: Vec<Vec<String>> = vec![{
            let mut h = vec!["APP".to_string(), "PIN".to_string()];
            h.extend(self.envs.iter().map(|e| e.to_uppercase()));
            h
        }];
        for r in &self.rows {
            let mut row = vec![r.app.clone(), r.pin.clone()];
            row.extend(r.values.iter().zip(&r.awaits).map(|(v, a)| cell(v, *a)));
            rows.push(row);
        }
        let mut last = vec!["last promotion".to_string(), String::new()];
        last.extend(self.last.iter().map(last_text));
        rows.push(last);
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for r in rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        out
    }

    /// JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "environments": self.envs.iter().zip(&self.last).map(|(e, l)| serde_json::json!({
                "name": e,
                "lastPromotion": l.as_ref().map(|(sha, t)| serde_json::json!({"commit": sha, "date": crate::output::rfc3339(*t)})),
            })).collect::<Vec<_>>(),
            "pins": self.rows.iter().map(|r| serde_json::json!({
                "app": r.app,
                "pin": r.pin,
                "values": self.envs.iter().zip(&r.values).map(|(e, v)| (e.clone(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
                "awaitsPromotion": self.envs.iter().zip(&r.awaits).filter(|(_, a)| **a).map(|(e, _)| e.clone()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// A markdown table.
    pub fn markdown(&self) -> String {
        let mut out = format!("| app | pin | {} |\n", self.envs.join(" | "));
        out.push_str(&format!("|---|---|{}\n", "---|".repeat(self.envs.len())));
        for r in &self.rows {
            let cells: Vec<String> = r
                .values
                .iter()
                .zip(&r.awaits)
                .map(|(v, a)| {
                    let c = format!(
                        "`{}`",
                        v.as_deref().map_or("-".into(), super::message::short)
                    );
                    if *a {
                        format!("{c} ⏳")
                    } else {
                        c
                    }
                })
                .collect();
            out.push_str(&format!(
                "| {} | `{}` | {} |\n",
                r.app,
                r.pin,
                cells.join(" | ")
            ));
        }
        let last: Vec<String> = self.last.iter().map(last_text).collect();
        out.push_str(&format!("| last promotion | | {} |\n", last.join(" | ")));
        out.push_str("\n⏳ awaits promotion\n");
        out
    }

    /// One static HTML page: inline CSS, no scripts, no external assets.
    pub fn html(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut out = String::from(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hydrate: environments</title>\n<style>\nbody{font-family:system-ui,sans-serif;margin:2rem;color:#222}\ntable{border-collapse:collapse}\nth,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;font-size:.9rem}\nth{background:#f3f3f3}\ntd.awaits{background:#fff4d6}\ncode{font-family:ui-monospace,monospace}\n</style>\n</head>\n<body>\n<h1>Environments</h1>\n<table>\n<tr><th>app</th><th>pin</th>",
        );
        for e in &self.envs {
            out.push_str(&format!("<th>{}</th>", esc(e)));
        }
        out.push_str("</tr>\n");
        for r in &self.rows {
            out.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td>",
                esc(&r.app),
                esc(&r.pin)
            ));
            for (v, a) in r.values.iter().zip(&r.awaits) {
                let text = esc(v.as_deref().unwrap_or("-"));
                if *a {
                    out.push_str(&format!("<td class=\"awaits\" title=\"awaits promotion\"><code>{text}</code> ⏳</td>"));
                } else {
                    out.push_str(&format!("<td><code>{text}</code></td>"));
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("<tr><th colspan=\"2\">last promotion</th>");
        for l in &self.last {
            out.push_str(&format!("<td>{}</td>", esc(&last_text(l))));
        }
        out.push_str("</tr>\n</table>\n<p>⏳ awaits promotion: the environment that promotes into it has another value.</p>\n</body>\n</html>\n");
        out
    }
}
