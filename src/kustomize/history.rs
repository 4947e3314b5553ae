//! Field histories of a traced build (`Options::provenance`): for every
//! scalar of every resource, the steps that set it, oldest first — the
//! resource file it was read from, then each transformer that changed it
//! (a patch, `images:`, `replicas:`, a prefix, the namespace, labels, a
//! replacement, a name reference). `hydrate explain` prints these chains;
//! promotion and diff read them to point at source lines.
//!
//! It watches: after each transformer the build calls [`History::observe`],
//! which compares every scalar with what it saw last and records a step
//! where the text or the written place changed. Transformers stay
//! unaware of it, and a build that does not trace never walks its
//! resources again. It does not decide what a step means to a user.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::resource::Resource;
use crate::yaml::{Node, Pos, Value};

/// One step of a field's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldStep {
    /// What set the value: `resource` (read from a file), `generator` (made
    /// by a generator or a chart with no line of its own), or the
    /// transformer's kustomize name (`PatchTransformer`,
    /// `ImageTagTransformer`, `PrefixTransformer`, …).
    pub by: &'static str,
    /// The value after the step.
    pub value: String,
    /// Where the value was written, when it was read from a file (a
    /// resource, a patch, an `images:` or `replicas:` entry, a
    /// replacement's source): [`crate::yaml::SourceId::NONE`] when the
    /// step made it up (a prefix added, a namespace set).
    pub at: Pos,
    /// The kustomization file and line that configured the step (its
    /// `namePrefix:`, `namespace:`, `labels:` … field), when the step is a
    /// transformer of a kustomization.
    pub config: Option<(PathBuf, u32)>,
}

/// What ran: the transformer and the kustomization that configured it.
#[derive(Clone, Copy, Debug)]
pub struct StepInfo<'a> {
    /// The transformer's kustomize name.
    pub by: &'static str,
    /// The kustomization file.
    pub kfile: &'a std::path::Path,
    /// The line of the kustomization's field for it (0: unknown).
    pub line: u32,
}

#[derive(Debug, Default)]
struct Seen {
    text: String,
    pos: Pos,
    steps: Vec<FieldStep>,
}

/// The histories of one build's fields.
#[derive(Debug, Default)]
pub struct History {
    /// Per resource (by [`Resource::trace_id`] - 1), per field path.
    fields: Vec<BTreeMap<String, Seen>>,
}

impl History {
    /// Starts the history of each resource of `resources` not seen yet:
    /// each field's first step is the place it was read from, or, for a
    /// field with none (a generated ConfigMap's data, a chart's output),
    /// `made_by(resource)`: the generator and its kustomization field.
    pub fn read<'k>(
        &mut self,
        resources: &mut [Resource],
        made_by: &dyn Fn(&Resource) -> StepInfo<'k>,
    ) {
        for r in resources.iter_mut().filter(|r| r.trace_id == 0) {
            self.fields.push(BTreeMap::new());
            r.trace_id = self.fields.len() as u32;
            let step = made_by(r);
            let mut now = Vec::new();
            scalars(&r.node, &mut String::new(), &mut now);
            let seen = &mut self.fields[r.trace_id as usize - 1];
            for (path, text, pos) in now {
                let (by, config) = match pos.source.is_some() {
                    true => ("resource", None),
                    false => (step.by, Some((step.kfile.to_path_buf(), step.line))),
                };
                let first = FieldStep {
                    by,
                    value: text.clone(),
                    at: pos,
                    config,
                };
                seen.insert(
                    path,
                    Seen {
                        text,
                        pos,
                        steps: vec![first],
                    },
                );
            }
        }
    }

    /// Records what `step` changed in `resources`: a step for each scalar
    /// whose text or written place is not what it was (a resource the step
    /// made starts its history with it).
    pub fn observe(&mut self, resources: &mut [Resource], step: StepInfo<'_>) {
        self.read(resources, &|_| step);
        for r in resources.iter() {
            let Some(seen) = self.fields.get_mut(r.trace_id as usize - 1) else {
                continue;
            };
            let mut now = Vec::new();
            scalars(&r.node, &mut String::new(), &mut now);
            for (path, text, pos) in now {
                let entry = seen.entry(path).or_default();
                // A node rebuilt with its text unchanged (annotations
                // normalised, a map re-created) loses its place but not its
                // origin: only a new text, or a new written place, is a step.
                let moved = entry.pos != pos && pos.source.is_some();
                if entry.steps.is_empty() || entry.text != text || moved {
                    // A text changed in place (a prefix added, a value
                    // replaced from a field no file wrote) keeps the old
                    // place: the step wrote it from no file.
                    let at = match entry.pos == pos && !entry.steps.is_empty() {
                        true => Pos::default(),
                        false => pos,
                    };
                    entry.steps.push(FieldStep {
                        by: step.by,
                        value: text.clone(),
                        at,
                        config: Some((step.kfile.to_path_buf(), step.line)),
                    });
                    entry.text = text;
                    entry.pos = pos;
                }
            }
        }
    }

    /// The history of each field of `r` still present in its node, oldest
    /// step first.
    pub fn of(&self, r: &Resource) -> BTreeMap<String, Vec<FieldStep>> {
        let mut out = BTreeMap::new();
        let Some(seen) = (r.trace_id as usize)
            .checked_sub(1)
            .and_then(|i| self.fields.get(i))
        else {
            return out;
        };
        let mut now = Vec::new();
        scalars(&r.node, &mut String::new(), &mut now);
        for (path, _, _) in now {
            if let Some(s) = seen.get(&path) {
                out.insert(path, s.steps.clone());
            }
        }
        out
    }
}

