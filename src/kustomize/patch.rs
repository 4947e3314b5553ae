//! The patch transformers: `patchesStrategicMerge`
//! (PatchStrategicMergeTransformer), `patches` (PatchTransformer: strategic
//! merge or JSON 6902, told apart as kustomize does) and `patchesJson6902`
//! (PatchJson6902Transformer). Patches are loaded when the kustomization is
//! configured and applied in kustomize's transformer order.

use std::path::{Path, PathBuf};

use super::jsonpatch::{self, Op};
use super::model::{Kustomization, Patch, Selector};
use super::resource::{read_file, read_file_traced, ObjectId, Resource};
use super::selector::Compiled;
use super::{smp, Error};
use crate::k8s::Catalog;
use crate::yaml::source_map::{SourceMap, SourceText};
use crate::yaml::{Node, Value};

/// What a `patches` entry holds.
enum Body {
    /// Strategic merge patches (one document each).
    Smp(Vec<Node>),
    /// JSON 6902 operations.
    Json(Vec<Op>),
}

/// A configured `patches` entry.
struct Plugin {
    body: Body,
    target: Option<Selector>,
    allow_name_change: bool,
    allow_kind_change: bool,
    source: String,
}

/// A configured `patchesJson6902` entry.
struct JsonPlugin {
    ops: Vec<Op>,
    target: Selector,
}

/// Every patch of one kustomization, loaded.
pub struct Patches {
    path: PathBuf,
    strategic_merge: Vec<Node>,
    patches: Vec<Plugin>,
    json6902: Vec<JsonPlugin>,
}

/// Called after each transformer instance with its kind (for
/// `buildMetadata: [transformerAnnotations]`).
pub type After<'a> = dyn FnMut(&mut Vec<Resource>, &'static str) + 'a;

/// Reads a file named in the kustomization (through the load restrictor).
pub type Reader<'a> = dyn FnMut(&str) -> Result<(PathBuf, String), Error> + 'a;

impl Patches {
    /// Loads the patches of `k`; `read` loads files relative to it.
    /// With `trace`, every patch node is stamped with where it is written.
    pub fn load(
        k: &Kustomization,
        read: &mut Reader,
        trace: Option<&mut SourceMap>,
    ) -> Result<Patches, Error> {
        Patches::from_parts(
            &k.path,
            &k.patches_strategic_merge,
            &k.patches,
            &k.patches_json6902,
            read,
            trace,
        )
    }

    /// Loads patches given as the entries of `patchesStrategicMerge`,
    /// `patches` and `patchesJson6902` of the file at `kpath` (a
    /// kustomization or a patch transformer's config).
    pub fn from_parts(
        kpath: &Path,
        smp: &[String],
        patch_entries: &[Patch],
        json_entries: &[Patch],
        read: &mut Reader,
        mut trace: Option<&mut SourceMap>,
    ) -> Result<Patches, Error> {
        let invalid = |m: String| Error::invalid(kpath, m);
        let mut strategic_merge = Vec::new();
        for entry in smp {
            // loadFromPaths: the entry is inline YAML if it parses as resources.
            match read_file(kpath, entry) {
                // Traced, an inline entry is a string of the kustomization
                // (its line is not kept: the list holds bare strings).
                Ok(nodes) => match trace.as_deref_mut() {
                    Some(map) => strategic_merge.extend(read_file_traced(
                        kpath,
                        entry,
                        Some((map, Some(0))),
                    )?),
                    None => strategic_merge.extend(nodes),
                },
                Err(_) => {
                    let (file, text) = read(entry)?;
                    let t = trace.as_deref_mut().map(|m| (m, None));
                    strategic_merge.extend(read_file_traced(&file, &text, t)?);
                }
            }
        }
        if !smp.is_empty() && strategic_merge.is_empty() {
            return Err(invalid(format!("patch appears to be empty; files={smp:?}")));
        }
        let mut patches = Vec::new();
        for p in patch_entries {
            patches.push(Plugin::load(kpath, p, read, trace.as_deref_mut())?);
        }
        let mut json6902 = Vec::new();
        for p in json_entries {
            let target = p.target.clone().unwrap_or_default();
            if target.name.is_empty() {
                return Err(invalid("must specify the target name".into()));
            }
            let (text, at) = match (p.path.is_empty(), p.patch.is_empty()) {
                (true, true) => return Err(invalid("empty file path and empty jsonOp".into())),
                (false, false) => {
                    return Err(invalid(
                        "must specify a file path or jsonOp, not both".into(),
                    ))
                }
                (false, true) => {
                    let (file, text) = read(&p.path)?;
                    (text, SourceText::file(&file, 0, 0))
                }
                (true, false) => (p.patch.clone(), SourceText::embedded(kpath, p.patch_line)),
            };
            let mut ops =
                jsonpatch::decode(&text).map_err(|e| invalid(format!("decoding {text}: {e}")))?;
            if let Some(map) = trace.as_deref_mut() {
                jsonpatch::stamp(&mut ops, map.add(at));
            }
            if ops.is_empty() {
                return Err(invalid(format!(
                    "patch appears to be empty; file={}, JsonOp={text}",
                    p.path
                )));
            }
            json6902.push(JsonPlugin { ops, target });
        }
        Ok(Patches {
            path: kpath.to_path_buf(),
            strategic_merge,
            patches,
            json6902,
        })
    }

