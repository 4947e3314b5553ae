//! `replacements:` and the ReplacementTransformer: copy a field of one
//! resource (or a literal `sourceValue`) into fields of others, as
//! kustomize's `filters/replacement` does, with kyaml's path language
//! (`a.b.[name=x].c`, `*`, list indices) and the delimiter/index/create
//! options.

use std::path::Path;

use super::model::{Decoder, Selector};
use super::patch::Reader;
use super::resource::{ObjectId, Resource};
use super::selector::Compiled;
use super::Error;
use crate::yaml::fields::field;
use crate::yaml::{self, Node, Resolver, Tag, Value};

/// `options` of a source or target.
#[derive(Clone, Debug, Default)]
pub struct FieldOptions {
    /// Split the value on this.
    pub delimiter: String,
    /// Which part (sources) or where to put the value (targets).
    pub index: i64,
    /// Create missing target fields.
    pub create: bool,
}

/// Where a replacement's value comes from.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// The resource (exact group/version/kind/name/namespace).
    pub id: Selector,
    /// The field (default `metadata.name`).
    pub field_path: String,
    /// Delimiter and index.
    pub options: Option<FieldOptions>,
}

/// Where a replacement's value goes.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// Which resources.
    pub select: Option<Selector>,
    /// Which resources not.
    pub reject: Vec<Selector>,
    /// The fields (default `metadata.name`).
    pub field_paths: Vec<String>,
    /// Delimiter, index and create.
    pub options: Option<FieldOptions>,
}

/// One replacement (kustomize's `types.Replacement`).
#[derive(Clone, Debug, Default)]
pub struct Replacement {
    /// A field of a resource.
    pub source: Option<Source>,
    /// Or a literal.
    pub source_value: Option<String>,
    /// Where it goes.
    pub targets: Option<Vec<Target>>,
}

/// kustomize's DefaultReplacementFieldPath.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// Decodes one entry of `replacements:` (a replacement, or `path:` naming a
/// file that holds one or a list), loading files through `read`.
pub fn decode_entry(d: &Decoder, n: &Node, read: &mut Reader) -> Result<Vec<Replacement>, Error> {
    let mut path = String::new();
    let r = decode_replacement(d, n, &mut path)?;
    if path.is_empty() {
        return Ok(vec![r]);
    }
    if r.source.is_some() || r.targets.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(d.err(n, "cannot specify both path and inline replacement"));
    }
    let (file, text) = read(&path)?;
    let root = yaml::parse_one(&text, Resolver::V2).map_err(|e| Error::yaml(&file, e))?;
    let fd = Decoder {
        path: &file,
        strict: false,
        what: "Replacement",
    };
    let mut ignored = String::new();
    match &root.value {
        Value::Seq(items) => items
            .iter()
            .map(|i| decode_replacement(&fd, i, &mut ignored))
            .collect(),
        Value::Map(_) => Ok(vec![decode_replacement(&fd, &root, &mut ignored)?]),
        _ => Err(fd.err(
            &root,
            "unsupported replacement type encountered within replacement path",
        )),
    }
}

/// The `replacements:` of a ReplacementTransformer config.
pub fn from_plugin_config(
    d: &Decoder,
    config: &Node,
    read: &mut Reader,
) -> Result<Vec<Replacement>, Error> {
    let mut out = Vec::new();
    if let Some(list) = config.get("replacements") {
        for entry in d.list(list, |_, n| Ok(n.clone()))? {
            out.extend(decode_entry(d, &entry, read)?);
        }
    }
    Ok(out)
}

fn decode_replacement(d: &Decoder, n: &Node, path: &mut String) -> Result<Replacement, Error> {
    let mut target = (Replacement::default(), String::new());
    d.object(
        n,
        &mut target,
        &[
            field!("source", |d, v, (r, _)| {
                if !v.is_null() {
                    r.source = Some(decode_source(d, v)?);
                }
            }),
            field!("targets", |d, v, (r, _)| {
                if !v.is_null() {
                    r.targets = Some(d.list(v, decode_target)?);
                }
            }),
            field!("sourceValue", |d, v, (r, _)| {
                if !v.is_null() {
                    r.source_value = Some(d.string(v)?);
                }
            }),
            field!("path", |d, v, (_, path)| *path = d.string(v)?),
        ],
    )?;
    let (r, p) = target;
    *path = p;
    Ok(r)
}

