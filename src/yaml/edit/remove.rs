//! Removing a mapping key or a sequence item, in place: the lines of a
//! block entry (from its indentation to the end of its value's last line,
//! a trailing comment included), or the entry and one separating comma of
//! a flow collection. Every other byte stays. The result is checked as
//! every edit is: parsed again and compared with the document minus the
//! removed node.

use super::{path_text, same, spans, EditError, Seg, Span};
use crate::yaml::{self, Node, Resolver};

/// Removes the key (a last [`Seg::Key`]) or the item (a last
/// [`Seg::Index`]) at `path` of document `doc`.
pub fn remove(
    src: &str,
    resolver: Resolver,
    doc: usize,
    path: &[Seg],
) -> Result<String, EditError> {
    let unsupported = |what: &str| EditError::Unsupported {
        path: path_text(path),
        what: what.to_string(),
    };
    let trees = spans(src)?;
    let root = trees
        .get(doc)
        .ok_or_else(|| unsupported("no such document"))?;
    let (start, end) = range(src, root, path).map_err(|w| unsupported(&w))?;
    let mut out = String::with_capacity(src.len());
    out.push_str(src.get(..start).ok_or_else(|| unsupported("bad offset"))?);
    out.push_str(src.get(end..).ok_or_else(|| unsupported("bad offset"))?);
    let mut intended = yaml::parse_all(src, resolver)?;
    let target = intended
        .get_mut(doc)
        .ok_or_else(|| unsupported("no such document"))?;
    remove_model(target, path).map_err(|w| unsupported(&w))?;
    let got = yaml::parse_all(&out, resolver).map_err(|_| EditError::Mismatch {
        path: path_text(path),
    })?;
    if got.len() != intended.len() || !got.iter().zip(&intended).all(|(a, b)| same(a, b)) {
        return Err(EditError::Mismatch {
            path: path_text(path),
        });
    }
    Ok(out)
}

/// The byte range to cut.
fn range(src: &str, root: &Span, path: &[Seg]) -> Result<(usize, usize), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("empty path".into());
    };
    let mut n = root;
    for seg in parents {
        n = child(n, seg)?.1;
    }
    let (key_start, value) = child(n, last)?;
    match n {
        Span::Map {
            flow: true,
            entries,
            ..
        } => flow_range(entries.iter().map(|(k, v)| (k.start(), v)), key_start),
        Span::Seq {
            flow: true, items, ..
        } => flow_range(items.iter().map(|i| (i.start(), i)), key_start),
        Span::Map { entries, .. } => {
            let first = entries.first().map(|(k, _)| k.start());
            block_range(src, key_start, value, first == Some(key_start), false)
        }
        Span::Seq { .. } => block_range(src, key_start, value, false, true),
        _ => Err("not a collection".into()),
    }
}

/// The child at `seg` of `n`: where its entry starts (the key, or the
/// item) and its value.
fn child<'a>(n: &'a Span, seg: &Seg) -> Result<(usize, &'a Span), String> {
    match (seg, n) {
        (Seg::Key(k), Span::Map { entries, .. }) => entries
            .iter()
            .find(|(key, _)| matches!(key, Span::Scalar { text, .. } if text == k))
            .map(|(key, v)| (key.start(), v))
            .ok_or_else(|| "no such key".into()),
        (Seg::Index(i), Span::Seq { items, .. }) => items
            .get(*i)
            .map(|v| (v.start(), v))
            .ok_or_else(|| "no such item".into()),
        (_, Span::Shared { what, .. }) => Err((*what).into()),
        _ => Err("the path runs into a value of another kind".into()),
    }
}

/// A block entry: its whole lines. An item's range starts at its dash; a
/// mapping's first key in a `- key: v` item cannot go alone.
fn block_range(
    src: &str,
    start: usize,
    value: &Span,
    first_key: bool,
    item: bool,
) -> Result<(usize, usize), String> {
    let line_start = src
        .get(..start)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1);
    let lead = src.get(line_start..start).ok_or("bad offset")?;
    let only_indent = |s: &str| s.chars().all(|c| c == ' ');
    let ok = if item {
        // `  - value`: indentation, the dash, spaces.
        lead.trim_end_matches(' ')
            .strip_suffix('-')
            .is_some_and(only_indent)
    } else {
        only_indent(lead)
    };
    if !ok {
        return Err(if first_key {
            "the first key of a list item cannot be removed alone".into()
        } else {
            "the entry does not start its line".into()
        });
    }
    let value_end = value.content_end().max(start);
    let rest = src.get(value_end..).ok_or("bad offset")?;
    let end = match rest.find('\n') {
        Some(i) => value_end + i + 1,
        None => src.len(),
    };
    // Only spaces and a comment may follow the value on its last line.
    let tail = src.get(value_end..end).unwrap_or_default().trim();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return Err("something follows the value on its line".into());
    }
    Ok((line_start, end))
}

