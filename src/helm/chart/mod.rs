//! Chart loading from a directory, as helm's `loader.LoadDir` does:
//! `Chart.yaml` → metadata, `values.yaml` → defaults, `templates/` →
//! templates, `charts/*` → subcharts (directories or `.tgz`), everything else →
//! `.Files`. `.helmignore` patterns (simple globs) and helm's default
//! `templates/.?*` rule are honoured. Subcharts are pruned by
//! `condition`/`tags` and renamed by `alias` later, in `values.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file_data::{FileData, DEFER_FROM};

use super::ignore::Rules;
use super::{Error, FileError};
use crate::gotmpl::convert::{deep_copy, parse_yaml, parse_yaml_at};
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

/// The chart's `.helmignore` (helm's `LoadDir`: parsed when present, a bad
/// rule an error) and helm's default rule after it.
fn load_ignore(dir: &Path) -> Result<Rules, Error> {
    let rules = match std::fs::read(dir.join(".helmignore")) {
        Ok(bytes) => Rules::parse(&String::from_utf8_lossy(&bytes)).map_err(Error::Chart)?,
        Err(_) => Rules::default(),
    };
    Ok(rules.with_defaults())
}

/// A walked file: its path relative to the chart, its path and its size.
type Walked = (String, PathBuf, u64);

/// The directory a chart's symlinks may lead into: the repository the
/// chart is in (the nearest directory at or above it holding `.git`), else
/// the chart directory itself. helm follows any link; hydrate follows
/// those that stay in the repository (a library chart or `crds/` linked
/// from elsewhere in it) and refuses the rest, so a chart cannot pull
/// `/etc/passwd` or a home directory into `.Files`.
fn confinement_root(chart_canon: &Path) -> PathBuf {
    chart_canon
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(chart_canon)
        .to_path_buf()
}

/// helm's `LoadDir` walk (`sympath.Walk`, sorted by name): symlinks are
/// followed, each reported to `links`, but unlike helm only when they
/// resolve inside `confine` ([`confinement_root`]); a symlinked directory
/// leading back to one being walked is walked once (walkdir's loop
/// detection, so a loop cannot recurse). Irregular files and files over
/// 5 MiB are refused, as helm does.
/// Each file found goes to `found`, in walk order.
fn walk(
    root: &Path,
    confine: &Path,
    ignore: &Rules,
    found: &mut dyn FnMut(Walked),
    links: &mut Vec<FollowedLink>,
) -> Result<(), Error> {
    let rel = |p: &Path| -> String {
        let r = p.strip_prefix(root).unwrap_or(p);
        let parts: Vec<_> = r.iter().map(|c| c.to_string_lossy()).collect();
        parts.join("/")
    };
    let entries = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !ignore.ignore(&rel(e.path()), e.file_type().is_dir()));
    for entry in entries {
        let e = match entry {
            Ok(e) => e,
            Err(err) if err.loop_ancestor().is_some() => continue,
            // A dangling symlink the .helmignore excludes is never read.
            Err(err) if err.path().is_some_and(|p| ignore.ignore(&rel(p), false)) => continue,
            Err(err) => return Err(walk_error(root, &err)),
        };
        if e.depth() == 0 {
            continue;
        }
        let (r, path) = (rel(e.path()), e.path());
        if e.path_is_symlink() {
            let target = std::fs::canonicalize(path)
                .map_err(|err| Error::io(path, format!("error evaluating symlink: {err}")))?;
            if !target.starts_with(confine) {
                return Err(Error::Chart(format!(
                    "chart file {r} is a symlink to {}, which is outside the repository {}; \
                     hydrate follows a chart's symlinks only within its repository",
                    target.display(),
                    confine.display()
                )));
            }
            links.push(FollowedLink {
                path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
                resolved: target,
            });
        }
        let meta = e
            .metadata()
            .map_err(|err| Error::io(path, err.to_string()))?;
        if meta.is_dir() {
            continue;
        } else if !meta.is_file() {
            return Err(Error::Chart(format!(
                "cannot load irregular file {} as it has file mode type bits set",
                path.display()
            )));
        } else if meta.len() > MAX_FILE_SIZE {
            return Err(Error::Chart(format!(
                "chart file {r:?} is larger than the maximum file size {MAX_FILE_SIZE}"
            )));
        }
        found((r, e.into_path(), meta.len()));
    }
    Ok(())
}

