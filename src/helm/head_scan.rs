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
    let lines: Vec<&str> = doc.split('\n').collect();
    let mut i = 0;
    let mut seen = false;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let body = line.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if body.starts_with('\t') {
            return None;
        }
        let col = line.len() - body.len();
        if col == 0 && (body.starts_with("---") || body.starts_with("...")) {
            return None;
        }
        if !seen && (col != 0 || body.starts_with("- ") || body == "-") {
            return None;
        }
        seen = true;
        if let Some(parent) = s.line(col, body)? {
            i = block_scalar(&lines, i, parent)?;
        }
    }
    seen.then_some(s.head)
}

/// Control characters, byte-order marks and YAML 1.1 line breaks other
/// than `\n` go to the full parser (go-yaml rejects or reinterprets them).
fn chars_ok(doc: &str) -> bool {
    if doc.bytes().all(|b| (0x20..0x7f).contains(&b) || b == b'\n') {
        return true;
    }
    doc.chars().all(|c| match c as u32 {
        0x0a | 0x09 | 0x20..=0x7e => true,
        0xa0..=0xd7ff => c != '\u{2028}' && c != '\u{2029}',
        0xe000..=0xfffd => c != '\u{feff}',
        n => n >= 0x10000,
    })
}

/// Skips a block scalar's lines from `i`: its content must be indented
/// more than `parent` (an empty block scalar goes to the full parser);
/// returns the index of the first line after it.
fn block_scalar(lines: &[&str], mut i: usize, parent: usize) -> Option<usize> {
    let mut lead_max = 0;
    let indent = loop {
        let line = lines.get(i)?;
        let body = line.trim_start_matches(' ');
        let col = line.len() - body.len();
        if body.starts_with('\t') {
            return None;
        }
        if !body.is_empty() {
            break col;
        }
        lead_max = lead_max.max(col);
        i += 1;
    };
    if indent <= parent || lead_max > indent {
        return None;
    }
    while let Some(line) = lines.get(i) {
        let body = line.trim_start_matches(' ');
        let col = line.len() - body.len();
        if col < indent && !body.is_empty() {
            if body.starts_with('\t') {
                return None;
            }
            break;
        }
        i += 1;
    }
    Some(i)
}

struct Scanner {
    stack: Vec<(usize, Block)>,
    pending: Option<Pending>,
    head: ScannedHead,
}

impl Scanner {
    /// One significant line at column `col`. `Some(parent)` when a block
    /// scalar starts there, whose content must be deeper than `parent`.
    fn line(&mut self, col: usize, body: &str) -> Option<Option<usize>> {
        let item = body == "-" || body.starts_with("- ");
        let pending = self.pending.take();
        while self.stack.last().is_some_and(|(c, _)| *c > col) {
            self.stack.pop();
        }
        let top = self.stack.last().copied();
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
            return Some(None);
        }
        if rest.starts_with('\t') || rest.starts_with('-') || rest.starts_with('?') {
            return None;
        }
        if let Some(b) = value_kind(rest) {
            return match b {
                Value::Block => Some(Some(col)),
                Value::Plain(_) | Value::Quoted(_) | Value::Empty => Some(None),
            };
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
    fn entry(&mut self, col: usize, body: &str, role: Role) -> Option<Option<usize>> {
        let (key, rest) = split_key(body)?;
        let value = value_kind(rest)?;
        let child = match (role, key.as_str()) {
            (Role::Top, "metadata") => Role::Metadata,
            (Role::Metadata, "annotations") => Role::Annotations,
            _ => Role::Other,
        };
        match (role, key.as_str()) {
            (Role::Top, "kind") => self.head.kind = string_of(&value)?.unwrap_or_default(),
            (Role::Annotations, "helm.sh/hook") => self.head.hook = string_of(&value)?,
            (Role::Top, "metadata") | (Role::Metadata, "annotations") => self.head.hook = None,
            _ => {}
        }
        match value {
            Value::Empty => {
                self.pending = Some(Pending {
                    parent: col,
                    role: child,
                    key_col: Some(col),
                });
                Some(None)
            }
            Value::Block => Some(Some(col)),
            Value::Plain(_) | Value::Quoted(_) => Some(None),
        }
    }
}

/// The string value of `kind` or the hook: `Some(None)` when it is not a
/// string (null, a number, a boolean, a collection); `None` when the full
/// parser must decide (block scalars, escapes).
fn string_of(v: &Value) -> Option<Option<String>> {
    match v {
        Value::Empty => Some(None),
        Value::Block => None,
        Value::Quoted(s) => Some(Some(s.clone())),
        Value::Plain(s) if s == "{}" || s == "[]" => Some(None),
        Value::Plain(s) => {
            Some((yaml::resolve_plain(s, Resolver::V2) == Tag::Str).then(|| s.clone()))
        }
    }
}

enum Value {
    /// Nothing on the line: null, or a block on the next lines.
    Empty,
    /// A `|` or `>` block scalar header.
    Block,
    Plain(String),
    Quoted(String),
}

/// A key at the start of `body`, and the text after its `:`.
fn split_key(body: &str) -> Option<(String, &str)> {
    let b = body.as_bytes();
    let (key, end) = match b.first()? {
        q @ (b'"' | b'\'') => {
            let close = body[1..].find(*q as char)? + 1;
            let k = &body[1..close];
            if k.contains('\\') || (*q == b'\'' && b.get(close + 1) == Some(&b'\'')) {
                return None;
            }
            (k.to_string(), close + 1)
        }
        c if c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.' || *c == b'/' => {
            let end = b
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || b"_./-".contains(c)))
                .unwrap_or(b.len());
            let k = &body[..end];
            match yaml::resolve_plain(k, Resolver::V2) {
                Tag::Null | Tag::Float => return None,
                _ => {}
            }
            (k.to_string(), end)
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
fn value_kind(rest: &str) -> Option<Value> {
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
            let close = v[1..].find('\'')? + 1;
            if v.as_bytes().get(close + 1) == Some(&b'\'') {
                return None;
            }
            trailing_ok(&v[close + 1..]).then(|| Value::Quoted(v[1..close].to_string()))
        }
        b'{' | b'[' => {
            let (t, _) = cut_comment(v);
            (t == "{}" || t == "[]").then(|| Value::Plain(t.to_string()))
        }
        b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b',' | b']' | b'}' | b'?' | b':' => None,
        b'-' if v.len() == 1 || v.as_bytes()[1] == b' ' => None,
        _ => plain(v).map(Value::Plain),
    }
}

/// A one-line plain scalar: it ends at ` #`; `: ` or a final `:` would
/// start a mapping where none may be.
fn plain(v: &str) -> Option<String> {
    let (t, _) = cut_comment(v);
    if t.contains(": ") || t.ends_with(':') || t.contains('\t') {
        return None;
    }
    let first = t.as_bytes()[0];
    if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.') {
        number_ok(t)?;
    }
    Some(t.to_string())
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

/// Only spaces, then nothing or a comment.
fn trailing_ok(t: &str) -> bool {
    let t = t.trim_start_matches(' ');
    t.is_empty() || t.starts_with('#')
}

/// A double-quoted scalar closed on its line, with simple escapes: its
/// text and the bytes used.
fn double_quoted(v: &str) -> Option<(String, usize)> {
    let b = v.as_bytes();
    let mut out = String::new();
    let mut i = 1;
    let mut from = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                out.push_str(&v[from..i]);
                return Some((out, i + 1));
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
            "a: plain\n  continued",
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
    }
}
