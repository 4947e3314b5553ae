//! Strategic merge patch as kustomize v5.7.1 applies it: kyaml's `merge2`
//! (a `walk.Walker` over [resource, patch] with the `Merger` visitor,
//! `ListIncreaseDirection: Prepend`, no associative-list inference), with
//! merge keys and strategies from the OpenAPI schema (`k8s::Schema`) and the
//! `$patch: delete|replace|merge` directives. Like kyaml, it gives no meaning
//! to `$setElementOrder`, `$deleteFromPrimitiveList` or `$retainKeys`: they
//! are ordinary fields.

mod assoc;

use crate::k8s::{Catalog, Schema};
use crate::yaml::{Node, Tag, Value};
use assoc::{element_setter, walk_associative};

const DIRECTIVE: &str = "$patch";

/// What a walk produced (kyaml returns an `*RNode`, possibly nil).
enum Merged {
    /// kyaml's ClearNode / nil: the field goes.
    Clear,
    /// A node; `from_dest` when it is the (updated) resource node itself.
    Node { node: Node, from_dest: bool },
    /// MakePersistentNullNode: a null that FieldSetter keeps.
    KeepNull(Node),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Directive {
    Merge,
    Replace,
    Delete,
    Unknown,
}

/// Merges `patch` into `resource`. `None` means the patch deleted the resource.
pub fn merge(cat: &Catalog, resource: Node, patch: &Node) -> Result<Option<Node>, String> {
    let mut cx = Cx {
        cat,
        path: Vec::new(),
    };
    let out = walk(Some(resource), Some(patch.clone()), None, false, &mut cx)?;
    Ok(match out {
        Merged::Clear => None,
        Merged::Node { node, .. } | Merged::KeepNull(node) => Some(node),
    })
}

/// What one merge walks with: the OpenAPI catalog in force and the field
/// path below the resource.
struct Cx<'c> {
    cat: &'c Catalog,
    path: Vec<String>,
}

fn missing_or_null(n: &Option<Node>) -> bool {
    n.as_ref().is_none_or(Node::is_null)
}

fn is_empty_map(n: &Node) -> bool {
    matches!(&n.value, Value::Map(m) if m.is_empty())
}

/// kyaml's IsNilOrEmpty on a node: null, `{}` or `[]`.
fn nil_or_empty(n: &Node) -> bool {
    n.is_null()
        || matches!(&n.value, Value::Map(m) if m.is_empty())
        || matches!(&n.value, Value::Seq(s) if s.is_empty())
}

/// yaml.Node.Value: a scalar's text, empty for collections.
fn raw_value(n: &Node) -> &str {
    match &n.value {
        Value::Scalar(s) => &s.text,
        _ => "",
    }
}

/// kyaml's GetValue: empty for missing or null nodes.
fn get_value(n: Option<&Node>) -> &str {
    match n {
        Some(n) if !n.is_null() => raw_value(n),
        _ => "",
    }
}

fn kind_name(n: &Node) -> &'static str {
    match n.value {
        Value::Scalar(_) => "ScalarNode",
        Value::Seq(_) => "SequenceNode",
        Value::Map(_) => "MappingNode",
    }
}

fn same_kind(a: &Node, b: &Node) -> bool {
    std::mem::discriminant(&a.value) == std::mem::discriminant(&b.value)
}

/// walk.Walker.Walk with sources [dest, origin]. `same` when dest and origin
/// are one node in kyaml (a subtree the patch added or replaced).
fn walk<'c>(
    dest: Option<Node>,
    origin: Option<Node>,
    schema: Option<Schema<'c>>,
    same: bool,
    cx: &mut Cx<'c>,
) -> Result<Merged, String> {
    let schema = schema.or_else(|| schema_of_sources(cx.cat, &dest, &origin));
    // Walker.Kind: the kind of the first source that is not missing or null
    // (only its kind is needed, so the subtree is borrowed, not cloned).
    let Some(kind) = [&dest, &origin]
        .into_iter()
        .flatten()
        .find(|n| !n.is_null())
    else {
        return walk_map(dest, origin, schema, same, cx);
    };
    for n in [&dest, &origin].into_iter().flatten() {
        if !n.is_null() && !same_kind(n, kind) {
            return Err(format!(
                "wrong node kind: expected {} but got {}",
                kind_name(kind),
                kind_name(n)
            ));
        }
    }
    match kind.value {
        Value::Map(_) => walk_map(dest, origin, schema, same, cx),
        Value::Seq(_) if schema.is_some_and(|s| s.merges()) => {
            walk_associative(dest, origin, schema, same, cx)
        }
        // NonAssociateList and scalars: the patch wins when it has the field.
        _ => Ok(match (origin, dest) {
            (Some(o), _) => Merged::Node {
                node: o,
                from_dest: same,
            },
            (None, Some(d)) => Merged::Node {
                node: d,
                from_dest: true,
            },
            (None, None) => Merged::Clear,
        }),
    }
}

