//! Environments and the render plan: which (environment, app) pairs to
//! render, rendering them in parallel (rayon), results sorted whatever the
//! thread order. It writes nothing; `output/` does.

mod config;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use config::{App, Environment, Output, Source};

use crate::kustomize;

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
    /// A rendered app cannot be printed.
    #[error("{env}/{app}: {message}")]
    Print {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// What went wrong.
        message: String,
    },
}

/// Loads every `*.yaml` in `root/environments`, sorted by file name.
pub fn load_environments(root: &Path) -> Result<Vec<Environment>, Error> {
    let dir = root.join("environments");
    let entries = std::fs::read_dir(&dir).map_err(|source| Error::Read {
        path: dir.clone(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
        })
        .collect();
    files.sort();
    let envs: Vec<Environment> = files
        .iter()
        .map(|f| Environment::load(f))
        .collect::<Result<_, _>>()?;
    let mut names = std::collections::HashSet::new();
    for e in &envs {
        if !names.insert(e.name.clone()) {
            return Err(Error::Config {
                path: e.file.clone(),
                line: 1,
                message: format!("environment `{}` is defined twice", e.name),
            });
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

/// The result of one job.
#[derive(Debug)]
pub struct Rendered {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// The manifest stream.
    pub yaml: String,
    /// Number of resources.
    pub resources: usize,
    /// Files the render read.
    pub files_read: Vec<PathBuf>,
    /// Warnings (deprecations).
    pub warnings: Vec<String>,
}

/// Filters for a plan.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Only these environments (all when empty).
    pub envs: Vec<String>,
    /// Only these apps (all when empty).
    pub apps: Vec<String>,
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

/// Renders every job in parallel. Returns all results, or every error
/// (sorted by environment and app) when any job failed.
pub fn render_all(jobs: &[Job]) -> Result<Vec<Rendered>, Vec<Error>> {
    let results: Vec<Result<Rendered, Error>> = jobs.par_iter().map(render_one).collect();
    let (ok, errs): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    if !errs.is_empty() {
        return Err(errs.into_iter().filter_map(Result::err).collect());
    }
    Ok(ok.into_iter().filter_map(Result::ok).collect())
}

fn render_one(job: &Job) -> Result<Rendered, Error> {
    let Source::Kustomize(dir) = &job.source;
    let build =
        kustomize::build(dir, &kustomize::Options::default()).map_err(|source| Error::Render {
            env: job.env.clone(),
            app: job.app.clone(),
            source,
        })?;
    let yaml = build.to_yaml().map_err(|e| Error::Print {
        env: job.env.clone(),
        app: job.app.clone(),
        message: e.to_string(),
    })?;
    Ok(Rendered {
        env: job.env.clone(),
        app: job.app.clone(),
        yaml,
        resources: build.resources.len(),
        files_read: build.files_read,
        warnings: build.warnings,
    })
}
