//! Chart apps: rendered by [`crate::helm`] exactly as `helm template`
//! prints them; helm's render also hands on each printed object.

use std::path::PathBuf;

use super::ChartApp;
use crate::helm;

/// `helm template <release> <chart> -f ... --set ...`, with the app's
/// values layered as Argo CD does: files, then inline values, then `set`.
/// The chart is loaded (and its templates parsed) once per `charts`, for
/// every environment that renders it. Returns helm's result and the files
/// the render read.
pub fn render(
    app: &ChartApp,
    charts: &helm::ChartCache,
) -> Result<(helm::Rendered, Vec<PathBuf>), helm::Error> {
    render_with(app, charts, false)
}

/// [`render`], with each template's printed actions traced when `trace`
/// ([`helm::Options::trace_actions`], for provenance).
pub fn render_with(
    app: &ChartApp,
    charts: &helm::ChartCache,
    trace: bool,
) -> Result<(helm::Rendered, Vec<PathBuf>), helm::Error> {
    let mut docs = Vec::new();
    for f in &app.value_files {
        docs.push(helm::read_values_file(f)?);
    }
    if let Some(v) = &app.values {
        docs.push(
            helm::values::from_node(v).map_err(|e| helm::Error::Values(format!("values: {e}")))?,
        );
    }
    let mut opts = helm::Options {
        release_name: app.release_name.clone(),
        namespace: if app.namespace.is_empty() {
            "default".into()
        } else {
            app.namespace.clone()
        },
        values_docs: docs,
        sets: app
            .set
            .iter()
            .map(|s| (helm::SetKind::Typed, s.clone()))
            .collect(),
        api_versions: app.api_versions.clone(),
        include_crds: !app.skip_crds,
        skip_tests: app.skip_tests,
        no_hooks: app.skip_hooks,
        helm_version: app.helm_version,
        trace_actions: trace,
        ..helm::Options::default()
    };
    if let Some(k) = &app.kube_version {
        opts.kube_version = Some(app.helm_version.parse_kube_version(k)?);
    }
    let rendered = helm::render(&*charts.load(&app.chart)?, &opts)?;
    let mut files_read = charts.chart_files(&app.chart).to_vec();
    files_read.extend(app.value_files.iter().cloned());
    Ok((rendered, files_read))
}
