//! The structural diff of two resources' nodes: mappings key by key, lists
//! with a strategic-merge key (containers, env, ports, volumes, …, from
//! `k8s`'s schema) by key so reordering is no change, other lists by index,
//! scalars by value. A string naming a resource of its side compares by the
//! resource's identity, so references to renamed resources are no change.

use std::collections::{BTreeMap, HashMap};

use super::{Mode, Resource};
use crate::k8s::{Catalog, Schema};
use crate::yaml::{Node, Tag, Value};

/// One step of a displayed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
    /// A list item found by its merge key: `containers[name=web]`.
    Item {
        /// The merge key.
        key: String,
        /// Its value.
        value: String,
    },
}

/// One step of a concrete path in one side's node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// What happened at a path.
#[derive(Clone, Debug)]
pub enum ChangeKind {
    /// A value changed.
    Changed {
        /// The old value.
        from: Node,
        /// The new value.
        to: Node,
    },
    /// A multi-line string changed (shown as a unified diff).
    Text {
        /// The old text.
        from: String,
        /// The new text.
        to: String,
    },
    /// A field or list item appeared.
    Added(Node),
    /// A field or list item went away.
    Removed(Node),
}

/// One field-level change.
#[derive(Clone, Debug)]
pub struct Change {
    /// Where, as displayed.
    pub path: Vec<Seg>,
    /// What.
    pub kind: ChangeKind,
    pub(crate) from_path: Option<Vec<Step>>,
    pub(crate) to_path: Option<Vec<Step>>,
}

impl Change {
    /// `spec.template.spec.containers[name=web].image`; keys that are not
    /// plain identifiers are quoted as jq quotes them.
    pub fn path_text(&self) -> String {
        let mut s = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(k) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    let plain = !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !k.starts_with(|c: char| c.is_ascii_digit());
                    if plain {
                        s.push_str(k);
                    } else {
                        s.push_str(&serde_json::Value::String(k.clone()).to_string());
                    }
                }
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
                Seg::Item { key, value } => s.push_str(&format!("[{key}={value}]")),
            }
        }
        s
    }

    /// An RFC 6901 pointer into the side the value is on (`to` unless the
    /// change is a removal).
    pub fn pointer(&self) -> String {
        let steps = self.to_path.as_ref().or(self.from_path.as_ref());
        let mut s = String::new();
        for st in steps.into_iter().flatten() {
            s.push('/');
            match st {
                Step::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
                Step::Index(i) => s.push_str(&i.to_string()),
            }
        }
        s
    }
}

/// Each side's resource names mapped to identity names.
pub(crate) type Names<'a> = (&'a HashMap<String, String>, &'a HashMap<String, String>);

struct Walk<'a> {
    names: Names<'a>,
    out: Vec<Change>,
    path: Vec<Seg>,
    pa: Vec<Step>,
    pb: Vec<Step>,
    skip_namespace: bool,
}

/// The changes from `a` to `b` (`res` is the `to` side's resource, for its
/// schema).
pub(crate) fn diff(a: &Node, b: &Node, res: &Resource, mode: Mode, names: Names) -> Vec<Change> {
    let schema = Catalog::builtin().for_type(&res.api_version(), &res.kind);
    let mut w = Walk {
        names,
        out: Vec::new(),
        path: Vec::new(),
        pa: Vec::new(),
        pb: Vec::new(),
        // The namespace is not part of a resource between environments.
        skip_namespace: mode == Mode::Environments,
    };
    w.node(a, b, schema);
    w.out
}

fn is_string(n: &Node) -> bool {
    matches!(&n.value, Value::Scalar(s) if matches!(s.tag, Tag::Str | Tag::Timestamp | Tag::Other(_)))
}

