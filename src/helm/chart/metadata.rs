//! What helm checks of a chart's metadata: the Go types
//! `yaml.Unmarshal` into `chart.Metadata` enforces (on `Chart.yaml` and
//! `requirements.yaml`) and `Metadata.Validate` (name, version, type,
//! dependency aliases). Must not: change the metadata (the v1 default
//! `apiVersion` is set by `load_files.rs`).

use super::{Chart, Error};
use crate::gotmpl::convert::parse_yaml_at;
use crate::gotmpl::Value;

/// `yaml.Unmarshal(requirements.yaml, &chart.Metadata)`: the document must
/// be a mapping whose `dependencies`, if set, is a list.
pub(super) fn check_requirements(text: &str) -> Result<(), (Option<u32>, String)> {
    const PREFIX: &str = "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal";
    match parse_yaml_at(text).map_err(|e| (e.line, e.message))? {
        Value::Nil => Ok(()),
        Value::Map(m) => match m.get("dependencies") {
            None | Some(Value::Nil | Value::List(_)) => Ok(()),
            Some(other) => Err((None, format!(
                "{PREFIX} {} into Go struct field Metadata.dependencies of type []*chart.Dependency",
                crate::gotmpl::convert::json_kind(&other)
            ))),
        },
        other => Err((None, format!(
            "{PREFIX} {} into Go value of type chart.Metadata",
            crate::gotmpl::convert::json_kind(&other)
        ))),
    }
}

/// Go types of `chart.Metadata`'s fields that a YAML value can miss:
/// sigs.k8s.io/yaml turns any scalar into a string for a string field, so
/// only lists and maps fail there.
const METADATA_FIELDS: &[(&str, &str)] = &[
    ("name", "string"),
    ("home", "string"),
    ("sources", "[]string"),
    ("version", "string"),
    ("description", "string"),
    ("keywords", "[]string"),
    ("maintainers", "[]*chart.Maintainer"),
    ("icon", "string"),
    ("apiVersion", "string"),
    ("condition", "string"),
    ("tags", "string"),
    ("appVersion", "string"),
    ("annotations", "map[string]string"),
    ("kubeVersion", "string"),
    ("dependencies", "[]*chart.Dependency"),
    ("type", "string"),
];

/// `yaml.Unmarshal(Chart.yaml, &chart.Metadata)`'s type error, if any.
pub(super) fn metadata_type_error(v: &Value) -> Option<String> {
    const PREFIX: &str = "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal";
    let m = match v {
        Value::Map(m) => m,
        Value::Nil => return None,
        other => {
            return Some(format!(
                "{PREFIX} {} into Go value of type chart.Metadata",
                crate::gotmpl::convert::json_kind(other)
            ))
        }
    };
    for (field, go_type) in METADATA_FIELDS {
        let Some(x) = m.get(field) else { continue };
        let fits = match (*go_type, &x) {
            (_, Value::Nil) => true,
            ("string", x) => !matches!(x, Value::List(_) | Value::Map(_)),
            ("map[string]string", x) => matches!(x, Value::Map(_)),
            (_, x) => matches!(x, Value::List(_)),
        };
        if !fits {
            return Some(format!(
                "{PREFIX} {} into Go struct field Metadata.{field} of type {go_type}",
                crate::gotmpl::convert::json_kind(&x)
            ));
        }
    }
    None
}

/// helm's `Metadata.Validate`.
pub(super) fn validate(c: &Chart) -> Result<(), Error> {
    let v = |m: String| Error::Chart(format!("validation: {m}"));
    if c.name.is_empty() {
        return Err(v("chart.metadata.name is required".into()));
    }
    // filepath.Base(name) != name
    if c.name.contains('/') {
        return Err(v(format!("chart.metadata.name {:?} is invalid", c.name)));
    }
    let version = match &c.metadata {
        Value::Map(m) => m.get("version").map(|v| crate::gotmpl::fmt::to_string(&v)),
        _ => None,
    }
    .unwrap_or_default();
    if version.is_empty() {
        return Err(v("chart.metadata.version is required".into()));
    }
    if crate::gotmpl::golib::Version::parse(&version).is_err() {
        return Err(v(format!("chart.metadata.version {version:?} is invalid")));
    }
    if !matches!(c.meta_str("type").as_str(), "" | "application" | "library") {
        return Err(v(
            "chart.metadata.type must be application or library".into()
        ));
    }
    // Dependency.Validate: an alias names the subchart's directory when
    // helm writes `--output-dir`, so only `^[a-zA-Z0-9_-]+$` is allowed
    // (aliasNameFormat); then no two dependencies may share a name or alias.
    let mut seen = std::collections::HashSet::new();
    for d in c.declared_dependencies() {
        let Value::Map(m) = &d else { continue };
        let field = |k: &str| {
            m.get(k)
                .filter(|v| !matches!(v, Value::Nil | Value::Invalid))
                .map(|v| crate::gotmpl::fmt::to_string(&v))
                .unwrap_or_default()
        };
        let (name, alias) = (field("name"), field("alias"));
        let alias_ok = alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !alias_ok {
            return Err(v(format!(
                "dependency {name:?} has disallowed characters in the alias"
            )));
        }
        let key = if alias.is_empty() { name } else { alias };
        if !seen.insert(key.clone()) {
            return Err(v(format!(
                "more than one dependency with name or alias {key:?}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load_files::from_files;
    use super::super::Origin;

    #[test]
    fn a_chart_of_an_unknown_type_is_refused() {
        let bad = from_files(
            vec![(
                "Chart.yaml".into(),
                b"apiVersion: v2\nname: x\nversion: 1\ntype: foo\n"
                    .to_vec()
                    .into(),
            )],
            &Origin::top(Path::new("x"), None),
        );
        assert!(bad.is_err_and(|e| e
            .to_string()
            .contains("type must be application or library")));
    }
}
