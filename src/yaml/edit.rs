//! The format-preserving editor: byte splices on the spans of the parser's
//! events, for source files people maintain by hand (promotion edits). It
//! replaces a scalar, inserts a mapping key, appends a sequence item, and
//! never re-serialises: every byte outside the splice stays as it was
//! (comments, blank lines, quoting, anchors, flow collections, CRLF, BOM,
//! other documents). After each splice the text is parsed again and compared
//! with the intended document; a mismatch is an error and the caller keeps
//! the original bytes. It knows nothing about Kubernetes.

use super::node::{Node, Origin, Scalar, Style, Tag, Value};
use super::resolve::{resolve_plain, Resolver};

mod embedded;
mod path;
mod remove;
pub(crate) use embedded::set_in_string;
pub(crate) use path::{is_yaml_break, parse_path, path_text, try_parse_path, PathError};
pub(crate) use remove::remove;

/// One step of a path into a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// A value to insert: strings, mappings and sequences of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insert {
    /// A string scalar.
    Scalar(String),
    /// A mapping, in this order.
    Map(Vec<(String, Insert)>),
    /// A sequence.
    Seq(Vec<Insert>),
}

/// One edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Sets the scalar at `path` to the string `value`; keys missing along
    /// the path are inserted (as mappings) in the style of their siblings.
    Set {
        /// Document index in the stream.
        doc: usize,
        /// Where.
        path: Vec<Seg>,
        /// The new value.
        value: String,
    },
    /// Appends `item` to the sequence at `path` (inserting the key with a
    /// one-item sequence when it is missing).
    Append {
        /// Document index in the stream.
        doc: usize,
        /// The sequence.
        path: Vec<Seg>,
        /// The item.
        item: Insert,
    },
}

/// Why an edit was refused (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The source (or the edited text) does not parse.
    #[error(transparent)]
    Parse(#[from] super::Error),
    /// The path leads nowhere editable.
    #[error("{path}: {what}")]
    Unsupported {
        /// The path, dotted.
        path: String,
        /// Why.
        what: String,
    },
    /// The edited text parses to something other than intended.
    #[error(
        "{path}: the edited file would not parse to the intended document; nothing was changed"
    )]
    Mismatch {
        /// The path, dotted.
        path: String,
    },
}

/// A node's spans, as the editor needs them (from [`Pos`]).
#[derive(Clone, Debug)]
enum Span {
    Scalar {
        start: usize,
        end: usize,
        style: Style,
        text: String,
        tag: Tag,
    },
    /// Written elsewhere: an alias, or copied by a `<<` merge key.
    Shared { end: usize, what: &'static str },
    Map {
        start: usize,
        end: usize,
        flow: bool,
        entries: Vec<(Span, Span)>,
    },
    Seq {
        start: usize,
        end: usize,
        flow: bool,
        items: Vec<Span>,
    },
}

impl Span {
    fn start(&self) -> usize {
        match self {
            Span::Scalar { start, .. } | Span::Map { start, .. } | Span::Seq { start, .. } => {
                *start
            }
            Span::Shared { end, .. } => *end,
        }
    }

    /// Where the node's own text ends (a block collection's ends with its
    /// last value, before the line break).
    fn content_end(&self) -> usize {
        match self {
            Span::Scalar { end, .. }
            | Span::Shared { end, .. }
            | Span::Map { end, .. }
            | Span::Seq { end, .. } => *end,
        }
    }

    /// A mapping key: found by its text wherever it was written (a merged
    /// key's value is shared, and says so).
    fn key(n: &Node) -> Span {
        match &n.value {
            Value::Scalar(sc) => Span::Scalar {
                start: n.pos.start as usize,
                end: n.pos.end as usize,
                style: sc.style,
                text: sc.text.clone(),
                tag: sc.tag.clone(),
            },
            _ => Span::of(n),
        }
    }

