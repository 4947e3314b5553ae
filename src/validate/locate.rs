//! The file and line a finding's value was written at. A render does not
//! trace where values come from (it would cost every render a walk per
//! file), so for each kustomize app with a finding the app is built again
//! with provenance (kustomize's [`Options::provenance`]) and the finding's
//! node is looked up there; a node the build made itself (a label it added)
//! names the nearest written node above it. Warnings about a whole object
//! are not located (a type without schema recurs in many apps, and each
//! rebuild costs a render). Helm apps keep the template the
//! object came from (`# Source:`), without a line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Finding, Seg, Severity};
use crate::env::{Environment, Source};
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
        let dir = envs
            .iter()
            .find(|e| e.name == env)
            .and_then(|e| e.apps.iter().find(|a| a.name == app))
            .and_then(|a| match &a.source {
                Source::Kustomize(dir) => Some(dir.clone()),
                Source::Helm(_) => None,
            });
        let Some(dir) = dir else { continue };
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
