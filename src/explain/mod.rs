//! Field provenance of an environment's app: for each rendered field, the
//! chain of steps that produced its value, last step first, each with the
//! file and line it was written at (`hydrate explain`, `diff --explain`).
//!
//! The renderers record provenance when asked (kustomize's traced build and
//! its field histories; helm's action trace and values layers); this
//! module asks for it, selects resources and fields, and turns positions
//! into files and lines relative to the repository root. It renders
//! nothing itself and is never on the path of a plain render.

mod chart;
mod check;
mod diff;
mod kustomize;
mod text;

use std::path::{Path, PathBuf};

use crate::env::{Environment, Source};
use crate::yaml::{self, Node};

pub use check::{check_charts_with, check_kustomizations, Checked};
pub(crate) use diff::{diff_origins, field_sources};
pub use text::{json, text};

/// What went wrong explaining.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] crate::env::Error),
    /// No such environment or app.
    #[error("{0}")]
    NotFound(String),
    /// The selection is malformed (a bad field path).
    #[error("{0}")]
    Selection(String),
    /// The app does not render.
    #[error("{env}/{app}: {message}")]
    Render {
        /// The environment.
        env: String,
        /// The app.
        app: String,
        /// Why.
        message: String,
    },
}

/// Every field of an app's selection with the chain that set it.
#[derive(Clone, Debug, Default)]
pub struct Explained {
    /// The environment.
    pub env: String,
    /// The app.
    pub app: String,
    /// The resources selected, in output order.
    pub resources: Vec<ResourceOrigins>,
}

/// The fields of one rendered resource.
#[derive(Clone, Debug, Default)]
pub struct ResourceOrigins {
    /// `Kind/name` as rendered.
    pub resource: String,
    /// `Kind/name` before the build renamed it (prefix, suffix, hash).
    pub original: String,
    /// Its scalar fields, in document order.
    pub fields: Vec<FieldOrigin>,
}

/// One rendered scalar and how it came to be.
#[derive(Clone, Debug, Default)]
pub struct FieldOrigin {
    /// The path in the diff's syntax
    /// (`spec.template.spec.containers[name=api].image`).
    pub path: String,
    /// The rendered value.
    pub value: String,
    /// The steps that produced it, last step first.
    pub chain: Vec<Step>,
}

/// One step of a field's chain.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// What the step is: `resource`, a kustomize transformer's name
    /// (`PatchTransformer`, `ImageTagTransformer`, `PrefixTransformer`,
    /// …), `generator`, `template` (a chart template's action) or `values`.
    pub by: String,
    /// The value after the step (for `values`: the value supplied).
    pub value: String,
    /// For `values`: the `.Values` path read, and the layer that supplied
    /// it (`chart defaults`, `-f FILE`, `--set`).
    pub detail: Option<String>,
    /// Where the value was written, when a file wrote it.
    pub at: Option<Place>,
    /// The configuration that asked for the step (a kustomization's
    /// `namePrefix:` line), when it is not where the value was written.
    pub config: Option<Place>,
}

/// A line of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the repository root.
    pub file: PathBuf,
    /// Its 1-based line.
    pub line: u32,
    /// The text of that line, trimmed (empty when unreadable).
    pub text: String,
    /// The value is in an inline patch: a YAML string whose scalar starts
    /// at `line` of `file`; this is its line inside the string.
    pub embedded_line: Option<u32>,
}

