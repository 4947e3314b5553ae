//! Associative lists in a strategic merge: kyaml's `walkAssociativeSequence`
//! and the `Merger`'s list visit, with merge keys from the schema. Split out
//! of the walk because lists carry most of merge2's rules: key rows, the
//! element matcher and setter, and the one-pass walk of untouched lists.

use super::{
    directive, get_value, is_empty_map, kind_name, missing_or_null, nil_or_empty, raw_value, walk,
    Cx, Directive, Merged,
};
use crate::k8s::Schema;
use crate::yaml::{resolve_plain, Node, Resolver, Scalar, Style, Tag, Value};

/// Merger.VisitList (associative) followed by walkAssociativeSequence.
pub(super) fn walk_associative<'c>(
    dest: Option<Node>,
    mut origin: Option<Node>,
    schema: Option<Schema<'c>>,
    same: bool,
    cx: &mut Cx<'c>,
) -> Result<Merged, String> {
    let (dest, from_dest) = if missing_or_null(&dest) {
        match &origin {
            Some(o) => (o.clone(), same),
            None => return Ok(Merged::Clear),
        }
    } else if origin.as_ref().is_some_and(Node::is_null) {
        return Ok(Merged::Clear);
    } else {
        match directive(&mut origin)? {
            Directive::Delete => return Ok(Merged::Clear),
            Directive::Replace => match &origin {
                Some(o) => (o.clone(), same),
                None => return Ok(Merged::Clear),
            },
            _ => match dest {
                Some(_) if same => (origin.clone().unwrap_or_else(Node::seq), true),
                Some(d) => (d, true),
                None => return Ok(Merged::Clear),
            },
        }
    };
    let aliased = same || !from_dest;
    let origin = if aliased && !same {
        Some(dest.clone())
    } else {
        origin
    };
    let keys: Vec<String> = schema
        .map(|s| s.patch_strategy_and_keys().1.to_vec())
        .unwrap_or_default();
    if !aliased && origin.is_none() {
        if let [key] = keys.as_slice() {
            if has_distinct_keys(&dest, key) {
                let elem_schema = schema.and_then(|s| s.elements());
                return walk_untouched(dest, elem_schema, cx);
            }
        }
    }
    let mut list = Assoc {
        dest,
        origin,
        elem_schema: schema.and_then(|s| s.elements()),
        same: aliased,
    };
    let values = list.element_values(&keys);
    let merged = if !values.is_empty() || !keys.is_empty() {
        list.set_elements(values, keys, cx)?
    } else {
        let prims = list.primitive_values();
        list.set_elements(prims, vec![String::new()], cx)?
    };
    Ok(match merged {
        Some(node) => Merged::Node {
            node,
            from_dest: false,
        },
        None => Merged::Clear,
    })
}

/// Whether every element of `list` is a mapping with exactly one `key`
/// field, holding a non-empty, non-null scalar that no other element has.
fn has_distinct_keys(list: &Node, key: &str) -> bool {
    let Some(items) = list.as_seq() else {
        return false;
    };
    if items.is_empty() {
        return false;
    }
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.iter().all(|e| {
        let Some(entries) = e.as_map() else {
            return false;
        };
        let mut found = entries.iter().filter(|(k, _)| k.key_text() == Some(key));
        let (Some((_, v)), None) = (found.next(), found.next()) else {
            return false;
        };
        match v.as_scalar() {
            Some(s) if s.tag != Tag::Null && !s.text.is_empty() => seen.insert(s.text.as_str()),
            _ => false,
        }
    })
}

/// setAssociativeSequenceElements for a resource's list the patch has no
/// field for, when [`has_distinct_keys`] holds. kyaml still walks every
/// element: its rows are the elements' keys in order, each element is
/// walked alone (`from_dest`, so the resource's slot is updated and
/// appendListNode puts it back in place), and an element the walk leaves
/// null or `{}` is removed. That is, each element walked, in order, minus
/// the empty ones: computed in one pass instead of kyaml's per-row
/// ElementMatcher/ElementSetter scans, which are quadratic in the length.
fn walk_untouched<'c>(
    mut dest: Node,
    elem_schema: Option<Schema<'c>>,
    cx: &mut Cx<'c>,
) -> Result<Merged, String> {
    let items = match &mut dest.value {
        Value::Seq(items) => std::mem::take(items),
        _ => Vec::new(),
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        // The key field is a scalar and the patch has none: the walk keeps
        // it, so kyaml's re-adding of a missing key never applies here.
        let node = match walk(Some(item), None, elem_schema, false, cx)? {
            Merged::Clear => continue,
            Merged::Node { node, .. } | Merged::KeepNull(node) => node,
        };
        if node.is_null() || is_empty_map(&node) {
            continue;
        }
        out.push(node);
    }
    Ok(Merged::Node {
        node: Node {
            value: Value::Seq(out),
            pos: dest.pos,
        },
        from_dest: false,
    })
}

/// The two lists of an associative merge.
struct Assoc<'c> {
    dest: Node,
    origin: Option<Node>,
    elem_schema: Option<Schema<'c>>,
    same: bool,
}

