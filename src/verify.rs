//! `hydrate verify`: proves that an environment branch holds exactly what
//! hydrate renders from the source commit it names. For each branch, the
//! newest commit on its first-parent line with a `Hydrate-Source` trailer
//! (the tip itself unless someone committed on top by hand) names the
//! source commit; that commit's files are exported from git (as
//! `diff --since` does, never checked out), the environment as it was
//! defined there is rendered, and what a branch write would change on the
//! tip (`output::planned_branch_files`) must be nothing, with no file there
//! that hydrate does not write. Each file that differs is named with the
//! commit that last changed it on the branch, and whether hydrate made
//! that commit (its `Hydrate-Version`) or someone did by hand.
//!
//! It checks branches: a directory output is committed with its sources,
//! and `hydrate render --check` compares it. It writes nothing outside its
//! temporary directory and touches no ref, index or working tree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::Oid;

use crate::env::{self, Environment, Output};
use crate::git::{Export, Repo};
use crate::output::{self, Branch, LEGACY_OWNED_PATH, METADATA, OWNED_PATH};
use crate::render::{self, OutputKind};

/// How far back a branch's history is searched for a commit hydrate made.
const MAX_WALK: usize = 10_000;

/// What to verify.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Repository root (holds `environments/`).
    pub root: PathBuf,
    /// Only these environments (all that write a branch when empty).
    pub envs: Vec<String>,
    /// `--to branch`: verify `env/<env>` for environments configured with a
    /// directory (as `render --to branch` writes them).
    pub to: Option<OutputKind>,
    /// The remote whose copy of each branch counts (default: the branch's
    /// upstream, else `origin`).
    pub remote: Option<String>,
}

/// Why nothing could be verified.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] env::Error),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// The request does not make sense.
    #[error("{0}")]
    Usage(String),
}

/// One environment's result.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The environment.
    pub env: String,
    /// Its branch.
    pub branch: String,
    /// The commit verified (the branch's tip), once found.
    pub tip: Option<String>,
    /// The source commit rendered (`Hydrate-Source`), once found.
    pub source: Option<String>,
    /// The commit that named it (the tip, or the newest hydrate commit
    /// below commits made by hand).
    pub hydrated_by: Option<Commit>,
    /// What was found.
    pub outcome: Outcome,
}

/// What verifying one branch found.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The tip holds exactly the render.
    Identical,
    /// These files differ from the render.
    Differs(Vec<Difference>),
    /// The branch could not be verified (exit 2).
    Failed(String),
}

/// A file of the branch that differs from the render.
#[derive(Clone, Debug)]
pub struct Difference {
    /// Its path on the branch.
    pub path: String,
    /// How it differs.
    pub change: Change,
    /// The commit that last changed it on the branch (`None`: it never
    /// existed there).
    pub commit: Option<Commit>,
}

/// How a file differs from the render.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Its content is not what the render gives.
    Changed,
    /// The render has it, the branch does not.
    Missing,
    /// hydrate wrote it earlier and the render no longer has it.
    Extra,
    /// hydrate never writes it (added by hand).
    Unexpected,
}

impl Change {
    /// The word for it in reports.
    pub fn name(self) -> &'static str {
        match self {
            Change::Changed => "changed",
            Change::Missing => "missing",
            Change::Extra => "extra",
            Change::Unexpected => "unexpected",
        }
    }
}

/// A commit on the branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// Full sha.
    pub sha: String,
    /// First line of the message.
    pub subject: String,
    /// `Name <email>`.
    pub author: String,
    /// Its `Hydrate-Version` trailer: the hydrate version that made it;
    /// `None` for a commit made by hand.
    pub version: Option<String>,
}

impl Commit {
    fn of(repo: &Repo, id: Oid) -> Result<Commit, crate::git::Error> {
        let e = repo.commit_entry(id)?;
        Ok(Commit {
            version: e.trailer("Hydrate-Version").map(str::to_string),
            sha: e.sha,
            subject: e.subject,
            author: e.author,
        })
    }

    /// Who made it, for reports: `a hand edit (no Hydrate-Version trailer)`,
    /// `hydrate 0.0.9, which renders differently from 0.1.0`, or
    /// `hydrate 0.1.0 (this version)`.
    pub fn made_by(&self) -> String {
        let this = env!("CARGO_PKG_VERSION");
        match &self.version {
            None => "a hand edit (no Hydrate-Version trailer)".to_string(),
            Some(v) if v == this => format!("hydrate {v} (this version)"),
            Some(v) => format!("hydrate {v}, which renders differently from {this}"),
        }
    }
}

