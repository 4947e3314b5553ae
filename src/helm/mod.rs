//! Helm charts: loading a chart directory, layering values, rendering its
//! templates through `gotmpl` with Helm's functions and objects, and
//! assembling the output exactly as `helm template` (v3.17.3) prints it.
//!
//! It never shells out to helm and never talks to a cluster (`lookup` is
//! always empty). Not yet supported: `--output-dir`, post-renderers,
//! repository/OCI chart references, helm3's quirks with a dependency
//! aliased twice.

mod chart;
mod objects;
mod output;
mod render;
mod schema;
mod values;

use std::path::{Path, PathBuf};

pub use chart::Chart;
pub use values::{read_values_file, SetKind};

/// Errors, with helm's wording where the conformance corpus shows it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{0}: {1}")]
    Io(String, String),
    /// The chart is malformed.
    #[error("{0}")]
    Chart(String),
    /// A values file or `--set` flag is malformed.
    #[error("{0}")]
    Values(String),
    /// Template parsing/execution or output assembly failed.
    #[error("{0}")]
    Render(String),
    /// A flag value is invalid.
    #[error("{0}")]
    Usage(String),
}

/// `.Capabilities.KubeVersion`.
#[derive(Clone, Debug)]
pub struct KubeVersion {
    /// `v1.32.0`.
    pub version: String,
    /// `1`.
    pub major: String,
    /// `32`.
    pub minor: String,
}

impl KubeVersion {
    /// helm's `chartutil.ParseKubeVersion`.
    pub fn parse(text: &str) -> Result<KubeVersion, Error> {
        let bad = || {
            Error::Usage(format!(
                "invalid kube version '{text}': Invalid Semantic Version"
            ))
        };
        let t = text.strip_prefix('v').unwrap_or(text);
        let core = t.split(['-', '+']).next().unwrap_or(t);
        let mut parts = core.split('.');
        let num = |p: Option<&str>| -> Result<u64, Error> {
            match p {
                None => Ok(0),
                Some(s) => s.parse().map_err(|_| bad()),
            }
        };
        let (major, minor, patch) = (num(parts.next())?, num(parts.next())?, num(parts.next())?);
        if parts.next().is_some() || core.is_empty() {
            return Err(bad());
        }
        Ok(KubeVersion {
            version: format!("v{major}.{minor}.{patch}"),
            major: major.to_string(),
            minor: minor.to_string(),
        })
    }
}

/// What `helm template` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Release name.
    pub release_name: String,
    /// Release namespace.
    pub namespace: String,
    /// Values already parsed, layered before `values_files` (kustomize's
    /// generated values file for `helmCharts`).
    pub values_docs: Vec<crate::gotmpl::Value>,
    /// `-f` files, in order.
    pub values_files: Vec<PathBuf>,
    /// `--set*` flags, grouped and ordered as helm applies them.
    pub sets: Vec<(SetKind, String)>,
    /// `.Capabilities.KubeVersion`.
    pub kube_version: KubeVersion,
    /// Extra `--api-versions`.
    pub api_versions: Vec<String>,
    /// `--include-crds`.
    pub include_crds: bool,
    /// `--skip-tests`.
    pub skip_tests: bool,
    /// `--no-hooks`.
    pub no_hooks: bool,
    /// `--is-upgrade`.
    pub is_upgrade: bool,
    /// `--show-only` patterns.
    pub show_only: Vec<String>,
    /// `--skip-schema-validation`.
    pub skip_schema_validation: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            release_name: "release-name".into(),
            namespace: "default".into(),
            values_docs: Vec::new(),
            values_files: Vec::new(),
            sets: Vec::new(),
            kube_version: KubeVersion {
                version: "v1.32.0".into(),
                major: "1".into(),
                minor: "32".into(),
            },
            api_versions: Vec::new(),
            include_crds: false,
            skip_tests: false,
            no_hooks: false,
            is_upgrade: false,
            show_only: Vec::new(),
            skip_schema_validation: false,
        }
    }
}

/// The result of a render.
#[derive(Debug)]
pub struct Rendered {
    /// What `helm template` prints on stdout.
    pub output: String,
    /// Diagnostics (non-deterministic functions used, ...).
    pub warnings: Vec<String>,
}

/// helm's release name rule (`chartutil.ValidateReleaseName`).
fn validate_release_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 53
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "release name {name:?}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53"
        )))
    }
}

/// `renderResources`: the chart's `kubeVersion` constraint must accept the
/// target Kubernetes version.
fn check_kube_version(chart: &Chart, kube: &KubeVersion) -> Result<(), Error> {
    let constraint = chart.meta_str("kubeVersion");
    if constraint.is_empty() {
        return Ok(());
    }
    let v =
        crate::gotmpl::funcs::sprig_semver::Version::parse(&kube.version).map_err(Error::Usage)?;
    // chartutil.IsCompatibleRange: an unparsable constraint is incompatible.
    let ok = crate::gotmpl::funcs::sprig_semver::constraint_check(&constraint, &v).unwrap_or(false);
    if ok {
        return Ok(());
    }
    Err(Error::Render(format!(
        "chart requires kubeVersion: {constraint} which is incompatible with Kubernetes {}",
        kube.version
    )))
}

