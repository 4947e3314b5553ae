//! Choosing resources for a patch: kustomize's `resWrangler.Select` with a
//! `types.Selector` (anchored regular expressions on group, version, kind,
//! name and namespace, original or current) and Kubernetes label selectors
//! (`labels.Parse`) over labels or annotations.

use regex::Regex;

use super::model::Selector;
use super::resource::Resource;
use crate::yaml::Node;

/// A compiled selector (kustomize's `SelectorRegex`).
pub struct Compiled<'s> {
    sel: &'s Selector,
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// anchorRegex: `^(?:pattern)$`, nothing for an empty pattern.
fn anchored(p: &str) -> Result<Option<Regex>, String> {
    if p.is_empty() {
        return Ok(None);
    }
    super::pattern::compile(&format!("^(?:{p})$"))
        .map(Some)
        .map_err(|e| format!("error parsing regexp: {e}"))
}

fn matches(re: &Option<Regex>, s: &str) -> bool {
    re.as_ref().is_none_or(|r| r.is_match(s))
}

impl<'s> Compiled<'s> {
    /// Compiles `sel`.
    pub fn new(sel: &'s Selector) -> Result<Compiled<'s>, String> {
        Ok(Compiled {
            sel,
            group: anchored(&sel.gvk.group)?,
            version: anchored(&sel.gvk.version)?,
            kind: anchored(&sel.gvk.kind)?,
            name: anchored(&sel.name)?,
            namespace: anchored(&sel.namespace)?,
            labels: parse_selector(&sel.label_selector)?,
            annotations: parse_selector(&sel.annotation_selector)?,
        })
    }

    /// Whether `r` is selected.
    pub fn selects(&self, r: &Resource) -> bool {
        let (cur, org) = (r.cur_id(), r.org_id());
        let ns_ok = self.sel.namespace.is_empty()
            || matches(&self.namespace, org.effective_namespace())
            || matches(&self.namespace, cur.effective_namespace());
        let name_ok = self.sel.name.is_empty()
            || matches(&self.name, &org.name)
            || matches(&self.name, &cur.name);
        let gvk = r.gvk();
        let gvk_ok = matches(&self.group, &gvk.group)
            && matches(&self.version, &gvk.version)
            && matches(&self.kind, &gvk.kind);
        ns_ok
            && name_ok
            && gvk_ok
            && self
                .labels
                .iter()
                .all(|q| q.matches(&string_map(&r.node, "labels")))
            && self
                .annotations
                .iter()
                .all(|q| q.matches(&string_map(&r.node, "annotations")))
    }
}

fn string_map(n: &Node, field: &str) -> Vec<(String, String)> {
    n.get_path(&["metadata", field])
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.key_text().unwrap_or_default().to_string(),
                v.as_scalar().map(|s| s.text.clone()).unwrap_or_default(),
            )
        })
        .collect()
}

/// One requirement of a label selector.
#[derive(Debug, PartialEq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl Requirement {
    fn matches(&self, set: &[(String, String)]) -> bool {
        let get = |k: &str| set.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str());
        match self {
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.iter().any(|w| w == v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !vs.iter().any(|w| w == v)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        }
    }
}

/// Parses a label selector (`a=b,c!=d,e in (f,g),h notin (i),j,!k`).
fn parse_selector(s: &str) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    for part in split_top(s) {
        let part = part.trim();
        if part.is_empty() {
            if s.trim().is_empty() {
                continue;
            }
            return Err(format!(
                "unable to parse requirement: found '', expected: identifier in {s:?}"
            ));
        }
        let bad = || format!("unable to parse requirement: {part:?}");
        if let Some(k) = part.strip_prefix('!') {
            out.push(Requirement::NotExists(k.trim().to_string()));
        } else if let Some((k, v)) = part.split_once("!=") {
            out.push(Requirement::NotIn(k.trim().into(), vec![v.trim().into()]));
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            out.push(Requirement::In(k.trim().into(), vec![v.trim().into()]));
        } else if let Some((k, rest)) = split_word(part, " notin ") {
            out.push(Requirement::NotIn(k, set_values(rest).ok_or_else(bad)?));
        } else if let Some((k, rest)) = split_word(part, " in ") {
            out.push(Requirement::In(k, set_values(rest).ok_or_else(bad)?));
        } else if part.contains(char::is_whitespace) {
            return Err(bad());
        } else {
            out.push(Requirement::Exists(part.to_string()));
        }
    }
    Ok(out)
}

fn split_word(part: &str, word: &str) -> Option<(String, String)> {
    let i = part.find(word)?;
    Some((
        part[..i].trim().to_string(),
        part[i + word.len()..].trim().to_string(),
    ))
}

fn set_values(s: String) -> Option<Vec<String>> {
    let inner = s.strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

/// Splits on commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    fn res(src: &str) -> Resource {
        Resource::new(parse_one(src, Resolver::V3).unwrap())
    }

    #[test]
    fn selects_by_regex_and_labels() {
        let r = res("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-1\n  labels: {app: web, tier: fe}\n");
        let sel = |f: &dyn Fn(&mut Selector)| {
            let mut s = Selector::default();
            f(&mut s);
            Compiled::new(&s).unwrap().selects(&r)
        };
        assert!(sel(&|s| s.name = "web-.*".into()));
        assert!(!sel(&|s| s.name = "web".into()));
        assert!(sel(&|s| s.gvk.kind = "Deploy.*".into()));
        assert!(sel(&|s| s.namespace = "default".into()));
        assert!(sel(
            &|s| s.label_selector = "app=web,tier in (fe, be)".into()
        ));
        assert!(!sel(&|s| s.label_selector = "app!=web".into()));
        assert!(sel(&|s| s.label_selector = "!missing,app".into()));
        assert!(!sel(&|s| s.annotation_selector = "a=b".into()));
        assert!(Compiled::new(&Selector {
            name: "(".into(),
            ..Default::default()
        })
        .is_err());
    }
}
