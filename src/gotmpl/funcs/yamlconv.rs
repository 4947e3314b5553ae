//! Conversions between template values and YAML nodes, with the semantics
//! of `sigs.k8s.io/yaml` (what Helm uses): YAML is decoded by go-yaml v2,
//! turned into JSON (non-string keys become strings, a null key is an
//! error) and decoded by `encoding/json`, so every number is a float64.
//! In the other direction a value is marshalled to JSON and re-read by
//! go-yaml v2 before printing, which the YAML emitter reproduces.

use std::collections::BTreeMap;

use super::comment_lines;
use crate::gotmpl::stack;
use crate::gotmpl::value::Value;
use crate::gotmpl::walk::{Nesting, Path};
use crate::yaml::{self, Node, Tag};

/// A scalar's number as JSON would carry it (float64).
fn number(text: &str, tag: &Tag) -> Result<f64, String> {
    let t = match tag {
        Tag::Int => match yaml::parse_int(text) {
            Some(yaml::Int::Signed(i)) => return Ok(i as f64),
            Some(yaml::Int::Unsigned(u)) => return Ok(u as f64),
            None => text.to_string(),
        },
        _ => yaml::float_text(text).map_err(|_| {
            format!(
                "error converting YAML to JSON: json: unsupported value: {}",
                go_inf_name(text)
            )
        })?,
    };
    t.parse::<f64>()
        .map_err(|_| format!("error converting YAML to JSON: invalid number {text}"))
}

fn go_inf_name(text: &str) -> &'static str {
    if text.contains("nan") || text.contains("NaN") || text.contains("NAN") {
        "NaN"
    } else if text.starts_with('-') {
        "-Inf"
    } else {
        "+Inf"
    }
}

/// go-yaml's `%+#v` of a decoded scalar (for the null-key error text).
fn go_syntax(n: &Node) -> String {
    match n.as_scalar() {
        Some(s) => match s.tag {
            Tag::Null => "<nil>".into(),
            Tag::Int | Tag::Float | Tag::Bool => s.text.clone(),
            _ => crate::gotmpl::fmt::quote(&s.text),
        },
        None => "map[interface {}]interface {}{...}".into(),
    }
}

/// A map key as sigs.k8s.io/yaml turns it into a JSON key.
fn key_text(k: &Node, v: &Node) -> Result<String, String> {
    let Some(s) = k.as_scalar() else {
        return Err(format!(
            "error converting YAML to JSON: unsupported map key of type: {}",
            "map[interface {}]interface {}"
        ));
    };
    Ok(match s.tag {
        Tag::Null => {
            return Err(format!(
                "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
                go_syntax(v)
            ))
        }
        Tag::Bool => (if yaml::yaml11_bool(&s.text) == Some(true) { "true" } else { "false" }).into(),
        Tag::Int => match yaml::parse_int(&s.text) {
            Some(yaml::Int::Signed(i)) => i.to_string(),
            Some(yaml::Int::Unsigned(u)) => u.to_string(),
            None => s.text.clone(),
        },
        Tag::Float => {
            // strconv.FormatFloat(f, 'g', -1, 32)
            let f = number(&s.text, &s.tag)? as f32;
            let short: f64 = format!("{f:e}").parse().unwrap_or(f64::from(f));
            yaml::format_g(short)
        }
        _ => s.text.clone(),
    })
}

/// YAML node → value, as `yaml.Unmarshal` into `interface{}` sees it.
pub fn from_node(n: &Node) -> Result<Value, String> {
    match &n.value {
        yaml::Value::Scalar(s) => Ok(match s.tag {
            Tag::Null => Value::Nil,
            Tag::Bool => Value::Bool(yaml::yaml11_bool(&s.text) == Some(true)),
            Tag::Int | Tag::Float => Value::Float(number(&s.text, &s.tag)?),
            _ => Value::from(s.text.as_str()),
        }),
        yaml::Value::Seq(items) => Ok(Value::list(
            items.iter().map(from_node).collect::<Result<_, _>>()?,
        )),
        yaml::Value::Map(entries) => {
            // Later duplicates win, as they do in a Go map.
            let mut m = BTreeMap::new();
            let mut null_key: Option<&Node> = None;
            for (k, v) in entries {
                if k.as_scalar().is_some_and(|s| s.tag == Tag::Null) {
                    null_key = Some(v);
                    continue;
                }
                m.insert(key_text(k, v)?, v);
            }
            if let Some(v) = null_key {
                key_text(&Node::null(), v)?;
            }
            let mut out = BTreeMap::new();
            for (k, v) in m {
                out.insert(k, from_node(v)?);
            }
            Ok(Value::map(out))
        }
    }
}