fn decode_source(d: &Decoder, n: &Node) -> Result<Source, Error> {
    let mut s = Source::default();
    d.object(
        n,
        &mut s,
        &[
            field!("group", |d, v, s| s.id.gvk.group = d.string(v)?),
            field!("version", |d, v, s| s.id.gvk.version = d.string(v)?),
            field!("kind", |d, v, s| s.id.gvk.kind = d.string(v)?),
            field!("name", |d, v, s| s.id.name = d.string(v)?),
            field!("namespace", |d, v, s| s.id.namespace = d.string(v)?),
            field!("fieldPath", |d, v, s| s.field_path = d.string(v)?),
            field!("options", |d, v, s| s.options = decode_options(d, v)?),
        ],
    )?;
    Ok(s)
}

fn decode_target(d: &Decoder, n: &Node) -> Result<Target, Error> {
    let mut t = Target::default();
    d.object(
        n,
        &mut t,
        &[
            field!("select", |d, v, t| {
                if !v.is_null() {
                    t.select = Some(d.selector(v)?);
                }
            }),
            field!("reject", |d, v, t| t.reject =
                d.list(v, Decoder::selector)?),
            field!("fieldPaths", |d, v, t| t.field_paths = d.strings(v)?),
            field!("options", |d, v, t| t.options = decode_options(d, v)?),
        ],
    )?;
    Ok(t)
}

fn decode_options(d: &Decoder, n: &Node) -> Result<Option<FieldOptions>, Error> {
    if n.is_null() {
        return Ok(None);
    }
    let mut o = FieldOptions::default();
    d.object(
        n,
        &mut o,
        &[
            field!("delimiter", |d, v, o| o.delimiter = d.string(v)?),
            field!("index", |d, v, o| o.index = decode_index(d, v)?),
            // kustomize accepts `encoding` and does nothing with it.
            ("encoding", |_, _, _| Ok(())),
            field!("create", |d, v, o| o.create = d.bool(v)?),
        ],
    )?;
    Ok(Some(o))
}

/// `options.index`: an int.
fn decode_index(d: &Decoder, v: &Node) -> Result<i64, Error> {
    match v.as_scalar() {
        Some(s) if s.tag == Tag::Int => match yaml::parse_int(&s.text) {
            Some(yaml::Int::Signed(i)) => Ok(i),
            _ => Err(d.err(v, "options.index is not an int")),
        },
        _ if v.is_null() => Ok(0),
        _ => Err(d.err(v, "options.index is not an int")),
    }
}

/// Runs the replacements over `resources`, in order.
pub fn apply(list: &[Replacement], resources: &mut [Resource]) -> Result<(), String> {
    for r in list {
        let Some(targets) = &r.targets else {
            return Err("replacements must specify a source and at least one target".into());
        };
        let value = match (&r.source, &r.source_value) {
            (None, None) => {
                return Err("replacements must specify a source and at least one target".into())
            }
            (Some(_), Some(_)) => {
                return Err("value and resource selectors are mutually exclusive".into())
            }
            (None, Some(v)) => Node::string(v),
            (Some(s), None) => source_value(s, resources)?,
        };
        for t in targets {
            apply_target(t, &value, resources)?;
        }
    }
    Ok(())
}

/// Every id a resource has had (utils.MakeResIds).
fn ids(r: &Resource) -> Vec<ObjectId> {
    let mut out = vec![r.cur_id()];
    out.extend(r.prev_ids.iter().cloned());
    out
}

