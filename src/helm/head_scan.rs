//! A cheap reader of what helm's `SortManifests` needs from a rendered
//! document (`kind` and the `helm.sh/hook` annotation), for documents in
//! a plain block-YAML subset: keys, plain or one-line quoted scalars,
//! block scalars, `{}`/`[]`, comments. It owns no output and never
//! reports errors: a document it cannot prove well-formed (anything outside
//! the subset: flow collections, anchors, tags, multi-line plain or quoted
//! scalars, tabs, odd numbers, null keys, ...) yields `None`, and the
//! caller parses it with the full YAML parser, which then reports helm's
//! error. Within the subset go-yaml v2 and `sigs.k8s.io/yaml` accept the
//! document, so skipping their parse changes nothing printed.

use std::borrow::Cow;

use crate::yaml::{self, Resolver, Tag};

/// What `releaseutil.SimpleHead` reads, for a document that parses.
#[derive(Debug, PartialEq)]
pub struct ScannedHead {
    /// `kind`, "" when absent or not a string.
    pub kind: String,
    /// `metadata.annotations["helm.sh/hook"]`, when a string.
    pub hook: Option<String>,
}

/// Where a mapping sits: only the top, `metadata` and its `annotations`
/// matter for the head.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Top,
    Metadata,
    Annotations,
    Other,
}

#[derive(Clone, Copy, PartialEq)]
enum Block {
    Map(Role),
    /// A sequence; `true` when it hangs at its key's own column.
    Seq(bool),
}

/// A key or item whose value starts on a later line.
#[derive(Clone, Copy)]
struct Pending {
    /// The indentation the child must exceed.
    parent: usize,
    /// The role a mapping child gets.
    role: Role,
    /// A mapping key (an indentless sequence may follow at its column).
    key_col: Option<usize>,
}

/// go-yaml's nesting limit is far above this; deeper documents go to the
/// full parser.
const MAX_NESTING: usize = 48;

/// The head of `doc`, or `None` when the full parser must decide.
pub fn scan(doc: &str) -> Option<ScannedHead> {
    if !chars_ok(doc) {
        return None;
    }
    let mut s = Scanner {
        stack: Vec::new(),
        pending: None,
        head: ScannedHead {
            kind: String::new(),
            hook: None,
        },
    };
    let mut lines = LineIter { rest: Some(doc) }.peekable();
    let mut seen = false;
    while let Some(line) = lines.next() {
        let (col, body) = indent(line);
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if body.starts_with('\t') {
            return None;
        }
        if col == 0 && (body.starts_with("---") || body.starts_with("...")) {
            return None;
        }
        if !seen && (col != 0 || body.starts_with("- ") || body == "-") {
            return None;
        }
        seen = true;
        match s.line(col, body)? {
            Next::Line => {}
            Next::Block(parent) => block_scalar(&mut lines, parent)?,
            Next::Plain(parent) => plain_lines(&mut lines, parent)?,
            Next::Quoted(parent) => quoted_lines(&mut lines, parent)?,
        }
    }
    seen.then_some(s.head)
}

/// The document's lines, each taken once; the scanners of multi-line
/// scalars look at the line after them without taking it.
type Lines<'a> = std::iter::Peekable<LineIter<'a>>;

/// `str::split('\n')`, searching with `memchr` (core's search goes a word
/// at a time; a chart's CRDs are tens of thousands of lines).
struct LineIter<'a> {
    rest: Option<&'a str>,
}

impl<'a> Iterator for LineIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => {
                self.rest = rest.get(i + 1..);
                rest.get(..i)
            }
            None => self.rest.take(),
        }
    }
}

/// A line's indentation (its leading spaces, counted as bytes: a space is
/// one) and the rest of it.
fn indent(line: &str) -> (usize, &str) {
    let n = line.bytes().take_while(|&b| b == b' ').count();
    (n, line.get(n..).unwrap_or_default())
}

