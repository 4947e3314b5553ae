//! The sources a promotion reads: a commit's tree (HEAD's, or a past one
//! for rollback) exported to a temporary directory, so pins, edits and the
//! render check see committed bytes only, never the working tree's
//! uncommitted changes. Large files are written only where the
//! environments' renders and pins read (`env::reach`), as for
//! `hydrate diff --since`.

use std::path::{Path, PathBuf};

use git2::Oid;

use super::Error;
use crate::env;
use crate::git::{Export, Repo};

/// A commit's tree on disk, removed when dropped.
pub struct Snapshot {
    export: Export,
    files: PathBuf,
    root: PathBuf,
    root_rel: PathBuf,
}

impl Snapshot {
    /// Exports `commit`; `root` is the repository root hydrate was given
    /// (holding `environments/`), possibly below the working directory.
    pub fn of(repo: &Repo, root: &Path, commit: Oid) -> Result<Snapshot, Error> {
        let root_rel = root_in_workdir(repo, root)?;
        let export = repo.export(commit, &env::reach::may_defer)?;
        let files = export.dir().to_path_buf();
        let root = if root_rel.as_os_str().is_empty() {
            files.clone()
        } else {
            files.join(&root_rel)
        };
        export.fill(repo, &root.join("environments"))?;
        // Environments that do not load: the promotion says why.
        if let Ok(envs) = env::load_environments(&root) {
            env::reach::inputs(&root, &envs, &mut |p| export.fill(repo, p))?;
        }
        Ok(Snapshot {
            root,
            files,
            export,
            root_rel,
        })
    }

    /// The repository root inside the export (where `environments/` is).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The commit exported.
    pub fn commit(&self) -> Oid {
        self.export.commit()
    }

    /// A path relative to the root as a path relative to the working
    /// directory (`/`-separated), as git names it.
    pub fn git_path(&self, file: &Path) -> String {
        self.root_rel
            .join(file)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Where the file git calls `git_path` is in the export.
    pub fn file(&self, git_path: &str) -> PathBuf {
        self.files.join(git_path)
    }
}

/// `root` relative to the repository's working directory.
fn root_in_workdir(repo: &Repo, root: &Path) -> Result<PathBuf, Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("promotion needs a repository with a working tree".into()))?;
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    let root_abs = std::fs::canonicalize(root)
        .map_err(|e| Error::Usage(format!("{}: {e}", root.display())))?;
    root_abs
        .strip_prefix(&workdir)
        .map(Path::to_path_buf)
        .map_err(|_| Error::Usage(format!("{} is outside the repository", root.display())))
}
