//! Helm charts: loading a chart directory, layering values, rendering its
//! templates through `gotmpl` with Helm's functions and objects, and
//! assembling the output exactly as `helm template` prints it: v3.17.3 by
//! default, v4.1.4 with [`HelmVersion::V4`] (see `version.rs`).
//!
//! It never shells out to helm and never talks to a cluster (`lookup` is
//! always empty). Not yet supported: post-renderers, repository/OCI chart
//! references, helm4's `apiVersion: v3` charts (refused, as helm4's
//! `template` refuses them).

mod chart;
mod chart_json;
mod execute;
mod file_data;
mod full_path;
mod funcs;
mod head_scan;
mod ignore;
mod loaded;
mod objects;
mod output;
mod output_dir;
mod path_match;
mod render;
mod schema;
mod scope;
mod traceable;
pub(crate) mod values;
mod version;

use crate::warning::{Warning, WarningKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) use chart::Chart;
pub(crate) use file_data::FileData;
pub(crate) use loaded::ChartCache;
pub use loaded::LoadedChart;
pub use output_dir::OutputFile;
pub(crate) use render::TracedTemplate;
pub(crate) use values::read_values_file;
pub use values::SetKind;
pub use version::{HelmVersion, KubeVersion};

/// Errors, with helm's wording where the conformance corpus shows it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A chart file (`Chart.yaml`, `values.yaml`, `requirements.yaml`)
    /// does not load: helm's message, with the file and its line when the
    /// YAML parser names one.
    #[error("{}", .0.message)]
    ChartFile(Box<FileError>),
    /// The chart is malformed as a whole (metadata, dependencies, kind).
    #[error("{0}")]
    Chart(String),
    /// A `-f` values file does not parse: helm's message, with the line.
    #[error("{}", .0.message)]
    ValuesFile(Box<FileError>),
    /// Inline values or a `--set` flag is malformed.
    #[error("{0}")]
    Values(String),
    /// A template does not parse or fails to execute: helm's message
    /// (which carries the template's line).
    #[error("{}", .0.message)]
    Template(Box<TemplateError>),
    /// Output assembly failed.
    #[error("{0}")]
    Render(String),
    /// A flag value is invalid.
    #[error("{0}")]
    Usage(String),
}

/// A file helm refuses, and where.
#[derive(Debug)]
pub struct FileError {
    /// The file: relative to its chart for chart files (a subchart's is
    /// relative to the subchart), as given for `-f` files.
    pub file: PathBuf,
    /// 1-based line, when the YAML parser names one.
    pub line: Option<u32>,
    /// helm's full message.
    pub message: String,
}

/// A template helm refuses.
#[derive(Debug)]
pub struct TemplateError {
    /// The template, as helm names it (`chart/templates/x.yaml`).
    pub template: String,
    /// helm's full message, which carries the template's line.
    pub message: String,
}

impl Error {
    /// A read or write of `path` failed.
    pub(crate) fn io(path: impl AsRef<Path>, message: impl Into<String>) -> Error {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
        }
    }
}

/// What `helm template` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Record, per template, each action it printed and the `.Values`
    /// paths the action names ([`Rendered::actions`]), for provenance.
    /// Off for renders.
    pub trace_actions: bool,
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
    /// Which helm's behaviour to reproduce.
    pub helm_version: HelmVersion,
    /// `--kube-version`; `None` is the helm version's default.
    pub kube_version: Option<KubeVersion>,
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
    /// `--output-dir`: plan file writes instead of printing documents.
    pub output_dir: Option<String>,
    /// `--release-name`: put manifests under `output_dir/RELEASE`.
    pub use_release_name: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            release_name: "release-name".into(),
            namespace: "default".into(),
            values_docs: Vec::new(),
            values_files: Vec::new(),
            sets: Vec::new(),
            helm_version: HelmVersion::V3,
            kube_version: None,
            api_versions: Vec::new(),
            include_crds: false,
            skip_tests: false,
            no_hooks: false,
            is_upgrade: false,
            show_only: Vec::new(),
            skip_schema_validation: false,
            output_dir: None,
            use_release_name: false,
            trace_actions: false,
        }
    }
}

impl Options {
    /// `.Capabilities.KubeVersion`: the flag's, else helm's default.
    pub fn kube_version(&self) -> KubeVersion {
        self.kube_version
            .clone()
            .unwrap_or_else(|| self.helm_version.default_kube_version())
    }
}

