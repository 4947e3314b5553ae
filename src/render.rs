//! The render-and-write step behind `hydrate render`: plan, render every
//! (environment, app) in parallel, then write (or `--check`) each
//! environment's output — a directory or an environment branch — and with
//! `--push` publish the branches. Nothing is written unless every render
//! succeeded, and no branch is written unless every branch can be (a
//! branch that diverged from its remote copy stops the run first).
//!
//! With `keep_going` (`render --keep-going`), an app whose render fails (or
//! that a guard refuses, or whose files cannot be named) is left out of its
//! environment's output the way an app outside `--app` is: its previous
//! files stay exactly as they were (a directory's, carried into the new
//! tree; a branch's, kept in the new commit's tree, with a `Hydrate-Kept`
//! trailer naming it), the other apps are written, and the failures come
//! back in the reports. A failure is always a whole app, never part of one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod expected;
mod hook;
mod settle;
mod sink;

/// What a write to git can fail with, and who commits.
pub use crate::git::{Error as GitError, Identity};
/// What writing an environment's output can fail with or report.
pub use crate::output::{CheckReport, Error as OutputError, LayoutError, PushResult, Rejection};
pub(crate) use expected::branch_output;
pub(crate) use hook::committed_output;

use crate::env::guard::Guard;
use crate::env::{self, Environment, Output, Secrets, Selection};
use crate::git::{Repo, SourceCommit};
use crate::output::{self, Branch, EnvOutput, MessageContext, Pending, Start};
use crate::validate;
use sink::{Finished, Sink};

/// Overrides every environment's output kind (`--to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// Directories (`rendered/<env>` unless configured).
    Dir,
    /// Branches (`env/<env>` unless configured).
    Branch,
}

/// What to render and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Repository root (holds `environments/`).
    pub root: PathBuf,
    /// Which environments/apps/shard.
    pub selection: Selection,
    /// `--to`.
    pub to: Option<OutputKind>,
    /// Write branches to `<branch>-next` (gitops-promoter's proposed branch).
    pub next: bool,
    /// Compare with the committed output instead of writing.
    pub check: bool,
    /// Commit author/committer (required for branch output).
    pub identity: Option<Identity>,
    /// Push the environment branches after writing them (`--push`).
    pub push: bool,
    /// The remote env branches are based on and pushed to (`--remote`);
    /// default: each branch's upstream, else `origin`.
    pub remote: Option<String>,
    /// Extra trailers for branch commits (`Hydrate-Promotion`).
    pub trailers: Vec<(String, String)>,
    /// `--strict`: non-deterministic output is an error in every
    /// environment (as `strict: true` is in one).
    pub strict: bool,
    /// `--validate`: check every rendered object against its Kubernetes
    /// schema and the repository's CRDs, and write nothing when one is
    /// invalid (as `validate: true` does for one environment).
    pub validate: bool,
    /// `--keep-going`: write the apps that rendered and keep the previous
    /// output of those that failed (reported in [`EnvReport::failed`]).
    pub keep_going: bool,
    /// Use the render cache in `<root>/.hydrate/cache`, its entries
    /// authenticated under this secret (`None`: no cache, as with
    /// `--no-cache`).
    pub cache: Option<env::cache::Secret>,
}

/// What happened to one environment.
#[derive(Clone, Debug)]
pub struct EnvReport {
    /// Environment name.
    pub env: String,
    /// Where its output went: a directory path or `branch:<name>`.
    pub target: String,
    /// Apps rendered.
    pub apps: usize,
    /// Resources rendered.
    pub resources: usize,
    /// Bytes of manifests rendered.
    pub bytes: usize,
    /// Files created, updated or deleted.
    pub changed_files: Vec<String>,
    /// Whether this run changed the output (a directory switched, a commit).
    pub written: bool,
    /// What the writer left alone or cleaned up (files changed since
    /// hydrate wrote them, ignored ownership entries, a killed run's
    /// leftovers).
    pub notices: Vec<String>,
    /// The commit made, if any.
    pub commit: Option<String>,
    /// With `push`: the remote that has the branch (pushed, or already
    /// there); `None` when it was rejected.
    pub pushed: Option<String>,
    /// With `push`: the remote and what it did with the branch.
    pub push: Option<EnvPush>,
    /// With `check`: how the output differs.
    pub check: Option<CheckReport>,
    /// The renders' warnings (deprecations, non-deterministic functions, ...).
    pub warnings: Vec<env::AppWarning>,
    /// With `keep_going`: the apps that failed, whose previous output was
    /// kept, in app order.
    pub failed: Vec<FailedApp>,
}