/// Control characters, byte-order marks and YAML 1.1 line breaks other
/// than `\n` go to the full parser (go-yaml rejects or reinterprets them).
fn chars_ok(doc: &str) -> bool {
    // Printable ASCII and `\n` only, the common case, checked 32 bytes at
    // a time without a branch per byte (a chart's CRDs are megabytes).
    let bad = |b: u8| u8::from(b.wrapping_sub(0x20) > 0x5e) & u8::from(b != b'\n');
    let blocks = doc.as_bytes().chunks_exact(32);
    let rest = blocks.remainder();
    if blocks
        .map(|c| c.iter().fold(0, |a, &b| a | bad(b)))
        .chain(rest.iter().map(|&b| bad(b)))
        .all(|a| a == 0)
    {
        return true;
    }
    doc.chars().all(|c| match c as u32 {
        0x0a | 0x09 | 0x20..=0x7e => true,
        0xa0..=0xd7ff => c != '\u{2028}' && c != '\u{2029}',
        0xe000..=0xfffd => c != '\u{feff}',
        n => n >= 0x10000,
    })
}

/// What a line leaves open: nothing, a block scalar (whose content must be
/// deeper than the given column), a plain scalar that may go on on deeper
/// lines, or a single-quoted scalar not closed on its line.
enum Next {
    Line,
    Block(usize),
    Plain(usize),
    Quoted(usize),
}

/// Skips the lines that continue a plain scalar (scannerc.go
/// `yaml_parser_scan_plain_scalar`: a multi-line plain scalar goes on while
/// lines are indented deeper than its block, `parent`); returns the index of
/// the first line after it. A continuation line that could be anything but
/// plain text (most indicators first, `: `, ` #`, a final `:`, a tab) goes
/// to the full parser; quotes inside a plain scalar are text.
fn plain_lines(lines: &mut Lines<'_>, parent: usize) -> Option<()> {
    while let Some(line) = lines.peek() {
        let (col, body) = indent(line);
        if body.is_empty() {
            lines.next();
            continue;
        }
        if col <= parent {
            if body.starts_with('\t') {
                return None;
            }
            break;
        }
        let first = body.as_bytes()[0];
        let dash =
            first == b'-' && !(body == "-" || body.starts_with("- ") || body.starts_with("---"));
        if b"-?:#|>!&*%@`[]{},".contains(&first) && !dash {
            return None;
        }
        // Plain text to its end: no comment after it either.
        if !matches!(plain_text(body), Some((_, true))) {
            return None;
        }
        lines.next();
    }
    Some(())
}

/// Skips the lines of a single-quoted scalar opened on the line before
/// them up to its closing quote (`''` is a quote inside it), which must
/// end its line but for a comment; every line inside is deeper than
/// `parent`, without tabs.
fn quoted_lines(lines: &mut Lines<'_>, parent: usize) -> Option<()> {
    for line in lines.by_ref() {
        let (col, body) = indent(line);
        if body.is_empty() {
            continue;
        }
        if col <= parent || body.contains('\t') {
            return None;
        }
        if let Some(close) = single_close(body) {
            return trailing_ok(body.get(close + 1..)?).then_some(());
        }
    }
    None
}

/// The index of the quote that closes a single-quoted scalar in `t` (the
/// text after the opening quote or a continuation line), `''` being an
/// escaped quote.
fn single_close(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            if b.get(i + 1) != Some(&b'\'') {
                return Some(i);
            }
            i += 1;
        }
        i += 1;
    }
    None
}

/// Skips a block scalar's lines: its content must be indented more than
/// `parent` (an empty block scalar goes to the full parser).
fn block_scalar(lines: &mut Lines<'_>, parent: usize) -> Option<()> {
    let mut lead_max = 0;
    let content = loop {
        let (col, body) = indent(lines.peek()?);
        if body.starts_with('\t') {
            return None;
        }
        if !body.is_empty() {
            break col;
        }
        lead_max = lead_max.max(col);
        lines.next();
    };
    if content <= parent || lead_max > content {
        return None;
    }
    while let Some(line) = lines.peek() {
        let (col, body) = indent(line);
        if col < content && !body.is_empty() {
            if body.starts_with('\t') {
                return None;
            }
            break;
        }
        lines.next();
    }
    Some(())
}

struct Scanner {
    stack: Vec<(usize, Block)>,
    pending: Option<Pending>,
    head: ScannedHead,
}

