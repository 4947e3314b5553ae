//! Helm's `toToml`/`fromToml` (BurntSushi/toml v1.4): the encoder's layout
//! (plain keys first, then `[tables]` indented two spaces per level,
//! `[[arrays of tables]]`, floats always with a decimal point) and decoding
//! into Go types (int64, float64, string, bool, maps, slices). Parsing uses
//! the `toml` crate; its errors are reworded as BurntSushi's for the
//! common classes (see [`burntsushi_error`]).

use std::collections::BTreeMap;

use crate::gotmpl::fmt::quote;
use crate::gotmpl::value::Value;
use crate::gotmpl::walk::Path;

fn bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn key_text(key: &str) -> String {
    if bare(key) {
        key.to_string()
    } else {
        quoted(key)
    }
}

/// BurntSushi's `writeQuoted`.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_table(v: &Value) -> bool {
    matches!(v.resolved(), Value::Map(_))
}

fn is_table_array(v: &Value) -> bool {
    match v.resolved() {
        Value::List(l) => !l.items.is_empty() && l.items.iter().all(is_table),
        _ => false,
    }
}

/// One level down into `v` for the encoder; BurntSushi's recursion has no
/// guard (a map containing itself overflows Go's stack).
fn descend<S: Send, T: Send>(
    s: &mut S,
    field: fn(&mut S) -> &mut Path,
    v: &Value,
    f: impl FnOnce(&mut S) -> Result<T, String> + Send,
) -> Result<T, String> {
    match Path::descend_within(s, field, v, f) {
        Ok(r) => r,
        Err(why) => Err(format!("toml: {}", why.describe(&v.type_name()))),
    }
}

fn scalar(v: &Value, walk: &mut Path) -> Result<String, String> {
    let v = v.resolved();
    if matches!(v, Value::List(_) | Value::Map(_)) {
        return descend(walk, |w| w, &v.clone(), |w| inline(&v, w));
    }
    scalar_leaf(&v)
}

