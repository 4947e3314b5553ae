//! Writing rendered output to directories or environment branches: an
//! ownership manifest records what hydrate wrote so it prunes only its own
//! files; files are written to a temporary sibling and renamed into place;
//! unchanged files are not touched; and nothing is written until every
//! render has succeeded (callers pass complete sets). It renders nothing.

mod branch;
mod dir;
mod files;
mod message;
mod publish;
mod spare;
mod stage;
mod swap;
mod tree_stat;

use std::io::Write;
use std::path::{Path, PathBuf};

// The facade: what the rest of hydrate uses, named so that it reads on
// its own outside this module (`output::branch_tip`, not `branch::tip`).
pub(crate) use branch::{
    base as branch_base, check as check_branch, planned as planned_branch_files, tip as branch_tip,
    validate as validate_branch, write as write_branch, Branch, Start, METADATA, README,
};
pub(crate) use dir::{finish as finish_dir, DirPlan, SpareAfter};
pub(crate) use files::{app_files, EnvOutput, LEGACY_OWNED_PATH, OWNED_PATH};
pub(crate) use message::{
    commit_message, note, readme, rfc3339, template_env, MessageContext, Metadata, DEFAULT_README,
    DEFAULT_TEMPLATE, GITATTRIBUTES,
};
pub(crate) use publish::{fetch as fetch_branches, push as push_branches, Pending, NOTES_REF};
// `render` re-exports these as part of the library's surface.
pub use publish::{PushResult, Rejection};
pub(crate) use spare::{clean as clean_spare_trees, SPARE_DIR};
pub(crate) use stage::{Known, MadeDirs, Stage};
#[cfg(test)]
pub(crate) use tree_stat::stat_tree;
pub(crate) use tree_stat::{stat_entries, tree_fresh};

/// An output write failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be written or removed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A git operation failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// The local branch and its remote-tracking branch both have commits
    /// the other lacks.
    #[error(
        "{branch} has diverged from {tracking}: local commit {local}, remote commit {remote}; \
         nothing was written or pushed. Make the local branch the remote one \
         (git branch -f {branch} {tracking}) or delete it, and render again"
    )]
    Diverged {
        /// The branch.
        branch: String,
        /// Its remote-tracking branch, e.g. `origin/env/dev`.
        tracking: String,
        /// The local tip.
        local: String,
        /// The remote-tracking tip.
        remote: String,
    },
    /// A remote was needed (or named) and is not there.
    #[error("{0}")]
    NoRemote(String),
    /// git does not accept the branch name.
    #[error(
        "branch `{0}` is not a valid git branch name (git check-ref-format); nothing was written"
    )]
    BranchName(String),
    /// The commit message template failed.
    #[error("commit message template: {0}")]
    Template(String),
    /// The output directory cannot be written: a symlink or file on its
    /// path, `.`/`..`, or something in it hydrate cannot carry over.
    #[error("{}: cannot write output here: {reason}; nothing was written", path.display())]
    Target {
        /// The offending path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Something hydrate may not replace is where a rendered file goes.
    #[error(
        "{}: {what} is where app {app}'s {file} goes; hydrate replaces only files it wrote \
         (move it away, or delete it); nothing was written",
        path.display()
    )]
    InTheWay {
        /// What is in the way.
        path: PathBuf,
        /// The app whose file goes there.
        app: String,
        /// The rendered file, relative to the output directory.
        file: String,
        /// What it is (`a file hydrate did not write`, `a symbolic link`, ...).
        what: String,
    },
    /// `layout: resources` cannot name an app's files.
    #[error(transparent)]
    Layout(Box<LayoutError>),
}

/// Why `layout: resources` cannot write an app's resources.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Two resources of one app have the same identity (group, kind,
    /// namespace and name; versions are views of one object), so
    /// `layout: resources` would write both to one file.
    #[error("{env}/{app}: {id} is rendered twice ({} and {}); with `layout: resources` both would be written to {file}", sources[0], sources[1])]
    DuplicateObject {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The identity (of the first).
        id: crate::k8s::ObjectId,
        /// Where each came from: helm's `# Source:` template, else the
        /// resource's place in the app's output (`resource 3`).
        sources: [String; 2],
        /// The file both would be written to.
        file: String,
    },
    /// Two different resources of one app would get the same file name
    /// (names that differ only in characters replaced by `_`).
    #[error("{env}/{app}: {} ({}) and {} ({}) would both be written to {file}", ids[0], sources[0], ids[1], sources[1])]
    FileNameClash {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The two identities.
        ids: [crate::k8s::ObjectId; 2],
        /// Where each came from (as in [`LayoutError::DuplicateObject`]).
        sources: [String; 2],
        /// The file.
        file: String,
    },
    /// A resource's kind or group cannot be part of a file name.
    #[error("{env}/{app}: {id} ({source_name}): cannot name a file after it: {reason}")]
    UnsafeName {
        /// Environment name.
        env: String,
        /// App name.
        app: String,
        /// The resource.
        id: crate::k8s::ObjectId,
        /// Where it came from (as in [`LayoutError::DuplicateObject`]).
        source_name: String,
        /// What is wrong.
        reason: String,
    },
}

/// How committed output differs from what a render produces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Files that would be created.
    pub missing: Vec<String>,
    /// Files whose content would change.
    pub stale: Vec<String>,
    /// Files hydrate wrote earlier that would be deleted.
    pub extra: Vec<String>,
}

impl CheckReport {
    /// Whether the output is up to date.
    pub fn is_clean(&self) -> bool {
        self.missing.is_empty() && self.stale.is_empty() && self.extra.is_empty()
    }

    fn note(&mut self, path: &str, existing: Option<&[u8]>, wanted: Option<&[u8]>) {
        if files::is_bookkeeping(path) {
            return;
        }
        match (existing, wanted) {
            (None, Some(_)) => self.missing.push(path.to_string()),
            (Some(a), Some(b)) if a != b => self.stale.push(path.to_string()),
            (Some(_), None) => self.extra.push(path.to_string()),
            _ => {}
        }
    }
}

/// What a write did to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The file did not exist.
    Created,
    /// The file existed with other content.
    Updated,
    /// The file already had this content (not rewritten).
    Unchanged,
}

/// Writes `bytes` to `path` atomically (temp file + rename in the same
/// directory, through [`tempfile::NamedTempFile::persist`], which removes
/// the temp file on failure), creating parent directories; skips
/// identical content. The file gets the mode `File::create` gives (0666
/// less the umask), not the temp file's private 0600. `init` writes its
/// environment files through this too.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<Change, Error> {
    let err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let change = match std::fs::read(path) {
        Ok(old) if old == bytes => return Ok(Change::Unchanged),
        Ok(_) => Change::Updated,
        Err(_) => Change::Created,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut temp = tempfile::Builder::new();
    temp.prefix(".hydrate-tmp-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let result = temp.tempfile_in(dir).and_then(|mut f| {
        // No fsync: the rename keeps readers consistent, and a render is
        // cheap to redo after a crash.
        f.write_all(bytes)?;
        f.persist(path).map(drop).map_err(|e| e.error)
    });
    result.map_err(err)?;
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/out.yaml");
        assert_eq!(write_file_atomic(&p, b"x\n").unwrap(), Change::Created);
        assert_eq!(write_file_atomic(&p, b"x\n").unwrap(), Change::Unchanged);
        assert_eq!(write_file_atomic(&p, b"y\n").unwrap(), Change::Updated);
        assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }
}
