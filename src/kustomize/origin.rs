//! `buildMetadata: [originAnnotations]`: where each resource came from
//! (kustomize's `resource.Origin`), printed as the
//! `config.kubernetes.io/origin` annotation.

use crate::yaml::{self, Node};

/// The annotation kustomize writes.
pub const ANNOTATION: &str = "config.kubernetes.io/origin";

/// A resource's origin: the file it was read from, or the generator that
/// made it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// The file, relative to the top kustomization.
    pub path: String,
    /// The kustomization or config file of the generator.
    pub configured_in: String,
    /// The generator: apiVersion, kind, name, namespace.
    pub configured_by: [String; 4],
}

impl Origin {
    /// A resource read from `path`.
    pub fn file(path: String) -> Origin {
        Origin {
            path,
            ..Default::default()
        }
    }

    /// A resource made by a generator configured in `configured_in`.
    pub fn generator(configured_in: String, by: [&str; 4]) -> Origin {
        Origin {
            configured_in,
            configured_by: by.map(str::to_string),
            ..Default::default()
        }
    }

    /// kyaml.Marshal of the struct: fields in declaration order, empty ones left out.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        let mut field = |indent: &str, key: &str, value: &str| {
            if !value.is_empty() {
                let text = yaml::to_string(&Node::string(value)).unwrap_or_default();
                out.push_str(&format!("{indent}{key}: {text}"));
            }
        };
        field("", "path", &self.path);
        field("", "configuredIn", &self.configured_in);
        if self.configured_by.iter().any(|s| !s.is_empty()) {
            let mut by = String::new();
            for (key, value) in ["apiVersion", "kind", "name", "namespace"]
                .iter()
                .zip(&self.configured_by)
            {
                if !value.is_empty() {
                    let text = yaml::to_string(&Node::string(value)).unwrap_or_default();
                    by.push_str(&format!("  {key}: {text}"));
                }
            }
            out.push_str("configuredBy:\n");
            out.push_str(&by);
        }
        out
    }
}

/// filepath.Join: joined with `/` and cleaned lexically.
pub fn join(base: &str, path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in base.split('/').chain(path.split('/')) {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_cleans_like_go() {
        assert_eq!(join("", "../base"), "../base");
        assert_eq!(join("../base", "ns.yaml"), "../base/ns.yaml");
        assert_eq!(join("a/b", "../c"), "a/c");
    }

    #[test]
    fn yaml_keeps_field_order() {
        let o = Origin::generator(
            "kustomization.yaml".into(),
            ["builtin", "ConfigMapGenerator", "", ""],
        );
        assert_eq!(
            o.to_yaml(),
            "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"
        );
        assert_eq!(Origin::file("a.yaml".into()).to_yaml(), "path: a.yaml\n");
    }
}
