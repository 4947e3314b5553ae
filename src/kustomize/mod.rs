//! `kustomize build`, natively: kustomization loading with the load
//! restrictor, resources and nested kustomizations, the builtin transformers
//! in kustomize's order with its field specs, name-reference fix-up and
//! kustomize's output order. Output is byte-identical to kustomize v5.7.1.
//!
//! It never shells out to kustomize and never reads the network.

mod crds;
mod error;
mod fieldspec;
mod generator;
mod helm_inflation;
mod history;
mod image_name;
mod jsonpatch;
mod model;
mod nameref;
mod openapi;
mod order;
mod origin;
mod patch;
mod pattern;
mod plugin;
mod provenance;
mod replacement;
mod resource;
mod selector;
mod smp;
mod sources;
mod target;
mod transform;
mod vars;

use std::path::{Path, PathBuf};

pub use error::Error;
pub use helm_inflation::Settings as HelmSettings;
pub use history::FieldStep;
pub(crate) use history::{item_segment, scalars};
pub(crate) use model::{Kustomization, FILE_NAMES};
pub(crate) use provenance::{version_text, VersionFormat};
pub(crate) use resource::{Gvk, ObjectId, Resource};
pub(crate) use sources::{ReadHook, Sources};

use crate::yaml::Node;

/// `--reorder`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reorder {
    /// kustomize's legacy kind order (the default).
    #[default]
    Legacy,
    /// Input order.
    None,
}

/// `--load-restrictor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadRestrictor {
    /// Files must be in or below their kustomization's directory.
    #[default]
    RootOnly,
    /// Anything goes.
    None,
}

/// Build options (the flags of `kustomize build`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Output order.
    pub reorder: Reorder,
    /// File access restriction.
    pub load_restrictor: LoadRestrictor,
    /// Add `app.kubernetes.io/managed-by: kustomize-v5.7.1` to every resource.
    pub managed_by_label: bool,
    /// `helmCharts` inflation (`--enable-helm` and its companion flags).
    pub helm: HelmSettings,
    /// Files already read in this run, shared by its builds (each build
    /// reads on its own when `None`).
    pub(crate) sources: Option<std::sync::Arc<Sources>>,
    /// Trace where each value comes from: every node read from a resource
    /// file, a patch or an `images:` entry keeps its file and span through
    /// the build ([`Build::provenance`]). Costs a walk per file read; off
    /// for renders.
    pub provenance: bool,
}

/// The result of a build.
#[derive(Debug)]
pub struct Build {
    /// The resources, in output order, each printed alone as kustomize
    /// prints it.
    pub objects: Vec<crate::k8s::Object>,
    /// Warnings: deprecated fields (kustomize prints `# Warning: ` and the
    /// message on stderr), then those of inflated charts.
    pub warnings: Vec<crate::warning::Warning>,
    /// Every file the build read.
    pub files_read: Vec<PathBuf>,
    /// With [`Options::provenance`]: the texts the objects' nodes were
    /// read from, by the [`crate::yaml::SourceId`] in each node's position.
    pub(crate) provenance: Option<crate::yaml::source_map::SourceMap>,
    /// With [`Options::provenance`]: each object's id before the build
    /// renamed it (namePrefix, nameSuffix, namespace), in `objects` order.
    pub original_ids: Vec<ObjectId>,
    /// With [`Options::provenance`]: each object's fields (paths in the
    /// diff's syntax) with the steps that set them, oldest first, in
    /// `objects` order.
    pub fields: Vec<std::collections::BTreeMap<String, Vec<FieldStep>>>,
}

/// The version string kustomize stamps into `managed-by` labels.
pub(crate) const KUSTOMIZE_VERSION: &str = "v5.7.1";

/// Builds the kustomization in `dir`.
pub fn build(dir: &Path, opts: &Options) -> Result<Build, Error> {
    build_warned(dir, opts).map_err(|f| f.error)
}

/// A failed build, with the warnings met before it failed.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Why the build failed.
    pub error: Error,
    /// Deprecations and chart warnings collected before the error:
    /// kustomize prints each as it meets it, so they precede its error.
    pub warnings: Vec<crate::warning::Warning>,
}

