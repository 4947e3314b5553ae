//! Name reference fix-up (kustomize's nameReferenceTransformer, run once at
//! the end of a build): fields that name another resource (a ConfigMap in a
//! volume, a ServiceAccount in a pod spec, …) follow that resource's renames.

use std::collections::{HashMap, HashSet};

use super::fieldspec::{apply, Create, FieldSpec, NameBackRef};
use super::resource::{Gvk, ObjectId, Resource};
use super::Error;
use crate::yaml::{Node, Value};

/// What the matching needs to know of each possible referral target: its
/// current id (the node is fixed while candidates are matched) and its
/// history, borrowed from the resource.
struct Candidate<'r> {
    cur: ObjectId,
    /// The original namespace when it differs from where the first previous
    /// id says (`None`: the current one).
    org_namespace: Option<&'r str>,
    prev: &'r [ObjectId],
    prefixes: &'r [String],
    suffixes: &'r [String],
    cluster_scoped: bool,
}

impl Candidate<'_> {
    /// The namespace of the original id (kustomize's OrgId).
    fn org_namespace(&self) -> &str {
        self.org_namespace.unwrap_or(&self.cur.namespace)
    }
}

/// Every candidate, with the indexes that keep the fix-up linear: a
/// reference is looked up by name instead of compared with every resource.
struct Candidates<'r> {
    all: Vec<Candidate<'r>>,
    /// Candidates (ascending, each once) with a previous id of this name.
    by_prev_name: HashMap<&'r str, Vec<usize>>,
    /// Candidates (ascending) whose original namespace is this one.
    by_org_namespace: HashMap<String, Vec<usize>>,
}

