//! The kustomization `openapi:` field: which OpenAPI schema strategic merge
//! patches read merge keys and strategies from. kyaml keeps one global
//! schema; kustomize resets it from the top kustomization, and every nested
//! kustomization or component, as it is loaded, sets it only if nothing has
//! yet. So the first `openapi:` in load order wins and then never changes.
//! This module owns that state for one build; it does not merge schemas.

use std::path::Path;
use std::sync::Arc;

use super::model::Kustomization;
use super::patch::Reader;
use super::resource::Resource;
use super::Error;
use crate::k8s::Catalog;
use crate::yaml::{self, Resolver};

/// The only Kubernetes schema version kustomize v5.7.1 embeds.
const BUILTIN_VERSION: &str = "v1.21.2";

/// The schema in force while a build runs (kyaml's globalSchema settings).
#[derive(Debug, Default)]
pub struct SchemaSetting {
    /// A version or a custom schema has been chosen.
    set: bool,
    /// The custom schema, when one was chosen.
    custom: Option<Arc<Catalog>>,
    /// kyaml flagged the builtin schema for a delayed parse: a type outside
    /// its precomputed namespace-scope table was seen while no schema was
    /// chosen (resid.NewGvk asks IsCertainlyClusterScoped).
    builtin_pending: bool,
}

impl SchemaSetting {
    /// kustomize's SetSchema for the kustomization `k`; `top` resets what an
    /// earlier build chose. `read` loads the `path` file, relative to the
    /// kustomization, even when the schema is already set (kustomize loads
    /// it first).
    pub fn apply(&mut self, k: &Kustomization, top: bool, read: &mut Reader) -> Result<(), Error> {
        let get = |key: &str| {
            k.openapi
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let schema = match get("path") {
            Some(p) => Some(read(p)?),
            None => None,
        };
        if self.set && !top {
            return Ok(());
        }
        let version = get("version");
        if let Some((file, text)) = schema {
            if version.is_some() {
                return Err(Error::invalid(
                    &k.path,
                    "builtin version and custom schema provided, cannot use both",
                ));
            }
            let cat = parse_schema(&file, &text, self.builtin_pending)?;
            self.custom = Some(Arc::new(cat));
            self.set = true;
            return Ok(());
        }
        match version.unwrap_or_default() {
            "" => {}
            BUILTIN_VERSION => {
                self.custom = None;
                self.set = true;
            }
            _ => {
                return Err(Error::invalid(
                    &k.path,
                    "the specified OpenAPI version is not built in",
                ))
            }
        }
        Ok(())
    }

    /// Notes the types of resources just loaded, for kyaml's delayed parse
    /// of the builtin schema. The builtin OpenAPI types stand in for its
    /// precomputed namespace-scope table.
    pub fn note_types(&mut self, resources: &[Resource]) {
        if self.set && self.custom.is_some() {
            return;
        }
        let unknown = resources.iter().any(|r| {
            let av = r.node.get_str("apiVersion").unwrap_or_default();
            let kind = r.node.get_str("kind").unwrap_or_default();
            Catalog::builtin().for_type(av, kind).is_none()
        });
        self.builtin_pending |= unknown;
    }

    /// The custom schema in force, if any (the builtin one otherwise).
    pub fn custom(&self) -> Option<Arc<Catalog>> {
        self.custom.clone()
    }
}

/// kyaml's parse for a schema file: JSON when it starts with `{`, else YAML
/// converted to JSON.
fn parse_schema(file: &Path, text: &str, with_builtin: bool) -> Result<Catalog, Error> {
    let invalid = |e: String| Error::invalid(file, format!("invalid schema file: {e}"));
    let doc: serde_json::Value = if text.starts_with('{') {
        serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?
    } else {
        let node = yaml::parse_one(text, Resolver::V2).map_err(|e| invalid(e.to_string()))?;
        yaml::to_json(&node)
    };
    Catalog::from_openapi(&doc, with_builtin).map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn kust(src: &str) -> Kustomization {
        Kustomization::parse(Path::new("k/kustomization.yaml"), src).unwrap()
    }

    const SCHEMA: &str = "definitions:\n  v1.X:\n    x-kubernetes-group-version-kind:\n    - {group: ex.com, version: v1, kind: X}\n";

    fn read(name: &str) -> Result<(PathBuf, String), Error> {
        match name {
            "s.yaml" => Ok((PathBuf::from("k/s.yaml"), SCHEMA.to_string())),
            _ => Err(Error::invalid(Path::new(name), "missing")),
        }
    }

    #[test]
    fn first_setting_wins_and_top_resets() {
        let mut s = SchemaSetting::default();
        s.apply(&kust("resources: []\n"), true, &mut read).unwrap();
        assert!(s.custom().is_none());
        s.apply(&kust("openapi:\n  path: s.yaml\n"), false, &mut read)
            .unwrap();
        let cat = s.custom().unwrap();
        assert!(cat.for_type("ex.com/v1", "X").is_some());
        s.apply(&kust("openapi:\n  version: v1.21.2\n"), false, &mut read)
            .unwrap();
        assert!(s.custom().is_some());
        s.apply(&kust("openapi:\n  version: v1.21.2\n"), true, &mut read)
            .unwrap();
        assert!(s.custom().is_none());
        // The file is read even when the schema is already chosen.
        assert!(s
            .apply(&kust("openapi:\n  path: gone.json\n"), false, &mut read)
            .is_err());
    }

    #[test]
    fn errors() {
        let mut s = SchemaSetting::default();
        let both = kust("openapi:\n  path: s.yaml\n  version: v1.21.2\n");
        let e = s.apply(&both, true, &mut read).unwrap_err().to_string();
        assert!(e.contains("cannot use both"), "{e}");
        let old = kust("openapi:\n  version: v1.14.1\n");
        let e = s.apply(&old, true, &mut read).unwrap_err().to_string();
        assert!(e.contains("not built in"), "{e}");
    }
}