impl Scanner {
    /// One significant line at column `col`. `Some(parent)` when a block
    /// scalar starts there, whose content must be deeper than `parent`.
    fn line(&mut self, col: usize, body: &str) -> Option<Next> {
        let item = body == "-" || body.starts_with("- ");
        let pending = self.pending.take();
        while self.stack.last().is_some_and(|(c, _)| *c > col) {
            self.stack.pop();
        }
        let top = self.stack.last().copied();
        // `key:` with `{}` or `[]` on the next, deeper line.
        let deeper = top.is_none_or(|(c, _)| c < col);
        if pending.is_some_and(|p| col > p.parent && deeper && empty_flow(body)) {
            return Some(Next::Line);
        }
        let role = match (top, pending) {
            // A new, deeper block: only as the value of a key or item.
            (t, Some(p)) if t.is_none_or(|(c, _)| c < col) => {
                if col <= p.parent {
                    return None;
                }
                self.push(
                    col,
                    if item {
                        Block::Seq(false)
                    } else {
                        Block::Map(p.role)
                    },
                )?
            }
            // A sequence at its key's column.
            (Some((c, Block::Map(_))), Some(p)) if c == col && item && p.key_col == Some(col) => {
                self.push(col, Block::Seq(true))?
            }
            (None, None) => self.push(col, Block::Map(Role::Top))?,
            (Some((c, b)), _) if c == col => match (b, item) {
                (Block::Map(r), false) => r,
                (Block::Seq(_), true) => Role::Other,
                (Block::Seq(true), false) => {
                    self.stack.pop();
                    match self.stack.last() {
                        Some(&(c, Block::Map(r))) if c == col => r,
                        _ => return None,
                    }
                }
                _ => return None,
            },
            _ => return None,
        };
        if !item {
            return self.entry(col, body, role);
        }
        // `- ...`: the item's content, if any, follows the dash.
        let rest = body[1..].trim_start_matches(' ');
        let at = col + (body.len() - rest.len());
        if rest.is_empty() || rest.starts_with('#') {
            self.pending = Some(Pending {
                parent: col,
                role: Role::Other,
                key_col: None,
            });
            return Some(Next::Line);
        }
        // A nested sequence (`- - a`) or a `---` go to the full parser; a
        // plain scalar may start with a dash (`- --port=80`).
        if rest.starts_with('\t')
            || rest == "-"
            || rest.starts_with("- ")
            || rest.starts_with("---")
            || rest.starts_with('?')
        {
            return None;
        }
        if let Some(b) = value_kind(rest) {
            return Some(match b {
                Value::Block => Next::Block(col),
                Value::Plain(_, true) => Next::Plain(col),
                Value::OpenQuote => Next::Quoted(col),
                Value::Plain(_, false) | Value::Quoted(_) | Value::Empty => Next::Line,
            });
        }
        self.push(at, Block::Map(Role::Other))?;
        self.entry(at, rest, Role::Other)
    }

    fn push(&mut self, col: usize, b: Block) -> Option<Role> {
        if self.stack.len() >= MAX_NESTING {
            return None;
        }
        self.stack.push((col, b));
        Some(match b {
            Block::Map(r) => r,
            Block::Seq(_) => Role::Other,
        })
    }

    /// `key: value` at `col` in a mapping of role `role`.
    fn entry(&mut self, col: usize, body: &str, role: Role) -> Option<Next> {
        let (key, rest) = split_key(body)?;
        let value = value_kind(rest)?;
        let child = match (role, key) {
            (Role::Top, "metadata") => Role::Metadata,
            (Role::Metadata, "annotations") => Role::Annotations,
            _ => Role::Other,
        };
        // The value of `kind` or the hook must end on its line.
        let read = match (role, key) {
            (Role::Top, "kind") => {
                self.head.kind = string_of(&value)?.unwrap_or_default();
                true
            }
            (Role::Annotations, "helm.sh/hook") => {
                self.head.hook = string_of(&value)?;
                true
            }
            (Role::Top, "metadata") | (Role::Metadata, "annotations") => {
                self.head.hook = None;
                false
            }
            _ => false,
        };
        match value {
            Value::Empty => {
                self.pending = Some(Pending {
                    parent: col,
                    role: child,
                    key_col: Some(col),
                });
                Some(Next::Line)
            }
            Value::Block => Some(Next::Block(col)),
            Value::Plain(_, true) if !read => Some(Next::Plain(col)),
            Value::OpenQuote if !read => Some(Next::Quoted(col)),
            Value::OpenQuote => None,
            Value::Plain(..) | Value::Quoted(_) => Some(Next::Line),
        }
    }
}

