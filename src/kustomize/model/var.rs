//! kustomize's `types.Var` (the deprecated `vars:`), decoded strictly as
//! part of a kustomization and defaulted as `Var.Defaulting` does.
//! Resolving vars is [`super::super::vars`]'s job.

use super::decode::Decoder;
use crate::kustomize::resource::Gvk;
use crate::kustomize::Error;
use crate::yaml::Node;

/// One var (kustomize's `types.Var`, defaulted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Var {
    /// `name`, as used in `$(name)`.
    pub name: String,
    /// `objref`: the resource's type.
    pub gvk: Gvk,
    /// `objref.name`.
    pub obj_name: String,
    /// `objref.namespace`.
    pub obj_namespace: String,
    /// `fieldref.fieldPath` (default `metadata.name`).
    pub field_path: String,
}

/// Decodes `vars:` entries strictly, as part of a kustomization.
pub fn decode(d: &Decoder, n: &Node) -> Result<Var, Error> {
    let mut v = Var::default();
    let mut api_version = String::new();
    d.object(n, &["name", "objref", "fieldref"], |f, value| {
        match f {
            "name" => v.name = d.string(value)?,
            "objref" => d.object(
                value,
                &[
                    "apiVersion",
                    "group",
                    "version",
                    "kind",
                    "name",
                    "namespace",
                ],
                |g, x| {
                    let text = d.string(x)?;
                    match g {
                        "apiVersion" => api_version = text,
                        "group" => v.gvk.group = text,
                        "version" => v.gvk.version = text,
                        "kind" => v.gvk.kind = text,
                        "name" => v.obj_name = text,
                        _ => v.obj_namespace = text,
                    }
                    Ok(())
                },
            )?,
            _ => d.object(value, &["fieldPath"], |_, x| {
                v.field_path = d.string(x)?;
                Ok(())
            })?,
        }
        Ok(())
    })?;
    // Var.Defaulting: fieldPath metadata.name; apiVersion sets group and version.
    if v.field_path.is_empty() {
        v.field_path = "metadata.name".into();
    }
    match api_version.split_once('/') {
        Some((g, ver)) if !ver.contains('/') => {
            v.gvk.group = g.to_string();
            v.gvk.version = ver.to_string();
        }
        None if !api_version.is_empty() => v.gvk.version = api_version,
        _ => {}
    }
    Ok(v)
}
