//! What `render` keeps of each render while the others run: the guards'
//! refusals, the report's counts and warnings, and the app's files. A
//! directory output's files are streamed into its staging tree as each
//! render finishes ([`Stage`]); a branch output's are kept as bytes. The
//! parsed documents are dropped as soon as the files are made, so memory
//! does not grow with the number of apps. It writes nothing visible: the
//! switch or commit is `render`'s, after every render succeeded.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use rayon::prelude::*;

use super::Options;
use crate::env::{self, guard::Guard, AppWarning, Environment, Output, Rendered};
use crate::output::{self, app_files, MadeDirs, Stage};
use crate::validate::{self, AppObjects, Pending, Validator};

/// One finished render, without its documents.
#[derive(Debug)]
pub(super) struct Finished {
    /// Environment name.
    pub env: String,
    /// App name.
    pub app: String,
    /// The app's files when they were not streamed (branch output; empty
    /// when they were), or why they could not be named.
    pub files: Result<BTreeMap<String, Vec<u8>>, output::Error>,
    /// The secret and determinism guards' refusals.
    pub refused: Vec<env::Error>,
    /// Resources rendered.
    pub resources: usize,
    /// Bytes of manifests rendered.
    pub bytes: usize,
    /// The render's warnings, the guards' included.
    pub warnings: Vec<AppWarning>,
}

/// Where finished renders go.
pub(super) struct Sink<'a> {
    envs: &'a [Environment],
    strict: bool,
    /// Environment → its directory output's stage (or why it cannot be
    /// opened, reported when the environment is planned).
    stages: BTreeMap<String, Result<Stage, output::Error>>,
    /// `--validate` (every environment) or `validate: true` (one).
    validate_all: bool,
    /// The checks, and what the renders' first passes found.
    pub validator: Validator,
    /// The first passes of the environments validated.
    pub pending: Mutex<Pending>,
    /// A first pass that could not run (an unknown `kubeVersion`).
    pub failed: Mutex<Vec<validate::Error>>,
}

impl<'a> Sink<'a> {
    /// Opens the stage of every environment in `written` that writes (or
    /// with `--check`, compares) a directory.
    /// `known`: environment → its directory's tree, where this run found
    /// every entry of it as its record lists them (see
    /// [`Stage::open_with`]).
    pub fn open(
        opts: &Options,
        envs: &'a [Environment],
        written: &BTreeSet<&str>,
        known: &BTreeMap<&str, output::Known<'_>>,
    ) -> Sink<'a> {
        let made = std::sync::Arc::new(MadeDirs::default());
        // Opening a stage reads the directory's whole tree (and recovers a
        // killed run): a tenth of an unchanged run, so the environments'
        // directories are read on every core (they are distinct and none
        // is inside another: `env::check_distinct_outputs`).
        let opened: Vec<(String, Result<Stage, output::Error>)> = envs
            .par_iter()
            .filter(|e| written.contains(e.name.as_str()))
            .filter_map(|e| match &e.output {
                Output::Dir(dir) => {
                    let write = !opts.check;
                    let tree = known.get(e.name.as_str()).copied().unwrap_or_default();
                    let stage = Stage::open_with(&opts.root, dir, write, made.clone(), tree);
                    Some((e.name.clone(), stage))
                }
                Output::Branch(_) => None,
            })
            .collect();
        let stages = opened.into_iter().collect();
        Sink {
            envs,
            strict: opts.strict,
            stages,
            validate_all: opts.validate,
            validator: Validator::new(false),
            pending: Mutex::default(),
            failed: Mutex::default(),
        }
    }

    /// Applies the guards to `r`, names its files and streams them to its
    /// environment's stage; keeps what the report needs. `stored`: the
    /// validation findings the cache keeps with `r`, if it was a hit.
    pub fn finish(&self, mut r: Rendered, stored: Option<Vec<u8>>) -> Finished {
        let e = self.envs.iter().find(|e| e.name == r.env);
        let refused = e
            .map(|e| Guard::of(e, self.strict).apply(&mut r))
            .unwrap_or_default();
        if let Some(e) = e.filter(|e| self.validate_all || e.validate) {
            self.first_pass(e, &r, stored.as_deref());
        }
        let files = match e {
            Some(e) if refused.is_empty() => app_files(&r, e.layout),
            _ => Ok(BTreeMap::new()),
        };
        // A refused app is not staged: under `--keep-going` its previous
        // files stay; otherwise the run stops before writing.
        let files = match (files, self.stages.get(&r.env)) {
            (Ok(f), Some(Ok(stage))) if refused.is_empty() => {
                stage.add(&r.app, &f);
                Ok(BTreeMap::new())
            }
            // The stage's error is the environment's, reported when planned.
            (Ok(_), Some(Err(_))) => Ok(BTreeMap::new()),
            (other, _) => other,
        };
        Finished {
            resources: r.objects.len(),
            bytes: r.objects.iter().map(|o| o.printed.len()).sum(),
            env: r.env,
            app: r.app,
            files,
            refused,
            warnings: r.warnings,
        }
    }

    /// Validation's first pass over one render (custom resources wait for
    /// every CRD: [`validate::Validator::finish`]).
    fn first_pass(&self, e: &Environment, r: &Rendered, stored: Option<&[u8]>) {
        let app = AppObjects {
            env: &r.env,
            app: &r.app,
            kube_version: validate::run::kube_version(e),
            objects: &r.objects,
        };
        match self.validator.first_or_stored(app, stored) {
            Ok(p) => validate::run::lock(&self.pending).merge(p),
            Err(err) => validate::run::lock(&self.failed).push(err),
        }
    }

    /// Takes app `app` of environment `env` as its output directory holds
    /// it: `files` are there, unchanged ([`Stage::keep`]).
    pub fn keep(&self, env: &str, app: &str, files: &[(String, String)]) {
        if let Some(Ok(stage)) = self.stages.get(env) {
            stage.keep(app, files);
        }
    }

    /// The stage of environment `env`, taken out to be planned.
    pub fn take(&mut self, env: &str) -> Option<Result<Stage, output::Error>> {
        self.stages.remove(env)
    }
}