/// Builds like [`build`]; a failure keeps the warnings collected so far.
pub(crate) fn build_warned(dir: &Path, opts: &Options) -> Result<Build, Failure> {
    let mut acc = target::Accumulator::new(opts);
    build_in(&mut acc, dir, opts).map_err(|error| Failure {
        error,
        warnings: std::mem::take(&mut acc.warnings),
    })
}

fn build_in(acc: &mut target::Accumulator, dir: &Path, opts: &Options) -> Result<Build, Error> {
    let (mut top, k) = acc.target(dir)?;
    let meta = |m: &str| k.build_metadata.iter().any(|x| x == m);
    let mut resources = std::mem::take(&mut top.resources);
    let mut observe = |rs: &mut Vec<Resource>, by: &'static str| {
        if let Some(h) = &mut acc.history {
            let step = history::StepInfo {
                by,
                kfile: &k.path,
                line: 0,
            };
            h.observe(rs, step);
        }
    };
    // makeCustomizedResMap: hash suffixes once, at the top, before name references.
    generator::add_hashes(&mut resources);
    observe(&mut resources, "generator hash suffix");
    nameref::fix(&mut resources, &top.config().name_reference, &k.path)?;
    observe(&mut resources, "NameReferenceTransformer");
    // ResolveVars, once name references are fixed.
    vars::resolve(&top.vars, &top.config().var_reference, &mut resources)
        .map_err(|e| Error::invalid(&k.path, e))?;
    observe(&mut resources, "vars");
    // IgnoreLocal: local-config resources are dropped from the output.
    resources.retain(|r| {
        r.node
            .get_path(&[
                "metadata",
                "annotations",
                "config.kubernetes.io/local-config",
            ])
            .and_then(Node::as_str)
            .is_none_or(|v| v == "false")
    });
    if opts.managed_by_label || meta("managedByLabel") {
        for r in &mut resources {
            if let Some(labels) = r
                .node
                .map_entry("metadata")
                .and_then(|m| m.map_entry("labels"))
            {
                labels.set(
                    "app.kubernetes.io/managed-by",
                    Node::string(format!("kustomize-{KUSTOMIZE_VERSION}")),
                );
            }
        }
    }
    // applySortOrder: the kustomization's sortOptions win over --reorder.
    match &k.sort_options {
        Some(s) => match (s.order.as_str(), &s.legacy) {
            ("legacy", Some((first, last))) => order::legacy_with(&mut resources, first, last),
            ("legacy", None) => order::legacy(&mut resources),
            ("fifo", None) => {}
            ("fifo", Some(_)) => {
                return Err(Error::invalid(
                    &k.path,
                    "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
                ))
            }
            _ => {
                return Err(Error::invalid(
                    &k.path,
                    "the field 'sortOptions.order' must be one of [fifo, legacy]",
                ))
            }
        },
        None if opts.reorder == Reorder::Legacy => order::legacy(&mut resources),
        None => {}
    }
    for r in &mut resources {
        normalize_annotations(&mut r.node);
        let mut extra = Vec::new();
        if let Some(o) = r.origin.as_ref().filter(|_| meta("originAnnotations")) {
            extra.push((origin::ANNOTATION, o.to_yaml()));
        }
        if !r.transformations.is_empty() && meta("transformerAnnotations") {
            extra.push((
                origin::TRANSFORMATIONS,
                origin::list_yaml(&r.transformations),
            ));
        }
        for (key, value) in extra {
            if let Some(a) = r
                .node
                .map_entry("metadata")
                .and_then(|m| m.map_entry("annotations"))
            {
                a.set(key, Node::string(value));
            }
        }
    }
    observe(&mut resources, "kustomize build");
    let original_ids = match acc.trace.is_some() {
        true => resources.iter().map(Resource::org_id).collect(),
        false => Vec::new(),
    };
    let fields = match &acc.history {
        Some(h) => resources.iter().map(|r| h.of(r)).collect(),
        None => Vec::new(),
    };
    let objects = resources
        .into_iter()
        .map(|r| {
            let printed = crate::yaml::to_string(&r.node)
                .map_err(|e| Error::invalid(&k.path, e.to_string()))?;
            Ok(crate::k8s::Object::new(
                std::sync::Arc::new(r.node),
                printed,
                None,
            ))
        })
        .collect::<Result<_, Error>>()?;
    Ok(Build {
        objects,
        warnings: std::mem::take(&mut acc.warnings),
        files_read: std::mem::take(&mut acc.files_read),
        provenance: acc.trace.take(),
        original_ids,
        fields,
    })
}

