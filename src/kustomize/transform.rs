//! The builtin transformers of a kustomization, in the order kustomize runs
//! them: patches first, then namespace, prefix, suffix, labels, annotations,
//! JSON 6902 patches, replicas, images. Each walks the field specs of the
//! build's config.

use super::fieldspec::{apply, set_entry, Create, FieldSpec, TransformerConfig};
use super::model::{Image, Kustomization, Replica};
use super::patch::{After, Patches};
use super::resource::Resource;
use super::Error;
use crate::k8s::Catalog;
use crate::yaml::{Node, Tag};

/// Runs the builtin transformers of `k` over `resources`, in kustomize's
/// order (kusttarget_configplugin.go: patchesStrategicMerge, patches,
/// namespace, prefix, suffix, labels, annotations, patchesJson6902,
/// replicas, images).
pub fn run(
    k: &Kustomization,
    config: &TransformerConfig,
    patches: &Patches,
    cat: &Catalog,
    resources: &mut Vec<Resource>,
    after: &mut After,
) -> Result<(), Error> {
    let fail = |e: String| Error::invalid(&k.path, e);
    if patches.has_strategic_merge() {
        patches.apply_strategic_merge(cat, resources)?;
        after(resources, "PatchStrategicMergeTransformer");
    }
    patches.apply_patches(cat, resources, after)?;
    if !k.namespace.is_empty() {
        let opts = NamespaceOptions::default();
        namespace(&k.namespace, &config.namespace, &opts, resources).map_err(fail)?;
        after(resources, "NamespaceTransformer");
    }
    if !k.name_prefix.is_empty() {
        prefix_suffix(&k.name_prefix, "", &config.name_prefix, resources).map_err(fail)?;
        after(resources, "PrefixTransformer");
    }
    if !k.name_suffix.is_empty() {
        prefix_suffix("", &k.name_suffix, &config.name_suffix, resources).map_err(fail)?;
        after(resources, "SuffixTransformer");
    }
    for set in &k.labels {
        let mut specs = set.fields.clone();
        merge(&mut specs, &config.labels);
        if set.include_selectors {
            merge(&mut specs, &config.common_labels);
        } else {
            if set.include_templates {
                merge(&mut specs, &config.template_labels);
            }
            merge(
                &mut specs,
                &[FieldSpec {
                    path: "metadata/labels".into(),
                    create: true,
                    ..Default::default()
                }],
            );
        }
        map_entries(&set.pairs, &specs, resources).map_err(fail)?;
        after(resources, "LabelTransformer");
    }
    // The commonLabels LabelTransformer exists whenever any labels are set.
    if !k.labels.is_empty() || !k.common_labels.is_empty() {
        map_entries(&k.common_labels, &config.common_labels, resources).map_err(fail)?;
        after(resources, "LabelTransformer");
    }
    if !k.common_annotations.is_empty() {
        map_entries(&k.common_annotations, &config.common_annotations, resources).map_err(fail)?;
        after(resources, "AnnotationsTransformer");
    }
    patches.apply_json6902(resources, after)?;
    for r in &k.replicas {
        replicas(r, &config.replicas, resources).map_err(fail)?;
        after(resources, "ReplicaCountTransformer");
    }
    for image in &k.images {
        images(image, &config.images, resources).map_err(fail)?;
        after(resources, "ImageTagTransformer");
    }
    Ok(())
}

/// kustomize's FsSlice.MergeAll: append specs not already present.
pub fn merge(into: &mut Vec<FieldSpec>, from: &[FieldSpec]) {
    for s in from {
        if !into.contains(s) {
            into.push(s.clone());
        }
    }
}

/// Which RoleBinding subjects follow the namespace (kustomize's
/// `setRoleBindingSubjects`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SubjectMode {
    /// `defaultOnly` (and unset): subjects named `default`.
    #[default]
    DefaultOnly,
    /// `allServiceAccounts`: every ServiceAccount subject.
    AllServiceAccounts,
    /// `none`.
    None,
}

/// The NamespaceTransformer's switches.
#[derive(Clone, Copy, Debug, Default)]
pub struct NamespaceOptions {
    /// Only set namespaces that are unset or empty.
    pub unset_only: bool,
    /// Which RoleBinding subjects to update.
    pub subjects: SubjectMode,
}

