//! Environments and the render plan: which (environment, app) pairs to
//! render, sharding them across CI runners, rendering them in parallel
//! (rayon), results sorted whatever the thread order. It writes nothing;
//! `output/` does.

mod branch_name;
pub mod cache;
mod chart;
pub(crate) use chart::render_with as render_chart_with;
mod config;
pub(crate) mod confine;
mod discover;
mod document;
mod freeze;
mod graph;
pub(crate) mod guard;
mod promotion;
pub(crate) mod reach;
mod render_queue;
mod shard;

use std::path::{Path, PathBuf};

pub use cache::Cache;
pub(crate) use config::is_valid_name;
pub use config::{
    App, ChartApp, DiffConfig, DiffRule, Discover, Environment, Layout, Output, Readme, Source,
};
pub use confine::ConfigPath;
pub use freeze::Freeze;
pub use guard::Secrets;
pub use promotion::{AppPromotion, PinDecl, Promotion};

use crate::k8s::{Body, Object};
use crate::kustomize;
use crate::warning::Warning;

/// Expands a `discover:` glob (relative to `root`, `{env}` already
/// replaced) into (app name, directory) pairs, as [`load_environments`] does.
pub(crate) fn discover_apps(root: &Path, pattern: &str) -> Vec<(String, PathBuf)> {
    discover::expand(root, pattern)
}

/// The directories a `discover:`-style glob matches (`*`, `?` within a
/// component), relative to `root` and sorted.
pub(crate) fn glob_dirs(root: &Path, pattern: &str) -> Vec<PathBuf> {
    discover::glob_dirs(root, pattern)
}

/// A `discover:`-style glob matched component by component without the
/// filesystem (see [`glob_dirs`]).
pub(crate) use discover::Pattern as GlobPattern;

/// An environment-level failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An environment file is invalid.
    #[error("{}:{line}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// There is no `environments/` directory: the message says what hydrate
    /// reads there and suggests `hydrate init`.
    #[error("{}", no_environments(dir))]
    NoEnvironments {
        /// The missing directory.
        dir: PathBuf,
    },
    /// An app failed to render.
    #[error("{env}/{app}: {source}")]
    Render {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The build error (names the file); boxed to keep the error small.
        source: Box<kustomize::Error>,
        /// Warnings the build met before it failed.
        warnings: Vec<AppWarning>,
    },
    /// `environments/` exists but holds no environment file.
    #[error("{}: {} (`hydrate init` writes them from this repository's layout)", dir.display(), NO_ENVIRONMENTS)]
    NoEnvironmentFiles {
        /// The `environments` directory.
        dir: PathBuf,
    },
    /// Two environments write the same directory or branch.
    #[error("{0}")]
    SharedOutput(Box<SharedOutput>),
    /// A rendered plain Secret in an environment that refuses them.
    #[error(
        "{env}/{app}: {resource}: a plain Secret with data or stringData; the environment \
         refuses them (`secrets: refuse`, the default for branch output): render a \
         SealedSecret or ExternalSecret, or set `secrets: mask` or `secrets: allow`"
    )]
    Secret {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// `Secret/name`, with namespace and template when known.
        resource: String,
    },
    /// Non-deterministic output under `--strict` or `strict: true`.
    #[error("{env}/{app}: {warning} (refused: strict)")]
    Strict {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The non-determinism warning.
        warning: Warning,
    },
    /// A chart app failed to render.
    #[error("{env}/{app}: {}: {source}", chart.display())]
    Chart {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The chart.
        chart: PathBuf,
        /// helm's error.
        source: crate::helm::Error,
    },
}

impl Error {
    /// Warnings met before the error (a failed build's deprecations), to
    /// print before it as kustomize does.
    pub fn warnings(&self) -> &[AppWarning] {
        match self {
            Error::Render { warnings, .. } => warnings,
            _ => &[],
        }
    }
}

/// Two environments that write one directory or branch.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: environment `{env}` writes {what}, as environment `{other}` does ({}:{other_line})", file.display(), other_file.display())]
pub struct SharedOutput {
    /// The later environment.
    pub env: String,
    /// Its file.
    pub file: PathBuf,
    /// Its output line.
    pub line: u32,
    /// The earlier one.
    pub other: String,
    /// Its file.
    pub other_file: PathBuf,
    /// Its output line.
    pub other_line: u32,
    /// `the directory rendered/x`, `the branch env/x`, or how two
    /// directories nest.
    pub what: String,
}