/// The string value of `kind` or the hook: `Some(None)` when it is not a
/// string (null, a number, a boolean, a collection); `None` when the full
/// parser must decide (block scalars, escapes).
fn string_of(v: &Value<'_>) -> Option<Option<String>> {
    match v {
        Value::Empty => Some(None),
        Value::Block | Value::OpenQuote => None,
        Value::Quoted(s) => Some(Some(s.to_string())),
        Value::Plain(s, _) if *s == "{}" || *s == "[]" => Some(None),
        Value::Plain(s, _) => {
            Some((yaml::resolve_plain(s, Resolver::V2) == Tag::Str).then(|| s.to_string()))
        }
    }
}

/// A value as the line spells it, borrowed: only `kind` and the hook are
/// ever copied out ([`string_of`]).
enum Value<'a> {
    /// Nothing on the line: null, or a block on the next lines.
    Empty,
    /// A `|` or `>` block scalar header.
    Block,
    /// A one-line plain scalar; `true` when later, deeper lines may
    /// continue it (no comment follows it, it is not `{}`/`[]`).
    Plain(&'a str, bool),
    Quoted(Cow<'a, str>),
    /// A single-quoted scalar that goes on on the next lines.
    OpenQuote,
}

/// A key at the start of `body`, and the text after its `:`.
fn split_key(body: &str) -> Option<(&str, &str)> {
    let b = body.as_bytes();
    let (key, end) = match b.first()? {
        q @ (b'"' | b'\'') => {
            let close = body[1..].find(*q as char)? + 1;
            let k = &body[1..close];
            if k.contains('\\') || (*q == b'\'' && b.get(close + 1) == Some(&b'\'')) {
                return None;
            }
            (k, close + 1)
        }
        c if c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.' || *c == b'/' => {
            let end = b
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || b"_./-".contains(c)))
                .unwrap_or(b.len());
            let k = &body[..end];
            // Only a key starting so can resolve to null (`null`, `Null`,
            // `NULL`) or a float (`1.5`, `.inf`, `-1e3`); the others are
            // not looked up.
            let maybe = matches!(b[0], b'n' | b'N' | b'.' | b'+' | b'-' | b'0'..=b'9');
            if maybe && matches!(yaml::resolve_plain(k, Resolver::V2), Tag::Null | Tag::Float) {
                return None;
            }
            (k, end)
        }
        _ => return None,
    };
    if key.len() > 1000 || b.get(end) != Some(&b':') {
        return None;
    }
    let rest = &body[end + 1..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, rest))
}

/// The value after `key:` (or a sequence item's text), when it is in the
/// subset; `None` otherwise.
fn value_kind(rest: &str) -> Option<Value<'_>> {
    let v = rest.trim_start_matches(' ');
    if v.starts_with('\t') {
        return None;
    }
    if v.is_empty() || v.starts_with('#') {
        return Some(Value::Empty);
    }
    match v.as_bytes()[0] {
        b'|' | b'>' => {
            let after = v[1..].trim_start_matches(['+', '-']);
            if v[1..].len() - after.len() > 1 {
                return None;
            }
            trailing_ok(after).then_some(Value::Block)
        }
        b'"' => {
            let (s, used) = double_quoted(v)?;
            trailing_ok(&v[used..]).then_some(Value::Quoted(s))
        }
        b'\'' => {
            let Some(close) = v[1..].find('\'') else {
                return Some(Value::OpenQuote);
            };
            let close = close + 1;
            if v.as_bytes().get(close + 1) == Some(&b'\'') {
                return single_close(&v[1..]).is_none().then_some(Value::OpenQuote);
            }
            trailing_ok(&v[close + 1..]).then(|| Value::Quoted(Cow::Borrowed(&v[1..close])))
        }
        b'{' | b'[' => {
            let (t, _) = cut_comment(v);
            (t == "{}" || t == "[]").then_some(Value::Plain(t, false))
        }
        // scannerc.go: in a block, `:` followed by a non-blank starts a
        // plain scalar (`record: :node_memory:sum`).
        b':' if v.len() > 1 && v.as_bytes()[1] != b' ' => {
            plain(v).map(|(t, open)| Value::Plain(t, open))
        }
        b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b',' | b']' | b'}' | b'?' | b':' => None,
        b'-' if v.len() == 1 || v.as_bytes()[1] == b' ' => None,
        _ => plain(v).map(|(t, open)| Value::Plain(t, open)),
    }
}

