//! YAML nodes as JSON values, the way `sigs.k8s.io/yaml` converts them:
//! scalars become the JSON type they resolved to, keys become strings.

use super::node::{Node, Tag, Value};
use super::resolve::{parse_int, yaml11_bool, Int};

/// Converts a node to a JSON value.
pub fn to_json(n: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &n.value {
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.key_text().unwrap_or_default().to_string(), to_json(v)))
                .collect(),
        ),
        Value::Scalar(s) => match s.tag {
            Tag::Null => J::Null,
            Tag::Bool => J::Bool(yaml11_bool(&s.text) == Some(true)),
            Tag::Int => match parse_int(&s.text.replace('_', "")) {
                Some(Int::Signed(i)) => J::from(i),
                Some(Int::Unsigned(u)) => J::from(u),
                None => J::String(s.text.clone()),
            },
            Tag::Float => s
                .text
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| J::String(s.text.clone()), J::Number),
            _ => J::String(s.text.clone()),
        },
    }
}

/// Go's `encoding/json` string escaping (`appendString`): `html` also
/// escapes `<`, `>` and `&`, as `json.Marshal` does. `\b` and `\f` have
/// their short escapes since Go 1.22 (helm 3.17 and 4.1, kubectl 1.31+).
pub fn write_json_string(s: &str, html: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    #[test]
    fn control_characters_escape_as_go_1_22() {
        let mut out = String::new();
        write_json_string("\u{8}\u{c}\u{1}\u{7f}\u{2028}<", true, &mut out);
        // DEL is in Go's safeSet: written as it is.
        assert_eq!(out, "\"\\b\\f\\u0001\u{7f}\\u2028\\u003c\"");
    }

    #[test]
    fn types_follow_resolution() {
        let n = parse_one("a: 1\nb: yes\nc: [1.5, x, null]\n", Resolver::V2).unwrap();
        assert_eq!(
            to_json(&n),
            serde_json::json!({"a": 1, "b": true, "c": [1.5, "x", null]})
        );
        let n = parse_one("b: yes\n", Resolver::V3).unwrap();
        assert_eq!(to_json(&n), serde_json::json!({"b": "yes"}));
    }
}
