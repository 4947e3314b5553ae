//! RFC 6902 JSON patches on the node tree, with the semantics of
//! `gopkg.in/evanphx/json-patch.v4` that kustomize uses (negative array
//! indices allowed, `-` appends, no parent creation on `add`).

use crate::yaml::{self, Node, Resolver, Tag, Value};

/// One operation.
#[derive(Clone, Debug)]
pub struct Op {
    op: String,
    path: String,
    from: Option<String>,
    value: Option<Node>,
}

/// Marks the values of `ops` as read from `id` (a traced build).
pub fn stamp(ops: &mut [Op], id: crate::yaml::SourceId) {
    for v in ops.iter_mut().filter_map(|o| o.value.as_mut()) {
        crate::yaml::source_map::stamp(v, id);
    }
}

/// Decodes a patch: JSON when the text starts with `[`, else YAML read as
/// `sigs.k8s.io/yaml`'s YAMLToJSON does (YAML 1.1 scalars).
pub fn decode(text: &str) -> Result<Vec<Op>, String> {
    let resolver = if text.starts_with('[') {
        Resolver::V3
    } else {
        Resolver::V2
    };
    let root = yaml::parse_one(text, resolver).map_err(|e| e.to_string())?;
    let Some(items) = root.as_seq() else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            json_kind(&root)
        ));
    };
    let mut ops = Vec::new();
    for item in items {
        if item.as_map().is_none() {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                json_kind(item)
            ));
        }
        let text = |k: &str| item.get(k).and_then(Node::as_str).map(String::from);
        ops.push(Op {
            op: text("op").unwrap_or_default(),
            path: text("path").unwrap_or_default(),
            from: text("from"),
            value: item.get("value").cloned(),
        });
    }
    Ok(ops)
}

fn json_kind(n: &Node) -> &'static str {
    match &n.value {
        Value::Map(_) => "object",
        Value::Seq(_) => "array",
        Value::Scalar(s) => match s.tag {
            Tag::Bool => "bool",
            Tag::Int | Tag::Float => "number",
            Tag::Null => "null",
            _ => "string",
        },
    }
}

/// Applies every operation to `doc`, in order.
pub fn apply(doc: &mut Node, ops: &[Op]) -> Result<(), String> {
    for op in ops {
        apply_one(doc, op)?;
    }
    Ok(())
}

fn apply_one(doc: &mut Node, op: &Op) -> Result<(), String> {
    let value = || -> Result<Node, String> {
        op.value
            .clone()
            .ok_or_else(|| format!("{} operation has no value", op.op))
    };
    match op.op.as_str() {
        "add" => add(doc, &op.path, value()?),
        "remove" => remove(doc, &op.path).map(drop),
        "replace" => replace(doc, &op.path, value()?),
        "move" => {
            let from = op.from.as_deref().ok_or("move operation has no from")?;
            let v = remove(doc, from)?;
            add(doc, destination(&op.path, "move")?, v)
        }
        "copy" => {
            let from = op.from.as_deref().ok_or("copy operation has no from")?;
            let v = copied(doc, from)?;
            add(doc, destination(&op.path, "copy")?, v)
        }
        "test" => {
            let want = value()?;
            let got = get(doc, &op.path)?;
            let ok = match got {
                Some(g) => same_json(g, &want),
                None => want.is_null(),
            };
            if ok {
                Ok(())
            } else {
                Err(format!("testing value {} failed: test failed", op.path))
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// evanphx v4 `findObject` finds no container for the empty pointer (the
/// whole document), so `move` and `copy` cannot write there.
fn destination<'p>(path: &'p str, op: &str) -> Result<&'p str, String> {
    if path.is_empty() {
        return Err(format!(
            "{op} operation does not apply: doc is missing destination path: : missing value"
        ));
    }
    Ok(path)
}

/// The value `copy` takes: evanphx v4 fails when the parent of `from` is
/// missing, but a missing key in an existing object copies as `null`.
fn copied(doc: &mut Node, from: &str) -> Result<Node, String> {
    let missing = || format!("copy operation does not apply: doc is missing from path: {from}");
    let (con, key) = parent(doc, from, "copy").map_err(|_| missing())?;
    match &con.value {
        Value::Map(_) => Ok(con.get(&key).cloned().unwrap_or_else(Node::null)),
        Value::Seq(items) => {
            let i = index(&key, items.len(), false)?;
            Ok(items[i].clone())
        }
        Value::Scalar(_) => Err(missing()),
    }
}

/// Splits a JSON pointer into unescaped tokens.
fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "JSON pointer must be empty or start with a \"/\": {path}"
        ));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// The container holding the last token (evanphx's findObject).