impl<'c> Assoc<'c> {
    /// The sources in Prepend order: the patch first.
    fn prepend_order(&self) -> [Option<&Node>; 2] {
        [self.origin.as_ref(), Some(&self.dest)]
    }

    /// elementValues: each element's key values, patch first, deduplicated.
    fn element_values(&self, keys: &[String]) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for src in self.prepend_order().into_iter().flatten() {
            let Some(items) = src.as_seq() else { continue };
            for e in items {
                let row: Vec<String> = keys
                    .iter()
                    .map(|k| match e.get(k) {
                        Some(v) if !nil_or_empty(v) => raw_value(v).to_string(),
                        _ => String::new(),
                    })
                    .collect();
                if !row.is_empty() && !out.contains(&row) {
                    out.push(row);
                }
            }
        }
        out
    }

    /// elementPrimitiveValues: each scalar value once, patch first.
    fn primitive_values(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for src in self.prepend_order().into_iter().flatten() {
            for e in src.as_seq().into_iter().flatten() {
                let row = vec![raw_value(e).to_string()];
                if !out.contains(&row) {
                    out.push(row);
                }
            }
        }
        out
    }

    /// setAssociativeSequenceElements.
    fn set_elements(
        &mut self,
        mut rows: Vec<Vec<String>>,
        keys: Vec<String>,
        cx: &mut Cx<'c>,
    ) -> Result<Option<Node>, String> {
        let mut added: Vec<Node> = Vec::new();
        if keys.len() > 1 {
            merge_rows(&mut rows);
        }
        let mut valid_keys: Vec<String> = Vec::new();
        for row in &rows {
            if row.is_empty() {
                continue;
            }
            let (vk, valid_values) = validate_keys(&rows, row, &keys);
            valid_keys = vk;
            let (lk, lv) = validate_keys(
                std::slice::from_ref(&valid_values),
                &valid_values,
                &valid_keys,
            );
            let d_idx = element_list(&self.dest, &lk, &lv)?;
            let o_idx = match &self.origin {
                Some(o) => element_list(o, &lk, &lv)?,
                None => None,
            };
            let d = d_idx.and_then(|i| self.dest.as_seq().and_then(|s| s.get(i)).cloned());
            let o = o_idx.and_then(|i| {
                self.origin
                    .as_ref()
                    .and_then(Node::as_seq)
                    .and_then(|s| s.get(i))
                    .cloned()
            });
            let val = walk(d, o, self.elem_schema, self.same, cx)?;
            let (mut node, from_dest) = match val {
                Merged::Clear => (None, false),
                Merged::Node { node, from_dest } => (Some(node), from_dest),
                Merged::KeepNull(node) => (Some(node), false),
            };
            let empty = node.as_ref().is_none_or(|n| n.is_null() || is_empty_map(n));
            if empty {
                if !valid_keys.is_empty() {
                    let items = self.dest.as_seq_mut().ok_or("expected a sequence")?;
                    element_setter(items, None, &valid_keys, &valid_values)?;
                }
                continue;
            }
            if let Some(n) = node.as_mut() {
                for (i, key) in valid_keys.iter().enumerate() {
                    let v = valid_values.get(i).map(String::as_str).unwrap_or_default();
                    if n.as_map().is_some() && n.get(key).is_none() && !v.is_empty() {
                        n.set(key, plain_scalar(v));
                    }
                }
            }
            let Some(node) = node else { continue };
            // In kyaml the merged element is the resource's element, updated in place.
            if from_dest {
                if let (Some(i), Some(items)) = (d_idx, self.dest.as_seq_mut()) {
                    if let Some(slot) = items.get_mut(i) {
                        *slot = node.clone();
                    }
                }
            }
            element_setter(&mut added, Some(node), &valid_keys, &valid_values)?;
        }
        if rows.is_empty() {
            return Ok(Some(self.dest.clone()));
        }
        let dest_items = self.dest.as_seq().cloned().unwrap_or_default();
        append_list(&mut added, &dest_items, &valid_keys)?;
        Ok(Some(Node {
            value: Value::Seq(added),
            pos: self.dest.pos,
        }))
    }
}

/// A scalar kyaml makes from a string (NewScalarRNode), as a later decode sees it.
fn plain_scalar(v: &str) -> Node {
    Node::new(Value::Scalar(Scalar {
        text: v.to_string(),
        tag: resolve_plain(v, Resolver::V3),
        style: Style::Plain,
    }))
}

/// mergeValues: rows that agree on every key both have become one.
fn merge_rows(rows: &mut [Vec<String>]) {
    for i in 0..rows.len() {
        let v1 = rows[i].clone();
        for j in 0..rows.len() {
            let v2 = rows[j].clone();
            if let Some(m) = match_rows(&v1, &v2) {
                rows[i] = m.clone();
                rows[j] = m;
            }
        }
    }
}

fn match_rows(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut out = Vec::new();
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            out.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else if !x.is_empty() {
            out.push(x.clone());
        } else {
            out.push(y.clone());
        }
    }
    common.then_some(out)
}