/// A one-line plain scalar: it ends at ` #`; `: ` or a final `:` would
/// start a mapping where none may be. `true` when no comment follows it.
fn plain(v: &str) -> Option<(&str, bool)> {
    let (t, open) = plain_text(v)?;
    let first = *t.as_bytes().first()?;
    if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.') {
        number_ok(t)?;
    }
    Some((t, open))
}

/// [`plain`]'s reading of the text, without its number check: the text
/// before a ` #` comment (trailing spaces off), and `true` when there is
/// no comment; `None` for a tab, `: ` or a final `:` before the comment.
/// One pass over the bytes (`cut_comment`, then a search for each of
/// `: ` and a tab, read every line three times).
fn plain_text(v: &str) -> Option<(&str, bool)> {
    let b = v.as_bytes();
    let mut end = b.len();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'#' if i > 0 && b[i - 1] == b' ' => {
                end = i - 1;
                break;
            }
            b'\t' => return None,
            b':' if b.get(i + 1) == Some(&b' ') => return None,
            _ => {}
        }
    }
    let t = v.get(..end)?.trim_end_matches(' ');
    if t.ends_with(':') {
        return None;
    }
    Some((t, end == b.len()))
}

/// A scalar that resolves as a number must convert as `sigs.k8s.io/yaml`
/// converts it (the full path reports the others).
fn number_ok(t: &str) -> Option<()> {
    match yaml::resolve_plain(t, Resolver::V2) {
        Tag::Int => (yaml::parse_int(t).is_some() || t.parse::<f64>().is_ok()).then_some(()),
        Tag::Float => yaml::float_text(t)
            .ok()
            .and_then(|f| f.parse::<f64>().ok())
            .filter(|f| f.is_finite())
            .map(|_| ()),
        _ => Some(()),
    }
}

/// Text before a ` #` comment, without trailing spaces.
fn cut_comment(v: &str) -> (&str, &str) {
    let end = v.find(" #").unwrap_or(v.len());
    (v[..end].trim_end_matches(' '), &v[end..])
}

/// `{}` or `[]`, then nothing or a comment.
fn empty_flow(body: &str) -> bool {
    if !body.starts_with(['{', '[']) {
        return false;
    }
    let (t, _) = cut_comment(body);
    t == "{}" || t == "[]"
}

/// Only spaces, then nothing or a comment.
fn trailing_ok(t: &str) -> bool {
    let t = t.trim_start_matches(' ');
    t.is_empty() || t.starts_with('#')
}

