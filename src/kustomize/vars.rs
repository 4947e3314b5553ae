//! The deprecated `vars:`: a var names a field of one resource, and
//! `$(NAME)` in the fields the `varReference` specs name is replaced by
//! that field's value at the very end of the build (kustomize's
//! `ResAccumulator.MergeVars`/`ResolveVars` and `filters/refvar`).

use std::collections::BTreeMap;

use super::fieldspec::{apply, Create, FieldSpec};
use super::model::Var;
use super::resource::{ObjectId, Resource};
use crate::yaml::{self, Node, Resolver, Tag, Value};

/// MergeVars: each var is attached to the one resource it names (by any
/// id it has had); a second var of the same name is an error.
pub fn merge(
    set: &mut Vec<Var>,
    incoming: &[Var],
    resources: &mut [Resource],
) -> Result<(), String> {
    for v in incoming {
        let target = ObjectId {
            gvk: v.gvk.clone(),
            name: v.obj_name.clone(),
            namespace: v.obj_namespace.clone(),
        };
        // An empty namespace searches every namespace (GvknEquals).
        let exact_ns = !target.namespace.is_empty() || target.gvk.is_cluster_scoped();
        let matches = |id: &ObjectId| {
            id.gvk == target.gvk
                && id.name == target.name
                && (!exact_ns || id.same_namespace(&target))
        };
        let hits: Vec<usize> = resources
            .iter()
            .enumerate()
            .filter(|(_, r)| r.had_id(matches))
            .map(|(i, _)| i)
            .collect();
        if hits.len() > 1 {
            return Err(format!(
                "found {} resId matches for var {} (unable to disambiguate)",
                hits.len(),
                v.name
            ));
        }
        if let [i] = hits[..] {
            resources[i].ref_vars.push(v.name.clone());
        }
    }
    merge_set(set, incoming)
}

/// VarSet.MergeSlice: names are unique.
pub fn merge_set(set: &mut Vec<Var>, incoming: &[Var]) -> Result<(), String> {
    for v in incoming {
        if set.iter().any(|x| x.name == v.name) {
            return Err(format!("var '{}' already encountered", v.name));
        }
        set.push(v.clone());
    }
    Ok(())
}

/// A var's value: the typed scalar (GetFieldValue), or the YAML of a
/// mapping or list, which the replacer leaves alone.
#[derive(Clone, Debug)]
enum VarValue {
    Str(String),
    Typed(String, Tag),
    Other,
}

/// ResolveVars: finds each var's value and expands `$(NAME)` in the
/// fields `specs` name.
pub fn resolve(
    vars: &[Var],
    specs: &[FieldSpec],
    resources: &mut [Resource],
) -> Result<(), String> {
    if vars.is_empty() {
        return Ok(());
    }
    let mut values = BTreeMap::new();
    for v in vars {
        let Some(r) = resources.iter().find(|r| r.ref_vars.contains(&v.name)) else {
            return Err(format!(
                "var '{}' cannot be mapped to a field in the set of known resources",
                v.name
            ));
        };
        let path = slice_indices(&super::replacement::split_path(&v.field_path));
        let Some(node) = lookup(&r.node, &path) else {
            return Err(format!(
                "field specified in var '{}' not found in corresponding resource",
                v.name
            ));
        };
        let value = match &node.value {
            Value::Scalar(s) => match s.tag {
                Tag::Int | Tag::Float | Tag::Bool => VarValue::Typed(s.text.clone(), s.tag.clone()),
                _ => VarValue::Str(s.text.clone()),
            },
            _ => VarValue::Other,
        };
        values.insert(v.name.clone(), value);
    }
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        for spec in specs.iter().filter(|s| s.selects(&gvk)) {
            apply(&mut r.node, spec, Create::Nothing, &mut |n: &mut Node| {
                expand_node(n, &values)
            })?;
        }
    }
    Ok(())
}

/// convertSliceIndex: `ports[0]` is `ports` then `0`.
fn slice_indices(parts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in parts {
        if let Some(open) = p.rfind('[').filter(|_| p.ends_with(']')) {
            let idx = &p[open + 1..p.len() - 1];
            if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) {
                if open > 0 {
                    out.push(p[..open].to_string());
                }
                out.push(idx.to_string());
                continue;
            }
        }
        out.push(p.clone());
    }
    out
}

fn lookup<'n>(node: &'n Node, path: &[String]) -> Option<&'n Node> {
    let mut cur = node;
    for part in path {
        cur = match part.parse::<usize>() {
            Ok(i) => cur.as_seq()?.get(i)?,
            Err(_) => match part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                Some(kv) => {
                    let (k, v) = kv.split_once('=')?;
                    cur.as_seq()?
                        .iter()
                        .find(|e| e.get(k).and_then(Node::as_str) == Some(v))?
                }
                None => cur.get(part)?,
            },
        };
    }
    Some(cur)
}

