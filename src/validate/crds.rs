//! The custom resource types a repository defines: every
//! CustomResourceDefinition rendered by any app of any environment (charts
//! ship them) and those of the files an environment lists under `crds:`,
//! each served version with its `openAPIV3Schema` as JSON.
//! apiextensions.k8s.io/v1 and the older v1beta1 shape (`spec.validation`,
//! `spec.version`) are both read.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as J;

use super::Error;
use crate::yaml::{self, to_json, Node};

/// One served version of a custom resource type.
#[derive(Clone, Debug, PartialEq)]
pub struct Crd {
    /// Its `openAPIV3Schema` (None: the CRD declares none, so anything
    /// goes).
    pub schema: Option<J>,
    /// Where it was defined: `env/app` or a file.
    pub from: String,
    /// The environment that rendered it (None: a `crds:` file).
    pub env: Option<String>,
}

/// Custom resource types by (apiVersion, kind).
#[derive(Clone, Debug, Default)]
pub struct Crds {
    by_type: BTreeMap<(String, String), Vec<Crd>>,
}

impl Crds {
    /// Adds the versions `n` defines, when it is a CRD.
    pub fn add(&mut self, n: &Node, from: &str, env: Option<&str>) {
        if n.get_str("kind") != Some("CustomResourceDefinition")
            || !n
                .get_str("apiVersion")
                .is_some_and(|a| a.starts_with("apiextensions.k8s.io/"))
        {
            return;
        }
        let Some(spec) = n.get("spec") else { return };
        let (Some(group), Some(kind)) = (
            spec.get_str("group"),
            spec.get_path(&["names", "kind"]).and_then(Node::as_str),
        ) else {
            return;
        };
        // v1beta1: one schema for every version.
        let shared = spec
            .get_path(&["validation", "openAPIV3Schema"])
            .map(to_json);
        let mut versions: Vec<(String, Option<J>)> = Vec::new();
        for v in spec
            .get("versions")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
        {
            let Some(name) = v.get_str("name") else {
                continue;
            };
            let own = v.get_path(&["schema", "openAPIV3Schema"]).map(to_json);
            versions.push((name.to_string(), own.or_else(|| shared.clone())));
        }
        if let (true, Some(v)) = (versions.is_empty(), spec.get_str("version")) {
            versions.push((v.to_string(), shared));
        }
        for (version, schema) in versions {
            let list = self
                .by_type
                .entry((format!("{group}/{version}"), kind.to_string()))
                .or_default();
            let crd = Crd {
                schema,
                from: from.to_string(),
                env: env.map(str::to_string),
            };
            if !list.contains(&crd) {
                list.push(crd);
            }
        }
    }

    /// Adds every CRD of a `crds:` file (one or more YAML documents).
    pub fn load_file(&mut self, path: &Path, shown: &str) -> Result<(), Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::CrdFile {
            path: path.to_path_buf(),
            line: 0,
            message: e.to_string(),
        })?;
        let docs = yaml::parse_all(&text, yaml::Resolver::V3).map_err(|e| Error::CrdFile {
            path: path.to_path_buf(),
            line: 0,
            message: e.to_string(),
        })?;
        let before = self.len();
        for d in docs.iter().filter(|d| !d.is_null()) {
            self.add(d, shown, None);
        }
        if self.len() == before {
            return Err(Error::CrdFile {
                path: path.to_path_buf(),
                line: 0,
                message: "no CustomResourceDefinition in this file".into(),
            });
        }
        Ok(())
    }

    /// The definition of `api_version`/`kind`, preferring the one `env`
    /// rendered (charts of different versions may define it differently).
    pub fn get(&self, api_version: &str, kind: &str, env: &str) -> Option<&Crd> {
        let list = self
            .by_type
            .get(&(api_version.to_string(), kind.to_string()))?;
        list.iter()
            .find(|c| c.env.as_deref() == Some(env))
            .or_else(|| list.first())
    }

    /// Adds `other`'s definitions after this one's.
    pub fn merge(&mut self, other: Crds) {
        for (k, list) in other.by_type {
            let mine = self.by_type.entry(k).or_default();
            for c in list {
                if !mine.contains(&c) {
                    mine.push(c);
                }
            }
        }
    }

    /// Types defined.
    pub fn len(&self) -> usize {
        self.by_type.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v1beta1_definitions_are_read() {
        let src = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n---\napiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec:\n  group: example.com\n  version: v1alpha1\n  names: {kind: Gadget}\n  validation:\n    openAPIV3Schema: {type: object}\n";
        let mut c = Crds::default();
        for d in yaml::parse_all(src, yaml::Resolver::V3).unwrap() {
            c.add(&d, "test", Some("dev"));
        }
        assert_eq!(c.len(), 2);
        let w = c.get("example.com/v1", "Widget", "prod").unwrap();
        assert_eq!(w.schema.as_ref().unwrap()["type"], "object");
        assert!(c.get("example.com/v1alpha1", "Gadget", "dev").is_some());
        assert!(c.get("example.com/v2", "Widget", "dev").is_none());
    }
}