    fn of(n: &Node) -> Span {
        let (start, end) = (n.pos.start as usize, n.pos.end as usize);
        match n.pos.origin() {
            Origin::Alias { .. } => {
                return Span::Shared {
                    end,
                    what: "the value is an alias; edit its anchor",
                }
            }
            Origin::Merge => {
                return Span::Shared {
                    end,
                    what: "the value comes from a `<<` merge key; edit where it is written",
                }
            }
            Origin::Source => {}
        }
        match &n.value {
            Value::Scalar(sc) => Span::Scalar {
                start,
                end,
                style: sc.style,
                text: sc.text.clone(),
                tag: sc.tag.clone(),
            },
            Value::Map(entries) => Span::Map {
                start,
                end,
                flow: n.pos.flow,
                entries: entries
                    .iter()
                    .map(|(k, v)| (Span::key(k), Span::of(v)))
                    .collect(),
            },
            Value::Seq(items) => Span::Seq {
                start,
                end,
                flow: n.pos.flow,
                items: items.iter().map(Span::of).collect(),
            },
        }
    }
}

/// The span tree of every document.
fn spans(src: &str) -> Result<Vec<Span>, super::Error> {
    Ok(super::parse_all(src, Resolver::V3)?
        .iter()
        .map(Span::of)
        .collect())
}

/// Applies one change to `src`, checked by parsing the result with
/// `resolver` and comparing it with the change applied to the parsed
/// source. Returns the new text.
pub fn apply(src: &str, resolver: Resolver, change: &Change) -> Result<String, EditError> {
    let (doc, path) = match change {
        Change::Set { doc, path, .. } | Change::Append { doc, path, .. } => (*doc, path),
    };
    let unsupported = |what: &str| EditError::Unsupported {
        path: path_text(path),
        what: what.to_string(),
    };
    let trees = spans(src)?;
    let root = trees
        .get(doc)
        .ok_or_else(|| unsupported("no such document"))?;
    let nl = if src.contains("\r\n") { "\r\n" } else { "\n" };
    let (at, remove, text) = splice(src, root, path, change, nl).map_err(|w| unsupported(&w))?;
    let mut out = String::with_capacity(src.len() + text.len());
    out.push_str(&src[..at]);
    out.push_str(&text);
    out.push_str(&src[at + remove..]);
    let mut intended = super::parse_all(src, resolver)?;
    let target = intended
        .get_mut(doc)
        .ok_or_else(|| unsupported("no such document"))?;
    match change {
        // A replaced scalar: every copy of it (through an alias of an
        // anchored ancestor, or a `<<` merge) keeps its span, and changes too.
        Change::Set { value, .. } if remove > 0 => {
            let span = (at as u32, (at + remove) as u32);
            let old = find_span(target, span).ok_or_else(|| unsupported("lost the scalar"))?;
            let new = Node::scalar(value.clone(), kept_tag(Some(&old), value));
            replace_span(target, span, &new);
        }
        _ => apply_model(target, path, change).map_err(|w| unsupported(&w))?,
    }
    let got = super::parse_all(&out, resolver).map_err(|_| EditError::Mismatch {
        path: path_text(path),
    })?;
    if got.len() != intended.len() || !got.iter().zip(&intended).all(|(a, b)| same(a, b)) {
        return Err(EditError::Mismatch {
            path: path_text(path),
        });
    }
    Ok(out)
}

/// The scalar written at `span`.
fn find_span(n: &Node, span: (u32, u32)) -> Option<Scalar> {
    match &n.value {
        Value::Scalar(s) if (n.pos.start, n.pos.end) == span => Some(s.clone()),
        Value::Scalar(_) => None,
        Value::Seq(items) => items.iter().find_map(|i| find_span(i, span)),
        Value::Map(entries) => entries.iter().find_map(|(_, v)| find_span(v, span)),
    }
}

/// Replaces every value scalar written at `span` (the original and its copies).
fn replace_span(n: &mut Node, span: (u32, u32), new: &Node) {
    match &mut n.value {
        Value::Scalar(_) => {
            if (n.pos.start, n.pos.end) == span {
                n.value = new.value.clone();
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|i| replace_span(i, span, new)),
        Value::Map(entries) => entries
            .iter_mut()
            .for_each(|(_, v)| replace_span(v, span, new)),
    }
}

/// Applies several changes in order; all or nothing.
#[cfg(test)]
pub fn apply_all(src: &str, resolver: Resolver, changes: &[Change]) -> Result<String, EditError> {
    let mut text = src.to_string();
    for c in changes {
        text = apply(&text, resolver, c)?;
    }
    Ok(text)
}

/// Reads the string value at `path` of document `doc` (parsed with `resolver`).
pub fn get<'a>(doc: &'a Node, path: &[Seg]) -> Option<&'a Node> {
    let mut n = doc;
    for seg in path {
        n = match seg {
            Seg::Key(k) => n.get(k)?,
            Seg::Index(i) => n.as_seq()?.get(*i)?,
        };
    }
    Some(n)
}