/// Walker.GetSchema without a parent schema: the type of the first source
/// with both `apiVersion` and `kind`.
fn schema_of_sources<'c>(
    cat: &'c Catalog,
    dest: &Option<Node>,
    origin: &Option<Node>,
) -> Option<Schema<'c>> {
    for n in [dest, origin].into_iter().flatten() {
        if n.is_null() {
            continue;
        }
        let (Some(av), Some(kind)) = (n.get_str("apiVersion"), n.get_str("kind")) else {
            continue;
        };
        if av.is_empty() || kind.is_empty() {
            continue;
        }
        if let Some(s) = cat.for_type(av, kind) {
            return Some(s);
        }
    }
    None
}

/// determineSmpDirective: reads and removes the `$patch` directive.
fn directive(patch: &mut Option<Node>) -> Result<Directive, String> {
    let Some(p) = patch else {
        return Ok(Directive::Merge);
    };
    let parse = |v: &str| match v {
        "delete" => Ok(Directive::Delete),
        "replace" => Ok(Directive::Replace),
        "merge" => Ok(Directive::Merge),
        other => Err(format!("unknown patch strategy '{other}'")),
    };
    match &mut p.value {
        Value::Map(_) => {
            let Some(v) = p.get(DIRECTIVE) else {
                return Ok(Directive::Merge);
            };
            let d = parse(raw_value(v))?;
            p.remove(DIRECTIVE);
            Ok(d)
        }
        Value::Seq(items) => {
            // GetElementByKey: the first mapping element with the field.
            let found = items
                .iter()
                .find(|e| e.as_map().is_some() && e.get(DIRECTIVE).is_some());
            let Some(elem) = found else {
                return Ok(Directive::Merge);
            };
            if elem.as_map().is_some_and(|m| m.len() > 1) {
                return Ok(Directive::Merge);
            }
            let v = elem
                .get(DIRECTIVE)
                .map(raw_value)
                .unwrap_or_default()
                .to_string();
            let d = parse(&v)?;
            element_setter(items, None, &[DIRECTIVE.to_string()], &[v])?;
            Ok(d)
        }
        Value::Scalar(s) => Err(format!(
            "no implemented strategic merge patch strategy for '{}' ('{}')",
            short_tag(&s.tag),
            s.text
        )),
    }
}

fn short_tag(t: &Tag) -> String {
    match t {
        Tag::Str => "!!str".into(),
        Tag::Int => "!!int".into(),
        Tag::Float => "!!float".into(),
        Tag::Bool => "!!bool".into(),
        Tag::Null => "!!null".into(),
        Tag::Timestamp => "!!timestamp".into(),
        Tag::Other(o) => o.to_string(),
    }
}

/// Merger.VisitMap followed by walkMap over the union of field names.
fn walk_map<'c>(
    dest: Option<Node>,
    mut origin: Option<Node>,
    schema: Option<Schema<'c>>,
    same: bool,
    cx: &mut Cx<'c>,
) -> Result<Merged, String> {
    let (mut dest, from_dest, keep_null) = if missing_or_null(&dest) {
        // Errors are ignored here, as kyaml does.
        let d = directive(&mut origin).unwrap_or(Directive::Unknown);
        if d == Directive::Delete {
            return Ok(Merged::Clear);
        }
        match (&origin, &dest) {
            (None, Some(d)) if !raw_value(d).is_empty() => (d.clone(), false, true),
            (None, _) => return Ok(Merged::Clear),
            (Some(o), _) => (o.clone(), same, false),
        }
    } else if origin.as_ref().is_some_and(Node::is_null) {
        return Ok(Merged::Clear);
    } else {
        match directive(&mut origin)? {
            Directive::Delete => return Ok(Merged::Clear),
            Directive::Replace => match &origin {
                Some(o) => (o.clone(), same, false),
                None => return Ok(Merged::Clear),
            },
            _ => match dest {
                // In kyaml both are one node: the directive went from both.
                Some(_) if same => (origin.clone().unwrap_or_else(Node::null), true, false),
                Some(d) => (d, true, false),
                None => return Ok(Merged::Clear),
            },
        }
    };
    // From here on dest may be the patch node itself.
    let aliased = same || !from_dest;
    let mut names: Vec<String> = Vec::new();
    for n in [Some(&dest), origin.as_ref()].into_iter().flatten() {
        for (k, _) in n.as_map().into_iter().flatten() {
            let k = k.key_text().unwrap_or_default();
            if !names.iter().any(|x| x == k) {
                names.push(k.to_string());
            }
        }
    }
    names.sort();
    for key in names {
        let child_schema = schema.and_then(|s| s.field(&key));
        // Taken, not cloned: set_field puts the result back in the same
        // place (or removes the key), and origin is not read again.
        let d = dest.get_mut(&key).map(take);
        let o = origin.as_mut().and_then(|o| o.get_mut(&key)).map(take);
        cx.path.push(key.clone());
        let val = walk(d, o, child_schema, aliased, cx)?;
        cx.path.pop();
        set_field(&mut dest, &key, val);
    }
    Ok(if keep_null {
        Merged::KeepNull(dest)
    } else {
        Merged::Node {
            node: dest,
            from_dest,
        }
    })
}

