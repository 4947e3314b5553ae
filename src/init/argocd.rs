//! Argo CD `Application`s (one source, or several of which one renders and
//! the others are `ref`s for value files) and `ApplicationSet`s (list,
//! git-directory and matrix generators), and Flux `Kustomization`s, as apps:
//! the source path (a kustomization or a chart of this repository),
//! `helm.valueFiles`,
//! `helm.releaseName`, `helm.parameters`, `destination.namespace`; the
//! environment is the destination cluster's name, else the namespace's
//! `-<env>` suffix (Flux: the `clusters/<env>` directory of the manifest).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::tree::{Manifest, Tree};
use super::{join_clean, Found, Origin, Unclassified};
use crate::env::{is_valid_name, ChartApp, Source};
use crate::yaml::{Node, Value};

/// ApplicationSet parameters: `{{name}}` (or `{{.name}}` with goTemplate)
/// → value.
type Params = BTreeMap<String, String>;

/// The apps of every Argo CD and Flux object in the tree.
pub fn apps(root: &Path, t: &Tree, unclassified: &mut Vec<Unclassified>) -> Vec<Found> {
    let mut out = Vec::new();
    for m in &t.objects {
        let kind = m.doc.get_str("kind").unwrap_or_default();
        let api = m.doc.get_str("apiVersion").unwrap_or_default();
        let result = match kind {
            "Application" => application(root, m, &View::plain(&m.doc), None).map(|f| vec![f]),
            "ApplicationSet" => application_set(root, m),
            _ if api.starts_with("kustomize.toolkit.fluxcd.io/") => flux(root, m).map(|f| vec![f]),
            _ => Ok(Vec::new()),
        };
        let name = m.doc.get_path(&["metadata", "name"]).and_then(Node::as_str);
        match result {
            Ok(found) => out.extend(found),
            Err(reason) => unclassified.push(Unclassified {
                path: m.file.clone(),
                reason: format!("{kind} `{}`: {reason}", name.unwrap_or("?")),
            }),
        }
    }
    out
}

/// A read-only view of an Application (template), with ApplicationSet
/// parameters substituted into the strings read.
#[derive(Clone, Copy)]
struct View<'a> {
    node: &'a Node,
    params: Option<&'a Params>,
    go: bool,
}

impl<'a> View<'a> {
    fn plain(node: &'a Node) -> View<'a> {
        View {
            node,
            params: None,
            go: false,
        }
    }

    fn get(&self, path: &[&str]) -> Option<&'a Node> {
        self.node.get_path(path)
    }

    /// A string field, parameters substituted (`Ok(None)` when absent).
    fn str(&self, path: &[&str]) -> Result<Option<String>, String> {
        match self.get(path).and_then(Node::as_str) {
            Some(s) => self.subst(s).map(Some),
            None => Ok(None),
        }
    }

    fn strs(&self, path: &[&str]) -> Result<Vec<String>, String> {
        let items = self.get(path).and_then(Node::as_seq).into_iter().flatten();
        items
            .filter_map(Node::as_str)
            .map(|s| self.subst(s))
            .collect()
    }

    /// A copy of `n` with this view's parameters substituted into every
    /// string that names only known ones; others stay as written (Argo CD
    /// interpolates a matrix's second generator this way, leaving what the
    /// first generator's parameters do not resolve).
    fn interpolated(&self, n: &Node) -> Node {
        let mut n = n.clone();
        self.interpolate(&mut n);
        n
    }

