//! Chains of a chart app: the chart rendered with its actions traced
//! ([`crate::helm::Options::trace_actions`]); each rendered scalar is
//! printed by the actions whose output bytes it overlaps, and each
//! `.Values` path an action names is supplied by the last values layer
//! that sets it (chart defaults, then `valueFiles` in order, then inline
//! `values`, then `set`), as helm coalesces them. Subcharts' parent
//! overrides and globals are not told apart yet.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{kind_name, place, scalars, FieldOrigin, Lines, Place, ResourceOrigins, Step};
use crate::env::ChartApp;
use crate::yaml::{self, Node, Resolver};

/// One values layer: its name and its parsed document.
struct Layer {
    name: String,
    file: Option<PathBuf>,
    node: Node,
}

/// Renders the chart app with its actions traced and explains every field.
pub fn explain(root: &Path, app: &ChartApp) -> Result<Vec<(ResourceOrigins, Arc<Node>)>, String> {
    let mut app = app.clone();
    app.chart = root.join(&app.chart);
    app.value_files = app.value_files.iter().map(|f| root.join(f)).collect();
    let charts = crate::helm::ChartCache::default();
    let (rendered, _) =
        crate::env::render_chart_with(&app, &charts, true).map_err(|e| e.to_string())?;
    let layers = layers(&app);
    let mut lines = Lines::default();
    let mut out = Vec::new();
    for o in &rendered.objects {
        let traced = o
            .source
            .as_ref()
            .and_then(|s| Some((s, rendered.actions.get(s)?)));
        // The document as printed: `# Source: …` line, text, newline.
        let doc = o
            .printed
            .split_once('\n')
            .map(|(_, rest)| rest.strip_suffix('\n').unwrap_or(rest))
            .unwrap_or_default();
        let offset = traced.and_then(|(_, t)| t.text.find(doc));
        let fields = scalars(&o.node)
            .into_iter()
            .map(|(path, value, pos)| {
                let mut chain = Vec::new();
                if let (Some((_, t)), Some(off)) = (traced, offset) {
                    let (start, end) = (off + pos.start as usize, off + pos.end as usize);
                    // The template step (one for the actions of a line),
                    // then the values each action read.
                    let marks: Vec<_> = t
                        .actions
                        .iter()
                        .filter(|m| m.start < end && m.end > start)
                        .collect();
                    if let Some(m) = marks.first() {
                        chain.push(Step {
                            by: "template".into(),
                            value: value.clone(),
                            detail: None,
                            at: Some(template_place(
                                root, &app.chart, &m.file, m.line, &mut lines,
                            )),
                            config: None,
                        });
                    }
                    for m in &marks {
                        for v in &m.values {
                            chain.push(values_step(root, &layers, v, (&path, &value), &mut lines));
                        }
                    }
                }
                if chain.is_empty() {
                    if let Some((source, _)) = traced {
                        // No action printed it: literal text of the template.
                        chain.push(Step {
                            by: "template text".into(),
                            value: value.clone(),
                            detail: Some(source.clone()),
                            at: None,
                            config: None,
                        });
                    }
                }
                FieldOrigin { path, value, chain }
            })
            .collect();
        let name = kind_name(&o.node);
        let r = ResourceOrigins {
            resource: name.clone(),
            original: name,
            fields,
        };
        out.push((r, o.node.clone()));
    }
    Ok(out)
}

/// `chart/templates/x.yaml` (helm's template path) as a file of the chart.
fn template_place(root: &Path, chart: &Path, file: &str, line: u32, lines: &mut Lines) -> Place {
    let inside = file.split_once('/').map_or(file, |(_, rest)| rest);
    place(root, &chart.join(inside), line, lines)
}

/// The values layers of `app`, lowest precedence first.
fn layers(app: &ChartApp) -> Vec<Layer> {
    let read = |f: &Path| -> Option<Node> {
        let text = std::fs::read_to_string(f).ok()?;
        yaml::parse_one(&text, Resolver::V3).ok()
    };
    let mut out = Vec::new();
    let defaults = app.chart.join("values.yaml");
    if let Some(node) = read(&defaults) {
        out.push(Layer {
            name: "chart defaults".into(),
            file: Some(defaults),
            node,
        });
    }
    for f in &app.value_files {
        if let Some(node) = read(f) {
            out.push(Layer {
                name: format!(
                    "valueFiles {}",
                    f.file_name().unwrap_or_default().to_string_lossy()
                ),
                file: Some(f.clone()),
                node,
            });
        }
    }
    if let Some(v) = &app.values {
        out.push(Layer {
            name: "inline values".into(),
            file: None,
            node: v.clone(),
        });
    }
    out
}

/// The step of `.Values.<path>`: the layer that supplies it.
/// A mapping or list supplied whole (`toYaml .Values.resources`) is
/// narrowed to the scalar of it that the field `(path, value)` printed: the
/// one whose path inside it ends the field's path and whose text is the
/// value.
fn values_step(
    root: &Path,
    layers: &[Layer],
    path: &str,
    field: (&str, &str),
    lines: &mut Lines,
) -> Step {
    let keys: Vec<&str> = path.split('.').collect();
    let detail = format!(".Values.{path}");
    let Some((layer, node)) = layers
        .iter()
        .rev()
        .find_map(|l| Some((l, l.node.get_path(&keys).filter(|n| !n.is_null())?)))
    else {
        return Step {
            by: "values".into(),
            value: String::new(),
            detail: Some(format!("{detail} (set by no values layer: --set or unset)")),
            at: None,
            config: None,
        };
    };
    let (node, value, detail) = match node.as_scalar() {
        Some(s) => (node, s.text.clone(), detail),
        None => match narrow(node, field) {
            Some((inner, n)) => (n, field.1.to_string(), format!("{detail}.{inner}")),
            None => (node, format!("<{}>", node.kind_name()), detail),
        },
    };
    Step {
        by: "values".into(),
        value,
        detail: Some(format!("{detail} from {}", layer.name)),
        at: layer
            .file
            .as_ref()
            .map(|f| place(root, f, node.pos.line, lines)),
        config: None,
    }
}

/// The scalar of `node` the field `(path, value)` is: its path inside
/// `node` and the node.
fn narrow<'n>(node: &'n Node, (path, value): (&str, &str)) -> Option<(String, &'n Node)> {
    let (inner, _, _) = scalars(node)
        .into_iter()
        .find(|(inner, text, _)| text == value && path.ends_with(&format!(".{inner}")))?;
    let mut n = node;
    for k in inner.split('.') {
        n = n.get(k)?;
    }
    Some((inner, n))
}
