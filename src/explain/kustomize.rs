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
                            .map(|s| {
                                let mut st = step(root, &map, s, &mut lines);
                                refine(root, &mut st, (&path, &value), &mut lines);
                                st
                            })
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
        // The parser counts YAML's line breaks (NEL, U+2028, U+2029 too);
        // a file's line is an editor's: counted in `\n`s up to the value.
        let line = match l.text.embedded_at {
            Some(_) => l.line,
            None => lines
                .line_of(&l.text.file, l.start, l.text.crlf)
                .unwrap_or(l.line),
        };
        let mut p = place(root, &l.text.file, line, lines);
        if let Some(anchor) = alias_line(&p.text, &root.join(&p.file), lines) {
            // `name: *x`: the value is the anchored node's, written at `&x`.
            p = place(root, &l.text.file, anchor, lines);
        }
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

/// Points a step of the builtin transformers that copy a value out of the
/// kustomization at the line that holds it: a label's or annotation's
/// `key: value` pair (not the `labels:` field), an image's `digest:`,
/// `newTag:` or `newName:` (not the entry's `name:`).
fn refine(root: &Path, st: &mut Step, (path, value): (&str, &str), lines: &mut Lines) {
    let line = match st.by.as_str() {
        "LabelTransformer" | "AnnotationsTransformer" => {
            let Some(c) = &st.config else { return };
            let file = root.join(&c.file);
            let Some(k) = lines.yaml(&file) else {
                return;
            };
            // One transformer runs for `labels:` and `commonLabels:`
            // both: the pair is in one of them.
            let fields: &[&str] = match st.by.as_str() {
                "LabelTransformer" => &["labels", "commonLabels"],
                _ => &["commonAnnotations"],
            };
            let found = fields.iter().find_map(|f| {
                let (key, v) = k
                    .as_map()?
                    .iter()
                    .find(|(key, _)| key.key_text() == Some(*f))?;
                Some((key.pos.line, pair_line(Some(v), path, value)?))
            });
            let Some((field_line, pair)) = found else {
                return;
            };
            st.config = Some(place(root, &file, field_line, lines));
            Some(pair)
        }
        "ImageTagTransformer" => {
            let Some(at) = &st.at else { return };
            let Some(k) = lines.yaml(&root.join(&at.file)) else {
                return;
            };
            image_line(k.get("images"), at.line, value)
        }
        _ => None,
    };
    let Some(line) = line else { return };
    let file = match (&st.at, &st.config) {
        (Some(p), _) | (None, Some(p)) => p.file.clone(),
        (None, None) => return,
    };
    st.at = Some(place(root, &root.join(file), line, lines));
}

/// The line of the pair of `field` (`commonLabels:`, `commonAnnotations:`:
/// a mapping; `labels:`: a list of `pairs:` mappings) that the field at
/// `path` took its `value` from: the key that ends the path.
fn pair_line(field: Option<&Node>, path: &str, value: &str) -> Option<u32> {
    let maps: Vec<&Node> = match field?.as_seq() {
        Some(items) => items.iter().filter_map(|i| i.get("pairs")).collect(),
        None => vec![field?],
    };
    maps.into_iter()
        .filter_map(Node::as_map)
        .flatten()
        .find(|(k, v)| {
            k.key_text().is_some_and(|k| {
                (path == k || path.ends_with(&format!(".{k}"))) && v.as_str() == Some(value)
            })
        })
        .map(|(k, _)| k.pos.line)
}

/// The line of the `images:` entry written at `entry` that holds the part
/// of `value` it set: its digest, else its tag, else its name.
fn image_line(images: Option<&Node>, entry: u32, value: &str) -> Option<u32> {
    let item = images?.as_seq()?.iter().find(|i| i.pos.line == entry)?;
    ["digest", "newTag", "newName", "tagSuffix"]
        .into_iter()
        .filter_map(|k| item.get(k))
        .find(|n| {
            n.as_str()
                .is_some_and(|t| !t.is_empty() && value.contains(t))
        })
        .map(|n| n.pos.line)
}

/// For a line that takes its value from an alias (`name: *x`, `- *x`),
/// the line of `file` that defines the anchor `&x`.
fn alias_line(text: &str, file: &Path, lines: &mut Lines) -> Option<u32> {
    let (_, after) = text.split_once('*')?;
    let name: String = after
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect();
    if name.is_empty() || !text.contains(&format!(": *{name}")) && !text.starts_with("- *") {
        return None;
    }
    let anchor = format!("&{name}");
    (1..=lines.count(file)).find(|&n| {
        let l = lines.line(file, n);
        l.split_whitespace().any(|w| w == anchor)
    })
}