/// kustomize ends every build with RemoveBuildAnnotations and
/// RemoveOriginAnnotations/RemoveTransformerAnnotations, which rewrite the
/// annotations through `SetAnnotations`: origin-tracking keys go, every value
/// comes out as a string holding the scalar's text (`port: 8080` prints as
/// `port: "8080"`), and an empty annotations map is removed.
fn normalize_annotations(node: &mut Node) {
    let Some(meta) = node.get_mut("metadata") else {
        return;
    };
    let mut keep = Vec::new();
    if let Some(entries) = meta.get("annotations").and_then(Node::as_map) {
        for (k, v) in entries {
            let key = k.key_text().unwrap_or_default();
            if key == "config.kubernetes.io/origin"
                || key == "alpha.config.kubernetes.io/transformations"
            {
                continue;
            }
            let text = v.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
            keep.push((Node::string(key), Node::string(text)));
        }
    }
    if keep.is_empty() {
        meta.remove("annotations");
    } else {
        meta.set("annotations", Node::new(crate::yaml::Value::Map(keep)));
    }
}

impl Build {
    /// The output of `kustomize build`: documents joined by `---`.
    pub fn to_yaml(&self) -> String {
        let docs: Vec<&str> = self.objects.iter().map(|o| o.printed.as_str()).collect();
        docs.join("---\n")
    }

