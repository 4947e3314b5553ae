//! Branch output: commit an environment's files on its branch (GitLab-flow
//! `env/<name>`) without touching the working tree, index or HEAD. The tree
//! is built in memory on top of the branch tip; the ref moves only if it
//! still points where it was read, retrying a bounded number of times.

use std::collections::{BTreeMap, BTreeSet};

use git2::Oid;

use super::files::{changes, EnvOutput, Owned, OWNED_PATH};
use super::{CheckReport, Error};
use crate::git::{Identity, Repo};

/// How many times a ref update is retried after another writer moved it.
const ATTEMPTS: u32 = 8;

/// What a branch write did.
#[derive(Debug)]
pub struct BranchWrite {
    /// The new commit, or None when the tree was already up to date.
    pub commit: Option<Oid>,
    /// Apps whose files changed.
    pub changed_apps: BTreeSet<String>,
    /// Files created, updated or deleted.
    pub changed_files: Vec<String>,
}

/// gitops-promoter's per-app metadata file.
pub const METADATA: &str = "hydrator.metadata";

/// The edits for one attempt, and what they change. An app's
/// `hydrator.metadata` is rewritten only when its manifests change (or it
/// has none yet), so a new source commit that changes nothing renders to no
/// commit, and `--check` names only the files whose content moved.
struct Planned {
    edits: BTreeMap<String, Option<Vec<u8>>>,
    changed_files: Vec<String>,
    changed_apps: BTreeSet<String>,
}

fn plan(repo: &Repo, tip: Option<Oid>, out: &EnvOutput) -> Result<Planned, Error> {
    let old = match tip {
        Some(t) => repo
            .file_at(t, OWNED_PATH)?
            .map(|b| Owned::parse(&b))
            .unwrap_or_default(),
        None => Owned::default(),
    };
    let (mut edits, _) = changes(&old, out);
    let mut existing = BTreeMap::new();
    for path in edits.keys() {
        let e = match tip {
            Some(t) => repo.file_at(t, path)?,
            None => None,
        };
        existing.insert(path.clone(), e);
    }
    let is_meta = |p: &str| p.rsplit('/').next() == Some(METADATA);
    let mut changed_apps = BTreeSet::new();
    for (path, content) in &edits {
        if path != OWNED_PATH && !is_meta(path) && existing[path].as_deref() != content.as_deref() {
            if let Some((app, _)) = path.split_once('/') {
                changed_apps.insert(app.to_string());
            }
        }
    }
    edits.retain(|path, content| {
        if !is_meta(path) || content.is_none() {
            return true;
        }
        let app = path.split_once('/').map_or("", |(a, _)| a);
        changed_apps.contains(app) || existing[path].is_none()
    });
    let changed_files = edits
        .iter()
        .filter(|(p, c)| {
            p.as_str() != OWNED_PATH && existing[p.as_str()].as_deref() != c.as_deref()
        })
        .map(|(p, _)| p.clone())
        .collect();
    Ok(Planned {
        edits,
        changed_files,
        changed_apps,
    })
}

/// Commits `out` on `refname`. `message` gets the apps that changed.
pub fn write(
    repo: &Repo,
    refname: &str,
    out: &EnvOutput,
    message: &dyn Fn(&BTreeSet<String>) -> Result<String, Error>,
    who: &Identity,
) -> Result<BranchWrite, Error> {
    let mut last = None;
    for attempt in 0..ATTEMPTS {
        let tip = repo.ref_target(refname)?;
        let Planned {
            edits,
            changed_files,
            changed_apps,
        } = plan(repo, tip, out)?;
        let tree = repo.build_tree(tip, &edits)?;
        if let Some(t) = tip {
            if repo.tree_of(t)? == tree {
                return Ok(BranchWrite {
                    commit: None,
                    changed_apps,
                    changed_files,
                });
            }
        }
        let msg = message(&changed_apps)?;
        let commit = repo.commit(tree, tip, &msg, who)?;
        match repo.update_ref(refname, commit, tip, &format!("hydrate: {}", out.env)) {
            Ok(()) => {
                return Ok(BranchWrite {
                    commit: Some(commit),
                    changed_apps,
                    changed_files,
                })
            }
            Err(e @ crate::git::Error::Conflict { .. }) => {
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
        refname: refname.to_string(),
        expected: "its tip".into(),
    })))
}

/// Compares `out` with the tip of `refname`, writing nothing.
pub fn check(repo: &Repo, refname: &str, out: &EnvOutput) -> Result<CheckReport, Error> {
    let tip = repo.ref_target(refname)?;
    let planned = plan(repo, tip, out)?;
    let mut report = CheckReport::default();
    for (path, content) in &planned.edits {
        let existing = match tip {
            Some(t) => repo.file_at(t, path)?,
            None => None,
        };
        report.note(path, existing.as_deref(), content.as_deref());
    }
    Ok(report)
}
