//! Argo CD `Application`s and `ApplicationSet`s (list and git-directory
//! generators), and Flux `Kustomization`s, as apps: the source path (a
//! kustomization or a chart of this repository), `helm.valueFiles`,
//! `helm.releaseName`, `helm.parameters`, `destination.namespace`; the
//! environment is the destination cluster's name, else the namespace's
//! `-<env>` suffix (Flux: the `clusters/<env>` directory of the manifest).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::tree::{Manifest, Tree};
use super::{join_clean, Found, Origin, Unclassified};
use crate::env::{is_valid_name, ChartApp, Source};
use crate::yaml::Node;

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
    let source = match (v.get(&["spec", "source"]), v.get(&["spec", "sources"])) {
        (Some(_), _) => vec!["spec", "source"],
        (None, Some(_)) => {
            return Err("multi-source (spec.sources) is not read by hydrate init".into())
        }
        _ => return Err("it has no spec.source".into()),
    };
    let at = |k: &[&'static str]| [source.as_slice(), k].concat();
    if let Some(chart) = v.str(&at(&["chart"]))? {
        return Err(format!(
            "renders chart `{chart}` from a chart repository; hydrate renders charts of this repository"
        ));
    }
    let path = v.str(&at(&["path"]))?.ok_or("its source has no path")?;
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
            if v.get(&at(&[opts])).is_some() {
                return Err(format!(
                    "source.{opts} options change what Argo CD renders and are not carried over \
                     by hydrate init"
                ));
            }
        }
        Source::Kustomize(dir)
    } else if root.join(&dir).join("Chart.yaml").is_file() {
        Source::Helm(Box::new(chart_app(
            v,
            &at(&["helm"]),
            dir,
            &name,
            &app,
            namespace,
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

/// `source.helm` of an Application as a chart app: value files are
/// relative to the chart (Argo CD resolves them against the source path),
/// the release is the Application's name unless `releaseName` says, and
/// `.Release.Namespace` is the destination namespace.
fn chart_app(
    v: &View,
    helm: &[&str],
    dir: PathBuf,
    name: &str,
    app: &str,
    namespace: String,
) -> Result<ChartApp, String> {
    let at = |k: &'static str| [helm, &[k]].concat();
    for unsupported in ["values", "valuesObject", "fileParameters"] {
        if v.get(&at(unsupported)).is_some() {
            return Err(format!(
                "helm.{unsupported} is not carried over by hydrate init"
            ));
        }
    }
    let mut value_files = Vec::new();
    for f in v.strs(&at("valueFiles"))? {
        let p = join_clean(&dir, &f)
            .ok_or_else(|| format!("value file `{f}` is outside the repository"))?;
        value_files.push(p);
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
    let kind = g
        .as_map()
        .and_then(|m| m.first())
        .and_then(|(k, _)| k.as_str())
        .unwrap_or("?");
    Err(format!(
        "its `{kind}` generator is not expanded by hydrate init (list and git directories are)"
    ))
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

/// Directories matching a git generator's `path` (`*`, `?` per component).
fn glob_dirs(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    walkdir::WalkDir::new(root)
        .max_depth(parts.len())
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let Some(part) = e.depth().checked_sub(1).and_then(|i| parts.get(i)) else {
                return true;
            };
            let name = e.file_name().to_str().unwrap_or_default();
            e.file_type().is_dir()
                && !name.starts_with('.')
                && crate::env::glob_component_matches(part, name)
        })
        .filter_map(Result::ok)
        .filter(|e| e.depth() == parts.len())
        .filter_map(|e| Some(e.path().strip_prefix(root).ok()?.to_path_buf()))
        .collect()
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