    /// What `kustomize build -o DIR` writes (its `writeIndividualFiles`):
    /// one file per resource named `<group>_<version>_<kind>_<name>.yaml`
    /// in lower case (blank parts left out), prefixed with `<namespace>_`
    /// when the namespaced resources span more than one namespace (an
    /// unset namespace counts as `default`). Namespaced files come first,
    /// then cluster-scoped ones; a later file of the same name wins, as
    /// kustomize overwrites it.
    pub fn individual_files(&self) -> Vec<(String, &str)> {
        let file_name = |o: &crate::k8s::Object| {
            let g = &o.id.gvk;
            let parts: Vec<&str> = [g.group.as_str(), &g.version, &g.kind]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect();
            format!("{}_{}.yaml", parts.join("_"), o.id.name).to_lowercase()
        };
        let namespace = |o: &crate::k8s::Object| match o.id.namespace.as_str() {
            "" => "default".to_string(),
            ns => ns.to_string(),
        };
        let (cluster, namespaced): (Vec<_>, Vec<_>) = self
            .objects
            .iter()
            .partition(|o| o.id.gvk.is_cluster_scoped());
        let namespaces: std::collections::BTreeSet<String> =
            namespaced.iter().map(|o| namespace(o)).collect();
        let mut out = Vec::new();
        for o in namespaced {
            let name = match namespaces.len() > 1 {
                true => format!("{}_{}", namespace(o).to_lowercase(), file_name(o)),
                false => file_name(o),
            };
            out.push((name, o.printed.as_str()));
        }
        out.extend(
            cluster
                .into_iter()
                .map(|o| (file_name(o), o.printed.as_str())),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` ConfigMaps and one Deployment per 100 that refers to them,
    /// through namePrefix, namespace, commonLabels and a targeted patch
    /// (benches/large_kustomization.sh, smaller).
    fn large(dir: &Path, n: usize) {
        let mut cms = String::new();
        for i in 0..n {
            let tier = if i % 10 == 0 { "hot" } else { "cold" };
            cms += &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  labels:\n    tier: {tier}\ndata:\n  k: v{i}\n---\n");
        }
        let mut deps = String::new();
        for j in 0..n / 100 {
            deps += &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{j}\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        envFrom:\n");
            for i in j * 100..(j + 1) * 100 {
                deps += &format!("        - configMapRef:\n            name: cm-{i}\n");
            }
            deps += "---\n";
        }
        std::fs::write(dir.join("cms.yaml"), cms).unwrap();
        std::fs::write(dir.join("deps.yaml"), deps).unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            "namePrefix: big-\nnamespace: large\ncommonLabels:\n  team: t\nresources:\n- cms.yaml\n- deps.yaml\npatches:\n- target:\n    kind: ConfigMap\n    labelSelector: tier=hot\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value: {cache: \"true\"}\n",
        )
        .unwrap();
    }

    /// Where the traced value at `path` of object `i` was written: the
    /// file name and line.
    fn written_at(b: &Build, i: usize, path: &[&str]) -> (String, u32) {
        let mut n: &Node = &b.objects[i].node;
        for p in path {
            n = match p.parse::<usize>() {
                Ok(k) => &n.as_seq().unwrap()[k],
                Err(_) => n.get(p).unwrap_or_else(|| panic!("no {p}")),
            };
        }
        let map = b.provenance.as_ref().unwrap();
        let at = map
            .locate(&n.pos)
            .unwrap_or_else(|| panic!("{path:?} not traced"));
        let file = at
            .text
            .file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        (file, at.line)
    }

    #[test]
    fn a_traced_build_says_which_file_and_line_set_each_image() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base");
        let env = dir.path().join("env");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::create_dir_all(&env).unwrap();
        let deploy = |name: &str| {
            format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: {name}:1.0\n")
        };
        let all: Vec<String> = ["smp", "json", "inline", "images", "repl", "kept"]
            .iter()
            .map(|n| deploy(n))
            .collect();
        std::fs::write(base.join("d.yaml"), all.join("---\n")).unwrap();
        std::fs::write(base.join("kustomization.yaml"), "resources:\n- d.yaml\n").unwrap();
        std::fs::write(
            env.join("version.yml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: smp\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: smp:2.0\n",
        )
        .unwrap();
        std::fs::write(
            env.join("json.yaml"),
            "- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: json:2.0\n",
        )
        .unwrap();
        std::fs::write(
            env.join("cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: versions\ndata:\n  repl: repl:2.0\n",
        )
        .unwrap();
        std::fs::write(
            env.join("kustomization.yaml"),
            "resources:\n- ../base\n- cm.yaml\nimages:\n- name: images\n  newTag: \"2.0\"\npatches:\n- path: version.yml\n- path: json.yaml\n  target: {kind: Deployment, name: json}\n- target: {kind: Deployment, name: inline}\n  patch: |-\n    - op: replace\n      path: /spec/template/spec/containers/0/image\n      value: inline:2.0\nreplacements:\n- source: {kind: ConfigMap, name: versions, fieldPath: data.repl}\n  targets:\n  - select: {kind: Deployment, name: repl}\n    fieldPaths: [spec.template.spec.containers.0.image]\n",
        )
        .unwrap();
        let opts = Options {
            provenance: true,
            ..Default::default()
        };
        let b = build(&env, &opts).unwrap_or_else(|e| panic!("{e}"));
        let image = ["spec", "template", "spec", "containers", "0", "image"];
        let at = |name: &str| {
            let i = b.objects.iter().position(|o| o.id.name == name).unwrap();
            written_at(&b, i, &image)
        };
        assert_eq!(at("smp"), ("version.yml".into(), 10));
        assert_eq!(at("json"), ("json.yaml".into(), 3));
        assert_eq!(at("inline"), ("kustomization.yaml".into(), 15));
        assert_eq!(at("images"), ("kustomization.yaml".into(), 5));
        assert_eq!(at("repl"), ("cm.yaml".into(), 6));
        assert_eq!(at("kept"), ("d.yaml".into(), 65));
        // Untraced, the same build prints the same bytes.
        let plain = build(&env, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain.to_yaml(), b.to_yaml());
        assert!(plain.provenance.is_none());
    }

    fn large_build(n: usize) -> Build {
        let dir = tempfile::tempdir().unwrap();
        large(dir.path(), n);
        build(dir.path(), &Options::default()).unwrap()
    }

    #[test]
    fn a_large_kustomization_builds_with_every_reference_fixed() {
        let b = large_build(2000);
        assert_eq!(b.objects.len(), 2020);
        let out = b.to_yaml();
        assert_eq!(out.matches("name: big-cm-").count(), 4000);
        assert_eq!(out.matches("cache: \"true\"").count(), 200);
        assert!(!out.contains("name: cm-"));
    }
}
