//! The emitter: prints a node tree exactly as go-yaml v2 marshals the same
//! data after `sigs.k8s.io/yaml`'s JSON round trip. That is what
//! `kustomize build` prints for every resource and what Helm's `toYaml`
//! returns. Ported from go-yaml v2's emitterc.go (itself a libyaml port):
//! the same state (column, indent stack, whitespace/indention flags) drives
//! the same decisions, so quoting, folding and indentation match.

use std::borrow::Cow;

use super::keyorder::natural_cmp;
use super::node::{Node, Scalar, Tag, Value};
use super::number::{format_g, format_json};
use super::resolve::{
    is_base60_float, parse_int, resolve_plain, strip_underscores, timestamp_rfc3339, yaml11_bool,
    Int, Resolver,
};
use super::Error;
use analyze::{analyze, Analysis};

mod analyze;
mod folded;
pub(crate) use folded::fold_round_trip;

/// go-yaml v2's default line width and indentation.
const BEST_WIDTH: usize = 80;
const BEST_INDENT: i32 = 2;

/// Prints one document (no `---`), ending with a newline.
pub fn to_string(node: &Node) -> Result<String, Error> {
    let mut e = Emitter::new();
    e.node(node, Context::ROOT)?;
    // yaml_emitter_emit_document_end: an implicit end writes only the indent.
    e.write_indent();
    // Printed documents are kept (a build holds one per resource): give
    // back the growth slack, which also spreads them over fewer pages.
    e.out.shrink_to_fit();
    Ok(e.out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScalarStyle {
    Plain,
    Single,
    Double,
    Literal,
}

#[derive(Clone, Copy)]
struct Context {
    mapping: bool,
    simple_key: bool,
}

impl Context {
    const ROOT: Context = Context {
        mapping: false,
        simple_key: false,
    };
    const SEQ_ITEM: Context = Context {
        mapping: false,
        simple_key: false,
    };
    const MAP_VALUE: Context = Context {
        mapping: true,
        simple_key: false,
    };
    const SIMPLE_KEY: Context = Context {
        mapping: true,
        simple_key: true,
    };
}

struct Emitter {
    out: String,
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    /// Output order of the open mappings' entries (indexes), innermost
    /// last: one buffer for the document instead of a vector per mapping.
    order: Vec<u32>,
    whitespace: bool,
    indention: bool,
    flow_level: u32,
    ctx: Context,
}

impl Emitter {
    fn new() -> Emitter {
        Emitter {
            out: String::with_capacity(1024),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            order: Vec::new(),
            whitespace: true,
            indention: true,
            flow_level: 0,
            ctx: Context::ROOT,
        }
    }

    fn node(&mut self, node: &Node, ctx: Context) -> Result<(), Error> {
        self.ctx = ctx;
        match &node.value {
            Value::Scalar(s) => {
                let (text, is_string) = output_scalar(s)?;
                self.scalar(&text, is_string);
                Ok(())
            }
            Value::Seq(items) if items.is_empty() || self.flow_level > 0 => {
                self.flow_sequence(items)
            }
            Value::Map(entries) if entries.is_empty() || self.flow_level > 0 => {
                self.flow_mapping(entries)
            }
            Value::Seq(items) => self.block_sequence(items),
            Value::Map(entries) => self.block_mapping(entries),
        }
    }

    /// Keys come back from JSON as strings, so they are emitted as strings.
    fn key(&mut self, key: &Node, ctx: Context) {
        self.ctx = ctx;
        self.scalar(key.key_text().unwrap_or_default(), true);
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn block_sequence(&mut self, items: &[Node]) -> Result<(), Error> {
        let indentless = self.ctx.mapping && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, Context::SEQ_ITEM)?;
        }
        self.pop_indent();
        Ok(())
    }

    fn block_mapping(&mut self, entries: &[(Node, Node)]) -> Result<(), Error> {
        self.increase_indent(false, false);
        let (base, end) = self.push_order(entries)?;
        for j in base..end {
            let (key, value) = &entries[self.order[j] as usize];
            self.write_indent();
            if is_simple_key(key) {
                self.key(key, Context::SIMPLE_KEY);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.key(key, Context::MAP_VALUE);
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.node(value, Context::MAP_VALUE)?;
        }
        self.order.truncate(base);
        self.pop_indent();
        Ok(())
    }

    fn flow_sequence(&mut self, items: &[Node]) -> Result<(), Error> {
        self.write_indicator("[", true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.write_indicator(",", false, false, false);
            }
            if self.column > BEST_WIDTH {
                self.write_indent();
            }
            self.node(item, Context::SEQ_ITEM)?;
        }
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator("]", false, false, false);
        Ok(())
    }

    fn flow_mapping(&mut self, entries: &[(Node, Node)]) -> Result<(), Error> {
        self.write_indicator("{", true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        let (base, end) = self.push_order(entries)?;
        for j in base..end {
            let (key, value) = &entries[self.order[j] as usize];
            if j > base {
                self.write_indicator(",", false, false, false);
            }
            if self.column > BEST_WIDTH {
                self.write_indent();
            }
            if is_simple_key(key) {
                self.key(key, Context::SIMPLE_KEY);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, false);
                self.key(key, Context::MAP_VALUE);
                if self.column > BEST_WIDTH {
                    self.write_indent();
                }
                self.write_indicator(":", true, false, false);
            }
            self.node(value, Context::MAP_VALUE)?;
        }
        self.order.truncate(base);
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator("}", false, false, false);
        Ok(())
    }

    /// yaml_emitter_emit_scalar with the style go-yaml's encoder asks for.
    fn scalar(&mut self, text: &str, is_string: bool) {
        let requested = if !is_string {
            ScalarStyle::Plain
        } else if text.contains('\n') {
            ScalarStyle::Literal
        } else if resolve_plain(text, Resolver::V2) == Tag::Str && !is_base60_float(text) {
            ScalarStyle::Plain
        } else {
            ScalarStyle::Double
        };
        let a = analyze(text);
        let style = self.select_style(requested, &a, text.is_empty());
        self.increase_indent(true, false);
        let allow_breaks = !self.ctx.simple_key;
        match style {
            ScalarStyle::Plain => self.write_plain(text, allow_breaks),
            ScalarStyle::Single => self.write_single(text, allow_breaks),
            ScalarStyle::Double => self.write_double(text, allow_breaks),
            ScalarStyle::Literal => self.write_literal(text),
        }
        self.pop_indent();
    }

    fn select_style(&self, requested: ScalarStyle, a: &Analysis, empty: bool) -> ScalarStyle {
        let mut style = requested;
        if self.ctx.simple_key && a.multiline {
            style = ScalarStyle::Double;
        }
        if style == ScalarStyle::Plain {
            let flow = self.flow_level > 0;
            if (flow && !a.flow_plain) || (!flow && !a.block_plain) {
                style = ScalarStyle::Single;
            }
            if empty && (flow || self.ctx.simple_key) {
                style = ScalarStyle::Single;
            }
        }
        if style == ScalarStyle::Single && !a.single_quoted {
            style = ScalarStyle::Double;
        }
        if style == ScalarStyle::Literal && (!a.block || self.flow_level > 0 || self.ctx.simple_key)
        {
            style = ScalarStyle::Double;
        }
        style
    }
}

/// The text a scalar prints as after the JSON round trip, and whether it is a
/// string (strings are quoted when needed; numbers, booleans and null never).
fn output_scalar(s: &Scalar) -> Result<(Cow<'_, str>, bool), Error> {
    Ok(match s.tag {
        Tag::Null => (Cow::Borrowed("null"), false),
        Tag::Bool => {
            let t = yaml11_bool(&s.text) == Some(true);
            (Cow::Borrowed(if t { "true" } else { "false" }), false)
        }
        Tag::Int => {
            let plain = strip_underscores(&s.text);
            match parse_int(&plain) {
                Some(Int::Signed(i)) => (Cow::Owned(i.to_string()), false),
                Some(Int::Unsigned(u)) => (Cow::Owned(u.to_string()), false),
                None => (Cow::Borrowed(s.text.as_str()), true),
            }
        }
        Tag::Float => (Cow::Owned(float_text(&s.text)?), false),
        // go-yaml v3 decodes timestamps to time.Time, which JSON prints in RFC 3339.
        Tag::Timestamp => match timestamp_rfc3339(&s.text) {
            Some(t) => (Cow::Owned(t), true),
            None => (Cow::Borrowed(s.text.as_str()), true),
        },
        _ => (Cow::Borrowed(s.text.as_str()), true),
    })
}

/// A float goes through `json.Marshal` and back through go-yaml v2: integral
/// values below 1e21 come back as integers, the rest print with `%g`.
pub fn float_text(text: &str) -> Result<String, Error> {
    let plain = strip_underscores(text);
    let f = match &*plain {
        ".nan" | ".NaN" | ".NAN" => f64::NAN,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => f64::INFINITY,
        "-.inf" | "-.Inf" | "-.INF" => f64::NEG_INFINITY,
        _ => match parse_int(&plain) {
            Some(Int::Signed(i)) => i as f64,
            Some(Int::Unsigned(u)) => u as f64,
            None => plain.parse::<f64>().map_err(|_| Error::Unsupported {
                what: format!("float `{text}`"),
            })?,
        },
    };
    if !f.is_finite() {
        // json.Marshal: "json: unsupported value: NaN"
        return Err(Error::Unsupported {
            what: format!("value {}", format_g(f)),
        });
    }
    let json = format_json(f);
    Ok(match parse_int(&json) {
        Some(Int::Signed(i)) => i.to_string(),
        Some(Int::Unsigned(u)) => u.to_string(),
        None => format_g(f),
    })
}

fn is_simple_key(key: &Node) -> bool {
    match &key.value {
        Value::Scalar(s) => {
            let text = &s.text;
            !text.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) && text.len() <= 128
        }
        Value::Seq(items) => items.is_empty(),
        Value::Map(entries) => entries.is_empty(),
    }
}