impl Verdict {}

/// Verifies each selected environment's branch.
pub fn run(opts: &Options) -> Result<Vec<Verdict>, Error> {
    let mut envs = env::load_environments(&opts.root)?;
    for e in &mut envs {
        render::apply_override(e, opts.to);
    }
    for wanted in &opts.envs {
        let Some(e) = envs.iter().find(|e| &e.name == wanted) else {
            let known: Vec<&str> = envs.iter().map(|e| e.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "no environment named `{wanted}` (environments: {})",
                known.join(", ")
            )));
        };
        if let Output::Dir(d) = &e.output {
            return Err(Error::Usage(format!(
                "environment `{wanted}` writes the directory {}: `hydrate verify` checks \
                 environment branches (`--to branch` checks env/{wanted}; \
                 `hydrate render --check` compares a directory)",
                d.display()
            )));
        }
    }
    let selected: Vec<&Environment> = envs
        .iter()
        .filter(|e| opts.envs.is_empty() || opts.envs.contains(&e.name))
        .filter(|e| matches!(e.output, Output::Branch(_)))
        .collect();
    if selected.is_empty() {
        return Err(Error::Usage(
            "no environment writes a branch: `hydrate verify` checks environment branches \
             (add `--to branch` to check env/<env>)"
                .into(),
        ));
    }
    let repo = Repo::discover(&opts.root)?;
    let root_rel = root_in_workdir(&repo, &opts.root)?;
    let mut out = Vec::new();
    for e in selected {
        out.push(verify_env(&repo, &root_rel, e, opts)?);
    }
    Ok(out)
}

/// `root` relative to the repository's working directory.
fn root_in_workdir(repo: &Repo, root: &Path) -> Result<PathBuf, Error> {
    let workdir = repo.workdir().ok_or_else(|| {
        Error::Usage("hydrate verify needs a repository with a working tree".into())
    })?;
    let canon = |p: &Path| {
        std::fs::canonicalize(p).map_err(|e| Error::Usage(format!("{}: {e}", p.display())))
    };
    canon(root)?
        .strip_prefix(canon(&workdir)?)
        .map(Path::to_path_buf)
        .map_err(|_| Error::Usage(format!("{} is outside the repository", root.display())))
}

/// One environment's verdict; a problem with its branch or its source is
/// its verdict's failure, not the run's.
fn verify_env(
    repo: &Repo,
    root_rel: &Path,
    e: &Environment,
    opts: &Options,
) -> Result<Verdict, Error> {
    let Output::Branch(name) = &e.output else {
        return Err(Error::Usage(format!("{} writes no branch", e.name)));
    };
    let mut v = Verdict {
        env: e.name.clone(),
        branch: name.clone(),
        tip: None,
        source: None,
        hydrated_by: None,
        outcome: Outcome::Identical,
    };
    if let Err(why) = compare(repo, root_rel, e, opts, &mut v) {
        v.outcome = Outcome::Failed(why);
    }
    Ok(v)
}

/// Fills `v`: the tip, its source, and how the tip differs from the render.
fn compare(
    repo: &Repo,
    root_rel: &Path,
    e: &Environment,
    opts: &Options,
    v: &mut Verdict,
) -> Result<(), String> {
    let b = Branch::locate(repo, &v.branch, opts.remote.as_deref()).map_err(|e| e.to_string())?;
    let tip = output::branch_tip(repo, &b).map_err(|e| e.to_string())?;
    let Some(tip) = tip else {
        let remote = b.remote.as_ref().map_or(String::new(), |r| {
            format!(" (nor {}/{})", r.remote, v.branch)
        });
        return Err(format!(
            "branch {} does not exist here{remote}: render with `--to branch` first, \
             or fetch it",
            v.branch
        ));
    };
    v.tip = Some(tip.to_string());
    let (hydrated, source) = hydrate_commit(repo, tip, &v.branch)?;
    v.source = Some(source.clone());
    v.hydrated_by = Some(Commit::of(repo, hydrated).map_err(|e| e.to_string())?);
    let source_id = resolve_source(repo, &source, hydrated)?;
    let out = render_at(repo, root_rel, e, source_id, &v.branch)?;
    let diffs = differences(repo, tip, &out).map_err(|e| e.to_string())?;
    if !diffs.is_empty() {
        v.outcome = Outcome::Differs(diffs);
    }
    Ok(())
}

