//! Action traces, on request only ([`super::TemplateSet::execute_traced`]):
//! for each action a template printed, the bytes of the output it wrote,
//! its file and line, and the `.Values` paths its pipeline names. `hydrate
//! explain` maps a rendered field to the action that printed it and the
//! values that action read. The paths are read from the pipeline's text
//! (`.Values.image.tag`, `$.Values.x`, and `.tag` inside `{{ with
//! .Values.image }}`). An action that calls helpers (`include`) holds the
//! actions those printed, with their own files, lines and values, offsets
//! in the helper's output.

use super::ast::{Arg, Pipe};

/// One printed action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionMark {
    /// The template file the action is in (its parse name).
    pub file: String,
    /// Its 1-based line there.
    pub line: u32,
    /// The output bytes it wrote: `start..end` of the executed
    /// template's output.
    pub start: usize,
    /// Just past them.
    pub end: usize,
    /// The `.Values` paths its pipeline names (`image.tag`), in order.
    pub values: Vec<String>,
    /// The helpers its pipeline ran by `include`, in the order they ran.
    pub inner: Vec<Included>,
}

/// A helper run by `include` from a traced action: what it returned and
/// the actions it printed (offsets in that output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Included {
    /// The helper's output.
    pub output: String,
    /// Its printed actions.
    pub marks: Vec<ActionMark>,
}

impl ActionMark {
    /// What it printed, given the output its offsets are in.
    pub fn printed<'t>(&self, out: &'t str) -> &'t str {
        out.get(self.start..self.end).unwrap_or_default()
    }
}

/// The 1-based line of byte `pos` of `text`.
pub(crate) fn line_of(text: &str, pos: usize) -> u32 {
    let before = text
        .as_bytes()
        .get(..pos.min(text.len()))
        .unwrap_or_default();
    1 + before.iter().filter(|&&b| b == b'\n').count() as u32
}

/// The `.Values` paths `pipe` names; `dot` is the values path dot stands
/// for (inside `with .Values.x`), if any.
pub(crate) fn values_read(src: &str, pipe: &Pipe, dot: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in pipe.cmds.iter() {
        for a in cmd.args.iter() {
            arg_reads(src, a, dot, &mut out);
        }
    }
    out
}

/// The values path of a pipeline that is one field (`.Values.image`), for
/// the dot of a `with` body.
pub(crate) fn values_of_pipe(src: &str, pipe: &Pipe, dot: Option<&str>) -> Option<String> {
    match pipe.cmds.as_ref() {
        [cmd] => match cmd.args.as_ref() {
            [a @ (Arg::Field { .. } | Arg::Variable { .. })] => {
                let mut out = Vec::new();
                arg_reads(src, a, dot, &mut out);
                out.pop()
            }
            _ => None,
        },
        _ => None,
    }
}

fn arg_reads(src: &str, a: &Arg, dot: Option<&str>, out: &mut Vec<String>) {
    match a {
        Arg::Field { ident, .. } => {
            let text = ident.of(src);
            if let Some(p) = text.strip_prefix(".Values.") {
                out.push(p.to_string());
            } else if let (Some(d), Some(rest)) = (dot, text.strip_prefix('.')) {
                out.push(format!("{d}.{rest}"));
            }
        }
        Arg::Variable { ident, .. } => {
            if let Some(p) = ident.of(src).strip_prefix("$.Values.") {
                out.push(p.to_string());
            }
        }
        Arg::Dot(_) => {
            if let Some(d) = dot {
                out.push(d.to_string());
            }
        }
        Arg::Pipe(p) => out.extend(values_read(src, p, dot)),
        Arg::Chain(c) => arg_reads(src, &c.node, dot, out),
        _ => {}
    }
}