    fn interpolate(&self, n: &mut Node) {
        match &mut n.value {
            Value::Scalar(s) => {
                if let Ok(text) = self.subst(&s.text) {
                    s.text = text;
                }
            }
            Value::Seq(items) => items.iter_mut().for_each(|i| self.interpolate(i)),
            Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| self.interpolate(v)),
        }
    }

    /// Argo CD's ApplicationSet rendering of one string: fasttemplate's
    /// `{{ name }}` (spaces trimmed), or with `goTemplate` a plain `.name`
    /// field reference; anything else cannot be resolved here.
    fn subst(&self, s: &str) -> Result<String, String> {
        let Some(params) = self.params else {
            return Ok(s.to_string());
        };
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("{{") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let j = after
                .find("}}")
                .ok_or_else(|| format!("unterminated `{{{{` in `{s}`"))?;
            let expr = after[..j].trim();
            let key = if self.go {
                expr.strip_prefix('.').unwrap_or("")
            } else {
                expr
            };
            match params.get(key) {
                Some(v) => out.push_str(v),
                None => return Err(format!("cannot resolve `{{{{{expr}}}}}` in `{s}`")),
            }
            rest = &after[j + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// One Application (or an ApplicationSet's template with its parameters).
fn application(root: &Path, m: &Manifest, v: &View, set: Option<&str>) -> Result<Found, String> {
    let name = v
        .str(&["metadata", "name"])?
        .ok_or("it has no metadata.name")?;
    let (src, refs) = rendered_source(v)?;
    if let Some(chart) = src.str(&["chart"])? {
        return Err(format!(
            "renders chart `{chart}` from a chart repository; hydrate renders charts of this repository"
        ));
    }
    let path = src.str(&["path"])?.ok_or("its source has no path")?;
    let dir = join_clean(Path::new(""), &path)
        .filter(|d| root.join(d).is_dir())
        .ok_or_else(|| format!("path `{path}` is not a directory of this repository"))?;
    let cluster = v.str(&["spec", "destination", "name"])?;
    let namespace = v
        .str(&["spec", "destination", "namespace"])?
        .unwrap_or_default();
    let env = match cluster.filter(|c| !c.is_empty() && c != "in-cluster") {
        Some(c) => c,
        None => namespace
            .rsplit_once('-')
            .map(|(_, s)| s.to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                format!(
                    "cannot tell its environment: the destination has no cluster name and \
                     namespace `{namespace}` has no -<env> suffix"
                )
            })?,
    };
    let app = name
        .strip_suffix(&format!("-{env}"))
        .or_else(|| name.strip_prefix(&format!("{env}-")))
        .unwrap_or(&name)
        .to_string();
    if !is_valid_name(&app) || !is_valid_name(&env) {
        return Err(format!(
            "`{app}` in `{env}` is not a valid app and environment name"
        ));
    }
    let source = if crate::kustomize::FILE_NAMES
        .iter()
        .any(|f| root.join(&dir).join(f).is_file())
    {
        for opts in ["helm", "kustomize", "plugin"] {
            if src.get(&[opts]).is_some() {
                return Err(format!(
                    "source.{opts} options change what Argo CD renders and are not carried over \
                     by hydrate init"
                ));
            }
        }
        Source::Kustomize(dir)
    } else if root.join(&dir).join("Chart.yaml").is_file() {
        Source::Helm(Box::new(chart_app(
            &src, &refs, dir, &name, &app, namespace,
        )?))
    } else {
        return Err(format!(
            "`{path}` holds plain manifests (no kustomization.yaml or Chart.yaml); \
             hydrate renders kustomizations and charts"
        ));
    };
    Ok(Found {
        env,
        app,
        source,
        origin: Origin::ArgoCd {
            file: m.file.clone(),
            name,
            set: set.map(str::to_string),
        },
    })
}

/// The source an Application renders, as a view, and the names of its
/// `ref` sources. A multi-source Application (`spec.sources`) is read when
/// exactly one source renders (has a `path` or `chart`) and the others
/// only lend their checkout as `$<ref>` to value files, from the same
/// repository (`repoURL`) as the rendered source: this repository.
fn rendered_source<'a>(v: &View<'a>) -> Result<(View<'a>, Vec<String>), String> {
    if let Some(node) = v.get(&["spec", "source"]) {
        return Ok((View { node, ..*v }, Vec::new()));
    }
    let sources = v
        .get(&["spec", "sources"])
        .and_then(Node::as_seq)
        .ok_or("it has no spec.source")?;
    let views: Vec<View<'a>> = sources.iter().map(|node| View { node, ..*v }).collect();
    let mut rendered = Vec::new();
    for s in &views {
        if s.get(&["path"]).is_some() || s.get(&["chart"]).is_some() {
            rendered.push(s);
        }
    }
    let [main] = rendered.as_slice() else {
        return Err(format!(
            "{} of its spec.sources render manifests; hydrate init reads an Application \
             that renders one (plus `ref` sources for value files)",
            rendered.len()
        ));
    };
    let repo = main.str(&["repoURL"])?;
    let mut refs = Vec::new();
    for s in &views {
        let Some(name) = s.str(&["ref"])? else {
            continue;
        };
        if s.str(&["repoURL"])? != repo {
            return Err(format!(
                "its `${name}` source is another repository; hydrate renders from this one"
            ));
        }
        refs.push(name);
    }
    Ok((**main, refs))
}

