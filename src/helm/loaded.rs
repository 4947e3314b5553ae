//! Charts loaded once per run: [`LoadedChart`] is a chart read from disk
//! with its templates parsed on first use and kept, so every environment
//! that renders the chart shares one load and one parse; [`ChartCache`]
//! hands out one [`LoadedChart`] per canonical chart path. A cache lives
//! as long as its owner (one `render_all`), never process-wide, so a chart
//! edited between runs is read again.
//!
//! It owns no render logic: values, dependency processing and execution
//! stay in `mod.rs`/`render.rs`, on a per-render copy of the chart.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use super::chart::Chart;
use super::{Error, HelmVersion};
use crate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Tree};
use crate::lock::lock;

/// A template's parse: the trees its text defines, or Go's parse error.
type Parse = Result<Arc<[Arc<Tree>]>, crate::gotmpl::Error>;

/// One template name's parses: by helm version (whose function tables
/// differ) and text (aliases may give two texts one name).
type Parses = Vec<(HelmVersion, Text, Arc<OnceLock<Parse>>)>;

/// A parsed template's text as its parse is kept under: the loaded chart's
/// own (a chart's CRDs are megabytes, copied and compared whole for every
/// template before), or a copy for a text a render brought.
enum Text {
    /// Template `.1` of a chart's template list.
    Shared(Arc<Vec<(String, String)>>, usize),
    Owned(String),
}

impl Text {
    /// Whether it is `text`: the same bytes in memory (a render of the
    /// loaded chart asking for a prefetched parse), else equal bytes.
    fn is(&self, text: &str) -> bool {
        let held = match self {
            Text::Shared(list, i) => list.get(*i).map_or("", |(_, t)| t.as_str()),
            Text::Owned(t) => t.as_str(),
        };
        std::ptr::eq(held, text) || held == text
    }
}

/// A chart and its subcharts as loaded from disk, with the parses of its
/// templates, shared by every render of it in one run.
pub struct LoadedChart {
    chart: Chart,
    parses: Arc<ParseStore>,
    /// A render found that the templates change maps they share, so
    /// later renders run them one by one (`execute.rs`).
    serial: AtomicBool,
    /// Loaded for one render that has the cores to itself
    /// ([`super::load_for`]).
    alone: bool,
}

/// The parses of one loaded chart's templates and its function tables:
/// shared with the parses started while the chart still loads
/// ([`ParseStore::prefetch`]).
#[derive(Default)]
pub(super) struct ParseStore {
    parsed: Mutex<HashMap<String, Parses>>,
    funcs: [OnceLock<Arc<FuncMap>>; 2],
}

impl std::fmt::Debug for LoadedChart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedChart")
            .field("chart", &self.chart.name)
            .finish_non_exhaustive()
    }
}

impl LoadedChart {
    /// Wraps a freshly loaded chart.
    pub(super) fn new(chart: Chart) -> LoadedChart {
        LoadedChart {
            chart,
            parses: Arc::default(),
            serial: AtomicBool::new(false),
            alone: false,
        }
    }

    /// Wraps a chart loaded for one render that has the cores to itself,
    /// whose templates' parses `parses` holds (or is making).
    pub(super) fn alone(chart: Chart, parses: Arc<ParseStore>) -> LoadedChart {
        LoadedChart {
            chart,
            parses,
            serial: AtomicBool::new(false),
            alone: true,
        }
    }

    /// Whether it was loaded for one render that has the cores to itself.
    pub(super) fn renders_alone(&self) -> bool {
        self.alone
    }

    /// The chart as loaded: renders work on [`Chart::detached`] copies.
    pub(crate) fn chart(&self) -> &Chart {
        &self.chart
    }

    /// Whether renders run the templates one by one, not at once.
    pub(super) fn runs_serially(&self) -> &AtomicBool {
        &self.serial
    }

    /// helm's function table for `version`, built once.
    pub(super) fn funcs(&self, version: HelmVersion) -> Arc<FuncMap> {
        self.parses.funcs(version)
    }

    /// The trees template `name` with `text` defines, parsed with `set`'s
    /// functions the first time any render asks (a render that waits for
    /// another's parse of the same template gets its result).
    pub(super) fn parse(
        &self,
        set: &TemplateSet,
        version: HelmVersion,
        name: &str,
        text: &str,
        opts: &ExecOptions,
    ) -> Parse {
        self.parses.parse(
            set,
            version,
            name,
            text,
            || Text::Owned(text.to_string()),
            opts,
        )
    }
}

impl ParseStore {
    /// helm's function table for `version`, built once.
    fn funcs(&self, version: HelmVersion) -> Arc<FuncMap> {
        let i = usize::from(version == HelmVersion::V4);
        Arc::clone(self.funcs[i].get_or_init(|| Arc::new(super::funcs::func_map(version))))
    }

