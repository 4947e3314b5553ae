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

/// The annotation of `buildMetadata: [transformerAnnotations]`.
pub const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";

/// AddTransformerAnnotation: a resource without an origin takes the
/// transformer's as its origin; the others record it as a transformation.
pub fn record(resources: &mut [super::Resource], origin: &Origin) {
    for r in resources {
        if r.origin.is_none() {
            r.origin = Some(origin.clone());
        } else {
            r.transformations.push(origin.clone());
        }
    }
}

/// kyaml.Marshal of a list of origins.
pub fn list_yaml(origins: &[Origin]) -> String {
    let mut out = String::new();
    for o in origins {
        for (i, line) in o.to_yaml().lines().enumerate() {
            out.push_str(if i == 0 { "- " } else { "  " });
            out.push_str(line);
            out.push('\n');
        }
    }
    out
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

    #[test]
    fn transformations_list_and_record() {
        let t = Origin::generator(
            "kustomization.yaml".into(),
            ["builtin", "PrefixTransformer", "", ""],
        );
        assert_eq!(
            list_yaml(std::slice::from_ref(&t)),
            "- configuredIn: kustomization.yaml\n  configuredBy:\n    apiVersion: builtin\n    kind: PrefixTransformer\n"
        );
        let node =
            crate::yaml::parse_one("kind: A\nmetadata: {name: a}\n", crate::yaml::Resolver::V3)
                .unwrap();
        let mut rs = vec![
            super::super::Resource::new(node.clone()),
            super::super::Resource::new(node),
        ];
        rs[0].origin = Some(Origin::file("a.yaml".into()));
        record(&mut rs, &t);
        assert_eq!(rs[0].transformations.len(), 1);
        assert_eq!(rs[1].origin, Some(t));
    }
}