/// The result of a render.
#[derive(Debug)]
pub struct Rendered {
    /// What `helm template` prints on stdout (after the `wrote` lines
    /// when writing to `--output-dir`).
    pub output: String,
    /// `--output-dir` writes, in order; empty without it.
    pub files: Vec<OutputFile>,
    /// The printed documents that are objects, in output order, each with
    /// its `# Source:` template and the text printed for it (the parsed
    /// documents helm sorted by; go-yaml v2 rules).
    pub objects: Vec<crate::k8s::Object>,
    /// Diagnostics (non-deterministic functions used, ...).
    pub warnings: Vec<crate::warning::Warning>,
    /// With [`Options::trace_actions`]: each template's output as executed
    /// and the actions that printed it, by template path.
    pub(crate) actions: BTreeMap<String, TracedTemplate>,
}

/// helm's release name rule (`chartutil.ValidateReleaseName`).
pub(crate) fn validate_release_name(name: &str) -> Result<(), Error> {
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
    let v = crate::gotmpl::golib::Version::parse(&kube.normalized).map_err(Error::Usage)?;
    // chartutil.IsCompatibleRange: an unparsable constraint is incompatible.
    let ok = crate::gotmpl::golib::constraint_check(&constraint, &v).unwrap_or(false);
    if ok {
        return Ok(());
    }
    Err(Error::Render(format!(
        "chart requires kubeVersion: {constraint} which is incompatible with Kubernetes {}",
        kube.normalized
    )))
}

/// Every file and directory under a chart directory, symlinks followed as
/// the loader follows them (or the archive itself): what a render of it
/// depends on. Directories are listed too, so a file added to one (a new
/// template, a new subchart) changes what the render read.
pub(crate) fn chart_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .collect();
    out.sort();
    out
}

/// helm's `TemplateName`: `--name-template` rendered with Sprig.
pub(crate) fn name_from_template(text: &str, version: HelmVersion) -> Result<String, Error> {
    use crate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};
    let mut set = TemplateSet::new("name-template", std::sync::Arc::new(FuncMap::with_sprig()));
    let v4 = version == HelmVersion::V4;
    let exec = ExecOptions {
        range_over_int: v4,
        max_paren_depth: v4.then_some(crate::gotmpl::GO_MAX_PAREN_DEPTH),
        comment_newlines: v4,
        ..ExecOptions::default()
    };
    set.parse_with("name-template", text, &exec)
        .map_err(|e| Error::Render(e.to_string()))?;
    set.execute("name-template", Value::Nil, &exec)
        .map_err(|e| Error::Render(e.to_string()))
}

/// helm4's loader and install checks: the top chart must be a v1/v2 chart
/// (`loader.Load` dispatches by apiVersion and `Install.Run` only accepts
/// v2 charts), and no chart may be named `.` or `..` (`Metadata.Validate`).
fn check_helm4_chart(chart: &Chart) -> Result<(), Error> {
    fn names(c: &Chart) -> Result<(), Error> {
        if c.name == "." || c.name == ".." {
            return Err(Error::Chart(format!(
                "validation: chart.metadata.name {:?} is not allowed",
                c.name
            )));
        }
        c.dependencies.iter().try_for_each(names)
    }
    let api = chart.meta_str("apiVersion");
    if !matches!(api.as_str(), "v1" | "v2" | "v3") {
        return Err(Error::Chart("unsupported chart version".into()));
    }
    names(chart)?;
    if api == "v3" {
        return Err(Error::Chart("invalid chart apiVersion".into()));
    }
    Ok(())
}

/// The user-supplied values: parsed documents, `-f` files, then `--set*`
/// flags grouped as helm applies them.
fn user_values(opts: &Options) -> Result<crate::gotmpl::Value, Error> {
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
    Ok(user)
}

/// `helm template NAME CHART [flags]`.
pub fn template(chart_dir: &Path, opts: &Options) -> Result<Rendered, Error> {
    validate_release_name(&opts.release_name)?;
    render(&load(chart_dir)?, opts)
}

/// Loads a chart directory or `.tgz` for [`render`]: the files read, the
/// subcharts found, templates parsed later, once, by the first render.
pub fn load(chart_dir: &Path) -> Result<LoadedChart, Error> {
    Ok(LoadedChart::new(chart::load(chart_dir)?))
}