impl EnvReport {
    /// The report of environment `env` writing to `target`, its renders
    /// counted (`[apps, resources, bytes]`) with their warnings, before
    /// anything is written or checked.
    fn before_writing(
        env: &str,
        target: String,
        [apps, resources, bytes]: [usize; 3],
        warnings: Vec<env::AppWarning>,
    ) -> EnvReport {
        EnvReport {
            env: env.to_string(),
            target,
            apps,
            resources,
            bytes,
            changed_files: Vec::new(),
            written: false,
            notices: Vec::new(),
            commit: None,
            pushed: None,
            push: None,
            check: None,
            warnings,
            failed: Vec::new(),
        }
    }
}

/// An app that failed under `keep_going`: its previous output was kept.
#[derive(Clone, Debug)]
pub struct FailedApp {
    /// App name.
    pub app: String,
    /// The error, as `render` without `--keep-going` reports it (it names
    /// the environment, the app and the file).
    pub error: String,
    /// Warnings the build met before it failed.
    pub warnings: Vec<env::AppWarning>,
}

/// The trailer a branch commit gets for each app whose previous tree it
/// kept because its render failed under `keep_going`.
pub(crate) const KEPT_TRAILER: &str = "Hydrate-Kept";

/// What `--push` did with one environment's branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvPush {
    /// The remote pushed to.
    pub remote: String,
    /// Pushed, unchanged, or rejected with the remote's reason and lines.
    pub result: output::PushResult,
}

impl EnvReport {
    /// Whether the remote rejected this environment's branch.
    pub fn push_rejected(&self) -> bool {
        self.push
            .as_ref()
            .is_some_and(|p| matches!(p.result, output::PushResult::Rejected(_)))
    }
}

