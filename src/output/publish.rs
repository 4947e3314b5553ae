//! Publishing environment branches to their remote (`render --push`):
//! fetch their remote copies first so commits build on what the remote has,
//! push them with the user's `git`, and when a push is rejected because
//! someone else pushed first (another pipeline, another shard), fetch that
//! branch, rebuild the commit on the new tip from the same rendered output
//! and push again, a bounded number of times. Rejected notes
//! (`refs/notes/hydrator.metadata`) are merged with the remote's the same
//! way. What the remote did with each branch (pushed, unchanged, or
//! rejected with the remote's own words) is reported per branch, never
//! turned into one error that hides the others. It renders nothing; the
//! commands themselves live in `git::remote`.

use std::collections::{BTreeMap, BTreeSet};

use super::branch::{self, Branch, BranchWrite, Start};
use super::files::EnvOutput;
use super::Error;
use crate::git::remote::{self as cli, PushOutcome, PushReply};
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
    /// What the remote did with the branch, once [`push`] is done.
    pub result: Option<PushResult>,
}

/// What the remote did with one pushed branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushResult {
    /// The remote branch was created or moved to the local tip.
    Pushed,
    /// The remote branch already was at the local tip.
    Unchanged,
    /// The remote refused it (the local branch keeps its commit).
    Rejected(Rejection),
}

/// Why a remote refused a ref.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// git's reason (`pre-receive hook declined`), or why hydrate gave up.
    pub reason: String,
    /// What the remote said about it: its hooks' `remote:` lines, from a
    /// push of that ref alone when it was pushed with others.
    pub remote: Vec<String>,
}

/// A remote that refused the notes ref (the branches' results are in
/// their [`Pending`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotesRejected {
    /// The remote.
    pub remote: String,
    /// Why.
    pub rejection: Rejection,
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
/// Each branch's [`Pending::result`] says what its remote did; the
/// remotes that refused the notes ref are returned. An error is a push
/// that reached no ref (no such remote, no access) or a failed rebuild.
pub fn push(
    repo: &Repo,
    pending: &mut [Pending],
    who: &Identity,
) -> Result<Vec<NotesRejected>, Error> {
    let mut by_remote: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in pending.iter().enumerate() {
        by_remote
            .entry(remote_of(p.branch)?.remote.clone())
            .or_default()
            .push(i);
    }
    let notes = repo.ref_target(NOTES_REF)?.is_some();
    let mut refused = Vec::new();
    for (remote, todo) in by_remote {
        if let Some(rejection) = push_to(repo, &remote, pending, todo, notes, who)? {
            refused.push(NotesRejected { remote, rejection });
        }
    }
    Ok(refused)
}

/// The remote ref `pending[i]` is pushed to.
fn merge_ref<'p>(pending: &'p [Pending], i: usize) -> Option<&'p str> {
    pending[i]
        .branch
        .remote
        .as_ref()
        .map(|rb| rb.merge.as_str())
}

/// Pushes `todo` (and the notes ref) to `remote` until nothing is left
/// behind another writer's push, recording each branch's result; returns
/// the notes ref's rejection, if any.
fn push_to(
    repo: &Repo,
    remote: &str,
    pending: &mut [Pending],
    mut todo: Vec<usize>,
    mut notes: bool,
    who: &Identity,
) -> Result<Option<Rejection>, Error> {
    let mut notes_rejected = None;
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
        let mut behind = Vec::new();
        for (dst, outcome, said) in settle(repo, remote, &specs)? {
            let result = match outcome {
                PushOutcome::Updated => PushResult::Pushed,
                PushOutcome::UpToDate => PushResult::Unchanged,
                PushOutcome::Refused(reason) => PushResult::Rejected(Rejection {
                    reason,
                    remote: said,
                }),
                PushOutcome::Behind(reason) if attempt == PUSH_ATTEMPTS => {
                    PushResult::Rejected(Rejection {
                        reason: format!(
                            "{reason}; still rejected after {PUSH_ATTEMPTS} attempts, \
                             each fetching the remote tip and rebuilding the commit on it"
                        ),
                        remote: said,
                    })
                }
                PushOutcome::Behind(_) => {
                    behind.push(dst);
                    continue;
                }
            };
            if dst == NOTES_REF {
                notes_rejected = match result {
                    PushResult::Rejected(r) => Some(r),
                    _ => None,
                };
            } else if let Some(&i) = todo.iter().find(|&&i| merge_ref(pending, i) == Some(&dst)) {
                pending[i].result = Some(result);
            }
        }
        if behind.is_empty() {
            break;
        }
        notes = behind.iter().any(|dst| dst == NOTES_REF);
        if notes {
            cli::merge_notes(repo.git_dir(), remote, NOTES_REF, who)?;
        }
        todo.retain(|&i| {
            behind
                .iter()
                .any(|dst| Some(dst.as_str()) == merge_ref(pending, i))
        });
        rebuild(repo, remote, pending, &todo, who)?;
        // A rebuilt commit got its own note: push the notes ref again.
        notes = notes || repo.ref_target(NOTES_REF)?.is_some();
        // Spread racing writers apart a little before the next round.
        std::thread::sleep(std::time::Duration::from_millis(
            25 * u64::from(attempt) + u64::from(std::process::id() % 50),
        ));
    }
    Ok(notes_rejected)
}

/// Pushes `specs` to `remote`: each destination ref, what became of it and
/// what the remote said. A `pre-receive` hook accepts or declines a whole
/// push (receive-pack.c marks every ref "pre-receive hook declined"), so
/// a ref refused in a push of several is pushed again alone: a branch the
/// hook has nothing against is then pushed, and each refused one gets the
/// remote's lines about itself alone.
fn settle(
    repo: &Repo,
    remote: &str,
    specs: &[(String, String)],
) -> Result<Vec<(String, PushOutcome, Vec<String>)>, Error> {
    let PushReply { refs, remote: said } = cli::push(repo.git_dir(), remote, specs)?;
    let mut out = Vec::new();
    for (src, dst) in specs {
        let Some(outcome) = refs.get(dst) else {
            continue;
        };
        if specs.len() > 1 && matches!(outcome, PushOutcome::Refused(_)) {
            let alone = cli::push(repo.git_dir(), remote, &[(src.clone(), dst.clone())])?;
            let outcome = alone.refs.get(dst).unwrap_or(outcome).clone();
            out.push((dst.clone(), outcome, alone.remote));
        } else {
            out.push((dst.clone(), outcome.clone(), said.clone()));
        }
    }
    Ok(out)
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