/// [`load`] for one render with `version`'s engine while the cores are
/// otherwise idle (`helm template`): files are read on a few threads and
/// each chart's templates start parsing on rayon's pool as soon as its
/// `Chart.yaml` is read, so the parses overlap the rest of the load and the
/// render's dependency processing (the render waits for those it needs).
/// Same result and errors as [`load`]; only sooner. Where many charts
/// render at once (`render_all`), [`load`] is cheaper.
fn load_for(chart_dir: &Path, version: HelmVersion) -> Result<LoadedChart, Error> {
    let parses = std::sync::Arc::new(loaded::ParseStore::default());
    let prefetch = |path: &str, templates: &std::sync::Arc<Vec<(String, String)>>, library| {
        parses.prefetch(version, path, templates, library);
    };
    let chart = chart::load_with(chart_dir, Some(&prefetch))?;
    Ok(LoadedChart::alone(chart, parses))
}

/// `helm template` of a loaded chart: values merged, dependencies
/// processed and templates executed on a copy, so one [`LoadedChart`]
/// serves any number of renders (in parallel too).
pub fn render(loaded: &LoadedChart, opts: &Options) -> Result<Rendered, Error> {
    render_as(loaded, opts, true, false)
}

/// `helm template CHART` as a command that prints it and exits runs it:
/// loaded with [`load_for`], rendered once for printing only (the same
/// output, files and warnings, but no [`Rendered::objects`], so rendered
/// documents are only read as far as helm's sorting needs), on
/// the loaded chart itself rather than a copy (nothing renders it again),
/// and not freed (the process is about to exit; freeing a big chart's
/// trees costs more than a tenth of the run).
pub(crate) fn template_printed(chart_dir: &Path, opts: &Options) -> Result<Rendered, Error> {
    validate_release_name(&opts.release_name)?;
    let loaded = load_for(chart_dir, opts.helm_version)?;
    let rendered = render_as(&loaded, opts, false, true);
    std::mem::forget(loaded);
    rendered
}

/// Frees `garbage` on rayon's pool: a big chart's values and trees take a
/// millisecond or more to free, which a render with the cores to itself
/// need not wait for (where renders run at once, garbage freed later
/// piles up: peak RSS of `render_all` rose by a fifth).
fn drop_later<T: Send + 'static>(garbage: T) {
    rayon::spawn(move || drop(garbage));
}

