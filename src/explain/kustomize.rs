//! Chains of a kustomize app: a traced build's field histories
//! ([`crate::kustomize::Build::fields`]) turned into steps with files and
//! lines, last step first.

use std::path::Path;
use std::sync::Arc;

use super::{kind_name, place, scalars, FieldOrigin, Lines, ResourceOrigins, Step};
use crate::kustomize::{self, FieldStep};
use crate::yaml::{source_map::SourceMap, Node};

/// Builds the kustomization `dir` (relative to `root`) with provenance and
/// explains every field of every object.
pub fn explain(root: &Path, dir: &Path) -> Result<Vec<(ResourceOrigins, Arc<Node>)>, String> {
    let opts = kustomize::Options {
        helm: kustomize::HelmSettings {
            enabled: true,
            ..Default::default()
        },
        provenance: true,
        ..Default::default()
    };
    let b = kustomize::build(&root.join(dir), &opts).map_err(|e| e.to_string())?;
    let map = b.provenance.clone().unwrap_or_default();
    let mut lines = Lines::default();
    let mut out = Vec::new();
    for (i, o) in b.objects.iter().enumerate() {
        let original = b
            .original_ids
            .get(i)
            .map(|id| format!("{}/{}", id.gvk.kind, id.name))
            .unwrap_or_else(|| kind_name(&o.node));
        let history = b.fields.get(i);
        let fields = scalars(&o.node)
            .into_iter()
            .map(|(path, value, _)| {
                let chain = history
                    .and_then(|h| h.get(&path))
                    .map(|steps| {
                        steps
                            .iter()
                            .rev()
                            .map(|s| step(root, &map, s, &mut lines))
                            .collect()
                    })
                    .unwrap_or_default();
                FieldOrigin { path, value, chain }
            })
            .collect();
        let r = ResourceOrigins {
            resource: kind_name(&o.node),
            original,
            fields,
        };
        out.push((r, o.node.clone()));
    }
    Ok(out)
}

/// One history step with its places resolved.
fn step(root: &Path, map: &SourceMap, s: &FieldStep, lines: &mut Lines) -> Step {
    let at = map.locate(&s.at).map(|l| {
        let mut p = place(root, &l.text.file, l.line, lines);
        if let Some(at) = l.text.embedded_at {
            // An inline patch: the file's line is the patch scalar's; the
            // text shown is that line, the patch line is kept apart.
            p.embedded_line = Some(l.line - at);
            p.line = at;
            p.text = lines.line(&root.join(&p.file), at);
        }
        p
    });
    let config = s
        .config
        .as_ref()
        .filter(|(_, line)| *line > 0)
        .map(|(file, line)| place(root, file, *line, lines));
    let config = config.filter(|c| at.as_ref() != Some(c));
    Step {
        by: s.by.to_string(),
        value: s.value.clone(),
        detail: None,
        at,
        config,
    }
}