/// An array or inline table, `{k = v, ...}`.
fn inline(v: &Value, walk: &mut Path) -> Result<String, String> {
    Ok(match v {
        Value::List(l) => {
            let mut parts = Vec::new();
            for i in &l.items {
                if i.is_nil() {
                    return Err("toml: cannot encode array with nil element".into());
                }
                parts.push(scalar(i, walk)?);
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Map(m) => {
            let mut parts = Vec::new();
            for (k, v) in m.entries() {
                if !v.is_nil() {
                    parts.push(format!("{} = {}", key_text(&k), scalar(&v, walk)?));
                }
            }
            format!("{{{}}}", parts.join(", "))
        }
        other => scalar_leaf(other)?,
    })
}

fn scalar_leaf(v: &Value) -> Result<String, String> {
    Ok(match v.clone() {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Uint8(u) => u.to_string(),
        Value::Float(f) => {
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                (if f < 0.0 { "-inf" } else { "inf" }).into()
            } else {
                let t = format!("{f}");
                if t.contains('.') {
                    t
                } else {
                    format!("{t}.0")
                }
            }
        }
        Value::Str(s) => quoted(&s),
        Value::Bytes(b) => quoted(&String::from_utf8_lossy(&b)),
        Value::List(_) | Value::Map(_) => String::new(),
        Value::Object(o) => match o.to_go_string() {
            Some(s) => quoted(&s),
            None => "{}".into(),
        },
        Value::Invalid | Value::Nil => String::new(),
    })
}

/// Largest `toToml` text built.
const MAX_OUTPUT: usize = 64 << 20;

struct Enc {
    out: String,
    walk: Path,
}

impl Enc {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    /// Prints `header` (`[a.b]` or `[[a.b]]`), then the map `inner` as the
    /// table at `path`, one level deeper on the cycle-aware walk.
    fn sub_table(
        &mut self,
        path: &mut Vec<String>,
        header: String,
        inner: Value,
    ) -> Result<(), String> {
        self.out.push_str(&header);
        let Value::Map(m) = &inner else {
            return Ok(());
        };
        let entries = m.entries();
        descend(self, |e| &mut e.walk, &inner, |e| e.table(path, &entries))
    }

    /// Prints the table at `path` (its keys, pushed and popped while its
    /// sub-tables print, so deep tables share one path).
    fn table(&mut self, path: &mut Vec<String>, entries: &[(String, Value)]) -> Result<(), String> {
        // Every header repeats the whole dotted path, so deep tables print
        // quadratically: stop before memory runs out (Go would not).
        if self.out.len() > MAX_OUTPUT {
            return Err(format!("toml: output larger than {} MiB", MAX_OUTPUT >> 20));
        }
        let kv_indent = "  ".repeat(path.len());
        for (k, v) in entries {
            if v.is_nil() || is_table(v) || is_table_array(v) {
                continue;
            }
            let text = scalar(v, &mut self.walk)?;
            self.out
                .push_str(&format!("{kv_indent}{} = {}\n", key_text(k), text));
        }
        for (k, v) in entries {
            let head_indent = "  ".repeat(path.len());
            path.push(key_text(k));
            if let Value::Map(m) = v.resolved() {
                if path.len() == 1 {
                    self.newline();
                }
                let header = format!("{head_indent}[{}]\n", path.join("."));
                self.sub_table(path, header, Value::Map(m.clone()))?;
            } else if is_table_array(v) {
                if let Value::List(l) = v.resolved() {
                    for item in &l.items {
                        if let Value::Map(m) = item.resolved() {
                            self.newline();
                            let header = format!("{head_indent}[[{}]]\n", path.join("."));
                            self.sub_table(path, header, Value::Map(m.clone()))?;
                        }
                    }
                }
            }
            path.pop();
        }
        Ok(())
    }
}

/// `toml.NewEncoder(b).Encode(v)`; errors as Helm prints them.
pub fn to_toml(v: &Value) -> Result<String, String> {
    match v.resolved() {
        Value::Map(m) => {
            let mut e = Enc {
                out: String::new(),
                walk: Path::default(),
            };
            let top = Value::Map(m.clone());
            descend(
                &mut e,
                |e| &mut e.walk,
                &top,
                |e| e.table(&mut Vec::new(), &m.entries()),
            )?;
            Ok(e.out)
        }
        Value::Invalid | Value::Nil => Ok(String::new()),
        other => Err(format!(
            "toml: top-level values must be Go maps or structs (got {})",
            other.kind_name()
        )),
    }
}

fn convert(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::from(s.as_str()),
        toml::Value::Integer(i) => Value::Int64(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(a) => Value::list(a.iter().map(convert).collect()),
        toml::Value::Table(t) => {
            let m: BTreeMap<String, Value> =
                t.iter().map(|(k, v)| (k.clone(), convert(v))).collect();
            Value::map(m)
        }
    }
}

/// Which BurntSushi/toml release's line numbers an error carries: v1.4
/// (helm 3.17) counts an error at end of input on the line before and one
/// at a newline on the line after; v1.5 (helm 4) names the offending line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TomlLines {
    /// BurntSushi/toml v1.4.
    V1_4,
    /// BurntSushi/toml v1.5.
    V1_5,
}

/// Deepest array/inline-table nesting `fromToml` parses. BurntSushi's
/// parser recurses until Go's 1 GB stack runs out (helm 3.17 parses
/// 500,000 nested arrays in 540 MB); the walks that print a value stop at
/// the same depth as this ([`crate::gotmpl::walk::MAX_DEPTH`]).
pub const MAX_TOML_DEPTH: usize = crate::gotmpl::walk::MAX_DEPTH;

/// Stack reserved per nesting level for parsing, converting and freeing a
/// deep document (toml_edit's parser takes under 2 KiB a level optimised,
/// about 12 KiB unoptimised); only the pages used are ever touched.
const STACK_PER_LEVEL: usize = 16 << 10;

/// Why `fromToml` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TomlError {
    /// A parse error, worded as BurntSushi's `ParseError.Error()`: helm's
    /// `fromToml` returns it in the map's `Error` key.
    Parse(String),
    /// Nested deeper than [`MAX_TOML_DEPTH`] (helm would exhaust its
    /// stack): an execution error.
    TooDeep(String),
}

/// `toml.Unmarshal` into `map[string]interface{}`. A document nested more
/// than a few levels is parsed on a thread whose stack fits its depth
/// (the parser, serde and `Drop` of the toml crate all recurse).
pub fn from_toml(text: &str, lines: TomlLines) -> Result<Value, TomlError> {
    let depth = nesting(text);
    if depth > MAX_TOML_DEPTH {
        return Err(TomlError::TooDeep(format!(
            "toml: arrays or inline tables nested more than {MAX_TOML_DEPTH} levels"
        )));
    }
    let parse = || parse_toml(text, lines);
    if depth < 64 {
        return parse();
    }
    let stack = (depth + 64) * STACK_PER_LEVEL;
    crate::gotmpl::stack::with_stack(stack, parse).unwrap_or_else(|_| {
        Err(TomlError::TooDeep(format!(
            "toml: nested {depth} levels, too deep for the stack available"
        )))
    })
}