impl Emitter {
    /// Pushes the indexes of `entries` onto `order` in output order: keys
    /// sorted (go-yaml v2's natural order) and, as JSON objects keep one
    /// value per key, only the last of equal keys. Returns the pushed range;
    /// the caller truncates back to its start when done.
    fn push_order(&mut self, entries: &[(Node, Node)]) -> Result<(usize, usize), Error> {
        let key = |i: u32| entries[i as usize].0.key_text().unwrap_or_default();
        if entries.iter().any(|(k, _)| k.as_scalar().is_none()) {
            return Err(Error::Unsupported {
                what: "a mapping key that is not a scalar".into(),
            });
        }
        let base = self.order.len();
        self.order.extend(0..entries.len() as u32);
        if entries.len() < 2 {
            return Ok((base, self.order.len()));
        }
        let pushed = &mut self.order[base..];
        // Stable: equal keys stay in source order, the last one last.
        pushed.sort_by(|&a, &b| natural_cmp(key(a), key(b)));
        let mut kept = base;
        for r in base..self.order.len() {
            let next_same = self
                .order
                .get(r + 1)
                .is_some_and(|&n| key(n) == key(self.order[r]));
            if !next_same {
                self.order[kept] = self.order[r];
                kept += 1;
            }
        }
        self.order.truncate(kept);
        Ok((base, kept))
    }
}

