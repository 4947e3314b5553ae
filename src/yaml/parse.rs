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
///
/// go-yaml's limits apply: collections nest at most [`MAX_DEPTH`] deep, and
/// aliases may not expand a document beyond go-yaml's alias budget.
pub fn parse_all(src: &str, resolver: Resolver) -> Result<Vec<Node>, Error> {
    // libyaml (and go-yaml's port of it) reads a NUL past the end of its
    // input; libyaml-safer 0.3 instead panics when a block scalar runs into
    // the end of input without a final line break. Text that does not end
    // in a line break is parsed with one added (and taken back off block
    // scalars that reach it), so that common case never panics.
    let padded;
    let text = if src.is_empty() || src.ends_with(['\n', '\r']) {
        src
    } else {
        padded = format!("{src}\n");
        &padded
    };
    // The crate still panics on a few rare inputs (its issues #6 and #7, e.g.
    // a tag followed by `,` in a flow collection): such a panic is a syntax
    // error to us, never a crash. We deliberately install no panic hook to
    // keep it quiet: a hook is process-wide state that a library would take
    // from its host program (every thread's panics, the test harness's,
    // another library's hook). The program's hook (main.rs) asks
    // `in_guarded_parse` and keeps these panics off stderr.
    let was = GUARDED.with(|g| g.replace(true));
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        Builder::new(resolver, text, src.len()).run()
    }));
    GUARDED.with(|g| g.set(was));
    parsed.unwrap_or_else(|_| {
        // The panic comes from the scanner reading past the last event it
        // produced: name that event's end, the closest place we know.
        let (line, column) = REACHED.with(std::cell::Cell::get);
        Err(Error::Syntax {
            line,
            column,
            problem: "the YAML parser could not read what follows here".into(),
        })
    })
}

thread_local! {
    /// This thread's libyaml parser, between inputs (see `Builder::run`).
    static PARSER: std::cell::RefCell<Option<Parser<std::io::Cursor<Vec<u8>>>>> =
        const { std::cell::RefCell::new(None) };
    /// Set while this thread runs the parser under `catch_unwind`.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where the current parse's last event ended (1-based line, column), so
    /// a caught panic can still name a place in the file.
    static REACHED: std::cell::Cell<(u32, u32)> = const { std::cell::Cell::new((1, 1)) };
}

