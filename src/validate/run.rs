//! `hydrate validate`: render the selected apps (through the render cache
//! when it is on), check every object, and, when a custom resource has no
//! CRD among them or the `crds:` files, render the other apps of every
//! environment too for the CRDs they ship. Writes nothing but the cache's
//! entries (the first pass's findings beside each render, [`super::stored`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{AppObjects, Crds, Finding, Pending, Severity, Validator, DEFAULT_KUBE_VERSION};
use crate::env::{self, Environment, Selection};

/// What to validate.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Repository root (holds `environments/`).
    pub root: PathBuf,
    /// Which environments and apps (`--env`, `--app`).
    pub selection: Selection,
    /// `--strict`: a custom resource without a schema is an error.
    pub strict: bool,
    /// The render cache's secret (None: no cache).
    pub cache: Option<env::cache::Secret>,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every finding, sorted by environment, app and object.
    pub findings: Vec<Finding>,
    /// Objects checked.
    pub objects: usize,
    /// Apps checked.
    pub apps: usize,
    /// Each checked environment's Kubernetes version.
    pub versions: BTreeMap<String, String>,
}

impl Report {
    /// Findings that make the output invalid.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

/// A run that could not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] env::Error),
    /// `--env`/`--app` select nothing that exists.
    #[error("{0}")]
    Selection(String),
    /// Some selected renders failed.
    #[error("{} render(s) failed; nothing was validated", .0.len())]
    Renders(Vec<env::Error>),
    /// A `kubeVersion` without schemas, a bad `crds:` file.
    #[error(transparent)]
    Validate(#[from] super::Error),
}

/// The Kubernetes version `e` is validated against.
pub fn kube_version(e: &Environment) -> &str {
    e.kube_version.as_deref().unwrap_or(DEFAULT_KUBE_VERSION)
}

/// The `crds:` files of the environments `sel` selects.
pub fn crd_files(root: &Path, envs: &[Environment], sel: &Selection) -> Result<Crds, super::Error> {
    let mut crds = Crds::default();
    for e in envs
        .iter()
        .filter(|e| sel.envs.is_empty() || sel.envs.contains(&e.name))
    {
        for f in &e.crds {
            crds.load_file(&root.join(f), &f.display().to_string())?;
        }
    }
    Ok(crds)
}

/// What each environment's findings are stored under in the render cache.
pub fn findings_tags<'e>(
    envs: impl IntoIterator<Item = &'e Environment>,
) -> std::collections::HashMap<String, String> {
    envs.into_iter()
        .map(|e| (e.name.clone(), super::stored::tag(kube_version(e))))
        .collect()
}

/// Validates the selected apps of `envs` (loaded from `opts.root`).
pub fn run(
    opts: &Options,
    envs: &[Environment],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Report, Error> {
    if let Some(problem) = env::unknown_selection(envs, &opts.selection) {
        return Err(Error::Selection(problem));
    }
    let validator = Validator::new(opts.strict);
    let versions: BTreeMap<String, String> = envs
        .iter()
        .map(|e| (e.name.clone(), kube_version(e).to_string()))
        .collect();
    // A kubeVersion without schemas fails before anything renders.
    for v in versions.values() {
        validator.catalog.version(v)?;
    }
    let extra = crd_files(&opts.root, envs, &opts.selection)?;
    let cache = opts
        .cache
        .clone()
        .and_then(|secret| env::Cache::open(&opts.root, secret))
        .map(|c| c.with_findings(findings_tags(envs)));
    let jobs = env::plan(&opts.root, envs, &opts.selection);
    progress(jobs.len());
    let pending = Mutex::new(Pending::default());
    let failed: Mutex<Vec<super::Error>> = Mutex::new(Vec::new());
    env::render_each(&jobs, cache.as_ref(), &|| progress(0), &|r| {
        let app = AppObjects {
            env: &r.env,
            app: &r.app,
            kube_version: versions
                .get(&r.env)
                .map_or(DEFAULT_KUBE_VERSION, String::as_str),
            objects: &r.objects,
        };
        let stored = cache.as_ref().and_then(|c| c.take_findings(&r.env, &r.app));
        match validator.first_or_stored(app, stored.as_deref()) {
            Ok(p) => lock(&pending).merge(p),
            Err(e) => lock(&failed).push(e),
        }
    })
    .map_err(Error::Renders)?;
    if let Some(e) = lock(&failed).pop() {
        return Err(e.into());
    }
    let mut pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = &cache {
        pending.store(&opts.root, envs, c);
    }
    if pending.lacks_crds(&extra) && !opts.selection.is_everything() {
        // The CRDs other environments' apps render; a render that fails
        // there is not this run's to report.
        let others: Vec<env::Job> = env::plan(&opts.root, envs, &Selection::default())
            .into_iter()
            .filter(|j| !jobs.iter().any(|s| s.env == j.env && s.app == j.app))
            .collect();
        let found = Mutex::new(Pending::default());
        let _ = env::render_each(&others, cache.as_ref(), &|| {}, &|r| {
            lock(&found).add_crds_of(&r.env, &r.app, &r.objects);
        });
        pending.merge(found.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
    let objects = pending.objects;
    let mut findings = validator.finish(pending, &extra)?;
    super::locate(&opts.root, envs, &mut findings);
    let checked: std::collections::BTreeSet<&str> = jobs.iter().map(|j| j.env.as_str()).collect();
    Ok(Report {
        findings,
        objects,
        apps: jobs.len(),
        versions: versions
            .into_iter()
            .filter(|(e, _)| checked.contains(e.as_str()))
            .collect(),
    })
}

/// `m`'s value, also after a panic elsewhere (see [`crate::lock`]).
pub use crate::lock::lock;