/// What hydrate looks for, said when it finds none (the one place this
/// text lives).
pub(crate) const NO_ENVIRONMENTS: &str = "no environment files: hydrate reads environments/*.yaml \
     (or *.yml, any case), one environment per file, each with `name:` and `apps:`";

/// Whether `p` names an environment file: `.yaml` or `.yml`, in any case
/// (`dev.YAML` is read, not silently skipped).
pub(crate) fn is_environment_file(p: &Path) -> bool {
    p.is_file()
        && p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The top-level keys that make a file at the top of `environments/`
/// hydrate's: `name` (the one key the schema requires) and the keys that
/// mean nothing outside hydrate (`apps`, `discover`, `promotesTo`).
pub(crate) const IDENTIFYING_KEYS: [&str; 4] = ["name", "apps", "discover", "promotesTo"];

/// Whether the YAML file `p`, at the top of `environments/`, is a hydrate
/// environment file.
///
/// A common layout keeps other YAML there too: per-environment values
/// (`environments/dev.yaml` holding `replicaCount: 2`), or Kubernetes
/// manifests. Such a file must not break loading, yet a hydrate file with
/// a typo must still be an error, never skipped silently. So the rule
/// is: a file is hydrate's unless it is plainly something else, a YAML
/// mapping none of whose keys is one of [`IDENTIFYING_KEYS`], or a list or
/// scalar. A file that cannot be read or parsed, an empty one, or a mapping
/// with `name:` (even with unknown keys beside it, e.g. `aps:`) is hydrate's,
/// and loading it reports what is wrong, naming the file and line. The rule
/// looks at the first document only: an environment file holds one, and a
/// second is reported when the file is loaded.
pub(crate) fn is_environment_document(p: &Path) -> bool {
    let Ok(src) = std::fs::read_to_string(p) else {
        return true;
    };
    let Ok(docs) = crate::yaml::parse_all(&src, crate::yaml::Resolver::V3) else {
        return true;
    };
    identifies_environment(&docs)
}

/// The rule of [`is_environment_document`] on a file's parsed documents.
fn identifies_environment(docs: &[crate::yaml::Node]) -> bool {
    match docs.first() {
        None => true,
        Some(d) if d.is_null() => true,
        Some(d) => d.as_map().is_some_and(|m| {
            m.iter()
                .any(|(k, _)| k.key_text().is_some_and(|k| IDENTIFYING_KEYS.contains(&k)))
        }),
    }
}

/// The environment file `p` holds, or `None` when it is not hydrate's
/// ([`is_environment_document`]): read and parsed once for both (at
/// 10,000 apps, parsing each file twice was a tenth of a settled run).
fn load_if_environment(p: &Path) -> Option<Result<Environment, Error>> {
    let parsed = std::fs::read_to_string(p)
        .ok()
        .and_then(|src| crate::yaml::parse_all(&src, crate::yaml::Resolver::V3).ok());
    match parsed {
        // Unreadable or not YAML: loading it says what is wrong.
        None => Some(Environment::load(p)),
        Some(docs) if identifies_environment(&docs) => Some(Environment::from_documents(p, docs)),
        Some(_) => None,
    }
}

/// Loads every hydrate environment file (`*.yaml`/`*.yml`, see
/// [`is_environment_document`]) in `root/environments`, sorted by file
/// name, with discovered apps added after the listed ones. Every path the
/// files name must stay inside `root` (unless `allowOutside: true`), and no
/// two environments may write the same directory or branch.
pub fn load_environments(root: &Path) -> Result<Vec<Environment>, Error> {
    Ok(load(root)?.envs)
}

/// Environments as [`load_environments`] loads them, with what checking
/// their paths learnt.
pub(crate) struct Loaded {
    /// The environments.
    pub envs: Vec<Environment>,
    /// The directories found, while checking where the environments'
    /// paths lead, to have no symlink in them (app directories and every
    /// directory above them): a `..` after one climbs where it reads, so
    /// the settled check can state `overlays/dev/../../base` as `base`
    /// ([`cache::settled::inputs_fresh`]).
    pub unlinked: crate::realpath::Unlinked,
}

/// [`load_environments`], and what checking their paths learnt.
pub(crate) fn load(root: &Path) -> Result<Loaded, Error> {
    let dir = root.join("environments");
    if std::fs::symlink_metadata(&dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(Error::NoEnvironments { dir });
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&dir)
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
    {
        let p = entry
            .map_err(|e| Error::Read {
                path: e.path().unwrap_or(&dir).to_path_buf(),
                source: e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("walk")),
            })?
            .into_path();
        if is_environment_file(&p) {
            files.push(p);
        }
    }
    // Each file read and decoded on its own core (at 2,000 apps an
    // environment file is 200 KB); the first error in file order wins.
    let loaded: Vec<Option<Result<Environment, Error>>> = {
        use rayon::prelude::*;
        files.par_iter().map(|f| load_if_environment(f)).collect()
    };
    let mut envs: Vec<Environment> = loaded.into_iter().flatten().collect::<Result<_, _>>()?;
    if envs.is_empty() {
        return Err(Error::NoEnvironmentFiles { dir });
    }
    let mut names: std::collections::HashMap<String, PathBuf> = Default::default();
    // One resolver for every path of every environment: they share most
    // of their directories.
    let confine = confine::Confine::new(root);
    // Every app path resolved on both cores (a tenth of an unchanged run
    // at 500 apps); the errors are still taken in file order below.
    let confined = confine_all(&confine, &envs);
    for (e, confined) in envs.iter_mut().zip(confined) {
        if let Some(first) = names.insert(e.name.clone(), e.file.clone()) {
            return Err(Error::Config {
                path: e.file.clone(),
                line: e.output_line.max(1),
                message: format!(
                    "environment `{}` is defined twice (also in {})",
                    e.name,
                    first.display()
                ),
            });
        }
        confined?;
        let mut listed: std::collections::HashSet<String> =
            e.apps.iter().map(|a| a.name.clone()).collect();
        for rule in e.discover.clone() {
            let pattern = rule.pattern.replace("{env}", &e.name);
            // Checked when the file was read: a glob here compiles.
            let excluded: Vec<globset::GlobMatcher> = rule
                .exclude
                .iter()
                .filter_map(|g| config::discover_glob(&g.replace("{env}", &e.name)).ok())
                .collect();
            let mut found = discover::expand(root, &pattern);
            found.retain(|(_, dir)| !excluded.iter().any(|g| g.is_match(dir)));
            if found.is_empty() {
                e.warnings.push(config_warning(
                    e,
                    rule.line,
                    format!(
                        "discover glob `{}` matches no directory holding a kustomization{}",
                        rule.pattern,
                        if pattern == rule.pattern {
                            String::new()
                        } else {
                            format!(" (looked for `{pattern}`)")
                        }
                    ),
                ));
            }
            for (name, dir) in found {
                if !e.allow_outside {
                    if let Some(why) = confine.problem(&dir) {
                        return Err(Error::Config {
                            path: e.file.clone(),
                            line: rule.line,
                            message: format!("discover: `{}` {why}", dir.display()),
                        });
                    }
                }
                if is_valid_name(&name) && listed.insert(name.clone()) {
                    e.apps.push(App {
                        name,
                        source: Source::Kustomize(dir),
                        pins: Vec::new(),
                        promotion: Default::default(),
                    });
                }
            }
        }
    }
    for e in &mut envs {
        if e.apps.is_empty() {
            let message = format!(
                "environment `{}` has no apps: its output is emptied (list apps under \
                 `apps:` or find them with a `discover:` glob)",
                e.name
            );
            e.warnings.push(config_warning(e, e.apps_line, message));
        }
    }
    check_distinct_outputs(&envs)?;
    graph::check(&envs)?;
    Ok(Loaded {
        envs,
        unlinked: confine.unlinked(),
    })
}

