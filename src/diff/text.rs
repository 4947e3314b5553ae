//! The terminal formats: human (one line per field change, dyff-style:
//! `spec.replicas (apps/v1/Deployment web): 2 → 5`, unified diffs for
//! multi-line strings) and brief (one line per resource), with optional
//! ANSI colour.

use std::fmt::Write;

use super::{AppDiff, Change, ChangeKind, Comparison, ResourceDiff, Status, Summary, Validity};
use crate::yaml::{Node, Tag, Value};

/// Colour or not.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// Emit ANSI colour codes.
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    fn cyan(&self, s: &str) -> String {
        self.paint("36", s)
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
}

/// A value on one line: scalars as written (quoted when they would read as
/// another type), collections as compact JSON.
pub(crate) fn value_text(n: &Node) -> String {
    match &n.value {
        Value::Scalar(s) => {
            let ambiguous = s.text.is_empty()
                || s.text.trim() != s.text
                || s.text.contains('\n')
                || matches!(s.text.as_str(), "true" | "false" | "null" | "~")
                || s.text.parse::<f64>().is_ok();
            if s.tag == Tag::Str && ambiguous {
                serde_json::Value::String(s.text.clone()).to_string()
            } else {
                s.text.clone()
            }
        }
        _ => crate::yaml::to_json(n).to_string(),
    }
}

/// The unified diff of two texts, as lines (`@@ … @@`, `-`, `+`, ` `).
pub(crate) fn unified(from: &str, to: &str) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(from, to);
    let mut out = Vec::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push(hunk.header().to_string());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            let line = change.value().trim_end_matches('\n');
            out.push(format!("{sign}{line}"));
            if change.missing_newline() {
                out.push("\\ No newline at end of text".to_string());
            }
        }
    }
    out
}

/// `apps/v1/Deployment web`: the names each side really has (`apps/v1/Deployment
/// staging-web ↔ prod-web` when they differ), never the identity that
/// matched them (prefix, suffix and hash taken off).
pub(crate) fn label(r: &ResourceDiff) -> String {
    let name = match (&r.from, &r.to) {
        (Some((a, _)), Some((b, _))) if a != b => format!("{a} ↔ {b}"),
        (Some((a, _)), _) | (None, Some((a, _))) => a.clone(),
        (None, None) => r.name.clone(),
    };
    format!("{} {name}", r.type_name())
}

/// Whether a change is one a reviewer looks for first: an image, a replica
/// count, a resource limit or request.
fn is_headline(c: &Change) -> bool {
    let path = c.path_text();
    path.ends_with(".image")
        || path == "spec.replicas"
        || path.contains(".resources.limits")
        || path.contains(".resources.requests")
}

/// What a one-line change shows after its path (`a → b`, `+ a`, `- a`);
/// `None` for a multi-line text, shown as a unified diff.
fn change_value(c: &Change, st: Style) -> Option<String> {
    match &c.kind {
        ChangeKind::Changed { from, to } => Some(format!(
            "{} → {}",
            st.red(&value_text(from)),
            st.green(&value_text(to))
        )),
        ChangeKind::Added(v) => Some(st.green(&format!("+ {}", value_text(v)))),
        ChangeKind::Removed(v) => Some(st.red(&format!("- {}", value_text(v)))),
        ChangeKind::Text { .. } => None,
    }
}

/// An app's field changes for the human format: the same change (path and
/// values) made to several resources once, with their count; headline
/// changes (images, replicas, resource limits) first, then the others in
/// resource order.
fn grouped_changes(a: &AppDiff, st: Style, out: &mut String) {
    // (path, value) → the resources it applies to, in first-seen order.
    type Group<'a> = (String, Option<String>, Vec<(&'a Change, &'a ResourceDiff)>);
    let mut groups: Vec<Group> = Vec::new();
    for r in a.resources.iter().filter(|r| r.status == Status::Changed) {
        for c in &r.changes {
            let (path, value) = (c.path_text(), change_value(c, st));
            match groups
                .iter_mut()
                .find(|(p, v, _)| value.is_some() && *p == path && *v == value)
            {
                Some((_, _, at)) => at.push((c, r)),
                None => groups.push((path, value, vec![(c, r)])),
            }
        }
    }
    let (first, rest): (Vec<_>, Vec<_>) = groups
        .into_iter()
        .partition(|(_, _, at)| at.iter().any(|(c, _)| is_headline(c)));
    for (path, value, at) in first.into_iter().chain(rest) {
        match (&at[..], value) {
            ([(c, r)], _) | ([(c, r), ..], None) => change_lines(c, r, st, out),
            (at, Some(value)) => {
                let _ = writeln!(
                    out,
                    "    {}: {value} — {} resources",
                    st.yellow(&path),
                    at.len()
                );
            }
            ([], _) => {}
        }
    }
}

/// `7 changed (30 fields), 2 added, 0 removed`: one app's count.
fn app_summary(a: &AppDiff) -> String {
    let count = |s: Status| a.resources.iter().filter(|r| r.status == s).count();
    let fields: usize = a.resources.iter().map(|r| r.changes.len()).sum();
    format!(
        "{} changed ({fields} field{}), {} added, {} removed",
        count(Status::Changed),
        if fields == 1 { "" } else { "s" },
        count(Status::Added),
        count(Status::Removed)
    )
}