/// Every file under a chart directory (or the archive itself): what a
/// render of it depends on.
pub fn chart_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(_) => out.push(p),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// helm's `TemplateName`: `--name-template` rendered with Sprig.
pub fn name_from_template(text: &str) -> Result<String, Error> {
    use crate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};
    let mut set = TemplateSet::new("name-template", std::sync::Arc::new(FuncMap::with_sprig()));
    set.parse("name-template", text)
        .map_err(|e| Error::Render(e.to_string()))?;
    set.execute("name-template", Value::Nil, &ExecOptions::default())
        .map_err(|e| Error::Render(e.to_string()))
}

/// `helm template NAME CHART [flags]`.
pub fn template(chart_dir: &Path, opts: &Options) -> Result<Rendered, Error> {
    validate_release_name(&opts.release_name)?;
    let mut chart = chart::load(chart_dir)?;
    // action.CheckIfInstallable
    let kind = chart.meta_str("type");
    if !(kind.is_empty() || kind == "application") {
        return Err(Error::Chart(format!("{kind} charts are not installable")));
    }
    check_kube_version(&chart, &opts.kube_version)?;
    let mut user = crate::gotmpl::Value::map(Default::default());
    for doc in &opts.values_docs {
        user = values::merge_maps(&user, doc);
    }
    for f in &opts.values_files {
        user = values::merge_maps(&user, &values::read_values_file(f)?);
    }
    let order = |k: &SetKind| match k {
        SetKind::Json => 0,
        SetKind::Typed => 1,
        SetKind::String => 2,
        SetKind::File => 3,
        SetKind::Literal => 4,
    };
    let mut sets: Vec<&(SetKind, String)> = opts.sets.iter().collect();
    sets.sort_by_key(|(k, _)| order(k));
    for (kind, arg) in sets {
        user = values::apply_set(&user, arg, kind)?;
    }
    values::process_dependencies(&mut chart, &user, "")?;
    values::process_import_values(&mut chart);
    let vals = values::coalesce(&chart, &user);
    if !opts.skip_schema_validation {
        schema::validate(&chart, &vals)?;
    }
    let (files, warnings) = render::render(&chart, &vals, opts)?;
    let output = output::assemble(&chart, &files, opts)?;
    Ok(Rendered { output, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_and_names() {
        let k = KubeVersion::parse("1.20").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((k.version.as_str(), k.minor.as_str()), ("v1.20.0", "20"));
        assert!(KubeVersion::parse("x.y").is_err());
        assert!(validate_release_name("my-rel").is_ok());
        assert!(validate_release_name("My_Rel").is_err());
        assert!(validate_release_name(&"a".repeat(54)).is_err());
    }

    #[test]
    fn renders_a_small_chart() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        w("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n");
        w("values.yaml", "num: 1000000\nname: x\n");
        w(
            "templates/_h.tpl",
            "{{ define \"h\" }}{{ .Release.Name }}{{ end }}",
        );
        w("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"h\" . }}\ndata:\n  n: {{ .Values.num }}\n  s: {{ .Values.missing }}\n---\nkind: Namespace\n");
        let opts = Options {
            release_name: "rel".into(),
            sets: vec![(SetKind::Typed, "name=y".into())],
            ..Options::default()
        };
        let r = template(d, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            r.output,
            "---\n# Source: demo/templates/cm.yaml\nkind: Namespace\n---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rel\ndata:\n  n: 1e+06\n  s:\n"
        );
    }

    /// The shared function-vector chart, when present: every vector's
    /// output must equal helm3's (one known TOML error-text difference).
    #[test]
    fn function_vector_chart_matches_helm3() {
        let root = Path::new("/work/shared/conformance/helm/functions");
        let Ok(text) = std::fs::read_to_string(root.join("vectors.json")) else {
            eprintln!("skipped: function vectors not present");
            return;
        };
        let opts = Options {
            release_name: "vec".into(),
            namespace: "vecns".into(),
            ..Options::default()
        };
        let out = template(&root.join("chart"), &opts).unwrap_or_else(|e| panic!("{e}"));
        let got: std::collections::BTreeMap<&str, String> = out
            .output
            .lines()
            .filter_map(|l| l.trim().split_once(": "))
            .filter(|(k, _)| k.starts_with('v'))
            .map(|(k, v)| {
                let b64 = v.trim_matches('"');
                let bytes =
                    crate::gotmpl::funcs::sprig_encoding::b64_decode(b64).unwrap_or_default();
                (k, String::from_utf8_lossy(&bytes).into_owned())
            })
            .collect();
        let Ok(crate::gotmpl::Value::List(all)) = crate::gotmpl::funcs::json::unmarshal(&text)
        else {
            panic!("vectors.json did not parse");
        };
        let mut failures = Vec::new();
        for v in &all.items {
            let crate::gotmpl::Value::Map(m) = v else {
                continue;
            };
            let id = m
                .get("id")
                .map(|i| crate::gotmpl::fmt::to_string(&i))
                .unwrap_or_default();
            let Some(crate::gotmpl::Value::Str(want)) = m.get("expected_helm3") else {
                continue;
            };
            if let Some(g) = got.get(id.as_str()) {
                if g.as_str() != &*want {
                    failures.push(format!("{id}: got {g:?} want {want:?}"));
                }
            }
        }
        assert!(got.len() > 500, "only {} vectors rendered", got.len());
        assert!(failures.len() <= 1, "{}", failures.join("\n"));
    }
}