impl Walk<'_> {
    fn emit(&mut self, kind: ChangeKind, from: bool, to: bool) {
        self.out.push(Change {
            path: self.path.clone(),
            kind,
            from_path: from.then(|| self.pa.clone()),
            to_path: to.then(|| self.pb.clone()),
        });
    }

    fn node(&mut self, a: &Node, b: &Node, schema: Option<Schema>) {
        match (&a.value, &b.value) {
            (Value::Map(x), Value::Map(y)) => self.map(x, y, schema),
            (Value::Seq(x), Value::Seq(y)) => self.seq(x, y, schema),
            (Value::Scalar(x), Value::Scalar(y)) => {
                let same = x.text == y.text && is_string(a) == is_string(b);
                if same || self.same_reference(&x.text, &y.text) {
                    return;
                }
                if is_string(a) && is_string(b) && (x.text.contains('\n') || y.text.contains('\n'))
                {
                    let kind = ChangeKind::Text {
                        from: x.text.clone(),
                        to: y.text.clone(),
                    };
                    self.emit(kind, true, true);
                } else {
                    let kind = ChangeKind::Changed {
                        from: a.clone(),
                        to: b.clone(),
                    };
                    self.emit(kind, true, true);
                }
            }
            _ => {
                let kind = ChangeKind::Changed {
                    from: a.clone(),
                    to: b.clone(),
                };
                self.emit(kind, true, true);
            }
        }
    }

    /// Two names of the same resource on either side (a renamed
    /// reference: `configMapRef.name`, `metadata.name`).
    fn same_reference(&self, a: &str, b: &str) -> bool {
        match (self.names.0.get(a), self.names.1.get(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    fn map(&mut self, x: &[(Node, Node)], y: &[(Node, Node)], schema: Option<Schema>) {
        let key = |k: &Node| k.key_text().unwrap_or_default().to_string();
        let mut keys: BTreeMap<String, (Option<&Node>, Option<&Node>)> = BTreeMap::new();
        for (k, v) in x {
            keys.entry(key(k)).or_default().0 = Some(v);
        }
        for (k, v) in y {
            keys.entry(key(k)).or_default().1 = Some(v);
        }
        for (k, (va, vb)) in keys {
            if self.skip_namespace
                && k == "namespace"
                && self.path == [Seg::Key("metadata".to_string())]
            {
                continue;
            }
            let sub = schema.and_then(|s| s.field(&k));
            self.path.push(Seg::Key(k.clone()));
            self.pa.push(Step::Key(k.clone()));
            self.pb.push(Step::Key(k));
            match (va, vb) {
                (Some(a), Some(b)) => self.node(a, b, sub),
                (Some(a), None) => self.emit(ChangeKind::Removed(a.clone()), true, false),
                (None, Some(b)) => self.emit(ChangeKind::Added(b.clone()), false, true),
                (None, None) => {}
            }
            self.path.pop();
            self.pa.pop();
            self.pb.pop();
        }
    }

    fn seq(&mut self, x: &[Node], y: &[Node], schema: Option<Schema>) {
        let items = schema.and_then(|s| s.elements());
        let (merges, keys) = match schema {
            Some(s) => (s.merges(), s.patch_strategy_and_keys().1),
            None => (false, &[][..]),
        };
        if merges {
            if let Some(key) = keys.first() {
                if let (Some(kx), Some(ky)) = (keyed(x, key), keyed(y, key)) {
                    return self.keyed(x, y, key, &kx, &ky, items);
                }
            }
        }
        for i in 0..x.len().max(y.len()) {
            self.path.push(Seg::Index(i));
            self.pa.push(Step::Index(i));
            self.pb.push(Step::Index(i));
            match (x.get(i), y.get(i)) {
                (Some(a), Some(b)) => self.node(a, b, items),
                (Some(a), None) => self.emit(ChangeKind::Removed(a.clone()), true, false),
                (None, Some(b)) => self.emit(ChangeKind::Added(b.clone()), false, true),
                (None, None) => {}
            }
            self.path.pop();
            self.pa.pop();
            self.pb.pop();
        }
    }

    fn keyed(
        &mut self,
        x: &[Node],
        y: &[Node],
        key: &str,
        kx: &[String],
        ky: &[String],
        items: Option<Schema>,
    ) {
        let mut order: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        for (i, k) in kx.iter().enumerate() {
            order.push((Some(i), ky.iter().position(|v| v == k)));
        }
        for (j, k) in ky.iter().enumerate() {
            if !kx.contains(k) {
                order.push((None, Some(j)));
            }
        }
        for (i, j) in order {
            let value = i.map_or_else(|| ky[j.unwrap_or(0)].clone(), |i| kx[i].clone());
            self.path.push(Seg::Item {
                key: key.to_string(),
                value,
            });
            self.pa.push(Step::Index(i.unwrap_or(0)));
            self.pb.push(Step::Index(j.unwrap_or(0)));
            match (i, j) {
                (Some(i), Some(j)) => self.node(&x[i], &y[j], items),
                (Some(i), None) => self.emit(ChangeKind::Removed(x[i].clone()), true, false),
                (None, Some(j)) => self.emit(ChangeKind::Added(y[j].clone()), false, true),
                (None, None) => {}
            }
            self.path.pop();
            self.pa.pop();
            self.pb.pop();
        }
    }
}

/// The merge-key values of a list of mappings, when every item has one
/// and no two are the same.
fn keyed(items: &[Node], key: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for it in items {
        let v = it.get(key)?.as_scalar()?.text.clone();
        if out.contains(&v) {
            return None;
        }
        out.push(v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};
    use std::sync::Arc;

    fn run(a: &str, b: &str) -> Vec<String> {
        let (na, nb) = (
            parse_one(a, Resolver::V3).unwrap(),
            parse_one(b, Resolver::V3).unwrap(),
        );
        let res = Resource {
            app: "x".into(),
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            namespace: String::new(),
            name: "web".into(),
            node: Arc::new(nb.clone()),
        };
        let empty = HashMap::new();
        diff(&na, &nb, &res, Mode::Environments, (&empty, &empty))
            .iter()
            .map(|c| format!("{} {}", c.path_text(), c.pointer()))
            .collect()
    }

    #[test]
    fn containers_and_env_compare_by_name() {
        let a = "spec: {template: {spec: {containers: [{name: a, image: x, env: [{name: A, value: '1'}, {name: B, value: '2'}]}, {name: b, image: y}]}}}";
        let b = "spec: {template: {spec: {containers: [{name: b, image: y}, {name: a, image: z, env: [{name: B, value: '2'}, {name: A, value: '1'}]}]}}}";
        assert_eq!(
            run(a, b),
            ["spec.template.spec.containers[name=a].image /spec/template/spec/containers/1/image"]
        );
    }

    #[test]
    fn other_lists_compare_by_index() {
        let a = "spec: {template: {spec: {containers: [{name: a, args: [x, y]}]}}}";
        let b = "spec: {template: {spec: {containers: [{name: a, args: [y, x, z]}]}}}";
        assert_eq!(
            run(a, b),
            [
                "spec.template.spec.containers[name=a].args[0] /spec/template/spec/containers/0/args/0",
                "spec.template.spec.containers[name=a].args[1] /spec/template/spec/containers/0/args/1",
                "spec.template.spec.containers[name=a].args[2] /spec/template/spec/containers/0/args/2",
            ]
        );
    }

    #[test]
    fn types_count_and_keys_are_quoted() {
        assert_eq!(run("spec: {replicas: 2}", "spec: {replicas: '2'}").len(), 1);
        assert_eq!(
            run(
                "metadata: {annotations: {a.b/c: x}}",
                "metadata: {annotations: {a.b/c: y}}"
            ),
            ["metadata.annotations.\"a.b/c\" /metadata/annotations/a.b~1c"]
        );
        assert!(run("metadata: {namespace: a}", "metadata: {namespace: b}").is_empty());
    }

    /// A printed key reads back as itself.
    fn as_selector(seg: &Seg) -> crate::yaml::selector::Step {
        use crate::yaml::selector::Step as S;
        match seg {
            Seg::Key(k) => S::Key(k.clone()),
            Seg::Index(i) => S::Index(*i),
            Seg::Item { key, value } => S::Match(key.clone(), value.clone()),
        }
    }

    use proptest::prelude::*;

    proptest! {
        /// `hydrate explain`'s field argument reads the diff's paths back:
        /// any key (dots, slashes, quotes, digits, non-ASCII), indexes and
        /// `[name=value]` items (a value holding `]` is the exception).
        #[test]
        fn printed_paths_parse_back(
            first in "\\PC{1,12}",
            rest in proptest::collection::vec(
                prop_oneof![
                    "\\PC{1,12}".prop_map(Seg::Key),
                    (0usize..50).prop_map(Seg::Index),
                    ("[a-z]{1,6}", "[^\\]\\p{C}]{1,10}")
                        .prop_map(|(key, value)| Seg::Item { key, value }),
                ],
                0..5,
            ),
        ) {
            let mut path = vec![Seg::Key(first)];
            path.extend(rest);
            let c = Change {
                path: path.clone(),
                kind: ChangeKind::Added(Node::string("x")),
                from_path: None,
                to_path: None,
            };
            let text = c.path_text();
            let parsed = crate::yaml::selector::parse(&text)
                .map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            let want: Vec<_> = path.iter().map(as_selector).collect();
            prop_assert_eq!(parsed, want, "{}", text);
        }
    }
}
