//! Chains of a chart app: the chart rendered with its actions traced
//! ([`crate::helm::Options::trace_actions`]); each rendered scalar is
//! printed by the actions whose output bytes it overlaps, and each
//! `.Values` path an action names is supplied by the last values layer
//! that sets it (chart defaults, a subchart's parent charts' defaults,
//! then `valueFiles` in order, then inline `values`, then each `set`
//! pair), as helm coalesces them; `global.` paths are read at the top of
//! every layer. A field a helper printed (`include`) is traced to the
//! helper's action and the values it read, then to the including line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{kind_name, place, scalars, FieldOrigin, Lines, Place, ResourceOrigins, Step};
use crate::env::ChartApp;
use crate::gotmpl::ActionMark;
use crate::yaml::{self, Node, Resolver};

/// One values layer: its name and its parsed document.
struct Layer {
    name: String,
    file: Option<PathBuf>,
    node: Node,
    /// The keys its values for the template's chart are under (a parent's
    /// `redis:` for its subchart `redis`).
    prefix: Vec<String>,
}

/// Renders the chart app with its actions traced and explains every field.
pub fn explain(root: &Path, app: &ChartApp) -> Result<Vec<(ResourceOrigins, Arc<Node>)>, String> {
    let mut app = app.clone();
    app.chart = root.join(&app.chart);
    app.value_files = app.value_files.iter().map(|f| root.join(f)).collect();
    let charts = crate::helm::ChartCache::default();
    let (rendered, _) =
        crate::env::render_chart_with(&app, &charts, true).map_err(|e| e.to_string())?;
    let mut scoped = Scoped::default();
    let mut lines = Lines::default();
    // The traced outputs as printed: helm's engine strips `<no value>`.
    let printed: std::collections::BTreeMap<&String, crate::helm::TracedTemplate> = rendered
        .actions
        .iter()
        .map(|(k, t)| (k, as_printed(t)))
        .collect();
    let mut out = Vec::new();
    for o in &rendered.objects {
        let traced = o.source.as_ref().and_then(|s| Some((s, printed.get(s)?)));
        // The document as printed: `# Source: …` line, text, newline.
        let doc = o
            .printed
            .split_once('\n')
            .map(|(_, rest)| rest.strip_suffix('\n').unwrap_or(rest))
            .unwrap_or_default();
        let offset = traced.and_then(|(_, t)| t.text.find(doc));
        // An object no template printed (a `crds/` file): its file's text.
        let file_text = match (traced, &o.source) {
            (None, Some(source)) => {
                let inside = source.split_once('/').map_or("", |(_, r)| r);
                std::fs::read_to_string(app.chart.join(inside)).ok()
            }
            _ => None,
        };
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
                    // A helper's action printed it when one `include`d
                    // by the action printed exactly the value under the
                    // field's key: that action and its values, then the
                    // including line.
                    let helper = marks.first().and_then(|m| helper_mark(m, &path, &value));
                    if let Some(h) = helper {
                        chain.push(Step {
                            by: "template".into(),
                            value: value.clone(),
                            detail: Some("(helper)".into()),
                            at: Some(template_place(
                                root, &app.chart, &h.file, h.line, &mut lines,
                            )),
                            config: None,
                        });
                        let layers = scoped.get(&app, &h.file);
                        for v in &h.values {
                            chain.push(values_step(root, layers, v, (&path, &value), &mut lines));
                        }
                    }
                    if let Some(m) = marks.first() {
                        chain.push(Step {
                            by: "template".into(),
                            value: value.clone(),
                            detail: helper.map(|_| "(include)".into()),
                            at: Some(template_place(
                                root, &app.chart, &m.file, m.line, &mut lines,
                            )),
                            config: None,
                        });
                    }
                    for m in &marks {
                        let layers = scoped.get(&app, &m.file);
                        for v in &m.values {
                            chain.push(values_step(root, layers, v, (&path, &value), &mut lines));
                        }
                    }
                }
                if let (None, Some(source), Some(text)) = (traced, &o.source, &file_text) {
                    // Not a template: a `crds/` file, printed as written.
                    let at = text.find(doc).and_then(|off| {
                        let file = app
                            .chart
                            .join(source.split_once('/').map_or("", |(_, r)| r));
                        let line =
                            lines.line_of(&file, (off + pos.start as usize) as u32, false)?;
                        let p = place(root, &file, line, &mut lines);
                        let first = value.lines().next().unwrap_or_default().trim();
                        p.text.contains(first).then_some(p)
                    });
                    chain.push(Step {
                        by: "crds".into(),
                        value: value.clone(),
                        detail: Some(source.clone()),
                        at,
                        config: None,
                    });
                }
                if chain.is_empty() {
                    if let Some((source, t)) = traced {
                        // No action printed it: literal text of the template.
                        let at = offset.and_then(|off| {
                            let start = off + pos.start as usize;
                            literal_place(root, &app.chart, source, t, start, &value, &mut lines)
                        });
                        chain.push(Step {
                            by: "template text".into(),
                            value: value.clone(),
                            detail: Some(source.clone()),
                            at,
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

/// `t` with `<no value>` taken out of its text, as helm prints it
/// (engine.go), and its actions' offsets moved to match.
fn as_printed(t: &crate::helm::TracedTemplate) -> crate::helm::TracedTemplate {
    const NO_VALUE: &str = "<no value>";
    let cuts: Vec<usize> = t.text.match_indices(NO_VALUE).map(|(i, _)| i).collect();
    if cuts.is_empty() {
        return t.clone();
    }
    let moved = |o: usize| -> usize {
        let gone: usize = cuts
            .iter()
            .map(|&c| match (c + NO_VALUE.len() <= o, c < o) {
                (true, _) => NO_VALUE.len(),
                (false, true) => o - c,
                (false, false) => 0,
            })
            .sum();
        o - gone
    };
    let mut out = t.clone();
    out.text = t.text.replace(NO_VALUE, "");
    for m in &mut out.actions {
        m.start = moved(m.start);
        m.end = moved(m.end);
    }
    out
}

/// The action of a helper `m` ran by `include` (at any depth, the
/// deepest first) that printed `value` as the value of the field at
/// `path`: its printed text, unquoted, is the value, and the text before
/// it on its output line is the field's key (`app.kubernetes.io/version:`),
/// when there is one.
fn helper_mark<'m>(m: &'m ActionMark, path: &str, value: &str) -> Option<&'m ActionMark> {
    m.inner.iter().find_map(|inc| {
        inc.marks.iter().find_map(|h| {
            if let Some(deeper) = helper_mark(h, path, value) {
                return Some(deeper);
            }
            let printed = h.printed(&inc.output).trim();
            let unquoted = printed
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .unwrap_or(printed);
            if value.is_empty() || unquoted != value {
                return None;
            }
            let before = inc.output.get(..h.start).unwrap_or_default();
            let line = before.rsplit('\n').next().unwrap_or_default().trim();
            let key = line.trim_start_matches("- ").trim_end_matches(':').trim();
            let keyed = key.is_empty() || path == key || path.ends_with(&format!(".{key}"));
            keyed.then_some(h)
        })
    })
}

/// The template line of literal text printed at byte `start` of `t`'s
/// output: the line of the last action of the template itself before it
/// plus the lines printed since (the first line when none is before), kept
/// only when that line holds `value` (an action that printed nothing, such
/// as `{{- if }}`, shifts lines without a mark).
fn literal_place(
    root: &Path,
    chart: &Path,
    source: &str,
    t: &crate::helm::TracedTemplate,
    start: usize,
    value: &str,
    lines: &mut Lines,
) -> Option<Place> {
    let bytes = t.text.as_bytes();
    let (line, from) = t
        .actions
        .iter()
        .rfind(|m| m.file == source && m.end <= start)
        .map_or((1, 0), |m| (m.line, m.end));
    let printed = bytes
        .get(from..start)?
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    let p = template_place(root, chart, source, line + printed as u32, lines);
    let first = value.lines().next().unwrap_or_default().trim();
    p.text.contains(first).then_some(p)
}

/// `chart/templates/x.yaml` (helm's template path) as a file of the chart.
fn template_place(root: &Path, chart: &Path, file: &str, line: u32, lines: &mut Lines) -> Place {
    let inside = file.split_once('/').map_or(file, |(_, rest)| rest);
    place(root, &chart.join(inside), line, lines)
}

/// The values layers a template of the chart at `scope` (the subchart
/// names from the app's chart down: `[]` for the chart itself, `["redis"]`
/// for `charts/redis`) reads, lowest precedence first, as helm coalesces
/// them (`CoalesceValues`/`ToRenderValues`): the chart's own defaults,
/// then each parent chart's defaults under the subchart's key (nearest
/// parent first), then `valueFiles` in order, inline `values` and `set`,
/// all under the full key. A `global.` path is read at the top of every
/// layer (globals flow down unchanged).
fn layers(app: &ChartApp, scope: &[String]) -> Vec<Layer> {
    let read = |f: &Path| -> Option<Node> {
        let text = std::fs::read_to_string(f).ok()?;
        yaml::parse_one(&text, Resolver::V3).ok()
    };
    let chart_dir = |depth: usize| {
        scope
            .iter()
            .take(depth)
            .fold(app.chart.clone(), |d, s| d.join("charts").join(s))
    };
    let mut out = Vec::new();
    for depth in (0..=scope.len()).rev() {
        let defaults = chart_dir(depth).join("values.yaml");
        let Some(node) = read(&defaults) else {
            continue;
        };
        let name = match depth == scope.len() {
            true => "chart defaults".to_string(),
            false => format!("parent chart defaults ({})", scope[depth..].join(".")),
        };
        out.push(Layer {
            name,
            file: Some(defaults),
            node,
            prefix: scope[depth..].to_vec(),
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
                prefix: scope.to_vec(),
            });
        }
    }
    if let Some(v) = &app.values {
        out.push(Layer {
            name: "inline values".into(),
            file: None,
            node: v.clone(),
            prefix: scope.to_vec(),
        });
    }
    for set in &app.set {
        // `a.b=x,c=y`: each pair a layer of its own, later ones winning
        // (helm's strvals; a value's escaped commas are not split).
        for pair in split_set(set) {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            let mut node = Node::string(value);
            for k in key.rsplit('.') {
                let mut m = Node::map();
                m.set(k, node);
                node = m;
            }
            out.push(Layer {
                name: format!("set {pair}"),
                file: None,
                node,
                prefix: scope.to_vec(),
            });
        }
    }
    out
}

/// The values layers of each chart of an app whose templates printed, by
/// the template's subchart scope, each computed once.
#[derive(Default)]
struct Scoped {
    by_scope: std::collections::HashMap<Vec<String>, Vec<Layer>>,
}

impl Scoped {
    /// The layers the template `file` (helm's template path) reads.
    fn get(&mut self, app: &ChartApp, file: &str) -> &[Layer] {
        let scope = scope_of(file);
        self.by_scope
            .entry(scope)
            .or_insert_with_key(|scope| layers(app, scope))
    }
}

/// The pairs of a `--set` argument: split at commas not escaped by `\`.
fn split_set(set: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in set.chars() {
        match (escaped, c) {
            (false, '\\') => escaped = true,
            (false, ',') => out.push(String::new()),
            (_, c) => {
                escaped = false;
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The subchart names of helm's template path `chart/charts/a/charts/b/templates/x`.
fn scope_of(template: &str) -> Vec<String> {
    let mut parts = template.split('/').skip(1).peekable();
    let mut out = Vec::new();
    while parts.next() == Some("charts") {
        match parts.next() {
            Some(name) => out.push(name.to_string()),
            None => break,
        }
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
    let own: Vec<&str> = path.split('.').collect();
    let detail = format!(".Values.{path}");
    let global = own.first() == Some(&"global");
    let keys_in = |l: &Layer| -> Vec<String> {
        match global {
            true => own.iter().map(|k| k.to_string()).collect(),
            false => l
                .prefix
                .iter()
                .cloned()
                .chain(own.iter().map(|k| k.to_string()))
                .collect(),
        }
    };
    let found = layers.iter().rev().find_map(|l| {
        let keys = keys_in(l);
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let n = l.node.get_path(&keys).filter(|n| !n.is_null())?;
        Some((l, n, keys_in(l)))
    });
    let Some((layer, node, keys)) = found else {
        return Step {
            by: "values".into(),
            value: String::new(),
            detail: Some(format!("{detail} (set by no values layer)")),
            at: None,
            config: None,
        };
    };
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let (line, value, detail) = match node.as_scalar() {
        Some(s) => (node.pos.line, s.text.clone(), detail),
        None => match narrow(node, field) {
            Some((inner, n)) => (n.pos.line, field.1.to_string(), format!("{detail}.{inner}")),
            // Read whole: the line of the key that names it (a block
            // list's own place is its first item).
            None => (
                key_line(&layer.node, &keys).unwrap_or(node.pos.line),
                format!("<{}>", node.kind_name()),
                detail,
            ),
        },
    };
    Step {
        by: "values".into(),
        value,
        detail: Some(format!("{detail} from {}", layer.name)),
        at: layer.file.as_ref().map(|f| place(root, f, line, lines)),
        config: None,
    }
}

/// The line of the last key of `keys` in `doc`.
fn key_line(doc: &Node, keys: &[&str]) -> Option<u32> {
    let (last, parents) = keys.split_last()?;
    let parent = doc.get_path(parents)?;
    parent
        .as_map()?
        .iter()
        .find(|(k, _)| k.key_text() == Some(*last))
        .map(|(k, _)| k.pos.line)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        let p = dir.join(file);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    }

    /// The last step of `path` of the single rendered object of `kind`,
    /// as `by file:line` (or `by` alone), with the values steps after it.
    fn chain_of(rs: &[(ResourceOrigins, Arc<Node>)], kind: &str, path: &str) -> Vec<String> {
        let r = rs
            .iter()
            .find(|(r, _)| r.resource.starts_with(kind))
            .unwrap_or_else(|| panic!("no {kind}"));
        let f =
            r.0.fields
                .iter()
                .find(|f| f.path == path)
                .unwrap_or_else(|| panic!("no {path}"));
        f.chain
            .iter()
            .map(|s| match &s.at {
                Some(p) => format!("{} {}", s.by, p.display()),
                None => format!("{} {}", s.by, s.detail.as_deref().unwrap_or_default()),
            })
            .collect()
    }

    #[test]
    fn layers_are_told_apart_as_helm_coalesces_them() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = tmp.path();
        write(
            root,
            "c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\n",
        );
        write(
            root,
            "c/values.yaml",
            "a: default\nb: default\nsub:\n  x: parent\nglobal:\n  g: parent-global\n",
        );
        write(
            root,
            "c/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  z: {{ .Values.unset }}\n  a: {{ .Values.a }}\n  b: {{ .Values.b }}\n  h: {{ include \"c.h\" . }}\n",
        );
        write(
            root,
            "c/templates/_h.tpl",
            "{{- define \"c.h\" -}}\n{{ .Values.b }}\n{{- end -}}\n",
        );
        write(
            root,
            "c/charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
        );
        write(root, "c/charts/sub/values.yaml", "x: own\ny: own\n");
        write(
            root,
            "c/charts/sub/templates/s.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  x: {{ .Values.x }}\n  g: {{ .Values.global.g }}\n",
        );
        write(root, "prod.yaml", "a: from-file\n");
        let app = ChartApp {
            chart: "c".into(),
            release_name: "r".into(),
            value_files: vec!["prod.yaml".into()],
            set: vec!["b=from-set".into()],
            ..Default::default()
        };
        let rs = explain(root, &app).unwrap_or_else(|e| panic!("{e}"));
        // `data.z` printed `<no value>`, which helm strips: the fields
        // after it are still found in the traced output.
        assert_eq!(
            chain_of(&rs, "ConfigMap", "data.a"),
            ["template c/templates/cm.yaml:7", "values prod.yaml:1"]
        );
        assert_eq!(
            chain_of(&rs, "ConfigMap", "data.b"),
            [
                "template c/templates/cm.yaml:8",
                "values .Values.b from set b=from-set"
            ]
        );
        // Printed by a helper: its line and what it read, then the include.
        assert_eq!(
            chain_of(&rs, "ConfigMap", "data.h"),
            [
                "template c/templates/_h.tpl:2",
                "values .Values.b from set b=from-set",
                "template c/templates/cm.yaml:9"
            ]
        );
        // A subchart: the parent's override, a global.
        assert_eq!(
            chain_of(&rs, "Secret", "stringData.x"),
            [
                "template c/charts/sub/templates/s.yaml:6",
                "values c/values.yaml:4"
            ]
        );
        assert_eq!(
            chain_of(&rs, "Secret", "stringData.g"),
            [
                "template c/charts/sub/templates/s.yaml:7",
                "values c/values.yaml:6"
            ]
        );
    }
}