/// Structural equality: values and resolved tags, not positions or styles.
pub fn same(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Scalar(x), Value::Scalar(y)) => x.text == y.text && x.tag == y.tag,
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        _ => false,
    }
}

fn insert_node(i: &Insert) -> Node {
    match i {
        Insert::Scalar(s) => Node::string(s.clone()),
        Insert::Map(m) => Node::new(Value::Map(
            m.iter()
                .map(|(k, v)| (Node::string(k.clone()), insert_node(v)))
                .collect(),
        )),
        Insert::Seq(s) => Node::new(Value::Seq(s.iter().map(insert_node).collect())),
    }
}

/// The tag a replaced scalar keeps: a plain non-string stays that type
/// when the new text still resolves to it under both YAML versions.
fn kept_tag(old: Option<&Scalar>, value: &str) -> Tag {
    match old {
        Some(s)
            if s.style == Style::Plain
                && s.tag != Tag::Str
                && resolve_plain(value, Resolver::V2) == s.tag
                && resolve_plain(value, Resolver::V3) == s.tag =>
        {
            s.tag.clone()
        }
        _ => Tag::Str,
    }
}

/// The change applied to the document model: what the file must parse to.
fn apply_model(root: &mut Node, path: &[Seg], change: &Change) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("empty path".into());
    };
    let mut n = root;
    for seg in parents {
        n = match seg {
            Seg::Key(k) => {
                let m = n.as_map_mut().ok_or("not a mapping")?;
                let pos = match m.iter().position(|(key, _)| key.key_text() == Some(k)) {
                    Some(p) => p,
                    None => {
                        m.push((Node::string(k.clone()), Node::map()));
                        m.len() - 1
                    }
                };
                &mut m[pos].1
            }
            Seg::Index(i) => n
                .as_seq_mut()
                .and_then(|s| s.get_mut(*i))
                .ok_or("no such item")?,
        };
    }
    let slot: Option<&mut Node> = match last {
        Seg::Key(k) => n.get_mut(k),
        Seg::Index(i) => n.as_seq_mut().and_then(|s| s.get_mut(*i)),
    };
    let new = match (change, slot) {
        (Change::Set { value, .. }, Some(slot)) => {
            let tag = kept_tag(slot.as_scalar(), value);
            *slot = Node::scalar(value.clone(), tag);
            return Ok(());
        }
        (Change::Set { value, .. }, None) => Node::string(value.clone()),
        (Change::Append { item, .. }, Some(slot)) => {
            let s = slot.as_seq_mut().ok_or("not a sequence")?;
            s.push(insert_node(item));
            return Ok(());
        }
        (Change::Append { item, .. }, None) => Node::new(Value::Seq(vec![insert_node(item)])),
    };
    match last {
        Seg::Key(k) => n
            .as_map_mut()
            .ok_or("not a mapping")?
            .push((Node::string(k.clone()), new)),
        Seg::Index(_) => return Err("no such item".into()),
    }
    Ok(())
}

/// Where to splice: (offset, bytes removed, text inserted).
fn splice(
    src: &str,
    root: &Span,
    path: &[Seg],
    change: &Change,
    nl: &str,
) -> Result<(usize, usize, String), String> {
    let mut n = root;
    // Whether the value sits inside a flow collection (`,` `[` … end plain text there).
    let mut flow = false;
    for (depth, seg) in path.iter().enumerate() {
        flow |= matches!(
            n,
            Span::Map { flow: true, .. } | Span::Seq { flow: true, .. }
        );
        let next = match (seg, n) {
            (Seg::Key(k), Span::Map { entries, .. }) => entries
                .iter()
                .find(|(key, _)| matches!(key, Span::Scalar { text, .. } if text == k))
                .map(|(_, v)| v),
            (Seg::Index(i), Span::Seq { items, .. }) => items.get(*i),
            (_, Span::Shared { what, .. }) => return Err((*what).into()),
            _ => return Err("the path runs into a value of another kind".into()),
        };
        match next {
            Some(v) => n = v,
            None => {
                let Span::Map { .. } = n else {
                    return Err("no such item".into());
                };
                let value = missing_value(&path[depth + 1..], change)?;
                let Seg::Key(k) = seg else {
                    return Err("no such item".into());
                };
                return insert_entry(src, root, n, k, &value, nl);
            }
        }
    }
    match (change, n) {
        (Change::Set { value, .. }, Span::Scalar { .. }) => replace_scalar(n, value, flow),
        (Change::Append { item, .. }, Span::Seq { .. }) => append_item(src, n, item, nl),
        (_, Span::Shared { what, .. }) => Err((*what).into()),
        _ => Err("the path leads to a value of another kind".into()),
    }
}