/// A `helm.valueFiles` entry as a repository path: relative to the chart,
/// or `$<ref>/...` relative to the root of a `ref` source (this repository).
fn value_file(dir: &Path, refs: &[String], f: &str) -> Result<PathBuf, String> {
    let (base, rel) = match f.strip_prefix('$') {
        Some(rest) => {
            let (name, rel) = rest.split_once('/').unwrap_or((rest, ""));
            if !refs.iter().any(|r| r == name) {
                return Err(format!("value file `{f}` names no `ref` source `{name}`"));
            }
            (Path::new(""), rel)
        }
        None => (dir, f),
    };
    join_clean(base, rel).ok_or_else(|| format!("value file `{f}` is outside the repository"))
}

/// `source.helm` of an Application as a chart app: value files are
/// relative to the chart (Argo CD resolves them against the source path),
/// the release is the Application's name unless `releaseName` says, and
/// `.Release.Namespace` is the destination namespace.
fn chart_app(
    v: &View,
    refs: &[String],
    dir: PathBuf,
    name: &str,
    app: &str,
    namespace: String,
) -> Result<ChartApp, String> {
    let at = |k: &'static str| ["helm", k];
    for unsupported in ["values", "valuesObject", "fileParameters"] {
        if v.get(&at(unsupported)).is_some() {
            return Err(format!(
                "helm.{unsupported} is not carried over by hydrate init"
            ));
        }
    }
    let mut value_files = Vec::new();
    for f in v.strs(&at("valueFiles"))? {
        value_files.push(value_file(&dir, refs, &f)?);
    }
    let mut set = Vec::new();
    for p in v
        .get(&at("parameters"))
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        let view = View { node: p, ..*v };
        match (view.str(&["name"])?, view.str(&["value"])?) {
            (Some(k), Some(val)) => set.push(format!("{k}={val}")),
            _ => return Err("a helm parameter needs name and value".into()),
        }
    }
    let release = v
        .str(&at("releaseName"))?
        .unwrap_or_else(|| name.to_string());
    Ok(ChartApp {
        chart: dir,
        // hydrate's default release is the app's name.
        release_name: if release == app {
            String::new()
        } else {
            release
        },
        namespace,
        value_files,
        set,
        ..ChartApp::default()
    })
}

/// Every Application an ApplicationSet's list and git-directory generators
/// make.
fn application_set(root: &Path, m: &Manifest) -> Result<Vec<Found>, String> {
    let set_name = m
        .doc
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("?");
    let go = m
        .doc
        .get_path(&["spec", "goTemplate"])
        .and_then(Node::as_str)
        == Some("true");
    let template = m
        .doc
        .get_path(&["spec", "template"])
        .ok_or("it has no spec.template")?;
    let generators = m
        .doc
        .get_path(&["spec", "generators"])
        .and_then(Node::as_seq)
        .ok_or("it has no spec.generators")?;
    let mut all = Vec::new();
    for g in generators {
        all.extend(generator_params(root, g, go)?);
    }
    let mut out = Vec::new();
    for params in &all {
        let v = View {
            node: template,
            params: Some(params),
            go,
        };
        out.push(application(root, m, &v, Some(set_name))?);
    }
    Ok(out)
}

/// The parameter sets of one generator.
fn generator_params(root: &Path, g: &Node, go: bool) -> Result<Vec<Params>, String> {
    params_at(root, g, go, 0)
}