/// A flow entry and one comma: the one after it, or for the last entry
/// the one before it.
fn flow_range<'a>(
    entries: impl Iterator<Item = (usize, &'a Span)>,
    start: usize,
) -> Result<(usize, usize), String> {
    let all: Vec<(usize, &Span)> = entries.collect();
    let i = all
        .iter()
        .position(|(s, _)| *s == start)
        .ok_or("lost the entry")?;
    let end_of = |k: usize| all[k].1.content_end().max(all[k].0);
    if let Some((next, _)) = all.get(i + 1) {
        return Ok((start, *next));
    }
    match i.checked_sub(1) {
        Some(p) => Ok((end_of(p), end_of(i))),
        // The only entry: the collection becomes empty.
        None => Ok((start, end_of(i))),
    }
}

/// The model of the removal.
fn remove_model(root: &mut Node, path: &[Seg]) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("empty path".into());
    };
    let mut n = root;
    for seg in parents {
        n = match seg {
            Seg::Key(k) => n.get_mut(k).ok_or("no such key")?,
            Seg::Index(i) => n
                .as_seq_mut()
                .and_then(|s| s.get_mut(*i))
                .ok_or("no such item")?,
        };
    }
    match last {
        Seg::Key(k) => {
            let m = n.as_map_mut().ok_or("not a mapping")?;
            let pos = m
                .iter()
                .position(|(key, _)| key.key_text() == Some(k))
                .ok_or("no such key")?;
            m.remove(pos);
        }
        Seg::Index(i) => {
            let s = n.as_seq_mut().ok_or("not a sequence")?;
            if *i >= s.len() {
                return Err("no such item".into());
            }
            s.remove(*i);
        }
    }
    // A block collection left empty parses as null.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    fn rm(src: &str, path: &[Seg]) -> String {
        remove(src, Resolver::V3, 0, path).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_block_key_goes_with_its_comment_and_nothing_else() {
        let src = "images:\n  # web\n  - name: web\n    newTag: \"1.2\"  # live\n    digest: sha256:ab\nreplicas: 2\n";
        assert_eq!(
            rm(src, &[k("images"), Seg::Index(0), k("newTag")]),
            "images:\n  # web\n  - name: web\n    digest: sha256:ab\nreplicas: 2\n"
        );
    }

    #[test]
    fn a_block_item_goes_whole() {
        let src = "images:\n- name: a\n  newTag: \"1\"\n- name: b\n  newTag: \"2\"\nx: 1\n";
        assert_eq!(
            rm(src, &[k("images"), Seg::Index(1)]),
            "images:\n- name: a\n  newTag: \"1\"\nx: 1\n"
        );
        assert_eq!(
            rm(src, &[k("images"), Seg::Index(0)]),
            "images:\n- name: b\n  newTag: \"2\"\nx: 1\n"
        );
    }

    #[test]
    fn flow_entries_take_one_comma() {
        let src = "images:\n  - {name: web, newName: r/web, newTag: \"1.4.2\"}  # live\n";
        assert_eq!(
            rm(src, &[k("images"), Seg::Index(0), k("newTag")]),
            "images:\n  - {name: web, newName: r/web}  # live\n"
        );
        assert_eq!(
            rm(src, &[k("images"), Seg::Index(0), k("name")]),
            "images:\n  - {newName: r/web, newTag: \"1.4.2\"}  # live\n"
        );
        assert_eq!(
            rm("a: [1, 2, 3]\n", &[k("a"), Seg::Index(1)]),
            "a: [1, 3]\n"
        );
    }

    #[test]
    fn a_nested_value_goes_with_its_lines() {
        let src = "image:\n  repository: x\n  tag: 1.0\nresources:\n  limits:\n    cpu: 1\nz: 0\n";
        assert_eq!(
            rm(src, &[k("resources")]),
            "image:\n  repository: x\n  tag: 1.0\nz: 0\n"
        );
        assert_eq!(
            rm(src, &[k("image"), k("tag")]),
            "image:\n  repository: x\nresources:\n  limits:\n    cpu: 1\nz: 0\n"
        );
    }

    #[test]
    fn the_first_key_of_an_item_is_refused_alone() {
        let src = "images:\n- name: a\n  newTag: \"1\"\n";
        let e = remove(
            src,
            Resolver::V3,
            0,
            &[k("images"), Seg::Index(0), k("name")],
        );
        assert!(e.is_err());
    }
}
