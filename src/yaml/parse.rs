//! Parsing: libyaml-safer events into our node tree, with aliases expanded,
//! merge keys applied and scalars resolved by the chosen go-yaml rules.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use libyaml_safer::{EventData, Parser, ScalarStyle};

use super::node::{Node, Pos, Scalar, Style, Tag, Value};
use super::resolve::{go_parse_float, parse_int, resolve_plain, strip_underscores, Resolver};
use super::Error;

/// Parses every document of a YAML stream. An empty document (or one holding
/// only comments) parses to a null node.
pub fn parse_all(src: &str, resolver: Resolver) -> Result<Vec<Node>, Error> {
    // libyaml-safer 0.3 panics on a few inputs instead of failing (its issues
    // #6 and #7); a panic there is a syntax error to us, never a crash.
    silence_parser_panics();
    let failed = || {
        Err(Error::Syntax {
            line: 0,
            column: 0,
            problem: "the YAML parser could not read this input".into(),
        })
    };
    match catch_unwind(AssertUnwindSafe(|| Builder::new(resolver).run(src, None))) {
        Ok(result) => result,
        // One of those panics is a block scalar whose last line runs into
        // the end of input: libyaml reads it, without a final line break.
        // Parse again with the break added, then take it back off.
        Err(_) if !src.is_empty() && !src.ends_with('\n') => {
            let padded = format!("{src}\n");
            catch_unwind(AssertUnwindSafe(|| {
                Builder::new(resolver).run(&padded, Some(src.len()))
            }))
            .unwrap_or_else(|_| failed())
        }
        Err(_) => failed(),
    }
}

/// Parses a stream that must hold at most one document (null when empty).
pub fn parse_one(src: &str, resolver: Resolver) -> Result<Node, Error> {
    let mut docs = parse_all(src, resolver)?;
    Ok(if docs.is_empty() {
        Node::null()
    } else {
        docs.swap_remove(0)
    })
}

/// Installs, once per process, a panic hook that keeps quiet about panics
/// raised inside libyaml-safer (we turn those into errors) and defers to the
/// previous hook for every other panic.
fn silence_parser_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let inside = info
                .location()
                .is_some_and(|l| l.file().contains("libyaml-safer"));
            if !inside {
                previous(info);
            }
        }));
    });
}

enum Frame {
    Seq(Vec<Node>, Pos, Option<String>),
    /// Entries so far, the key waiting for its value, position, anchor.
    Map(Vec<(Node, Node)>, Option<Node>, Pos, Option<String>),
}

struct Builder {
    resolver: Resolver,
    anchors: HashMap<String, Node>,
    stack: Vec<Frame>,
    docs: Vec<Node>,
}

impl Builder {
    fn new(resolver: Resolver) -> Builder {
        Builder {
            resolver,
            anchors: HashMap::new(),
            stack: Vec::new(),
            docs: Vec::new(),
        }
    }

    /// `eof`: the input was padded with a line break after this offset.
    fn run(mut self, src: &str, eof: Option<usize>) -> Result<Vec<Node>, Error> {
        let mut input = src.as_bytes();
        let mut parser = Parser::new();
        parser.set_input_string(&mut input);
        loop {
            let event = parser.parse().map_err(syntax)?;
            let pos = Pos {
                offset: event.start_mark.index as u32,
                line: event.start_mark.line as u32 + 1,
            };
            match event.data {
                EventData::StreamStart { .. } => {}
                EventData::StreamEnd => break,
                // An empty document arrives as an empty plain scalar (null).
                EventData::DocumentStart { .. } => self.anchors.clear(),
                EventData::DocumentEnd { .. } => {}
                EventData::Alias { anchor } => {
                    let node = self
                        .anchors
                        .get(&anchor)
                        .cloned()
                        .ok_or_else(|| Error::Syntax {
                            line: pos.line,
                            column: event.start_mark.column as u32 + 1,
                            problem: format!("unknown anchor '{anchor}' referenced"),
                        })?;
                    self.push(Node { pos, ..node }, None)?;
                }
                EventData::Scalar {
                    anchor,
                    tag,
                    mut value,
                    style,
                    ..
                } => {
                    let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
                    if block
                        && eof.is_some_and(|n| event.end_mark.index as usize >= n)
                        && value.ends_with('\n')
                    {
                        value.pop();
                    }
                    let scalar = self.scalar(value, tag, style, pos)?;
                    self.push(Node::at(Value::Scalar(scalar), pos), anchor)?;
                }
                EventData::SequenceStart { anchor, .. } => {
                    self.stack.push(Frame::Seq(Vec::new(), pos, anchor));
                }
                EventData::MappingStart { anchor, .. } => {
                    self.stack.push(Frame::Map(Vec::new(), None, pos, anchor));
                }
                EventData::SequenceEnd | EventData::MappingEnd => {
                    let (node, anchor) = match self.stack.pop() {
                        Some(Frame::Seq(items, p, a)) => (Node::at(Value::Seq(items), p), a),
                        Some(Frame::Map(entries, _, p, a)) => (merge_keys(entries, p)?, a),
                        None => break,
                    };
                    self.push(node, anchor)?;
                }
            }
        }
        Ok(self.docs)
    }