    /// See [`LoadedChart::parse`]. A parse in progress on another thread
    /// is waited for; parsing never waits for anything else, so no lock is
    /// held by a thread that waits on rayon work.
    /// `keep` gives the text to keep beside a new parse.
    fn parse(
        &self,
        set: &TemplateSet,
        version: HelmVersion,
        name: &str,
        text: &str,
        keep: impl FnOnce() -> Text,
        opts: &ExecOptions,
    ) -> Parse {
        let cell = {
            let mut parsed = lock(&self.parsed);
            let entries = parsed.entry(name.to_string()).or_default();
            match entries.iter().find(|(v, t, _)| *v == version && t.is(text)) {
                Some((_, _, cell)) => Arc::clone(cell),
                None => {
                    let cell = Arc::new(OnceLock::new());
                    entries.push((version, keep(), Arc::clone(&cell)));
                    cell
                }
            }
        };
        cell.get_or_init(|| set.parse_detached(name, text, opts).map(Arc::from))
            .clone()
    }

    /// Starts parsing, on rayon's pool and without waiting, the templates
    /// of a chart being loaded, under the names a render will most likely
    /// give them (`tree_path/templates/...`, as `render.rs`'s `collect`
    /// names a chart without an alias), so the parses overlap the rest of
    /// the load, dependency processing and coalescing. Only a cache is
    /// filled: a render asking under another name parses again, and parse
    /// errors are reported by the render, in helm's order.
    pub(super) fn prefetch(
        self: &Arc<Self>,
        version: HelmVersion,
        tree_path: &str,
        templates: &Arc<Vec<(String, String)>>,
        library: bool,
    ) {
        let opts = Arc::new(super::render::exec_options(version));
        for i in 0..templates.len() {
            let base = templates[i].0.rsplit('/').next().unwrap_or_default();
            if library && !base.starts_with('_') {
                continue;
            }
            let (store, templates, opts) =
                (Arc::clone(self), Arc::clone(templates), Arc::clone(&opts));
            let name = format!("{tree_path}/{}", templates[i].0);
            rayon::spawn(move || {
                let set = TemplateSet::new("gotpl", store.funcs(version));
                // The result stays in the cache for the render.
                let text = &templates[i].1;
                let keep = || Text::Shared(Arc::clone(&templates), i);
                let _ = store.parse(&set, version, &name, text, keep, &opts);
            });
        }
    }
}

/// A chart's place in a [`ChartCache`]: empty until its first load succeeds.
type Slot = Mutex<Option<Arc<LoadedChart>>>;

/// Charts a [`ChartCache`] keeps loaded. A loaded chart (its parsed
/// templates and function map) holds a few hundred kilobytes; keeping every
/// chart of a run made memory grow with the number of charts (about 85 MB
/// for 400 charts). Renders of one chart run close together (`env` groups
/// an app's environments), so the recently used charts are the ones reused;
/// one evicted and needed again is loaded again, with the same result.
const CHARTS_KEPT: usize = 16;

/// One run's loaded charts, by canonical chart path (a directory or a
/// packaged `.tgz`), the [`CHARTS_KEPT`] most recently used, and the file
/// lists renders report as read.
#[derive(Debug, Default)]
pub struct ChartCache {
    /// Canonical path -> (when last used, its slot).
    charts: Mutex<HashMap<PathBuf, (u64, Arc<Slot>)>>,
    uses: std::sync::atomic::AtomicU64,
    files: Mutex<HashMap<PathBuf, Arc<Vec<PathBuf>>>>,
}

