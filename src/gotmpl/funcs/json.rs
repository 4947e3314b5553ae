//! Go `encoding/json` on template values: `json.Marshal` (sorted map keys,
//! `\u003c`-style HTML escaping unless disabled, Go's float format,
//! `[]byte` as base64, `MarshalIndent`), and `json.Unmarshal` into
//! `interface{}` (numbers become float64) with Go's error texts. Shared by
//! Sprig's and Helm's JSON functions and by `toYaml` (which marshals to
//! JSON first).

use std::collections::BTreeMap;

use super::sprig_encoding::b64_encode;
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::value::{Elem, Value};
use crate::gotmpl::walk::{self, Path};
use crate::yaml::{format_json, write_json_string as write_string};

/// Encoder options.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Escape `<`, `>`, `&` (`json.Marshal` does; `SetEscapeHTML(false)` not).
    pub escape_html: bool,
    /// `MarshalIndent(v, "", indent)` when non-empty.
    pub indent: &'static str,
}

/// `json.Marshal`.
pub const COMPACT: Style = Style {
    escape_html: true,
    indent: "",
};

/// Marshals a value; errors carry Go's text (`json: unsupported value: NaN`,
/// `json: unsupported value: encountered a cycle via map[string]interface {}`).
pub fn marshal(v: &Value, style: Style) -> Result<String, String> {
    let mut out = String::new();
    let mut path = Path::default();
    if style.indent.is_empty() {
        write_value(v, style, 0, &mut out, &mut path)?;
        return Ok(out);
    }
    // MarshalIndent marshals compactly, then re-reads the text with the
    // scanner, which stops past MAX_DEPTH levels (before the indentation
    // of such a value could grow quadratically).
    let compact = Style {
        indent: "",
        ..style
    };
    write_value(v, compact, 0, &mut out, &mut path)?;
    if path.deepest() > MAX_DEPTH {
        if let Some(c) = nesting(out.as_bytes()).exceeded {
            return Err(format!(
                "invalid character {} exceeded max depth",
                quote_char(c)
            ));
        }
    }
    out.clear();
    write_value(v, style, 0, &mut out, &mut Path::default())?;
    Ok(out)
}

/// One level down into the list or map `v`, with Go's texts for a cycle.
fn descend(
    v: &Value,
    path: &mut Path,
    f: impl FnOnce(&mut Path) -> Result<(), String> + Send,
) -> Result<(), String> {
    match path.descend(v, f) {
        Ok(r) => r,
        Err(walk::Nesting::Cycle) => Err(format!(
            "json: unsupported value: encountered a cycle via {}",
            v.type_name()
        )),
        Err(why) => Err(format!("json: {}", why.describe(&v.type_name()))),
    }
}

fn newline(style: Style, depth: usize, out: &mut String) {
    if !style.indent.is_empty() {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(style.indent);
        }
    }
}

fn write_value(
    v: &Value,
    style: Style,
    depth: usize,
    out: &mut String,
    path: &mut Path,
) -> Result<(), String> {
    match v {
        Value::Invalid | Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint8(u) => out.push_str(&u.to_string()),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(format!(
                    "json: unsupported value: {}",
                    crate::gotmpl::fmt::to_string(v)
                ));
            }
            out.push_str(&format_json(*f));
        }
        Value::Str(s) => write_string(s, style.escape_html, out),
        Value::Bytes(b) => write_string(&b64_encode(b), style.escape_html, out),
        Value::List(l) => {
            if l.items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            descend(v, path, |path| {
                out.push('[');
                for (i, item) in l.items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(style, depth + 1, out);
                    write_value(item, style, depth + 1, out, path)?;
                }
                newline(style, depth, out);
                out.push(']');
                Ok(())
            })?
        }
        Value::Map(m) => descend(v, path, |path| {
            write_map(&m.entries(), style, depth, out, path)
        })?,
        Value::Object(o) => match (o.marshal_fields(), o.marshal().or_else(|| o.underlying())) {
            (Some(fields), _) => write_map(&fields, style, depth, out, path)?,
            (None, Some(inner)) => write_value(&inner, style, depth, out, path)?,
            (None, None) => out.push_str("{}"),
        },
    }
    Ok(())
}

fn write_map(
    entries: &[(String, Value)],
    style: Style,
    depth: usize,
    out: &mut String,
    path: &mut Path,
) -> Result<(), String> {
    if entries.is_empty() {
        out.push_str("{}");
        return Ok(());
    }
    out.push('{');
    for (i, (k, val)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(style, depth + 1, out);
        write_string(k, style.escape_html, out);
        out.push(':');
        if !style.indent.is_empty() {
            out.push(' ');
        }
        write_value(val, style, depth + 1, out, path)?;
    }
    newline(style, depth, out);
    out.push('}');
    Ok(())
}