/// [`generator_params`] for a generator `depth` matrices down.
fn params_at(root: &Path, g: &Node, go: bool, depth: usize) -> Result<Vec<Params>, String> {
    if let Some(list) = g.get("list") {
        let elements = list.get("elements").and_then(Node::as_seq);
        return Ok(elements
            .into_iter()
            .flatten()
            .map(|e| {
                let mut p = Params::new();
                flatten("", e, &mut p);
                p
            })
            .collect());
    }
    if let Some(dirs) = g.get_path(&["git", "directories"]).and_then(Node::as_seq) {
        let mut matched = std::collections::BTreeSet::new();
        for d in dirs {
            let pattern = d.get_str("path").unwrap_or_default();
            let found = glob_dirs(root, pattern);
            if d.get_str("exclude") == Some("true") {
                matched.retain(|p| !found.contains(p));
            } else {
                matched.extend(found);
            }
        }
        return Ok(matched.iter().map(|p| git_dir_params(p, go)).collect());
    }
    if let Some(children) = g.get_path(&["matrix", "generators"]) {
        // Argo CD nests a matrix in a matrix one level deep, no more.
        if depth > 1 {
            return Err("its matrix generators nest more than one level deep".into());
        }
        return matrix_params(root, children, go, depth + 1);
    }
    let kind = g
        .as_map()
        .and_then(|m| m.first())
        .and_then(|(k, _)| k.as_str())
        .unwrap_or("?");
    Err(format!(
        "its `{kind}` generator is not expanded by hydrate init (list, git directories and \
         matrix are)"
    ))
}

/// Argo CD's matrix generator (`matrix.go` GenerateParams): exactly two
/// child generators; the second is evaluated once per parameter set of the
/// first, with that set substituted into its fields (so a git generator can
/// read a path from a list element), and each pair combines into one set. A
/// key both children set to different values is an error, as Argo CD's
/// `CombineStringMaps` makes it.
fn matrix_params(
    root: &Path,
    children: &Node,
    go: bool,
    depth: usize,
) -> Result<Vec<Params>, String> {
    let Some([first, second]) = children.as_seq().map(Vec::as_slice) else {
        return Err("its matrix generator needs exactly two child generators".into());
    };
    let mut out = Vec::new();
    for a in params_at(root, first, go, depth)? {
        let view = View {
            node: second,
            params: Some(&a),
            go,
        };
        for b in params_at(root, &view.interpolated(second), go, depth)? {
            let mut combined = a.clone();
            for (k, v) in b {
                match combined.get(&k) {
                    Some(had) if *had != v => {
                        return Err(format!(
                            "its matrix generator sets `{k}` to both `{had}` and `{v}`"
                        ))
                    }
                    _ => {
                        combined.insert(k, v);
                    }
                }
            }
            out.push(combined);
        }
    }
    Ok(out)
}

/// Argo CD's git-directory parameters: `path`, `path.basename`,
/// `path.basenameNormalized`, `path[N]` (goTemplate: `path.path`, ...).
fn git_dir_params(p: &Path, go: bool) -> Params {
    let full = p.display().to_string();
    let base = p
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    // applicationset: sanitizeName lower-cases and maps what is not
    // [a-z0-9.-] to `-`.
    let normalized: String = base
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let mut out = Params::new();
    out.insert(if go { "path.path" } else { "path" }.into(), full);
    out.insert("path.basename".into(), base);
    out.insert("path.basenameNormalized".into(), normalized);
    for (i, c) in p.iter().enumerate() {
        let key = if go {
            format!("path.segments[{i}]")
        } else {
            format!("path[{i}]")
        };
        out.insert(key, c.to_string_lossy().into_owned());
    }
    out
}

/// Scalars of a list element, nested keys joined by `.`.
fn flatten(prefix: &str, n: &Node, out: &mut Params) {
    match n.as_map() {
        Some(entries) => {
            for (k, v) in entries {
                let key = k.as_str().unwrap_or_default();
                let full = if prefix.is_empty() {
                    key.to_string()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&full, v, out);
            }
        }
        None => {
            if let Some(s) = n.as_str() {
                out.insert(prefix.to_string(), s.to_string());
            }
        }
    }
}