/// NamespaceTransformer.
pub fn namespace(
    ns: &str,
    specs: &[FieldSpec],
    opts: &NamespaceOptions,
    resources: &mut [Resource],
) -> Result<(), String> {
    let meta = FieldSpec {
        path: "metadata/namespace".into(),
        create: true,
        ..Default::default()
    };
    for r in resources.iter_mut() {
        if r.node.as_map().is_none_or(Vec::is_empty) {
            continue;
        }
        r.store_previous_id();
        let gvk = r.gvk();
        // SetEntryIfEmpty under unsetOnly: a non-empty value stays.
        let set = &mut |n: &mut Node| {
            if n.as_scalar().is_none() {
                return Err(format!(
                    "namespace field specs must target scalar nodes: wrong node kind: expected ScalarNode but got {}",
                    n.kind_name()
                ));
            }
            if !(opts.unset_only && n.as_scalar().is_some_and(|s| !s.text.is_empty())) {
                *n = Node::string(ns);
            }
            Ok(())
        };
        // metaNamespaceHack: metadata.namespace of every namespaced resource.
        if !gvk.is_cluster_scoped() {
            apply(&mut r.node, &meta, Create::Str, set)?;
        }
        if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
            role_binding_subjects(&mut r.node, opts.subjects, set)?;
        }
        for spec in specs {
            // removeUnneededMetaFieldSpecs: metadata/namespace is done above;
            // metadata/name only for `v1` (the Namespace object itself).
            let skip = spec.path == "metadata/namespace"
                || (spec.path == "metadata/name" && r.node.get_str("apiVersion") != Some("v1"))
                || ((gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding")
                    && spec.path == "subjects/namespace");
            if !skip && spec.selects(&gvk) {
                apply(&mut r.node, spec, Create::Str, set)?;
            }
        }
    }
    check_unique(resources)
}

/// kustomize's roleBindingHack: subjects named `default` (or every
/// ServiceAccount subject) follow the namespace.
fn role_binding_subjects(
    node: &mut Node,
    mode: SubjectMode,
    set: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    let Some(subjects) = node.get_mut("subjects").and_then(Node::as_seq_mut) else {
        return Ok(());
    };
    for s in subjects {
        let wanted = match mode {
            SubjectMode::DefaultOnly => s.get_str("name") == Some("default"),
            SubjectMode::AllServiceAccounts => s.get_str("kind") == Some("ServiceAccount"),
            SubjectMode::None => false,
        };
        if wanted {
            if s.get("namespace").is_none() {
                s.set("namespace", Node::scalar("", crate::yaml::Tag::Str));
            }
            if let Some(n) = s.get_mut("namespace") {
                set(n)?;
            }
        }
    }
    Ok(())
}

fn check_unique(resources: &[Resource]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::with_capacity(resources.len());
    for r in resources {
        if !seen.insert(r.id_key()) {
            return Err(format!(
                "namespace transformation produces ID conflict: {}",
                r.cur_id().id_string()
            ));
        }
    }
    Ok(())
}