/// Renders `loaded`; `in_place` when nothing renders it again, so its own
/// values and metadata may change as helm changes a freshly loaded chart.
fn render_as(
    loaded: &LoadedChart,
    opts: &Options,
    want_objects: bool,
    in_place: bool,
) -> Result<Rendered, Error> {
    validate_release_name(&opts.release_name)?;
    let mut chart = if in_place {
        loaded.chart().shallow()
    } else {
        loaded.chart().detached()
    };
    if opts.helm_version == HelmVersion::V4 {
        check_helm4_chart(&chart)?;
    }
    // action.CheckIfInstallable
    let kind = chart.meta_str("type");
    if !(kind.is_empty() || kind == "application") {
        return Err(Error::Chart(format!("{kind} charts are not installable")));
    }
    check_kube_version(&chart, &opts.kube_version())?;
    let user = user_values(opts)?;
    values::process_dependencies(&mut chart, &user, "", opts.helm_version)?;
    let mut consumed = (opts.helm_version == HelmVersion::V3).then(Default::default);
    values::process_import_values(&mut chart, &mut consumed);
    if opts.helm_version == HelmVersion::V3 {
        full_path::assign(&mut chart);
    }
    let vals = values::coalesce(&chart, &user);
    if !opts.skip_schema_validation {
        schema::validate(&chart, &vals, opts.helm_version)?;
    }
    let (files, rendered_warnings, actions) = render::render(&chart, &vals, opts, loaded)?;
    // helm logs each followed symlink while it loads, before anything else.
    let mut warnings: Vec<Warning> = loaded
        .chart()
        .links
        .iter()
        .map(|l| Warning::new(WarningKind::Symlink, l.log_line(opts.helm_version), None))
        .collect();
    warnings.extend(rendered_warnings);
    let sorted = output::sort(&chart, &files, opts, want_objects)?;
    if loaded.renders_alone() {
        drop_later((chart, vals, user));
    }
    let (objects, not_objects) = if want_objects {
        output::objects(&sorted, opts)
    } else {
        // Only `crds/` files can warn: every other printed document is a
        // mapping or empty (sort fails on the rest).
        let crds = output::Sorted {
            crds: sorted.crds.clone(),
            ..Default::default()
        };
        (Vec::new(), output::objects(&crds, opts).1)
    };
    warnings.extend(not_objects);
    let Some(dir) = &opts.output_dir else {
        let output = output::assemble(&sorted, opts)?;
        return Ok(Rendered {
            output,
            files: Vec::new(),
            objects,
            warnings,
            actions,
        });
    };
    // helm writes the files and then fails `--show-only` (nothing is left on
    // stdout to match); failing first keeps the directory untouched.
    if let Some(p) = opts.show_only.first() {
        return Err(Error::Render(format!(
            "could not find template {p} in chart"
        )));
    }
    let release = opts.use_release_name.then_some(opts.release_name.as_str());
    let exists = |p: &str| Path::new(p).exists();
    let files = output_dir::plan(&sorted, dir, release, &exists);
    Ok(Rendered {
        // template.go prints the (empty) manifest buffer: one newline.
        output: "\n".into(),
        files,
        objects,
        warnings,
        actions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_versions_and_names() {
        assert!(validate_release_name("my-rel").is_ok());
        assert!(validate_release_name("My_Rel").is_err());
        assert!(validate_release_name(&"a".repeat(54)).is_err());
    }

    /// Big files other than templates and values are read when used: the
    /// output is the same, a byte order mark is stripped as from any file,
    /// and the rest of the chart never reads them.
    #[test]
    fn big_files_read_when_used() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &[u8]| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        let big = "x".repeat(300 * 1024);
        w(
            "Chart.yaml",
            b"apiVersion: v2\nname: demo\nversion: 0.1.0\n",
        );
        w("files/big.txt", format!("\u{feff}{big}").as_bytes());
        w("templates/cm.yaml", b"kind: ConfigMap\ndata:\n  n: \"{{ .Files.Get \"files/big.txt\" | len }}\"\n  g: \"{{ len (.Files.Glob \"files/*\").big }}\"\n");
        w(
            "charts/sub/Chart.yaml",
            b"apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        );
        let crd = format!("kind: CustomResourceDefinition\n# {big}\n");
        w("charts/sub/crds/big.yaml", crd.as_bytes());
        let loaded = load(d).unwrap_or_else(|e| panic!("{e}"));
        for include_crds in [false, true] {
            let opts = Options {
                release_name: "rel".into(),
                include_crds,
                ..Options::default()
            };
            let r = render(&loaded, &opts).unwrap_or_else(|e| panic!("{e}"));
            let n = format!("n: \"{}\"", big.len());
            assert!(r.output.contains(&n), "{include_crds}");
            assert_eq!(r.output.contains(&crd), include_crds);
        }
        // Read at first use: a file that goes away after the load fails
        // the render, named; one read already stays read.
        let later = load(d).unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_file(d.join("files/big.txt")).unwrap_or_else(|e| panic!("{e}"));
        let opts = Options {
            release_name: "rel".into(),
            ..Options::default()
        };
        assert!(render(&loaded, &opts).is_ok());
        let err = render(&later, &opts).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains("reading chart file ") && err.contains("big.txt"),
            "{err}"
        );
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
        // The same documents, typed: what helm sorted by, not re-parsed.
        let ids: Vec<String> = r.objects.iter().map(|o| o.id.to_string()).collect();
        assert_eq!(ids, [" Namespace ", "v1 ConfigMap rel"]);
        assert_eq!(
            r.objects[1].printed,
            "# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rel\ndata:\n  n: 1e+06\n  s:\n"
        );
        assert_eq!(
            r.objects[1].source.as_deref(),
            Some("demo/templates/cm.yaml")
        );
    }

    #[test]
    fn objects_of_crd_files_and_comment_only_documents() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        w("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n");
        w("crds/two.yaml", "apiVersion: example.com/v1\nkind: A\nmetadata:\n  name: a\n---\napiVersion: example.com/v1\nkind: B\nmetadata:\n  name: b\n");
        w("crds/bad.yaml", "a: [\n");
        w(
            "templates/c.yaml",
            "# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
        );
        let opts = Options {
            include_crds: true,
            ..Options::default()
        };
        let r = template(d, &opts).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<String> = r.objects.iter().map(|o| o.id.to_string()).collect();
        assert_eq!(
            ids,
            ["example.com/v1 A a", "example.com/v1 B b", "v1 Secret s"]
        );
        assert_eq!(
            r.objects[1].printed,
            "# Source: demo/crds/two.yaml\napiVersion: example.com/v1\nkind: B\nmetadata:\n  name: b\n"
        );
        assert!(r.output.contains("# only a comment"));
        let w: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("demo/crds/bad.yaml: "), "{w:?}");
    }
}
