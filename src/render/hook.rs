//! Which environments a pre-commit check compares (`render --pre-commit`):
//! only outputs committed with the sources, i.e. directories git does not
//! ignore. Branches and gitignored directories are written by CI; there a
//! commit of the sources cannot be stale, only broken (a render that fails).

use std::path::Path;

use crate::env::{Environment, Output};
use crate::git::Repo;

/// Whether environment `e` (loaded from `root`) writes a directory that is
/// committed with the sources: not a branch, and not ignored by git. A
/// directory outside any repository, or one git cannot place, counts as
/// committed, so the check compares it rather than passing it unseen.
pub fn committed_output(root: &Path, e: &Environment) -> bool {
    let Output::Dir(dir) = &e.output else {
        return false;
    };
    let Ok(repo) = Repo::discover(root) else {
        return true;
    };
    let (Some(work), Ok(root)) = (repo.workdir(), root.canonicalize()) else {
        return true;
    };
    let Ok(work) = work.canonicalize() else {
        return true;
    };
    match root.join(dir).strip_prefix(&work) {
        Ok(rel) => !repo.is_ignored(rel).unwrap_or(false),
        Err(_) => true,
    }
}