/// PrefixTransformer and SuffixTransformer.
pub fn prefix_suffix(
    prefix: &str,
    suffix: &str,
    specs: &[FieldSpec],
    resources: &mut [Resource],
) -> Result<(), String> {
    for r in resources.iter_mut() {
        let id = r.org_id();
        // prefixFieldSpecsToSkip: CRDs, APIServices and Namespaces keep their names.
        let skipped = id.gvk.kind == "CustomResourceDefinition"
            || id.gvk.kind == "Namespace"
            || (id.gvk.kind == "APIService" && id.gvk.group == "apiregistration.k8s.io");
        if skipped {
            continue;
        }
        for spec in specs {
            if !id.gvk.is_selected_by(&spec.gvk) {
                continue;
            }
            if spec.path == "metadata/name" {
                if !prefix.is_empty() {
                    r.prefixes.push(prefix.to_string());
                }
                if !suffix.is_empty() {
                    r.suffixes.push(suffix.to_string());
                }
                if !prefix.is_empty() || !suffix.is_empty() {
                    r.store_previous_id();
                }
            }
            apply(&mut r.node, spec, Create::Nothing, &mut |n: &mut Node| {
                let old = n.as_str().unwrap_or_default();
                *n = Node::string(format!("{prefix}{old}{suffix}"));
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// LabelTransformer and AnnotationsTransformer.
pub fn map_entries(
    pairs: &[(String, String)],
    specs: &[FieldSpec],
    resources: &mut [Resource],
) -> Result<(), String> {
    if pairs.is_empty() {
        return Ok(());
    }
    let mut sorted: Vec<&(String, String)> = pairs.iter().collect();
    sorted.sort();
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        for (k, v) in &sorted {
            for spec in specs.iter().filter(|s| s.selects(&gvk)) {
                apply(&mut r.node, spec, Create::Map, &mut set_entry(k, v))?;
            }
        }
    }
    Ok(())
}

/// ReplicaCountTransformer.
pub fn replicas(
    replica: &Replica,
    specs: &[FieldSpec],
    resources: &mut [Resource],
) -> Result<(), String> {
    let (name, count) = (replica.name.as_str(), replica.count);
    let mut found = false;
    for spec in specs {
        for r in resources.iter_mut() {
            if !r.had_id(|id| id.name == name && id.gvk.is_selected_by(&spec.gvk)) {
                continue;
            }
            found = true;
            apply(&mut r.node, spec, Create::Int, &mut |n: &mut Node| {
                *n = Node::scalar(count.to_string(), Tag::Int);
                // A traced build: the value now comes from the entry.
                if replica.at.source.is_some() {
                    n.pos = replica.at;
                }
                Ok(())
            })?;
        }
    }
    if !found {
        let gvks: Vec<String> = specs.iter().map(|s| s.gvk.id_string()).collect();
        return Err(format!(
            "resource with name {name} does not match a config with the following GVK [{}]",
            gvks.join(" ")
        ));
    }
    Ok(())
}

/// ImageTagTransformer.
pub fn images(
    image: &Image,
    specs: &[FieldSpec],
    resources: &mut [Resource],
) -> Result<(), String> {
    // IsImageMatched uses the configured name as a regular expression.
    let re = super::image_name::ImageName::new(&image.name)
        .map_err(|e| format!("invalid image name {:?}: {e}", image.name))?;
    let mut update = |n: &mut Node| -> Result<(), String> {
        let Some(value) = n.as_scalar().map(|s| s.text.clone()) else {
            return Err("wrong node kind: expected ScalarNode".into());
        };
        if re.is_match(&value) {
            *n = Node::string(new_image(&value, image));
            // A traced build: the value now comes from the `images:` entry.
            if image.at.source.is_some() {
                n.pos = image.at;
            }
        }
        Ok(())
    };
    for r in resources.iter_mut() {
        if r.node.get_str("kind") == Some("CustomResourceDefinition") {
            continue;
        }
        // The legacy filter: every `containers`/`initContainers` list anywhere.
        legacy_containers(&mut r.node, &mut update)?;
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.selects(&gvk)) {
            apply(&mut r.node, spec, Create::Nothing, &mut update)?;
        }
    }
    Ok(())
}

fn legacy_containers(
    node: &mut Node,
    update: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    if let Some(items) = node.as_seq_mut() {
        for i in items {
            legacy_containers(i, update)?;
        }
        return Ok(());
    }
    let Some(entries) = node.as_map_mut() else {
        return Ok(());
    };
    for (k, v) in entries.iter_mut() {
        legacy_containers(v, update)?;
        let key = k.key_text().unwrap_or_default();
        if key == "containers" || key == "initContainers" {
            for c in v.as_seq_mut().into_iter().flatten() {
                if let Some(img) = c.get_mut("image") {
                    update(img)?;
                }
            }
        }
    }
    Ok(())
}

/// kustomize's image.Split plus the tag/digest rules of imageTagUpdater.
fn new_image(value: &str, image: &Image) -> String {
    let (mut name, mut tag, mut digest) = split_image(value);
    if !image.new_name.is_empty() {
        name = image.new_name.clone();
    }
    if !image.new_tag.is_empty() && !image.digest.is_empty() {
        tag = image.new_tag.clone();
        digest = image.digest.clone();
    } else if !image.new_tag.is_empty() {
        tag = image.new_tag.clone();
        digest.clear();
    } else if !image.digest.is_empty() {
        tag.clear();
        digest = image.digest.clone();
    } else if !image.tag_suffix.is_empty() {
        tag.push_str(&image.tag_suffix);
        digest.clear();
    }
    let mut out = name;
    if !tag.is_empty() {
        out.push(':');
        out.push_str(&tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(&digest);
    }
    out
}

fn split_image(image: &str) -> (String, String, String) {
    // The registry part (before the first `/`) may hold a `:port`.
    let slash = match image.find('/') {
        Some(i) if i > 0 => i,
        _ => 0,
    };
    let search = &image[slash..];
    let at = search.find('@');
    let colon = search.find(':');
    match (colon, at) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (c, Some(d)) if c.is_none_or(|c| d < c) => {
            let d = d + slash;
            (
                image[..d].to_string(),
                String::new(),
                image[d + 1..].to_string(),
            )
        }
        (Some(c), Some(d)) => {
            let (c, d) = (c + slash, d + slash);
            (
                image[..c].to_string(),
                image[c + 1..d].to_string(),
                image[d + 1..].to_string(),
            )
        }
        (Some(c), None) => {
            let c = c + slash;
            (
                image[..c].to_string(),
                image[c + 1..].to_string(),
                String::new(),
            )
        }
        (None, Some(_)) => (image.to_string(), String::new(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_split_and_update() {
        assert_eq!(split_image("nginx"), ("nginx".into(), "".into(), "".into()));
        assert_eq!(
            split_image("nginx:1.2"),
            ("nginx".into(), "1.2".into(), "".into())
        );
        assert_eq!(
            split_image("reg:5000/app:v1@sha256:abc"),
            ("reg:5000/app".into(), "v1".into(), "sha256:abc".into())
        );
        assert_eq!(
            split_image("app@sha256:abc"),
            ("app".into(), "".into(), "sha256:abc".into())
        );
        let img = Image {
            name: "nginx".into(),
            new_name: "my/nginx".into(),
            digest: "sha256:1".into(),
            ..Default::default()
        };
        assert_eq!(new_image("nginx:1.2", &img), "my/nginx@sha256:1");
        let tag = Image {
            new_tag: "2".into(),
            ..Default::default()
        };
        assert_eq!(new_image("a:1@sha256:x", &tag), "a:2");
    }
}
