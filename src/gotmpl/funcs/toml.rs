//! Helm's `toToml`/`fromToml` (BurntSushi/toml v1.4): the encoder's layout
//! (plain keys first, then `[tables]` indented two spaces per level,
//! `[[arrays of tables]]`, floats always with a decimal point) and decoding
//! into Go types (int64, float64, string, bool, maps, slices). Parsing uses
//! the `toml` crate; its error texts differ from BurntSushi's.

use std::collections::BTreeMap;

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
                self.out
                    .push_str(&format!("{head_indent}[{}]\n", path.join(".")));
                let inner = Value::Map(m.clone());
                descend(
                    self,
                    |e| &mut e.walk,
                    &inner,
                    |e| e.table(path, &m.entries()),
                )?;
            } else if is_table_array(v) {
                if let Value::List(l) = v.resolved() {
                    for item in &l.items {
                        if let Value::Map(m) = item.resolved() {
                            self.newline();
                            self.out
                                .push_str(&format!("{head_indent}[[{}]]\n", path.join(".")));
                            let inner = Value::Map(m.clone());
                            descend(
                                self,
                                |e| &mut e.walk,
                                &inner,
                                |e| e.table(path, &m.entries()),
                            )?;
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
