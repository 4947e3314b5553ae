//! kustomize's `types.HelmChart` and `types.HelmGlobals` (`helmCharts`,
//! `helmGlobals` and the deprecated `helmChartInflationGenerator` entries),
//! decoded strictly as part of a kustomization. Inflating them is
//! [`super::super::helm_inflation`]'s job.

use super::decode::Decoder;
use crate::kustomize::Error;
use crate::yaml::fields::field;
use crate::yaml::{Node, Value};

/// `helmGlobals`.
#[derive(Clone, Debug, Default)]
pub struct Globals {
    /// `chartHome`: where charts are vendored (default `charts`).
    pub chart_home: String,
}

/// One entry of `helmCharts` (kustomize's `types.HelmChart`).
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub name: String,
    pub version: String,
    pub repo: String,
    pub release_name: String,
    pub namespace: String,
    pub additional_values_files: Vec<String>,
    pub values_file: String,
    /// `valuesInline`, as written (a mapping, or absent).
    pub values_inline: Option<Node>,
    pub values_merge: String,
    pub include_crds: bool,
    pub skip_hooks: bool,
    pub api_versions: Vec<String>,
    pub kube_version: String,
    pub name_template: String,
    pub skip_tests: bool,
    /// The entry as written, for kustomize's "trouble configuring" message.
    pub source: Option<Node>,
    /// Line of the entry.
    pub line: u32,
}

/// Decodes `helmGlobals`.
pub fn decode_globals(d: &Decoder, n: &Node) -> Result<Globals, Error> {
    let mut g = Globals::default();
    d.object(
        n,
        &mut g,
        &[
            field!("chartHome", |d, v, g| g.chart_home = d.string(v)?),
            // configHome only matters to a helm binary.
            field!("configHome", |d, v, _| d.string(v)?),
        ],
    )?;
    Ok(g)
}

/// Decodes one `helmCharts` entry.
pub fn decode_chart(d: &Decoder, n: &Node) -> Result<Chart, Error> {
    let mut c = Chart {
        source: Some(n.clone()),
        line: n.pos.line,
        ..Chart::default()
    };
    d.object(
        n,
        &mut c,
        &[
            field!("name", |d, v, c| c.name = d.string(v)?),
            field!("version", |d, v, c| c.version = d.string(v)?),
            field!("repo", |d, v, c| c.repo = d.string(v)?),
            field!("releaseName", |d, v, c| c.release_name = d.string(v)?),
            field!("namespace", |d, v, c| c.namespace = d.string(v)?),
            field!("additionalValuesFiles", |d, v, c| {
                c.additional_values_files = d.strings(v)?
            }),
            field!("valuesFile", |d, v, c| c.values_file = d.string(v)?),
            field!("valuesInline", |d, v, c| c.values_inline =
                values_inline(d, v)?),
            field!("valuesMerge", |d, v, c| c.values_merge = d.string(v)?),
            field!("includeCRDs", |d, v, c| c.include_crds = d.bool(v)?),
            field!("skipHooks", |d, v, c| c.skip_hooks = d.bool(v)?),
            field!("apiVersions", |d, v, c| c.api_versions = d.strings(v)?),
            field!("kubeVersion", |d, v, c| c.kube_version = d.string(v)?),
            field!("nameTemplate", |d, v, c| c.name_template = d.string(v)?),
            field!("skipTests", |d, v, c| c.skip_tests = d.bool(v)?),
            // debug and devel only change what a helm binary prints or pulls.
            field!("debug", |d, v, _| d.bool(v)?),
            field!("devel", |d, v, _| d.bool(v)?),
        ],
    )?;
    Ok(c)
}

/// `valuesInline`: a mapping or null.
fn values_inline(d: &Decoder, v: &Node) -> Result<Option<Node>, Error> {
    if !(v.is_null() || matches!(&v.value, Value::Map(_))) {
        return Err(d.err(
            v,
            format!(
                "invalid {}: json: cannot unmarshal {} into a map field",
                d.what,
                v.kind_name()
            ),
        ));
    }
    Ok((!v.is_null()).then(|| v.clone()))
}

/// Decodes one deprecated `helmChartInflationGenerator` entry into a chart
/// and the globals it sets (kustomize's `SplitHelmParameters`).
pub fn decode_legacy(d: &Decoder, n: &Node) -> Result<(Chart, Globals), Error> {
    let c = Chart {
        source: Some(n.clone()),
        line: n.pos.line,
        ..Chart::default()
    };
    let mut target = (c, Globals::default());
    d.object(
        n,
        &mut target,
        &[
            field!("chartName", |d, v, (c, _)| c.name = d.string(v)?),
            field!("chartVersion", |d, v, (c, _)| c.version = d.string(v)?),
            field!("chartRepoUrl", |d, v, (c, _)| c.repo = d.string(v)?),
            field!("chartHome", |d, v, (_, g)| g.chart_home = d.string(v)?),
            field!("chartRepoName", |d, v, _| d.string(v)?),
            field!("helmBin", |d, v, _| d.string(v)?),
            field!("helmHome", |d, v, _| d.string(v)?),
            field!("values", |d, v, (c, _)| c.values_file = d.string(v)?),
            field!("valuesLocal", |_, v, (c, _)| {
                c.values_inline = (!v.is_null()).then(|| v.clone())
            }),
            field!("valuesMerge", |d, v, (c, _)| c.values_merge =
                d.string(v)?),
            field!("releaseName", |d, v, (c, _)| c.release_name =
                d.string(v)?),
            // kustomize drops releaseNamespace and extraArgs when converting.
            field!("releaseNamespace", |d, v, _| d.string(v)?),
            field!("extraArgs", |d, v, _| d.strings(v)?),
        ],
    )?;
    let (c, g) = target;
    Ok((c, g))
}
