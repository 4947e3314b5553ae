//! kustomize's `types.HelmChart` and `types.HelmGlobals` (`helmCharts`,
//! `helmGlobals` and the deprecated `helmChartInflationGenerator` entries),
//! decoded strictly as part of a kustomization. Inflating them is
//! [`super::super::helmchart`]'s job.

use super::decode::Decoder;
use crate::kustomize::Error;
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

const CHART_FIELDS: &[&str] = &[
    "name",
    "version",
    "repo",
    "releaseName",
    "namespace",
    "additionalValuesFiles",
    "valuesFile",
    "valuesInline",
    "valuesMerge",
    "includeCRDs",
    "skipHooks",
    "apiVersions",
    "kubeVersion",
    "nameTemplate",
    "skipTests",
    "debug",
    "devel",
];

/// Decodes `helmGlobals`.
pub fn decode_globals(d: &Decoder, n: &Node) -> Result<Globals, Error> {
    let mut g = Globals::default();
    d.object(n, &["chartHome", "configHome"], |f, v| {
        if f == "chartHome" {
            g.chart_home = d.string(v)?;
        } else {
            // configHome only matters to a helm binary.
            d.string(v)?;
        }
        Ok(())
    })?;
    Ok(g)
}

/// Decodes one `helmCharts` entry.
pub fn decode_chart(d: &Decoder, n: &Node) -> Result<Chart, Error> {
    let mut c = Chart {
        source: Some(n.clone()),
        line: n.pos.line,
        ..Chart::default()
    };
    d.object(n, CHART_FIELDS, |f, v| {
        match f {
            "name" => c.name = d.string(v)?,
            "version" => c.version = d.string(v)?,
            "repo" => c.repo = d.string(v)?,
            "releaseName" => c.release_name = d.string(v)?,
            "namespace" => c.namespace = d.string(v)?,
            "additionalValuesFiles" => c.additional_values_files = d.strings(v)?,
            "valuesFile" => c.values_file = d.string(v)?,
            "valuesInline" => {
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
                c.values_inline = (!v.is_null()).then(|| v.clone());
            }
            "valuesMerge" => c.values_merge = d.string(v)?,
            "includeCRDs" => c.include_crds = d.bool(v)?,
            "skipHooks" => c.skip_hooks = d.bool(v)?,
            "apiVersions" => c.api_versions = d.strings(v)?,
            "kubeVersion" => c.kube_version = d.string(v)?,
            "nameTemplate" => c.name_template = d.string(v)?,
            "skipTests" => c.skip_tests = d.bool(v)?,
            // debug and devel only change what a helm binary prints or pulls.
            _ => {
                d.bool(v)?;
            }
        }
        Ok(())
    })?;
    Ok(c)
}

/// Decodes one deprecated `helmChartInflationGenerator` entry into a chart
/// and the globals it sets (kustomize's `SplitHelmParameters`).
pub fn decode_legacy(d: &Decoder, n: &Node) -> Result<(Chart, Globals), Error> {
    let mut c = Chart {
        source: Some(n.clone()),
        line: n.pos.line,
        ..Chart::default()
    };
    let mut g = Globals::default();
    let known = [
        "chartName",
        "chartVersion",
        "chartRepoUrl",
        "chartHome",
        "chartRepoName",
        "helmBin",
        "helmHome",
        "values",
        "valuesLocal",
        "valuesMerge",
        "releaseName",
        "releaseNamespace",
        "extraArgs",
    ];
    d.object(n, &known, |f, v| {
        match f {
            "chartName" => c.name = d.string(v)?,
            "chartVersion" => c.version = d.string(v)?,
            "chartRepoUrl" => c.repo = d.string(v)?,
            "chartHome" => g.chart_home = d.string(v)?,
            "values" => c.values_file = d.string(v)?,
            "valuesLocal" => c.values_inline = (!v.is_null()).then(|| v.clone()),
            "valuesMerge" => c.values_merge = d.string(v)?,
            "releaseName" => c.release_name = d.string(v)?,
            // kustomize drops releaseNamespace and extraArgs when converting.
            "extraArgs" => {
                d.strings(v)?;
            }
            _ => {
                d.string(v)?;
            }
        }
        Ok(())
    })?;
    Ok((c, g))
}
