//! Branch output: commit an environment's files on its branch (GitLab-flow
//! `env/<name>`) without touching the working tree, index or HEAD. The tree
//! is built in memory on top of the branch tip; the ref moves only if it
//! still points where it was read, retrying a bounded number of times.
//!
//! The tip is the newest of the local branch and its remote-tracking branch
//! (a CI job works in a fresh clone where `env/dev` exists only as
//! `origin/env/dev`): a local branch that is behind is fast-forwarded, never
//! moved back, and one that has diverged stops the run. A `-next` branch
//! that does not exist yet starts from the branch it proposes changes to.

use std::collections::{BTreeMap, BTreeSet};

use git2::Oid;

use super::files::{changes, is_bookkeeping, EnvOutput, Owned, LEGACY_OWNED_PATH, OWNED_PATH};
use super::publish::NOTES_REF;
use super::{CheckReport, Error};
use crate::git::{Identity, Repo};

/// An environment branch, and where a remote keeps its copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// The branch's name, e.g. `env/dev`.
    pub name: String,
    /// Its copy on a remote, when the repository has that remote.
    pub remote: Option<RemoteBranch>,
    /// For a `<branch>-next` branch: `<branch>`, where it starts from.
    pub starts_from: Option<Box<Branch>>,
}

/// A branch on a remote and its remote-tracking ref here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteBranch {
    /// The remote's name, e.g. `origin`.
    pub remote: String,
    /// The ref on the remote, e.g. `refs/heads/env/dev`.
    pub merge: String,
    /// The remote-tracking ref, e.g. `refs/remotes/origin/env/dev`.
    pub tracking: String,
}

impl Branch {
    /// The local ref, `refs/heads/<name>`.
    pub fn local_ref(&self) -> String {
        format!("refs/heads/{}", self.name)
    }

    /// Finds where `name` lives: on `remote` when one is named (it must
    /// exist), else on the branch's configured upstream, else on `origin`
    /// when the repository has it, else nowhere (local only).
    pub fn locate(repo: &Repo, name: &str, remote: Option<&str>) -> Result<Branch, Error> {
        let names = repo.remote_names()?;
        let local_ref = format!("refs/heads/{name}");
        let on = |remote: &str| RemoteBranch {
            remote: remote.to_string(),
            merge: local_ref.clone(),
            tracking: format!("refs/remotes/{remote}/{name}"),
        };
        let remote = match remote {
            Some(r) if names.iter().any(|n| n == r) => Some(on(r)),
            Some(r) => return Err(Error::NoRemote(no_such_remote(r, &names))),
            None => match repo.upstream(&local_ref)? {
                Some(up) => Some(RemoteBranch {
                    remote: up.remote,
                    merge: up.merge,
                    tracking: up.tracking,
                }),
                None => names.iter().any(|n| n == "origin").then(|| on("origin")),
            },
        };
        Ok(Branch {
            name: name.to_string(),
            remote,
            starts_from: None,
        })
    }
}

/// Checks before anything is written that git accepts the branch's ref
/// name (and the ref of the branch a `-next` branch starts from).
pub fn validate(b: &Branch) -> Result<(), Error> {
    let mut at = Some(b);
    while let Some(b) = at {
        if b.name.is_empty() || !git2::Reference::is_valid_name(&b.local_ref()) {
            return Err(Error::BranchName(b.name.clone()));
        }
        at = b.starts_from.as_deref();
    }
    Ok(())
}

fn no_such_remote(name: &str, names: &[String]) -> String {
    if names.is_empty() {
        format!("no remote named `{name}`: this repository has no remote")
    } else {
        format!(
            "no remote named `{name}` (this repository has: {})",
            names.join(", ")
        )
    }
}

/// The newest of the local branch and its remote-tracking branch; an error
/// naming both commits when they have diverged.
pub fn tip(repo: &Repo, b: &Branch) -> Result<Option<Oid>, Error> {
    let local = repo.ref_target(&b.local_ref())?;
    newest(repo, b, local)
}