/// `json.Unmarshal` into `interface{}`.
pub fn unmarshal(text: &str) -> Result<Value, String> {
    // Refused before the recursive parse below could run deep: Go's scanner
    // stops at the first bracket past the limit (it would report an earlier
    // syntax error first; for such doubly bad input the message differs).
    let depth = nesting(text.as_bytes());
    if let Some(c) = depth.exceeded {
        return Err(format!(
            "invalid character {} exceeded max depth",
            quote_char(c)
        ));
    }
    if depth.max > SHALLOW {
        // Deep but allowed: parse on a thread with room for the recursion.
        let parsed = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("json-deep".into())
                .stack_size(DEEP_STACK_BYTES)
                .spawn_scoped(s, || parse(text))
                .map(|h| h.join())
        });
        return match parsed {
            Ok(Ok(result)) => result,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(e) => Err(format!("json: cannot start a parser thread: {e}")),
        };
    }
    parse(text)
}

/// Nesting this shallow parses on the caller's stack (rayon workers have 2 MiB).
const SHALLOW: usize = 64;
/// Room for 10,000 nested values (reserved, committed only as used).
const DEEP_STACK_BYTES: usize = 256 << 20;

struct Nesting {
    max: usize,
    /// The bracket that went past [`MAX_DEPTH`].
    exceeded: Option<u8>,
}

/// How deep objects and arrays nest, brackets inside strings not counted.
fn nesting(s: &[u8]) -> Nesting {
    let (mut depth, mut max) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &c in s {
        match c {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Nesting {
                        max: depth,
                        exceeded: Some(c),
                    };
                }
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Nesting {
        max,
        exceeded: None,
    }
}

fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    if p.i >= p.s.len() {
        return Err("unexpected end of JSON input".into());
    }
    let v = p.value()?;
    p.ws();
    if let Some(&c) = p.s.get(p.i) {
        return Err(format!(
            "invalid character {} after top-level value",
            quote_char(c)
        ));
    }
    Ok(v)
}

/// Go's `quoteChar` for syntax errors.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        c if c.is_ascii_graphic() || c == b' ' => format!("'{}'", char::from(c)),
        c => {
            let q = crate::gotmpl::fmt::quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

/// Go's `encoding/json` scanner refuses objects and arrays nested deeper
/// than this (scanner.go `maxNestingDepth`), which also bounds our recursion.
const MAX_DEPTH: usize = 10_000;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// Objects and arrays open around the current position.
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn peek(&self) -> Result<u8, String> {
        self.s
            .get(self.i)
            .copied()
            .ok_or_else(|| "unexpected end of JSON input".to_string())
    }

    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        match self.peek()? {
            c @ (b'{' | b'[') => {
                // Go: pushParseState fails with "exceeded max depth".
                if self.depth >= MAX_DEPTH {
                    return Err(format!(
                        "invalid character {} exceeded max depth",
                        quote_char(c)
                    ));
                }
                self.depth += 1;
                let v = if c == b'{' {
                    self.object()
                } else {
                    self.array()
                };
                self.depth -= 1;
                v
            }
            b'"' => self.string().map(Value::from),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Nil),
            b'-' | b'0'..=b'9' => self.number(),
            c => Err(format!(
                "invalid character {} looking for beginning of value",
                quote_char(c)
            )),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, String> {
        for (k, &w) in word.as_bytes().iter().enumerate() {
            let c = self.peek()?;
            if c != w {
                return Err(format!(
                    "invalid character {} in literal {word} (expecting {})",
                    quote_char(c),
                    quote_char(word.as_bytes()[k])
                ));
            }
            self.i += 1;
        }
        Ok(v)
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if self.peek()? == b'-' {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let st = p.i;
            while p.s.get(p.i).is_some_and(u8::is_ascii_digit) {
                p.i += 1;
            }
            p.i - st
        };
        let c = self.peek()?;
        if c == b'0' {
            self.i += 1;
        } else if c.is_ascii_digit() {
            digits(self);
        } else {
            return Err(format!(
                "invalid character {} in numeric literal",
                quote_char(c)
            ));
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                let c = self.peek()?;
                return Err(format!(
                    "invalid character {} after decimal point in numeric literal",
                    quote_char(c)
                ));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                let c = self.peek()?;
                return Err(format!(
                    "invalid character {} in exponent of numeric literal",
                    quote_char(c)
                ));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("0");
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(format!(
                "json: cannot unmarshal number {text} into Go value of type float64"
            )),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'/' | b'\\' | b'"' => out.push(e),
                        b'u' => {
                            let c = self.hex4()?;
                            let ch = if (0xD800..0xDC00).contains(&c)
                                && self.s.get(self.i..self.i + 2) == Some(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    self.i = save;
                                    None
                                }
                            } else {
                                char::from_u32(c)
                            };
                            let ch = ch.unwrap_or('\u{FFFD}');
                            let mut b = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                        }
                        other => {
                            return Err(format!(
                                "invalid character {} in string escape code",
                                quote_char(other)
                            ))
                        }
                    }
                }
                c if c < 0x20 => {
                    return Err(format!(
                        "invalid character {} in string literal",
                        quote_char(c)
                    ))
                }
                c => out.push(c),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = self.peek()?;
            let d = char::from(c).to_digit(16).ok_or_else(|| {
                format!(
                    "invalid character {} in \\u hexadecimal character escape",
                    quote_char(c)
                )
            })?;
            v = v * 16 + d;
            self.i += 1;
        }
        Ok(v)
    }

    fn object(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut m = BTreeMap::new();
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Ok(Value::map(m));
        }
        loop {
            self.ws();
            let c = self.peek()?;
            if c != b'"' {
                return Err(format!(
                    "invalid character {} looking for beginning of object key string",
                    quote_char(c)
                ));
            }
            let k = self.string()?;
            self.ws();
            let c = self.peek()?;
            if c != b':' {
                return Err(format!(
                    "invalid character {} after object key",
                    quote_char(c)
                ));
            }
            self.i += 1;
            let v = self.value()?;
            m.insert(k, v);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(Value::map(m));
                }
                c => {
                    return Err(format!(
                        "invalid character {} after object key:value pair",
                        quote_char(c)
                    ))
                }
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut l = Vec::new();
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Ok(Value::list(l));
        }
        loop {
            l.push(self.value()?);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(Value::list(l));
                }
                c => {
                    return Err(format!(
                        "invalid character {} after array element",
                        quote_char(c)
                    ))
                }
            }
        }
    }
}

