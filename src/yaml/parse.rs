//! Parsing: libyaml-safer events into our node tree, with aliases expanded,
//! merge keys applied and scalars resolved by the chosen go-yaml rules.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use libyaml_safer::{EventData, MappingStyle, Parser, ScalarStyle, SequenceStyle};

use super::node::{Node, Origin, Pos, Scalar, Style, Tag, Value};
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
    match catch_unwind(AssertUnwindSafe(|| {
        Builder::new(resolver, src, src.len()).run()
    })) {
        Ok(result) => result,
        // One of those panics is a block scalar whose last line runs into
        // the end of input: libyaml reads it, without a final line break.
        // Parse again with the break added, then take it back off.
        Err(_) if !src.is_empty() && !src.ends_with('\n') => {
            let padded = format!("{src}\n");
            catch_unwind(AssertUnwindSafe(|| {
                Builder::new(resolver, &padded, src.len()).run()
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

/// A collection being built: its entries so far, where it is, its anchor.
struct Frame {
    items: Items,
    pos: Pos,
    anchor: Option<String>,
}

enum Items {
    Seq(Vec<Node>),
    /// Entries so far and the key waiting for its value.
    Map(Vec<(Node, Node)>, Option<Node>),
}

struct Builder<'a> {
    resolver: Resolver,
    /// The text parsed (with the line break added when padded).
    src: &'a str,
    /// The length of the caller's text: spans never reach past it.
    len: usize,
    /// libyaml consumes a byte-order mark before counting: add its length back.
    bom: usize,
    anchors: HashMap<String, Node>,
    stack: Vec<Frame>,
    docs: Vec<Node>,
}

impl<'a> Builder<'a> {
    /// `len`: the caller's text is `src[..len]` (a line break was added after it).
    fn new(resolver: Resolver, src: &'a str, len: usize) -> Builder<'a> {
        Builder {
            resolver,
            src,
            len,
            bom: if src.starts_with('\u{feff}') { 3 } else { 0 },
            anchors: HashMap::new(),
            stack: Vec::new(),
            docs: Vec::new(),
        }
    }

    fn run(mut self) -> Result<Vec<Node>, Error> {
        let mut input = self.src.as_bytes();
        let mut parser = Parser::new();
        parser.set_input_string(&mut input);
        loop {
            let event = parser.parse().map_err(syntax)?;
            let start = self.offset(event.start_mark.index);
            let end = self.offset(event.end_mark.index);
            let line = event.start_mark.line as u32 + 1;
            let pos = |start, end| Pos {
                start,
                end,
                line,
                ..Pos::default()
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
                            line,
                            column: event.start_mark.column as u32 + 1,
                            problem: format!("unknown anchor '{anchor}' referenced"),
                        })?;
                    let origin = Origin::Alias {
                        anchor: node.pos.start,
                    };
                    let pos = Pos {
                        origin,
                        flow: node.pos.flow,
                        ..pos(start, end)
                    };
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
                        && self.src.len() > self.len
                        && event.end_mark.index as usize + self.bom >= self.len
                        && value.ends_with('\n')
                    {
                        value.pop();
                    }
                    let content = self.content_start(start).min(end);
                    let pos = pos(content, end);
                    let scalar = self.scalar(value, tag, style, pos)?;
                    self.push(Node::at(Value::Scalar(scalar), pos), anchor)?;
                }
                EventData::SequenceStart { anchor, style, .. } => {
                    let flow = style == SequenceStyle::Flow;
                    self.open(Items::Seq(Vec::new()), pos(start, end), flow, anchor);
                }
                EventData::MappingStart { anchor, style, .. } => {
                    let flow = style == MappingStyle::Flow;
                    let items = Items::Map(Vec::new(), None);
                    self.open(items, pos(start, end), flow, anchor);
                }
                EventData::SequenceEnd | EventData::MappingEnd => {
                    let Some(mut frame) = self.stack.pop() else {
                        break;
                    };
                    // A flow collection ends at its bracket; a block one at
                    // its last value (the event sits on the next token).
                    if frame.pos.flow {
                        frame.pos.end = end;
                    }
                    let node = match frame.items {
                        Items::Seq(items) => Node::at(Value::Seq(items), frame.pos),
                        Items::Map(entries, _) => merge_keys(entries, frame.pos)?,
                    };
                    self.push(node, frame.anchor)?;
                }
            }
        }
        Ok(self.docs)
    }

    /// A libyaml mark index as a byte offset into the caller's text.
    fn offset(&self, index: u64) -> u32 {
        (index as usize + self.bom).min(self.len) as u32
    }

    /// Starts a collection. Its text starts after its properties (libyaml's
    /// start mark is on its `&anchor` or `!tag`); a flow one at its bracket.
    fn open(&mut self, items: Items, pos: Pos, flow: bool, anchor: Option<String>) {
        let start = if flow {
            pos.end.saturating_sub(1)
        } else {
            self.content_start(pos.start)
        };
        let pos = Pos {
            start,
            end: start,
            flow,
            ..pos
        };
        self.stack.push(Frame { items, pos, anchor });
    }

    /// Where a node's text starts: after the `&anchor` and `!tag` properties
    /// and the blanks, line breaks and comments that may follow them.
    fn content_start(&self, from: u32) -> u32 {
        let b = self.src.as_bytes();
        let mut i = from as usize;
        while let Some(&c) = b.get(i) {
            match c {
                b'&' | b'!' if b.get(i + 1) == Some(&b'<') => {
                    i += b[i..].iter().position(|&c| c == b'>').map_or(1, |n| n + 1);
                }
                b'&' | b'!' => {
                    i += b[i..]
                        .iter()
                        .position(|c| b" \t\r\n,[]{}".contains(c))
                        .unwrap_or(b.len() - i);
                }
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'#' => {
                    i += b[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .unwrap_or(b.len() - i)
                }
                _ => break,
            }
        }
        i.min(self.len) as u32
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
        let Some(frame) = self.stack.last_mut() else {
            self.docs.push(node);
            return Ok(());
        };
        if !frame.pos.flow {
            frame.pos.end = frame.pos.end.max(node.pos.end);
        }
        match &mut frame.items {
            Items::Seq(items) => items.push(node),
            Items::Map(entries, key) => match key.take() {
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
    let mut out = own.clone();
    for source in sources {
        for (k, v) in source {
            let Some(s) = k.as_scalar() else {
                continue;
            };
            if own.iter().any(|(ok, _)| ok.key_text() == Some(&s.text)) {
                continue;
            }
            let merged = |pos: Pos| Pos {
                origin: Origin::Merge,
                ..pos
            };
            let v = Node {
                pos: merged(v.pos),
                ..v
            };
            match out
                .iter_mut()
                .find(|(ok, _)| ok.key_text() == Some(&s.text))
            {
                Some((_, old)) => *old = v,
                // kyaml sets merged keys as strings (whatever they resolved to).
                None => {
                    let key = Scalar {
                        tag: Tag::Str,
                        ..s.clone()
                    };
                    out.push((Node::at(Value::Scalar(key), merged(k.pos)), v));
                }
            }
        }
    }
    Ok(Node::at(Value::Map(out), pos))
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

    /// The source text of the node under `path` (string keys, or indexes for sequences).
    fn text<'a>(src: &'a str, n: &Node, path: &[&str]) -> &'a str {
        let node = path.iter().fold(n, |n, k| match k.parse::<usize>() {
            Ok(i) => &n.as_seq().unwrap()[i],
            Err(_) => n.get(k).unwrap(),
        });
        node.pos.text(src).unwrap()
    }

    fn key_text<'a>(src: &'a str, n: &Node, key: &str) -> &'a str {
        let map = n.as_map().unwrap();
        let (k, _) = map.iter().find(|(k, _)| k.key_text() == Some(key)).unwrap();
        k.pos.text(src).unwrap()
    }

    #[test]
    fn scalar_spans_are_their_source_text() {
        let src = "a: \"x y\"\nb: 'q''s'\nc: plain  text\n  folded on\nd: |\n  lit\n  more\ne: >-\n  f\n\"k\": [1, \"two\"]\n";
        let n = one(src);
        assert_eq!(text(src, &n, &["a"]), "\"x y\"");
        assert_eq!(text(src, &n, &["b"]), "'q''s'");
        assert_eq!(text(src, &n, &["c"]), "plain  text\n  folded on");
        assert_eq!(text(src, &n, &["d"]), "|\n  lit\n  more\n");
        assert_eq!(text(src, &n, &["e"]), ">-\n  f\n");
        assert_eq!(key_text(src, &n, "k"), "\"k\"");
        assert_eq!(text(src, &n, &["k", "1"]), "\"two\"");
        assert_eq!(n.get("d").unwrap().pos.line, 5);
    }

    #[test]
    fn collection_spans_and_styles() {
        let src = "top:\n  x: 1\n  l:\n  - a\n  - b: {c: d}\n\n# after\nflow: [1, {e: f}]\nnested:\n- - a\n  - b\n";
        let n = one(src);
        let top = n.get("top").unwrap();
        assert_eq!(text(src, &n, &["top"]), "x: 1\n  l:\n  - a\n  - b: {c: d}");
        assert!(!top.pos.flow);
        assert_eq!(text(src, &n, &["top", "l"]), "- a\n  - b: {c: d}");
        assert_eq!(text(src, &n, &["top", "l", "1", "b"]), "{c: d}");
        assert!(
            n.get_path(&["top", "l"]).unwrap().as_seq().unwrap()[1]
                .get("b")
                .unwrap()
                .pos
                .flow
        );
        assert_eq!(text(src, &n, &["flow"]), "[1, {e: f}]");
        assert!(n.get("flow").unwrap().pos.flow);
        assert_eq!(text(src, &n, &["flow", "1"]), "{e: f}");
        assert_eq!(text(src, &n, &["nested"]), "- - a\n  - b");
        assert_eq!(text(src, &n, &["nested", "0"]), "- a\n  - b");
        assert_eq!(n.pos.text(src), Some(src.trim_end()));
        assert_eq!((n.pos.start, n.pos.line), (0, 1));
    }

    #[test]
    fn empty_values_have_empty_spans_after_their_colon() {
        let src = "a:\nb: 1\nc:";
        let n = one(src);
        assert_eq!(n.get("a").unwrap().pos.start, 2);
        assert_eq!(text(src, &n, &["a"]), "");
        assert_eq!(text(src, &n, &["c"]), "");
        assert_eq!(n.pos.text(src), Some(src));
    }

    #[test]
    fn spans_with_crlf_bom_and_documents() {
        let src = "a: x\r\nb:\r\n  c: 'q'\r\n";
        let n = one(src);
        assert_eq!(text(src, &n, &["b", "c"]), "'q'");
        assert_eq!(text(src, &n, &["b"]), "c: 'q'");
        assert_eq!(n.get_path(&["b", "c"]).unwrap().pos.line, 3);

        let src = "\u{feff}a: b\n";
        let n = one(src);
        assert_eq!(key_text(src, &n, "a"), "a");
        assert_eq!(text(src, &n, &["a"]), "b");

        let src = "a: 1\n---\nb: 'two'\n...\n--- |\n  three\n";
        let docs = parse_all(src, Resolver::V3).unwrap();
        assert_eq!(text(src, &docs[1], &["b"]), "'two'");
        assert_eq!(docs[2].pos.text(src), Some("|\n  three\n"));
        assert_eq!(docs[2].pos.line, 5);

        // A block scalar running into the end of input (parsed padded).
        let src = "a: |\n  x";
        assert_eq!(text(src, &one(src), &["a"]), "|\n  x");
    }

    #[test]
    fn anchors_aliases_and_merges_keep_their_spans() {
        let src = "base: &b {x: 1}\nv: &s !!str 5\nblk: &k\n  # c\n  y: 2\nref: *b\nw:  *s\nm:\n  <<: *b\n  z: 3\n";
        let n = one(src);
        assert_eq!(text(src, &n, &["base"]), "{x: 1}");
        assert_eq!(text(src, &n, &["v"]), "5");
        assert_eq!(text(src, &n, &["blk"]), "y: 2");
        assert_eq!(
            n.get("blk").unwrap().pos.line,
            3,
            "go-yaml: the line of the anchor"
        );

        let base = n.get("base").unwrap().pos;
        let r = n.get("ref").unwrap();
        assert_eq!(r.pos.text(src), Some("*b"));
        assert_eq!(r.pos.origin, Origin::Alias { anchor: base.start });
        assert!(r.pos.flow);
        // Below an alias, spans are the anchored node's.
        assert_eq!(text(src, &n, &["ref", "x"]), "1");
        assert_eq!(
            r.get("x").unwrap().pos,
            n.get_path(&["base", "x"]).unwrap().pos
        );
        let w = n.get("w").unwrap();
        assert_eq!(w.pos.text(src), Some("*s"));
        let v = n.get("v").unwrap().pos;
        assert_eq!(w.pos.origin, Origin::Alias { anchor: v.start });

        let m = n.get("m").unwrap();
        let (k, x) = m
            .as_map()
            .unwrap()
            .iter()
            .find(|(k, _)| k.key_text() == Some("x"))
            .unwrap();
        assert_eq!((k.pos.origin, x.pos.origin), (Origin::Merge, Origin::Merge));
        assert_eq!((k.pos.text(src), x.pos.text(src)), (Some("x"), Some("1")));
        assert_eq!(m.get("z").unwrap().pos.origin, Origin::Source);
        assert_eq!(text(src, &n, &["m"]), "<<: *b\n  z: 3");
    }

    #[test]
    fn nodes_made_in_memory_have_no_text() {
        assert_eq!(Node::string("x").pos.text("x"), None);
    }
}
