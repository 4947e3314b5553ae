//! Helm's `toToml`/`fromToml` (BurntSushi/toml v1.4): the encoder's layout
//! (plain keys first, then `[tables]` indented two spaces per level,
//! `[[arrays of tables]]`, floats always with a decimal point) and decoding
//! into Go types (int64, float64, string, bool, maps, slices). Parsing uses
//! the `toml` crate; its error texts differ from BurntSushi's.

use std::collections::BTreeMap;

use crate::gotmpl::value::Value;

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

fn scalar(v: &Value) -> Result<String, String> {
    Ok(match v.resolved() {
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
        Value::List(l) => {
            let mut parts = Vec::new();
            for i in &l.items {
                if i.is_nil() {
                    return Err("toml: cannot encode array with nil element".into());
                }
                parts.push(scalar(i)?);
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Map(m) => {
            let mut parts = Vec::new();
            for (k, v) in m.entries() {
                if !v.is_nil() {
                    parts.push(format!("{} = {}", key_text(&k), scalar(&v)?));
                }
            }
            format!("{{{}}}", parts.join(", "))
        }
        Value::Object(o) => match o.to_go_string() {
            Some(s) => quoted(&s),
            None => "{}".into(),
        },
        Value::Invalid | Value::Nil => String::new(),
    })
}

struct Enc {
    out: String,
}

impl Enc {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn table(&mut self, path: &[String], entries: &[(String, Value)]) -> Result<(), String> {
        let kv_indent = "  ".repeat(path.len());
        for (k, v) in entries {
            if v.is_nil() || is_table(v) || is_table_array(v) {
                continue;
            }
            self.out
                .push_str(&format!("{kv_indent}{} = {}\n", key_text(k), scalar(v)?));
        }
        for (k, v) in entries {
            let mut p = path.to_vec();
            p.push(key_text(k));
            let head_indent = "  ".repeat(p.len() - 1);
            if let Value::Map(m) = v.resolved() {
                if p.len() == 1 {
                    self.newline();
                }
                self.out
                    .push_str(&format!("{head_indent}[{}]\n", p.join(".")));
                self.table(&p, &m.entries())?;
            } else if is_table_array(v) {
                if let Value::List(l) = v.resolved() {
                    for item in &l.items {
                        if let Value::Map(m) = item.resolved() {
                            self.newline();
                            self.out
                                .push_str(&format!("{head_indent}[[{}]]\n", p.join(".")));
                            self.table(&p, &m.entries())?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// `toml.NewEncoder(b).Encode(v)`; errors as Helm prints them.
pub fn to_toml(v: &Value) -> Result<String, String> {
    match v.resolved() {
        Value::Map(m) => {
            let mut e = Enc { out: String::new() };
            e.table(&[], &m.entries())?;
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

/// `toml.Unmarshal` into `map[string]interface{}`.
pub fn from_toml(text: &str) -> Result<Value, String> {
    match text.parse::<toml::Table>() {
        Ok(t) => Ok(convert(&toml::Value::Table(t))),
        Err(e) => {
            let msg = e.message().to_string();
            let line = e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            });
            Err(format!("toml: line {line}: {msg}"))
        }
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
        let v = from_toml("a = 1\n[t]\nc = 1.5").unwrap_or(Value::Nil);
        assert_eq!(crate::gotmpl::fmt::to_string(&v), "map[a:1 t:map[c:1.5]]");
        assert!(from_toml("a").is_err());
    }
}