/// Nodes this shallow are printed and freed on the caller's stack.
const SHALLOW: usize = 64;

fn depth_error() -> String {
    format!(
        "error converting JSON to YAML: yaml: line 1: exceeded max depth of {}",
        yaml::MAX_DEPTH
    )
}

/// Value → node, the way `json.Marshal` then go-yaml v2 see it. `Err` with
/// json's text for NaN/Inf and for a map that contains itself.
fn node_of(v: &Value, path: &mut Path) -> Result<Node, String> {
    Ok(match v {
        Value::Invalid | Value::Nil => Node::null(),
        Value::Bool(b) => Node::scalar(if *b { "true" } else { "false" }, Tag::Bool),
        Value::Int(i) | Value::Int64(i) => Node::scalar(i.to_string(), Tag::Int),
        Value::Uint8(u) => Node::scalar(u.to_string(), Tag::Int),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(format!(
                    "json: unsupported value: {}",
                    crate::gotmpl::fmt::to_string(v)
                ));
            }
            Node::scalar(yaml::format_json(*f), Tag::Float)
        }
        Value::Str(s) => Node::string(s.to_string()),
        Value::Bytes(b) => Node::string(super::sprig_encoding::b64_encode(b)),
        Value::List(_) | Value::Map(_) => match path.descend(v, |p| container_node(v, p)) {
            Ok(n) => n?,
            Err(Nesting::Cycle) => {
                return Err(format!(
                    "json: unsupported value: encountered a cycle via {}",
                    v.type_name()
                ))
            }
            Err(why) => return Err(format!("json: {}", why.describe(&v.type_name()))),
        },
        Value::Object(o) => match o.marshal().or_else(|| o.underlying()) {
            Some(inner) => node_of(&inner, path)?,
            None => Node::map(),
        },
    })
}

fn container_node(v: &Value, path: &mut Path) -> Result<Node, String> {
    match v {
        Value::List(l) => {
            let mut n = Node::seq();
            if let Some(items) = n.as_seq_mut() {
                for i in &l.items {
                    items.push(node_of(i, path)?);
                }
            }
            Ok(n)
        }
        Value::Map(m) => {
            let mut n = Node::map();
            if let Some(entries) = n.as_map_mut() {
                for (k, val) in m.entries() {
                    entries.push((Node::string(k), node_of(&val, path)?));
                }
            }
            Ok(n)
        }
        _ => node_of(v, path),
    }
}

/// Helm's `toYaml`: the printed YAML without its final newline; "" on error.
pub fn to_yaml(v: &Value) -> String {
    try_to_yaml(v).unwrap_or_default()
}

/// helm4's `mustToYaml`: as [`to_yaml`], reporting the marshal error.
pub fn try_to_yaml(v: &Value) -> Result<String, String> {
    let mut path = Path::default();
    let n = node_of(v, &mut path)?;
    let deepest = path.deepest();
    let print = move || {
        if deepest > yaml::MAX_DEPTH {
            return Err(depth_error());
        }
        let s = yaml::to_string(&n).map_err(|e| e.to_string())?;
        Ok(s.strip_suffix('\n').map(str::to_string).unwrap_or(s))
    };
    // The emitter and the node's drop recurse as deep as the value nests.
    if deepest <= SHALLOW {
        print()
    } else {
        // No thread for a bigger stack: leak the node rather than
        // overflow this stack freeing it.
        stack::on_big_stack(print).unwrap_or_else(|print| {
            std::mem::forget(print);
            Err(format!(
                "yaml: value nested {deepest} deep needs a bigger stack"
            ))
        })
    }
}