    fn scalar(
        &self,
        text: String,
        tag: Option<String>,
        style: ScalarStyle,
        pos: Pos,
    ) -> Result<Scalar, Error> {
        let style = match style {
            ScalarStyle::SingleQuoted => Style::Single,
            ScalarStyle::DoubleQuoted => Style::Double,
            ScalarStyle::Literal => Style::Literal,
            ScalarStyle::Folded => Style::Folded,
            _ => Style::Plain,
        };
        let tag = match tag.as_deref() {
            // go-yaml v2 keeps timestamps as strings when decoding into interface{}.
            None if style == Style::Plain => match resolve_plain(&text, self.resolver) {
                Tag::Timestamp if self.resolver == Resolver::V2 => Tag::Str,
                tag => tag,
            },
            None | Some("!") => Tag::Str,
            Some(t) => explicit_tag(t, &text, self.resolver).ok_or_else(|| Error::Syntax {
                line: pos.line,
                column: 0,
                problem: format!("cannot decode `{text}` as a {}", short_tag(t)),
            })?,
        };
        Ok(Scalar { text, tag, style })
    }

    fn push(&mut self, node: Node, anchor: Option<String>) -> Result<(), Error> {
        if let Some(a) = anchor {
            self.anchors.insert(a, node.clone());
        }
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Frame::Seq(items, ..)) => items.push(node),
            Some(Frame::Map(entries, key, ..)) => match key.take() {
                Some(k) => entries.push((k, node)),
                None => *key = Some(node),
            },
        }
        Ok(())
    }
}

fn short_tag(t: &str) -> String {
    match t.strip_prefix("tag:yaml.org,2002:") {
        Some(rest) => format!("!!{rest}"),
        None => t.to_string(),
    }
}

/// The tag of an explicitly tagged scalar; `None` when the text cannot have it
/// (go-yaml: "cannot decode !!str `x` as a !!int").
fn explicit_tag(t: &str, text: &str, resolver: Resolver) -> Option<Tag> {
    let resolved = resolve_plain(text, resolver);
    let plain = strip_underscores(text);
    Some(match short_tag(t).as_str() {
        "!!str" => Tag::Str,
        "!!int" if resolved == Tag::Int => Tag::Int,
        "!!float" if matches!(resolved, Tag::Int | Tag::Float) => Tag::Float,
        "!!float" if go_parse_float(&plain).is_some() || parse_int(&plain).is_some() => Tag::Float,
        "!!bool" if resolved == Tag::Bool => Tag::Bool,
        "!!null" if resolved == Tag::Null => Tag::Null,
        "!!timestamp" if resolved == Tag::Timestamp => Tag::Timestamp,
        "!!int" | "!!float" | "!!bool" | "!!null" | "!!timestamp" => return None,
        other => Tag::Other(other.to_string()),
    })
}

/// Applies `<<` merge keys as kyaml's DeAnchor does: explicit keys win, and
/// among a sequence of merged maps the earlier map wins.
fn merge_keys(entries: Vec<(Node, Node)>, pos: Pos) -> Result<Node, Error> {
    let is_merge = |k: &Node| matches!(&k.value, Value::Scalar(s) if s.text == "<<" && s.style == Style::Plain);
    if !entries.iter().any(|(k, _)| is_merge(k)) {
        return Ok(Node::at(Value::Map(entries), pos));
    }
    let mut own = Vec::new();
    let mut sources = Vec::new();
    for (k, v) in entries {
        if !is_merge(&k) {
            own.push((k, v));
            continue;
        }
        if !sources.is_empty() {
            return Err(merge_error(pos, "duplicate merge key"));
        }
        match v.value {
            Value::Map(m) => sources.push(m),
            Value::Seq(items) => {
                for item in items.into_iter().rev() {
                    match item.value {
                        Value::Map(m) => sources.push(m),
                        _ => {
                            return Err(merge_error(
                                pos,
                                "map merge requires map or sequence of maps as the value",
                            ))
                        }
                    }
                }
            }
            _ => {
                return Err(merge_error(
                    pos,
                    "map merge requires map or sequence of maps as the value",
                ))
            }
        }
    }
    let mut out = Node::at(Value::Map(own.clone()), pos);
    for source in sources {
        for (k, v) in source {
            let Some(key) = k.key_text().map(str::to_string) else {
                continue;
            };
            if !own.iter().any(|(ok, _)| ok.key_text() == Some(&key)) {
                out.set(&key, v);
            }
        }
    }
    Ok(out)
}

