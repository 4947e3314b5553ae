//! Helm's engine (`pkg/engine/engine.go`): every template of the chart and
//! its subcharts in one template set (parsed deepest path first, so the
//! parent's `define`s win), executed with its chart's scope (`.Values`,
//! `.Chart`, `.Files`, `.Release`, `.Capabilities`, `.Template`), with
//! `missingkey=zero`, `<no value>` stripped, and helm's error rewriting.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::chart::Chart;
use super::chart_json;
use super::funcs::{WARN_END, WARN_START};
use super::objects::{Files, Record, VersionSet};
use super::scope::Scopes;
use super::{Error, HelmVersion, Options, TemplateError};
use crate::gotmpl::{Elem, ExecOptions, ExecShared, TemplateSet, Value, GO_MAX_PAREN_DEPTH};

/// A template to render (its text borrowed from the chart) and the scope
/// it renders in.
struct Renderable<'a> {
    text: &'a str,
    /// Its chart's index in the render's [`Scopes`].
    chart: usize,
    base_path: String,
}

fn text_field(meta: &Value, key: &str) -> Value {
    match meta {
        Value::Map(m) => match m.get(key) {
            Some(Value::Str(s)) => Value::Str(s),
            Some(Value::Nil) | None => Value::from(""),
            Some(other) => Value::from(crate::gotmpl::fmt::to_string(&other)),
        },
        _ => Value::from(""),
    }
}