/// `sigs.k8s.io/yaml.Unmarshal` of the first document into `interface{}`.
pub fn parse_yaml(text: &str) -> Result<Value, String> {
    parse_yaml_at(text).map_err(|(_, message)| message)
}

/// [`parse_yaml`], with the line the YAML parser names (if any). Text
/// with many full-line comments is first parsed with them cut short (see
/// [`comment_lines`]); the values are the same, and any doubt (a parse
/// error, a cut line inside a scalar) parses the text as it is.
pub fn parse_yaml_at(text: &str) -> Result<Value, (Option<u32>, String)> {
    parse_yaml_shortened_at(text, comment_lines::shorten(text))
}

/// [`parse_yaml_at`], trying `short` (the text with its comment lines cut
/// short) first.
fn parse_yaml_shortened_at(
    text: &str,
    short: Option<comment_lines::Shortened>,
) -> Result<Value, (Option<u32>, String)> {
    if let Some(short) = short {
        if let Ok(docs) = yaml::parse_all(&short.text, yaml::Resolver::V2) {
            if !comment_lines::inside_scalar(&docs, &short.marks) {
                return match docs.first() {
                    Some(d) => from_node(d).map_err(|e| (None, e)),
                    None => Ok(Value::Nil),
                };
            }
        }
    }
    parse_yaml_exact_at(text)
}

/// [`parse_yaml_at`] of the text as it is.
fn parse_yaml_exact_at(text: &str) -> Result<Value, (Option<u32>, String)> {
    match parse_yaml_node_at(text)? {
        Some(d) => from_node(&d).map_err(|e| (None, e)),
        None => Ok(Value::Nil),
    }
}

/// The first document of `text` as `sigs.k8s.io/yaml` reads it (go-yaml
/// v2 rules), before its conversion to values; `None` when there is none.
pub fn parse_yaml_node(text: &str) -> Result<Option<yaml::Node>, String> {
    parse_yaml_node_at(text).map_err(|(_, message)| message)
}

/// [`parse_yaml_node`], with the line the YAML parser names (if any).
fn parse_yaml_node_at(text: &str) -> Result<Option<yaml::Node>, (Option<u32>, String)> {
    let docs = yaml::parse_all(text, yaml::Resolver::V2).map_err(|e| match e {
        yaml::Error::Syntax { line, problem, .. } => (
            Some(line).filter(|l| *l > 0),
            format!("error converting YAML to JSON: yaml: line {line}: {problem}"),
        ),
        other => (
            None,
            format!("error converting YAML to JSON: yaml: {other}"),
        ),
    })?;
    Ok(docs.into_iter().next())
}