/// Every path each environment names must stay inside the root
/// ([`confine`]) unless it allows otherwise: for each environment, the
/// first path that does not, in file order. The paths are resolved on
/// every core, one by one (a few environments with thousands of apps
/// each would leave a core idle if each took one).
fn confine_all(confine: &confine::Confine, envs: &[Environment]) -> Vec<Result<(), Error>> {
    use rayon::prelude::*;
    let paths: Vec<(usize, &ConfigPath)> = envs
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.allow_outside)
        .flat_map(|(i, e)| e.paths.iter().map(move |p| (i, p)))
        .collect();
    let problems: Vec<Option<(usize, &ConfigPath, String)>> = paths
        .par_iter()
        .map(|&(i, p)| {
            let e = envs.get(i)?;
            let path = p.path.to_string_lossy().replace("{env}", &e.name);
            confine.problem(Path::new(&path)).map(|why| (i, p, why))
        })
        .collect();
    let mut out: Vec<Result<(), Error>> = envs.iter().map(|_| Ok(())).collect();
    for (i, p, why) in problems.into_iter().flatten() {
        let (Some(slot @ Ok(())), Some(e)) = (out.get_mut(i), envs.get(i)) else {
            continue;
        };
        *slot = Err(Error::Config {
            path: e.file.clone(),
            line: p.line,
            message: format!(
                "{}: `{}` {why} (set `allowOutside: true` to allow it)",
                p.key,
                p.path.display()
            ),
        });
    }
    out
}