fn parse_toml(text: &str, lines: TomlLines) -> Result<Value, TomlError> {
    match text.parse::<toml::Table>() {
        Ok(t) => Ok(convert(&toml::Value::Table(t))),
        Err(e) => {
            let pos = e.span().map_or(text.len(), |s| s.start.min(text.len()));
            Err(TomlError::Parse(burntsushi_error(
                text,
                e.message(),
                pos,
                lines,
            )))
        }
    }
}

/// Deepest nesting of `[`/`{` outside strings and comments: how deep the
/// parser will recurse (table headers count their brackets, a harmless
/// over-estimate).
fn nesting(text: &str) -> usize {
    let b = text.as_bytes();
    let (mut i, mut depth, mut max) = (0, 0usize, 0);
    let skip_to = |from: usize, end: &[u8], escapes: bool| -> usize {
        let mut j = from;
        while j < b.len() {
            if escapes && b[j] == b'\\' {
                j += 2;
            } else if b[j..].starts_with(end) {
                return j + end.len();
            } else if end.len() == 1 && b[j] == b'\n' {
                return j;
            } else {
                j += 1;
            }
        }
        b.len()
    };
    while i < b.len() {
        i = match b[i] {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
                i + 1
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i + 1
            }
            b'#' => skip_to(i + 1, b"\n", false),
            b'"' if b[i..].starts_with(b"\"\"\"") => skip_to(i + 3, b"\"\"\"", true),
            b'"' => skip_to(i + 1, b"\"", true),
            b'\'' if b[i..].starts_with(b"'''") => skip_to(i + 3, b"'''", false),
            b'\'' => skip_to(i + 1, b"'", false),
            _ => i + 1,
        };
    }
    max
}

/// Line of byte `pos` (1-based).
fn line_at(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The line BurntSushi's lexer reports for an error at `pos`: at end of
/// input the last character's line (v1.4: the count of newlines); at a
/// newline v1.4 has already counted it.
fn lexer_line(text: &str, pos: usize, lines: TomlLines) -> usize {
    let newlines = |end: usize| {
        text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    };
    match (pos >= text.len(), lines) {
        (true, TomlLines::V1_4) => newlines(text.len()),
        (true, TomlLines::V1_5) => newlines(text.len().saturating_sub(1)) + 1,
        (false, TomlLines::V1_4) if text.as_bytes()[pos] == b'\n' => newlines(pos + 1) + 1,
        (false, _) => newlines(pos) + 1,
    }
}

/// End of the line `pos` is on.
fn line_end(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i)
}

/// BurntSushi's `p.current()`: the table header in force at `pos` and the
/// key of the key/value line `pos` is on, dotted.
fn last_key(text: &str, pos: usize) -> String {
    let before = &text[..pos.min(text.len())];
    let mut table = String::new();
    let mut key = String::new();
    for line in before.split('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            table = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            key.clear();
        } else if let Some((k, _)) = t.split_once('=') {
            key = k.trim().to_string();
        }
    }
    match (table.is_empty(), key.is_empty()) {
        (_, true) => table,
        (true, false) => key,
        (false, false) => format!("{table}.{key}"),
    }
}

/// Go's `%q` of one rune (for the characters a TOML key error can meet).
fn go_rune(c: char) -> String {
    match c {
        '\n' => "'\\n'".into(),
        '\r' => "'\\r'".into(),
        '\t' => "'\\t'".into(),
        '\'' => "'\\''".into(),
        '\\' => "'\\\\'".into(),
        c => format!("'{c}'"),
    }
}

/// Whether the string starting before `pos` on its line is a key (no `=`
/// before its opening quote): BurntSushi names no last key then.
fn in_key(text: &str, pos: usize) -> bool {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..pos];
    match (line.find('='), line.find(['"', '\''])) {
        (Some(eq), Some(q)) => q < eq,
        (None, _) => true,
        (Some(_), None) => false,
    }
}

