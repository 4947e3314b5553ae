//! A loaded chart (`Chart`: `Chart.yaml` → metadata, `values.yaml` →
//! defaults, `templates/` → templates, `charts/*` → subcharts, everything
//! else → `.Files`) and the entry points that load one, as helm's
//! `loader.Load` does: a directory (`load_dir.rs`: the walk, `.helmignore`,
//! symlinks) or a packaged chart (`load_archive.rs`: a `.tgz` read
//! defensively), both sorted into a chart by `load_files.rs` (helm's
//! `LoadFiles`) and checked by `metadata.rs` (`Metadata.Validate`).
//! Subcharts are pruned by `condition`/`tags` and renamed by `alias`
//! later, in `values.rs`. Must not: render, or read a file the load does
//! not need (big `.Files` are deferred, `file_data.rs`).

mod load_archive;
mod load_dir;
mod load_files;
mod metadata;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file_data::FileData;
use super::Error;
use crate::gotmpl::convert::{deep_copy, parse_yaml};
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
    /// Shared: a loaded chart's copies never change them.
    pub templates: Arc<Vec<(String, String)>>,
    /// Other files: relative path → bytes (shared, as `templates`).
    pub files: Arc<BTreeMap<String, FileData>>,
    /// Subcharts found under `charts/`.
    pub dependencies: Vec<Chart>,
    /// `values.schema.json`, if any.
    pub schema: Option<Vec<u8>>,
    /// Where it came from (for errors).
    pub dir: PathBuf,
    /// Which loaded chart this is, or is a copy of: helm 3 copies a
    /// dependency shallowly, so all copies of one chart share its
    /// `dependencies:` entries and its subcharts' parent pointers.
    pub id: usize,
    /// A copy made for one of the parent's `dependencies:` entries (else
    /// the loaded chart itself, a subchart Chart.yaml does not list).
    pub declared: bool,
    /// Set by `process_dependencies`: the `dependencies:` entries kept
    /// (index into `declared_dependencies`, name after its alias); `None`
    /// when helm left the chart alone (it lists no dependencies).
    pub kept: Option<Vec<(usize, String)>>,
    /// helm 3's `ChartFullPath` when it is not the path down the tree
    /// (see `full_path.rs`).
    pub full_path: Option<String>,
    /// The symlinks the load followed, in walk order (on the chart loaded
    /// from a directory; subcharts are part of its walk).
    pub links: Vec<FollowedLink>,
}

/// A chart file or directory that is a symlink, which the load followed
/// (helm logs each: `found symbolic link in path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedLink {
    /// The link as helm names it: the chart directory made absolute
    /// (`filepath.Abs`, no symlink resolved) joined with the link's path.
    pub path: PathBuf,
    /// Where it leads (`filepath.EvalSymlinks`).
    pub resolved: PathBuf,
}

impl FollowedLink {
    /// The line `version` logs on stderr for it (`sympath.Walk`): helm 3's
    /// `log.Printf` with its file:line prefix, helm 4's `slog.Info` through
    /// the text handler (a value is quoted when it holds a space, `=`,
    /// `"` or an unprintable character).
    pub fn log_line(&self, version: super::HelmVersion) -> String {
        let (path, resolved) = (self.path.to_string_lossy(), self.resolved.to_string_lossy());
        match version {
            super::HelmVersion::V3 => format!(
                "walk.go:75: found symbolic link in path: {path} resolves to {resolved}. \
                 Contents of linked file included and used"
            ),
            super::HelmVersion::V4 => format!(
                "level=INFO msg=\"found symbolic link in path. Contents of linked file included \
                 and used\" path={} resolved={}",
                slog_value(&path),
                slog_value(&resolved)
            ),
        }
    }
}

/// slog's `TextHandler` rendering of a string value (`needsQuoting`).
fn slog_value(s: &str) -> String {
    let quote = s.is_empty()
        || s.chars().any(|c| {
            c == '=' || c == '"' || c.is_whitespace() || c.is_control() || c == '\u{fffd}'
        });
    match quote {
        true => crate::gotmpl::fmt::quote(s),
        false => s.to_string(),
    }
}