/// Moves a node out, leaving an empty sequence (no allocation) in its place.
fn take(n: &mut Node) -> Node {
    std::mem::replace(n, Node::seq())
}

/// kyaml's FieldSetter: a nil or (non-persistent) null value clears the field.
fn set_field(dest: &mut Node, key: &str, val: Merged) {
    match val {
        Merged::Clear => {
            dest.remove(key);
        }
        Merged::Node { node, .. } if node.is_null() => {
            dest.remove(key);
        }
        Merged::Node { node, .. } | Merged::KeepNull(node) => dest.set(key, node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, to_string, Resolver};

    fn run(resource: &str, patch: &str) -> String {
        let r = parse_one(resource, Resolver::V3).unwrap();
        let p = parse_one(patch, Resolver::V3).unwrap();
        match merge(Catalog::builtin(), r.clone(), &p).unwrap() {
            Some(n) => to_string(&n).unwrap(),
            None => "<deleted>".into(),
        }
    }

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: a:1\n      - name: b\n        image: b:1\n";

    #[test]
    fn containers_merge_by_name_and_new_ones_come_first() {
        let out = run(
            DEPLOY,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: b\n        image: b:2\n      - name: c\n        image: c:1\n",
        );
        // Recorded from kustomize: patch elements first, then the rest.
        assert!(
            out.ends_with("- image: b:2\n        name: b\n      - image: c:1\n        name: c\n      - image: a:1\n        name: a\n"),
            "{out}"
        );
    }

    #[test]
    fn directives() {
        let out = run(
            DEPLOY,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        $patch: delete\n",
        );
        assert!(!out.contains("name: a") && out.contains("name: b"), "{out}");
        let out = run(
            DEPLOY,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: z\n      - $patch: replace\n",
        );
        assert!(out.contains("name: z") && !out.contains("name: a"), "{out}");
        assert_eq!(
            run(
                DEPLOY,
                "kind: Deployment\nmetadata:\n  name: d\n$patch: delete\n"
            ),
            "<deleted>"
        );
        assert!(!run(DEPLOY, "spec:\n  template: null\n").contains("template"));
    }

    #[test]
    fn unknown_lists_are_replaced_and_maps_merge() {
        let out = run(
            "apiVersion: x/v1\nkind: W\nmetadata:\n  name: w\nspec:\n  items: [1, 2]\n  m: {a: 1}\n",
            "spec:\n  items: [3]\n  m: {b: 2}\n",
        );
        assert_eq!(out, "apiVersion: x/v1\nkind: W\nmetadata:\n  name: w\nspec:\n  items:\n  - 3\n  m:\n    a: 1\n    b: 2\n");
    }

    #[test]
    fn primitive_merge_lists_union() {
        let out = run(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  finalizers: [a, b]\n",
            "metadata:\n  finalizers: [c, a]\n",
        );
        assert!(out.contains("finalizers:\n  - c\n  - a\n  - b\n"), "{out}");
    }

    #[test]
    fn bad_directive_is_an_error() {
        let r = parse_one(DEPLOY, Resolver::V3).unwrap();
        let p = parse_one("spec:\n  $patch: nope\n", Resolver::V3).unwrap();
        assert!(merge(Catalog::builtin(), r.clone(), &p)
            .unwrap_err()
            .contains("unknown patch strategy 'nope'"));
    }
}