fn newest(repo: &Repo, b: &Branch, local: Option<Oid>) -> Result<Option<Oid>, Error> {
    let Some(rb) = &b.remote else {
        return Ok(local);
    };
    let remote = repo.ref_target(&rb.tracking)?;
    match (local, remote) {
        (Some(l), Some(r)) if repo.is_ancestor(r, l)? => Ok(Some(l)),
        (Some(l), Some(r)) if repo.is_ancestor(l, r)? => Ok(Some(r)),
        // A shallow clone may just lack the history that joins them.
        (Some(l), Some(r)) if repo.is_shallow() => Err(Error::Git(crate::git::Error::Shallow {
            rev: format!(
                "the history joining {} ({l}) and {} ({r})",
                b.name,
                short_tracking(rb)
            ),
        })),
        (Some(l), Some(r)) => Err(Error::Diverged {
            branch: b.name.clone(),
            tracking: short_tracking(rb).to_string(),
            local: l.to_string(),
            remote: r.to_string(),
        }),
        (l, r) => Ok(l.or(r)),
    }
}

/// `origin/env/dev` for `refs/remotes/origin/env/dev`.
fn short_tracking(rb: &RemoteBranch) -> &str {
    rb.tracking
        .strip_prefix("refs/remotes/")
        .unwrap_or(&rb.tracking)
}

/// Where the local branch is now, and the commit the next write builds on:
/// the branch's tip; for a `-next` branch that does not exist yet, the tip
/// of the branch it starts from, and after that branch merged it, the
/// merged tip (so the next proposal starts from what was accepted).
pub fn base(repo: &Repo, b: &Branch) -> Result<(Option<Oid>, Option<Oid>), Error> {
    let local = repo.ref_target(&b.local_ref())?;
    let tip = newest(repo, b, local)?;
    let Some(from) = &b.starts_from else {
        return Ok((local, tip));
    };
    let from_tip = self::tip(repo, from)?;
    let base = match (tip, from_tip) {
        (None, f) => f,
        (Some(t), Some(f)) if t != f && repo.is_ancestor(t, f)? => Some(f),
        (t, _) => t,
    };
    Ok((local, base))
}

/// Where [`write`] starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The branch's [`base`].
    Tip,
    /// The local branch holds `ours`, a commit the remote rejected because
    /// someone else pushed first: build again on the remote-tracking tip
    /// (just fetched) and replace `ours`.
    Rebuild(Oid),
}

/// How many times a ref update is retried after another writer moved it.
const ATTEMPTS: u32 = 8;

/// What a branch write did.
#[derive(Debug)]
pub struct BranchWrite {
    /// The new commit, or None when the tree was already up to date.
    pub commit: Option<Oid>,
    /// Files created, updated or deleted.
    pub changed_files: Vec<String>,
}

/// Argo CD's metadata file, at the root and in each app directory.
pub const METADATA: &str = "hydrator.metadata";

/// The optional per-app README (`readme:` in the environment file).
pub const README: &str = "README.md";

/// The edits for one attempt, and what they change. A `hydrator.metadata`
/// (an app's, or the root one) is rewritten only when manifests under it
/// change (or it is missing), so a new source commit that changes nothing
/// renders to no commit (the note then moves to the new source commit,
/// as Argo CD's commit server does), and `--check` names only the files
/// whose content moved.
struct Planned {
    edits: BTreeMap<String, Option<Vec<u8>>>,
    changed_files: Vec<String>,
    changed_apps: BTreeSet<String>,
}

/// The ownership manifest at `tip`, under its old name when the new one is
/// missing.
fn owned_at(repo: &Repo, tip: Option<Oid>) -> Result<Owned, Error> {
    let Some(t) = tip else {
        return Ok(Owned::default());
    };
    let bytes = match repo.file_at(t, OWNED_PATH)? {
        Some(b) => Some(b),
        None => repo.file_at(t, LEGACY_OWNED_PATH)?,
    };
    Ok(bytes.map(|b| Owned::parse(&b)).unwrap_or_default())
}