/// No two environments write the same branch, or the same directory or
/// one inside the other (each would prune the other's files). Checked on
/// the outputs as configured, and again by `render` after `--to`.
pub(crate) fn check_distinct_outputs(envs: &[Environment]) -> Result<(), Error> {
    for (i, b) in envs.iter().enumerate() {
        for a in &envs[..i] {
            let what = match (&a.output, &b.output) {
                (Output::Branch(x), Output::Branch(y)) if x == y => format!("the branch `{x}`"),
                (Output::Dir(x), Output::Dir(y)) => {
                    let (x, y) = (normal(x), normal(y));
                    if x == y {
                        format!("the directory `{}`", x.display())
                    } else if x.starts_with(&y) || y.starts_with(&x) {
                        format!(
                            "the directory `{}`, nested with `{}`",
                            y.display(),
                            x.display()
                        )
                    } else {
                        continue;
                    }
                }
                _ => continue,
            };
            return Err(Error::SharedOutput(Box::new(SharedOutput {
                env: b.name.clone(),
                file: b.file.clone(),
                line: b.output_line.max(1),
                other: a.name.clone(),
                other_file: a.file.clone(),
                other_line: a.output_line.max(1),
                what,
            })));
        }
    }
    Ok(())
}

/// `p` without `.` components and with `x/..` folded, for comparing.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What `hydrate` says when a repository has no `environments/`: what it
/// looks for there, and that `hydrate init` writes it.
fn no_environments(dir: &Path) -> String {
    format!(
        "{}: not found. hydrate renders the apps of each environment listed in \
         environments/<env>.yaml (its name, and apps with a kustomize directory or a helm \
         chart, or discover: globs such as apps/*/overlays/{{env}}). \
         Run `hydrate init` to write them from this repository's overlays, charts and \
         Argo CD applications (`hydrate init --dry-run` only shows them).",
        dir.display()
    )
}

/// A warning about environment `e`'s file at `line`.
fn config_warning(e: &Environment, line: u32, message: String) -> Warning {
    Warning {
        kind: crate::warning::WarningKind::Config,
        message,
        file: Some(e.file.clone()),
        line: Some(line),
    }
}

/// One unit of work.
#[derive(Clone, Debug)]
pub struct Job {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// How to render it (paths already joined to the root).
    pub source: Source,
}

/// The result of one job: what `diff/`, `promote/` and `output/` consume.
///
/// `objects` are the app's resources in output order, each with its
/// [`crate::k8s::ObjectId`], its parsed document (`Arc`, shared) and the
/// text printed for it; `manifest` is the whole stream exactly as
/// `kustomize build` or `helm template` prints it (for a chart, with helm's
/// `# Source:` comments; documents that hold only comments are in the
/// manifest but are not objects).
#[derive(Debug)]
pub struct Rendered {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// The resources, in output order.
    /// Each carries its whole document when rendered afresh; a cache hit
    /// keeps only the identity of most (see [`Body`]).
    pub objects: Vec<Object<Body>>,
    /// The manifest stream, byte for byte as the renderer prints it.
    pub manifest: String,
    /// Files the render read.
    pub files_read: Vec<PathBuf>,
    /// Warnings (deprecations, non-deterministic functions, ...), each
    /// naming this environment and app.
    pub warnings: Vec<AppWarning>,
}

/// A render's warning, with the environment and app it concerns.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppWarning {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// The renderer's warning.
    pub warning: Warning,
}

impl std::fmt::Display for AppWarning {
    /// `env/app: file:line: message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}: {}", self.env, self.app, self.warning)
    }
}

/// Filters for a plan.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Only these environments (all when empty).
    pub envs: Vec<String>,
    /// Only these apps (all when empty).
    pub apps: Vec<String>,
    /// `(i, n)`: only the i-th of n shards (1-based).
    pub shard: Option<(u32, u32)>,
}