/// The lines of one field change, for the human format.
fn change_lines(c: &Change, r: &ResourceDiff, st: Style, out: &mut String) {
    let head = format!("{} ({})", st.yellow(&c.path_text()), label(r));
    let _ = match &c.kind {
        ChangeKind::Changed { from, to } => writeln!(
            out,
            "    {head}: {} → {}",
            st.red(&value_text(from)),
            st.green(&value_text(to))
        ),
        ChangeKind::Added(v) => writeln!(
            out,
            "    {head}: {}",
            st.green(&format!("+ {}", value_text(v)))
        ),
        ChangeKind::Removed(v) => writeln!(
            out,
            "    {head}: {}",
            st.red(&format!("- {}", value_text(v)))
        ),
        ChangeKind::Text { from, to } => {
            let _ = writeln!(out, "    {head}:");
            for l in unified(from, to) {
                let l = match l.chars().next() {
                    Some('-') => st.red(&l),
                    Some('+') => st.green(&l),
                    Some('@') => st.cyan(&l),
                    _ => l,
                };
                let _ = writeln!(out, "      {l}");
            }
            Ok(())
        }
    };
}

fn app_header(a: &AppDiff, c: &Comparison, st: Style) -> String {
    match a.status {
        Status::Added => st.bold(&format!("{} (only in {})", a.app, c.to)),
        Status::Removed => st.bold(&format!("{} (only in {})", a.app, c.from)),
        Status::Changed => st.bold(&a.app),
    }
}

/// The human format.
pub fn to_human(comparisons: &[Comparison], st: Style) -> String {
    let mut out = String::new();
    for c in comparisons {
        let _ = writeln!(out, "{}", st.bold(&format!("{} → {}", c.from, c.to)));
        if c.apps.is_empty() {
            let _ = writeln!(out, "  no differences");
        }
        for a in &c.apps {
            let _ = writeln!(out, "  {}: {}", app_header(a, c, st), app_summary(a));
            grouped_changes(a, st, &mut out);
            for r in &a.resources {
                match r.status {
                    Status::Added => {
                        let line = format!("+ {}", label(r));
                        let _ = writeln!(out, "    {}", st.green(&line));
                    }
                    Status::Removed => {
                        let line = format!("- {}", label(r));
                        let _ = writeln!(out, "    {}", st.red(&line));
                    }
                    Status::Changed => {}
                }
            }
            let expected: Vec<&ResourceDiff> = a
                .resources
                .iter()
                .filter(|r| !r.expected.is_empty())
                .collect();
            if !expected.is_empty() {
                let _ = writeln!(out, "  {}", st.bold(&format!("{} (expected)", a.app)));
                for r in expected {
                    for ch in &r.expected {
                        change_lines(ch, r, st, &mut out);
                    }
                }
            }
        }
        validity_lines(&c.validity, st, &mut out);
    }
    let _ = writeln!(out, "{}", summary_line(&Summary::of(comparisons)));
    out
}

/// `3 resources changed (7 fields), 2 added, 0 removed, 1 expected difference`.
/// What the change makes invalid (`+`, red) and fixes (`-`, green), one
/// `hydrate validate` line each.
fn validity_lines(v: &Validity, st: Style, out: &mut String) {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if !v.introduced.is_empty() {
        let what = Validity::headline(&v.introduced);
        let _ = writeln!(out, "  {}", st.bold(&format!("this change {what}:")));
        for f in &v.introduced {
            let line = format!("+ {}", crate::validate::report::text_line(f));
            let _ = writeln!(out, "    {}", st.red(&line));
        }
    }
    if !v.fixed.is_empty() {
        let head = format!("this change fixes {}:", plural(v.fixed.len(), "finding"));
        let _ = writeln!(out, "  {}", st.bold(&head));
        for f in &v.fixed {
            let line = format!("- {}", crate::validate::report::text_line(f));
            let _ = writeln!(out, "    {}", st.green(&line));
        }
    }
}

pub(crate) fn summary_line(s: &Summary) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} changed ({}), {} added, {} removed, {}",
        plural(s.changed, "resource", "resources"),
        plural(s.fields, "field", "fields"),
        s.added,
        s.removed,
        plural(s.expected, "expected difference", "expected differences"),
    )
}

/// `~ Deployment web (3 fields)`.
pub(crate) fn brief_line(r: &ResourceDiff) -> String {
    let plural = |n: usize| if n == 1 { "field" } else { "fields" };
    match r.status {
        Status::Added => format!("+ {} {}", r.kind, r.name),
        Status::Removed => format!("- {} {}", r.kind, r.name),
        Status::Changed if r.changes.is_empty() => format!(
            "= {} {} ({} expected {})",
            r.kind,
            r.name,
            r.expected.len(),
            plural(r.expected.len())
        ),
        Status::Changed => {
            let mut s = format!(
                "~ {} {} ({} {}",
                r.kind,
                r.name,
                r.changes.len(),
                plural(r.changes.len())
            );
            if !r.expected.is_empty() {
                let _ = write!(s, ", {} expected", r.expected.len());
            }
            s.push(')');
            s
        }
    }
}

/// The brief format: one line per resource.
pub fn to_brief(comparisons: &[Comparison], st: Style) -> String {
    let mut out = String::new();
    for c in comparisons {
        let _ = writeln!(out, "{}", st.bold(&format!("{} → {}", c.from, c.to)));
        for a in &c.apps {
            let _ = writeln!(out, "  {}", app_header(a, c, st));
            for r in &a.resources {
                let line = brief_line(r);
                let line = match r.status {
                    Status::Added => st.green(&line),
                    Status::Removed => st.red(&line),
                    Status::Changed if r.changes.is_empty() => line,
                    Status::Changed => st.yellow(&line),
                };
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    let _ = writeln!(out, "{}", summary_line(&Summary::of(comparisons)));
    out
}