fn plan(repo: &Repo, tip: Option<Oid>, out: &EnvOutput) -> Result<Planned, Error> {
    let old = owned_at(repo, tip)?;
    let (mut edits, _) = changes(&old, out);
    if let Some(m) = &out.root_metadata {
        edits.insert(METADATA.to_string(), Some(m.clone()));
    }
    if let Some(a) = &out.attributes {
        edits.insert(".gitattributes".to_string(), Some(a.clone()));
    }
    let mut existing = BTreeMap::new();
    for path in edits.keys() {
        let e = match tip {
            Some(t) => repo.file_at(t, path)?,
            None => None,
        };
        existing.insert(path.clone(), e);
    }
    // READMEs name the source commit too.
    let is_meta = |p: &str| matches!(p.rsplit('/').next(), Some(METADATA | README));
    let mut changed_apps = BTreeSet::new();
    let mut any_manifest = false;
    for (path, content) in &edits {
        if !is_bookkeeping(path)
            && !is_meta(path)
            && existing[path].as_deref() != content.as_deref()
        {
            any_manifest = true;
            if let Some((app, _)) = path.split_once('/') {
                changed_apps.insert(app.to_string());
            }
        }
    }
    edits.retain(|path, content| {
        if !is_meta(path) || content.is_none() || existing[path].is_none() {
            return true;
        }
        match path.split_once('/') {
            Some((app, _)) => changed_apps.contains(app),
            None => any_manifest,
        }
    });
    let changed_files = edits
        .iter()
        .filter(|(p, c)| !is_bookkeeping(p) && existing[p.as_str()].as_deref() != c.as_deref())
        .map(|(p, _)| p.clone())
        .collect();
    Ok(Planned {
        edits,
        changed_files,
        changed_apps,
    })
}

/// Puts `out`'s note on the hydrated commit `id` (compare-and-swap on the
/// notes ref), also when this run made no commit: gitops-promoter prefers
/// the note's dry SHA, so an environment whose manifests did not change
/// still shows the newest source commit.
fn annotate(repo: &Repo, id: Oid, out: &EnvOutput, who: &Identity) -> Result<(), Error> {
    if let Some(note) = &out.note {
        repo.set_note(NOTES_REF, id, note, who)?;
    }
    Ok(())
}