/// The newest commit on `tip`'s first-parent line that names its source
/// commit (`Hydrate-Source`), and that source.
fn hydrate_commit(repo: &Repo, tip: Oid, branch: &str) -> Result<(Oid, String), String> {
    let mut at = Some(tip);
    let mut walked = 0;
    while let Some(c) = at {
        let Ok(entry) = repo.commit_entry(c) else {
            // The history ends here (a shallow clone).
            break;
        };
        if let Some(s) = entry.trailer("Hydrate-Source") {
            return Ok((c, s.to_string()));
        }
        walked += 1;
        if walked >= MAX_WALK {
            break;
        }
        at = repo.parent_of(c).ok().flatten();
    }
    Err(format!(
        "no commit on {branch} (tip {tip}) names its source commit with a Hydrate-Source \
         trailer: it was not written by hydrate"
    ))
}

/// The source commit's id; when it is not here, what to fetch.
fn resolve_source(repo: &Repo, source: &str, named_by: Oid) -> Result<Oid, String> {
    match repo.resolve(source) {
        Ok(id) => Ok(id),
        Err(crate::git::Error::Shallow { .. }) => Err(format!(
            "source commit {source} (Hydrate-Source of {named_by}) is not in this shallow \
             clone; fetch more history (git fetch --unshallow, or fetch-depth: 0)"
        )),
        Err(_) => Err(format!(
            "source commit {source} (Hydrate-Source of {named_by}) is not in this \
             repository; fetch it (git fetch origin {source}, or the branch that has it)"
        )),
    }
}

/// Environment `e` as defined at commit `source`, rendered from that
/// commit's files as a write to `branch` would commit it.
fn render_at(
    repo: &Repo,
    root_rel: &Path,
    e: &Environment,
    source: Oid,
    branch: &str,
) -> Result<crate::output::EnvOutput, String> {
    let at = |why: String| format!("at {source}: {why}");
    let export: Export = repo
        .export(source, &env::reach::may_defer)
        .map_err(|e| at(e.to_string()))?;
    let root = export.dir().join(root_rel);
    let fill = |p: &Path| export.fill(repo, p);
    fill(&root.join("environments")).map_err(|e| at(e.to_string()))?;
    let envs = env::load_environments(&root).map_err(|e| at(e.to_string()))?;
    let Some(mut then) = envs.into_iter().find(|x| x.name == e.name) else {
        return Err(at(format!("no environment named `{}`", e.name)));
    };
    then.output = Output::Branch(branch.to_string());
    env::reach::inputs(&root, std::slice::from_ref(&then), &mut |p| fill(p))
        .map_err(|e| at(e.to_string()))?;
    let commit = repo.source_commit(source).map_err(|e| e.to_string())?;
    let origin = repo.remote_url("origin").map_err(|e| e.to_string())?;
    render::branch_output(&root, &then, &commit, origin.as_deref()).map_err(|e| match e {
        render::Error::Renders(errs) => at(errs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")),
        other => at(other.to_string()),
    })
}

/// The files of `tip` that differ from `out` as a write would commit it,
/// each with the commit that last changed it.
fn differences(
    repo: &Repo,
    tip: Oid,
    out: &crate::output::EnvOutput,
) -> Result<Vec<Difference>, crate::git::Error> {
    let planned = output::planned_branch_files(repo, Some(tip), out).map_err(|e| match e {
        crate::output::Error::Git(g) => g,
        other => crate::git::Error::Usage(other.to_string()),
    })?;
    let mut found: Vec<(String, Change)> = Vec::new();
    for (path, want) in &planned {
        let have = repo.file_at(tip, path)?;
        let change = match (&have, want) {
            (Some(a), Some(b)) if a != b => Change::Changed,
            (None, Some(_)) => Change::Missing,
            (Some(_), None) => Change::Extra,
            _ => continue,
        };
        found.push((path.clone(), change));
    }
    // Files a write leaves alone but never makes.
    let mut made: BTreeSet<&str> = planned.keys().map(String::as_str).collect();
    made.extend(out.apps.values().flat_map(|f| f.keys().map(String::as_str)));
    made.extend([METADATA, OWNED_PATH, LEGACY_OWNED_PATH]);
    if out.attributes.is_some() {
        made.insert(".gitattributes");
    }
    for path in repo.paths_at(tip)? {
        if !made.contains(path.as_str()) {
            found.push((path, Change::Unexpected));
        }
    }
    found.sort();
    let mut diffs = Vec::new();
    for (path, change) in found {
        let commit = match repo.last_change(tip, &path)? {
            Some(id) => Some(Commit::of(repo, id)?),
            None => None,
        };
        diffs.push(Difference {
            path,
            change,
            commit,
        });
    }
    Ok(diffs)
}