/// refvar's set: strings in a scalar, the values of a map or the items
/// of a list are expanded; other scalars are left alone.
fn expand_node(n: &mut Node, values: &BTreeMap<String, VarValue>) -> Result<(), String> {
    match &mut n.value {
        Value::Scalar(s) if s.tag == Tag::Null => Ok(()),
        Value::Scalar(_) => {
            expand_scalar(n, values);
            Ok(())
        }
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if k.as_scalar().is_none_or(|s| s.tag != Tag::Str) {
                    return Err(format!(
                        "invalid map key: value='{}'",
                        k.key_text().unwrap_or_default()
                    ));
                }
                expand_scalar(v, values);
            }
            Ok(())
        }
        Value::Seq(items) => {
            for item in items.iter_mut() {
                if item.as_scalar().is_none_or(|s| s.tag != Tag::Str) {
                    return Err("invalid value type expect a string".into());
                }
                expand_scalar(item, values);
            }
            Ok(())
        }
    }
}

fn expand_scalar(n: &mut Node, values: &BTreeMap<String, VarValue>) {
    let Some(s) = n.as_scalar().filter(|s| s.tag == Tag::Str) else {
        return;
    };
    let (text, tag) = expand(&s.text, values);
    *n = Node::scalar(text, tag);
}

/// DoReplacements: `$(NAME)` becomes the value (keeping its type when it
/// is the whole string), `$$` a literal `$`; unknown names stay.
fn expand(input: &str, values: &BTreeMap<String, VarValue>) -> (String, Tag) {
    let b = input.as_bytes();
    let mut out = String::new();
    let (mut checkpoint, mut cursor) = (0, 0);
    while cursor < b.len() {
        if b[cursor] == b'$' && cursor + 1 < b.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest.find(')') {
                    Some(close) => {
                        let name = &rest[1..close];
                        let mapped = match values.get(name) {
                            Some(VarValue::Str(t)) => Some((t.clone(), Tag::Str)),
                            Some(VarValue::Typed(t, tag)) => {
                                Some((typed_text(t, tag), tag.clone()))
                            }
                            _ => None,
                        };
                        let (text, tag) =
                            mapped.unwrap_or_else(|| (format!("$({name})"), Tag::Str));
                        if input.len() == close + 2 && cursor == 0 {
                            return (text, tag);
                        }
                        out.push_str(&text);
                        close + 1
                    }
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    // A lone `$` and the next character are kept.
                    let ch = rest.chars().next().map_or(1, char::len_utf8);
                    out.push('$');
                    out.push_str(&rest[..ch]);
                    ch
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    if checkpoint < input.len() {
        out.push_str(&input[checkpoint..]);
    }
    (out, Tag::Str)
}

/// How Go prints the typed value (strconv.Atoi/ParseFloat/ParseBool, then
/// FormatInt/FormatFloat/FormatBool).
fn typed_text(text: &str, tag: &Tag) -> String {
    match tag {
        Tag::Bool => text.to_ascii_lowercase(),
        Tag::Int => match yaml::parse_int(&text.replace('_', "")) {
            Some(yaml::Int::Signed(i)) => i.to_string(),
            Some(yaml::Int::Unsigned(u)) => u.to_string(),
            None => text.to_string(),
        },
        Tag::Float => match yaml::resolve_plain(text, Resolver::V3) {
            Tag::Float => text
                .parse::<f64>()
                .map_or_else(|_| text.to_string(), |f| f.to_string()),
            _ => text.to_string(),
        },
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, VarValue)]) -> BTreeMap<String, VarValue> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn expansion_follows_do_replacements() {
        let v = vals(&[
            ("SVC", VarValue::Str("web".into())),
            ("PORT", VarValue::Typed("8080".into(), Tag::Int)),
        ]);
        assert_eq!(expand("$(SVC)", &v), ("web".into(), Tag::Str));
        assert_eq!(expand("$(PORT)", &v), ("8080".into(), Tag::Int));
        assert_eq!(expand("http://$(SVC):$(PORT)/", &v).0, "http://web:8080/");
        assert_eq!(
            expand("$$(SVC) $(NOPE) $x $(", &v).0,
            "$(SVC) $(NOPE) $x $("
        );
    }

    #[test]
    fn slice_indices_split() {
        let parts = super::super::replacement::split_path("spec.ports[0].port");
        assert_eq!(slice_indices(&parts), ["spec", "ports", "0", "port"]);
    }
}