/// Go's kind word for "cannot unmarshal X into ..." messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Map(_) => "object",
        Value::List(_) => "array",
        Value::Str(_) => "string",
        Value::Float(_) => "number",
        Value::Bool(_) => "bool",
        _ => "null",
    }
}

const PRETTY: Style = Style {
    escape_html: true,
    indent: "  ",
};
const RAW: Style = Style {
    escape_html: false,
    indent: "",
};

/// Sprig's JSON printers (`toJson`, `toPrettyJson`, `toRawJson` and their
/// `must*` variants): the plain ones swallow marshal errors, `must*` report them.
pub fn register(m: &mut FuncMap) {
    let one_any = Signature::fixed(&[ArgType::Any]);
    m.insert("toJson", one_any.clone(), |_, a| {
        Ok(Value::from(marshal(&a[0], COMPACT).unwrap_or_default()))
    });
    m.insert("mustToJson", one_any.clone(), |_, a| {
        marshal(&a[0], COMPACT).map(Value::from)
    });
    m.insert("toPrettyJson", one_any.clone(), |_, a| {
        Ok(Value::from(marshal(&a[0], PRETTY).unwrap_or_default()))
    });
    m.insert("mustToPrettyJson", one_any.clone(), |_, a| {
        marshal(&a[0], PRETTY).map(Value::from)
    });
    // toRawJson panics on an error in Sprig; both report it here.
    for name in ["toRawJson", "mustToRawJson"] {
        m.insert(name, one_any.clone(), |_, a| {
            marshal(&a[0], RAW).map(Value::from)
        });
    }
}

/// A `map[string]interface{}` result holding only `Error` (Helm's
/// `fromJson`/`fromYaml` failure form).
pub fn error_map(msg: String) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Error".to_string(), Value::from(msg));
    Value::typed_map(Elem::Interface, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marshal_like_go() {
        let mut m = BTreeMap::new();
        m.insert("b".to_string(), Value::from("<&>"));
        m.insert("a".to_string(), Value::Float(1e6));
        m.insert(
            "l".to_string(),
            Value::list(vec![Value::Int(1), Value::Nil]),
        );
        let v = Value::map(m);
        assert_eq!(
            marshal(&v, COMPACT).as_deref(),
            Ok(r#"{"a":1000000,"b":"\u003c\u0026\u003e","l":[1,null]}"#)
        );
        let pretty = Style {
            escape_html: false,
            indent: "  ",
        };
        assert_eq!(
            marshal(&v, pretty).as_deref(),
            Ok("{\n  \"a\": 1000000,\n  \"b\": \"<&>\",\n  \"l\": [\n    1,\n    null\n  ]\n}")
        );
        assert!(marshal(&Value::Float(f64::NAN), COMPACT).is_err());
    }

    #[test]
    fn nesting_deeper_than_go_allows_is_an_error() {
        // At the limit the parser recurses 10,000 deep: give it room.
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let parsed = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || unmarshal(&ok).is_ok())
            .map(|h| h.join().unwrap_or(false));
        assert!(matches!(parsed, Ok(true)));
        let deep = format!("{}1", r#"{"a":["#.repeat(30_000));
        assert_eq!(
            unmarshal(&deep).err().as_deref(),
            Some("invalid character '{' exceeded max depth")
        );
    }

    #[test]
    fn unmarshal_like_go() {
        let v = unmarshal(r#"{"a": [1, "x\u00e9"], "b": null}"#);
        assert_eq!(
            v.map(|v| crate::gotmpl::fmt::to_string(&v)).as_deref(),
            Ok("map[a:[1 xé] b:<nil>]")
        );
        assert_eq!(
            unmarshal("not json").err().as_deref(),
            Some("invalid character 'o' in literal null (expecting 'u')")
        );
        assert_eq!(
            unmarshal("").err().as_deref(),
            Some("unexpected end of JSON input")
        );
        assert_eq!(
            unmarshal("[1] x").err().as_deref(),
            Some("invalid character 'x' after top-level value")
        );
    }
}
