//! Editing YAML held in a string of another YAML file: an inline patch
//! (`patch: |-` in a kustomization) is a literal block scalar whose lines
//! are YAML themselves. The inner text is edited with the same
//! format-preserving editor; each inner line it changed is then written
//! back over the same line of the block, after the block's indentation.
//! Every other byte of the file stays. The result is checked as every
//! edit is: parsed again, the string must read as the edited inner text
//! and the rest of the document must be unchanged.

use super::{apply, get, path_text, same, Change, EditError, Seg};
use crate::yaml::{self, Node, Resolver, Style, Value};

/// Sets the scalar at `inner_path` of document `inner_doc` of the YAML
/// held by the literal block scalar at `path` of document `doc` to
/// `value`.
pub fn set_in_string(
    src: &str,
    resolver: Resolver,
    (doc, path): (usize, &[Seg]),
    (inner_doc, inner_path): (usize, &[Seg]),
    value: &str,
) -> Result<String, EditError> {
    let unsupported = |what: &str| EditError::Unsupported {
        path: path_text(path),
        what: what.to_string(),
    };
    let docs = yaml::parse_all(src, resolver)?;
    let holder = docs
        .get(doc)
        .and_then(|d| get(d, path))
        .ok_or_else(|| unsupported("no such string"))?;
    let Value::Scalar(s) = &holder.value else {
        return Err(unsupported("not a string"));
    };
    if s.style != Style::Literal {
        return Err(unsupported(
            "the patch is not a literal block (`|`); write it as one to edit it",
        ));
    }
    let inner = s.text.clone();
    let change = Change::Set {
        doc: inner_doc,
        path: inner_path.to_vec(),
        value: value.to_string(),
    };
    let edited = apply(&inner, Resolver::V3, &change).map_err(|e| EditError::Unsupported {
        path: path_text(path),
        what: format!("inside the string: {e}"),
    })?;
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
        (inner.split('\n').collect(), edited.split('\n').collect());
    if old_lines.len() != new_lines.len() {
        return Err(unsupported("the edit would change the patch's lines"));
    }
    let out = splice_lines(src, holder, &old_lines, &new_lines).ok_or_else(|| {
        unsupported("the block's lines are not where its header says (an indentation indicator?)")
    })?;
    check(&out, resolver, &docs, doc, path, &edited)?;
    Ok(out)
}

/// Rewrites the block's content lines that differ: inner line `i` is the
/// `i`-th line after the block's header, after its indentation.
fn splice_lines(src: &str, holder: &Node, old: &[&str], new: &[&str]) -> Option<String> {
    let start = holder.pos.start as usize;
    let header_end = start + src.get(start..)?.find('\n')? + 1;
    let header = src.get(start..header_end)?;
    // An explicit indentation indicator (`|2`) is not read here.
    if header.trim_end().chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut at = header_end;
    while lines.len() < old.len() && at <= src.len() {
        let len = src.get(at..)?.find('\n').unwrap_or(src.len() - at);
        lines.push((at, at + len));
        at += len + 1;
    }
    let indent = lines
        .iter()
        .filter_map(|&(a, b)| src.get(a..b))
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())?;
    let mut out = String::with_capacity(src.len() + 16);
    let mut copied = 0;
    for (i, (o, n)) in old.iter().zip(new).enumerate() {
        if o == n {
            continue;
        }
        let &(a, b) = lines.get(i)?;
        let line = src.get(a..b)?;
        let cr = if line.ends_with('\r') { "\r" } else { "" };
        if line.trim_end_matches('\r').get(indent..)? != *o {
            return None;
        }
        out.push_str(src.get(copied..a + indent)?);
        out.push_str(n);
        out.push_str(cr);
        copied = b;
    }
    out.push_str(src.get(copied..)?);
    Some(out)
}

/// The edited file reads as intended: the string is the edited inner text
/// and every other value is as it was.
fn check(
    out: &str,
    resolver: Resolver,
    before: &[Node],
    doc: usize,
    path: &[Seg],
    edited: &str,
) -> Result<(), EditError> {
    let mismatch = || EditError::Mismatch {
        path: path_text(path),
    };
    let got = yaml::parse_all(out, resolver).map_err(|_| mismatch())?;
    let mut intended = before.to_vec();
    let holder = intended
        .get_mut(doc)
        .and_then(|d| get_mut(d, path))
        .ok_or_else(mismatch)?;
    if let Value::Scalar(s) = &mut holder.value {
        s.text = edited.to_string();
    }
    if got.len() != intended.len() || !got.iter().zip(&intended).all(|(a, b)| same(a, b)) {
        return Err(mismatch());
    }
    Ok(())
}

fn get_mut<'a>(doc: &'a mut Node, path: &[Seg]) -> Option<&'a mut Node> {
    let mut n = doc;
    for seg in path {
        n = match seg {
            Seg::Key(k) => n.get_mut(k)?,
            Seg::Index(i) => match &mut n.value {
                Value::Seq(items) => items.get_mut(*i)?,
                _ => return None,
            },
        };
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: &str = "patches:\n  - target: {kind: Deployment}\n    # keep\n    patch: |-\n      - op: replace\n        path: /spec/template/spec/containers/0/image\n        value: web:1.0   # the version\n\n      - op: add\n        path: /x\n        value: y\n";

    /// `a.b` keys, and `[n]` (a whole segment) for an index.
    fn at(p: &str) -> Vec<Seg> {
        p.split('.')
            .flat_map(|part| match part.split_once('[') {
                Some((key, idx)) => {
                    let i = idx.trim_end_matches(']').parse().unwrap_or_default();
                    let key = (!key.is_empty()).then(|| Seg::Key(key.into()));
                    key.into_iter().chain([Seg::Index(i)]).collect::<Vec<_>>()
                }
                None => vec![Seg::Key(part.into())],
            })
            .collect()
    }

    #[test]
    fn a_value_inside_an_inline_patch_is_set_on_its_line_only() {
        let out = set_in_string(
            K,
            Resolver::V3,
            (0, &at("patches[0].patch")),
            (0, &at("[0].value")),
            "web:1.1",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, K.replace("web:1.0", "web:1.1"));
        let crlf = K.replace('\n', "\r\n");
        let out = set_in_string(
            &crlf,
            Resolver::V3,
            (0, &at("patches[0].patch")),
            (0, &at("[1].value")),
            "z z",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, crlf.replace("value: y", "value: z z"));
    }

    #[test]
    fn folded_and_indicated_blocks_are_refused() {
        let folded = K.replace("patch: |-", "patch: >-");
        let e = set_in_string(
            &folded,
            Resolver::V3,
            (0, &at("patches[0].patch")),
            (0, &at("[0].value")),
            "web:1.1",
        );
        assert!(e.is_err());
        let indicated = "p: |2-\n    - a: 1\n";
        let e = set_in_string(
            indicated,
            Resolver::V3,
            (0, &at("p")),
            (0, &at("[0].a")),
            "2",
        );
        assert!(e.is_err(), "{e:?}");
    }
}