impl Selection {
    /// Whether this selects every app of every environment.
    pub fn is_everything(&self) -> bool {
        self.envs.is_empty() && self.apps.is_empty() && self.shard.is_none()
    }
}

/// What `sel` names that does not exist: an environment no file defines,
/// an app no environment has (a usage error).
pub(crate) fn unknown_selection(envs: &[Environment], sel: &Selection) -> Option<String> {
    for wanted in &sel.envs {
        if !envs.iter().any(|e| &e.name == wanted) {
            let known: Vec<&str> = envs.iter().map(|e| e.name.as_str()).collect();
            return Some(format!(
                "no environment named `{wanted}` (environments: {})",
                known.join(", ")
            ));
        }
    }
    sel.apps
        .iter()
        .find(|wanted| {
            !envs
                .iter()
                .any(|e| e.apps.iter().any(|a| &a.name == *wanted))
        })
        .map(|wanted| format!("no app named `{wanted}` in any environment"))
}

/// Lists the jobs for `envs` under `root`, filtered by `sel`.
pub fn plan(root: &Path, envs: &[Environment], sel: &Selection) -> Vec<Job> {
    let mut jobs = Vec::new();
    for e in envs {
        if !sel.envs.is_empty() && !sel.envs.contains(&e.name) {
            continue;
        }
        for a in &e.apps {
            if !sel.apps.is_empty() && !sel.apps.contains(&a.name) {
                continue;
            }
            let source = match &a.source {
                Source::Kustomize(dir) => Source::Kustomize(root.join(dir)),
                Source::Helm(c) => {
                    let mut c = c.clone();
                    c.chart = root.join(&c.chart);
                    for f in &mut c.value_files {
                        *f = root.join(&*f);
                    }
                    Source::Helm(c)
                }
            };
            jobs.push(Job {
                env: e.name.clone(),
                app: a.name.clone(),
                source,
            });
        }
    }
    match sel.shard {
        Some((i, n)) => shard::select(jobs, i, n),
        None => jobs,
    }
}

/// Renders every job in parallel, calling `progress` after each. Returns
/// all results in job order, or every error (in job order) when any failed.
pub fn render_all(jobs: &[Job], progress: &(dyn Fn() + Sync)) -> Result<Vec<Rendered>, Vec<Error>> {
    render_all_cached(jobs, None, progress)
}