fn list_field(meta: &Value, key: &str, elem: Elem) -> Value {
    let items = match meta {
        Value::Map(m) => match m.get(key) {
            Some(Value::List(l)) => l.items.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    Value::typed_list(elem, items)
}

/// The string fields of `chart.Metadata`, keyed by Go field name.
fn text_fields(c: &Chart) -> BTreeMap<String, Value> {
    let mut f = BTreeMap::new();
    for (field, key) in [
        ("Home", "home"),
        ("Version", "version"),
        ("Description", "description"),
        ("Icon", "icon"),
        ("APIVersion", "apiVersion"),
        ("Condition", "condition"),
        ("Tags", "tags"),
        ("AppVersion", "appVersion"),
        ("KubeVersion", "kubeVersion"),
        ("Type", "type"),
    ] {
        f.insert(field.to_string(), text_field(&c.metadata, key));
    }
    f.insert("Name".into(), Value::from(c.name.as_str()));
    f
}

/// `.Chart`: `chart.Metadata` plus `IsRoot`.
fn chart_object(c: &Chart, is_root: bool) -> Value {
    let m = &c.metadata;
    let mut f = text_fields(c);
    f.insert("Sources".into(), list_field(m, "sources", Elem::String));
    f.insert("Keywords".into(), list_field(m, "keywords", Elem::String));
    f.insert(
        "Maintainers".into(),
        list_field(m, "maintainers", Elem::Interface),
    );
    f.insert(
        "Dependencies".into(),
        Value::typed_list(Elem::Interface, chart_json::dependency_objects(c)),
    );
    let annotations = match m {
        Value::Map(mm) => match mm.get("annotations") {
            Some(Value::Map(a)) => {
                Value::typed_map(Elem::String, a.entries().into_iter().collect())
            }
            _ => Value::typed_map(Elem::String, BTreeMap::new()),
        },
        _ => Value::typed_map(Elem::String, BTreeMap::new()),
    };
    f.insert("Annotations".into(), annotations);
    let deprecated =
        matches!(m, Value::Map(mm) if matches!(mm.get("deprecated"), Some(Value::Bool(true))));
    f.insert("Deprecated".into(), Value::Bool(deprecated));
    f.insert("IsRoot".into(), Value::Bool(is_root));
    Value::Object(Arc::new(
        Record::new("chartutil.chartMetaData", f).with_json_fields(chart_json::members(c, is_root)),
    ))
}

/// helm4's `.Chart`: `structToMap(chart.Metadata)` plus `IsRoot`, a plain
/// map keyed by Go field names, so a missing field is empty, not an error.
fn chart_map(c: &Chart, is_root: bool) -> Value {
    let m = &c.metadata;
    let mut f = text_fields(c);
    let items = |key: &str| match m {
        Value::Map(mm) => match mm.get(key) {
            Some(Value::List(l)) => l.items.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    // structToMap turns every slice into []interface{}, nested structs into maps.
    f.insert("Sources".into(), Value::list(items("sources")));
    f.insert("Keywords".into(), Value::list(items("keywords")));
    let maintainers = items("maintainers")
        .iter()
        .map(|mt| {
            let mut e = BTreeMap::new();
            for (field, key) in [("Name", "name"), ("Email", "email"), ("URL", "url")] {
                e.insert(field.to_string(), text_field(mt, key));
            }
            Value::map(e)
        })
        .collect();
    f.insert("Maintainers".into(), Value::list(maintainers));
    let deps = chart_json::processed_dependencies(c)
        .iter()
        .map(|d| {
            let mut e = BTreeMap::new();
            for (field, key) in [
                ("Name", "name"),
                ("Version", "version"),
                ("Repository", "repository"),
                ("Condition", "condition"),
                ("Alias", "alias"),
            ] {
                e.insert(field.to_string(), text_field(d, key));
            }
            let list = |key: &str| match d {
                Value::Map(dm) => match dm.get(key) {
                    Some(Value::List(l)) => l.items.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            e.insert("Tags".into(), Value::list(list("tags")));
            e.insert("ImportValues".into(), Value::list(list("import-values")));
            // ProcessDependencies marks the dependencies it kept as enabled.
            let enabled =
                matches!(d, Value::Map(dm) if matches!(dm.get("enabled"), Some(Value::Bool(true))));
            e.insert("Enabled".into(), Value::Bool(enabled));
            Value::map(e)
        })
        .collect();
    f.insert("Dependencies".into(), Value::list(deps));
    let annotations = match m {
        Value::Map(mm) => match mm.get("annotations") {
            Some(Value::Map(a)) => {
                Value::typed_map(Elem::String, a.entries().into_iter().collect())
            }
            _ => Value::Nil,
        },
        _ => Value::Nil,
    };
    f.insert("Annotations".into(), annotations);
    let deprecated =
        matches!(m, Value::Map(mm) if matches!(mm.get("deprecated"), Some(Value::Bool(true))));
    f.insert("Deprecated".into(), Value::Bool(deprecated));
    f.insert("IsRoot".into(), Value::Bool(is_root));
    Value::map(f)
}

/// `.Capabilities`.
fn capabilities(opts: &Options) -> Value {
    let kv = opts.kube_version();
    let text = |s: &str| Value::from(s);
    let exported = vec![
        ("Version".to_string(), text(&kv.version)),
        ("Major".to_string(), text(&kv.major)),
        ("Minor".to_string(), text(&kv.minor)),
    ];
    // helm 4 adds the unexported `normalizedVersion` after `Version`.
    let mut fields = exported.clone();
    if opts.helm_version == HelmVersion::V4 {
        fields.insert(1, ("normalizedVersion".to_string(), text(&kv.normalized)));
    }
    let mut k: BTreeMap<String, Value> = exported.iter().cloned().collect();
    k.insert("GitVersion".into(), text(&kv.version));
    let kube = Record::new("*chartutil.KubeVersion", k)
        .with_pointer_string(kv.normalized.clone())
        .with_struct_fields(fields)
        .with_json_fields(exported);
    let mut apis: Vec<String> = opts
        .helm_version
        .default_api_versions()
        .iter()
        .map(|s| s.to_string())
        .collect();
    apis.extend(opts.api_versions.iter().cloned());
    let helm = opts.helm_version.build_info_record();
    let mut c = BTreeMap::new();
    c.insert("KubeVersion".into(), Value::Object(Arc::new(kube)));
    c.insert(
        "APIVersions".into(),
        Value::Object(Arc::new(VersionSet(apis))),
    );
    c.insert("HelmVersion".into(), Value::Object(Arc::new(helm)));
    let order = ["KubeVersion", "APIVersions", "HelmVersion"];
    let json = order
        .iter()
        .filter_map(|k| c.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    Value::Object(Arc::new(
        Record::new("*chartutil.Capabilities", c).with_json_fields(json),
    ))
}

/// helm's `recAllTpls`: collects templates with their chart's scope map
/// (one per chart, see `scope.rs`) and returns the chart's index in
/// `scopes`. `tree_path` names this chart's templates unless
/// `full_path.rs` found that helm 3 names them otherwise (an aliased
/// chart's unlisted subcharts).
#[allow(clippy::too_many_arguments)]
fn collect<'a>(
    version: HelmVersion,
    c: &'a Chart,
    tree_path: &str,
    values: &Value,
    common: &BTreeMap<String, Value>,
    is_root: bool,
    scopes: &mut Scopes,
    out: &mut BTreeMap<String, Renderable<'a>>,
) -> usize {
    let full_path = c.full_path.as_deref().unwrap_or(tree_path);
    let mut subcharts = Vec::new();
    let mut next = common.clone();
    let chart = match version {
        HelmVersion::V3 => chart_object(c, is_root),
        HelmVersion::V4 => chart_map(c, is_root),
    };
    next.insert("Chart".into(), chart);
    next.insert(
        "Files".into(),
        Value::Object(Arc::new(Files::shared(Arc::clone(&c.files)))),
    );
    next.insert("Values".into(), values.clone());
    for sub in &c.dependencies {
        let sv = match values {
            Value::Map(m) => match m.get(&sub.name) {
                Some(v @ Value::Map(_)) => v,
                _ => Value::map(BTreeMap::new()),
            },
            _ => Value::map(BTreeMap::new()),
        };
        let path = format!("{full_path}/charts/{}", sub.name);
        let id = collect(version, sub, &path, &sv, common, false, scopes, out);
        subcharts.push((sub.name.clone(), id));
    }
    let id = scopes.add_chart(next, subcharts);
    for (rel, text) in c.templates.iter() {
        let base = rel.rsplit('/').next().unwrap_or(rel);
        if c.is_library() && !base.starts_with('_') {
            continue;
        }
        out.insert(
            format!("{full_path}/{rel}"),
            Renderable {
                text,
                chart: id,
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    id
}

/// helm's `sortTemplates`: deepest paths first, then reverse lexical.
fn sort_templates(names: &mut [String]) {
    names.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
}

/// helm's `cleanupParseError`.
fn parse_error(name: &str, msg: &str) -> String {
    let tokens: Vec<&str> = msg.split(": ").collect();
    if tokens.len() == 1 {
        return format!("parse error in ({name}): {msg}");
    }
    format!(
        "parse error at ({}): {}",
        tokens[1],
        tokens[tokens.len() - 1]
    )
}

/// helm's `reformatExecErrorMsg` (helm 3 and 4 alike up to the last
/// step): `fail`/`required` messages as `execution error at (...)`; helm 4
/// then lays the rest out link by link ([`super::traceable`]).
fn exec_error(name: &str, msg: &str, version: HelmVersion) -> String {
    let tokens: Vec<&str> = msg.splitn(3, ": ").collect();
    if tokens.len() != 3 {
        return format!("execution error in ({name}): {msg}");
    }
    if let Some((_, rest)) = tokens[2].split_once(WARN_START) {
        if let Some((warning, _)) = rest.rsplit_once(WARN_END) {
            return format!("execution error at ({}): {warning}", tokens[1]);
        }
    }
    match version {
        HelmVersion::V3 => msg.to_string(),
        HelmVersion::V4 => super::traceable::layout(msg).unwrap_or_else(|| msg.to_string()),
    }
}

/// The template options of `version`'s engine: helm4 is built with Go
/// 1.25, whose text/template ranges over ints, refuses parentheses nested
/// past 10,000 and counts comments' lines.
pub(super) fn exec_options(version: HelmVersion) -> ExecOptions {
    let v4 = version == HelmVersion::V4;
    ExecOptions {
        range_over_int: v4,
        max_paren_depth: v4.then_some(GO_MAX_PAREN_DEPTH),
        comment_newlines: v4,
        ..ExecOptions::default()
    }
}

/// A template's output as executed (before `<no value>` is stripped) and
/// the actions that printed it ([`Options::trace_actions`]).
#[derive(Clone, Debug, Default)]
pub struct TracedTemplate {
    /// The output.
    pub text: String,
    /// Its actions, in output order.
    pub actions: Vec<crate::gotmpl::ActionMark>,
}

/// What [`render`] returns: each template's output by path, warnings, and
/// the traced templates when asked.
type RenderedTemplates = (
    BTreeMap<String, String>,
    Vec<crate::warning::Warning>,
    BTreeMap<String, TracedTemplate>,
);

/// Renders every template; returns (template path, output) sorted by
/// path, plus warnings.
pub fn render(
    chart: &Chart,
    values: &Value,
    opts: &Options,
    loaded: &super::LoadedChart,
) -> Result<RenderedTemplates, Error> {
    let mut release = BTreeMap::new();
    release.insert("Name".into(), Value::from(opts.release_name.as_str()));
    release.insert("Namespace".into(), Value::from(opts.namespace.as_str()));
    release.insert("IsUpgrade".into(), Value::Bool(opts.is_upgrade));
    release.insert("IsInstall".into(), Value::Bool(!opts.is_upgrade));
    release.insert("Revision".into(), Value::Int(1));
    release.insert("Service".into(), Value::from("Helm"));
    let mut common = BTreeMap::new();
    common.insert("Release".into(), Value::map(release));
    common.insert("Capabilities".into(), capabilities(opts));
    let mut tpls = BTreeMap::new();
    let mut scopes = Scopes::default();
    collect(
        opts.helm_version,
        chart,
        &chart.name,
        values,
        &common,
        true,
        &mut scopes,
        &mut tpls,
    );

    let mut names: Vec<String> = tpls.keys().cloned().collect();
    sort_templates(&mut names);
    let mut set = TemplateSet::new("gotpl", loaded.funcs(opts.helm_version));
    let exec = exec_options(opts.helm_version);
    // Parsing depends only on each text (and the function names): parse
    // them all at once, then add them in helm's order, stopping at the
    // first parse error in that order as helm does.
    let parses: Vec<_> = names
        .par_iter()
        .map(|n| {
            let r = tpls.get(n)?;
            Some(loaded.parse(&set, opts.helm_version, n, r.text, &exec))
        })
        .collect();
    for (n, parse) in names.iter().zip(parses) {
        let Some(parse) = parse else { continue };
        let trees = parse.map_err(|e| {
            Error::Template(Box::new(TemplateError {
                template: n.clone(),
                message: parse_error(n, &e.to_string()),
            }))
        })?;
        set.add_parsed(&trees);
    }
    let jobs: Vec<(&String, &Renderable<'_>)> = names
        .iter()
        .filter(|n| !n.rsplit('/').next().unwrap_or(n).starts_with('_'))
        .filter_map(|n| tpls.get(n).map(|r| (n, r)))
        .collect();
    for (n, r) in &jobs {
        scopes.add_job(r.chart, n, &r.base_path);
    }
    let serial = loaded.runs_serially();
    // Copies made now are older than the speculative run's watermark.
    let copies = super::execute::speculates(jobs.len(), serial).then(|| scopes.copies());
    let traced = std::sync::Mutex::new(BTreeMap::new());
    let run = |i: usize, shared: &ExecShared| -> Result<String, Error> {
        let n = jobs[i].0;
        let scope = match &copies {
            Some(c) if shared.is_guarded() => c[i].clone(),
            _ => scopes.shared(i),
        };
        let text = match opts.trace_actions {
            false => set.execute_shared(n, scope, &exec, shared),
            true => set
                .execute_traced(n, scope, &exec, shared)
                .map(|(text, actions)| {
                    let t = TracedTemplate {
                        text: text.clone(),
                        actions,
                    };
                    let mut all = traced.lock().unwrap_or_else(|e| e.into_inner());
                    all.insert(n.clone(), t);
                    text
                }),
        }
        .map_err(|e| {
            Error::Template(Box::new(TemplateError {
                template: n.clone(),
                message: exec_error(n, &e.to_string(), opts.helm_version),
            }))
        })?;
        // engine.go strips `<no value>`; most outputs have none, so they
        // are kept as they are rather than copied.
        if text.contains("<no value>") {
            return Ok(text.replace("<no value>", ""));
        }
        Ok(text)
    };
    let shared = ExecShared::default();
    let texts = super::execute::run_all(jobs.len(), &run, &shared, serial)?;
    let out = jobs
        .iter()
        .zip(texts)
        .map(|((n, _), text)| ((*n).clone(), text))
        .collect();
    let traced = traced.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok((out, shared.warnings(), traced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_order_and_errors() {
        let mut v = vec![
            "a/templates/x.yaml".to_string(),
            "a/charts/b/templates/y.yaml".into(),
            "a/templates/w.yaml".into(),
        ];
        sort_templates(&mut v);
        assert_eq!(
            v,
            vec![
                "a/charts/b/templates/y.yaml",
                "a/templates/x.yaml",
                "a/templates/w.yaml"
            ]
        );
        assert_eq!(
            parse_error(
                "a/t.yaml",
                "template: a/t.yaml:3: function \"x\" not defined"
            ),
            "parse error at (a/t.yaml:3): function \"x\" not defined"
        );
        assert_eq!(
            exec_error("t", "template: t:1:3: executing \"t\" at <fail \"x\">: error calling fail: HELM_ERR_STARTboomHELM_ERR_END", HelmVersion::V3),
            "execution error at (t:1:3): boom"
        );
    }
}
