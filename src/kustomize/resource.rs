//! Resources: a Kubernetes object plus what kustomize tracks about it during a
//! build (previous names, prefixes and suffixes added), its identity ([`ObjectId`]),
//! and reading resource files the way kustomize's `kio.FromBytes` does.

use std::path::Path;

use super::Error;
pub(crate) use crate::k8s::{Gvk, ObjectId};
use crate::yaml::source_map::{SourceMap, SourceText};
use crate::yaml::{self, Node, Resolver, Value};

/// A current id as borrowed parts: group, version, kind, namespace, name.
/// Two resources have equal keys exactly when their [`ObjectId`]s are equal.
pub type IdKey<'a> = [&'a str; 5];

/// A resource and its build history.
#[derive(Clone, Debug)]
pub struct Resource {
    /// The object.
    pub node: Node,
    /// Ids it had before renames (oldest first), kustomize's PrevIds.
    pub prev_ids: Vec<ObjectId>,
    /// Name prefixes added, outermost last.
    pub prefixes: Vec<String>,
    /// Name suffixes added, outermost last.
    pub suffixes: Vec<String>,
    /// Names of the vars that point at this resource (AppendRefVarName).
    pub ref_vars: Vec<String>,
    /// Where it came from, when the build tracks origins.
    pub origin: Option<super::origin::Origin>,
    /// Transformers that ran over it, when the build tracks them.
    pub transformations: Vec<super::origin::Origin>,
    /// A generated resource whose name gets a content hash at the end of
    /// the build (kustomize's `needs-hash` build annotation).
    pub needs_hash: bool,
    /// Its index + 1 in a traced build's field histories (0: not traced
    /// yet; see `history.rs`).
    pub trace_id: u32,
}

impl Resource {
    /// A resource with no history.
    pub fn new(node: Node) -> Resource {
        Resource {
            node,
            prev_ids: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            ref_vars: Vec::new(),
            origin: None,
            transformations: Vec::new(),
            needs_hash: false,
            trace_id: 0,
        }
    }

    /// Its type.
    pub fn gvk(&self) -> Gvk {
        Gvk::new(
            self.node.get_str("apiVersion").unwrap_or_default(),
            self.node.get_str("kind").unwrap_or_default(),
        )
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.node
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or_default()
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.node
            .get_path(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .unwrap_or_default()
    }

    /// Its current id.
    pub fn cur_id(&self) -> ObjectId {
        ObjectId {
            gvk: self.gvk(),
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
        }
    }

    /// Its current id, borrowed: what [`ObjectId`] compares (group,
    /// version, kind, namespace, name) without allocating.
    pub fn id_key(&self) -> IdKey<'_> {
        let api = self.node.get_str("apiVersion").unwrap_or_default();
        let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
        let kind = self.node.get_str("kind").unwrap_or_default();
        [group, version, kind, self.namespace(), self.name()]
    }

    /// Its original id (the first previous one, else the current one).
    pub fn org_id(&self) -> ObjectId {
        self.prev_ids
            .first()
            .cloned()
            .unwrap_or_else(|| self.cur_id())
    }

    /// Records the current id as a previous one (kustomize's StorePreviousId),
    /// with the namespace as kustomize stores it (`default` when unset).
    pub fn store_previous_id(&mut self) {
        let [group, version, kind, namespace, name] = self.id_key();
        let namespace = if crate::k8s::is_cluster_scoped_gv(group, version, kind) {
            "_non_namespaceable_"
        } else if namespace.is_empty() {
            "default"
        } else {
            namespace
        };
        let id = ObjectId {
            gvk: Gvk {
                group: group.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
            },
            namespace: namespace.to_string(),
            name: name.to_string(),
        };
        self.prev_ids.push(id);
    }

    /// Whether this resource ever had `id` (current or previous).
    pub fn had_id(&self, pred: impl Fn(&ObjectId) -> bool) -> bool {
        pred(&self.cur_id()) || self.prev_ids.iter().any(pred)
    }
}

/// Reads the resources in one file as `kio.FromBytes` and kustomize's
/// resource factory do: CRLF normalised, documents split on `---` lines,
/// empty documents dropped, `List` kinds inlined, kind and name required.
pub fn read_file(path: &Path, src: &str) -> Result<Vec<Node>, Error> {
    read_file_traced(path, src, None)
}