/// validateKeys: drop key columns that are empty in every row.
fn validate_keys(
    rows: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut set: Vec<&String> = Vec::new();
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if !v.is_empty() {
                if let Some(k) = keys.get(i) {
                    if !set.contains(&k) {
                        set.push(k);
                    }
                }
            }
        }
    }
    if set.is_empty() {
        return (keys.to_vec(), values.to_vec());
    }
    let vk = keys.iter().filter(|k| set.contains(k)).cloned().collect();
    let vv = values
        .iter()
        .enumerate()
        .filter(|(i, v)| !v.is_empty() || keys.get(*i).is_some_and(|k| set.contains(&k)))
        .map(|(_, v)| v.clone())
        .collect();
    (vk, vv)
}

/// ElementMatcher{Keys, Values}: the index of the first matching element.
fn element_list(list: &Node, keys: &[String], values: &[String]) -> Result<Option<usize>, String> {
    let Some(items) = list.as_seq() else {
        return Ok(None);
    };
    let empty = String::new();
    let key0 = keys.first().unwrap_or(&empty);
    let value0 = values.first().unwrap_or(&empty);
    if key0.is_empty() {
        return Ok(items.iter().position(|e| raw_value(e) == value0));
    }
    for (i, e) in items.iter().enumerate() {
        if !(e.is_null() || e.as_map().is_some()) {
            continue;
        }
        if keys.len() != values.len() {
            return Err(
                "length of keys must equal length of values when MatchAnyValue is false".into(),
            );
        }
        let mut all = true;
        for (k, v) in keys.iter().zip(values) {
            if field_matcher(e, k, Some(v))?.is_none() {
                all = false;
                break;
            }
        }
        if all {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// kyaml's FieldMatcher: `value` None matches any value.
fn field_matcher<'a>(
    rn: &'a Node,
    name: &str,
    value: Option<&str>,
) -> Result<Option<&'a Node>, String> {
    if rn.is_null() {
        return Ok(None);
    }
    if name.is_empty() {
        if rn.as_scalar().is_none() {
            return Err(format!(
                "wrong node kind: expected ScalarNode but got {}",
                kind_name(rn)
            ));
        }
        return Ok((get_value(Some(rn)) == value.unwrap_or_default()).then_some(rn));
    }
    let Some(entries) = rn.as_map() else {
        return Err(format!(
            "wrong node kind: expected MappingNode but got {}",
            kind_name(rn)
        ));
    };
    let mut found = None;
    for (k, v) in entries {
        if k.key_text() == Some(name) && value.is_none_or(|want| raw_value(v) == want) {
            found = Some(v);
        }
    }
    Ok(found)
}

/// kyaml's ElementSetter: replaces (or, with no element, removes) the
/// elements matching keys/values, appending the element when none matched.
/// Like kyaml it also drops null and `{}` elements.
pub(super) fn element_setter(
    list: &mut Vec<Node>,
    element: Option<Node>,
    keys: &[String],
    values: &[String],
) -> Result<(), String> {
    let keys: Vec<String> = if keys.is_empty() {
        vec![String::new()]
    } else {
        keys.to_vec()
    };
    let mapping_setter = !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
    let mut out = Vec::new();
    let mut matched = false;
    for elem in list.drain(..) {
        if elem.is_null() || is_empty_map(&elem) {
            continue;
        }
        if elem.as_map().is_none() && mapping_setter {
            out.push(elem);
            continue;
        }
        let mut found = true;
        let mut hit = false;
        for (j, key) in keys.iter().enumerate() {
            if let Some(v) = values.get(j) {
                let want = (!v.is_empty()).then_some(v.as_str());
                hit = field_matcher(&elem, key, want)?.is_some();
            }
            if !hit {
                found = false;
                break;
            }
        }
        if !found {
            if !values.is_empty() {
                out.push(elem);
            }
            continue;
        }
        matched = true;
        if let Some(e) = &element {
            out.push(e.clone());
        }
    }
    *list = out;
    if let Some(e) = element {
        if !e.is_null() && !matched {
            list.push(e);
        }
    }
    Ok(())
}

/// appendListNode(itemsToBeAdded, dest, keys): the resource's elements
/// replace their merged copies (or, for several keys, move to the end).
fn append_list(dst: &mut Vec<Node>, src: &[Node], keys: &[String]) -> Result<(), String> {
    for elem in src {
        if keys.first().is_none_or(|k| k.is_empty()) {
            let v = raw_value(elem).to_string();
            element_setter(dst, Some(elem.clone()), &[String::new()], &[v])?;
            continue;
        }
        let mut v = Vec::new();
        for key in keys {
            if elem.as_map().is_none() && !elem.is_null() {
                return Err(format!(
                    "wrong node kind: expected MappingNode but got {}",
                    kind_name(elem)
                ));
            }
            match elem.get(key) {
                Some(value) => v.push(raw_value(value).to_string()),
                None => dst.push(elem.clone()),
            }
        }
        if keys.len() > 1 {
            element_setter(dst, None, keys, &v)?;
        }
        element_setter(dst, Some(elem.clone()), keys, &v)?;
    }
    Ok(())
}