fn merge_error(pos: Pos, problem: &str) -> Error {
    Error::Syntax {
        line: pos.line,
        column: 0,
        problem: problem.to_string(),
    }
}

fn syntax(e: libyaml_safer::Error) -> Error {
    let mark = e.problem_mark().unwrap_or_default();
    let mut problem = e.problem().to_string();
    if let (Some(ctx), Some(cm)) = (e.context(), e.context_mark()) {
        problem = format!("{problem} ({ctx} at line {})", cm.line + 1);
    }
    Error::Syntax {
        line: mark.line as u32 + 1,
        column: mark.column as u32 + 1,
        problem,
    }
}

impl Node {
    /// A node at a source position.
    pub fn at(value: Value, pos: Pos) -> Node {
        Node { value, pos }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(src: &str) -> Node {
        parse_one(src, Resolver::V3).unwrap()
    }

    #[test]
    fn maps_seqs_scalars_and_positions() {
        let n = one("a: 1\nb:\n- x\n- 'y'\nc: {d: true}\n");
        assert_eq!(n.get("a").unwrap().as_scalar().unwrap().tag, Tag::Int);
        let b = n.get("b").unwrap().as_seq().unwrap();
        assert_eq!(b[1].as_scalar().unwrap().style, Style::Single);
        assert_eq!(b[1].pos.line, 4);
        assert_eq!(n.get_path(&["c", "d"]).unwrap().kind_name(), "bool");
    }

    #[test]
    fn multi_document_and_empty_documents() {
        let docs = parse_all("a: 1\n---\n---\nb: 2\n", Resolver::V3).unwrap();
        assert_eq!(docs.len(), 3);
        assert!(docs[1].is_null());
        assert!(parse_all("", Resolver::V3).unwrap().is_empty());
        assert!(parse_all("# only a comment\n", Resolver::V3)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn aliases_and_merge_keys() {
        let n = one("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nz: *b\n");
        assert_eq!(n.get_path(&["other", "x"]).unwrap().as_str(), Some("1"));
        assert_eq!(n.get_path(&["other", "y"]).unwrap().as_str(), Some("3"));
        assert_eq!(n.get_path(&["z", "y"]).unwrap().as_str(), Some("2"));
    }

    #[test]
    fn explicit_tags() {
        let n = one("a: !!str 3\nb: !!int \"4\"\nc: !custom x\nd: ! 5\n");
        assert_eq!(n.get("a").unwrap().as_scalar().unwrap().tag, Tag::Str);
        assert_eq!(n.get("b").unwrap().as_scalar().unwrap().tag, Tag::Int);
        assert_eq!(
            n.get("c").unwrap().as_scalar().unwrap().tag,
            Tag::Other("!custom".into())
        );
        assert_eq!(n.get("d").unwrap().as_scalar().unwrap().tag, Tag::Str);
        assert!(parse_one("a: !!int abc\n", Resolver::V3).is_err());
    }

    #[test]
    fn block_scalar_at_end_of_input_without_a_line_break() {
        // libyaml keeps the content and drops the missing final break.
        for (src, want) in [
            ("a: |\n  x\n  y", "x\ny"),
            ("a: |+\n  x", "x"),
            ("a: >\n  x\n  y", "x y"),
            ("- |-\n  x", "x"),
            ("a: |\n  x\n", "x\n"),
        ] {
            let n = parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            let v = n.as_map().map(|m| &m[0].1).or(n.as_seq().map(|s| &s[0]));
            assert_eq!(v.and_then(Node::as_str), Some(want), "{src:?}");
        }
    }

    #[test]
    fn errors_carry_line_and_never_panic() {
        let e = parse_one("a: b\n  c: d\n  - e\n", Resolver::V3).unwrap_err();
        assert!(matches!(e, Error::Syntax { line: 2, .. }), "{e:?}");
        // libyaml-safer issues #6 and #7 panic inside the crate: returning at
        // all (either way) is what this checks.
        let _ = parse_all("foo: |  \n", Resolver::V3);
        let _ = parse_all("{a: !!str}", Resolver::V3);
        assert!(parse_one("a: *nope\n", Resolver::V3).is_err());
    }
}
