//! `helmCharts` and `helmGlobals`: kustomize's HelmChartInflationGenerator,
//! rendered by [`crate::helm`] instead of a `helm` binary. The chart must be
//! vendored under `chartHome`; hydrate never pulls.
//!
//! kustomize runs `helm template` with a values file it writes itself: the
//! chart's values (or `valuesFile`) merged with `valuesInline` by kyaml's
//! schema-less merge, then `additionalValuesFiles`. The same layering is
//! reproduced here, typed as go-yaml v3 sees it.

use std::path::{Path, PathBuf};

use super::model::{HelmChart, HelmGlobals};
use super::Error;
use crate::helm;
use crate::yaml::{self, Node, Resolver, Tag, Value};

/// The `--enable-helm`, `--helm-kube-version` and `--helm-api-versions`
/// flags of `kustomize build`.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Inflate charts at all (kustomize refuses `helmCharts` without it).
    pub enabled: bool,
    /// Overrides every chart's `kubeVersion`.
    pub kube_version: Option<String>,
    /// Overrides every chart's `apiVersions` when not empty.
    pub api_versions: Vec<String>,
}

/// What inflating one chart produced.
pub struct Inflated {
    /// The rendered manifests, as `helm template` printed them.
    pub output: String,
    /// The chart directory (for messages and for the files it read).
    pub chart_dir: PathBuf,
    /// Warnings from the template engine.
    pub warnings: Vec<crate::warning::Warning>,
}

/// Reads a file named by the kustomization under the load restrictor:
/// returns its path and bytes.
pub type Loader<'a> = dyn FnMut(&str) -> Result<(PathBuf, Vec<u8>), Error> + 'a;