/// Every scalar below `n` with its path in the diff's syntax
/// (`spec.template.spec.containers[name=api].image`: a list item that is a
/// mapping with a scalar `name` is named by it, so a patch that inserts an
/// item does not shift the others' histories).
pub fn scalars(n: &Node, path: &mut String, out: &mut Vec<(String, String, Pos)>) {
    match &n.value {
        Value::Scalar(s) => out.push((path.clone(), s.text.clone(), n.pos)),
        Value::Map(entries) => {
            for (k, v) in entries {
                let Some(key) = k.key_text() else { continue };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                scalars(v, path, out);
                path.truncate(len);
            }
        }
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&item_segment(item, i));
                scalars(item, path, out);
                path.truncate(len);
            }
        }
    }
}

/// `[name=x]` for a mapping item with a scalar `name`, else `[i]`.
pub fn item_segment(item: &Node, i: usize) -> String {
    match item.get("name").and_then(Node::as_scalar) {
        Some(s) if matches!(item.value, Value::Map(_)) => format!("[name={}]", s.text),
        _ => format!("[{i}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver, SourceId};

    fn res(src: &str, id: u32) -> Resource {
        let mut n = parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"));
        crate::yaml::source_map::stamp(&mut n, SourceId(id));
        Resource::new(n)
    }

    #[test]
    fn a_changed_field_keeps_its_first_place_and_the_step_that_changed_it() {
        let mut rs = vec![res(
            "metadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n",
            1,
        )];
        let mut h = History::default();
        let kfile = std::path::Path::new("k.yaml");
        h.read(&mut rs, &|_| StepInfo {
            by: "generator",
            kfile,
            line: 0,
        });
        if let Some(m) = rs[0].node.get_mut("metadata") {
            m.set("name", Node::string("p-a"));
        }
        h.observe(
            &mut rs,
            StepInfo {
                by: "PrefixTransformer",
                kfile,
                line: 3,
            },
        );
        let f = h.of(&rs[0]);
        let name = &f["metadata.name"];
        assert_eq!(name.len(), 2);
        assert_eq!(name[0].by, "resource");
        assert_eq!(name[0].at.line, 2);
        assert_eq!(name[1].by, "PrefixTransformer");
        assert_eq!(name[1].value, "p-a");
        assert_eq!(name[1].config, Some((kfile.to_path_buf(), 3)));
        assert_eq!(f["spec.containers[name=c].image"].len(), 1);
    }
}