/// A walk error, naming the path; a dangling symlink is helm's
/// "error evaluating symlink".
fn walk_error(root: &Path, err: &walkdir::Error) -> Error {
    let path = err.path().unwrap_or(root);
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    let text = err
        .io_error()
        .map_or_else(|| err.to_string(), ToString::to_string);
    let text = if is_link {
        format!("error evaluating symlink: {text}")
    } else {
        text
    };
    Error::io(path, text)
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
    let at = Origin {
        dir,
        parent: None,
        prefetch,
    };
    if !dir.is_dir() {
        let data = std::fs::read(dir).map_err(|e| Error::io(dir, e.to_string()))?;
        return load_archive(&data, &at);
    }
    let ignore = load_ignore(dir)?;
    let root_canon = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e.to_string()))?;
    let confine = confinement_root(&root_canon);
    let mut links = Vec::new();
    // Reading on more threads pays only for a render that has the cores
    // to itself, the one a prefetching caller does.
    let files = if prefetch.is_some() {
        walk_and_read(dir, &confine, &ignore, &mut links)?
    } else {
        let mut paths = Vec::new();
        walk(dir, &confine, &ignore, &mut |w| paths.push(w), &mut links)?;
        paths
            .into_iter()
            .map(|w| {
                let data = read_one(&w, &confine)?;
                Ok((w.0, data))
            })
            .collect::<Result<_, Error>>()?
    };
    let mut chart = from_files(files, &at)?;
    chart.links = links;
    Ok(chart)
}

/// A walked file's content: read now, or deferred when it is big and the
/// load does not need it.
fn read_one((rel, p, size): &Walked, root_canon: &Path) -> Result<FileData, Error> {
    let data = if *size >= DEFER_FROM && deferrable(rel) {
        FileData::deferred(p, root_canon)
    } else {
        std::fs::read(p).map(FileData::loaded)
    };
    data.map_err(|e| Error::io(p, e.to_string()))
}

/// Walks and reads at once: files are read on other threads as the walk
/// finds them (reading a big chart is mostly the kernel copying pages, the
/// walk mostly `stat`), and on this one too once the walk is done. Errors
/// are what the walk then a serial read would report: the walk's first,
/// else the first file in walk order that does not read.
fn walk_and_read(
    root: &Path,
    root_canon: &Path,
    ignore: &Rules,
    links: &mut Vec<FollowedLink>,
) -> Result<Vec<(String, FileData)>, Error> {
    use std::sync::mpsc;
    let (tx, rx) = mpsc::channel::<(usize, Walked)>();
    let rx = std::sync::Mutex::new(rx);
    let work = || {
        let mut got = Vec::new();
        loop {
            let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
            let Ok((i, w)) = next else {
                return got;
            };
            let data = read_one(&w, root_canon);
            got.push((i, w.0, data));
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let (walked, mut got) = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads.max(2)).map(|_| s.spawn(work)).collect();
        let mut n = 0;
        let walked = walk(
            root,
            root_canon,
            ignore,
            &mut |w| {
                // The receiver lives until every worker has returned.
                let _ = tx.send((n, w));
                n += 1;
            },
            links,
        );
        drop(tx);
        let mut got = work();
        for h in helpers {
            got.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        (walked, got)
    });
    walked?;
    got.sort_unstable_by_key(|(i, _, _)| *i);
    got.into_iter()
        .map(|(_, rel, data)| Ok((rel, data?)))
        .collect()
}