/// Directories matching a git generator's `path` (`*`, `?` per component),
/// as `discover:` expands its globs.
fn glob_dirs(root: &Path, pattern: &str) -> Vec<PathBuf> {
    crate::env::glob_dirs(root, pattern)
}

/// A Flux `Kustomization`: `spec.path` in the environment of the
/// `clusters/<env>` directory that holds the manifest.
fn flux(root: &Path, m: &Manifest) -> Result<Found, String> {
    let name = m
        .doc
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .ok_or("it has no metadata.name")?;
    let path = m
        .doc
        .get_path(&["spec", "path"])
        .and_then(Node::as_str)
        .unwrap_or("./");
    let comps: Vec<&str> = m.file.iter().filter_map(|c| c.to_str()).collect();
    let env = comps
        .iter()
        .position(|c| *c == "clusters")
        .and_then(|i| comps.get(i + 1))
        .filter(|e| i_is_dir(&comps, e))
        .ok_or("it is not under a clusters/<env> directory")?
        .to_string();
    let dir = join_clean(Path::new(""), path)
        .filter(|d| root.join(d).is_dir())
        .ok_or_else(|| format!("path `{path}` is not a directory of this repository"))?;
    if !crate::kustomize::FILE_NAMES
        .iter()
        .any(|f| root.join(&dir).join(f).is_file())
    {
        return Err(format!(
            "`{path}` has no kustomization.yaml (Flux generates one; hydrate renders kustomizations)"
        ));
    }
    if !is_valid_name(name) || !is_valid_name(&env) {
        return Err(format!(
            "`{name}` in `{env}` is not a valid app and environment name"
        ));
    }
    Ok(Found {
        env,
        app: name.to_string(),
        source: Source::Kustomize(dir),
        origin: Origin::Flux {
            file: m.file.clone(),
            name: name.to_string(),
        },
    })
}