/// [`render_all`], answering from `cache` the jobs whose inputs are
/// unchanged and storing the others' results. Cached objects carry their
/// identity, printed text and source, not whole documents (see
/// [`cache`]): for writing output, not for diffing.
pub fn render_all_cached(
    jobs: &[Job],
    cache: Option<&Cache>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Rendered>, Vec<Error>> {
    render_each(jobs, cache, progress, &|r| r)
}

/// [`render_all_cached`], handing each render to `finish` on the thread
/// that made it, as soon as it is made: what `finish` keeps is all that
/// outlives the render (a writer keeps the files, not the documents).
/// Results come back in job order; jobs run grouped by app, so that one
/// app's environments, which read the same base, render close together.
pub(crate) fn render_each<T: Send>(
    jobs: &[Job],
    cache: Option<&Cache>,
    progress: &(dyn Fn() + Sync),
    finish: &(dyn Fn(Rendered) -> T + Sync),
) -> Result<Vec<T>, Vec<Error>> {
    let (done, failed) = render_each_partial(jobs, cache, progress, finish);
    if let Some(c) = cache {
        c.finish();
    }
    if !failed.is_empty() {
        return Err(failed.into_iter().map(|f| f.error).collect());
    }
    Ok(done)
}

/// One (environment, app) whose render failed, named by its job (whatever
/// the error's kind): `render --keep-going` keeps that app's previous
/// output and reports the error at the end.
#[derive(Debug)]
pub(crate) struct AppFailure {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// Why (its message names the environment, app and file).
    pub error: Error,
}

/// [`render_each`], returning what succeeded and what failed instead of
/// failing as a whole: both in job order. The caller finishes the cache
/// ([`Cache::finish`]) after it has read what it needs of this run's
/// hashes.
pub(crate) fn render_each_partial<T: Send>(
    jobs: &[Job],
    cache: Option<&Cache>,
    progress: &(dyn Fn() + Sync),
    finish: &(dyn Fn(Rendered) -> T + Sync),
) -> (Vec<T>, Vec<AppFailure>) {
    // One run reads and parses each shared base or component file once,
    // and the cache hashes each as it is read.
    let sources = match cache {
        Some(c) => kustomize::Sources::default().with_hook(c.read_hook()),
        None => kustomize::Sources::default(),
    };
    let opts = build_options(Some(std::sync::Arc::new(sources)));
    // ... and loads each chart and parses its templates once.
    let charts = crate::helm::ChartCache::default();
    // Heaviest first (by the last run's render times), on every core, one
    // app's environments together: they read the same base, which the
    // bounded parse cache then still holds.
    let order = match cache {
        Some(c) => group_by_app(jobs, c.order(jobs)),
        None => group_by_app(jobs, (0..jobs.len()).collect()),
    };
    let results: Vec<(usize, Result<T, Error>)> = render_queue::run(&order, |i| {
        let j = &jobs[i];
        let r = match cache.map(|c| c.lookup(j)) {
            Some(cache::Lookup::Hit(hit)) => Ok(hit),
            found => {
                let started = std::time::Instant::now();
                let mut r = render_one(j, &opts, &charts);
                if let (Some(c), Ok(r)) = (cache, &mut r) {
                    c.store(j, r, started.elapsed());
                    // After storing: the warning is this run's, not the render's.
                    if matches!(found, Some(cache::Lookup::Unauthentic)) {
                        r.warnings.push(AppWarning {
                            env: j.env.clone(),
                            app: j.app.clone(),
                            warning: c.unauthentic_warning(),
                        });
                    }
                }
                r
            }
        };
        progress();
        (i, r.map(finish))
    });
    // The parsed files and loaded charts are not needed for the cache's
    // index, which the caller's `Cache::finish` builds: freed first, they
    // do not add to it.
    drop((opts, charts));
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for (i, r) in results {
        match (r, jobs.get(i)) {
            (Ok(t), _) => done.push(t),
            (Err(error), Some(j)) => failed.push(AppFailure {
                env: j.env.clone(),
                app: j.app.clone(),
                error,
            }),
            (Err(error), None) => failed.push(AppFailure {
                env: String::new(),
                app: String::new(),
                error,
            }),
        }
    }
    (done, failed)
}

/// `order` with each app's jobs moved up to its first (heaviest) one, so
/// that an app's environments run next to each other.
fn group_by_app(jobs: &[Job], order: Vec<usize>) -> Vec<usize> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut slot: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for i in order {
        let Some(j) = jobs.get(i) else { continue };
        let g = *slot.entry(j.app.as_str()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups.into_iter().flatten().collect()
}

/// `hydrate render` always inflates `helmCharts`.
fn build_options(sources: Option<std::sync::Arc<kustomize::Sources>>) -> kustomize::Options {
    kustomize::Options {
        helm: kustomize::HelmSettings {
            enabled: true,
            ..Default::default()
        },
        sources,
        ..Default::default()
    }
}

fn render_one(
    job: &Job,
    opts: &kustomize::Options,
    charts: &crate::helm::ChartCache,
) -> Result<Rendered, Error> {
    let app_warnings = |ws: Vec<Warning>| {
        ws.into_iter()
            .map(|warning| AppWarning {
                env: job.env.clone(),
                app: job.app.clone(),
                warning,
            })
            .collect()
    };
    let dir = match &job.source {
        Source::Kustomize(dir) => dir,
        Source::Helm(app) => {
            let (c, files_read) = chart::render(app, charts).map_err(|source| Error::Chart {
                env: job.env.clone(),
                app: job.app.clone(),
                chart: app.chart.clone(),
                source,
            })?;
            return Ok(Rendered {
                env: job.env.clone(),
                app: job.app.clone(),
                objects: c.objects.into_iter().map(Object::into).collect(),
                manifest: c.output,
                files_read,
                warnings: app_warnings(c.warnings),
            });
        }
    };
    let build = kustomize::build_warned(dir, opts).map_err(|f| Error::Render {
        env: job.env.clone(),
        app: job.app.clone(),
        source: Box::new(f.error),
        warnings: app_warnings(f.warnings),
    })?;
    Ok(Rendered {
        env: job.env.clone(),
        app: job.app.clone(),
        manifest: build.to_yaml(),
        objects: build.objects.into_iter().map(Object::into).collect(),
        files_read: build.files_read,
        warnings: app_warnings(build.warnings),
    })
}