/// A double-quoted scalar closed on its line, with simple escapes: its
/// text and the bytes used.
fn double_quoted(v: &str) -> Option<(Cow<'_, str>, usize)> {
    let b = v.as_bytes();
    let mut out = String::new();
    let mut i = 1;
    let mut from = 1;
    while i < b.len() {
        match b[i] {
            b'"' if from == 1 => return Some((Cow::Borrowed(v.get(1..i)?), i + 1)),
            b'"' => {
                out.push_str(&v[from..i]);
                return Some((Cow::Owned(out), i + 1));
            }
            b'\\' => {
                out.push_str(&v[from..i]);
                let c = match b.get(i + 1)? {
                    b'\\' => '\\',
                    b'"' => '"',
                    b'/' => '/',
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'0' => '\0',
                    _ => return None,
                };
                out.push(c);
                i += 2;
                from = i;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(doc: &str) -> Option<(String, Option<String>)> {
        scan(doc).map(|h| (h.kind, h.hook))
    }

    #[test]
    fn reads_kind_and_hook_of_simple_documents() {
        let doc = "apiVersion: v1\nkind: Job\nmetadata:\n  name: x # c\n  annotations:\n    \"helm.sh/hook\": pre-install,post-upgrade\n    x: '1'\nspec:\n  containers:\n  - name: a\n    args:\n      - \"--x=1\"\n    env: []\n  data: |\n    a: [\n     #x\n\n  z: {}";
        assert_eq!(
            head(doc),
            Some(("Job".into(), Some("pre-install,post-upgrade".into())))
        );
        assert_eq!(head("kind: \"A\\\"B\"\nkind: C"), Some(("C".into(), None)));
        assert_eq!(
            head("kind: true\nmetadata:\n  annotations:\n    helm.sh/hook: 1"),
            Some((String::new(), None))
        );
        // The last metadata wins.
        assert_eq!(
            head("metadata:\n  annotations:\n    helm.sh/hook: test\nmetadata: {}"),
            Some((String::new(), None))
        );
    }

    #[test]
    fn leaves_anything_else_to_the_parser() {
        for doc in [
            "a: 1\n  b: 2",
            "a: b: c",
            "a: [1, 2]",
            "a: &x 1",
            "a: !!str 1",
            "a:\tb",
            "a: \"x\n  y\"",
            "a: |\n\nb: 1",
            "a: |\n    x\n  y",
            "~: 1",
            "null: 1",
            "a: .inf",
            "- a",
            "a:\n  - b\n c: 1",
            "a:\n    b: 1\n  c: 2",
            "a: plain # c\n  continued",
            "kind: plain\n  continued",
            "a: plain\n  - continued",
            "a: plain\n  ---",
            "a:\n  b: 'x\n  c'",
            "a: :",
            "a: : b",
            "kind: 'x\n  b'",
            "a: 'x\n  b' c",
            "a: '1''2'",
            "a: \"\\u0041\"",
            "a: x:",
            "a: \u{feff}",
            "a: b\r\n",
            "# only a comment",
        ] {
            assert_eq!(head(doc), None, "{doc:?}");
        }
    }

    /// Every document the scanner reads parses, with the same head.
    #[test]
    fn agrees_with_the_full_parser() {
        let docs = [
            "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          image: \"a:1\"\n          ports:\n          - containerPort: 80\n            protocol: TCP\n",
            "kind: 'ConfigMap'\ndata:\n  a.conf: |-\n    x: [\n\n      }\n  b: >\n    folded\n",
            "kind: Secret\nstringData:\n  k: \"a\\tb\\\\\"\n  n: -1\n  m: 0x1F\n  y: yes\n  e: 1.5e3\n",
            "kind: X\nmetadata:\n  annotations:\n    helm.sh/hook: \"test\"\n    helm.sh/hook-weight: \"-5\"\n",
            "kind: X\nitems:\n-\n  a: 1\n- - 2\n",
            "kind: X\na: 1e400\nb: 0b12\nc: 1_000\n",
            "kind: X\na: plain\n  continued\n\n   again\nb:\n  {}\nc:\n- --port=80\n- 'it''s\n\n  quoted' # c\nd: x\n  \"y\" 'z'\n  --dry-run\ne: :a:b\n",
        ];
        for doc in docs {
            let full = crate::gotmpl::convert::parse_yaml(doc);
            if let Some(h) = scan(doc) {
                let v = full.unwrap_or_else(|e| panic!("{doc:?}: {e}"));
                let kind = match &v {
                    crate::gotmpl::Value::Map(m) => m.get("kind"),
                    _ => None,
                };
                let want = match kind {
                    Some(crate::gotmpl::Value::Str(s)) => s.to_string(),
                    _ => String::new(),
                };
                assert_eq!(h.kind, want, "{doc:?}");
            }
        }
        assert!(docs[..4].iter().all(|d| scan(d).is_some()));
        assert!(scan(docs[6]).is_some());
    }
}