fn parent<'a>(doc: &'a mut Node, path: &str, op: &str) -> Result<(&'a mut Node, String), String> {
    let mut toks = tokens(path)?;
    let Some(last) = toks.pop() else {
        return Err(format!(
            "{op} operation does not apply: doc is missing path: \"{path}\""
        ));
    };
    let mut cur = doc;
    for t in &toks {
        cur = match &mut cur.value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.key_text() == Some(t))
                .map(|(_, v)| v),
            Value::Seq(items) => {
                let len = items.len();
                index(t, len, false)
                    .ok()
                    .and_then(move |i| items.get_mut(i))
            }
            Value::Scalar(_) => None,
        }
        .ok_or_else(|| format!("{op} operation does not apply: doc is missing path: \"{path}\""))?;
    }
    Ok((cur, last))
}

/// An array index; `-` only where appending is allowed. Negative indices
/// count from the end, as evanphx v4 allows.
fn index(t: &str, len: usize, for_insert: bool) -> Result<usize, String> {
    if for_insert && t == "-" {
        return Ok(len);
    }
    let i: i64 = t.parse().map_err(|_| format!("invalid index: {t}"))?;
    let max = if for_insert {
        len as i64
    } else {
        len as i64 - 1
    };
    // partialArray.add counts a negative index from the end of the array
    // grown by one, so `-1` appends; get/set/remove from the array itself.
    let i = if i < 0 { i + max + 1 } else { i };
    if i < 0 || i > max {
        return Err(format!("Unable to access invalid index: {t}"));
    }
    Ok(i as usize)
}

fn add(doc: &mut Node, path: &str, v: Node) -> Result<(), String> {
    // evanphx v4 `add`: `findObject` has no container for "" either.
    if path.is_empty() {
        return Err(
            "add operation does not apply: doc is missing path: \"\": missing value".into(),
        );
    }
    let (con, key) = parent(doc, path, "add")?;
    match &mut con.value {
        Value::Map(_) => {
            con.set(&key, v);
            Ok(())
        }
        Value::Seq(items) => {
            let i = index(&key, items.len(), true)
                .map_err(|e| format!("add operation does not apply: {e}"))?;
            items.insert(i, v);
            Ok(())
        }
        Value::Scalar(_) => Err(format!(
            "add operation does not apply: doc is missing path: \"{path}\""
        )),
    }
}

fn remove(doc: &mut Node, path: &str) -> Result<Node, String> {
    let (con, key) = parent(doc, path, "remove")?;
    match &mut con.value {
        Value::Map(_) => con
            .remove(&key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Value::Seq(items) => {
            let i = index(&key, items.len(), false)?;
            Ok(items.remove(i))
        }
        Value::Scalar(_) => Err(format!(
            "remove operation does not apply: doc is missing path: \"{path}\""
        )),
    }
}

fn replace(doc: &mut Node, path: &str, v: Node) -> Result<(), String> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (con, key) = parent(doc, path, "replace")?;
    match &mut con.value {
        Value::Map(_) => match con.get_mut(&key) {
            Some(slot) => {
                *slot = v;
                Ok(())
            }
            // evanphx v4 partialDoc.set: replace at a missing object key
            // adds it rather than failing as RFC 6902 asks.
            None => {
                con.set(&key, v);
                Ok(())
            }
        },
        Value::Seq(items) => {
            let i = index(&key, items.len(), false)?;
            items[i] = v;
            Ok(())
        }
        Value::Scalar(_) => Err(format!(
            "replace operation does not apply: doc is missing path: {path}"
        )),
    }
}

