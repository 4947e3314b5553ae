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
    group: Option<Pattern>,
    version: Option<Pattern>,
    kind: Option<Pattern>,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// One field of a selector, as kustomize's anchored regular expression
/// matches it.
enum Pattern {
    /// A pattern without a metacharacter of Go's regexp syntax: the
    /// anchored expression matches that text and nothing else. Most
    /// selectors name one kind or resource; matching them through a regex
    /// (and compiling one per patch and build) was 5% of a cold render of
    /// the 500-app bench.
    Literal(String),
    Regex(Regex),
}

impl Pattern {
    fn is_match(&self, s: &str) -> bool {
        match self {
            Pattern::Literal(l) => l == s,
            Pattern::Regex(r) => r.is_match(s),
        }
    }
}

/// Go's regexp (RE2) metacharacters: a pattern with none of them matches
/// only itself.
fn is_literal(p: &str) -> bool {
    !p.contains(|c: char| "\\.+*?()|[]{}^$".contains(c))
}

/// anchorRegex: `^(?:pattern)$`, nothing for an empty pattern.
fn anchored(p: &str) -> Result<Option<Pattern>, String> {
    if p.is_empty() {
        return Ok(None);
    }
    if is_literal(p) {
        return Ok(Some(Pattern::Literal(p.to_string())));
    }
    super::pattern::compile(&format!("^(?:{p})$"))
        .map(|r| Some(Pattern::Regex(r)))
        .map_err(|e| format!("error parsing regexp: {e}"))
}

fn matches(p: &Option<Pattern>, s: &str) -> bool {
    p.as_ref().is_none_or(|p| p.is_match(s))
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

    /// Whether `r` is selected. Reads the ids borrowed: a patch target is
    /// tested against every resource of the build.
    pub fn selects(&self, r: &Resource) -> bool {
        let api = r.node.get_str("apiVersion").unwrap_or_default();
        let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
        let kind = r.node.get_str("kind").unwrap_or_default();
        let gvk_ok = matches(&self.group, group)
            && matches(&self.version, version)
            && matches(&self.kind, kind);
        if !gvk_ok {
            return false;
        }
        let (cur_name, cur_ns) = (r.name(), r.namespace());
        let cur_eff = effective_namespace(group, version, kind, cur_ns);
        let (org_name, org_eff) = match r.prev_ids.first() {
            Some(o) => (o.name.as_str(), o.effective_namespace()),
            None => (cur_name, cur_eff),
        };
        let ns_ok = self.sel.namespace.is_empty()
            || matches(&self.namespace, org_eff)
            || matches(&self.namespace, cur_eff);
        let name_ok = self.sel.name.is_empty()
            || matches(&self.name, org_name)
            || matches(&self.name, cur_name);
        ns_ok
            && name_ok
            && self
                .labels
                .iter()
                .all(|q| q.matches(string_map(&r.node, "labels")))
            && self
                .annotations
                .iter()
                .all(|q| q.matches(string_map(&r.node, "annotations")))
    }
}

/// ObjectId::effective_namespace without building the id.
fn effective_namespace<'a>(group: &str, version: &str, kind: &str, ns: &'a str) -> &'a str {
    if crate::k8s::is_cluster_scoped_gv(group, version, kind) {
        "_non_namespaceable_"
    } else if ns.is_empty() {
        "default"
    } else {
        ns
    }
}

/// `metadata.<field>` as a mapping, if it is one.
fn string_map<'n>(n: &'n Node, field: &str) -> &'n [(Node, Node)] {
    n.get_path(&["metadata", field])
        .and_then(Node::as_map)
        .map_or(&[], Vec::as_slice)
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
    /// Whether the labels (or annotations) `set` meet it; a value is the
    /// scalar's text (empty for a collection).
    fn matches(&self, set: &[(Node, Node)]) -> bool {
        let get = |k: &str| {
            set.iter()
                .find(|(x, _)| x.key_text().unwrap_or_default() == k)
                .map(|(_, v)| v.as_scalar().map_or("", |s| s.text.as_str()))
        };
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
    fn a_literal_pattern_matches_as_its_anchored_regex() {
        let names = [
            "web", "web-1", "Web", "web\n", "", "we", "a.b", "axb", "ünï", "x y",
        ];
        for p in ["web", "web-1", "a.b", "ünï", "x y", "web\n", "w_e-b/1:2@%"] {
            let re = Regex::new(&format!("^(?:{p})$")).unwrap();
            let got = anchored(p).unwrap().unwrap();
            assert_eq!(matches!(got, Pattern::Literal(_)), p != "a.b", "{p:?}");
            for n in names {
                assert_eq!(got.is_match(n), re.is_match(n), "{p:?} on {n:?}");
            }
        }
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