/// Whether a file may be read after the load: not one the load parses
/// (`Chart.yaml`, values, schema, requirements, locks), not a template and
/// not a subchart archive.
fn deferrable(rel: &str) -> bool {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    !rel.split('/').any(|c| c == "templates")
        && !base.ends_with(".tgz")
        && !base.ends_with(".tar.gz")
        && !matches!(
            base,
            "Chart.yaml"
                | "values.yaml"
                | "values.schema.json"
                | "requirements.yaml"
                | "requirements.lock"
                | "Chart.lock"
        )
}

/// Where a chart being loaded comes from: its path (for errors), the
/// likely template path of its parent, and who to tell about templates.
#[derive(Clone, Copy)]
struct Origin<'a> {
    dir: &'a Path,
    parent: Option<&'a str>,
    prefetch: Option<Prefetch<'a>>,
}

/// helm's `MaxDecompressedChartSize`: all files of an archive together.
const MAX_CHART_SIZE: u64 = 100 * 1024 * 1024;
/// helm's `MaxDecompressedFileSize`: one file, in an archive or a directory.
pub(super) const MAX_FILE_SIZE: u64 = 5 * 1024 * 1024;

/// Go's `path.Clean` for a relative, `/`-separated path.
fn clean_rel(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// helm's `LoadArchiveFiles` path checks: the entry name without its top
/// directory, normalised, or why the archive is refused.
fn archive_entry_name(raw: &str) -> Result<String, String> {
    // Archives made on Windows may use `\`.
    let delim = if raw.contains('\\') { '\\' } else { '/' };
    let mut parts = raw.split(delim);
    let first = parts.next().unwrap_or_default();
    let n = parts.collect::<Vec<_>>().join("/");
    if n.starts_with('/') {
        return Err(format!("chart illegally contains absolute paths: {raw:?}"));
    }
    let n = clean_rel(&n);
    if n == "." {
        return Err(format!(
            "chart illegally contains content outside the base directory: {raw:?}"
        ));
    }
    if n.starts_with("..") {
        return Err(format!(
            "chart illegally references parent directory: {raw:?}"
        ));
    }
    let b = n.as_bytes();
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/' {
        return Err(format!("chart contains illegally named files: {raw:?}"));
    }
    if first == "Chart.yaml" {
        return Err("chart yaml not in base directory".into());
    }
    Ok(n)
}

/// helm's `LoadArchive`: a gzipped tar whose entries sit under one
/// top-level directory. Entries escaping that directory, files over 5 MiB
/// and archives over 100 MiB decompressed are refused, as helm does.
/// Links are skipped (helm reads them as empty files).
fn load_archive(data: &[u8], at: &Origin<'_>) -> Result<Chart, Error> {
    use std::io::Read;
    let bad = |e: String| Error::Chart(format!("{}: {e}", at.dir.display()));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(data));
    let mut files = Vec::new();
    let mut remaining = MAX_CHART_SIZE;
    for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
        let entry = entry.map_err(|e| bad(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| bad(e.to_string()))?
            .to_string_lossy()
            .into_owned();
        let rel = archive_entry_name(&raw).map_err(bad)?;
        let size = entry.header().size().map_err(|e| bad(e.to_string()))?;
        let too_big = || {
            bad(format!(
                "decompressed chart is larger than the maximum file size {MAX_CHART_SIZE}"
            ))
        };
        if size > remaining {
            return Err(too_big());
        }
        if size > MAX_FILE_SIZE {
            return Err(bad(format!(
                "decompressed chart file {raw:?} is larger than the maximum file size {MAX_FILE_SIZE}"
            )));
        }
        // The header size may lie: never read past what is left.
        let mut buf = Vec::new();
        let read = entry
            .take(remaining)
            .read_to_end(&mut buf)
            .map_err(|e| bad(format!("{raw}: {e}")))? as u64;
        remaining -= read;
        if read < size || remaining == 0 {
            return Err(too_big());
        }
        files.push((rel, FileData::loaded(buf)));
    }
    if files.is_empty() {
        return Err(bad("no files in chart archive".into()));
    }
    from_files(files, at)
}

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