impl Place {
    /// `file:line`.
    pub fn display(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// What to explain: a resource (`Kind/name`, matching the rendered or the
/// original name) and a field path (a field, or everything below it).
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// `Kind/name`.
    pub resource: Option<String>,
    /// A path in the diff's syntax.
    pub field: Option<String>,
}

/// The fields of `app` in `env` under `root`, with their chains.
pub fn explain(root: &Path, env: &str, app: &str, sel: &Selection) -> Result<Explained, Error> {
    let envs = crate::env::load_environments(root)?;
    explain_in(root, &envs, env, app, sel)
}

/// [`explain`] over environments already loaded.
pub(crate) fn explain_in(
    root: &Path,
    envs: &[Environment],
    env: &str,
    app: &str,
    sel: &Selection,
) -> Result<Explained, Error> {
    let resources = explain_app(root, envs, env, app)?;
    Ok(Explained {
        env: env.to_string(),
        app: app.to_string(),
        resources: select(&resources, sel)?,
    })
}

/// Every field of every resource of `app` in `env`, with the rendered
/// node each resource's fields are of (for [`select`]): one render with
/// provenance.
pub(crate) fn explain_app(
    root: &Path,
    envs: &[Environment],
    env: &str,
    app: &str,
) -> Result<Vec<(ResourceOrigins, std::sync::Arc<Node>)>, Error> {
    let e = envs
        .iter()
        .find(|e| e.name == env)
        .ok_or_else(|| Error::NotFound(format!("no environment `{env}`")))?;
    let a = e
        .apps
        .iter()
        .find(|a| a.name == app)
        .ok_or_else(|| Error::NotFound(format!("environment `{env}` has no app `{app}`")))?;
    let fail = |message: String| Error::Render {
        env: env.to_string(),
        app: app.to_string(),
        message,
    };
    match &a.source {
        Source::Kustomize(dir) => kustomize::explain(root, dir).map_err(fail),
        Source::Helm(c) => chart::explain(root, c).map_err(fail),
    }
}

/// The `file:line` a field's value comes from: the values file line that
/// supplied it (a chart's field printed from `.Values`), else where its
/// last step wrote it, else the configuration that asked for that step.
pub(crate) fn source_of(f: &FieldOrigin) -> Option<&Place> {
    let supplied = f.chain.iter().find(|s| {
        s.by == "values" && s.at.is_some() && !s.value.is_empty() && f.value.contains(&s.value)
    });
    supplied
        .or(f.chain.first())
        .and_then(|s| s.at.as_ref().or(s.config.as_ref()))
}

/// Copies the resources and fields `sel` names.
pub(crate) fn select(
    resources: &[(ResourceOrigins, std::sync::Arc<Node>)],
    sel: &Selection,
) -> Result<Vec<ResourceOrigins>, Error> {
    let steps = match &sel.field {
        Some(f) => {
            Some(yaml::selector::parse(f).map_err(|e| Error::Selection(format!("{f}: {e}")))?)
        }
        None => None,
    };
    let mut out = Vec::new();
    for (r, node) in resources {
        if let Some(want) = &sel.resource {
            if !same_resource(want, &r.resource) && !same_resource(want, &r.original) {
                continue;
            }
        }
        let fields = match &steps {
            Some(steps) => {
                let Some(prefix) =
                    yaml::selector::resolve(node, steps).map(|segs| key_path(node, &segs))
                else {
                    continue;
                };
                r.fields
                    .iter()
                    .filter(|f| under(&f.path, &prefix))
                    .cloned()
                    .collect()
            }
            None => r.fields.clone(),
        };
        out.push(ResourceOrigins {
            resource: r.resource.clone(),
            original: r.original.clone(),
            fields,
        });
    }
    if out.is_empty() {
        let what = [sel.resource.as_deref(), sel.field.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        return Err(Error::NotFound(format!(
            "nothing rendered matches `{what}`"
        )));
    }
    Ok(out)
}

/// `Kind/name` compared as kubectl does: the kind case-insensitively.
fn same_resource(want: &str, have: &str) -> bool {
    match (want.split_once('/'), have.split_once('/')) {
        (Some((wk, wn)), Some((hk, hn))) => wk.eq_ignore_ascii_case(hk) && wn == hn,
        _ => false,
    }
}

/// Whether field `path` is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The path `segs` lead to in `doc`, written as field paths are
/// ([`crate::kustomize::field_path`]'s syntax: named list items by name).
fn key_path(doc: &Node, segs: &[yaml::edit::Seg]) -> String {
    let mut out = String::new();
    let mut n = doc;
    for s in segs {
        match s {
            yaml::edit::Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
                n = n.get(k).unwrap_or(n);
            }
            yaml::edit::Seg::Index(i) => {
                let Some(item) = n.as_seq().and_then(|s| s.get(*i)) else {
                    break;
                };
                out.push_str(&crate::kustomize::item_segment(item, *i));
                n = item;
            }
        }
    }
    out
}

/// Every scalar of `n` with its path, in document order.
pub(crate) fn scalars(n: &Node) -> Vec<(String, String, yaml::Pos)> {
    let mut out = Vec::new();
    crate::kustomize::scalars(n, &mut String::new(), &mut out);
    out
}

/// `Kind/name` of a rendered object.
pub(crate) fn kind_name(n: &Node) -> String {
    let kind = n.get_str("kind").unwrap_or_default();
    let name = n
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    format!("{kind}/{name}")
}

/// The place `file:line` (relative to `root`), with the line's text.
pub(crate) fn place(root: &Path, file: &Path, line: u32, lines: &mut Lines) -> Place {
    let base = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let rel = file
        .strip_prefix(&base)
        .or_else(|_| file.strip_prefix(root))
        .map_or_else(|_| file.to_path_buf(), Path::to_path_buf);
    Place {
        text: lines.line(&root.join(&rel), line),
        file: rel,
        line,
        embedded_line: None,
    }
}

/// Source files read for their lines, each once.
#[derive(Default)]
pub(crate) struct Lines {
    files: std::collections::HashMap<PathBuf, Vec<String>>,
    /// Byte offsets of each file's `\n`s (as parsed: CRLF read as LF or not).
    breaks: std::collections::HashMap<(PathBuf, bool), Option<Vec<u32>>>,
    docs: std::collections::HashMap<PathBuf, Option<Node>>,
}

impl Lines {
    /// The 1-based line of byte `offset` of `file` as it was parsed (its
    /// CRLFs turned into LF when `crlf`), counted in `\n`s.
    pub fn line_of(&mut self, file: &Path, offset: u32, crlf: bool) -> Option<u32> {
        let breaks = self
            .breaks
            .entry((file.to_path_buf(), crlf))
            .or_insert_with(|| {
                let text = std::fs::read_to_string(file).ok()?;
                let text = match crlf {
                    true => text.replace("\r\n", "\n"),
                    false => text,
                };
                let at = text.bytes().enumerate().filter(|(_, b)| *b == b'\n');
                Some(at.map(|(i, _)| i as u32).collect())
            })
            .as_ref()?;
        Some(breaks.partition_point(|b| *b < offset) as u32 + 1)
    }

    /// `file` parsed as one YAML document (a kustomization), or None.
    pub fn yaml(&mut self, file: &Path) -> Option<&Node> {
        self.docs
            .entry(file.to_path_buf())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(file).ok()?;
                yaml::parse_one(&text, yaml::Resolver::V3).ok()
            })
            .as_ref()
    }

    /// How many lines `file` has (0 when unreadable).
    pub fn count(&mut self, file: &Path) -> u32 {
        self.line(file, 1);
        self.files.get(file).map_or(0, |l| l.len() as u32)
    }

    /// Line `line` (1-based) of `file`, trimmed; empty when unreadable.
    pub fn line(&mut self, file: &Path, line: u32) -> String {
        let lines = self.files.entry(file.to_path_buf()).or_insert_with(|| {
            std::fs::read_to_string(file)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default()
        });
        (line as usize)
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }
}