/// The value to insert for the part of the path that does not exist yet.
fn missing_value(rest: &[Seg], change: &Change) -> Result<Insert, String> {
    let mut value = match change {
        Change::Set { value, .. } => Insert::Scalar(value.clone()),
        Change::Append { item, .. } => Insert::Seq(vec![item.clone()]),
    };
    for seg in rest.iter().rev() {
        let Seg::Key(k) = seg else {
            return Err("no such item".into());
        };
        value = Insert::Map(vec![(k.clone(), value)]);
    }
    Ok(value)
}

fn replace_scalar(n: &Span, value: &str, flow: bool) -> Result<(usize, usize, String), String> {
    let Span::Scalar {
        start,
        end,
        style,
        text,
        tag,
    } = n
    else {
        return Err("not a scalar".into());
    };
    // The span starts after any `&anchor` and `!tag`.
    let s = *start;
    if matches!(tag, Tag::Other(_)) {
        return Err("a scalar with a tag cannot be edited".into());
    }
    let new = match style {
        Style::Plain => {
            let keep = kept_tag(
                Some(&Scalar {
                    text: text.clone(),
                    tag: tag.clone(),
                    style: Style::Plain,
                }),
                value,
            );
            if plain_ok(value, flow) || (keep != Tag::Str && !value.is_empty()) {
                value.to_string()
            } else {
                double_quoted(value)
            }
        }
        Style::Single if !value.chars().any(char::is_control) => {
            format!("'{}'", value.replace('\'', "''"))
        }
        Style::Single | Style::Double => double_quoted(value),
        Style::Literal | Style::Folded => {
            return Err("block scalars (| and >) are not edited".into())
        }
    };
    Ok((s, end - s, new))
}

/// Whether `v` may be written plain: a string under YAML 1.1 and 1.2 (as
/// go-yaml v2 and v3 resolve it), free of indicators, and not starting
/// with a blank (which a plain scalar loses).
pub fn plain_ok(v: &str, flow: bool) -> bool {
    let Some(first) = v.chars().next() else {
        return false;
    };
    resolve_plain(v, Resolver::V2) == Tag::Str
        && resolve_plain(v, Resolver::V3) == Tag::Str
        && !"-?:,[]{}#&*!|>'\"%@` ".contains(first)
        && !v.ends_with([' ', ':'])
        && !v.contains(": ")
        && !v.contains(" #")
        && !v.chars().any(char::is_control)
        && !(flow && v.contains([',', '[', ']', '{', '}']))
}

