//! The working copy side of source commits (promotion, set-image,
//! rollback): which files have uncommitted changes, a commit of exactly
//! some files on top of HEAD (moving HEAD's branch by compare-and-swap and
//! staging only those files), a branch made in memory, and a commit's tree
//! exported to a directory. It decides nothing about what to commit.

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

    /// Commits `files` (paths relative to the working directory → content)
    /// on top of HEAD, moves HEAD's branch from where it was read and
    /// stages exactly those files, leaving other staged or unstaged work
    /// alone. The working tree must already hold `files`.
    pub fn commit_on_head(
        &self,
        files: &BTreeMap<String, Vec<u8>>,
        message: &str,
        who: &Identity,
    ) -> Result<Oid, Error> {
        let head = self.repo.head().map_err(ctx("read HEAD"))?;
        let refname = head
            .name()
            .filter(|n| n.starts_with("refs/heads/"))
            .ok_or_else(|| Error::Git {
                what: "HEAD is detached; check out a branch to commit on".into(),
                source: git2::Error::from_str("detached HEAD"),
            })?
            .to_string();
        let parent = head.target();
        let changes = files
            .iter()
            .map(|(p, b)| (p.clone(), Some(b.clone())))
            .collect();
        let tree = self.build_tree(parent, &changes)?;
        let commit = self.commit(tree, parent, message, who)?;
        self.update_ref(&refname, commit, parent, "hydrate: commit")?;
        let mut index = self.repo.index().map_err(ctx("read the index"))?;
        for p in files.keys() {
            index
                .add_path(Path::new(p))
                .map_err(ctx(format!("stage {p}")))?;
        }
        index.write().map_err(ctx("write the index"))?;
        Ok(commit)
    }

    /// Commits `files` on top of HEAD in memory and creates `branch` there;
    /// HEAD, the index and the working tree are not touched.
    pub fn commit_to_new_branch(
        &self,
        files: &BTreeMap<String, Vec<u8>>,
        message: &str,
        who: &Identity,
        branch: &str,
    ) -> Result<Oid, Error> {
        let parent = self.head_id()?;
        let changes = files
            .iter()
            .map(|(p, b)| (p.clone(), Some(b.clone())))
            .collect();
        let tree = self.build_tree(parent, &changes)?;
        let commit = self.commit(tree, parent, message, who)?;
        self.update_ref(
            &format!("refs/heads/{branch}"),
            commit,
            None,
            "hydrate: branch",
        )?;
        Ok(commit)
    }

    /// Writes every file of commit `id` under `dir` (which must exist).
    pub fn export(&self, id: Oid, dir: &Path) -> Result<(), Error> {
        for (path, bytes) in self.files_at(id)? {
            let target = dir.join(&path);
            let io = |e: std::io::Error| Error::Git {
                what: format!("export {path}"),
                source: git2::Error::from_str(&e.to_string()),
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&target, bytes).map_err(io)?;
        }
        Ok(())
    }
}