/// Whether the current thread is inside the YAML parser's guarded call,
/// where a panic of libyaml-safer is caught and becomes a syntax error. A
/// program's panic hook may use it to keep such a panic quiet; the library
/// installs no hook of its own (see [`parse_all`]).
pub fn in_guarded_parse() -> bool {
    GUARDED.with(std::cell::Cell::get)
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

/// How deep collections may nest. go-yaml's scanner refuses a flow level or
/// an indentation stack deeper than 10,000 (scannerc.go `max_flow_level`,
/// `max_indents`: "exceeded max depth of 10000"); we bound the nesting of
/// collections itself, which is the same limit for documents nested in one
/// style and at most stricter for ones mixing flow and block past 10,000.
/// It also bounds every recursive walk of a parsed tree (emitter, Drop).
pub const MAX_DEPTH: usize = 10_000;

/// go-yaml decode.go `allowedAliasRatio`: the share of decode operations
/// that may come from alias expansion — 99% up to 400,000 operations, then
/// falling linearly to 10% at 4,000,000.
fn allowed_alias_ratio(decoded: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    match decoded {
        d if d <= LOW => 0.99,
        d if d >= HIGH => 0.10,
        d => 0.99 - 0.89 * ((d - LOW) as f64 / (HIGH - LOW) as f64),
    }
}

/// go-yaml's alias budget for one document: it counts a decode operation
/// per node it walks (the document, each key, value and item, each alias
/// and, again, every node under the anchor an alias expands to) and fails
/// with "document contains excessive aliasing" once more than 100 came from
/// aliases, more than 1,000 in all, and their share passes the allowed ratio.
#[derive(Default)]
struct Budget {
    decoded: u64,
    aliased: u64,
}

impl Budget {
    /// Counts `nodes` operations, `aliased` of them from an alias expansion.
    /// Within one expansion the share only grows, so checking once after it
    /// is the same as go-yaml's check at every node of it.
    fn count(&mut self, nodes: u64, aliased: u64, line: u32) -> Result<(), Error> {
        self.decoded = self.decoded.saturating_add(nodes);
        self.aliased = self.aliased.saturating_add(aliased);
        let share = self.aliased as f64 / self.decoded as f64;
        if self.aliased > 100 && self.decoded > 1000 && share > allowed_alias_ratio(self.decoded) {
            return Err(Error::Syntax {
                line,
                column: 0,
                problem: "document contains excessive aliasing".into(),
            });
        }
        Ok(())
    }
}

/// A collection being built: where its entries start on the builder's
/// shared stack, where it is, its anchor.
struct Frame {
    kind: Kind,
    /// Index of its first entry in `Builder::pending` (a mapping's keys and
    /// values alternate there).
    base: usize,
    pos: Pos,
    anchor: Option<String>,
    /// Decode operations for the collection so far (itself and its content,
    /// aliases expanded), as go-yaml's budget counts them.
    size: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Seq,
    Map,
}

struct Builder<'a> {
    resolver: Resolver,
    /// The text parsed (with the line break added when padded).
    src: &'a str,
    /// The length of the caller's text: spans never reach past it.
    len: usize,
    /// libyaml consumes a byte-order mark before counting: add its length back.
    bom: usize,
    /// Anchored nodes and their sizes in decode operations.
    anchors: HashMap<String, (Node, u64)>,
    stack: Vec<Frame>,
    /// The finished children of every open collection, innermost last: each
    /// collection is moved out into a vector of its exact size when it
    /// closes (one allocation, no doubling slack or trimming copy).
    pending: Vec<Node>,
    docs: Vec<Node>,
    budget: Budget,
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
            pending: Vec::new(),
            docs: Vec::new(),
            budget: Budget::default(),
        }
    }

    fn run(self) -> Result<Vec<Node>, Error> {
        // A parser is reused (reset) rather than made per input: a new one
        // allocates a 64 KiB character buffer, and a kustomize build parses
        // each document of a file alone (20,000 in a large one). A parser
        // whose input panicked is dropped by the unwind, never reused.
        let mut parser = PARSER.with(|p| p.borrow_mut().take()).unwrap_or_default();
        parser.reset();
        parser.set_input(std::io::Cursor::new(self.src.as_bytes().to_vec()));
        REACHED.with(|r| r.set((1, 1)));
        let result = self.events(&mut parser);
        parser.reset();
        PARSER.with(|p| *p.borrow_mut() = Some(parser));
        result
    }

    fn events(mut self, parser: &mut Parser<std::io::Cursor<Vec<u8>>>) -> Result<Vec<Node>, Error> {
        loop {
            let event = parser.parse().map_err(syntax)?;
            let reached = (
                event.end_mark.line as u32 + 1,
                event.end_mark.column as u32 + 1,
            );
            REACHED.with(|r| r.set(reached));
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
                EventData::DocumentStart { .. } => {
                    self.anchors.clear();
                    self.budget = Budget::default();
                    self.budget.count(1, 0, line)?;
                }
                EventData::DocumentEnd { .. } => {}
                EventData::Alias { anchor } => {
                    let Some((target, size)) = self.anchors.get(&anchor) else {
                        return Err(Error::Syntax {
                            line,
                            column: event.start_mark.column as u32 + 1,
                            problem: format!("unknown anchor '{anchor}' referenced"),
                        });
                    };
                    let size = *size;
                    // Counted before the copy is made: a refused expansion
                    // never allocates.
                    self.budget.count(1 + size, size, line)?;
                    let node = target.clone();
                    let origin = Origin::Alias {
                        anchor: node.pos.start,
                    };
                    let pos = Pos {
                        flow: node.pos.flow,
                        ..pos(start, end)
                    }
                    .with_origin(origin);
                    self.push(Node { pos, ..node }, None, 1 + size);
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
                    self.budget.count(1, 0, line)?;
                    self.push(Node::at(Value::Scalar(scalar), pos), anchor, 1);
                }
                EventData::SequenceStart { anchor, style, .. } => {
                    let flow = style == SequenceStyle::Flow;
                    self.open(Kind::Seq, pos(start, end), flow, anchor)?;
                }
                EventData::MappingStart { anchor, style, .. } => {
                    let flow = style == MappingStyle::Flow;
                    self.open(Kind::Map, pos(start, end), flow, anchor)?;
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
                    // Exactly sized: a parsed tree can be held for a whole run.
                    let base = frame.base.min(self.pending.len());
                    let node = match frame.kind {
                        Kind::Seq => {
                            let items = self.pending.drain(base..).collect();
                            Node::at(Value::Seq(items), frame.pos)
                        }
                        Kind::Map => {
                            let mut entries = Vec::with_capacity((self.pending.len() - base) / 2);
                            let mut rest = self.pending.drain(base..);
                            // A key without its value cannot happen (libyaml
                            // gives an empty one); it would be dropped.
                            while let (Some(k), Some(v)) = (rest.next(), rest.next()) {
                                entries.push((k, v));
                            }
                            drop(rest);
                            merge_keys(entries, frame.pos)?
                        }
                    };
                    self.push(node, frame.anchor, frame.size);
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
    fn open(
        &mut self,
        kind: Kind,
        pos: Pos,
        flow: bool,
        anchor: Option<String>,
    ) -> Result<(), Error> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Error::Syntax {
                line: pos.line,
                column: 0,
                problem: format!("exceeded max depth of {MAX_DEPTH}"),
            });
        }
        self.budget.count(1, 0, pos.line)?;
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
        self.stack.push(Frame {
            kind,
            base: self.pending.len(),
            pos,
            anchor,
            size: 1,
        });
        Ok(())
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

    /// Adds a finished node to its collection (or the documents); `size`:
    /// its decode operations.
    fn push(&mut self, node: Node, anchor: Option<String>, size: u64) {
        if let Some(a) = anchor {
            self.anchors.insert(a, (node.clone(), size));
        }
        let Some(frame) = self.stack.last_mut() else {
            self.docs.push(node);
            return;
        };
        frame.size = frame.size.saturating_add(size);
        if !frame.pos.flow {
            frame.pos.end = frame.pos.end.max(node.pos.end);
        }
        self.pending.push(node);
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
        other => Tag::Other(Box::new(other.to_string())),
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
            let merged = |pos: Pos| pos.with_origin(Origin::Merge);
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
mod tests;