/// kustomize's ResId.IsSelectedBy: exact, non-empty parts only; namespaces compared effectively.
fn id_selected(id: &ObjectId, sel: &Selector) -> bool {
    let ns = ObjectId {
        namespace: sel.namespace.clone(),
        gvk: sel.gvk.clone(),
        ..Default::default()
    };
    (sel.name.is_empty() || sel.name == id.name)
        && (sel.namespace.is_empty() || ns.effective_namespace() == id.effective_namespace())
        && id.gvk.is_selected_by(&sel.gvk)
}

fn describe(sel: &Selector) -> String {
    ObjectId {
        gvk: sel.gvk.clone(),
        name: sel.name.clone(),
        namespace: sel.namespace.clone(),
    }
    .id_string()
}

fn source_value(s: &Source, resources: &[Resource]) -> Result<Node, String> {
    let mut found: Option<&Resource> = None;
    for r in resources {
        if ids(r).iter().any(|id| id_selected(id, &s.id)) {
            if found.is_some() {
                return Err(format!("multiple matches for selector {}", describe(&s.id)));
            }
            found = Some(r);
        }
    }
    let Some(r) = found else {
        return Err(format!("nothing selected by {}", describe(&s.id)));
    };
    let field_path = if s.field_path.is_empty() {
        DEFAULT_FIELD_PATH
    } else {
        &s.field_path
    };
    let node = lookup(&r.node, &split_path(field_path))
        .map_err(|e| format!("error looking up replacement source: {e}"))?;
    let Some(node) = node.filter(|n| !nil_or_empty(n)) else {
        return Err(format!(
            "fieldPath `{field_path}` is missing for replacement source {}",
            describe(&s.id)
        ));
    };
    let mut value = node.clone();
    let Some(o) = s.options.as_ref().filter(|o| !o.delimiter.is_empty()) else {
        return Ok(value);
    };
    // getRefinedValue: one part of the delimited scalar.
    let Value::Scalar(sc) = &mut value.value else {
        return Err("delimiter option can only be used with scalar nodes".into());
    };
    let parts: Vec<&str> = sc.text.split(o.delimiter.as_str()).collect();
    let Some(part) = usize::try_from(o.index).ok().and_then(|i| parts.get(i)) else {
        return Err(format!(
            "options.index {} is out of bounds for value {}",
            o.index, sc.text
        ));
    };
    sc.text = part.to_string();
    Ok(value)
}

/// RNode.IsNilOrEmpty: null, or an empty map or list.
fn nil_or_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(s) => s.tag == Tag::Null,
        Value::Map(m) => m.is_empty(),
        Value::Seq(v) => v.is_empty(),
    }
}