/// A failed run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] env::Error),
    /// Some renders failed (nothing was written).
    #[error("{} render(s) failed; nothing was written", .0.len())]
    Renders(Vec<env::Error>),
    /// Writing failed.
    #[error(transparent)]
    Output(#[from] output::Error),
    /// Validation found invalid objects (nothing was written).
    #[error("{} invalid object field(s); nothing was written", .0.iter().filter(|f| f.severity == validate::Severity::Error).count())]
    Invalid(Vec<validate::Finding>),
    /// Validation could not run (an unknown `kubeVersion`, a bad `crds:`
    /// file).
    #[error(transparent)]
    Validate(#[from] validate::Error),
    /// An environment's output cannot be written (found before any write).
    #[error("environment {env}: {source}")]
    InEnv {
        /// The environment.
        env: String,
        /// Why.
        source: Box<output::Error>,
    },
    /// Writing an environment failed after others were written.
    #[error("environment {env}: {source}; {}", written_note(written))]
    Partial {
        /// The environment whose write failed.
        env: String,
        /// Environments written before it, in order.
        written: Vec<String>,
        /// Why.
        source: Box<Error>,
    },
    /// Git failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// A selection or setup problem.
    #[error("{0}")]
    Usage(String),
    /// `--env`/`--app`/`--shard` select nothing that exists (a usage
    /// error: exit 2).
    #[error("{0}")]
    Selection(String),
}

fn written_note(written: &[String]) -> String {
    if written.is_empty() {
        "no environment was written".to_string()
    } else {
        format!(
            "environments written before the failure: {}",
            written.join(", ")
        )
    }
}

/// Renders and writes (or checks) every selected environment.
pub fn run(opts: &Options, progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<EnvReport>, Error> {
    run_loaded(opts, env::load(&opts.root)?, progress)
}

/// [`run`] with the environments already loaded from `opts.root` (the CLI
/// loads them first to print their warnings; loading twice cost about a
/// tenth of an unchanged run).
pub(crate) fn run_loaded(
    opts: &Options,
    loaded: env::Loaded,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<EnvReport>, Error> {
    let env::Loaded { mut envs, unlinked } = loaded;
    check_selection(&envs, &opts.selection)?;
    for e in &mut envs {
        apply_override(e, opts.to);
    }
    env::check_distinct_outputs(&envs)?;
    let started = std::time::SystemTime::now();
    let mut jobs = env::plan(&opts.root, &envs, &opts.selection);
    let complete = opts.selection.apps.is_empty() && opts.selection.shard.is_none();
    // An environment with no apps (`apps: []`, or every app removed) is
    // still written when complete: its output is pruned to nothing.
    let mut written: BTreeSet<&str> = {
        let planned: BTreeSet<&str> = jobs.iter().map(|j| j.env.as_str()).collect();
        envs.iter()
            .map(|e| e.name.as_str())
            .filter(|n| planned.contains(n))
            .collect()
    };
    if complete {
        written.extend(envs.iter().map(|e| e.name.as_str()).filter(|n| {
            opts.selection.envs.is_empty() || opts.selection.envs.iter().any(|s| s == n)
        }));
    }
    // Environments whose inputs and output are as their last run left
    // them are reported from its record; nothing of theirs runs. In the
    // others, the apps whose record still holds are taken as they are.
    let settle = settle::Settle::new(opts, &envs, &jobs, &written, complete, started);
    let mut checked = settle
        .as_ref()
        .map(|s| s.check(&unlinked))
        .unwrap_or_default();
    let kept: BTreeSet<(&str, &str)> = checked
        .kept
        .iter()
        .flat_map(|(env, k)| k.apps.iter().map(|a| (env.as_str(), a.app.as_str())))
        .collect();
    jobs.retain(|j| {
        !checked.whole.contains_key(&j.env) && !kept.contains(&(j.env.as_str(), j.app.as_str()))
    });
    written.retain(|n| !checked.whole.contains_key(*n));
    progress(jobs.len());
    if let Some(s) = &settle {
        s.forget(written.iter().copied());
    }
    // The cache's index and the output directories' trees are read at
    // the same time: on an unchanged run they are a fifth of the work, and
    // the renders (cache lookups) wait for both. Each render's files are
    // streamed to its output's staging tree as it finishes (see `sink`);
    // only the counts stay.
    // The trees the records listed and this run found unchanged are not
    // read again.
    let known: BTreeMap<&str, output::Known<'_>> = checked
        .kept
        .iter()
        .map(|(env, k)| {
            let known = output::Known {
                live: k.tree.as_ref(),
                spare: k.spare.as_ref(),
            };
            (env.as_str(), known)
        })
        .collect();
    let (cache, mut sink) = rayon::join(
        || match jobs.is_empty() {
            true => None,
            false => open_cache(opts, &envs),
        },
        || Sink::open(opts, &envs, &written, &known),
    );
    for (env, k) in &checked.kept {
        for a in &k.apps {
            sink.keep(env, &a.app, &a.files);
        }
    }
    let (mut finished, failures) =
        env::render_each_partial(&jobs, cache.as_ref(), &|| progress(0), &|r| {
            let stored = cache.as_ref().and_then(|c| c.take_findings(&r.env, &r.app));
            sink.finish(r, stored)
        });
    // The apps taken as they are join the rendered ones, in plan order
    // (the report lists warnings in it).
    finished.extend(checked.kept.iter().flat_map(|(env, k)| k.finished(env)));
    if !kept.is_empty() {
        let order: BTreeMap<(&str, &str), usize> = envs
            .iter()
            .flat_map(|e| {
                e.apps
                    .iter()
                    .map(move |a| (e.name.as_str(), a.name.as_str()))
            })
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        finished.sort_by_key(|f| order.get(&(f.env.as_str(), f.app.as_str())).copied());
    }
    // The trees the records listed (live and spare), for the records of
    // the spare trees the writes leave.
    let mut listed: BTreeMap<String, ListedTrees> = checked
        .kept
        .iter_mut()
        .map(|(env, k)| (env.clone(), (k.tree.take(), k.spare.take())))
        .collect();
    let inputs = match &settle {
        // The kept apps are not needed any more: their inputs move.
        Some(s) => s.inputs(cache.as_ref(), &jobs, std::mem::take(&mut checked.kept)),
        None => settle::Inputs::default(),
    };
    if let Some(c) = &cache {
        c.finish();
    }
    if !opts.keep_going && !failures.is_empty() {
        return Err(Error::Renders(
            failures.into_iter().map(|f| f.error).collect(),
        ));
    }
    let failed = match opts.keep_going {
        true => set_aside(&mut finished, failures),
        false => {
            guard(&mut finished)?;
            BTreeMap::new()
        }
    };
    let invalid = validate_renders(opts, &envs, &sink, cache.as_ref())?;
    if invalid
        .iter()
        .any(|f| f.severity == validate::Severity::Error)
    {
        return Err(Error::Invalid(invalid));
    }
    let mut by_env: BTreeMap<String, Vec<Finished>> = written
        .iter()
        .map(|n| (n.to_string(), Vec::new()))
        .collect();
    for r in finished {
        by_env.entry(r.env.clone()).or_default().push(r);
    }
    let needs_git = by_env
        .keys()
        .filter_map(|n| envs.iter().find(|e| e.name == *n))
        .any(|e| matches!(e.output, Output::Branch(_)));
    if opts.push && !needs_git {
        return Err(Error::Usage(
            "--push publishes environment branches, but every selected environment \
             writes a directory; add --to branch"
                .into(),
        ));
    }
    let git = if needs_git {
        Some(open_repo(opts, &envs)?)
    } else {
        None
    };
    if let Some(g) = &git {
        prepare_branches(opts, g)?;
    }
    // Every app's files are named (or the layout error raised) here.
    let mut outs = Vec::new();
    for e in &envs {
        if let Some(apps) = by_env.get_mut(e.name.as_str()) {
            let (mut report, out) = prepare_env(opts, e, apps, complete, git.as_ref())?;
            report.failed = failed.get(&e.name).cloned().unwrap_or_default();
            let met = report
                .failed
                .iter()
                .flat_map(|f| f.warnings.iter().cloned());
            report.warnings.extend(met);
            outs.push((report, out));
        }
    }
    let prepared: Vec<_> = envs
        .iter()
        .filter_map(|e| by_env.get(e.name.as_str()).map(|apps| (e, apps.as_slice())))
        .zip(outs)
        .map(|((e, apps), (report, out))| (e, apps, report, out))
        .collect();
    check_shared_targets(opts, &prepared)?;
    // Everything that can be checked is checked for every environment
    // before the first write: no half-written set of environments.
    let mut plans = Vec::new();
    for (e, apps, report, out) in &prepared {
        let t = commit_trailers(opts, &report.failed);
        plans.push(validate_env(
            opts,
            e,
            apps,
            out,
            git.as_ref(),
            &t,
            &mut sink,
        )?);
    }
    let mut reports = Vec::new();
    let mut written = Vec::new();
    let mut done: Vec<String> = Vec::new();
    let mut files_of = BTreeMap::new();
    for ((e, apps, report, out), plan) in prepared.iter().zip(plans) {
        let mut report = report.clone();
        match write_env(opts, e, apps, out, plan, git.as_ref(), &mut report) {
            Ok((for_push, left)) => {
                if let Some((mut left, spare)) = left {
                    // The spare tree: the live tree this run listed, now
                    // set aside, or (nothing switched) as the record says.
                    let (live, before) = listed.remove(&e.name).unwrap_or_default();
                    left.spare = match spare {
                        output::SpareAfter::Listed => live,
                        output::SpareAfter::Untouched => before,
                        output::SpareAfter::Unknown => None,
                    };
                    files_of.insert(e.name.clone(), left);
                }
                if for_push {
                    written.push((reports.len(), *e, out));
                }
                if report.written {
                    done.push(e.name.clone());
                }
                reports.push(report);
            }
            Err(source) => {
                return Err(Error::Partial {
                    env: e.name.clone(),
                    written: done,
                    source: Box::new(source),
                })
            }
        }
    }
    if let (true, Some(g)) = (opts.push, &git) {
        push_branches(opts, g, &by_env, written, &mut reports)?;
    }
    if let Some(s) = &settle {
        s.record_all(&reports, &by_env, &inputs, &files_of);
    }
    reports.extend(checked.whole.into_values());
    let order = |r: &EnvReport| envs.iter().position(|e| e.name == r.env);
    reports.sort_by_key(order);
    Ok(reports)
}

/// The run's render cache (without a secret, none), set up for what the
/// environments read of a hit.
fn open_cache(opts: &Options, envs: &[Environment]) -> Option<env::Cache> {
    opts.cache
        .clone()
        .and_then(|secret| env::Cache::open(&opts.root, secret))
        // Validation reads every field: a hit carries the documents, or
        // the findings stored beside it.
        .map(|c| match opts.validate || envs.iter().any(|e| e.validate) {
            true => c.with_findings(validate::run::findings_tags(
                envs.iter().filter(|e| opts.validate || e.validate),
            )),
            false => c,
        })
        .map(|c| c.with_secrets_unread(secrets_unread(opts, envs)))
}

/// The environments whose guards let Secrets through unread: a cache hit
/// there need not parse its Secrets back (see
/// [`env::Cache::with_secrets_unread`]).
fn secrets_unread(opts: &Options, envs: &[Environment]) -> Vec<String> {
    envs.iter()
        .filter(|e| Guard::of(e, opts.strict).secrets == Secrets::Allow)
        .map(|e| e.name.clone())
        .collect()
}

/// Two environments writing one directory (or one inside the other) or
/// one branch would overwrite each other: refused before anything is
/// written.
fn check_shared_targets(
    opts: &Options,
    prepared: &[(&Environment, &[Finished], EnvReport, EnvOutput)],
) -> Result<(), Error> {
    let mut seen: Vec<(&str, &Output, PathBuf)> = Vec::new();
    for (e, ..) in prepared {
        let full = match &e.output {
            Output::Dir(d) => opts.root.join(d),
            Output::Branch(_) => PathBuf::new(),
        };
        for (other, out, other_full) in &seen {
            let clash = match (&e.output, out) {
                (Output::Dir(_), Output::Dir(_)) => {
                    full.starts_with(other_full) || other_full.starts_with(&full)
                }
                (Output::Branch(a), Output::Branch(b)) => a == b,
                _ => false,
            };
            if clash {
                return Err(Error::Usage(format!(
                    "environments {other} and {} write to the same place ({} and {}); \
                     each environment needs its own output directory or branch; nothing was written",
                    e.name,
                    target_name(out),
                    target_name(&e.output)
                )));
            }
        }
        seen.push((&e.name, &e.output, full));
    }
    Ok(())
}

fn target_name(o: &Output) -> String {
    match o {
        Output::Dir(d) => d.display().to_string(),
        Output::Branch(b) => format!("branch:{b}"),
    }
}

/// With `--push`, fetches the branches' remote copies; then refuses to
/// start if any branch has diverged from its remote copy.
fn prepare_branches(opts: &Options, g: &Git) -> Result<(), Error> {
    let branches: Vec<&Branch> = g.branches.values().collect();
    if opts.push {
        output::fetch_branches(&g.repo, &branches)?;
    }
    for b in branches {
        output::branch_base(&g.repo, b)?;
    }
    Ok(())
}

/// Pushes the written branches, rebuilding commits that lost a race, and
/// records in each report the commit that reached the remote.
fn push_branches(
    opts: &Options,
    g: &Git,
    by_env: &BTreeMap<String, Vec<Finished>>,
    written: Vec<(usize, &Environment, &EnvOutput)>,
    reports: &mut [EnvReport],
) -> Result<(), Error> {
    let who = identity(opts)?;
    let trailers: Vec<_> = written
        .iter()
        .map(|(i, ..)| commit_trailers(opts, &reports[*i].failed))
        .collect();
    let messages: Vec<_> = written
        .iter()
        .zip(&trailers)
        .map(|((_, e, _), trailers)| {
            let names = by_env
                .get(e.name.as_str())
                .map(|apps| apps.iter().map(|r| r.app.clone()).collect())
                .unwrap_or_default();
            message_fn(e, &g.branches[&e.name].name, &g.source, names, trailers)
        })
        .collect();
    let mut pending: Vec<Pending> = written
        .iter()
        .zip(&messages)
        .map(|((_, e, out), message)| Pending {
            branch: &g.branches[&e.name],
            out,
            message,
            rebuilt: None,
            result: None,
        })
        .collect();
    let notes_rejected = output::push_branches(&g.repo, &mut pending, &who)?;
    for ((i, ..), p) in written.iter().zip(pending) {
        let r = &mut reports[*i];
        if let Some(w) = p.rebuilt {
            // Rebuilt on what another writer pushed first.
            r.commit = w.commit.map(|c| c.to_string());
            r.changed_files = w.changed_files;
        }
        let (Some(rb), Some(result)) = (&p.branch.remote, p.result) else {
            continue;
        };
        if let Some(n) = notes_rejected.iter().find(|n| n.remote == rb.remote) {
            r.notices.push(format!(
                "{} was rejected by {} ({}){}",
                output::NOTES_REF,
                n.remote,
                n.rejection.reason,
                n.rejection
                    .remote
                    .iter()
                    .map(|l| format!("\n  remote: {l}"))
                    .collect::<String>()
            ));
        }
        let rejected = matches!(result, output::PushResult::Rejected(_));
        r.pushed = (!rejected).then(|| rb.remote.clone());
        r.push = Some(EnvPush {
            remote: rb.remote.clone(),
            result,
        });
    }
    Ok(())
}

/// A branch commit's extra trailers: the run's (`Hydrate-Promotion`), then
/// one [`KEPT_TRAILER`] per app whose previous tree it keeps.
fn commit_trailers(opts: &Options, failed: &[FailedApp]) -> Vec<(String, String)> {
    let kept = failed.iter().map(|f| {
        let why = format!("{} (render failed; previous output kept)", f.app);
        (KEPT_TRAILER.to_string(), why)
    });
    opts.trailers.iter().cloned().chain(kept).collect()
}

/// `keep_going`'s sorting: the apps that failed to render, that a guard
/// refused, or whose files cannot be named are taken out of `finished`
/// (so that their previous output stays), by environment, in app order.
/// The failed builds' warnings are the report's warnings too.
fn set_aside(
    finished: &mut Vec<Finished>,
    failures: Vec<env::AppFailure>,
) -> BTreeMap<String, Vec<FailedApp>> {
    let mut failed: BTreeMap<String, Vec<FailedApp>> = BTreeMap::new();
    for f in failures {
        failed.entry(f.env).or_default().push(FailedApp {
            app: f.app,
            error: f.error.to_string(),
            warnings: f.error.warnings().to_vec(),
        });
    }
    let mut kept = Vec::with_capacity(finished.len());
    for r in finished.drain(..) {
        let error = match (&r.files, r.refused.as_slice()) {
            (Ok(_), []) => {
                kept.push(r);
                continue;
            }
            (_, [first, ..]) => first.to_string(),
            (Err(e), []) => format!("{}/{}: {e}", r.env, r.app),
        };
        failed.entry(r.env).or_default().push(FailedApp {
            app: r.app,
            error,
            warnings: r.warnings,
        });
    }
    *finished = kept;
    for apps in failed.values_mut() {
        apps.sort_by(|a, b| a.app.cmp(&b.app));
    }
    failed
}

/// The secret and determinism guards' refusals ([`env::guard`], applied
/// to each render as it finished, as it will be written): every one is
/// reported.
fn guard(finished: &mut [Finished]) -> Result<(), Error> {
    let refused: Vec<env::Error> = finished
        .iter_mut()
        .flat_map(|r| std::mem::take(&mut r.refused))
        .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Error::Renders(refused))
    }
}

/// The second pass of validation over what the renders' first passes kept:
/// custom resources against the CRDs rendered in this run and the
/// validated environments' `crds:` files; findings located in their files.
fn validate_renders(
    opts: &Options,
    envs: &[Environment],
    sink: &Sink,
    cache: Option<&env::Cache>,
) -> Result<Vec<validate::Finding>, Error> {
    if let Some(e) = validate::run::lock(&sink.failed).pop() {
        return Err(e.into());
    }
    let mut pending = std::mem::take(&mut *validate::run::lock(&sink.pending));
    if let Some(c) = cache {
        pending.store(&opts.root, envs, c);
    }
    if pending.objects == 0 {
        return Ok(Vec::new());
    }
    let validated: Vec<Environment> = envs
        .iter()
        .filter(|e| opts.validate || e.validate)
        .cloned()
        .collect();
    let extra = validate::run::crd_files(&opts.root, &validated, &opts.selection)?;
    let mut findings = sink.validator.finish(pending, &extra)?;
    validate::locate(&opts.root, envs, &mut findings);
    Ok(findings)
}

fn check_selection(envs: &[Environment], sel: &Selection) -> Result<(), Error> {
    if let Some(problem) = env::unknown_selection(envs, sel) {
        return Err(Error::Selection(problem));
    }
    if let Some((i, n)) = sel.shard {
        check_shard(i, n).map_err(|e| Error::Selection(format!("--shard {i}/{n}: {e}")))?;
    }
    Ok(())
}

/// A shard `i/n` is 1-based: `1 <= i <= n`.
pub(crate) fn check_shard(i: u32, n: u32) -> Result<(), String> {
    if n == 0 || i == 0 || i > n {
        return Err("expected 1 <= i <= n".into());
    }
    Ok(())
}

/// `--to` applied to one environment's configured output.
pub(crate) fn apply_override(e: &mut Environment, to: Option<OutputKind>) {
    match (to, &e.output) {
        (Some(OutputKind::Dir), Output::Branch(_)) => {
            e.output = Output::Dir(Path::new("rendered").join(&e.name));
        }
        (Some(OutputKind::Branch), Output::Dir(_)) => {
            e.output = Output::Branch(format!("env/{}", e.name))
        }
        _ => {}
    }
}

struct Git {
    repo: Repo,
    source: SourceCommit,
    /// The `origin` remote's URL, for `hydrator.metadata`.
    origin_url: Option<String>,
    /// Environment name → its branch (with `--next`, `<branch>-next`
    /// starting from `<branch>`).
    branches: BTreeMap<String, Branch>,
}

fn open_repo(opts: &Options, envs: &[Environment]) -> Result<Git, Error> {
    let repo = Repo::discover(&opts.root)?;
    let source = repo.head_commit()?.ok_or_else(|| {
        Error::Usage("branch output needs a source commit, but HEAD has none yet".into())
    })?;
    let remote = opts.remote.as_deref();
    let checked_out = repo.checked_out_branches();
    let mut branches = BTreeMap::new();
    for e in envs {
        let Output::Branch(name) = &e.output else {
            continue;
        };
        let written = if opts.next {
            format!("{name}-next")
        } else {
            name.clone()
        };
        if let Some((_, dir)) = checked_out.iter().find(|(b, _)| *b == written) {
            let here = if repo.workdir().is_some_and(|w| same_dir(dir, &w)) {
                "here".to_string()
            } else {
                format!("in the worktree at {}", dir.display())
            };
            let conventional = format!("env/{}", e.name);
            let hint = if written == conventional {
                "switch that checkout to another branch first".to_string()
            } else {
                format!("use e.g. `{conventional}`")
            };
            return Err(Error::Env(env::Error::Config {
                path: e.file.clone(),
                line: e.output_line.max(1),
                message: format!(
                    "environment `{}` writes branch `{written}`, which is checked out {here}; \
                     hydrate never moves a checked-out branch ({hint})",
                    e.name
                ),
            }));
        }
        let b = if opts.next {
            let mut next = Branch::locate(&repo, &format!("{name}-next"), remote)?;
            next.starts_from = Some(Box::new(Branch::locate(&repo, name, remote)?));
            next
        } else {
            Branch::locate(&repo, name, remote)?
        };
        branches.insert(e.name.clone(), b);
    }
    Ok(Git {
        origin_url: repo.remote_url("origin")?,
        repo,
        source,
        branches,
    })
}

/// Whether two directories are the same one (both canonicalized; paths
/// that cannot be resolved are compared as given).
fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

fn identity(opts: &Options) -> Result<Identity, Error> {
    opts.identity
        .clone()
        .ok_or_else(|| Error::Usage("branch output needs a commit identity".into()))
}

/// The commit message of environment `e`, given the apps that changed.
fn message_fn<'a>(
    e: &'a Environment,
    branch: &'a str,
    source: &'a SourceCommit,
    names: Vec<String>,
    trailers: &'a [(String, String)],
) -> impl Fn(&BTreeSet<String>) -> Result<String, output::Error> + 'a {
    let template = e
        .commit_message
        .as_deref()
        .unwrap_or(output::DEFAULT_TEMPLATE);
    move |changed: &BTreeSet<String>| {
        output::commit_message(
            template,
            &MessageContext {
                env: &e.name,
                branch,
                source,
                apps: &names,
                changed_apps: changed,
                trailers,
            },
        )
        .map_err(|err| match (err, e.commit_message_line) {
            (output::Error::Template(m), line) if line > 0 => output::Error::Template(format!(
                "{}:{line}: environment `{}`: {m}",
                e.file.display(),
                e.name
            )),
            (output::Error::Template(m), _) => {
                output::Error::Template(format!("commit message of environment `{}`: {m}", e.name))
            }
            (other, _) => other,
        })
    }
}

