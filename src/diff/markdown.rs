//! `--output markdown`: a merge-request or pull-request comment. A summary
//! table per comparison and app, then one collapsible `<details>` block per
//! resource holding a ```` ```diff ```` block. GitHub refuses comments over
//! 65,536 characters, so the text stops at a resource boundary before
//! [`MARKDOWN_LIMIT`] and says what it left out. When both sides were
//! validated, what the change makes invalid (and fixes) comes first, at
//! most [`FINDINGS_LISTED`] findings a table.

use std::fmt::Write;

use super::text::{label, summary_line, unified, value_text};
use super::{ChangeKind, Comparison, FieldSources, ResourceDiff, Status, Summary, Validity};
use crate::validate::Finding;

/// The most characters `to_markdown` returns.
pub const MARKDOWN_LIMIT: usize = 65_000;

/// Room kept for the note about what was left out.
const NOTE_ROOM: usize = 600;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

/// Where the fields of one app's resources were set, on each side.
#[derive(Clone, Copy)]
struct Located<'a> {
    sources: &'a FieldSources,
    from: &'a str,
    to: &'a str,
    app: &'a str,
}

impl Located<'_> {
    /// `  ← file:line` of `path` of `r` on the FROM (`to` false) or TO side,
    /// or nothing when not known.
    fn suffix(&self, r: &ResourceDiff, path: &str, to: bool) -> String {
        let (side, name) = match to {
            false => (self.from, &r.from),
            true => (self.to, &r.to),
        };
        let Some((name, _)) = name else {
            return String::new();
        };
        let resource = format!("{}/{name}", r.kind);
        self.sources
            .get(side, self.app, &resource, path)
            .map(|at| format!("  ← {at}"))
            .unwrap_or_default()
    }
}

fn change_lines(r: &ResourceDiff, expected: bool, at: Located<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let changes = if expected { &r.expected } else { &r.changes };
    for c in changes {
        let path = c.path_text();
        let (was, now) = (at.suffix(r, &path, false), at.suffix(r, &path, true));
        match &c.kind {
            ChangeKind::Changed { from, to } => {
                out.push(format!("- {path}: {}{was}", value_text(from)));
                out.push(format!("+ {path}: {}{now}", value_text(to)));
            }
            ChangeKind::Added(v) => out.push(format!("+ {path}: {}{now}", value_text(v))),
            ChangeKind::Removed(v) => out.push(format!("- {path}: {}{was}", value_text(v))),
            ChangeKind::Text { from, to } => {
                out.push(format!("  {path}:{now}"));
                for l in unified(from, to) {
                    let (sign, rest) = l.split_at(l.chars().next().map_or(0, char::len_utf8));
                    if sign == "@" {
                        out.push(format!("  {l}"));
                    } else {
                        out.push(format!("{sign}   {rest}"));
                    }
                }
            }
        }
    }
    out
}

fn whole(r: &ResourceDiff) -> Vec<String> {
    let sign = if r.status == Status::Added { '+' } else { '-' };
    let text = r
        .node
        .as_deref()
        .and_then(|n| crate::yaml::to_string(n).ok())
        .unwrap_or_default();
    text.lines().map(|l| format!("{sign} {l}")).collect()
}

fn details(summary: &str, lines: &[String]) -> String {
    let longest = lines
        .iter()
        .map(|l| l.split(|c| c != '`').map(str::len).max().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut s = format!(
        "<details><summary>{}</summary>\n\n{fence}diff\n",
        escape(summary)
    );
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    let _ = write!(s, "{fence}\n\n</details>\n\n");
    s
}

fn blocks(r: &ResourceDiff, at: Located<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let fields = |n: usize| format!("{n} field{}", if n == 1 { "" } else { "s" });
    match r.status {
        Status::Added => out.push(details(&format!("+ {} (added)", label(r)), &whole(r))),
        Status::Removed => out.push(details(&format!("- {} (removed)", label(r)), &whole(r))),
        Status::Changed => {
            if !r.changes.is_empty() {
                let summary = format!("~ {} ({})", label(r), fields(r.changes.len()));
                out.push(details(&summary, &change_lines(r, false, at)));
            }
            if !r.expected.is_empty() {
                let summary = format!("= {} ({} expected)", label(r), fields(r.expected.len()));
                out.push(details(&summary, &change_lines(r, true, at)));
            }
        }
    }
    out
}

fn table(comparisons: &[Comparison]) -> String {
    let mut s = String::from(
        "| comparison | app | changed | added | removed | expected |\n|---|---|---:|---:|---:|---:|\n",
    );
    for c in comparisons {
        for a in &c.apps {
            let count =
                |f: &dyn Fn(&ResourceDiff) -> bool| a.resources.iter().filter(|r| f(r)).count();
            let _ = writeln!(
                s,
                "| {} → {} | {} | {} | {} | {} | {} |",
                escape(&c.from),
                escape(&c.to),
                escape(&a.app),
                count(&|r| r.status == Status::Changed && !r.changes.is_empty()),
                count(&|r| r.status == Status::Added),
                count(&|r| r.status == Status::Removed),
                a.resources.iter().map(|r| r.expected.len()).sum::<usize>(),
            );
        }
    }
    s
}

/// The most findings listed per table; the rest are counted.
const FINDINGS_LISTED: usize = 30;

/// `apps/shop/deployment.yaml:9`, or the template, or nothing.
fn source(f: &Finding) -> String {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        _ => String::new(),
    }
}