/// `clusters/<env>/x.yaml`: `<env>` is a directory, not the file itself.
fn i_is_dir(comps: &[&str], e: &str) -> bool {
    comps.last() != Some(&e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn templates_substitute_as_argo_cd_does() {
        let node = Node::null();
        let p = params(&[("cluster", "prod"), ("path.basename", "web")]);
        let fast = View {
            node: &node,
            params: Some(&p),
            go: false,
        };
        assert_eq!(fast.subst("apps/{{ cluster }}/x").unwrap(), "apps/prod/x");
        assert!(fast.subst("{{nope}}").unwrap_err().contains("{{nope}}"));
        assert!(fast.subst("{{cluster").is_err());
        let go = View { go: true, ..fast };
        assert_eq!(
            go.subst("{{.path.basename}}-{{ .cluster }}").unwrap(),
            "web-prod"
        );
        assert!(go.subst("{{ .cluster | upper }}").is_err());
    }

    #[test]
    fn git_directories_give_path_parameters() {
        let fast = git_dir_params(Path::new("platform/Cert_Manager"), false);
        assert_eq!(fast["path"], "platform/Cert_Manager");
        assert_eq!(fast["path.basename"], "Cert_Manager");
        assert_eq!(fast["path.basenameNormalized"], "cert-manager");
        assert_eq!(fast["path[0]"], "platform");
        let go = git_dir_params(Path::new("platform/x"), true);
        assert_eq!(go["path.path"], "platform/x");
        assert_eq!(go["path.segments[1]"], "x");
    }

    fn node(yaml: &str) -> Node {
        crate::yaml::parse_one(yaml, crate::yaml::Resolver::V3).unwrap()
    }

    #[test]
    fn a_matrix_combines_and_its_second_generator_reads_the_first() {
        let d = tempfile::tempdir().unwrap();
        for p in ["envs/a/x", "envs/a/y", "envs/b/x"] {
            std::fs::create_dir_all(d.path().join(p)).unwrap();
        }
        let g = node(
            "matrix:\n  generators:\n  - list: {elements: [{c: a}, {c: b}]}\n\
             \x20 - git: {directories: [{path: 'envs/{{c}}/*'}]}\n",
        );
        let sets = generator_params(d.path(), &g, false).unwrap();
        let got: Vec<(&str, &str)> = sets
            .iter()
            .map(|p| (p["c"].as_str(), p["path"].as_str()))
            .collect();
        assert_eq!(
            got,
            [("a", "envs/a/x"), ("a", "envs/a/y"), ("b", "envs/b/x")]
        );
    }

    #[test]
    fn a_matrix_refuses_what_argo_cd_refuses() {
        let root = Path::new("no-such-root");
        let one = node("matrix: {generators: [{list: {elements: [{a: 1}]}}]}\n");
        let err = generator_params(root, &one, false).unwrap_err();
        assert!(err.contains("exactly two"), "{err}");
        let clash = node(
            "matrix: {generators: [{list: {elements: [{a: '1'}]}}, {list: {elements: [{a: '2'}]}}]}\n",
        );
        let err = generator_params(root, &clash, false).unwrap_err();
        assert!(err.contains("`a` to both `1` and `2`"), "{err}");
        let same = node(
            "matrix: {generators: [{list: {elements: [{a: '1'}]}}, {list: {elements: [{a: '1', b: '2'}]}}]}\n",
        );
        assert_eq!(generator_params(root, &same, false).unwrap().len(), 1);
        let leaf = "{list: {elements: [{a: '1'}]}}";
        let m1 = format!("{{matrix: {{generators: [{leaf}, {leaf}]}}}}");
        let m2 = format!("{{matrix: {{generators: [{m1}, {leaf}]}}}}");
        let m3 = format!("matrix: {{generators: [{m2}, {leaf}]}}\n");
        assert!(generator_params(root, &node(&format!("{m2}\n")), false).is_ok());
        let err = generator_params(root, &node(&m3), false).unwrap_err();
        assert!(err.contains("more than one level"), "{err}");
    }

    #[test]
    fn multi_source_reads_the_one_rendered_source_and_its_refs() {
        let app = node(
            "spec:\n  sources:\n  - {repoURL: r, path: charts/x, helm: {valueFiles: [$v/e/p.yaml]}}\n\
             \x20 - {repoURL: r, ref: v}\n",
        );
        let (src, refs) = rendered_source(&View::plain(&app)).unwrap();
        assert_eq!(src.str(&["path"]).unwrap().as_deref(), Some("charts/x"));
        assert_eq!(refs, ["v"]);
        let dir = Path::new("charts/x");
        assert_eq!(
            value_file(dir, &refs, "$v/e/p.yaml").unwrap(),
            Path::new("e/p.yaml")
        );
        assert_eq!(
            value_file(dir, &refs, "values.yaml").unwrap(),
            Path::new("charts/x/values.yaml")
        );
        let err = value_file(dir, &refs, "$w/p.yaml").unwrap_err();
        assert!(err.contains("no `ref` source `w`"), "{err}");
        assert!(value_file(dir, &refs, "$v/../../p.yaml").is_err());

        let two = node("spec:\n  sources: [{repoURL: r, path: a}, {repoURL: r, path: b}]\n");
        let err = rendered_source(&View::plain(&two)).err().unwrap();
        assert!(err.contains("2 of its spec.sources render"), "{err}");
        let foreign = node("spec:\n  sources: [{repoURL: r, path: a}, {repoURL: other, ref: v}]\n");
        let err = rendered_source(&View::plain(&foreign)).err().unwrap();
        assert!(err.contains("`$v` source is another repository"), "{err}");
    }

    #[test]
    fn options_argo_cd_would_apply_are_not_dropped_silently() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("web/overlays/prod")).unwrap();
        std::fs::write(
            d.path().join("web/overlays/prod/kustomization.yaml"),
            "{}\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join("app.yaml"),
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web-prod}\n\
             spec:\n  source: {path: web/overlays/prod, kustomize: {namePrefix: x-}}\n\
             \x20 destination: {name: prod}\n",
        )
        .unwrap();
        let p = super::super::scan(d.path()).unwrap();
        let u = &p.unclassified[0];
        assert_eq!(u.path, Path::new("app.yaml"));
        assert!(
            u.reason.contains("source.kustomize options"),
            "{}",
            u.reason
        );
        // The overlay itself is still proposed, from its layout.
        assert_eq!(p.environments[0].discovered[0].app, "web");
    }
}