/// Environment `e`'s files and its report before writing.
fn prepare_env(
    opts: &Options,
    e: &Environment,
    apps: &mut [Finished],
    complete: bool,
    git: Option<&Git>,
) -> Result<(EnvReport, EnvOutput), Error> {
    let hydration = git.map(|g| (&g.source, g.origin_url.as_deref()));
    let out = env_output(&opts.root, e, apps, complete, hydration)?;
    let target = match (&e.output, git) {
        (Output::Dir(dir), _) => dir.display().to_string(),
        (Output::Branch(_), Some(g)) => match g.branches.get(&e.name) {
            Some(b) => format!("branch:{}", b.name),
            None => String::new(),
        },
        (Output::Branch(_), None) => String::new(),
    };
    let report = EnvReport::before_writing(
        &e.name,
        target,
        [
            apps.len(),
            apps.iter().map(|r| r.resources).sum(),
            apps.iter().map(|r| r.bytes).sum(),
        ],
        apps.iter().flat_map(|r| r.warnings.clone()).collect(),
    );
    Ok((report, out))
}

/// Environment `e`'s output files (its apps' files taken from `apps`); for
/// a branch, with `hydration` (the source commit rendered and the `origin`
/// URL), Argo CD's `hydrator.metadata` files, the READMEs and the note.
fn env_output(
    root: &Path,
    e: &Environment,
    apps: &mut [Finished],
    complete: bool,
    hydration: Option<(&SourceCommit, Option<&str>)>,
) -> Result<EnvOutput, Error> {
    let mut out = EnvOutput {
        env: e.name.clone(),
        apps: BTreeMap::new(),
        known_apps: e.apps.iter().map(|a| a.name.clone()).collect(),
        complete,
        root_metadata: None,
        attributes: None,
        note: None,
    };
    let metadata = match (&e.output, hydration) {
        (Output::Branch(_), Some((source, origin_url))) => {
            let url = e.repo_url.as_deref().or(origin_url);
            let m = output::Metadata::of_source(source, url);
            out.root_metadata = Some(m.to_bytes());
            out.note = Some(output::note(&source.sha));
            if e.readme.is_some() {
                out.attributes = Some(output::GITATTRIBUTES.as_bytes().to_vec());
            }
            Some(m)
        }
        _ => None,
    };
    let readme = match (&e.readme, &metadata) {
        (Some(env::Readme::Default), Some(_)) => Some(output::DEFAULT_README.to_string()),
        (Some(env::Readme::Template(p)), Some(_)) => {
            let path = root.join(p);
            Some(std::fs::read_to_string(&path).map_err(|err| {
                Error::Usage(format!("{}: readme template: {err}", path.display()))
            })?)
        }
        _ => None,
    };
    for r in apps.iter_mut() {
        let mut files = std::mem::replace(&mut r.files, Ok(BTreeMap::new()))?;
        if let Some(m) = &metadata {
            // Argo CD's per-path file: how to render this path again.
            let app = output::Metadata {
                commands: vec![format!("hydrate render --env {} --app {}", e.name, r.app)],
                ..m.clone()
            };
            files.insert(format!("{}/{}", r.app, output::METADATA), app.to_bytes());
            if let Some(t) = &readme {
                let bytes = output::readme(t, &app, &e.name, &r.app)?;
                files.insert(format!("{}/{}", r.app, output::README), bytes);
            }
        }
        out.apps.insert(r.app.clone(), files);
    }
    Ok(out)
}

