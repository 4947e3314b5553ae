//! One object against one schema: the walk that finds unknown fields,
//! wrong types, missing required fields, values outside an enum, list-map
//! items with the same keys and (for CRD schemas) the value limits of a
//! structural schema. It reads the parsed node, never its printed text,
//! and knows nothing of environments or output formats.
//!
//! Two dialects share the walk. The built-in schemas (OpenAPI definitions
//! with `$ref`s, closed by `additionalProperties: false` as
//! kubernetes-validate's strict variant closes them) and CRD
//! `openAPIV3Schema`s, which are closed unless they say otherwise: the API
//! server prunes (and with `kubectl --validate=strict`, the default since
//! 1.27, refuses) a field a structural schema does not declare, unless
//! `x-kubernetes-preserve-unknown-fields` keeps it
//! (apiextensions-apiserver: pkg/apiserver/schema/pruning/algorithm.go).
//! A `null` passes everywhere: the API server reads it as unset.

use std::collections::HashSet;

use serde_json::Value as J;

use super::bundle::Schemas;
use super::{Rule, Seg};
use crate::yaml::{to_json, Node, Tag, Value};

/// The definition every object's `metadata` is checked against.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// One problem at a path of the object.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// Where: the node the problem is at (for a missing field, the object
    /// that lacks it).
    pub at: Vec<Seg>,
    /// For a missing required field: its name (shown after `at`).
    pub missing: Option<String>,
    /// Which check.
    pub rule: Rule,
    /// What is wrong, without the path.
    pub message: String,
}

/// Checks `node` against `schema` (a built-in definition when `crd` is
/// false, else a CRD's `openAPIV3Schema`); `defs` resolves `$ref`s and
/// checks a custom resource's `metadata`.
pub fn check(node: &Node, schema: &J, defs: &Schemas, crd: bool) -> Vec<Issue> {
    let mut w = Walk {
        defs,
        crd,
        path: Vec::new(),
        out: Vec::new(),
    };
    w.object_root(node, schema);
    w.out
}

struct Walk<'a> {
    defs: &'a Schemas,
    crd: bool,
    path: Vec<Seg>,
    out: Vec<Issue>,
}

/// `s`, its `$ref`s followed.
fn resolve<'s>(defs: &'s Schemas, mut s: &'s J) -> &'s J {
    for _ in 0..16 {
        match s
            .get("$ref")
            .and_then(J::as_str)
            .and_then(|name| defs.def(name))
        {
            Some(d) => s = d,
            None => return s,
        }
    }
    s
}

impl<'a> Walk<'a> {
    fn issue(&mut self, rule: Rule, message: String) {
        self.out.push(Issue {
            at: self.path.clone(),
            missing: None,
            rule,
            message,
        });
    }

    /// The object's root: `apiVersion` and `kind` were matched to find the
    /// schema; a custom resource's `metadata` is an ObjectMeta whatever its
    /// CRD says (the API server validates it so).
    fn object_root(&mut self, node: &Node, schema: &J) {
        if !self.crd {
            return self.check(node, schema);
        }
        self.check_as(node, schema, true);
    }

    fn check(&mut self, n: &Node, s: &J) {
        self.check_as(n, s, false);
    }

