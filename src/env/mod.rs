//! Environments and the render plan: which (environment, app) pairs to
//! render, sharding them across CI runners, rendering them in parallel
//! (rayon), results sorted whatever the thread order. It writes nothing;
//! `output/` does.

pub mod cache;
mod chart;
mod config;
mod discover;
mod pins;
mod shard;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use cache::Cache;
pub use config::{
    is_valid_name, App, ChartApp, DiffConfig, DiffRule, Discover, Environment, Layout, Output,
    Readme, Source,
};
pub use pins::{PinDecl, Promotion};

use crate::k8s::Object;
use crate::kustomize;
use crate::warning::Warning;

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
    /// An app failed to render.
    #[error("{env}/{app}: {source}")]
    Render {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The build error (names the file).
        source: kustomize::Error,
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

/// Loads every `*.yaml` in `root/environments`, sorted by file name, with
/// discovered apps added after the listed ones.
pub fn load_environments(root: &Path) -> Result<Vec<Environment>, Error> {
    let dir = root.join("environments");
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
        if p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            files.push(p);
        }
    }
    let mut envs: Vec<Environment> = files
        .iter()
        .map(|f| Environment::load(f))
        .collect::<Result<_, _>>()?;
    let mut names = std::collections::HashSet::new();
    for e in &mut envs {
        if !names.insert(e.name.clone()) {
            return Err(Error::Config {
                path: e.file.clone(),
                line: 1,
                message: format!("environment `{}` is defined twice", e.name),
            });
        }
        for rule in e.discover.clone() {
            let pattern = rule.pattern.replace("{env}", &e.name);
            for (name, dir) in discover::expand(root, &pattern) {
                if is_valid_name(&name) && !e.apps.iter().any(|a| a.name == name) {
                    e.apps.push(App {
                        name,
                        source: Source::Kustomize(dir),
                        pins: Vec::new(),
                    });
                }
            }
        }
    }
    Ok(envs)
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
    pub objects: Vec<Object>,
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
    let results: Vec<Result<Rendered, Error>> = jobs
        .par_iter()
        .map(|j| {
            let r = match cache.and_then(|c| c.lookup(j)) {
                Some(hit) => Ok(hit),
                None => {
                    let r = render_one(j);
                    if let (Some(c), Ok(r)) = (cache, &r) {
                        c.store(j, r);
                    }
                    r
                }
            };
            progress();
            r
        })
        .collect();
    if let Some(c) = cache {
        c.evict();
    }
    let (ok, errs): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    if !errs.is_empty() {
        return Err(errs.into_iter().filter_map(Result::err).collect());
    }
    Ok(ok.into_iter().filter_map(Result::ok).collect())
}

/// `hydrate render` always inflates `helmCharts`.
fn build_options() -> kustomize::Options {
    kustomize::Options {
        helm: kustomize::HelmSettings {
            enabled: true,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn render_one(job: &Job) -> Result<Rendered, Error> {
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
            let (c, files_read) = chart::render(app).map_err(|source| Error::Chart {
                env: job.env.clone(),
                app: job.app.clone(),
                chart: app.chart.clone(),
                source,
            })?;
            return Ok(Rendered {
                env: job.env.clone(),
                app: job.app.clone(),
                objects: c.objects,
                manifest: c.output,
                files_read,
                warnings: app_warnings(c.warnings),
            });
        }
    };
    let build = kustomize::build(dir, &build_options()).map_err(|source| Error::Render {
        env: job.env.clone(),
        app: job.app.clone(),
        source,
    })?;
    Ok(Rendered {
        env: job.env.clone(),
        app: job.app.clone(),
        manifest: build.to_yaml(),
        objects: build.objects,
        files_read: build.files_read,
        warnings: app_warnings(build.warnings),
    })
}