/// Checks everything about writing `out` that can be checked without
/// writing: the directory's path and contents (returning its plan), or the
/// branch's name and commit message template.
fn validate_env(
    opts: &Options,
    e: &Environment,
    apps: &[Finished],
    out: &EnvOutput,
    git: Option<&Git>,
    trailers: &[(String, String)],
    sink: &mut Sink,
) -> Result<Option<output::DirPlan>, Error> {
    let in_env = |source| Error::InEnv {
        env: e.name.clone(),
        source: Box::new(source),
    };
    match (&e.output, git) {
        (Output::Dir(_), _) => match sink.take(&e.name) {
            Some(stage) => stage
                .and_then(|s| output::finish_dir(s, out.complete, &out.known_apps))
                .map(Some)
                .map_err(in_env),
            None => Err(Error::Usage(format!(
                "environment {}: its output was not staged",
                e.name
            ))),
        },
        (Output::Branch(_), Some(g)) => {
            let b = g.branches.get(&e.name).ok_or_else(|| {
                Error::Usage(format!("no branch located for environment {}", e.name))
            })?;
            output::validate_branch(b).map_err(in_env)?;
            if !opts.check {
                let names: Vec<String> = apps.iter().map(|r| r.app.clone()).collect();
                let all: BTreeSet<String> = names.iter().cloned().collect();
                // The template's error already names the environment, file and line.
                message_fn(e, &b.name, &g.source, names, trailers)(&all)?;
            }
            Ok(None)
        }
        (Output::Branch(_), None) => {
            Err(Error::Usage("branch output needs a git repository".into()))
        }
    }
}

