//! The working copy side of source commits (promotion, set-image,
//! rollback): which files have uncommitted changes, a branch made in
//! memory, and a commit's tree exported to a directory (commits on the
//! current branch are `transaction.rs`). It decides nothing about what to
//! commit.

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

    /// Writes every file of commit `id` under `dir` (which must exist), one
    /// blob at a time: executable files keep their mode, and symbolic links
    /// become links when they stay inside `dir` (a link leading out of the
    /// repository is left out, so a render through it fails naming it).
    /// Submodules are left out.
    pub fn export(&self, id: Oid, dir: &Path) -> Result<(), Error> {
        let tree = self.commit_tree(id)?;
        let mut failure = None;
        tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let path = format!("{parent}{}", entry.name().unwrap_or_default());
            match self.export_blob(&path, entry.id(), entry.filemode(), dir) {
                Ok(()) => git2::TreeWalkResult::Ok,
                Err(e) => {
                    failure = Some(e);
                    git2::TreeWalkResult::Abort
                }
            }
        })
        .map_err(ctx("walk tree"))?;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn export_blob(&self, path: &str, id: Oid, mode: i32, dir: &Path) -> Result<(), Error> {
        let target = dir.join(path);
        let io = |e: std::io::Error| Error::Io {
            what: format!("export {path}"),
            source: e,
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let blob = self
            .repo
            .find_blob(id)
            .map_err(ctx(format!("read {path}")))?;
        if mode == 0o120000 {
            let link = String::from_utf8_lossy(blob.content()).into_owned();
            if link_stays_inside(path, &link) {
                #[cfg(unix)]
                std::os::unix::fs::symlink(&link, &target).map_err(io)?;
            }
            return Ok(());
        }
        std::fs::write(&target, blob.content()).map_err(io)?;
        #[cfg(unix)]
        if mode == 0o100755 {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .map_err(io)?;
        }
        Ok(())
    }
}

/// Whether the symbolic link at `path` (in a tree) with target `link`
/// points inside the tree.
fn link_stays_inside(path: &str, link: &str) -> bool {
    if link.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = path.split('/').collect();
    depth.pop();
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            p => depth.push(p),
        }
    }
    true
}