    /// `resource`: `n` is a whole resource (the root of a custom resource,
    /// or an `x-kubernetes-embedded-resource`).
    fn check_as<'s>(&mut self, n: &Node, s: &'s J, resource: bool)
    where
        'a: 's,
    {
        let s = resolve(self.defs, s);
        if n.is_null() {
            return;
        }
        let found = type_of(n);
        if flag(s, "x-kubernetes-int-or-string") {
            if !matches!(found, "integer" | "string") {
                self.issue(
                    Rule::WrongType,
                    format!("expected integer or string, found {}", shown(n)),
                );
            }
            return;
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(branches) = s.get(key).and_then(J::as_array) {
                if !branches.iter().any(|b| self.passes(n, b)) {
                    let types: Vec<String> = branches
                        .iter()
                        .filter_map(|b| type_names(resolve(self.defs, b)))
                        .collect();
                    let message = if types.len() == branches.len() {
                        format!("expected {}, found {}", types.join(" or "), shown(n))
                    } else {
                        format!("matches none of the {key} schemas")
                    };
                    self.issue(Rule::WrongType, message);
                    return;
                }
            }
        }
        if let Some(all) = s.get("allOf").and_then(J::as_array) {
            for b in all {
                self.check(n, b);
            }
        }
        if let Some(expected) = type_names(s) {
            if !types(s).any(|t| accepts(t, found, n)) {
                self.issue(
                    Rule::WrongType,
                    format!("expected {expected}, found {}", shown(n)),
                );
                return;
            }
        }
        match &n.value {
            Value::Map(entries) => {
                let resource = resource || flag(s, "x-kubernetes-embedded-resource");
                self.object(entries, s, resource)
            }
            Value::Seq(items) => self.array(items, s),
            Value::Scalar(_) => self.scalar(n, s),
        }
    }

    /// Whether `n` matches `s` without a finding.
    fn passes(&self, n: &Node, s: &J) -> bool {
        let mut w = Walk {
            defs: self.defs,
            crd: self.crd,
            path: Vec::new(),
            out: Vec::new(),
        };
        w.check(n, s);
        w.out.is_empty()
    }

    fn object(&mut self, entries: &[(Node, Node)], s: &J, resource: bool) {
        let props = s.get("properties").and_then(J::as_object);
        for r in s
            .get("required")
            .and_then(J::as_array)
            .into_iter()
            .flatten()
        {
            let Some(r) = r.as_str() else { continue };
            if resource && self.crd && matches!(r, "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if !entries.iter().any(|(k, _)| k.key_text() == Some(r)) {
                self.out.push(Issue {
                    at: self.path.clone(),
                    missing: Some(r.to_string()),
                    rule: Rule::Required,
                    message: format!("missing required field \"{r}\""),
                });
            }
        }
        let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
        let additional = s.get("additionalProperties");
        // A CRD object schema without properties, additionalProperties or
        // the preserve flag keeps no field (the pruning algorithm).
        let closed = match additional {
            Some(J::Bool(false)) => !preserve,
            Some(_) => false,
            None => self.crd && !preserve,
        };
        for (k, v) in entries {
            let Some(key) = k.key_text() else { continue };
            self.path.push(Seg::Key(key.to_string()));
            if resource && self.crd && matches!(key, "apiVersion" | "kind" | "metadata") {
                if key == "metadata" {
                    if let Some(meta) = self.defs.def(OBJECT_META) {
                        let was = std::mem::replace(&mut self.crd, false);
                        self.check(v, meta);
                        self.crd = was;
                    }
                }
            } else if let Some(p) = props.and_then(|p| p.get(key)) {
                self.check(v, p);
            } else if let Some(a @ J::Object(_)) = additional {
                self.check(v, a);
            } else if closed {
                let hint = props
                    .and_then(|p| closest(key, p.keys().map(String::as_str)))
                    .map(|c| format!(" (did you mean \"{c}\"?)"))
                    .unwrap_or_default();
                self.issue(Rule::UnknownField, format!("unknown field \"{key}\"{hint}"));
            }
            self.path.pop();
        }
        if self.crd {
            let n = entries.len() as u64;
            if let Some(max) = s
                .get("maxProperties")
                .and_then(J::as_u64)
                .filter(|m| n > *m)
            {
                self.issue(
                    Rule::Value,
                    format!("has {n} fields, at most {max} allowed"),
                );
            }
            if let Some(min) = s
                .get("minProperties")
                .and_then(J::as_u64)
                .filter(|m| n < *m)
            {
                self.issue(
                    Rule::Value,
                    format!("has {n} fields, at least {min} required"),
                );
            }
        }
    }

    fn array(&mut self, items: &[Node], s: &J) {
        let map_keys: Vec<&str> = s
            .get("x-kubernetes-list-map-keys")
            .and_then(J::as_array)
            .map(|a| a.iter().filter_map(J::as_str).collect())
            .unwrap_or_default();
        let list_type = s.get("x-kubernetes-list-type").and_then(J::as_str);
        let item_schema = s.get("items").filter(|i| i.is_object());
        let merge_key = s.get("x-kubernetes-patch-merge-key").and_then(J::as_str);
        let shown_by: Vec<&str> = merge_key
            .into_iter()
            .chain(map_keys.iter().copied())
            .collect();
        let mut seen = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            self.path.push(item_seg(item, i, &shown_by));
            if let Some(is) = item_schema {
                self.check(item, is);
            }
            match list_type {
                Some("map") if !map_keys.is_empty() && item.as_map().is_some() => {
                    let key: Vec<String> = map_keys
                        .iter()
                        .map(|k| {
                            item.get(k)
                                .map_or("<unset>".into(), |v| to_json(v).to_string())
                        })
                        .collect();
                    if !seen.insert(key.join("\u{0}")) {
                        let shown: Vec<String> = map_keys
                            .iter()
                            .zip(&key)
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect();
                        self.issue(
                            Rule::DuplicateKey,
                            format!("duplicate entry for key {}", shown.join(", ")),
                        );
                    }
                }
                Some("set") if item.as_scalar().is_some() => {
                    let v = to_json(item).to_string();
                    if !seen.insert(v.clone()) {
                        self.issue(Rule::DuplicateKey, format!("duplicate value {v} in a set"));
                    }
                }
                _ => {}
            }
            self.path.pop();
        }
        if self.crd {
            let n = items.len() as u64;
            if let Some(max) = s.get("maxItems").and_then(J::as_u64).filter(|m| n > *m) {
                self.issue(Rule::Value, format!("has {n} items, at most {max} allowed"));
            }
            if let Some(min) = s.get("minItems").and_then(J::as_u64).filter(|m| n < *m) {
                self.issue(
                    Rule::Value,
                    format!("has {n} items, at least {min} required"),
                );
            }
        }
    }

    fn scalar(&mut self, n: &Node, s: &J) {
        if let Some(allowed) = s.get("enum").and_then(J::as_array) {
            let v = to_json(n);
            if !allowed.contains(&v) {
                let list: Vec<String> = allowed.iter().map(J::to_string).collect();
                self.issue(
                    Rule::Enum,
                    format!("unsupported value {v}: expected one of {}", list.join(", ")),
                );
            }
        }
        if !self.crd {
            return;
        }
        let v = to_json(n);
        if let Some(x) = v.as_f64() {
            if let Some(max) = s.get("maximum").and_then(J::as_f64) {
                let excl = flag(s, "exclusiveMaximum");
                if x > max || (excl && x == max) {
                    self.issue(Rule::Value, format!("{v} is above the maximum {max}"));
                }
            }
            if let Some(min) = s.get("minimum").and_then(J::as_f64) {
                let excl = flag(s, "exclusiveMinimum");
                if x < min || (excl && x == min) {
                    self.issue(Rule::Value, format!("{v} is below the minimum {min}"));
                }
            }
        }
        if let Some(text) = v.as_str() {
            let len = text.chars().count() as u64;
            if let Some(max) = s.get("maxLength").and_then(J::as_u64).filter(|m| len > *m) {
                self.issue(
                    Rule::Value,
                    format!("is {len} characters long, at most {max} allowed"),
                );
            }
            if let Some(min) = s.get("minLength").and_then(J::as_u64).filter(|m| len < *m) {
                self.issue(
                    Rule::Value,
                    format!("is {len} characters long, at least {min} required"),
                );
            }
            if let Some(p) = s.get("pattern").and_then(J::as_str) {
                // ECMA 262 patterns; one the regex crate cannot read is skipped.
                if let Ok(re) = regex::Regex::new(p) {
                    if !re.is_match(text) {
                        self.issue(Rule::Value, format!("{v} does not match the pattern {p}"));
                    }
                }
            }
        }
    }
}

