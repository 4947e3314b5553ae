//! The kustomization `crds:` field (kustomize's LoadConfigFromCRDs): files
//! of OpenAPI definitions (`{TypeName: {Schema, Dependencies}}`, JSON or
//! YAML) whose `x-kubernetes-*` property extensions add field specs for
//! annotations, labels, name prefixes and name references of custom kinds.
//! It only builds a transformer config; it knows nothing of merge keys.

use std::path::Path;

use serde_json::{Map, Value as J};

use super::fieldspec::{FieldSpec, NameBackRef, TransformerConfig};
use super::resource::Gvk;
use super::Error;
use crate::yaml::{self, Resolver};

const X_ANNOTATION: &str = "x-kubernetes-annotation";
const X_LABEL_SELECTOR: &str = "x-kubernetes-label-selector";
const X_IDENTITY: &str = "x-kubernetes-identity";
const X_VERSION: &str = "x-kubernetes-object-ref-api-version";
const X_KIND: &str = "x-kubernetes-object-ref-kind";
const X_NAME_KEY: &str = "x-kubernetes-object-ref-name-key";

/// The config one CRD file adds (makeNameToApiMap + makeConfigFromApiMap).
pub fn config_from_file(file: &Path, text: &str) -> Result<TransformerConfig, Error> {
    let invalid = |e: String| {
        Error::invalid(
            file,
            format!(
                "unable to parse open API definition from '{}': {e}",
                file.display()
            ),
        )
    };
    let doc: J = if text.starts_with('{') {
        serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?
    } else {
        yaml::to_json(&yaml::parse_one(text, Resolver::V2).map_err(|e| invalid(e.to_string()))?)
    };
    let types = match &doc {
        J::Object(m) => m,
        J::Null => return Ok(TransformerConfig::default()),
        _ => return Err(invalid("expected a map of type names".into())),
    };
    // Go ranges over a map; sorting the names makes the merge order stable.
    let mut names: Vec<&String> = types.keys().collect();
    names.sort();
    let mut result = TransformerConfig::default();
    for name in names {
        if !looks_like_k8s_type(properties(types, name)) {
            continue;
        }
        // makeGvkFromTypeName: the kind is what follows the last `.`.
        let kind = name.rsplit('.').next().unwrap_or_default();
        let gvk = Gvk {
            kind: kind.to_string(),
            ..Gvk::default()
        };
        let mut one = TransformerConfig::default();
        let mut chain = Vec::new();
        load_type(&mut one, &gvk, types, name, &mut Vec::new(), &mut chain)
            .map_err(|e| Error::invalid(file, e))?;
        result = result.merged(&one).map_err(|e| Error::invalid(file, e))?;
    }
    Ok(result)
}

fn properties<'a>(types: &'a Map<String, J>, name: &str) -> Option<&'a Map<String, J>> {
    types
        .get(name)?
        .get("Schema")?
        .get("properties")?
        .as_object()
}

fn looks_like_k8s_type(props: Option<&Map<String, J>>) -> bool {
    props.is_some_and(|p| {
        ["kind", "apiVersion", "metadata"]
            .iter()
            .all(|k| p.contains_key(*k))
    })
}

/// Extensions.GetString: the extension's value when it is a string (keys
/// compare case-insensitively, as go-openapi lowercases them).
fn ext<'a>(prop: &'a J, key: &str) -> Option<&'a str> {
    prop.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .and_then(|(_, v)| v.as_str())
}

fn spec(gvk: &Gvk, path: &[String]) -> FieldSpec {
    FieldSpec {
        gvk: gvk.clone(),
        path: path.join("/"),
        create: false,
    }
}

/// loadCrdIntoConfig: the properties of `type_name`, then the types they
/// `$ref`, with `path` leading to them. `chain` holds the types being
/// walked, so a recursive type fails instead of recursing forever.
fn load_type(
    tc: &mut TransformerConfig,
    gvk: &Gvk,
    types: &Map<String, J>,
    type_name: &str,
    path: &mut Vec<String>,
    chain: &mut Vec<String>,
) -> Result<(), String> {
    let Some(props) = properties(types, type_name) else {
        return Ok(());
    };
    if chain.iter().any(|t| t == type_name) {
        return Err(format!("CRD type {type_name} refers to itself"));
    }
    chain.push(type_name.to_string());
    let mut names: Vec<&String> = props.keys().collect();
    names.sort();
    for prop_name in names {
        let prop = &props[prop_name.as_str()];
        path.push(prop_name.clone());
        let fs = spec(gvk, path);
        let one = TransformerConfig {
            common_annotations: ext(prop, X_ANNOTATION)
                .map(|_| fs.clone())
                .into_iter()
                .collect(),
            common_labels: ext(prop, X_LABEL_SELECTOR)
                .map(|_| fs.clone())
                .into_iter()
                .collect(),
            name_prefix: ext(prop, X_IDENTITY)
                .map(|_| fs.clone())
                .into_iter()
                .collect(),
            ..TransformerConfig::default()
        };
        tc.merge(&one)?;
        if let (Some(version), Some(kind)) = (ext(prop, X_VERSION), ext(prop, X_KIND)) {
            let key = ext(prop, X_NAME_KEY).unwrap_or("name");
            let mut referrer = path.clone();
            referrer.push(key.to_string());
            let nbr = NameBackRef {
                target: Gvk {
                    version: version.to_string(),
                    kind: kind.to_string(),
                    ..Gvk::default()
                },
                referrers: vec![spec(gvk, &referrer)],
            };
            tc.merge(&TransformerConfig {
                name_reference: vec![nbr],
                ..TransformerConfig::default()
            })?;
        }
        if let Some(r) = prop
            .get("$ref")
            .and_then(J::as_str)
            .filter(|r| !r.is_empty())
        {
            load_type(tc, gvk, types, r, path, chain)?;
        }
        path.pop();
    }
    chain.pop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = r#"{
      "ex/v1.MyKind": {"Schema": {"properties": {
        "apiVersion": {}, "kind": {}, "metadata": {},
        "spec": {"$ref": "ex/v1.MyKindSpec"}}}},
      "ex/v1.MyKindSpec": {"Schema": {"properties": {
        "secretRef": {"x-kubernetes-object-ref-api-version": "v1",
                      "x-kubernetes-object-ref-kind": "Secret"},
        "owner": {"x-kubernetes-identity": "true"},
        "sel": {"x-kubernetes-label-selector": "true"}}}}
    }"#;

    #[test]
    fn extensions_become_field_specs() {
        let tc = config_from_file(Path::new("crd.json"), CRD).unwrap();
        assert_eq!(tc.name_prefix.len(), 1);
        assert_eq!(tc.name_prefix[0].path, "spec/owner");
        assert_eq!(tc.name_prefix[0].gvk.kind, "MyKind");
        assert_eq!(tc.common_labels[0].path, "spec/sel");
        let nbr = &tc.name_reference[0];
        assert_eq!(
            (nbr.target.version.as_str(), nbr.target.kind.as_str()),
            ("v1", "Secret")
        );
        assert_eq!(nbr.referrers[0].path, "spec/secretRef/name");
    }

    #[test]
    fn recursive_and_malformed_files_fail() {
        let looped = r#"{"a.K": {"Schema": {"properties": {"apiVersion": {}, "kind": {},
            "metadata": {"$ref": "a.K"}}}}}"#;
        assert!(config_from_file(Path::new("c.json"), looped).is_err());
        assert!(config_from_file(Path::new("c.json"), "{").is_err());
        assert!(config_from_file(Path::new("c.yaml"), "- 1\n").is_err());
    }
}