impl<'r> Candidates<'r> {
    /// `nodes[i]` is the object of `resources[i]`.
    fn new(resources: &'r [Resource], nodes: &[Node]) -> Candidates<'r> {
        let all: Vec<Candidate<'r>> = resources
            .iter()
            .zip(nodes)
            .map(|(r, node)| {
                let cur = ObjectId::of(node);
                Candidate {
                    cluster_scoped: cur.gvk.is_cluster_scoped(),
                    cur,
                    org_namespace: r.prev_ids.first().map(|id| id.namespace.as_str()),
                    prev: &r.prev_ids,
                    prefixes: &r.prefixes,
                    suffixes: &r.suffixes,
                }
            })
            .collect();
        let mut by_prev_name: HashMap<&'r str, Vec<usize>> = HashMap::with_capacity(all.len());
        let mut by_org_namespace: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (c, r)) in all.iter().zip(resources).enumerate() {
            for id in &r.prev_ids {
                let list = by_prev_name.entry(id.name.as_str()).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
            match by_org_namespace.get_mut(c.org_namespace()) {
                Some(list) => list.push(i),
                None => {
                    by_org_namespace.insert(c.org_namespace().to_string(), vec![i]);
                }
            }
        }
        Candidates {
            all,
            by_prev_name,
            by_org_namespace,
        }
    }

    fn named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Candidate<'r>> + 'a {
        let list = self.by_prev_name.get(name).map_or(&[][..], Vec::as_slice);
        list.iter().map(move |&i| &self.all[i])
    }
}

/// Rewrites name references in every resource. `path` names the
/// kustomization for errors.
pub fn fix(
    resources: &mut [Resource],
    backrefs: &[NameBackRef],
    path: &std::path::Path,
) -> Result<(), Error> {
    // The objects are moved out while they are fixed, so the candidates can
    // borrow each resource's history instead of copying it.
    let mut nodes: Vec<Node> = resources
        .iter_mut()
        .map(|r| std::mem::replace(&mut r.node, Node::seq()))
        .collect();
    let fixed = fix_nodes(resources, &mut nodes, backrefs, path);
    for (r, node) in resources.iter_mut().zip(nodes) {
        r.node = node;
    }
    fixed
}

/// [`fix`] on `nodes`, the objects of `resources`.
fn fix_nodes(
    resources: &[Resource],
    nodes: &mut [Node],
    backrefs: &[NameBackRef],
    path: &std::path::Path,
) -> Result<(), Error> {
    let candidates = Candidates::new(resources, nodes);
    for (i, node) in nodes.iter_mut().enumerate() {
        let referrer = &candidates.all[i];
        // The original id's type (kustomize's OrgId).
        let org_gvk = referrer
            .prev
            .first()
            .map_or(&referrer.cur.gvk, |id| &id.gvk);
        let scope = Scope::of(node, referrer).map_err(|m| Error::invalid(path, m))?;
        for backref in backrefs {
            for spec in &backref.referrers {
                if !org_gvk.is_selected_by(&spec.gvk) {
                    continue;
                }
                let rule = Rule {
                    target: &backref.target,
                    spec,
                    referrer,
                    role_ref: role_ref_gvk(node),
                    candidates: &candidates,
                    scope: &scope,
                };
                // The filter's field spec takes the referrer's own GVK.
                let mut spec = spec.clone();
                spec.gvk = Gvk::default();
                apply(node, &spec, Create::Nothing, &mut |n| rule.set(n)).map_err(|e| {
                    Error::invalid(
                        path,
                        format!(
                            "updating name reference in '{}' field of '{}': {e}",
                            spec.path,
                            referrer.cur.id_string()
                        ),
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// kustomize's SubsetThatCouldBeReferencedByResource, as a test of one
/// candidate: same namespace, cluster-scoped, or the namespace of a
/// ServiceAccount a RoleBinding names.
struct Scope<'a> {
    referrer: &'a Candidate<'a>,
    binding_namespaces: HashSet<String>,
}

impl<'a> Scope<'a> {
    fn of(node: &Node, referrer: &'a Candidate<'a>) -> Result<Scope<'a>, String> {
        let mut binding_namespaces = HashSet::new();
        if !referrer.cluster_scoped && referrer.cur.gvk.kind == "RoleBinding" {
            let subjects = node.get("subjects").and_then(Node::as_seq);
            for s in subjects.into_iter().flatten() {
                let (Some(ns), Some("ServiceAccount")) = (s.get("namespace"), s.get_str("kind"))
                else {
                    continue;
                };
                let Some(ns) = ns.as_str() else {
                    return Err(format!(
                        "Invalid Input: namespace is blank for resource \"{}\"",
                        referrer.cur.id_string()
                    ));
                };
                binding_namespaces.insert(ns.to_string());
            }
        }
        Ok(Scope {
            referrer,
            binding_namespaces,
        })
    }

    fn contains(&self, c: &Candidate) -> bool {
        self.referrer.cluster_scoped
            || c.cluster_scoped
            || c.cur.same_namespace(&self.referrer.cur)
            || self.binding_namespaces.contains(&c.cur.namespace)
    }
}

fn role_ref_gvk(node: &Node) -> Option<Gvk> {
    let rr = node.get("roleRef")?;
    Some(Gvk {
        group: rr.get_str("apiGroup")?.to_string(),
        version: String::new(),
        kind: rr.get_str("kind")?.to_string(),
    })
}

struct Rule<'a> {
    target: &'a Gvk,
    spec: &'a FieldSpec,
    referrer: &'a Candidate<'a>,
    role_ref: Option<Gvk>,
    candidates: &'a Candidates<'a>,
    scope: &'a Scope<'a>,
}

impl Rule<'_> {
    fn set(&self, n: &mut Node) -> Result<(), String> {
        if n.is_null() {
            return Ok(());
        }
        match &mut n.value {
            Value::Scalar(_) => self.set_scalar(n),
            Value::Map(_) => self.set_mapping(n),
            Value::Seq(items) => {
                for item in items {
                    match &item.value {
                        Value::Scalar(_) => self.set_scalar(item)?,
                        Value::Map(_) => self.set_mapping(item)?,
                        _ => return Err("node must be a scalar, sequence or map".into()),
                    }
                }
                Ok(())
            }
        }
    }

    fn set_scalar(&self, n: &mut Node) -> Result<(), String> {
        let old = n.as_str().unwrap_or_default().to_string();
        let named = self.in_scope(&old).collect();
        let Some(c) = self.select(named, false)? else {
            return Ok(());
        };
        if c.cur.name != old {
            *n = Node::string(c.cur.name.clone());
        }
        Ok(())
    }

    fn set_mapping(&self, n: &mut Node) -> Result<(), String> {
        let Some(old) = n
            .get("name")
            .map(|v| v.as_str().unwrap_or_default().to_string())
        else {
            return Err("path config error; no 'name' field in node".into());
        };
        let candidates: Vec<&Candidate> = match n.get("namespace") {
            None => self.in_scope(&old).collect(),
            Some(ns) => {
                let ns = ns.as_str().unwrap_or_default();
                // Candidates of the original namespace when the subset has
                // any, else those of the current one.
                let any_by_org = self.candidates.by_org_namespace.get(ns).is_some_and(|l| {
                    l.iter()
                        .any(|&i| self.scope.contains(&self.candidates.all[i]))
                });
                self.in_scope(&old)
                    .filter(|c| match any_by_org {
                        true => c.org_namespace() == ns,
                        false => c.cur.namespace == ns,
                    })
                    .collect()
            }
        };
        let Some(c) = self.select(candidates, true)? else {
            return Ok(());
        };
        if c.cur.name == old && c.cur.namespace.is_empty() {
            return Ok(());
        }
        n.set("name", Node::string(c.cur.name.clone()));
        if !c.cur.namespace.is_empty() {
            n.set("namespace", Node::string(c.cur.namespace.clone()));
        }
        Ok(())
    }

    /// The candidates in the referrer's scope that once had the name `old`
    /// (selectReferral's first filter), in resource order.
    fn in_scope<'c>(&'c self, old: &str) -> impl Iterator<Item = &'c Candidate<'c>> + 'c {
        self.candidates
            .named(old)
            .filter(|c| self.scope.contains(c))
    }

    /// kustomize's selectReferral: narrow the candidates step by step
    /// (`c` already holds only those that once had the name `old`).
    fn select<'c>(
        &self,
        mut c: Vec<&'c Candidate<'c>>,
        with_namespace: bool,
    ) -> Result<Option<&'c Candidate<'c>>, String> {
        c.retain(|x| x.prev.iter().any(|id| id.gvk.is_selected_by(self.target)));
        if self.spec.path.ends_with("roleRef/name") {
            if let Some(rr) = &self.role_ref {
                c.retain(|x| x.prev.iter().any(|id| id.gvk.is_selected_by(rr)));
            }
        }
        let referrer = &self.referrer.cur;
        if !self.referrer.cluster_scoped {
            c.retain(|x| {
                x.cluster_scoped
                    || x.cur.gvk.kind == "ServiceAccount"
                    || referrer.same_namespace(&x.cur)
            });
        }
        if c.len() == 1 {
            return Ok(c.pop());
        }
        c.retain(|x| affixes_equal(x, self.referrer, true));
        if c.len() > 1 {
            c.retain(|x| affixes_equal(x, self.referrer, false));
        }
        match c.len() {
            0 => Ok(None),
            1 => Ok(c.pop()),
            _ => {
                let first = &c[0].cur;
                let identical = c.iter().all(|x| {
                    x.cur.name == first.name
                        && (!with_namespace || x.cur.namespace == first.namespace)
                });
                if identical {
                    return Ok(Some(c[0]));
                }
                let ids: Vec<String> = c.iter().map(|x| x.cur.id_string()).collect();
                Err(format!(
                    "found multiple possible referrals: {}",
                    ids.join(", ")
                ))
            }
        }
    }
}

fn affixes_equal(a: &Candidate, b: &Candidate, allow_empty: bool) -> bool {
    if allow_empty {
        (a.prefixes.is_empty() || b.prefixes.is_empty() || same_ending(a.prefixes, b.prefixes))
            && (a.suffixes.is_empty()
                || b.suffixes.is_empty()
                || same_ending(a.suffixes, b.suffixes))
    } else {
        same_ending(a.prefixes, b.prefixes) && same_ending(a.suffixes, b.suffixes)
    }
}

/// kustomize's SameEndingSubSlice.
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() > b.len() { (b, a) } else { (a, b) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_ending_subslice() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(same_ending(&s(&["a", "b"]), &s(&["b"])));
        assert!(!same_ending(&s(&["a", "b"]), &s(&["a"])));
        assert!(same_ending(&s(&[]), &s(&[])));
        assert!(!same_ending(&s(&[]), &s(&["a"])));
    }
}
