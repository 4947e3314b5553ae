//! Environments and the render plan: which (environment, app) pairs to
//! render, sharding them across CI runners, rendering them in parallel
//! (rayon), results sorted whatever the thread order. It writes nothing;
//! `output/` does.

mod chart;
mod config;
mod discover;
mod pins;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

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

/// Which shard (0-based) of `n` a job belongs to: a stable hash of
/// `env/app`, so adding an app moves no other app between shards.
pub fn shard_of(env: &str, app: &str, n: u32) -> u32 {
    // FNV-1a, 64-bit: stable across platforms and releases.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in env.bytes().chain([b'/']).chain(app.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % u64::from(n.max(1))) as u32
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
            if let Some((i, n)) = sel.shard {
                if shard_of(&e.name, &a.name, n) != i - 1 {
                    continue;
                }
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
    jobs
}

/// Renders every job in parallel, calling `progress` after each. Returns
/// all results in job order, or every error (in job order) when any failed.
pub fn render_all(jobs: &[Job], progress: &(dyn Fn() + Sync)) -> Result<Vec<Rendered>, Vec<Error>> {
    // One run reads and parses each shared base or component file once.
    let opts = build_options(Some(std::sync::Arc::default()));
    let results: Vec<Result<Rendered, Error>> = jobs
        .par_iter()
        .map(|j| {
            let r = render_one(j, &opts);
            progress();
            r
        })
        .collect();
    let (ok, errs): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    if !errs.is_empty() {
        return Err(errs.into_iter().filter_map(Result::err).collect());
    }
    Ok(ok.into_iter().filter_map(Result::ok).collect())
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

fn render_one(job: &Job, opts: &kustomize::Options) -> Result<Rendered, Error> {
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
    let build = kustomize::build(dir, opts).map_err(|source| Error::Render {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_plan() {
        let pairs: Vec<(String, String)> = (0..50)
            .flat_map(|i| ["dev", "prod"].map(|e| (e.to_string(), format!("app{i}"))))
            .collect();
        let mut seen = 0;
        for i in 0..3 {
            seen += pairs.iter().filter(|(e, a)| shard_of(e, a, 3) == i).count();
        }
        assert_eq!(seen, pairs.len());
        assert_eq!(shard_of("dev", "web", 4), shard_of("dev", "web", 4));
        let sizes: Vec<usize> = (0..3)
            .map(|i| pairs.iter().filter(|(e, a)| shard_of(e, a, 3) == i).count())
            .collect();
        assert!(sizes.iter().all(|&s| s > 15), "{sizes:?}");
    }
}
