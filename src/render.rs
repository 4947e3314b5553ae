//! The render-and-write step behind `hydrate render`: plan, render every
//! (environment, app) in parallel, then write (or `--check`) each
//! environment's output — a directory or an environment branch. Nothing is
//! written unless every render succeeded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::env::{self, Environment, Output, Rendered, Selection};
use crate::git::{Identity, Repo, SourceCommit};
use crate::output::{self, app_files, CheckReport, EnvOutput, MessageContext};

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
    /// Extra trailers for branch commits (`Hydrate-Promotion`).
    pub trailers: Vec<(String, String)>,
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
    /// The commit made, if any.
    pub commit: Option<String>,
    /// With `check`: how the output differs.
    pub check: Option<CheckReport>,
    /// Deprecation warnings, as `app: warning`.
    pub warnings: Vec<String>,
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
    /// Git failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// A selection or setup problem.
    #[error("{0}")]
    Usage(String),
}

/// Renders and writes (or checks) every selected environment.
pub fn run(opts: &Options, progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<EnvReport>, Error> {
    let mut envs = env::load_environments(&opts.root)?;
    check_selection(&envs, &opts.selection)?;
    for e in &mut envs {
        apply_override(e, opts.to, opts.next);
    }
    let jobs = env::plan(&opts.root, &envs, &opts.selection);
    progress(jobs.len());
    let rendered = env::render_all(&jobs, &|| progress(0)).map_err(Error::Renders)?;
    let mut by_env: BTreeMap<&str, Vec<&Rendered>> = BTreeMap::new();
    for r in &rendered {
        by_env.entry(r.env.as_str()).or_default().push(r);
    }
    let needs_git = by_env
        .keys()
        .filter_map(|n| envs.iter().find(|e| e.name == *n))
        .any(|e| matches!(e.output, Output::Branch(_)));
    let git = if needs_git {
        Some(open_repo(&opts.root)?)
    } else {
        None
    };
    let mut reports = Vec::new();
    for e in &envs {
        let Some(apps) = by_env.get(e.name.as_str()) else {
            continue;
        };
        let complete = opts.selection.apps.is_empty() && opts.selection.shard.is_none();
        reports.push(write_env(opts, e, apps, complete, git.as_ref())?);
    }
    Ok(reports)
}

fn check_selection(envs: &[Environment], sel: &Selection) -> Result<(), Error> {
    for wanted in &sel.envs {
        if !envs.iter().any(|e| &e.name == wanted) {
            return Err(Error::Usage(format!("no environment named `{wanted}`")));
        }
    }
    for wanted in &sel.apps {
        if !envs
            .iter()
            .any(|e| e.apps.iter().any(|a| &a.name == wanted))
        {
            return Err(Error::Usage(format!(
                "no app named `{wanted}` in any environment"
            )));
        }
    }
    if let Some((i, n)) = sel.shard {
        if n == 0 || i == 0 || i > n {
            return Err(Error::Usage(format!(
                "--shard {i}/{n}: expected i/n with 1 <= i <= n"
            )));
        }
    }
    Ok(())
}

/// `--to` and `--next` applied to one environment's configured output.
fn apply_override(e: &mut Environment, to: Option<OutputKind>, next: bool) {
    match (to, &e.output) {
        (Some(OutputKind::Dir), Output::Branch(_)) => {
            e.output = Output::Dir(Path::new("rendered").join(&e.name));
        }
        (Some(OutputKind::Branch), Output::Dir(_)) => {
            e.output = Output::Branch(format!("env/{}", e.name))
        }
        _ => {}
    }
    if next {
        if let Output::Branch(b) = &e.output {
            e.output = Output::Branch(format!("{b}-next"));
        }
    }
}

struct Git {
    repo: Repo,
    source: SourceCommit,
}

fn open_repo(root: &Path) -> Result<Git, Error> {
    let repo = Repo::discover(root)?;
    let source = repo.head_commit()?.ok_or_else(|| {
        Error::Usage("branch output needs a source commit, but HEAD has none yet".into())
    })?;
    Ok(Git { repo, source })
}

fn write_env(
    opts: &Options,
    e: &Environment,
    apps: &[&Rendered],
    complete: bool,
    git: Option<&Git>,
) -> Result<EnvReport, Error> {
    let mut out = EnvOutput {
        env: e.name.clone(),
        apps: BTreeMap::new(),
        known_apps: e.apps.iter().map(|a| a.name.clone()).collect(),
        complete,
    };
    for r in apps {
        let mut files = app_files(r, e.layout);
        if let (Output::Branch(_), Some(g)) = (&e.output, git) {
            files.insert(
                format!("{}/{}", r.app, output::branch::METADATA),
                output::hydrator_metadata(&g.source),
            );
        }
        out.apps.insert(r.app.clone(), files);
    }
    let mut report = EnvReport {
        env: e.name.clone(),
        target: String::new(),
        apps: apps.len(),
        resources: apps.iter().map(|r| r.documents.len()).sum(),
        bytes: apps
            .iter()
            .map(|r| r.documents.iter().map(|d| d.yaml.len()).sum::<usize>())
            .sum(),
        changed_files: Vec::new(),
        commit: None,
        check: None,
        warnings: apps
            .iter()
            .flat_map(|r| r.warnings.iter().map(move |w| format!("{}: {w}", r.app)))
            .collect(),
    };
    match (&e.output, git) {
        (Output::Dir(dir), _) => {
            let root = opts.root.join(dir);
            report.target = dir.display().to_string();
            if opts.check {
                report.check = Some(output::dir::check(&root, &out)?);
            } else {
                report.changed_files = output::dir::write(&root, &out)?;
            }
        }
        (Output::Branch(branch), Some(g)) => {
            let refname = format!("refs/heads/{branch}");
            report.target = format!("branch:{branch}");
            if opts.check {
                report.check = Some(output::branch::check(&g.repo, &refname, &out)?);
                return Ok(report);
            }
            let who = opts
                .identity
                .clone()
                .ok_or_else(|| Error::Usage("branch output needs a commit identity".into()))?;
            let template = e
                .commit_message
                .as_deref()
                .unwrap_or(output::DEFAULT_TEMPLATE);
            let names: Vec<String> = apps.iter().map(|r| r.app.clone()).collect();
            let message = |changed: &BTreeSet<String>| {
                output::commit_message(
                    template,
                    &MessageContext {
                        env: &e.name,
                        branch,
                        source: &g.source,
                        apps: &names,
                        changed_apps: changed,
                        trailers: &opts.trailers,
                    },
                )
            };
            let w = output::branch::write(&g.repo, &refname, &out, &message, &who)?;
            report.changed_files = w.changed_files;
            report.commit = w.commit.map(|c| c.to_string());
        }
        (Output::Branch(_), None) => {
            return Err(Error::Usage("branch output needs a git repository".into()))
        }
    }
    Ok(report)
}

/// The (environment, app) pairs whose inputs changed between `since` and
/// HEAD: a pair is affected when a file its render read changed, or its
/// environment file changed. Computed from what each render actually read.
pub fn affected(root: &Path, since: &str) -> Result<Vec<(String, String)>, Error> {
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