/// go-yaml v3 `Encoder.SetIndent(2)` layout (Helm's `toYamlPretty`): like
/// v2's, except that block sequences are indented under their key.
pub fn to_yaml_pretty(v: &Value) -> String {
    let plain = to_yaml(v);
    let mut out = String::new();
    // Shift every line inside a sequence that hangs off a mapping key.
    let mut shifts: Vec<(usize, usize)> = Vec::new(); // (key indent, extra)
    for line in plain.lines() {
        let indent = line.len() - line.trim_start().len();
        let is_item = line.trim_start().starts_with("- ") || line.trim_start() == "-";
        while let Some(&(ki, _)) = shifts.last() {
            if indent > ki || (indent == ki && is_item) {
                break;
            }
            shifts.pop();
        }
        let extra: usize = shifts.iter().map(|s| s.1).sum();
        if is_item && out.ends_with(":\n") {
            shifts.push((indent, 2));
        }
        let extra = extra
            + if is_item && out.ends_with(":\n") {
                2
            } else {
                0
            };
        out.push_str(&" ".repeat(extra));
        out.push_str(line);
        out.push('\n');
    }
    out.strip_suffix('\n').map(str::to_string).unwrap_or(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::fmt::to_string;
    use proptest::prelude::*;

    /// Documents whose lines of `#` are comments or scalar text: in block
    /// scalars (deeper than their content, at it, or ending them), quoted
    /// and plain scalars that span lines, flow collections, nested maps;
    /// some comments hold a tab, a control character or nothing.
    fn commented_doc() -> impl Strategy<Value = String> {
        let item = (0u8..9, 0u8..3, 0u8..6);
        proptest::collection::vec(item, 1..14).prop_map(|items| {
            let mut lines: Vec<String> = Vec::new();
            let mut depth = 0usize;
            for (i, (kind, a, c)) in items.into_iter().enumerate() {
                let ind = " ".repeat(depth * 2);
                // A line of `#` at indentation `at`.
                let hash = |at: usize| {
                    let text = [
                        "# note: [x] 'y' \"z\" |",
                        "#",
                        "#\ttab",
                        "#\u{1}",
                        "# k: v",
                        "#  ",
                    ];
                    format!("{}{}", " ".repeat(at), text[usize::from(c)])
                };
                let at = depth * 2 + [0, 2, 4][usize::from(a)];
                match kind {
                    0 => lines.push(format!("{ind}k{i}: v{a}")),
                    1 => {
                        let header = ["|", ">-", "|+", "| # c"][usize::from(c % 4)];
                        lines.push(format!("{ind}k{i}: {header}"));
                        lines.push(format!("{ind}  one"));
                        lines.push(hash(at));
                        lines.push(format!("{ind}  two"));
                    }
                    // A scalar or flow collection open over the `#` line.
                    2 | 3 | 5 => {
                        let (open, close) = match kind {
                            2 => ("\"w0", "w1\""),
                            3 => ("'w0", "w1'"),
                            _ => ("[a,", "b]"),
                        };
                        lines.push(format!("{ind}k{i}: {open}"));
                        lines.push(hash(at));
                        lines.push(format!("{ind}  {close}"));
                    }
                    4 => {
                        lines.push(format!("{ind}k{i}: w0"));
                        lines.push(format!("{ind}  w1"));
                        lines.push(hash(at));
                        lines.push(format!("{ind}  w2"));
                    }
                    6 => lines.push(hash(at)),
                    7 if depth < 3 => {
                        lines.push(format!("{ind}k{i}:"));
                        depth += 1;
                    }
                    _ => depth = depth.saturating_sub(1),
                }
            }
            lines.join("\n")
        })
    }

    proptest! {
        /// Cutting comment lines short changes no value and no error.
        #[test]
        fn comment_lines_cut_short_parse_as_the_text_does(
            doc in commented_doc(),
            crlf in any::<bool>(),
        ) {
            let doc = if crlf { doc.replace('\n', "\r\n") } else { doc };
            let short = comment_lines::shorten_past(&doc, 1);
            // Values compare by their Debug text (maps print sorted).
            let got = format!("{:?}", parse_yaml_shortened_at(&doc, short));
            prop_assert_eq!(got, format!("{:?}", parse_yaml_exact_at(&doc)), "{:?}", doc);
        }
    }

    #[test]
    fn yaml_numbers_become_floats() {
        let v =
            parse_yaml("a: 1000000\ng: 0x10\nj: 010\ni: yes\ny: 2\nf: \"1\"").unwrap_or(Value::Nil);
        assert_eq!(to_string(&v), "map[a:1e+06 f:1 g:16 i:true j:8 true:2]");
        let e = parse_yaml("~: 7\nnull: 8").err().unwrap_or_default();
        assert!(e.ends_with("key: <nil>, value: 8"), "{e}");
    }

    #[test]
    fn to_yaml_and_pretty() {
        let v = parse_yaml("b: [1, 2]\na: {x: 1.5}\nc: [{d: 1}]").unwrap_or(Value::Nil);
        assert_eq!(to_yaml(&v), "a:\n  x: 1.5\nb:\n- 1\n- 2\nc:\n- d: 1");
        assert_eq!(
            to_yaml_pretty(&v),
            "a:\n  x: 1.5\nb:\n  - 1\n  - 2\nc:\n  - d: 1"
        );
        assert_eq!(to_yaml(&Value::Float(f64::NAN)), "");
    }
}
