//! Chart loading from a directory, as helm's `loader.LoadDir` does:
//! `Chart.yaml` → metadata, `values.yaml` → defaults, `templates/` →
//! templates, `charts/*` → subcharts (directories), everything else →
//! `.Files`. `.helmignore` patterns (simple globs) and helm's default
//! `templates/.?*` rule are honoured. Subcharts are pruned by
//! `condition`/`tags` and renamed by `alias` later, in `values.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Error;
use crate::gotmpl::funcs::yamlconv::parse_yaml;
use crate::gotmpl::Value;

/// One loaded chart and its subcharts.
#[derive(Debug, Clone)]
pub struct Chart {
    /// `Chart.yaml` as template values (map, float64 numbers).
    pub metadata: Value,
    /// Chart name (after an alias, if any).
    pub name: String,
    /// `values.yaml` defaults (a map).
    pub values: Value,
    /// Templates: path relative to the chart (`templates/x.yaml`) → text.
    pub templates: Vec<(String, String)>,
    /// Other files: relative path → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Subcharts found under `charts/`.
    pub dependencies: Vec<Chart>,
    /// Where it came from (for errors).
    pub dir: PathBuf,
}

impl Chart {
    /// A `Chart.yaml` field as text.
    pub fn meta_str(&self, key: &str) -> String {
        match &self.metadata {
            Value::Map(m) => m.get(key).and_then(|v| v.as_str().map(str::to_string)),
            _ => None,
        }
        .unwrap_or_default()
    }