fn get<'a>(doc: &'a Node, path: &str) -> Result<Option<&'a Node>, String> {
    let mut cur = doc;
    for t in tokens(path)? {
        let next = match &cur.value {
            Value::Map(_) => cur.get(&t),
            Value::Seq(items) => index(&t, items.len(), false)
                .ok()
                .and_then(|i| items.get(i)),
            Value::Scalar(_) => None,
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// Equality of the JSON values two nodes decode to.
fn same_json(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    k.key_text()
                        .and_then(|k| b.get(k))
                        .is_some_and(|w| same_json(v, w))
                })
        }
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_json(v, w))
        }
        (Value::Scalar(x), Value::Scalar(y)) => {
            let num = |t: &Tag| matches!(t, Tag::Int | Tag::Float);
            if num(&x.tag) && num(&y.tag) {
                let f = |s: &str| s.replace('_', "").parse::<f64>().ok();
                return f(&x.text).is_some() && f(&x.text) == f(&y.text) || x.text == y.text;
            }
            let class = |t: &Tag| match t {
                Tag::Str | Tag::Timestamp | Tag::Other(_) => 0,
                t => 1 + num(t) as u8 + 2 * matches!(t, Tag::Bool) as u8,
            };
            class(&x.tag) == class(&y.tag) && x.text == y.text
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(doc: &str, patch: &str) -> Result<String, String> {
        let mut d = yaml::parse_one(doc, Resolver::V3).unwrap();
        apply(&mut d, &decode(patch)?)?;
        Ok(yaml::to_string(&d).unwrap())
    }

    #[test]
    fn operations() {
        let doc = "a:\n  b: [1, 2]\n  c: x\n";
        assert_eq!(
            run(doc, "- op: add\n  path: /a/b/-\n  value: 3\n").unwrap(),
            "a:\n  b:\n  - 1\n  - 2\n  - 3\n  c: x\n"
        );
        assert_eq!(
            run(
                doc,
                r#"[{"op":"replace","path":"/a/c","value":"y"},{"op":"remove","path":"/a/b/0"}]"#
            )
            .unwrap(),
            "a:\n  b:\n  - 2\n  c: \"y\"\n"
        );
        assert_eq!(
            run(doc, "- op: move\n  from: /a/c\n  path: /d\n").unwrap(),
            "a:\n  b:\n  - 1\n  - 2\nd: x\n"
        );
        assert_eq!(
            run(doc, "- op: copy\n  from: /a/b/1\n  path: /a/b/0\n").unwrap(),
            "a:\n  b:\n  - 2\n  - 1\n  - 2\n  c: x\n"
        );
        assert!(run(doc, "- op: test\n  path: /a/c\n  value: x\n").is_ok());
        assert!(run(doc, "- op: test\n  path: /a/c\n  value: y\n").is_err());
        assert_eq!(
            run(doc, "- op: replace\n  path: /a/z\n  value: 1\n").unwrap(),
            "a:\n  b:\n  - 1\n  - 2\n  c: x\n  z: 1\n"
        );
        assert_eq!(
            run(doc, "- op: copy\n  from: /a/z\n  path: /a/w\n").unwrap(),
            "a:\n  b:\n  - 1\n  - 2\n  c: x\n  w: null\n"
        );
        assert!(run(doc, "- op: copy\n  from: /q/z\n  path: /a/y\n").is_err());
        assert!(run(doc, "- op: remove\n  path: /a/z\n").is_err());
        assert!(run(doc, "- op: add\n  path: /q/r\n  value: 1\n").is_err());
        assert!(run(doc, "- op: add\n  path: /a/b/5\n  value: 1\n").is_err());
        assert_eq!(
            run("k: [a, b]\n", "- op: add\n  path: /k/-1\n  value: z\n").unwrap(),
            "k:\n- a\n- b\n- z\n"
        );
        assert!(decode("op: add\n").is_err());
    }
}
