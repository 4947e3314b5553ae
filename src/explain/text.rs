//! `hydrate explain`'s output: text (a field, then its chain, last step
//! first, one line a step with its `file:line` and the line's text) and
//! JSON (the same, typed).

use serde_json::{json as j, Value as Json};

use super::{Explained, FieldOrigin, Place, Step};

/// The text form.
pub fn text(e: &Explained) -> String {
    let mut out = String::new();
    for r in &e.resources {
        out.push_str(&format!("{}/{} {}", e.env, e.app, r.resource));
        if r.original != r.resource {
            out.push_str(&format!(" (from {})", r.original));
        }
        out.push('\n');
        for f in &r.fields {
            out.push_str(&field_text(f, "  "));
        }
    }
    out
}

/// One field and its chain, each line indented by `indent`.
pub fn field_text(f: &FieldOrigin, indent: &str) -> String {
    let mut out = format!("{indent}{}: {}\n", f.path, f.value);
    if f.chain.is_empty() {
        out.push_str(&format!("{indent}  <- (no trace)\n"));
    }
    for s in &f.chain {
        out.push_str(&format!("{indent}  <- {}\n", step_text(s, &f.value)));
    }
    out
}

/// One step on one line: what, the value when it is not the field's, and
/// where.
pub fn step_text(s: &Step, value: &str) -> String {
    let mut line = s.by.clone();
    if let Some(d) = &s.detail {
        line.push_str(&format!(" {d}"));
    }
    if s.value != value || s.by == "values" {
        line.push_str(&format!(" = {}", s.value));
    }
    match (&s.at, &s.config) {
        (Some(at), Some(c)) => {
            line.push_str(&format!(" at {} (by {})", place_text(at), place_text(c)))
        }
        (Some(at), None) => line.push_str(&format!(" at {}", place_text(at))),
        (None, Some(c)) => line.push_str(&format!(" (by {})", place_text(c))),
        (None, None) => line.push_str(" (no source line)"),
    }
    line
}

fn place_text(p: &Place) -> String {
    let mut s = p.display();
    if let Some(l) = p.embedded_line {
        s.push_str(&format!(" (inline patch, its line {l})"));
    }
    if !p.text.is_empty() {
        s.push_str(&format!("  `{}`", p.text));
    }
    s
}

/// The JSON form.
pub fn json(e: &Explained) -> Json {
    j!({
        "env": e.env,
        "app": e.app,
        "resources": e.resources.iter().map(|r| j!({
            "resource": r.resource,
            "original": r.original,
            "fields": r.fields.iter().map(field_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One field and its chain as JSON.
pub fn field_json(f: &FieldOrigin) -> Json {
    j!({
        "path": f.path,
        "value": f.value,
        "chain": f.chain.iter().map(step_json).collect::<Vec<_>>(),
    })
}

fn step_json(s: &Step) -> Json {
    j!({
        "by": s.by,
        "value": s.value,
        "detail": s.detail,
        "at": s.at.as_ref().map(place_json),
        "config": s.config.as_ref().map(place_json),
    })
}

fn place_json(p: &Place) -> Json {
    j!({
        "file": p.file.display().to_string(),
        "line": p.line,
        "text": p.text,
        "embeddedLine": p.embedded_line,
    })
}