/// The path step to list item `i`: `[name=api]` by the list's merge key
/// (the diff's) or first list-map key when the item has it, else `[i]`.
fn item_seg(item: &Node, i: usize, keys: &[&str]) -> Seg {
    let by_key = keys.first().and_then(|k| {
        let v = item.get(k)?.as_scalar()?;
        Some(Seg::Item {
            key: (*k).to_string(),
            value: v.text.clone(),
            index: i,
        })
    });
    by_key.unwrap_or(Seg::Index(i))
}

fn flag(s: &J, key: &str) -> bool {
    s.get(key).and_then(J::as_bool) == Some(true)
}

/// The schema's types, `null` left out (a null passed already).
fn types(s: &J) -> impl Iterator<Item = &str> {
    let list: Vec<&str> = match s.get("type") {
        Some(J::String(t)) => vec![t.as_str()],
        Some(J::Array(a)) => a.iter().filter_map(J::as_str).collect(),
        _ => Vec::new(),
    };
    list.into_iter().filter(|t| *t != "null")
}

/// `integer or string`, or None when the schema names no type.
fn type_names(s: &J) -> Option<String> {
    let names: Vec<&str> = types(s).collect();
    (!names.is_empty()).then(|| names.join(" or "))
}

/// The JSON type a node converts to (as sigs.k8s.io/yaml converts it).
fn type_of(n: &Node) -> &'static str {
    match &n.value {
        Value::Map(_) => "object",
        Value::Seq(_) => "array",
        Value::Scalar(s) => match s.tag {
            Tag::Null => "null",
            Tag::Bool => "boolean",
            Tag::Int => "integer",
            Tag::Float => "number",
            _ => "string",
        },
    }
}