impl ChartCache {
    /// The chart at `dir`, loaded by the first caller; others wait for it.
    /// A load that fails is not kept: the next caller tries again and gets
    /// the same error.
    pub fn load(&self, dir: &Path) -> Result<Arc<LoadedChart>, Error> {
        let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let slot = {
            let now = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut charts = lock(&self.charts);
            let entry = charts.entry(key).or_default();
            entry.0 = now;
            let slot = Arc::clone(&entry.1);
            if charts.len() > CHARTS_KEPT {
                // Renders holding the evicted chart keep their `Arc`.
                let oldest = charts.iter().min_by_key(|(_, (t, _))| *t);
                if let Some(k) = oldest.map(|(k, _)| k.clone()) {
                    charts.remove(&k);
                }
            }
            slot
        };
        let mut slot = lock(&slot);
        if let Some(c) = slot.as_ref() {
            return Ok(Arc::clone(c));
        }
        let loaded = Arc::new(super::load(dir)?);
        *slot = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    /// [`super::chart_files`] of `dir`, walked once per spelling of `dir`.
    pub fn chart_files(&self, dir: &Path) -> Arc<Vec<PathBuf>> {
        if let Some(f) = lock(&self.files).get(dir) {
            return Arc::clone(f);
        }
        let f = Arc::new(super::chart_files(dir));
        lock(&self.files).insert(dir.to_path_buf(), Arc::clone(&f));
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helm::{HelmVersion, Options, SetKind};

    fn write(d: &Path, p: &str, s: &str) {
        let f = d.join(p);
        std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
    }

    /// A chart whose render changes its values in place and whose
    /// subchart is switched by a value: renders of one load must not see
    /// each other's changes.
    fn chart(d: &Path) {
        write(
            d,
            "Chart.yaml",
            "apiVersion: v2\nname: top\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 1.0.0\n  condition: sub.enabled\n",
        );
        write(d, "values.yaml", "list: [a]\nsub:\n  enabled: false\n");
        write(
            d,
            "templates/cm.yaml",
            "{{- $_ := set .Values \"seen\" (default \"fresh\" .Values.seen) -}}\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.seen }}-{{ len .Values.list }}\n{{- $_ := set .Values \"list\" (append .Values.list \"b\") }}\n",
        );
        write(
            d,
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
        );
        write(
            d,
            "charts/sub/templates/s.yaml",
            "kind: Secret\nmetadata:\n  name: {{ .Chart.Name }}\n",
        );
    }

    #[test]
    fn renders_of_one_load_are_independent() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        chart(tmp.path());
        let on = Options {
            sets: vec![(SetKind::Typed, "sub.enabled=true".into())],
            ..Options::default()
        };
        let off = Options::default();
        let fresh = |o: &Options| {
            crate::helm::template(tmp.path(), o)
                .unwrap_or_else(|e| panic!("{e}"))
                .output
        };
        let cache = ChartCache::default();
        let loaded = cache.load(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        let again = cache
            .load(&tmp.path().join("charts/.."))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(Arc::ptr_eq(&loaded, &again), "one load per canonical path");
        let render = |o: &Options| {
            crate::helm::render(&loaded, o)
                .unwrap_or_else(|e| panic!("{e}"))
                .output
        };
        let (a, b, c) = (render(&on), render(&off), render(&on));
        assert!(
            a.contains("kind: Secret") && a.contains("name: fresh-1"),
            "{a}"
        );
        assert!(
            !b.contains("kind: Secret") && b.contains("name: fresh-1"),
            "{b}"
        );
        assert_eq!((a.as_str(), b.as_str()), (c.as_str(), fresh(&off).as_str()));
        assert_eq!(a, fresh(&on));
    }

    /// A load that starts parsing templates early renders the same bytes
    /// and fails on the same template, with the same message.
    #[test]
    fn prefetching_loads_render_the_same() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        chart(tmp.path());
        let on = Options {
            sets: vec![(SetKind::Typed, "sub.enabled=true".into())],
            ..Options::default()
        };
        let render = |l: &LoadedChart| crate::helm::render(l, &on).map(|r| r.output);
        let both = || {
            let plain = crate::helm::load(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
            let early = crate::helm::load_for(tmp.path(), HelmVersion::V3)
                .unwrap_or_else(|e| panic!("{e}"));
            (render(&plain), render(&early))
        };
        let (a, b) = both();
        assert!(
            a.as_ref().is_ok_and(|o| o.contains("kind: Secret")),
            "{a:?}"
        );
        assert_eq!(a.ok(), b.ok());
        write(tmp.path(), "charts/sub/templates/bad.yaml", "{{ nope }}\n");
        write(tmp.path(), "templates/bad.yaml", "{{ if }}\n");
        let (a, b) = both();
        let (a, b) = (a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
        assert!(
            a.as_ref()
                .is_err_and(|e| e.contains("charts/sub/templates/bad.yaml")),
            "{a:?}"
        );
        assert_eq!(a, b);
    }

    #[test]
    fn a_failed_load_is_not_kept() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = ChartCache::default();
        assert!(cache.load(tmp.path()).is_err());
        chart(tmp.path());
        assert!(cache.load(tmp.path()).is_ok());
    }

    /// Past [`CHARTS_KEPT`] charts the least recently used is dropped
    /// (and loaded again when needed); one in use stays.
    #[test]
    fn keeps_only_the_recently_used_charts() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dirs: Vec<PathBuf> = (0..=CHARTS_KEPT + 1)
            .map(|i| tmp.path().join(format!("c{i}")))
            .collect();
        for d in &dirs {
            chart(d);
        }
        let cache = ChartCache::default();
        let load = |d: &Path| cache.load(d).unwrap_or_else(|e| panic!("{e}"));
        let (first, busy) = (load(&dirs[0]), load(&dirs[1]));
        for d in &dirs[2..] {
            assert!(Arc::ptr_eq(&busy, &load(&dirs[1])), "used: kept");
            load(d);
        }
        assert!(lock(&cache.charts).len() <= CHARTS_KEPT);
        assert!(Arc::ptr_eq(&busy, &load(&dirs[1])), "used: kept");
        let again = load(&dirs[0]);
        assert!(
            !Arc::ptr_eq(&first, &again),
            "least recently used: loaded again"
        );
        assert_eq!(
            crate::helm::render(&first, &Options::default())
                .map(|r| r.output)
                .ok(),
            crate::helm::render(&again, &Options::default())
                .map(|r| r.output)
                .ok(),
        );
    }
}