/// An environment's live and spare trees as its record listed them.
type ListedTrees = (Option<env::cache::Listing>, Option<env::cache::Listing>);

/// Writes (or with `--check`, compares) environment `e`, whose plan was
/// validated; returns whether its branch is kept for `--push`, and what a
/// directory write left (its spare tree not filled in) and what it did to
/// the spare tree.
fn write_env(
    opts: &Options,
    e: &Environment,
    apps: &[Finished],
    out: &EnvOutput,
    plan: Option<output::DirPlan>,
    git: Option<&Git>,
    report: &mut EnvReport,
) -> Result<(bool, Option<(settle::DirLeft, output::SpareAfter)>), Error> {
    match (&e.output, git, plan) {
        (Output::Dir(_), _, Some(plan)) => {
            if opts.check {
                report.check = Some(plan.check());
                return Ok((false, None));
            }
            let w = plan.apply()?;
            report.written = !w.changed.is_empty();
            report.changed_files = w.changed;
            report.notices = w.warnings;
            let left = settle::DirLeft {
                files: w.files,
                tree: w.tree,
                spare: None,
            };
            Ok((false, Some((left, w.spare))))
        }
        (Output::Branch(_), Some(g), _) => {
            let b = g.branches.get(&e.name).ok_or_else(|| {
                Error::Usage(format!("no branch located for environment {}", e.name))
            })?;
            if opts.check {
                report.check = Some(output::check_branch(&g.repo, b, out)?);
                return Ok((false, None));
            }
            let who = identity(opts)?;
            let names: Vec<String> = apps.iter().map(|r| r.app.clone()).collect();
            let trailers = commit_trailers(opts, &report.failed);
            let message = message_fn(e, &b.name, &g.source, names, &trailers);
            let w = output::write_branch(&g.repo, b, Start::Tip, out, &message, &who)?;
            report.changed_files = w.changed_files;
            report.commit = w.commit.map(|c| c.to_string());
            report.written = report.commit.is_some();
            // Kept for --push, which may rebuild the commit on a newer remote tip.
            Ok((true, None))
        }
        _ => Err(Error::Usage(format!(
            "environment {}: its output was not planned",
            e.name
        ))),
    }
}

