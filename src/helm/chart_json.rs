//! helm 3's `.Chart` as `json.Marshal` sees it (`toJson`, `toYaml`): the
//! `chart.Metadata` members in Go's field order with their `omitempty`
//! tags, then `IsRoot`; and `dependencies` as `ProcessDependencies` left
//! them: disabled entries dropped, `name` replaced by the alias,
//! `enabled: true`, and `import-values` rewritten into `child`/`parent`
//! pairs. It does not decide which subcharts are enabled (`values.rs`).

use std::collections::BTreeMap;

use super::chart::Chart;
use crate::gotmpl::Value;

/// `chart.Metadata`'s JSON members in Go's order (all `omitempty`).
const METADATA: &[&str] = &[
    "name",
    "home",
    "sources",
    "version",
    "description",
    "keywords",
    "maintainers",
    "icon",
    "apiVersion",
    "condition",
    "tags",
    "appVersion",
    "deprecated",
    "annotations",
    "kubeVersion",
    "dependencies",
    "type",
];

/// `chart.Dependency`'s JSON members in Go's order.
const DEPENDENCY: &[&str] = &[
    "name",
    "version",
    "repository",
    "condition",
    "tags",
    "enabled",
    "import-values",
    "alias",
];

/// `chart.Maintainer`'s JSON members in Go's order.
const MAINTAINER: &[&str] = &["name", "email", "url"];

/// Whether `omitempty` drops the value.
fn empty(v: &Value) -> bool {
    match v {
        Value::Nil | Value::Invalid => true,
        Value::Bool(b) => !b,
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.items.is_empty(),
        Value::Map(m) => m.is_empty(),
        _ => false,
    }
}

/// A map's members in `order` (others dropped: Go's struct has no field
/// for them), empty ones left out except the `always` ones (no
/// `omitempty`: `Dependency.Name` and `.Repository`), printed as "".
fn ordered(v: &Value, order: &[&str], always: &[&str]) -> Vec<(String, Value)> {
    let Value::Map(m) = v else {
        return Vec::new();
    };
    order
        .iter()
        .filter_map(|k| {
            let x = m.get(k);
            match x {
                Some(x) if !empty(&x) => Some((k.to_string(), x)),
                _ if always.contains(k) => Some((k.to_string(), Value::from(""))),
                _ => None,
            }
        })
        .collect()
}

/// The `dependencies:` entries as helm 3 holds them after processing.
pub(super) fn processed_dependencies(c: &Chart) -> Vec<Value> {
    let declared = c.declared_dependencies();
    let Some(kept) = &c.kept else {
        return declared;
    };
    kept.iter()
        .filter_map(|(i, name)| {
            let Value::Map(m) = declared.get(*i)? else {
                return None;
            };
            let mut e: BTreeMap<String, Value> = m.entries().into_iter().collect();
            e.insert("name".into(), Value::from(name.as_str()));
            e.insert("enabled".into(), Value::Bool(true));
            if let Some(Value::List(ivs)) = m.get("import-values") {
                let pairs = ivs.items.iter().filter_map(import_pair).collect();
                e.insert("import-values".into(), Value::list(pairs));
            }
            Some(Value::map(e))
        })
        .collect()
}

/// `processImportValues`' rewrite of one entry (a string `x` becomes
/// `exports.x` into `.`).
fn import_pair(iv: &Value) -> Option<Value> {
    let (child, parent) = match iv {
        Value::Str(s) => (Value::from(format!("exports.{s}")), Value::from(".")),
        Value::Map(m) => (m.get("child")?, m.get("parent")?),
        _ => return None,
    };
    let mut p = BTreeMap::new();
    p.insert("child".to_string(), child);
    p.insert("parent".to_string(), parent);
    Some(Value::map(p))
}

/// `.Chart`'s JSON members: metadata in Go's order, then `IsRoot`.
pub(super) fn members(c: &Chart, is_root: bool) -> Vec<(String, Value)> {
    let Value::Map(m) = &c.metadata else {
        return vec![("IsRoot".into(), Value::Bool(is_root))];
    };
    let mut meta: BTreeMap<String, Value> = m.entries().into_iter().collect();
    meta.insert("name".into(), Value::from(c.name.as_str()));
    meta.insert(
        "dependencies".into(),
        Value::list(processed_dependencies(c)),
    );
    let mut out = ordered(&Value::map(meta), METADATA, &[]);
    for (k, v) in &mut out {
        match k.as_str() {
            "maintainers" | "dependencies" => {
                let (order, always): (&[&str], &[&str]) = if k == "maintainers" {
                    (MAINTAINER, &[])
                } else {
                    (DEPENDENCY, &["name", "repository"])
                };
                if let Value::List(l) = v {
                    let items = l.items.iter().map(|x| record(x, order, always)).collect();
                    *v = Value::list(items);
                }
            }
            _ => {}
        }
    }
    out.push(("IsRoot".into(), Value::Bool(is_root)));
    out
}

/// A nested struct with its members in Go's order.
fn record(v: &Value, order: &[&str], always: &[&str]) -> Value {
    let fields = ordered(v, order, always);
    Value::Object(std::sync::Arc::new(
        super::objects::Record::new("struct", BTreeMap::new()).with_json_fields(fields),
    ))
}

/// `.Chart.Dependencies` for templates: `*chart.Dependency` structs (Go
/// field names; `toJson`/`toYaml` as `json.Marshal` prints them).
pub(super) fn dependency_objects(c: &Chart) -> Vec<Value> {
    let go_names = [
        ("Name", "name"),
        ("Version", "version"),
        ("Repository", "repository"),
        ("Condition", "condition"),
        ("Tags", "tags"),
        ("Enabled", "enabled"),
        ("ImportValues", "import-values"),
        ("Alias", "alias"),
    ];
    processed_dependencies(c)
        .iter()
        .map(|d| {
            let mut fields = BTreeMap::new();
            for (field, key) in go_names {
                let v = match d {
                    Value::Map(m) => m.get(key),
                    _ => None,
                };
                let v = match (key, v) {
                    ("enabled", v) => Value::Bool(matches!(v, Some(Value::Bool(true)))),
                    ("tags" | "import-values", Some(v @ Value::List(_))) => v,
                    ("tags" | "import-values", _) => Value::list(Vec::new()),
                    (_, Some(Value::Str(s))) => Value::Str(s),
                    (_, Some(Value::Nil) | None) => Value::from(""),
                    (_, Some(other)) => Value::from(crate::gotmpl::fmt::to_string(&other)),
                };
                fields.insert(field.to_string(), v);
            }
            let json = ordered(d, DEPENDENCY, &["name", "repository"]);
            Value::Object(std::sync::Arc::new(
                super::objects::Record::new("*chart.Dependency", fields).with_json_fields(json),
            ))
        })
        .collect()
}