fn at(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

fn width(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        1
    }
}

fn is_blank(v: &[u8], i: usize) -> bool {
    matches!(at(v, i), b' ' | b'\t')
}

fn is_break(v: &[u8], i: usize) -> bool {
    let (b0, b1, b2) = (at(v, i), at(v, i + 1), at(v, i + 2));
    b0 == b'\r'
        || b0 == b'\n'
        || (b0 == 0xC2 && b1 == 0x85)
        || (b0 == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9))
}

fn is_blankz(v: &[u8], i: usize) -> bool {
    is_blank(v, i) || is_break(v, i) || at(v, i) == 0
}

/// yamlprivateh.go is_printable, byte-wise as go-yaml does it.
fn is_printable(v: &[u8], i: usize) -> bool {
    let (b0, b1, b2) = (at(v, i), at(v, i + 1), at(v, i + 2));
    b0 == 0x0A
        || (0x20..=0x7E).contains(&b0)
        || (b0 == 0xC2 && b1 >= 0xA0)
        || (b0 > 0xC2 && b0 < 0xED)
        || (b0 == 0xED && b1 < 0xA0)
        || b0 == 0xEE
        || (b0 == 0xEF
            && !(b1 == 0xBB && b2 == 0xBF)
            && !(b1 == 0xBF && (b2 == 0xBE || b2 == 0xBF)))
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// Copies one character starting at byte `i`; returns the next index.
    fn write_char(&mut self, v: &str, i: usize) -> usize {
        let w = width(v.as_bytes()[i]);
        self.out.push_str(&v[i..i + w]);
        self.column += 1;
        i + w
    }

    /// write_break: a `\n` becomes the line break; other breaks are copied.
    fn write_break(&mut self, v: &str, i: usize) -> usize {
        if v.as_bytes()[i] == b'\n' {
            self.put_break();
            i + 1
        } else {
            let next = self.write_char(v, i);
            self.column = 0;
            next
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        self.out.push_str(ind);
        self.column += ind.chars().count();
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn write_plain(&mut self, v: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let b = v.as_bytes();
        // Most scalars have no space and no line break (of any kind: those
        // start with `\r`, `\n`, 0xC2 or 0xE2): the loop below would copy
        // them character by character with nothing else to decide.
        if !b
            .iter()
            .any(|c| matches!(c, b' ' | b'\r' | b'\n' | 0xC2 | 0xE2))
        {
            self.out.push_str(v);
            self.column += v.chars().count();
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < b.len() {
            if b[i] == b' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && at(b, i + 1) != b' ' {
                    self.write_indent();
                    i += 1;
                } else {
                    i = self.write_char(v, i);
                }
                spaces = true;
            } else if is_break(b, i) {
                if !breaks && b[i] == b'\n' {
                    self.put_break();
                }
                i = self.write_break(v, i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                i = self.write_char(v, i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, v: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let b = v.as_bytes();
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < b.len() {
            if b[i] == b' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < b.len() - 1
                    && at(b, i + 1) != b' '
                {
                    self.write_indent();
                    i += 1;
                } else {
                    i = self.write_char(v, i);
                }
                spaces = true;
            } else if is_break(b, i) {
                if !breaks && b[i] == b'\n' {
                    self.put_break();
                }
                i = self.write_break(v, i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if b[i] == b'\'' {
                    self.put('\'');
                }
                i = self.write_char(v, i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double(&mut self, v: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let b = v.as_bytes();
        // go-yaml's is_bom looks at the start of the value, whatever `i` is.
        let bom = b.starts_with(&[0xEF, 0xBB, 0xBF]);
        let mut spaces = false;
        let mut i = 0;
        while i < b.len() {
            if !is_printable(b, i) || bom || is_break(b, i) || b[i] == b'"' || b[i] == b'\\' {
                let w = width(b[i]);
                let c = v[i..].chars().next().map_or(0, u32::from);
                i += w;
                self.put('\\');
                self.escape(c);
                spaces = false;
            } else if b[i] == b' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i < b.len() - 1 {
                    self.write_indent();
                    if at(b, i + 1) == b' ' {
                        self.put('\\');
                    }
                    i += 1;
                } else {
                    i = self.write_char(v, i);
                }
                spaces = true;
            } else {
                i = self.write_char(v, i);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn escape(&mut self, c: u32) {
        let short = match c {
            0x00 => Some('0'),
            0x07 => Some('a'),
            0x08 => Some('b'),
            0x09 => Some('t'),
            0x0A => Some('n'),
            0x0B => Some('v'),
            0x0C => Some('f'),
            0x0D => Some('r'),
            0x1B => Some('e'),
            0x22 => Some('"'),
            0x5C => Some('\\'),
            0x85 => Some('N'),
            0xA0 => Some('_'),
            0x2028 => Some('L'),
            0x2029 => Some('P'),
            _ => None,
        };
        if let Some(s) = short {
            self.put(s);
            return;
        }
        let (prefix, digits) = if c <= 0xFF {
            ('x', 2)
        } else if c <= 0xFFFF {
            ('u', 4)
        } else {
            ('U', 8)
        };
        self.put(prefix);
        for k in (0..digits).rev() {
            let d = (c >> (k * 4)) & 0xF;
            self.put(char::from_digit(d, 16).unwrap_or('0').to_ascii_uppercase());
        }
    }

    fn write_literal(&mut self, v: &str) {
        self.write_indicator("|", true, false, false);
        self.block_scalar_hints(v);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let b = v.as_bytes();
        let mut breaks = true;
        let mut i = 0;
        while i < b.len() {
            if is_break(b, i) {
                i = self.write_break(v, i);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                i = self.write_char(v, i);
                self.indention = false;
                breaks = false;
            }
        }
    }

    fn block_scalar_hints(&mut self, v: &str) {
        let b = v.as_bytes();
        if at(b, 0) == b' ' || is_break(b, 0) {
            let hint = char::from(b'0' + BEST_INDENT as u8).to_string();
            self.write_indicator(&hint, false, false, false);
        }
        let chomp = if b.is_empty() {
            Some("-")
        } else {
            let mut i = b.len() - 1;
            while i > 0 && b[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !is_break(b, i) {
                Some("-")
            } else if i == 0 {
                Some("+")
            } else {
                i -= 1;
                while i > 0 && b[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                is_break(b, i).then_some("+")
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(c, false, false, false);
        }
    }
}

#[cfg(test)]
mod tests;