/// Commits `out` on branch `b`, starting from `start`. `message` gets the
/// apps that changed. No commit is made when the tree equals the base's;
/// the local branch is then only fast-forwarded to the base.
pub fn write(
    repo: &Repo,
    b: &Branch,
    start: Start,
    out: &EnvOutput,
    message: &dyn Fn(&BTreeSet<String>) -> Result<String, Error>,
    who: &Identity,
) -> Result<BranchWrite, Error> {
    let refname = b.local_ref();
    let mut last = None;
    for attempt in 0..ATTEMPTS {
        let (local, base) = match start {
            Start::Tip => base(repo, b)?,
            Start::Rebuild(ours) => (Some(ours), rebuild_base(repo, b)?),
        };
        let Planned {
            edits,
            changed_files,
            changed_apps,
        } = plan(repo, base, out)?;
        let tree = repo.build_tree(base, &edits)?;
        let (new, commit) = match base {
            Some(t) if repo.tree_of(t)? == tree => (t, None),
            _ => {
                let msg = message(&changed_apps)?;
                let c = repo.commit(tree, base, &msg, who)?;
                (c, Some(c))
            }
        };
        let done = BranchWrite {
            commit,
            changed_files,
        };
        if local == Some(new) {
            annotate(repo, new, out, who)?;
            return Ok(done);
        }
        match repo.update_ref(&refname, new, local, &format!("hydrate: {}", out.env)) {
            Ok(()) => {
                annotate(repo, new, out, who)?;
                return Ok(done);
            }
            Err(e @ crate::git::Error::Conflict { .. }) if start == Start::Tip => {
                last = Some(e);
                // Another writer won the race: re-read the tip and rebuild on it.
                std::thread::sleep(std::time::Duration::from_millis(
                    20 * u64::from(attempt + 1),
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::Git(last.unwrap_or(crate::git::Error::Conflict {
        refname,
        expected: "its tip".into(),
    })))
}

/// After a rejected push: the remote-tracking tip, or (a `-next` branch the
/// remote does not have) what the branch starts from.
fn rebuild_base(repo: &Repo, b: &Branch) -> Result<Option<Oid>, Error> {
    let remote = match &b.remote {
        Some(rb) => repo.ref_target(&rb.tracking)?,
        None => None,
    };
    match (remote, &b.starts_from) {
        (None, Some(from)) => tip(repo, from),
        (r, _) => Ok(r),
    }
}

/// What a write of `out` on top of commit `tip` would change there: path
/// → new content, or `None` to delete (`hydrator.metadata` and READMEs
/// only where their app's manifests change, as [`write`] does; the
/// ownership manifest included).
pub fn planned(
    repo: &Repo,
    tip: Option<Oid>,
    out: &EnvOutput,
) -> Result<BTreeMap<String, Option<Vec<u8>>>, Error> {
    Ok(plan(repo, tip, out)?.edits)
}

/// Compares `out` with the base of branch `b` (see [`base`]), writing nothing.
pub fn check(repo: &Repo, b: &Branch, out: &EnvOutput) -> Result<CheckReport, Error> {
    let (_, tip) = base(repo, b)?;
    let planned = plan(repo, tip, out)?;
    let mut report = CheckReport::default();
    for (path, content) in &planned.edits {
        let existing = match tip {
            Some(t) => repo.file_at(t, path)?,
            None => None,
        };
        report.note(path, existing.as_deref(), content.as_deref());
    }
    // The note is output too: one naming another source commit is stale.
    // A missing one is not reported: `git clone` does not fetch notes, so a
    // CI job's fresh clone has none until it fetches refs/notes/*.
    if let (Some(t), Some(wanted)) = (tip, &out.note) {
        if repo.note(NOTES_REF, t)?.is_some_and(|n| &n != wanted) {
            report.stale.push(NOTES_REF.to_string());
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with commits a ← b ← c and a ← d (d diverges from b/c).
    struct Fixture {
        _dir: tempfile::TempDir,
        repo: Repo,
        a: Oid,
        b: Oid,
        c: Oid,
        d: Oid,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let who = Identity {
            name: "t".into(),
            email: "t@example.com".into(),
            time: 1,
        };
        let commit = |parent: Option<Oid>, file: &str| {
            let edits = BTreeMap::from([(file.to_string(), Some(file.as_bytes().to_vec()))]);
            let tree = repo.build_tree(parent, &edits).unwrap();
            repo.commit(tree, parent, file, &who).unwrap()
        };
        let a = commit(None, "a");
        let b = commit(Some(a), "b");
        let c = commit(Some(b), "c");
        let d = commit(Some(a), "d");
        Fixture {
            _dir: dir,
            repo,
            a,
            b,
            c,
            d,
        }
    }

    fn branch(name: &str) -> Branch {
        Branch {
            name: name.into(),
            remote: Some(RemoteBranch {
                remote: "origin".into(),
                merge: format!("refs/heads/{name}"),
                tracking: format!("refs/remotes/origin/{name}"),
            }),
            starts_from: None,
        }
    }

    fn set(f: &Fixture, refname: &str, id: Oid) {
        let old = f.repo.ref_target(refname).unwrap();
        f.repo.update_ref(refname, id, old, "test").unwrap();
    }

    #[test]
    fn the_tip_is_the_newer_of_local_and_remote_and_divergence_names_both() {
        let f = fixture();
        let b = branch("env/dev");
        assert_eq!(tip(&f.repo, &b).unwrap(), None);
        set(&f, "refs/remotes/origin/env/dev", f.b);
        assert_eq!(tip(&f.repo, &b).unwrap(), Some(f.b), "remote only");
        set(&f, "refs/heads/env/dev", f.a);
        assert_eq!(tip(&f.repo, &b).unwrap(), Some(f.b), "local behind");
        set(&f, "refs/heads/env/dev", f.c);
        assert_eq!(tip(&f.repo, &b).unwrap(), Some(f.c), "local ahead");
        set(&f, "refs/heads/env/dev", f.d);
        let err = tip(&f.repo, &b).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "env/dev has diverged from origin/env/dev: local commit {}, remote commit {};",
                f.d, f.b
            )),
            "{err}"
        );
    }

    #[test]
    fn a_next_branch_starts_from_its_branch_and_follows_a_merge() {
        let f = fixture();
        let mut next = branch("env/prod-next");
        next.starts_from = Some(Box::new(branch("env/prod")));
        assert_eq!(base(&f.repo, &next).unwrap(), (None, None));
        set(&f, "refs/remotes/origin/env/prod", f.b);
        assert_eq!(
            base(&f.repo, &next).unwrap(),
            (None, Some(f.b)),
            "new: from prod"
        );
        set(&f, "refs/heads/env/prod-next", f.d);
        assert_eq!(
            base(&f.repo, &next).unwrap(),
            (Some(f.d), Some(f.d)),
            "existing: builds on itself"
        );
        set(&f, "refs/heads/env/prod-next", f.b);
        set(&f, "refs/remotes/origin/env/prod", f.c);
        assert_eq!(
            base(&f.repo, &next).unwrap(),
            (Some(f.b), Some(f.c)),
            "prod contains next (merged): continue from prod"
        );
    }
}
