//! Chart apps: rendered by [`crate::helm`] exactly as `helm template`
//! prints them, then split into documents for per-resource layouts.

use std::path::PathBuf;

use super::{ChartApp, Document};
use crate::helm;
use crate::yaml::{self, Resolver};

/// A rendered chart: helm's output verbatim and its documents.
pub struct Chart {
    /// What `helm template` prints.
    pub output: String,
    /// One per `# Source:` document, with its header.
    pub documents: Vec<Document>,
    /// The chart's files and the values files.
    pub files_read: Vec<PathBuf>,
    /// Template engine warnings.
    pub warnings: Vec<String>,
}

/// `helm template <release> <chart> -f ... --set ...`, with the app's
/// values layered as Argo CD does: files, then inline values, then `set`.
pub fn render(app: &ChartApp) -> Result<Chart, helm::Error> {
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
        ..helm::Options::default()
    };
    if let Some(k) = &app.kube_version {
        opts.kube_version = Some(app.helm_version.parse_kube_version(k)?);
    }
    let rendered = helm::template(&app.chart, &opts)?;
    let mut files_read = helm::chart_files(&app.chart);
    files_read.extend(app.value_files.iter().cloned());
    Ok(Chart {
        documents: split(&rendered.output),
        output: rendered.output,
        files_read,
        warnings: rendered.warnings,
    })
}

/// helm prints each document as `---\n# Source: <path>\n<yaml>\n`.
fn split(output: &str) -> Vec<Document> {
    const MARK: &str = "---\n# Source: ";
    let starts: Vec<usize> = output
        .match_indices(MARK)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || output.as_bytes()[i - 1] == b'\n')
        .collect();
    let mut out = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(output.len());
        let text = &output[start + 4..end];
        let body = text.split_once('\n').map_or("", |(_, b)| b);
        let node = yaml::parse_one(body, Resolver::V3).ok();
        let get = |path: &[&str]| {
            node.as_ref()
                .and_then(|n| n.get_path(path))
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        out.push(Document {
            kind: get(&["kind"]),
            name: get(&["metadata", "name"]),
            namespace: get(&["metadata", "namespace"]),
            yaml: text.to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_source_headers() {
        let out = "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: |\n    ---\n    y\n---\n# Source: c/templates/b.yaml\n# only a comment\n";
        let docs = split(out);
        assert_eq!(docs.len(), 2);
        assert_eq!(
            (docs[0].kind.as_str(), docs[0].name.as_str()),
            ("ConfigMap", "a")
        );
        assert!(docs[0].yaml.starts_with("# Source: c/templates/a.yaml\n"));
        assert!(docs[0].yaml.ends_with("    y\n"));
        assert_eq!(docs[1].kind, "");
    }
}