/// kyaml's SmarterPathSplitter on `.`: `\.` escapes, a leading `.` is
/// dropped (PathSplitter), and brackets keep
/// their dots (`[a.b=c]`); a bracketed part without `=` is a plain field.
pub fn split_path(path: &str) -> Vec<String> {
    let raw = super::fieldspec::path_splitter(path, '.');
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let elem = &raw[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut joined = vec![elem.clone()];
            while i < raw.len() - 1 {
                i += 1;
                joined.push(raw[i].clone());
                if raw[i].ends_with(']') {
                    break;
                }
            }
            let s = joined.join(".");
            if s.contains('=') {
                out.push(s);
            } else {
                out.push(s.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out
}

fn list_index(part: &str) -> Option<(&str, &str)> {
    let inner = part.strip_prefix('[')?.strip_suffix(']')?;
    inner.split_once('=')
}

fn scalar_text(n: &Node) -> Option<&str> {
    n.as_scalar().map(|s| s.text.as_str())
}

/// yaml.Lookup (PathGetter without create): fields, `[k=v]` elements
/// (exact), list indices and `-` (the last element).
/// Like PathGetter it first drops empty and blank parts (cleanPath), so
/// `data..key.` finds `data.key`.
fn lookup<'n>(node: &'n Node, path: &[String]) -> Result<Option<&'n Node>, String> {
    let mut cur = node;
    for part in path.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let next = if let Ok(i) = part.parse::<i64>() {
            if i < 0 {
                return Err(format!("array index {i} cannot be negative"));
            }
            cur.as_seq().and_then(|v| v.get(i as usize))
        } else if part == "-" {
            cur.as_seq().and_then(|v| v.last())
        } else if part == "*" {
            return Err("wildcard is not supported in PathGetter".into());
        } else if part.starts_with('[') && part.ends_with(']') {
            let Some((k, v)) = list_index(part) else {
                return Err(
                    "list path element must contain fieldName=fieldValue for element to match"
                        .into(),
                );
            };
            cur.as_seq().and_then(|items| {
                items.iter().find(|e| {
                    if k.is_empty() {
                        scalar_text(e) == Some(v)
                    } else {
                        e.get(k).and_then(scalar_text) == Some(v)
                    }
                })
            })
        } else {
            cur.get(part)
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// What PathMatcher creates for a missing last part: the value's kind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Scalar,
    Map,
    Seq,
}

fn kind_of(n: &Node) -> Kind {
    match n.value {
        Value::Scalar(_) => Kind::Scalar,
        Value::Map(_) => Kind::Map,
        Value::Seq(_) => Kind::Seq,
    }
}

/// getPathPartKind: the kind of node to create before `next`.
fn new_node(next: Option<&String>, last: Kind) -> Node {
    let kind = match next {
        None => last,
        Some(p) if p.starts_with('[') && p.ends_with(']') => Kind::Seq,
        Some(p) if p.parse::<u64>().is_ok() => Kind::Seq,
        Some(_) => Kind::Map,
    };
    match kind {
        // An untagged scalar: its tag comes from the value set into it.
        Kind::Scalar => Node::scalar("", Tag::Null),
        Kind::Map => Node::map(),
        Kind::Seq => Node::seq(),
    }
}

type Visit<'a> = dyn FnMut(&mut Node) -> Result<(), String> + 'a;

/// kyaml's PathMatcher: visits every node `path` reaches, creating missing
/// parts when `create` gives the kind of the last one.
fn visit(
    node: &mut Node,
    path: &[String],
    create: Option<Kind>,
    f: &mut Visit,
) -> Result<usize, String> {
    let Some((part, rest)) = path.split_first() else {
        f(node)?;
        return Ok(1);
    };
    if let Ok(idx) = part.parse::<usize>() {
        let Some(items) = node.as_seq_mut() else {
            return Err(format!(
                "wrong node kind: expected SequenceNode but got {}",
                node.kind_name()
            ));
        };
        if let (true, Some(k)) = (items.len() == idx, create) {
            items.push(new_node(rest.first(), k));
        }
        let len = items.len();
        let Some(item) = items.get_mut(idx) else {
            return Err(format!(
                "index {idx} specified but only {len} elements found"
            ));
        };
        return visit(item, rest, create, f);
    }
    if part.starts_with('[') && part.ends_with(']') {
        let Some((field, pattern)) = list_index(part) else {
            return Err(
                "list path element must contain fieldName=fieldValue for element to match".into(),
            );
        };
        let re = super::pattern::compile(pattern).map_err(|e| e.to_string())?;
        let mut count = 0;
        if let Some(items) = node.as_seq_mut() {
            for item in items.iter_mut() {
                let text = if field.is_empty() {
                    scalar_text(item)
                } else {
                    item.get(field).and_then(scalar_text)
                };
                // visitElem/visitPrimitiveElem: an unanchored regular expression.
                if !text.is_some_and(|t| re.is_match(t.trim())) {
                    continue;
                }
                count += if field.is_empty() {
                    f(item).map(|_| 1)?
                } else {
                    visit(item, rest, create, f)?
                };
            }
        } else if !node.is_null() {
            return Err(format!(
                "wrong node kind: expected SequenceNode but got {}",
                node.kind_name()
            ));
        }
        if count > 0 || create.is_none() {
            return Ok(count);
        }
        let elem = if field.is_empty() {
            Node::string(pattern)
        } else {
            let mut m = Node::map();
            m.set(field, Node::string(pattern));
            m
        };
        if node.is_null() {
            *node = Node::seq();
        }
        if let Some(items) = node.as_seq_mut() {
            items.push(elem);
        }
        return visit(node, path, None, f);
    }
    if part == "*" {
        let Some(items) = node.as_seq_mut() else {
            return Err(format!(
                "wrong node kind: expected SequenceNode but got {}",
                node.kind_name()
            ));
        };
        let mut count = 0;
        for item in items {
            count += visit(item, rest, create, f)?;
        }
        return Ok(count);
    }
    if node.as_map().is_none() {
        if node.is_null() {
            return Ok(0);
        }
        return Err(format!(
            "wrong node kind: expected MappingNode but got {}",
            node.kind_name()
        ));
    }
    if node.get(part).is_none() {
        let Some(k) = create else {
            return Ok(0);
        };
        node.set(part, new_node(rest.first(), k));
    }
    match node.get_mut(part) {
        Some(field) => visit(field, rest, create, f),
        None => Ok(0),
    }
}

fn apply_target(t: &Target, value: &Node, resources: &mut [Resource]) -> Result<(), String> {
    let Some(select) = &t.select else {
        return Err("target must specify resources to select".into());
    };
    let default = [DEFAULT_FIELD_PATH.to_string()];
    let paths: &[String] = if t.field_paths.is_empty() {
        &default
    } else {
        &t.field_paths
    };
    let label_sel = |s: &Selector| Selector {
        label_selector: s.label_selector.clone(),
        annotation_selector: s.annotation_selector.clone(),
        ..Default::default()
    };
    let select_meta = label_sel(select);
    let select_meta = Compiled::new(&select_meta)?;
    let reject_meta: Vec<Selector> = t
        .reject
        .iter()
        .filter(|r| !r.label_selector.is_empty() || !r.annotation_selector.is_empty())
        .map(label_sel)
        .collect();
    let reject_meta = reject_meta
        .iter()
        .map(Compiled::new)
        .collect::<Result<Vec<_>, _>>()?;
    for r in resources.iter_mut() {
        if !select_meta.selects(r) || reject_meta.iter().any(|c| c.selects(r)) {
            continue;
        }
        let ids = ids(r);
        // containsRejectId: a reject with an empty id rejects nothing here.
        let rejected = t.reject.iter().any(|rej| {
            let empty =
                rej.gvk == super::Gvk::default() && rej.name.is_empty() && rej.namespace.is_empty();
            !empty && ids.iter().any(|id| id_selected(id, rej))
        });
        if rejected || !ids.iter().any(|id| id_selected(id, select)) {
            continue;
        }
        for fp in paths {
            copy_to(&mut r.node, fp, value, t.options.as_ref())?;
        }
    }
    Ok(())
}

fn copy_to(
    target: &mut Node,
    field_path: &str,
    value: &Node,
    options: Option<&FieldOptions>,
) -> Result<(), String> {
    let create = options.is_some_and(|o| o.create).then(|| kind_of(value));
    let mut set = |field: &mut Node| set_field(field, value, options);
    let n = visit(target, &split_path(field_path), create, &mut set)
        .map_err(|e| format!("{}: {e}", retrieval_error(field_path, create.is_some())))?;
    if n == 0 {
        return Err(retrieval_error(field_path, create.is_some()));
    }
    Ok(())
}

fn retrieval_error(field_path: &str, create: bool) -> String {
    if create {
        format!("unable to find or create field \"{field_path}\" in replacement target")
    } else {
        format!("unable to find field \"{field_path}\" in replacement target")
    }
}

/// setFieldValue: a scalar target keeps its tag and takes the value's
/// text (spliced in at `index` of the delimited text); any other target is
/// replaced by the value.
fn set_field(field: &mut Node, value: &Node, options: Option<&FieldOptions>) -> Result<(), String> {
    let mut value = value.clone();
    if let Some(o) = options.filter(|o| !o.delimiter.is_empty()) {
        let Some(target_text) = field.as_scalar().map(|s| s.text.clone()) else {
            return Err("delimiter option can only be used with scalar nodes".into());
        };
        let mut parts: Vec<String> = target_text
            .split(o.delimiter.as_str())
            .map(str::to_string)
            .collect();
        let v = value
            .as_scalar()
            .map(|s| s.text.clone())
            .unwrap_or_default();
        if o.index < 0 {
            parts.insert(0, v);
        } else if o.index as usize >= parts.len() {
            parts.push(v);
        } else {
            parts[o.index as usize] = v;
        }
        let joined = parts.join(&o.delimiter);
        match &mut value.value {
            Value::Scalar(s) => s.text = joined,
            _ => value = Node::string(joined),
        }
    }
    match (&mut field.value, &value.value) {
        (Value::Scalar(t), Value::Scalar(v)) => {
            t.text = v.text.clone();
            // A created (or null) field has no tag of its own: the text decides.
            if t.tag == Tag::Null {
                t.tag = yaml::resolve_plain(&t.text, Resolver::V3);
            }
            // A traced build: the text now comes from the source field.
            if value.pos.source.is_some() {
                field.pos = value.pos;
            }
        }
        _ => *field = value,
    }
    Ok(())
}

/// Decodes the `replacements:` field of a kustomization.
pub fn from_kustomization(
    path: &Path,
    entries: &[Node],
    read: &mut Reader,
) -> Result<Vec<Replacement>, Error> {
    let d = Decoder {
        path,
        strict: true,
        what: "Kustomization",
    };
    let mut out = Vec::new();
    for e in entries {
        out.extend(decode_entry(&d, e, read)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn res(src: &str) -> Resource {
        Resource::new(yaml::parse_one(src, Resolver::V3).unwrap())
    }

    fn replacements(src: &str) -> Vec<Replacement> {
        let n = yaml::parse_one(src, Resolver::V2).unwrap();
        let mut read = |name: &str| -> Result<(PathBuf, String), Error> {
            Err(Error::invalid(name, "no file"))
        };
        from_kustomization(Path::new("k.yaml"), n.as_seq().unwrap(), &mut read).unwrap()
    }

    #[test]
    fn paths_split_like_kyaml() {
        assert_eq!(
            split_path("spec.containers.[name=a.b].image"),
            ["spec", "containers", "[name=a.b]", "image"]
        );
        assert_eq!(
            split_path("metadata.annotations.[x.io/y]"),
            ["metadata", "annotations", "x.io/y"]
        );
        assert_eq!(split_path(r"a\.b.c"), ["a.b", "c"]);
        assert_eq!(
            split_path(".metadata.annotations.[x.io/y]"),
            ["metadata", "annotations", "x.io/y"]
        );
        assert_eq!(split_path("..a"), ["", "a"]);
        assert_eq!(split_path("."), [""]);
    }

    #[test]
    fn copies_with_delimiter_and_create() {
        let mut rs = vec![
            res("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  host: db.example.com\n  port: \"5432\"\n"),
            res("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n        ports:\n        - containerPort: 80\n"),
        ];
        let list = replacements(
            "- source: {kind: ConfigMap, name: cm, fieldPath: data.port}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths:\n    - spec.template.spec.containers.[name=app].ports.0.containerPort\n  - select: {kind: Deployment}\n    fieldPaths:\n    - spec.template.spec.containers.[name=app].image\n    options: {delimiter: ':', index: 1}\n- source: {kind: ConfigMap, name: cm, fieldPath: data.host}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.host]\n    options: {create: true}\n",
        );
        apply(&list, &mut rs).unwrap();
        let out = yaml::to_string(&rs[1].node).unwrap();
        assert!(out.contains("containerPort: 5432\n"), "{out}");
        assert!(out.contains("image: app:5432\n"), "{out}");
        assert!(out.contains("host: db.example.com"), "{out}");
        let missing = replacements(
            "- sourceValue: x\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.nothing]\n",
        );
        assert!(apply(&missing, &mut rs).is_err());
    }
}