/// The (environment, app) pairs whose inputs changed between `since` and
/// HEAD: a pair is affected when a file its render read changed, or its
/// environment file changed. Computed from what each render actually read.
pub(crate) fn affected(root: &Path, since: &str) -> Result<Vec<(String, String)>, Error> {
    let repo = Repo::discover(root)?;
    let from = repo.resolve(since)?;
    let to = repo.resolve("HEAD")?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("affected needs a repository with a working tree".into()))?;
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    let changed: BTreeSet<PathBuf> = repo
        .changed_paths(from, to)?
        .into_iter()
        .map(|p| workdir.join(p))
        .collect();
    let envs = env::load_environments(root)?;
    let jobs = env::plan(root, &envs, &Selection::default());
    let rendered = env::render_all(&jobs, &|| {}).map_err(Error::Renders)?;
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = Vec::new();
    for r in &rendered {
        let env_file = envs
            .iter()
            .find(|e| e.name == r.env)
            .map(|e| canon(&e.file));
        let hit = env_file.is_some_and(|f| changed.contains(&f))
            || r.files_read.iter().any(|f| changed.contains(&canon(f)));
        if hit {
            out.push((r.env.clone(), r.app.clone()));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_names_the_environments_written_before_it() {
        let e = Error::Partial {
            env: "prod".into(),
            written: vec!["dev".into(), "staging".into()],
            source: Box::new(Error::Usage("boom".into())),
        };
        assert_eq!(
            e.to_string(),
            "environment prod: boom; environments written before the failure: dev, staging"
        );
        let e = Error::Partial {
            env: "dev".into(),
            written: Vec::new(),
            source: Box::new(Error::Usage("boom".into())),
        };
        assert_eq!(
            e.to_string(),
            "environment dev: boom; no environment was written"
        );
    }
}