/// Maps the `toml` crate's error at `pos` onto BurntSushi/toml's wording
/// (`lex.go` errorf / `parse.go` panicf) for the common classes: a blank or
/// bad key, a key without `=`, an unterminated string, a bad value, a
/// duplicate key or table, an unclosed array or table name, trailing text.
/// Other errors keep the `toml` crate's text.
fn burntsushi_error(text: &str, msg: &str, pos: usize, lines: TomlLines) -> String {
    let at = text[pos..].chars().next();
    let here = line_at(text, pos);
    let lex = lexer_line(text, pos, lines);
    let got = |c: char| go_rune(c);
    // (line, names the last key, message)
    let (line, keyed, m) = match (msg, at) {
        (m, None) if m.starts_with("expected `.`, `=`") => {
            (lex, false, "unexpected EOF; expected key separator '='".to_string())
        }
        (m, Some(c)) if m.starts_with("expected `.`, `=`") => (
            lex,
            false,
            format!("expected '.' or '=', but got {} instead", got(c)),
        ),
        ("invalid key", Some('=')) => (here, false, "unexpected '=': key name appears blank".into()),
        (m, None) if m.starts_with("invalid basic string") => {
            (lex, !in_key(text, pos), "unexpected EOF; expected '\"'".into())
        }
        (m, None) if m.starts_with("invalid literal string") => {
            (lex, !in_key(text, pos), "unexpected EOF; expected \"'\"".into())
        }
        (m, Some('\n')) if m.starts_with("invalid basic string") || m.starts_with("invalid literal string") => {
            (here, true, "strings cannot contain newlines".into())
        }
        (m, _) if m.starts_with("invalid table header\nduplicate key") => (
            here,
            false,
            format!("Key '{}' has already been defined.", last_key(text, line_end(text, pos))),
        ),
        (m, _) if m.starts_with("duplicate key") => (
            here,
            true,
            format!("Key '{}' has already been defined.", last_key(text, line_end(text, pos))),
        ),
        (m, Some(c)) if m.starts_with("invalid table header\nexpected `.`, `]`") => (
            if c == '\n' { here + 1 } else { here },
            false,
            format!("expected '.' or ']' to end table name, but got {} instead", got(c)),
        ),
        (m, Some(_)) if m.starts_with("invalid string\nexpected `\"`, `'`") => {
            let word: String = text[pos..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}' | '#'))
                .collect();
            (here, true, format!("expected value but found {} instead", quote(&word)))
        }
        (m, None) if m.starts_with("invalid array\nexpected `]`") => {
            (lex, true, "unexpected EOF; expected value".into())
        }
        (m, Some(c)) if m.starts_with("invalid array\nexpected `]`") => (
            here,
            true,
            format!("expected a comma (',') or array terminator (']'), but got {}", got(c)),
        ),
        (m, Some(c)) if m.starts_with("expected newline, `#`") => (
            here,
            false,
            format!("expected a top-level item to end with a newline, comment, or EOF, but got {} instead", got(c)),
        ),
        (m, _) => (here, false, m.to_string()),
    };
    if keyed {
        format!(
            "toml: line {line} (last key {}): {m}",
            quote(&last_key(text, pos))
        )
    } else {
        format!("toml: line {line}: {m}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_layout() {
        let v =
            super::super::yamlconv::parse_yaml("a: s\nf: 1.5\nt: true\nb: {x: 1, \"y\": [1, 2]}")
                .unwrap_or(Value::Nil);
        assert_eq!(
            to_toml(&v).as_deref(),
            Ok("a = \"s\"\nf = 1.5\nt = true\n\n[b]\n  x = 1.0\n  y = [1.0, 2.0]\n")
        );
        assert!(to_toml(&Value::from("x")).is_err());
    }

    #[test]
    fn decoder_types() {
        let v = from_toml("a = 1\n[t]\nc = 1.5", TomlLines::V1_5).unwrap_or(Value::Nil);
        assert_eq!(crate::gotmpl::fmt::to_string(&v), "map[a:1 t:map[c:1.5]]");
        assert!(from_toml("a", TomlLines::V1_4).is_err());
    }

    /// BurntSushi v1.4 and v1.5 number the same errors differently (texts
    /// recorded from helm 3.17.3 and 4.1.4).
    #[test]
    fn error_lines_per_release() {
        let err = |t: &str, l| match from_toml(t, l) {
            Err(TomlError::Parse(e)) => e,
            _ => String::new(),
        };
        let eof = "x = 1\none";
        assert_eq!(
            err(eof, TomlLines::V1_4),
            "toml: line 1: unexpected EOF; expected key separator '='"
        );
        assert_eq!(
            err(eof, TomlLines::V1_5),
            "toml: line 2: unexpected EOF; expected key separator '='"
        );
        let newline = "one\n";
        assert!(err(newline, TomlLines::V1_4).starts_with("toml: line 2: "));
        assert!(err(newline, TomlLines::V1_5).starts_with("toml: line 1: "));
        assert_eq!(
            err("[t]\na = 1\na = 2", TomlLines::V1_5),
            "toml: line 3 (last key \"t.a\"): Key 't.a' has already been defined."
        );
    }
}