/// Renders one chart as kustomize's HelmChartInflationGenerator would.
pub fn inflate(
    dir: &Path,
    kpath: &Path,
    globals: &HelmGlobals,
    chart: &HelmChart,
    settings: &Settings,
    load: &mut Loader,
) -> Result<Inflated, Error> {
    let trouble = |why: &str| {
        let dump = chart
            .source
            .as_ref()
            .and_then(|n| yaml::to_string(n).ok())
            .unwrap_or_default();
        Error::Invalid {
            path: kpath.to_path_buf(),
            line: chart.line,
            message: format!(
                "trouble configuring builtin HelmChartInflationGenerator with config: `\n{dump}`: {why}"
            ),
        }
    };
    if !settings.enabled {
        return Err(trouble("must specify --enable-helm"));
    }
    if chart.name.is_empty() {
        return Err(trouble("chart name cannot be empty"));
    }
    let merge = match chart.values_merge.as_str() {
        "" | "override" => ValuesMerge::Override,
        "merge" => ValuesMerge::Merge,
        "replace" => ValuesMerge::Replace,
        _ => {
            return Err(trouble(
                "valuesMerge must be one of [merge override replace]",
            ))
        }
    };
    let chart_home = if globals.chart_home.is_empty() {
        "charts"
    } else {
        &globals.chart_home
    };
    let mut home = dir.join(chart_home);
    // kustomize pulls a versioned chart from a repo into `<name>-<version>`.
    if !chart.version.is_empty() && !chart.repo.is_empty() {
        home = home.join(format!("{}-{}", chart.name, chart.version));
    }
    let additional = chart
        .additional_values_files
        .iter()
        .map(|f| load(f).map(|(p, _)| p))
        .collect::<Result<Vec<_>, _>>()?;
    let chart_dir = home.join(&chart.name);
    if !chart_dir.is_dir() {
        let message = if chart.repo.is_empty() {
            format!(
                "no repo specified for pull, no chart found at '{}'",
                chart_dir.display()
            )
        } else {
            let version = if chart.version.is_empty() {
                String::new()
            } else {
                format!(" --version {}", chart.version)
            };
            format!(
                "chart '{}' is not vendored at '{}'; hydrate works offline: vendor it with `helm pull --untar --untardir {} --repo {} {}{version}`",
                chart.name,
                chart_dir.display(),
                home.display(),
                chart.repo,
                chart.name
            )
        };
        return Err(Error::Invalid {
            path: kpath.to_path_buf(),
            line: chart.line,
            message,
        });
    }
    let values_file = if chart.values_file.is_empty() {
        chart_dir.join("values.yaml").to_string_lossy().into_owned()
    } else {
        chart.values_file.clone()
    };
    let mut opts = helm::Options {
        namespace: if chart.namespace.is_empty() {
            "default".into()
        } else {
            chart.namespace.clone()
        },
        api_versions: if settings.api_versions.is_empty() {
            chart.api_versions.clone()
        } else {
            settings.api_versions.clone()
        },
        include_crds: chart.include_crds,
        skip_tests: chart.skip_tests,
        no_hooks: chart.skip_hooks,
        ..helm::Options::default()
    };
    let inline = chart
        .values_inline
        .as_ref()
        .filter(|n| n.as_map().is_some_and(|m| !m.is_empty()));
    match inline {
        Some(inline) => {
            let merged = match merge {
                ValuesMerge::Replace => inline.clone(),
                _ => {
                    let (path, bytes) = load(&values_file)?;
                    let text = String::from_utf8(bytes)
                        .map_err(|_| Error::invalid(&path, "not valid UTF-8"))?;
                    // kyaml parses the values file with go-yaml v3.
                    let file =
                        yaml::parse_one(&text, Resolver::V3).map_err(|e| Error::yaml(&path, e))?;
                    let (dest, src) = if merge == ValuesMerge::Override {
                        (&file, inline)
                    } else {
                        (inline, &file)
                    };
                    merge2(Some(dest), Some(src))
                        .map_err(|e| Error::invalid(&path, format!("could not merge values: {e}")))?
                        .unwrap_or_else(Node::map)
                }
            };
            let values = helm::values::from_node(&merged)
                .map_err(|e| Error::invalid(kpath, e.to_string()))?;
            opts.values_docs.push(values);
        }
        None => {
            let (path, _) = load(&values_file)?;
            opts.values_files.push(path);
        }
    }
    opts.values_files.extend(additional);
    let kube_version = settings
        .kube_version
        .as_deref()
        .unwrap_or(&chart.kube_version);
    let fail = |e: helm::Error| Error::Invalid {
        path: kpath.to_path_buf(),
        line: chart.line,
        message: format!("helm chart '{}': {e}", chart.name),
    };
    if !kube_version.is_empty() {
        opts.kube_version = Some(helm::KubeVersion::parse(kube_version).map_err(fail)?);
    }
    // `helm template NAME` or `--generate-name`, which helm template ignores
    // in favour of its default "release-name" unless a name template is set.
    opts.release_name = match (chart.release_name.as_str(), chart.name_template.as_str()) {
        ("", "") => "release-name".into(),
        ("", t) => helm::name_from_template(t, helm::HelmVersion::V3).map_err(fail)?,
        (_, "") => chart.release_name.clone(),
        _ => {
            return Err(fail(helm::Error::Usage(
                "cannot set --name-template and also specify a name".into(),
            )))
        }
    };
    let rendered = helm::template(&chart_dir, &opts).map_err(fail)?;
    Ok(Inflated {
        output: rendered.output,
        chart_dir,
        warnings: rendered.warnings,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ValuesMerge {
    Override,
    Merge,
    Replace,
}

fn missing_or_null(n: Option<&Node>) -> bool {
    n.is_none_or(|n| n.as_scalar().is_some_and(|s| s.tag == Tag::Null))
}

/// kyaml's `merge2.Merge(src, dest)` without a schema: maps merge field by
/// field (sorted), `src` wins for scalars and replaces lists whole, a null
/// in `src` clears the field, and an explicit `null` only in `dest` stays.
/// `Ok(None)` means the field is cleared.
fn merge2(dest: Option<&Node>, src: Option<&Node>) -> Result<Option<Node>, String> {
    const KINDS: [&str; 3] = ["MappingNode", "SequenceNode", "ScalarNode"];
    let kind_of = |n: &Node| match &n.value {
        Value::Map(_) => 0,
        Value::Seq(_) => 1,
        Value::Scalar(_) => 2,
    };
    // walk.Walker.Kind: the kind of the first source that is not null;
    // every other non-null source must have the same kind.
    let present: Vec<&Node> = [dest, src]
        .into_iter()
        .flatten()
        .filter(|n| !n.is_null())
        .collect();
    let kind = present.first().map_or(0, |n| kind_of(n));
    if let Some(n) = present.iter().find(|n| kind_of(n) != kind) {
        let text = yaml::to_string(n).unwrap_or_default();
        return Err(format!(
            "wrong node kind: expected {} but got {}: node contents:\n{text}",
            KINDS[kind],
            KINDS[kind_of(n)]
        ));
    }
    match kind {
        1 | 2 => Ok(src.or(dest).cloned()),
        _ => {
            // Merger.VisitMap
            let base = if missing_or_null(dest) {
                if src.is_none() {
                    // An explicit null in dest survives ("null" or "~", not empty).
                    return Ok(dest
                        .filter(|d| d.as_scalar().is_some_and(|s| !s.text.is_empty()))
                        .cloned());
                }
                src
            } else if src.is_some_and(|s| s.is_null()) {
                return Ok(None);
            } else {
                dest
            };
            let Some(base) = base.filter(|b| b.as_map().is_some()) else {
                return Ok(base.cloned());
            };
            let mut keys: Vec<&str> = Vec::new();
            for n in [Some(base), src].into_iter().flatten() {
                for (k, _) in n.as_map().into_iter().flatten() {
                    let key = k.key_text().unwrap_or_default();
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
            }
            keys.sort_unstable();
            let mut out = base.clone();
            for key in keys {
                let from_src = src.and_then(|s| s.get(key));
                // FieldSetter clears a field set to null, except the null
                // kept from dest alone (kyaml's "persistent null").
                match merge2(base.get(key), from_src)? {
                    Some(v) if from_src.is_none() || !v.is_null() => out.set(key, v),
                    _ => {
                        out.remove(key);
                    }
                }
            }
            Ok(Some(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(src: &str) -> Node {
        yaml::parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"))
    }

    fn merged(dest: &str, src: &str) -> String {
        let m = merge2(Some(&node(dest)), Some(&node(src)))
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(Node::map);
        yaml::to_string(&m).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn merge_is_kyaml_merge2_without_schema() {
        // src wins for scalars, lists are replaced whole, maps merge.
        assert_eq!(
            merged(
                "a: 1\nl: [1, 2]\nm: {x: 1, w: 2}\n",
                "a: 2\nl: [3]\nm: {w: 3, z: 4}\n"
            ),
            "a: 2\nl:\n- 3\nm:\n  w: 3\n  x: 1\n  z: 4\n"
        );
        // A null in src clears; an explicit null only in dest stays.
        assert_eq!(
            merged("a: 1\nb: null\nc:\nd: {x: 1}\n", "a: null\nd: null\n"),
            "b: null\n"
        );
        // Kind clash is kyaml's error.
        assert!(merge2(Some(&node("a: {x: 1}\n")), Some(&node("a: [1]\n"))).is_err());
    }
}