/// go-yaml's double-quoted form of a string.
pub fn double_quoted(v: &str) -> String {
    let mut s = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\r' => s.push_str("\\r"),
            c if c.is_control() => s.push_str(&format!("\\x{:02X}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

fn scalar_text(v: &str, flow: bool) -> String {
    if plain_ok(v, flow) {
        v.to_string()
    } else {
        double_quoted(v)
    }
}

fn column(src: &str, at: usize) -> usize {
    at - src[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The offset just after the line holding `at` (a line break is added
/// to the insertion when the file does not end with one).
fn after_line(src: &str, at: usize, nl: &str) -> (usize, &'static str) {
    match src[at..].find('\n') {
        Some(i) => (at + i + 1, ""),
        None if nl == "\r\n" => (src.len(), "\r\n"),
        None => (src.len(), "\n"),
    }
}

/// `{a: b, c: [d]}`.
fn flow_text(i: &Insert) -> String {
    match i {
        Insert::Scalar(s) => scalar_text(s, true),
        Insert::Map(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar_text(k, true), flow_text(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Insert::Seq(s) => {
            let parts: Vec<String> = s.iter().map(flow_text).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// Block lines for `key: value` at `indent` (nested levels `step` deeper).
fn block_entry(key: &str, v: &Insert, indent: usize, step: usize, nl: &str) -> String {
    let pad = " ".repeat(indent);
    let key = scalar_text(key, false);
    match v {
        Insert::Scalar(s) => format!("{pad}{key}: {}{nl}", scalar_text(s, false)),
        Insert::Map(m) if m.is_empty() => format!("{pad}{key}: {{}}{nl}"),
        Insert::Seq(s) if s.is_empty() => format!("{pad}{key}: []{nl}"),
        Insert::Map(m) => {
            let mut out = format!("{pad}{key}:{nl}");
            for (k, v) in m {
                out.push_str(&block_entry(k, v, indent + step, step, nl));
            }
            out
        }
        Insert::Seq(items) => {
            let mut out = format!("{pad}{key}:{nl}");
            for it in items {
                out.push_str(&block_item(it, indent + step, step, nl));
            }
            out
        }
    }
}

/// A block sequence item whose dash is at `dash`.
fn block_item(v: &Insert, dash: usize, step: usize, nl: &str) -> String {
    let pad = " ".repeat(dash);
    match v {
        Insert::Map(m) if !m.is_empty() => {
            let mut out = String::new();
            for (i, (k, v)) in m.iter().enumerate() {
                let e = block_entry(k, v, dash + 2, step, nl);
                if i == 0 {
                    out.push_str(&format!("{pad}- {}", &e[dash + 2..]));
                } else {
                    out.push_str(&e);
                }
            }
            out
        }
        Insert::Scalar(s) => format!("{pad}- {}{nl}", scalar_text(s, false)),
        other => format!("{pad}- {}{nl}", flow_text(other)),
    }
}

/// The indentation step of the document: how much deeper the first nested
/// block mapping's keys sit than their parent key (2 when nothing says).
fn step_of(src: &str, n: &Span) -> Option<usize> {
    match n {
        Span::Map { entries, .. } => entries.iter().find_map(|(k, v)| {
            if let Span::Map {
                entries: inner,
                flow: false,
                ..
            } = v
            {
                if let Some((k2, _)) = inner.first() {
                    let d = column(src, k2.start()).saturating_sub(column(src, k.start()));
                    if d > 0 {
                        return Some(d);
                    }
                }
            }
            step_of(src, v)
        }),
        Span::Seq { items, .. } => items.iter().find_map(|i| step_of(src, i)),
        _ => None,
    }
}

fn insert_entry(
    src: &str,
    root: &Span,
    map: &Span,
    key: &str,
    value: &Insert,
    nl: &str,
) -> Result<(usize, usize, String), String> {
    let Span::Map {
        end, flow, entries, ..
    } = map
    else {
        return Err("not a mapping".into());
    };
    if *flow {
        let close = src[..*end].rfind('}').ok_or("unclosed flow mapping")?;
        let entry = format!("{}: {}", scalar_text(key, true), flow_text(value));
        return Ok(match entries.last() {
            Some((_, v)) => (v.content_end(), 0, format!(", {entry}")),
            None => (close, 0, entry),
        });
    }
    let Some((first, _)) = entries.first() else {
        return Err("an empty block mapping cannot take keys".into());
    };
    let indent = column(src, first.start());
    let step = step_of(src, root).unwrap_or(2);
    let (at, lead) = after_line(src, map.content_end(), nl);
    Ok((
        at,
        0,
        format!("{lead}{}", block_entry(key, value, indent, step, nl)),
    ))
}

fn append_item(
    src: &str,
    seq: &Span,
    item: &Insert,
    nl: &str,
) -> Result<(usize, usize, String), String> {
    let Span::Seq {
        end, flow, items, ..
    } = seq
    else {
        return Err("not a sequence".into());
    };
    if *flow {
        let close = src[..*end].rfind(']').ok_or("unclosed flow sequence")?;
        return Ok(match items.last() {
            Some(last) => (last.content_end(), 0, format!(", {}", flow_text(item))),
            None => (close, 0, flow_text(item)),
        });
    }
    let first = items
        .first()
        .ok_or("an empty block sequence cannot take items")?;
    // The dash sits before the first item's content, on its line.
    let line_start = src[..first.start()].rfind('\n').map_or(0, |i| i + 1);
    let dash = src[line_start..first.start()]
        .rfind('-')
        .ok_or("cannot find the sequence's dash")?;
    let (at, lead) = after_line(src, seq.content_end(), nl);
    let step = match first {
        Span::Map { entries, .. } => entries.first().map_or(2, |(k, _)| {
            column(src, k.start()).saturating_sub(dash).max(2)
        }),
        _ => 2,
    };
    let mut text = block_item(item, dash, 2, nl);
    if step != 2 {
        // Copy the sibling's gap between the dash and its content.
        let pad = " ".repeat(step - 1);
        text = text.replacen("- ", &format!("-{pad}"), 1);
        let fix: Vec<String> = text
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    format!("{}{l}", " ".repeat(step - 2))
                }
            })
            .collect();
        text = fix.concat();
    }
    Ok((at, 0, format!("{lead}{text}")))
}

#[cfg(test)]
mod tests;