    /// PatchStrategicMergeTransformer.
    pub fn apply_strategic_merge(
        &self,
        cat: &Catalog,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        for patch in &self.strategic_merge {
            let i = self.unique_target(resources, patch)?;
            apply_selected(cat, resources, &[i], patch, false, false)
                .map_err(|e| Error::invalid(&self.path, e))?;
        }
        Ok(())
    }

    /// PatchTransformer, every `patches` entry in order.
    pub fn apply_patches(
        &self,
        cat: &Catalog,
        resources: &mut Vec<Resource>,
        after: &mut After,
    ) -> Result<(), Error> {
        for p in &self.patches {
            self.apply_patch(cat, p, resources)?;
            after(resources, "PatchTransformer");
        }
        Ok(())
    }

    fn apply_patch(
        &self,
        cat: &Catalog,
        p: &Plugin,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        let fail = |e: String| Error::invalid(&self.path, e);
        {
            match (&p.body, &p.target) {
                (Body::Smp(list), Some(target)) if !list.is_empty() => {
                    if list.len() > 1 {
                        return Err(fail(format!("Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}", p.source)));
                    }
                    let chosen = select(resources, target).map_err(|e| {
                        fail(format!(
                            "unable to find patch target {target:?} in `resources`: {e}"
                        ))
                    })?;
                    apply_selected(
                        cat,
                        resources,
                        &chosen,
                        &list[0],
                        p.allow_name_change,
                        p.allow_kind_change,
                    )
                    .map_err(fail)?;
                }
                (Body::Smp(list), None) if !list.is_empty() => {
                    for patch in list {
                        let i = self.unique_target(resources, patch)?;
                        let keep = apply_one(
                            cat,
                            &mut resources[i],
                            patch,
                            p.allow_name_change,
                            p.allow_kind_change,
                        )
                        .map_err(fail)?;
                        if !keep {
                            resources.remove(i);
                        }
                    }
                }
                (body, target) => {
                    let Some(target) = target else {
                        return Err(fail(format!(
                            "must specify a target for JSON patch {}",
                            p.source
                        )));
                    };
                    let ops: &[Op] = match body {
                        Body::Json(ops) => ops,
                        Body::Smp(_) => &[],
                    };
                    for i in select(resources, target).map_err(fail)? {
                        resources[i].store_previous_id();
                        jsonpatch::apply(&mut resources[i].node, ops).map_err(fail)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// PatchJson6902Transformer.
    pub fn apply_json6902(
        &self,
        resources: &mut Vec<Resource>,
        after: &mut After,
    ) -> Result<(), Error> {
        let fail = |e: String| Error::invalid(&self.path, e);
        for p in &self.json6902 {
            let chosen = select(resources, &p.target).map_err(fail)?;
            for i in chosen {
                jsonpatch::apply(&mut resources[i].node, &p.ops).map_err(fail)?;
            }
            after(resources, "PatchJson6902Transformer");
        }
        Ok(())
    }

    /// Whether there are `patchesStrategicMerge` patches (one transformer).
    pub fn has_strategic_merge(&self) -> bool {
        !self.strategic_merge.is_empty()
    }

    /// GetById(patch.OrgId()): exactly one resource that has (or had) the patch's id.
    fn unique_target(&self, resources: &[Resource], patch: &Node) -> Result<usize, Error> {
        let p = Resource::new(patch.clone());
        let id = p.cur_id();
        let hits: Vec<usize> = resources
            .iter()
            .enumerate()
            .filter(|(_, r)| r.had_id(|x| ids_equal(x, &id)))
            .map(|(i, _)| i)
            .collect();
        match hits[..] {
            [i] => Ok(i),
            _ => Err(Error::invalid(
                &self.path,
                format!(
                    "{} for Id {}; failed to find unique target for patch {}",
                    if hits.is_empty() {
                        "no matches"
                    } else {
                        "multiple matches"
                    },
                    id.id_string(),
                    id.id_string()
                ),
            )),
        }
    }
}

impl Plugin {
    fn load(
        kpath: &Path,
        p: &Patch,
        read: &mut Reader,
        mut trace: Option<&mut SourceMap>,
    ) -> Result<Plugin, Error> {
        let at = |m: String| Error::Invalid {
            path: kpath.to_path_buf(),
            line: p.line,
            message: m,
        };
        let patch = p.patch.trim();
        let (file, text, source) = match (patch.is_empty(), p.path.is_empty()) {
            (true, true) => return Err(at("must specify one of patch and path".into())),
            (false, false) => {
                return Err(at("patch and path can't be set at the same time".into()))
            }
            (false, true) => (
                kpath.to_path_buf(),
                patch.to_string(),
                format!("[patch: {patch:?}]"),
            ),
            (true, false) => {
                let (file, text) = read(&p.path).map_err(|e| {
                    at(format!(
                        "failed to get the patch file from path({}): {e}",
                        p.path
                    ))
                })?;
                (file, text, format!("[path: {:?}]", p.path))
            }
        };
        // Traced, an inline patch is a string of the kustomization at the
        // `patch:` line; a patch file is its own text.
        let embedded_at = (file == kpath).then_some(p.patch_line);
        let sm = read_file_traced(&file, &text, trace.as_deref_mut().map(|m| (m, embedded_at)));
        let json = if text.is_empty() {
            Err("empty json patch operations".to_string())
        } else {
            jsonpatch::decode(&text).map(|mut ops| {
                if let Some(map) = trace {
                    let at = match embedded_at {
                        Some(line) => SourceText::embedded(&file, line),
                        None => SourceText::file(&file, 0, 0),
                    };
                    jsonpatch::stamp(&mut ops, map.add(at));
                }
                ops
            })
        };
        let body = match (sm, json) {
            (Ok(s), Ok(j)) if !s.is_empty() && !j.is_empty() => {
                return Err(at(format!(
                    "illegally qualifies as both an SM and JSON patch: {source}"
                )))
            }
            (Err(_), Err(_)) => {
                return Err(at(format!(
                    "unable to parse SM or JSON patch from {source}"
                )))
            }
            (Ok(s), _) => Body::Smp(s),
            (Err(_), Ok(j)) => Body::Json(j),
        };
        Ok(Plugin {
            body,
            target: p.target.clone(),
            allow_name_change: p.allow_name_change,
            allow_kind_change: p.allow_kind_change,
            source,
        })
    }
}

/// resid's Equals: same effective namespace, name and exact GVK.
fn ids_equal(a: &ObjectId, b: &ObjectId) -> bool {
    a.name == b.name && a.gvk == b.gvk && a.same_namespace(b)
}

/// resWrangler.Select: the indices of the resources `target` picks.
pub fn select(resources: &[Resource], target: &Selector) -> Result<Vec<usize>, String> {
    let sel = Compiled::new(target)?;
    Ok(resources
        .iter()
        .enumerate()
        .filter(|(_, r)| sel.selects(r))
        .map(|(i, _)| i)
        .collect())
}

/// resWrangler.ApplySmPatch: a copy of the patch, given each target's
/// apiVersion, merged into each; resources the patch empties are dropped.
fn apply_selected(
    cat: &Catalog,
    resources: &mut Vec<Resource>,
    chosen: &[usize],
    patch: &Node,
    name_change: bool,
    kind_change: bool,
) -> Result<(), String> {
    let mut drop = Vec::new();
    for &i in chosen {
        let mut copy = patch.clone();
        let api = resources[i].node.get("apiVersion").cloned();
        let kind = patch.get_str("kind").unwrap_or_default().to_string();
        // SetGvk(res.GetGvk()) then SetKind(patch.GetKind()).
        copy.set("apiVersion", api.unwrap_or_else(|| Node::string("")));
        copy.set("kind", Node::string(kind));
        if !apply_one(cat, &mut resources[i], &copy, name_change, kind_change)? {
            drop.push(i);
        }
    }
    // One pass, not a remove per dropped resource.
    if !drop.is_empty() {
        let drop: std::collections::HashSet<usize> = drop.into_iter().collect();
        let mut i = 0;
        resources.retain(|_| {
            i += 1;
            !drop.contains(&(i - 1))
        });
    }
    Ok(())
}

/// Resource.ApplySmPatch. Returns false when the patch deleted the resource.
fn apply_one(
    cat: &Catalog,
    r: &mut Resource,
    patch: &Node,
    name_change: bool,
    kind_change: bool,
) -> Result<bool, String> {
    let (name, ns, kind) = (
        r.name().to_string(),
        r.namespace().to_string(),
        r.gvk().kind,
    );
    if name_change || kind_change {
        r.store_previous_id();
    }
    // The resource is merged in place of itself: taken, not cloned (an
    // error ends the build, so nothing sees it half-merged).
    let Some(node) = smp::merge(cat, std::mem::replace(&mut r.node, Node::null()), patch)? else {
        return Ok(false);
    };
    if node.is_null() || matches!(&node.value, Value::Map(m) if m.is_empty()) {
        return Ok(false);
    }
    r.node = node;
    if !kind_change {
        r.node.set("kind", Node::string(kind));
    }
    if !name_change {
        if let Some(meta) = r.node.map_entry("metadata") {
            meta.set("name", Node::string(name));
        }
    }
    if ns.is_empty() {
        if let Some(meta) = r.node.get_mut("metadata") {
            meta.remove("namespace");
        }
    } else if let Some(meta) = r.node.map_entry("metadata") {
        meta.set("namespace", Node::string(ns));
    }
    Ok(true)
}

/// A reader over a fixed set of files, for tests.
#[cfg(test)]
fn fixed<'a>(
    files: &'a [(&'a str, &'a str)],
) -> impl FnMut(&str) -> Result<(PathBuf, String), Error> + 'a {
    move |name: &str| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, t)| (PathBuf::from(n), t.to_string()))
            .ok_or_else(|| Error::invalid(name, "no such file"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, to_string, Resolver};

    fn resources() -> Vec<Resource> {
        ["apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  replicas: 1\n",
         "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"]
            .iter()
            .map(|s| Resource::new(parse_one(s, Resolver::V3).unwrap()))
            .collect()
    }

    fn build(k: &str, files: &[(&str, &str)]) -> Result<Vec<Resource>, Error> {
        let k = Kustomization::parse(Path::new("kustomization.yaml"), k)?;
        let mut read = fixed(files);
        let p = Patches::load(&k, &mut read, None)?;
        let mut rs = resources();
        p.apply_strategic_merge(Catalog::builtin(), &mut rs)?;
        p.apply_patches(Catalog::builtin(), &mut rs, &mut |_, _| {})?;
        p.apply_json6902(&mut rs, &mut |_, _| {})?;
        Ok(rs)
    }

    #[test]
    fn strategic_merge_inline_and_file() {
        let rs = build(
            "patchesStrategicMerge:\n- |-\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n  spec:\n    replicas: 3\n- svc.yaml\n",
            &[("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n$patch: delete\n")],
        )
        .unwrap();
        assert_eq!(rs.len(), 1);
        assert!(to_string(&rs[0].node).unwrap().contains("replicas: 3"));
    }

    #[test]
    fn patches_detect_json_and_use_targets() {
        let rs = build(
            "patches:\n- target: {kind: Deploy.*, labelSelector: app=web}\n  patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 5\n- patch: |-\n    kind: Service\n    metadata:\n      name: any\n    spec:\n      type: NodePort\n  target: {kind: Service}\n",
            &[],
        )
        .unwrap();
        assert!(to_string(&rs[0].node).unwrap().contains("replicas: 5"));
        let svc = to_string(&rs[1].node).unwrap();
        assert!(
            svc.contains("type: NodePort") && svc.contains("name: web"),
            "{svc}"
        );
        let e = build(
            "patches:\n- patch: '[{\"op\": \"remove\", \"path\": \"/spec\"}]'\n",
            &[],
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("must specify a target for JSON patch"),
            "{e}"
        );
        let e = build("patches:\n- patch: 'foo: ['\n", &[]).unwrap_err();
        assert!(
            e.to_string().contains("unable to parse SM or JSON patch"),
            "{e}"
        );
    }

    #[test]
    fn json6902_needs_a_target_name() {
        let rs = build(
            "patchesJson6902:\n- target: {kind: Deployment, name: web}\n  path: p.yaml\n",
            &[("p.yaml", "- op: add\n  path: /spec/paused\n  value: true\n")],
        )
        .unwrap();
        assert!(to_string(&rs[0].node).unwrap().contains("paused: true"));
        assert!(build(
            "patchesJson6902:\n- target: {kind: Deployment}\n  path: p.yaml\n",
            &[]
        )
        .is_err());
    }
}
