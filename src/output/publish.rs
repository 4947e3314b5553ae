//! Publishing environment branches to their remote (`render --push`):
//! fetch their remote copies first so commits build on what the remote has,
//! push them with the user's `git`, and when a push is rejected because
//! someone else pushed first (another pipeline, another shard), fetch that
//! branch, rebuild the commit on the new tip from the same rendered output
//! and push again, a bounded number of times. Rejected notes
//! (`refs/notes/hydrator.metadata`) are merged with the remote's the same
//! way. It renders nothing; the
//! commands themselves live in `git::remote`.

use std::collections::{BTreeMap, BTreeSet};

use super::branch::{self, Branch, BranchWrite, Start};
use super::files::EnvOutput;
use super::Error;
use crate::git::remote::{self as cli, PushOutcome};
use crate::git::{Identity, Repo};

/// gitops-promoter's notes ref; pushed along when it exists.
pub const NOTES_REF: &str = "refs/notes/hydrator.metadata";

/// How many times a rejected push is rebuilt and tried again.
const PUSH_ATTEMPTS: u32 = 10;

/// One written environment branch waiting to be pushed.
pub struct Pending<'a> {
    /// The branch.
    pub branch: &'a Branch,
    /// What was rendered for it (rebuilt on a new tip after a rejection).
    pub out: &'a EnvOutput,
    /// Its commit message, given the apps that changed.
    pub message: &'a dyn Fn(&BTreeSet<String>) -> Result<String, Error>,
    /// Set when the commit was rebuilt on a newer remote tip: what that
    /// write did (it replaces the first one).
    pub rebuilt: Option<BranchWrite>,
}

/// The remote of every branch, or an error saying that there is none.
fn remote_of(b: &Branch) -> Result<&super::branch::RemoteBranch, Error> {
    b.remote.as_ref().ok_or_else(|| {
        Error::NoRemote(format!(
            "--push: {} has no remote to push to (no `origin`, no upstream configured); \
             add one with `git remote add origin URL` or pass --remote NAME",
            b.name
        ))
    })
}

/// Fetches the remote copies of `branches` (and of the branches they start
/// from) that exist on their remotes, into their remote-tracking refs. A CI
/// clone often fetched only the source branch, and other jobs may have
/// pushed since it was made.
pub fn fetch(repo: &Repo, branches: &[&Branch]) -> Result<(), Error> {
    for b in branches {
        remote_of(b)?;
    }
    let mut by_remote: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    let with_starts = branches
        .iter()
        .flat_map(|b| std::iter::once(*b).chain(b.starts_from.as_deref()));
    for b in with_starts {
        if let Some(rb) = &b.remote {
            by_remote
                .entry(rb.remote.as_str())
                .or_default()
                .insert(rb.merge.as_str(), rb.tracking.as_str());
        }
    }
    for (remote, refs) in by_remote {
        let names: Vec<String> = refs.keys().map(|r| r.to_string()).collect();
        let existing = cli::ls_remote(repo.git_dir(), remote, &names)?;
        let specs: Vec<String> = refs
            .iter()
            .filter(|(merge, _)| existing.contains_key(**merge))
            .map(|(merge, tracking)| format!("+{merge}:{tracking}"))
            .collect();
        cli::fetch(repo.git_dir(), remote, &specs)?;
    }
    Ok(())
}

/// Pushes every pending branch (and the notes ref, when it exists) to its
/// remote; rebuilds and retries the ones another writer got to first.
pub fn push(repo: &Repo, pending: &mut [Pending], who: &Identity) -> Result<(), Error> {
    let mut by_remote: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in pending.iter().enumerate() {
        by_remote
            .entry(remote_of(p.branch)?.remote.clone())
            .or_default()
            .push(i);
    }
    let notes = repo.ref_target(NOTES_REF)?.is_some();
    for (remote, todo) in by_remote {
        push_to(repo, &remote, pending, todo, notes, who)?;
    }
    Ok(())
}

fn push_to(
    repo: &Repo,
    remote: &str,
    pending: &mut [Pending],
    mut todo: Vec<usize>,
    mut notes: bool,
    who: &Identity,
) -> Result<(), Error> {
    for attempt in 1..=PUSH_ATTEMPTS {
        let mut specs: Vec<(String, String)> = todo
            .iter()
            .filter_map(|&i| {
                let b = pending[i].branch;
                let rb = b.remote.as_ref()?;
                Some((b.local_ref(), rb.merge.clone()))
            })
            .collect();
        if notes {
            specs.push((NOTES_REF.to_string(), NOTES_REF.to_string()));
        }
        let outcomes = cli::push(repo.git_dir(), remote, &specs)?;
        let mut behind = Vec::new();
        for (_, dst) in &specs {
            match outcomes.get(dst) {
                Some(PushOutcome::Accepted) | None => {}
                Some(PushOutcome::Refused(reason)) => {
                    return Err(Error::Push {
                        remote: remote.to_string(),
                        refname: dst.clone(),
                        reason: reason.clone(),
                    })
                }
                Some(PushOutcome::Behind(reason)) => behind.push((dst.clone(), reason.clone())),
            }
        }
        if let Some((dst, reason)) = behind.first().filter(|_| attempt == PUSH_ATTEMPTS) {
            return Err(Error::Push {
                remote: remote.to_string(),
                refname: dst.clone(),
                reason: format!(
                    "{reason}; still rejected after {PUSH_ATTEMPTS} attempts, \
                     each fetching the remote tip and rebuilding the commit on it"
                ),
            });
        }
        if behind.is_empty() {
            return Ok(());
        }
        notes = behind.iter().any(|(dst, _)| dst == NOTES_REF);
        if notes {
            cli::merge_notes(repo.git_dir(), remote, NOTES_REF, who)?;
        }
        todo.retain(|&i| {
            let merge = pending[i]
                .branch
                .remote
                .as_ref()
                .map(|rb| rb.merge.as_str());
            behind.iter().any(|(dst, _)| Some(dst.as_str()) == merge)
        });
        rebuild(repo, remote, pending, &todo, who)?;
        // A rebuilt commit got its own note: push the notes ref again.
        notes = notes || repo.ref_target(NOTES_REF)?.is_some();
        // Spread racing writers apart a little before the next round.
        std::thread::sleep(std::time::Duration::from_millis(
            25 * u64::from(attempt) + u64::from(std::process::id() % 50),
        ));
    }
    Ok(())
}

/// Fetches the rejected branches and rebuilds each commit on the new
/// remote tip, from the same rendered output (a partial run merges only its
/// own apps' files, as on a local write).
fn rebuild(
    repo: &Repo,
    remote: &str,
    pending: &mut [Pending],
    todo: &[usize],
    who: &Identity,
) -> Result<(), Error> {
    let specs: Vec<String> = todo
        .iter()
        .filter_map(|&i| pending[i].branch.remote.as_ref())
        .map(|rb| format!("+{}:{}", rb.merge, rb.tracking))
        .collect();
    cli::fetch(repo.git_dir(), remote, &specs)?;
    for &i in todo {
        let p = &mut pending[i];
        let Some(ours) = repo.ref_target(&p.branch.local_ref())? else {
            continue;
        };
        let w = branch::write(repo, p.branch, Start::Rebuild(ours), p.out, p.message, who)?;
        p.rebuilt = Some(w);
    }
    Ok(())
}
