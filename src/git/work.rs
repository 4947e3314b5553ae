//! The working copy side of source commits (promotion, set-image,
//! rollback): which files have uncommitted changes and a branch made in
//! memory (commits on the current branch are `transaction.rs`, a commit's
//! tree on disk is `export.rs`). It decides nothing about what to commit.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{Oid, Status};

use super::{ctx, Error, Identity, Repo};

impl Repo {
    /// The paths (relative to the working directory) among `paths` that
    /// differ between HEAD, the index and the working tree.
    pub fn uncommitted(&self, paths: &[String]) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        for p in paths {
            let s = self
                .repo
                .status_file(Path::new(p))
                .map_err(ctx(format!("status of {p}")))?;
            if s != Status::CURRENT && !s.contains(Status::IGNORED) {
                out.push(p.clone());
            }
        }
        Ok(out)
    }

    /// Whether git ignores `path` (relative to the working directory):
    /// `.gitignore`, `info/exclude` and `core.excludesFile`, as
    /// `git check-ignore` decides.
    pub fn is_ignored(&self, path: &Path) -> Result<bool, Error> {
        self.repo
            .is_path_ignored(path)
            .map_err(ctx(format!("check-ignore {}", path.display())))
    }

    /// HEAD's commit id, if HEAD has one.
    pub fn head_id(&self) -> Result<Option<Oid>, Error> {
        match self.repo.head() {
            Ok(h) => Ok(h.target()),
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(ctx("read HEAD")(e)),
        }
    }

    /// Commits `files` (paths relative to the working directory, symlinks
    /// resolved, → content; each keeps its mode at HEAD) on top of HEAD in
    /// memory and creates `branch` there; HEAD, the index and the working
    /// tree are not touched.
    pub fn commit_to_new_branch(
        &self,
        files: &BTreeMap<String, Vec<u8>>,
        message: &str,
        who: &Identity,
        branch: &str,
    ) -> Result<Oid, Error> {
        let parent = self.head_id()?.ok_or_else(|| {
            Error::Usage("HEAD has no commit yet; commit the sources first".into())
        })?;
        let mut blobs = BTreeMap::new();
        for (path, bytes) in files {
            let mode = self.blob_entry(parent, path)?.map_or(0o100644, |(_, m)| m);
            let id = self
                .repo
                .blob(bytes)
                .map_err(ctx(format!("write blob {path}")))?;
            blobs.insert(path.clone(), (id, mode));
        }
        let tree = self.tree_with(parent, &blobs)?;
        let commit = self.commit(tree, Some(parent), message, who)?;
        self.update_ref(
            &format!("refs/heads/{branch}"),
            commit,
            None,
            "hydrate: branch",
        )?;
        Ok(commit)
    }
}