/// A `Chart.yaml` field as text (empty when missing or not text).
fn meta_text(metadata: &Value, key: &str) -> String {
    match metadata {
        Value::Map(m) => m.get(key).and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    }
    .unwrap_or_default()
}

/// helm's `LoadFiles`: sorts loaded files into metadata, values,
/// templates, subcharts and other files. `Chart.yaml`, `values.yaml` and
/// `requirements.yaml` are parsed after the sorting, in the order the
/// files came, so the first bad one is the error, as in helm.
fn from_files(list: Vec<(String, FileData)>, at: &Origin<'_>) -> Result<Chart, Error> {
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
        let sub = Origin {
            dir: &dir,
            parent: Some(&path),
            ..*at
        };
        chart.dependencies.push(from_files(list, &sub)?);
    }
    for (name, data) in archives {
        let dir = at.dir.join("charts").join(name);
        let sub = Origin {
            dir: &dir,
            parent: Some(&path),
            ..*at
        };
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

/// `yaml.Unmarshal(requirements.yaml, &chart.Metadata)`: the document must
/// be a mapping whose `dependencies`, if set, is a list.
fn check_requirements(text: &str) -> Result<(), (Option<u32>, String)> {
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
fn metadata_type_error(v: &Value) -> Option<String> {
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
fn validate(c: &Chart) -> Result<(), Error> {
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
    use super::*;

    fn at(dir: &Path) -> Origin<'_> {
        Origin {
            dir,
            parent: None,
            prefetch: None,
        }
    }

    #[test]
    fn loads_a_chart_dir() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        w("Chart.yaml", "apiVersion: v2\nname: top\nversion: 1.0.0\n");
        w("values.yaml", "a: 1\n");
        w("templates/x.yaml", "k: v\n");
        w("templates/.hidden", "x");
        w("files/f.txt", "data");
        w(
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        );
        w(".helmignore", "*.bak\n");
        w("old.bak", "x");
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.join("files"), d.join("files/loop"))
            .unwrap_or_else(|e| panic!("{e}"));
        let c = load(d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.name, "top");
        assert_eq!(c.templates.len(), 1);
        assert!(c.files.contains_key("files/f.txt") && !c.files.contains_key("old.bak"));
        assert_eq!(c.dependencies.len(), 1);
        assert!(load(&d.join("missing")).is_err());
    }

    #[test]
    fn loads_packaged_charts_and_validates() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut add = |path: &str, body: &str| {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, path, body.as_bytes())
                .unwrap_or_else(|e| panic!("{e}"));
        };
        add(
            "pkg/Chart.yaml",
            "\u{feff}apiVersion: v2\nname: pkg\nversion: 1.2.3\n",
        );
        add("pkg/templates/a.yaml", "x: 1");
        let raw = tar.into_inner().unwrap_or_else(|e| panic!("{e}"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap_or_else(|e| panic!("{e}"));
        let data = gz.finish().unwrap_or_else(|e| panic!("{e}"));
        let c = load_archive(&data, &at(Path::new("pkg.tgz"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.name.as_str(), c.templates.len()), ("pkg", 1));
        let bad = from_files(
            vec![(
                "Chart.yaml".into(),
                b"apiVersion: v2\nname: x\nversion: 1\ntype: foo\n"
                    .to_vec()
                    .into(),
            )],
            &at(Path::new("x")),
        );
        assert!(bad.is_err_and(|e| e
            .to_string()
            .contains("type must be application or library")));
        assert!(load_archive(b"not gzip", &at(Path::new("x.tgz"))).is_err());
    }

    fn targz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, body) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            // set_path refuses `..`; write the raw name like a hostile tool would.
            let name = h.as_old_mut().name.as_mut_slice();
            name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            tar.append(&h, *body).unwrap_or_else(|e| panic!("{e}"));
        }
        let raw = tar.into_inner().unwrap_or_else(|e| panic!("{e}"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap_or_else(|e| panic!("{e}"));
        gz.finish().unwrap_or_else(|e| panic!("{e}"))
    }

    fn archive_error(entries: &[(&str, &[u8])]) -> String {
        match load_archive(&targz(entries), &at(Path::new("x.tgz"))) {
            Ok(_) => panic!("archive loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn archives_cannot_escape_or_explode() {
        let chart: &[u8] = b"apiVersion: v2\nname: x\nversion: 1.0.0\n";
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/../../etc/evil", b"x")]);
        assert!(
            e.contains("references parent directory") && e.contains("etc/evil"),
            "{e}"
        );
        let e = archive_error(&[("x/Chart.yaml", chart), ("x//etc/passwd", b"x")]);
        assert!(
            e.contains("absolute paths") && e.contains("etc/passwd"),
            "{e}"
        );
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/c:/win", b"x")]);
        assert!(e.contains("illegally named"), "{e}");
        let e = archive_error(&[("Chart.yaml", chart)]);
        assert!(e.contains("outside the base directory"), "{e}");
        let big = vec![b'a'; MAX_FILE_SIZE as usize + 1];
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/big.txt", &big)]);
        assert!(e.contains("x/big.txt") && e.contains("5242880"), "{e}");
        // 21 files of 5 MiB: over the 100 MiB total.
        let five = vec![b'a'; MAX_FILE_SIZE as usize];
        let names: Vec<String> = (0..21).map(|i| format!("x/f{i}")).collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("x/Chart.yaml", chart)];
        entries.extend(names.iter().map(|n| (n.as_str(), five.as_slice())));
        let e = archive_error(&entries);
        assert!(
            e.contains("larger than the maximum file size 104857600"),
            "{e}"
        );
        // `..` that stays inside is fine, as path.Clean makes it.
        let ok = load_archive(
            &targz(&[("x/Chart.yaml", chart), ("x/a/../b.txt", b"b")]),
            &at(Path::new("x.tgz")),
        );
        assert!(ok.is_ok_and(|c| c.files.contains_key("b.txt")));
    }

    /// The chart files parse in the order they came: in an archive whose
    /// bad `values.yaml` precedes its bad `Chart.yaml`, the values fail.
    #[test]
    fn the_first_bad_chart_file_in_archive_order_is_the_error() {
        let data = targz(&[("x/values.yaml", b"a: [\n"), ("x/Chart.yaml", b"name: [\n")]);
        let e = load_archive(&data, &at(Path::new("x.tgz"))).map(|_| ());
        assert!(
            matches!(&e, Err(Error::ChartFile(f)) if f.file.to_str() == Some("values.yaml")),
            "{e:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn directories_refuse_outside_symlinks_and_big_files() {
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "s").unwrap_or_else(|e| panic!("{e}"));
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        std::fs::write(
            d.join("Chart.yaml"),
            "apiVersion: v2\nname: x\nversion: 1.0.0\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("inside.txt"), "i").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(d.join("inside.txt"), d.join("ok-link"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(load(d).is_ok_and(|c| c.files.contains_key("ok-link")));
        std::os::unix::fs::symlink(&secret, d.join("evil")).unwrap_or_else(|e| panic!("{e}"));
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("evil") && e.contains("outside the repository"),
            "{e}"
        );
        std::fs::remove_file(d.join("evil")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/dev/null", d.join("null")).unwrap_or_else(|e| panic!("{e}"));
        assert!(load(d).is_err());
        std::fs::remove_file(d.join("null")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("big.txt"), vec![b'a'; MAX_FILE_SIZE as usize + 1])
            .unwrap_or_else(|e| panic!("{e}"));
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("big.txt") && e.contains("maximum file size"),
            "{e}"
        );
    }

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
