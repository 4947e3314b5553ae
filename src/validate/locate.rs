//! The file and line a finding's value was written at. A render does not
//! trace where values come from (it would cost every render a walk per
//! file), so for each kustomize app with a finding the app is built again
//! with provenance (kustomize's [`Options::provenance`]) and the finding's
//! node is looked up there; a node the build made itself (a label it added)
//! names the nearest written node above it. Warnings about a whole object
//! are not located (a type without schema recurs in many apps, and each
//! rebuild costs a render). A helm app with a finding is rendered again
//! with its actions traced (as `explain` does): a value an action printed
//! names that action's template line; literal template text names the one
//! line of the template that reads as the printed line, when exactly one
//! does. Otherwise the finding keeps the template (`# Source:`) alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Finding, Seg, Severity};
use crate::env::{ChartApp, Environment, Source};
use crate::kustomize::{self, Options};
use crate::yaml::Node;

/// Fills in `file` and `line` of the findings in kustomize apps.
pub fn locate(root: &Path, envs: &[Environment], findings: &mut [Finding]) {
    let mut by_app: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        // A rebuild per app costs about a render: worth it for an error,
        // not for a warning about the whole object (a type without schema
        // is likely in many apps).
        let worth = f.severity == Severity::Error || !f.at.is_empty();
        if f.line.is_none() && worth {
            by_app
                .entry((f.env.clone(), f.app.clone()))
                .or_default()
                .push(i);
        }
    }
    let base = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for ((env, app), indexes) in by_app {
        let source = envs
            .iter()
            .find(|e| e.name == env)
            .and_then(|e| e.apps.iter().find(|a| a.name == app))
            .map(|a| a.source.clone());
        let dir = match source {
            Some(Source::Kustomize(dir)) => dir,
            Some(Source::Helm(chart)) => {
                locate_in_chart(root, &chart, &indexes, findings);
                continue;
            }
            None => continue,
        };
        let opts = Options {
            helm: kustomize::HelmSettings {
                enabled: true,
                ..Default::default()
            },
            provenance: true,
            ..Default::default()
        };
        // The render succeeded; a traced build that fails names nothing.
        let Ok(b) = kustomize::build(&root.join(&dir), &opts) else {
            continue;
        };
        let Some(map) = &b.provenance else { continue };
        for i in indexes {
            let f = &mut findings[i];
            let Some(o) = b.objects.iter().find(|o| {
                o.id.gvk.api_version() == f.api_version
                    && o.id.gvk.kind == f.kind
                    && o.id.name == f.name
                    && o.id.namespace == f.namespace
            }) else {
                continue;
            };
            let chain = nodes_along(&o.node, &f.at);
            if let Some(l) = chain.iter().rev().find_map(|n| map.locate(&n.pos)) {
                f.file = Some(relative(&l.text.file, &base, root));
                f.line = Some(l.line);
            }
        }
    }
}

/// [`locate`] for the findings (`indexes`) of one chart app: the chart
/// rendered again with its actions traced.
fn locate_in_chart(root: &Path, chart: &ChartApp, indexes: &[usize], findings: &mut [Finding]) {
    let mut app = chart.clone();
    app.chart = root.join(&chart.chart);
    app.value_files = app.value_files.iter().map(|f| root.join(f)).collect();
    // A packed chart's templates have no file to point at.
    if !app.chart.is_dir() {
        return;
    }
    let charts = crate::helm::ChartCache::default();
    let Ok((rendered, _)) = crate::env::render_chart_with(&app, &charts, true) else {
        return;
    };
    for &i in indexes {
        let f = &mut findings[i];
        let Some(o) = rendered.objects.iter().find(|o| {
            o.id.gvk.api_version() == f.api_version
                && o.id.gvk.kind == f.kind
                && o.id.name == f.name
                && o.id.namespace == f.namespace
        }) else {
            continue;
        };
        let Some(source) = &o.source else { continue };
        let Some(traced) = rendered.actions.get(source) else {
            continue;
        };
        // The document as printed: `# Source: …` line, text, newline
        // (where `explain` finds it in the template's output too).
        let doc = o
            .printed
            .split_once('\n')
            .map(|(_, rest)| rest.strip_suffix('\n').unwrap_or(rest))
            .unwrap_or_default();
        let Some(offset) = traced.text.find(doc) else {
            continue;
        };
        let Some(node) = nodes_along(&o.node, &f.at).pop() else {
            continue;
        };
        let start = offset + node.pos.start as usize;
        let end = offset + (node.pos.end as usize).max(node.pos.start as usize + 1);
        let template = |file: &str| {
            let inside = file.split_once('/').map_or(file, |(_, rest)| rest);
            chart.chart.join(inside)
        };
        let printed_by = traced
            .actions
            .iter()
            .find(|m| m.start < end && m.end > start);
        let at = match printed_by {
            Some(m) => Some((template(&m.file), m.line)),
            None => {
                let file = template(source);
                literal_line(&root.join(&file), &traced.text, start).map(|l| (file, l))
            }
        };
        if let Some((file, line)) = at {
            f.file = Some(file.display().to_string());
            f.line = Some(line);
        }
    }
}

/// The 1-based line of `template` that reads as the line of `output`
/// holding byte `at` (surrounding blanks aside), if exactly one does.
fn literal_line(template: &Path, output: &str, at: usize) -> Option<u32> {
    let before = output.get(..at)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let rest = output.get(line_start..)?;
    let line = rest.split('\n').next()?.trim();
    if line.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string(template).ok()?;
    let mut hits = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == line)
        .map(|(i, _)| i);
    let first = hits.next()?;
    match hits.next() {
        Some(_) => None,
        None => u32::try_from(first + 1).ok(),
    }
}

/// The nodes from `root` along `path`, as far as they exist.
fn nodes_along<'n>(root: &'n Node, path: &[Seg]) -> Vec<&'n Node> {
    let mut out = vec![root];
    let mut n = root;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => n.as_map().and_then(|m| {
                m.iter()
                    .find(|(key, _)| key.key_text() == Some(k.as_str()))
                    .map(|(_, v)| v)
            }),
            Seg::Index(i) | Seg::Item { index: i, .. } => n.as_seq().and_then(|s| s.get(*i)),
        };
        match next {
            Some(x) => {
                out.push(x);
                n = x;
            }
            None => break,
        }
    }
    out
}

fn relative(p: &Path, base: &Path, root: &Path) -> String {
    let rel: PathBuf = p
        .strip_prefix(base)
        .or_else(|_| p.strip_prefix(root))
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf);
    rel.display().to_string()
}
