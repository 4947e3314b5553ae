//! helm's `LoadFiles`: the files of a chart (from a directory or an
//! archive) sorted into a [`Chart`]: `Chart.yaml`, `values.yaml` and
//! `requirements.yaml` parsed in the order they came, templates, the
//! schema, `.Files`, and subcharts under `charts/` (directories and
//! archives) loaded in turn. Must not: read the disk (it is handed bytes).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::super::file_data::FileData;
use super::super::FileError;
use super::load_archive::load_archive;
use super::metadata::{check_requirements, metadata_type_error, validate};
use super::{meta_text, next_id, Chart, Error, Origin};
use crate::gotmpl::convert::parse_yaml_at;
use crate::gotmpl::Value;

/// A chart file `from_files` parses, in the order the files came.
enum Check {
    Chart(Vec<u8>),
    Values(Vec<u8>),
    Requirements(Vec<u8>),
}

/// A file's text: its bytes when they are UTF-8 (no copy), else with
/// invalid sequences replaced, as Go's string conversion reads them.
fn into_text(data: Vec<u8>) -> String {
    String::from_utf8(data).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// helm's `LoadFiles`: sorts loaded files into metadata, values,
/// templates, subcharts and other files. `Chart.yaml`, `values.yaml` and
/// `requirements.yaml` are parsed after the sorting, in the order the
/// files came, so the first bad one is the error, as in helm.
pub(super) fn from_files(list: Vec<(String, FileData)>, at: &Origin<'_>) -> Result<Chart, Error> {
    let mut templates = Vec::new();
    let mut files = BTreeMap::new();
    let mut sub_dirs: BTreeMap<String, Vec<(String, FileData)>> = BTreeMap::new();
    let mut archives: Vec<(String, Vec<u8>)> = Vec::new();
    let mut schema = None;
    let mut checks = Vec::new();
    // Files the load reads are never deferred (`deferrable`).
    let bytes = |data: FileData| data.into_bytes().map_err(Error::Chart);
    for (rel, data) in list {
        if let Some(sub) = rel.strip_prefix("charts/") {
            match sub.split_once('/') {
                Some((first, rest)) => sub_dirs
                    .entry(first.to_string())
                    .or_default()
                    .push((rest.to_string(), data)),
                None if sub.ends_with(".tgz") || sub.ends_with(".tar.gz") => {
                    archives.push((sub.to_string(), bytes(data)?))
                }
                None => {
                    files.insert(rel, data);
                }
            }
            continue;
        }
        match rel.as_str() {
            "Chart.yaml" => checks.push(Check::Chart(bytes(data)?)),
            "values.yaml" => checks.push(Check::Values(bytes(data)?)),
            // helm's LoadFiles unmarshals requirements.yaml into the
            // metadata whatever the apiVersion: a file that does not
            // parse fails the load.
            "requirements.yaml" => {
                checks.push(Check::Requirements(bytes(data.clone())?));
                files.insert(rel, data);
            }
            "values.schema.json" => schema = Some(bytes(data)?),
            r if r.starts_with("templates/") => {
                let text = into_text(bytes(data)?);
                templates.push((rel, text));
            }
            _ => {
                files.insert(rel, data);
            }
        }
    }
    let templates = Arc::new(templates);
    let (metadata, values) = parse_checks(checks, at, &templates)?;
    let Some(metadata) = metadata else {
        return Err(Error::Chart(format!(
            "Chart.yaml file is missing ({})",
            at.dir.display()
        )));
    };
    let mut chart = Chart {
        name: String::new(),
        metadata,
        values,
        templates,
        files: Arc::new(files),
        dependencies: Vec::new(),
        schema,
        dir: at.dir.to_path_buf(),
        id: next_id(),
        declared: false,
        kept: None,
        full_path: None,
        links: Vec::new(),
    };
    chart.name = chart.meta_str("name");
    // LoadFiles: a chart without apiVersion is a v1 chart.
    if chart.meta_str("apiVersion").is_empty() {
        if let Value::Map(m) = &chart.metadata {
            m.insert("apiVersion".into(), Value::from("v1"));
        }
    }
    validate(&chart)?;
    let path = match at.parent {
        Some(p) => format!("{p}/charts/{}", chart.name),
        None => chart.name.clone(),
    };
    for (name, list) in sub_dirs {
        let dir = at.dir.join("charts").join(name);
        let sub = at.sub(&dir, &path);
        chart.dependencies.push(from_files(list, &sub)?);
    }
    for (name, data) in archives {
        let dir = at.dir.join("charts").join(name);
        let sub = at.sub(&dir, &path);
        chart.dependencies.push(load_archive(&data, &sub)?);
    }
    Ok(chart)
}

/// Parses a chart's `Chart.yaml`, `values.yaml` and `requirements.yaml`
/// in the order they came; the metadata (if any) and the values. Once
/// `Chart.yaml` is read, `at.prefetch` hears of the templates.
fn parse_checks(
    checks: Vec<Check>,
    at: &Origin<'_>,
    templates: &Arc<Vec<(String, String)>>,
) -> Result<(Option<Value>, Value), Error> {
    let mut metadata = None;
    let mut values = Value::map(BTreeMap::new());
    let bad = |rel: &str, line, e: &str| {
        Error::ChartFile(Box::new(FileError {
            file: PathBuf::from(rel),
            line,
            message: format!("cannot load {rel}: {e}"),
        }))
    };
    for check in checks {
        match check {
            Check::Chart(data) => {
                let rel = "Chart.yaml";
                let v = parse_yaml_at(&String::from_utf8_lossy(&data))
                    .map_err(|e| bad(rel, e.line, &e.message))?;
                if let Some(e) = metadata_type_error(&v) {
                    return Err(bad(rel, None, &e));
                }
                if let (Some(prefetch), None) = (at.prefetch, &metadata) {
                    let name = meta_text(&v, "name");
                    let path = match at.parent {
                        Some(p) => format!("{p}/charts/{name}"),
                        None => name,
                    };
                    let library = meta_text(&v, "type").eq_ignore_ascii_case("library");
                    prefetch(&path, templates, library);
                }
                metadata = Some(v);
            }
            Check::Values(data) => {
                let rel = "values.yaml";
                values = match parse_yaml_at(&String::from_utf8_lossy(&data)) {
                    Ok(Value::Map(m)) => Value::Map(m),
                    Ok(Value::Nil) => Value::map(BTreeMap::new()),
                    Ok(_) => return Err(bad(rel, None, "error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {}")),
                    Err(e) => return Err(bad(rel, e.line, &e.message)),
                };
            }
            Check::Requirements(data) => {
                let rel = "requirements.yaml";
                check_requirements(&String::from_utf8_lossy(&data))
                    .map_err(|(line, e)| bad(rel, line, &e))?;
            }
        }
    }
    Ok((metadata, values))
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use super::*;

    #[test]
    fn unparseable_chart_files_fail_the_load_with_their_line() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| std::fs::write(d.join(p), s).unwrap_or_else(|e| panic!("{e}"));
        w("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n");
        w(
            "requirements.yaml",
            "dependencies:\n- name: a\n  version: [\n",
        );
        let e = load(d).map(|_| ()).unwrap_err();
        // helm3 says line 3 here; libyaml-safer reports where it gave up.
        let text = e.to_string();
        assert!(
            text.starts_with(
                "cannot load requirements.yaml: error converting YAML to JSON: yaml: line "
            ),
            "{text}"
        );
        let Error::ChartFile(f) = &e else {
            panic!("{e:?}");
        };
        assert_eq!(f.file.to_str(), Some("requirements.yaml"));
        assert!(
            f.line.is_some_and(|l| text.contains(&format!("line {l}:"))),
            "{e:?}"
        );
        w("requirements.yaml", "- a\n");
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.ends_with("cannot unmarshal array into Go value of type chart.Metadata"),
            "{e}"
        );
        w("requirements.yaml", "dependencies: 3\n");
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("Go struct field Metadata.dependencies"), "{e}");
        w("requirements.yaml", "dependencies: []\n");
        w("values.yaml", "a: 1\nb: [\n");
        let e = load(d).map(|_| ()).unwrap_err();
        assert!(
            matches!(&e, Error::ChartFile(f) if f.file.to_str() == Some("values.yaml") && f.line.is_some()),
            "{e:?}"
        );
    }
}