fn accepts(expected: &str, found: &str, n: &Node) -> bool {
    expected == found
        || (expected == "number" && found == "integer")
        // `.inf`, `.nan`: floats that are no JSON number become strings.
        || (expected == "string" && found == "number" && to_json(n).is_string())
}

/// `string "abc"`, `integer 3`, `object`.
fn shown(n: &Node) -> String {
    match &n.value {
        Value::Scalar(_) => {
            let mut v = to_json(n).to_string();
            if v.chars().count() > 40 {
                v = v.chars().take(37).collect::<String>() + "...";
            }
            format!("{} {v}", type_of(n))
        }
        _ => type_of(n).to_string(),
    }
}

/// The declared field `key` was probably meant as: one edit away (two for
/// longer names), or differing only in case.
fn closest<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if key.chars().count() > 6 { 2 } else { 1 };
    known
        .map(|k| {
            let d = if k.eq_ignore_ascii_case(key) {
                0
            } else {
                distance(key, k)
            };
            (d, k)
        })
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::bundle::Catalog;
    use crate::validate::path_text;

    fn issues(yaml: &str) -> Vec<String> {
        let c = Catalog::default();
        let s = c.version("1.31").unwrap();
        let doc = crate::yaml::parse_all(yaml, crate::yaml::Resolver::V3)
            .unwrap()
            .remove(0);
        let av = doc.get_str("apiVersion").unwrap();
        let kind = doc.get_str("kind").unwrap();
        let schema = s.for_type(av, kind).unwrap();
        check(&doc, schema, &s, false)
            .into_iter()
            .map(|i| format!("{}: {}", path_text(&i.at, i.missing.as_deref()), i.message))
            .collect()
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: REPLICAS\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: nginx\n        IMAGE_PULL\n        ports:\n        - containerPort: 80\n        - containerPort: PORT\n";

    fn deployment(replicas: &str, pull: &str, port: &str) -> String {
        DEPLOYMENT
            .replace("REPLICAS", replicas)
            .replace("IMAGE_PULL", pull)
            .replace("PORT", port)
    }

    #[test]
    fn a_valid_deployment_has_no_issue() {
        assert_eq!(
            issues(&deployment("2", "imagePullPolicy: Always", "81")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_misspelled_field_is_unknown_with_a_suggestion() {
        assert_eq!(
            issues(&deployment("2", "imagePullPolcy: Always", "81")),
            ["spec.template.spec.containers[name=api].imagePullPolcy: unknown field \"imagePullPolcy\" (did you mean \"imagePullPolicy\"?)"]
        );
    }

    #[test]
    fn a_wrong_type_and_a_duplicate_list_map_key() {
        assert_eq!(
            issues(&deployment("two", "stdin: true", "80")),
            [
                "spec.replicas: expected integer, found string \"two\"",
                "spec.template.spec.containers[name=api].ports[containerPort=80]: duplicate entry for key containerPort=80, protocol=<unset>",
            ]
        );
    }

    #[test]
    fn a_missing_required_field_names_it() {
        let y = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - image: nginx\n";
        assert_eq!(
            issues(y),
            ["spec.containers[0].name: missing required field \"name\""]
        );
    }

    #[test]
    fn int_or_string_takes_both_and_nothing_else() {
        let y = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - port: 80\n    targetPort: http\n  - port: 81\n    targetPort: 8081\n  - port: 82\n    targetPort: [1]\n";
        assert_eq!(
            issues(y),
            ["spec.ports[port=82].targetPort: expected string or integer, found array"]
        );
    }

    #[test]
    fn edit_distance_finds_near_names_only() {
        assert_eq!(distance("imagePullPolcy", "imagePullPolicy"), 1);
        assert_eq!(
            closest("replica", ["replicas", "selector"].into_iter()),
            Some("replicas")
        );
        assert_eq!(closest("zzz", ["replicas"].into_iter()), None);
    }
}