/// [`read_file`], stamping each document's nodes with its place in `path`
/// when `trace` is given (see [`yaml::source_map`]): the map, and the line
/// of the scalar holding `src` when it is a string inside `path` (an inline
/// patch) rather than the file's text.
pub fn read_file_traced(
    path: &Path,
    src: &str,
    mut trace: Option<(&mut SourceMap, Option<u32>)>,
) -> Result<Vec<Node>, Error> {
    let crlf = src.contains("\r\n");
    let src = match crlf {
        true => std::borrow::Cow::Owned(src.replace("\r\n", "\n")),
        false => std::borrow::Cow::Borrowed(src),
    };
    let pieces = split_documents(path, &src)?;
    let single = pieces.len() == 1;
    let mut out = Vec::new();
    for (line_offset, offset, piece) in pieces {
        let mut node = yaml::parse_one(piece, Resolver::V3).map_err(|e| match e {
            yaml::Error::Syntax { line, problem, .. } => Error::Yaml {
                path: path.to_path_buf(),
                line: line + line_offset,
                problem,
            },
            other => Error::yaml(path, other),
        })?;
        if is_empty(&node) {
            continue;
        }
        // kyaml writes what it read as text and reads it back: folded
        // scalars come back changed (go-yaml v3's folded round trip).
        yaml::fold_round_trip(&mut node);
        if let Some((map, embedded_at)) = trace.as_mut() {
            let text = SourceText {
                crlf,
                embedded_at: *embedded_at,
                ..SourceText::file(path, offset as u32, line_offset)
            };
            yaml::source_map::stamp(&mut node, map.add(text));
        }
        check_duplicate_keys(&node).map_err(|(line, message)| Error::Invalid {
            path: path.to_path_buf(),
            line: line + line_offset,
            message,
        })?;
        if node.as_map().is_none() {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                line: node.pos.line + line_offset,
                message: "a resource must be a mapping".into(),
            });
        }
        let kind = node.get_str("kind").unwrap_or_default();
        // kio.ByteReader unwraps a lone List/ResourceList document.
        if single && (kind == "List" || kind == "ResourceList") && node.get("items").is_some() {
            for item in node
                .get("items")
                .and_then(Node::as_seq)
                .into_iter()
                .flatten()
            {
                out.push(item.clone());
            }
            continue;
        }
        out.push(node);
    }
    let mut result = Vec::new();
    inline_lists(path, out, &mut result)?;
    Ok(result)
}

fn inline_lists(path: &Path, nodes: Vec<Node>, out: &mut Vec<Node>) -> Result<(), Error> {
    for node in nodes {
        if is_empty(&node) {
            continue;
        }
        validate(path, &node)?;
        let kind = node.get_str("kind").unwrap_or_default();
        if kind.ends_with("List") {
            match node.get("items").map(|i| &i.value) {
                Some(Value::Seq(items)) => {
                    inline_lists(path, items.clone(), out)?;
                    continue;
                }
                Some(Value::Scalar(_)) if node.get("items").is_some_and(Node::is_null) => continue,
                Some(_) => {
                    return Err(Error::Invalid {
                        path: path.to_path_buf(),
                        line: node.pos.line,
                        message: format!("expected array in {kind}/items"),
                    })
                }
                None => {}
            }
        }
        out.push(node);
    }
    Ok(())
}

/// kustomize's GetValidatedMetadata: kind always, name unless a List.
fn validate(path: &Path, node: &Node) -> Result<(), Error> {
    let kind = node.get_str("kind").unwrap_or_default();
    let name = node
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    let message = if kind.is_empty() {
        "missing kind in object"
    } else if name.is_empty() && !kind.ends_with("List") {
        "missing metadata.name in object"
    } else {
        return Ok(());
    };
    Err(Error::Invalid {
        path: path.to_path_buf(),
        line: node.pos.line,
        message: message.into(),
    })
}