fn findings_table(findings: &[Finding]) -> String {
    let mut s = String::from(
        "| env | app | object | path | finding | source |\n|---|---|---|---|---|---|\n",
    );
    for f in findings.iter().take(FINDINGS_LISTED) {
        let code = |t: &str| match t.is_empty() {
            true => String::new(),
            false => format!("`{}`", escape(t).replace('`', "'")),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}: {} | {} |",
            escape(&f.env),
            escape(&f.app),
            escape(&f.object()),
            code(&f.path),
            f.severity.name(),
            escape(&f.message),
            code(&source(f)),
        );
    }
    if findings.len() > FINDINGS_LISTED {
        let _ = writeln!(
            s,
            "\n{} more; run `hydrate validate` for all of them.",
            findings.len() - FINDINGS_LISTED
        );
    }
    s.push('\n');
    s
}

/// What each comparison makes invalid and what it fixes (nothing when
/// its validation findings are the same on both sides): first in the
/// comment, since an invalid object fails the sync whatever else changed.
fn validity_section(comparisons: &[Comparison]) -> String {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let mut s = String::new();
    for c in comparisons.iter().filter(|c| !c.validity.is_empty()) {
        let v = &c.validity;
        let pair = format!("{} → {}", escape(&c.from), escape(&c.to));
        if !v.introduced.is_empty() {
            let what = Validity::headline(&v.introduced);
            let _ = write!(s, "### {pair}: this change {what}\n\n");
            s.push_str(&findings_table(&v.introduced));
        }
        if !v.fixed.is_empty() {
            let _ = write!(
                s,
                "### {pair}: this change fixes {}\n\n",
                plural(v.fixed.len(), "finding")
            );
            s.push_str(&findings_table(&v.fixed));
        }
    }
    s
}

/// The markdown comment, at most [`MARKDOWN_LIMIT`] characters.
pub fn to_markdown(comparisons: &[Comparison]) -> String {
    to_markdown_with(comparisons, &FieldSources::default())
}

/// [`to_markdown`], each changed field's line ending with the `file:line`
/// that set it on its side (`- ` FROM, `+ ` TO), where `sources` knows it.
pub fn to_markdown_with(comparisons: &[Comparison], sources: &FieldSources) -> String {
    let mut out = format!(
        "## hydrate diff\n\n**{}**\n\n",
        summary_line(&Summary::of(comparisons))
    );
    out.push_str(&validity_section(comparisons));
    let t = table(comparisons);
    if out.chars().count() + t.chars().count() + NOTE_ROOM < MARKDOWN_LIMIT / 2 {
        out.push_str(&t);
        out.push('\n');
    }
    let mut size = out.chars().count();
    // Resources left out, counted per comparison and app.
    let mut left_out: Vec<(String, usize)> = Vec::new();
    for c in comparisons {
        for a in &c.apps {
            let heading = format!(
                "### {} → {}: {}\n\n",
                escape(&c.from),
                escape(&c.to),
                escape(&a.app)
            );
            let mut headed = false;
            for r in &a.resources {
                let at = Located {
                    sources,
                    from: &c.from,
                    to: &c.to,
                    app: &a.app,
                };
                let bs = blocks(r, at);
                let mut chunk: String = bs.concat();
                if !headed {
                    chunk.insert_str(0, &heading);
                }
                let n = chunk.chars().count();
                if !left_out.is_empty() || size + n + NOTE_ROOM > MARKDOWN_LIMIT {
                    let group = format!("{} → {}: {}", c.from, c.to, a.app);
                    match left_out.last_mut() {
                        Some((g, k)) if *g == group => *k += 1,
                        _ => left_out.push((group, 1)),
                    }
                    continue;
                }
                headed = true;
                size += n;
                out.push_str(&chunk);
            }
        }
    }
    if !left_out.is_empty() {
        out.push_str(&note(&left_out));
    }
    out
}

/// What was left out: how many resources, in which apps (as many as fit).
fn note(left_out: &[(String, usize)]) -> String {
    let total: usize = left_out.iter().map(|(_, k)| k).sum();
    let mut s = format!(
        "> **{total} more resource{} left out** to stay within {MARKDOWN_LIMIT} characters: ",
        if total == 1 { "" } else { "s" }
    );
    let tail = ". Run `hydrate diff` locally for the full output.\n";
    for (i, (group, k)) in left_out.iter().enumerate() {
        let item = format!("{}{} ({k})", if i > 0 { ", " } else { "" }, escape(group));
        if s.chars().count() + item.chars().count() + tail.len() + 40 > NOTE_ROOM {
            s.push_str(&format!(" and {} more apps", left_out.len() - i));
            break;
        }
        s.push_str(&item);
    }
    s.push_str(tail);
    s
}