/// A new identity for a loaded chart.
pub fn next_id() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Chart {
    /// A `Chart.yaml` field as text.
    pub fn meta_str(&self, key: &str) -> String {
        meta_text(&self.metadata, key)
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
            if let Some(Ok(req)) = self.files.get("requirements.yaml").map(FileData::bytes) {
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

    /// A copy for one render: `Chart.yaml` and `values.yaml` trees copied
    /// (dependency processing and templates may change maps in place, as
    /// helm changes its freshly loaded chart), templates and files shared.
    /// Chart identities are kept, so helm 3's shallow-copy rules still hold
    /// within the copy.
    pub fn detached(&self) -> Chart {
        self.copy(deep_copy)
    }

    /// A copy sharing `Chart.yaml` and `values.yaml` trees with this
    /// chart, for the one render of a chart loaded for it: that render's
    /// changes to them are helm's changes to its freshly loaded chart.
    pub fn shallow(&self) -> Chart {
        self.copy(Value::clone)
    }

    fn copy(&self, tree: fn(&Value) -> Value) -> Chart {
        Chart {
            metadata: tree(&self.metadata),
            name: self.name.clone(),
            values: tree(&self.values),
            templates: Arc::clone(&self.templates),
            files: Arc::clone(&self.files),
            dependencies: self.dependencies.iter().map(|d| d.copy(tree)).collect(),
            schema: self.schema.clone(),
            dir: self.dir.clone(),
            id: self.id,
            declared: self.declared,
            kept: self.kept.clone(),
            full_path: self.full_path.clone(),
            links: self.links.clone(),
        }
    }
}

/// Called with each chart's likely template path (`top/charts/sub`, as a
/// render names a chart without an alias), its templates and whether it is
/// a library chart, as soon as its `Chart.yaml` is read: the caller may
/// start parsing them while the rest loads.
pub type Prefetch<'a> = &'a (dyn Fn(&str, &Arc<Vec<(String, String)>>, bool) + Sync);

/// Loads a chart directory or a packaged chart (`.tgz`).
pub fn load(dir: &Path) -> Result<Chart, Error> {
    load_with(dir, None)
}

/// [`load`], telling `prefetch` about each chart's templates early.
pub fn load_with(dir: &Path, prefetch: Option<Prefetch<'_>>) -> Result<Chart, Error> {
    if !dir.exists() {
        return Err(Error::Chart(format!(
            "path {:?} not found",
            dir.display().to_string()
        )));
    }
    let at = Origin::top(dir, prefetch);
    if !dir.is_dir() {
        let data = std::fs::read(dir).map_err(|e| Error::io(dir, e.to_string()))?;
        return load_archive::load_archive(&data, &at);
    }
    load_dir::load_dir(&at)
}
/// Where a chart being loaded comes from: its path (for errors), the
/// likely template path of its parent, and who to tell about templates.
#[derive(Clone, Copy)]
struct Origin<'a> {
    dir: &'a Path,
    parent: Option<&'a str>,
    prefetch: Option<Prefetch<'a>>,
}

impl<'a> Origin<'a> {
    /// The chart `load` was asked for, not a subchart.
    fn top(dir: &'a Path, prefetch: Option<Prefetch<'a>>) -> Self {
        Origin {
            dir,
            parent: None,
            prefetch,
        }
    }

    /// The subchart `charts/<name>` of the chart named `path` (its likely
    /// template path, `top/charts/sub`) loaded from here.
    fn sub(&self, dir: &'a Path, path: &'a str) -> Self {
        Origin {
            dir,
            parent: Some(path),
            ..*self
        }
    }
}

/// helm's `MaxDecompressedFileSize`: one file, in an archive or a directory.
pub(in crate::helm) const MAX_FILE_SIZE: u64 = 5 * 1024 * 1024;

/// A `Chart.yaml` field as text (empty when missing or not text).
fn meta_text(metadata: &Value, key: &str) -> String {
    match metadata {
        Value::Map(m) => m.get(key).and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    }
    .unwrap_or_default()
}