/// go-yaml v3 refuses a mapping key defined twice when decoding into a map,
/// which kustomize does for every resource.
fn check_duplicate_keys(n: &Node) -> Result<(), (u32, String)> {
    match &n.value {
        Value::Map(entries) => {
            for (i, (k, v)) in entries.iter().enumerate() {
                let key = k.key_text().unwrap_or_default();
                let id = key_identity(k);
                if let Some((first, _)) = entries[..i].iter().find(|(p, _)| key_identity(p) == id) {
                    return Err((
                        k.pos.line,
                        format!(
                            "mapping key \"{key}\" already defined at line {}",
                            first.pos.line
                        ),
                    ));
                }
                check_duplicate_keys(v)?;
            }
            Ok(())
        }
        Value::Seq(items) => items.iter().try_for_each(check_duplicate_keys),
        Value::Scalar(_) => Ok(()),
    }
}

/// What makes two keys equal to go-yaml: their decoded values (`null` and
/// `~` are the same key, so are `1` and `0x1`).
fn key_identity(k: &Node) -> (u8, String) {
    let Some(s) = k.as_scalar() else {
        return (9, String::new());
    };
    match s.tag {
        yaml::Tag::Null => (0, String::new()),
        yaml::Tag::Bool => (1, s.text.to_ascii_lowercase()),
        yaml::Tag::Int => match yaml::parse_int(&s.text.replace('_', "")) {
            Some(yaml::Int::Signed(i)) => (2, i.to_string()),
            Some(yaml::Int::Unsigned(u)) => (2, u.to_string()),
            None => (3, s.text.clone()),
        },
        _ => (3, s.text.clone()),
    }
}

fn is_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(s) => s.tag == yaml::Tag::Null,
        Value::Map(m) => m.is_empty(),
        Value::Seq(_) => false,
    }
}

/// kio's splitDocuments: `\n---` followed by anything up to a newline
/// separates documents; text after `---` other than a comment is an error.
/// Returns each document (borrowed, ending with the line break before its
/// separator) with the number of lines before it.
/// The documents of `s`: each with the lines and bytes before it.
fn split_documents<'s>(path: &Path, s: &'s str) -> Result<Vec<(u32, usize, &'s str)>, Error> {
    let mut docs = Vec::new();
    if s.is_empty() {
        return Ok(docs);
    }
    let b = s.as_bytes();
    // Lines are counted on from the last offset asked, so splitting stays
    // linear in the file's size.
    let mut counted = (0, 1);
    let mut line_of = |offset: usize| {
        let (from, line) = counted;
        let line = line + b[from..offset].iter().filter(|&&c| c == b'\n').count() as u32;
        counted = (offset, line);
        line
    };
    let (mut prev, mut i) = (0, 0);
    while let Some(off) = s[i..].find("\n---") {
        let start = i + off;
        let Some(nl) = s[start + 1..].find('\n') else {
            break;
        };
        let end = start + 1 + nl + 1;
        let after = s[start + 4..end - 1].trim();
        if !after.is_empty() && !after.starts_with('#') {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                line: line_of(start + 1),
                message: format!(
                    "invalid document separator: {}",
                    s[start + 1..end - 1].trim()
                ),
            });
        }
        // `s[start]` is the `\n` before `---`: the document keeps it.
        docs.push((line_of(prev) - 1, prev, &s[prev..=start]));
        prev = end;
        i = end - 1;
    }
    docs.push((line_of(prev) - 1, prev, &s[prev..]));
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Result<Vec<Node>, Error> {
        read_file(Path::new("r.yaml"), src)
    }

    #[test]
    fn documents_lists_and_empties() {
        let docs = read(
            "---\nkind: A\nmetadata: {name: a}\n---\n\n--- # c\nkind: B\nmetadata: {name: b}\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        let list = read("kind: List\nitems:\n- kind: C\n  metadata: {name: c}\n").unwrap();
        assert_eq!(list[0].get_str("kind"), Some("C"));
        let foo_list = read("kind: A\nmetadata: {name: a}\n---\nkind: FooList\nitems:\n- kind: D\n  metadata: {name: d}\n").unwrap();
        assert_eq!(foo_list.len(), 2);
    }

    #[test]
    fn errors_name_the_line() {
        let e =
            read("kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata:\n  name: [\n").unwrap_err();
        assert!(matches!(e, Error::Yaml { line, .. } if line >= 5), "{e}");
        assert!(read("kind: A\n")
            .unwrap_err()
            .to_string()
            .contains("missing metadata.name"));
        let e = read("kind: A\nmetadata: {name: a}\n---x\nkind: B\n").unwrap_err();
        assert!(
            e.to_string().contains("invalid document separator: ---x"),
            "{e}"
        );
    }
}