    /// The `dependencies:` list of Chart.yaml (or requirements.yaml for v1).
    pub fn declared_dependencies(&self) -> Vec<Value> {
        let from = |v: &Value| match v {
            Value::Map(m) => match m.get("dependencies") {
                Some(Value::List(l)) => l.items.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let mut deps = from(&self.metadata);
        if deps.is_empty() {
            if let Some(req) = self.files.get("requirements.yaml") {
                if let Ok(v) = parse_yaml(&String::from_utf8_lossy(req)) {
                    deps = from(&v);
                }
            }
        }
        deps
    }

    /// Whether `type: library`.
    pub fn is_library(&self) -> bool {
        self.meta_str("type").eq_ignore_ascii_case("library")
    }
}

/// A `.helmignore` rule (glob on the relative path or its base name).
struct Ignore {
    rules: Vec<(bool, String, bool)>, // (negate, pattern, dir-only)
}

impl Ignore {
    fn load(dir: &Path) -> Ignore {
        let mut rules = vec![(false, "templates/.?*".to_string(), false)];
        if let Ok(text) = std::fs::read_to_string(dir.join(".helmignore")) {
            for line in text.lines() {
                let l = line.trim();
                if l.is_empty() || l.starts_with('#') {
                    continue;
                }
                let (neg, l) = match l.strip_prefix('!') {
                    Some(r) => (true, r),
                    None => (false, l),
                };
                let dir_only = l.ends_with('/');
                let l = l.trim_end_matches('/').trim_start_matches('/');
                rules.push((neg, l.to_string(), dir_only));
            }
        }
        Ignore { rules }
    }

    fn ignored(&self, rel: &str, is_dir: bool) -> bool {
        let base = rel.rsplit('/').next().unwrap_or(rel);
        let mut out = false;
        for (neg, pat, dir_only) in &self.rules {
            if *dir_only && !is_dir {
                continue;
            }
            let hit = if pat.contains('/') {
                super::objects::glob_match(pat, rel)
            } else {
                super::objects::glob_match(pat, base)
            };
            if hit {
                out = !neg;
            }
        }
        out
    }
}

fn walk(
    root: &Path,
    rel: &str,
    ignore: &Ignore,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), Error> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| Error::Io(dir.display().to_string(), e.to_string()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let meta = std::fs::metadata(&path);
        let is_dir = meta.as_ref().is_ok_and(|m| m.is_dir());
        if ignore.ignored(&r, is_dir) {
            continue;
        }
        if is_dir {
            walk(root, &r, ignore, out)?;
        } else if meta.is_ok_and(|m| m.is_file()) {
            out.push((r, path));
        }
    }
    Ok(())
}

/// Loads a chart directory (and its `charts/` subdirectories).
pub fn load(dir: &Path) -> Result<Chart, Error> {
    if !dir.is_dir() {
        if dir.exists() {
            return Err(Error::Chart(format!(
                "{}: packaged (.tgz) charts are not supported yet",
                dir.display()
            )));
        }
        return Err(Error::Chart(format!(
            "path {:?} not found",
            dir.display().to_string()
        )));
    }
    let ignore = Ignore::load(dir);
    let mut paths = Vec::new();
    walk(dir, "", &ignore, &mut paths)?;
    let mut metadata = None;
    let mut values = Value::map(BTreeMap::new());
    let mut templates = Vec::new();
    let mut files = BTreeMap::new();
    let mut sub_dirs: Vec<String> = Vec::new();
    for (rel, path) in paths {
        let data = std::fs::read(&path)
            .map_err(|e| Error::Io(path.display().to_string(), e.to_string()))?;
        let text = || String::from_utf8_lossy(&data).into_owned();
        if let Some(sub) = rel.strip_prefix("charts/") {
            let first = sub.split('/').next().unwrap_or(sub);
            if sub.contains('/') {
                if !sub_dirs.iter().any(|d| d == first) {
                    sub_dirs.push(first.to_string());
                }
            } else if first.ends_with(".tgz") || first.ends_with(".tar.gz") {
                return Err(Error::Chart(format!(
                    "{}: packaged (.tgz) subcharts are not supported yet",
                    path.display()
                )));
            }
            continue;
        }
        match rel.as_str() {
            "Chart.yaml" => {
                let v = parse_yaml(&text())
                    .map_err(|e| Error::Chart(format!("cannot load Chart.yaml: {e}")))?;
                metadata = Some(v);
            }
            "values.yaml" => {
                values = match parse_yaml(&text()) {
                    Ok(Value::Map(m)) => Value::Map(m),
                    Ok(Value::Nil) => Value::map(BTreeMap::new()),
                    Ok(_) => {
                        return Err(Error::Chart(format!(
                            "cannot load values.yaml: error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {{}} ({})",
                            path.display()
                        )))
                    }
                    Err(e) => return Err(Error::Chart(format!("cannot load values.yaml: {e}"))),
                };
            }
            "values.schema.json" => {}
            r if r.starts_with("templates/") => templates.push((rel.clone(), text())),
            _ => {
                files.insert(rel.clone(), data);
            }
        }
    }
    let Some(metadata) = metadata else {
        return Err(Error::Chart(format!(
            "Chart.yaml file is missing ({})",
            dir.display()
        )));
    };
    let mut chart = Chart {
        name: String::new(),
        metadata,
        values,
        templates,
        files,
        dependencies: Vec::new(),
        dir: dir.to_path_buf(),
    };
    chart.name = chart.meta_str("name");
    if chart.name.is_empty() {
        return Err(Error::Chart(
            "validation: chart.metadata.name is required".into(),
        ));
    }
    if chart.meta_str("version").is_empty() {
        return Err(Error::Chart(
            "validation: chart.metadata.version is required".into(),
        ));
    }
    for sub in sub_dirs {
        chart
            .dependencies
            .push(load(&dir.join("charts").join(sub))?);
    }
    Ok(chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_a_chart_dir() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        w("Chart.yaml", "name: top\nversion: 1.0.0\n");
        w("values.yaml", "a: 1\n");
        w("templates/x.yaml", "k: v\n");
        w("templates/.hidden", "x");
        w("files/f.txt", "data");
        w("charts/sub/Chart.yaml", "name: sub\nversion: 0.1.0\n");
        w(".helmignore", "*.bak\n");
        w("old.bak", "x");
        let c = load(d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.name, "top");
        assert_eq!(c.templates.len(), 1);
        assert!(c.files.contains_key("files/f.txt") && !c.files.contains_key("old.bak"));
        assert_eq!(c.dependencies.len(), 1);
        assert!(load(&d.join("missing")).is_err());
    }
}
