//! kustomize's `types.Var` (the deprecated `vars:`), decoded strictly as
//! part of a kustomization and defaulted as `Var.Defaulting` does.
//! Resolving vars is [`super::super::vars`]'s job.

use super::decode::Decoder;
use crate::kustomize::resource::Gvk;
use crate::kustomize::Error;
use crate::yaml::fields::field;
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
    let mut target = (Var::default(), String::new());
    d.object(
        n,
        &mut target,
        &[
            field!("name", |d, x, (v, _)| v.name = d.string(x)?),
            field!("objref", |d, x, t| d.object(
                x,
                t,
                &[
                    field!("apiVersion", |d, x, (_, a)| *a = d.string(x)?),
                    field!("group", |d, x, (v, _)| v.gvk.group = d.string(x)?),
                    field!("version", |d, x, (v, _)| v.gvk.version = d.string(x)?),
                    field!("kind", |d, x, (v, _)| v.gvk.kind = d.string(x)?),
                    field!("name", |d, x, (v, _)| v.obj_name = d.string(x)?),
                    field!("namespace", |d, x, (v, _)| v.obj_namespace = d.string(x)?),
                ],
            )?),
            field!("fieldref", |d, x, t| d.object(
                x,
                t,
                &[field!("fieldPath", |d, x, (v, _)| v.field_path = d.string(x)?)],
            )?),
        ],
    )?;
    let (mut v, api_version) = target;
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
