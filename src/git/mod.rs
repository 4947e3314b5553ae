//! A thin layer over git2: read trees at a ref, build trees from memory on
//! top of a base tree, commit, and move refs only by compare-and-swap. It
//! never touches the working tree, the index or HEAD, and decides nothing
//! about what to commit. Talking to remotes (fetch, push) goes through the
//! `git` binary in [`remote`]: hydrate's git2 is built without network
//! transports, so credentials stay with the user's git.

pub(crate) mod remote;

mod export;
mod lock;
mod log;
mod notes;
mod scratch;
mod transaction;
mod work;

pub(crate) use export::Export;
pub(crate) use log::trailers;
pub(crate) use transaction::Transaction;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{
    ErrorCode, ObjectType, Oid, Repository, Signature, Time, Tree, TreeWalkMode, TreeWalkResult,
};

/// A git failure, with what we were doing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A revision is missing from a shallow clone (libgit2 would only say
    /// "parent 0 does not exist" or "object not found").
    #[error(
        "{rev} is not in this shallow clone; fetch with more depth (GIT_DEPTH: 0 / fetch-depth: 0)"
    )]
    Shallow {
        /// The revision asked for.
        rev: String,
    },
    /// The `git` binary failed (fetch, push, ls-remote).
    #[error("git {what}: {detail}")]
    Command {
        /// The command, e.g. `push origin`.
        what: String,
        /// git's own message (stderr), or why it could not run.
        detail: String,
    },
    /// A libgit2 call failed.
    #[error("git: {what}: {source}")]
    Git {
        /// What we were doing.
        what: String,
        /// libgit2's error.
        source: git2::Error,
    },
    /// `.git/index.lock` exists: another git process works in this
    /// repository (the message is git's own).
    #[error("{message}")]
    Locked {
        /// git's message, naming the lock file.
        message: String,
    },
    /// A file operation in the repository failed.
    #[error("git: {what}: {source}")]
    Io {
        /// What we were doing, naming the file.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The repository is not in a state the operation can work in
    /// (detached HEAD, no commit, staged changes in a file to commit).
    #[error("{0}")]
    Usage(String),
    /// A path leads outside the repository through a symbolic link.
    #[error("{path}: a symbolic link leads outside the repository")]
    Outside {
        /// The path as given.
        path: String,
    },
    /// A path is not a file in the commit.
    #[error("{path}: no such file in the commit")]
    NotFound {
        /// The path.
        path: String,
    },
    /// The ref moved while we worked (someone else committed).
    #[error("git: {refname} moved while hydrate was writing it (expected {expected})")]
    Conflict {
        /// The ref.
        refname: String,
        /// Where we read it.
        expected: String,
    },
}

fn ctx(what: impl Into<String>) -> impl FnOnce(git2::Error) -> Error {
    let what = what.into();
    move |source| Error::Git { what, source }
}

/// Who and when, for commits.
#[derive(Clone, Debug)]
pub struct Identity {
    /// Author and committer name.
    pub name: String,
    /// Author and committer email.
    pub email: String,
    /// Seconds since the epoch.
    pub time: i64,
}

/// The commit the sources were rendered from.
#[derive(Clone, Debug, Default)]
pub struct SourceCommit {
    /// Full sha.
    pub sha: String,
    /// First line of the message.
    pub subject: String,
    /// The rest of the message.
    pub body: String,
    /// Author as `Name <email>`.
    pub author: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
}

/// A local branch's configured upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// The remote's name (`branch.<name>.remote`).
    pub remote: String,
    /// The branch's ref on the remote (`branch.<name>.merge`, `refs/heads/…`).
    pub merge: String,
    /// The remote-tracking ref it maps to (`refs/remotes/<remote>/…`).
    pub tracking: String,
}

/// `url` without the userinfo of a `scheme://user:pass@host/…` URL;
/// scp-like (`git@host:path`) and local paths are kept as they are.
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Changes to a tree: path components → blob and mode, or `None` to delete.
type TreeChanges = BTreeMap<Vec<String>, Option<(Oid, i32)>>;

/// An open repository.
pub struct Repo {
    repo: Repository,
}

impl Repo {
    /// Opens the repository containing `path`.
    pub fn discover(path: &Path) -> Result<Repo, Error> {
        let repo = Repository::discover(path)
            .map_err(ctx(format!("open repository at {}", path.display())))?;
        Ok(Repo { repo })
    }

    /// The working directory's root (where paths in trees start).
    pub fn workdir(&self) -> Option<PathBuf> {
        self.repo.workdir().map(Path::to_path_buf)
    }

    /// The commit HEAD points to, if any.
    pub fn head_commit(&self) -> Result<Option<SourceCommit>, Error> {
        let head = match self.repo.head() {
            Ok(h) => h,
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                return Ok(None)
            }
            Err(e) => return Err(ctx("read HEAD")(e)),
        };
        let c = head.peel_to_commit().map_err(ctx("read HEAD commit"))?;
        Ok(Some(source_commit(&c)))
    }

    /// Commit `id` as a source commit (for `hydrator.metadata`).
    pub fn source_commit(&self, id: Oid) -> Result<SourceCommit, Error> {
        let c = self
            .repo
            .find_commit(id)
            .map_err(ctx(format!("find commit {id}")))?;
        Ok(source_commit(&c))
    }
}

/// A commit as the source of a render.
fn source_commit(c: &git2::Commit<'_>) -> SourceCommit {
    let message = c.message().unwrap_or_default();
    let (subject, body) = message.split_once('\n').unwrap_or((message, ""));
    let a = c.author();
    SourceCommit {
        sha: c.id().to_string(),
        subject: subject.trim().to_string(),
        body: body.trim().to_string(),
        author: format!(
            "{} <{}>",
            a.name().unwrap_or_default(),
            a.email().unwrap_or_default()
        ),
        time: c.time().seconds(),
    }
}

impl Repo {
    /// Every branch checked out somewhere: in the main working tree and in
    /// each linked worktree (`git worktree add`), each with the directory it
    /// is checked out in. git itself refuses to move such a branch
    /// (`git branch -f` says "cannot force update the branch ... used by
    /// worktree at ..."), so hydrate must not move one under a checkout
    /// either. Worktrees whose metadata no longer validates (their directory
    /// is gone, `git worktree prune` would remove them) hold nothing.
    pub fn checked_out_branches(&self) -> Vec<(String, PathBuf)> {
        fn branch_of(repo: &Repository) -> Option<String> {
            let head = repo.find_reference("HEAD").ok()?;
            let target = head.symbolic_target()?;
            target.strip_prefix("refs/heads/").map(str::to_string)
        }
        let mut out = Vec::new();
        // The main working tree: the common directory's own HEAD, which is
        // not this repository's HEAD when hydrate runs in a linked worktree.
        let main = if self.repo.is_worktree() {
            Repository::open(self.repo.commondir()).ok()
        } else {
            None
        };
        let main = main.as_ref().unwrap_or(&self.repo);
        if !main.is_bare() {
            if let Some(b) = branch_of(main) {
                let dir = main.workdir().unwrap_or(main.path()).to_path_buf();
                out.push((b, dir));
            }
        }
        let Ok(names) = self.repo.worktrees() else {
            return out;
        };
        for name in names.iter().flatten() {
            let Ok(wt) = self.repo.find_worktree(name) else {
                continue;
            };
            if wt.validate().is_err() {
                continue;
            }
            if let Ok(r) = Repository::open_from_worktree(&wt) {
                if let Some(b) = branch_of(&r) {
                    out.push((b, wt.path().to_path_buf()));
                }
            }
        }
        out
    }

    /// Resolves a revision (`HEAD~1`, a sha, a branch) to a commit id. In a
    /// shallow clone, a revision that cannot be found is
    /// [`Error::Shallow`]: more history would probably have it.
    pub fn resolve(&self, rev: &str) -> Result<Oid, Error> {
        let shallow = |e: git2::Error| {
            if self.repo.is_shallow() && e.code() == ErrorCode::NotFound {
                Error::Shallow {
                    rev: rev.to_string(),
                }
            } else {
                ctx(format!("resolve {rev}"))(e)
            }
        };
        let obj = self.repo.revparse_single(rev).map_err(shallow)?;
        let commit = obj
            .peel_to_commit()
            .map_err(ctx(format!("{rev} is not a commit")))?;
        Ok(commit.id())
    }

    /// Whether this is a shallow clone (history cut at `.git/shallow`).
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// The repository's git directory (`.git`), for the `git` binary.
    pub fn git_dir(&self) -> &Path {
        self.repo.path()
    }

    /// The names of the configured remotes.
    pub fn remote_names(&self) -> Result<Vec<String>, Error> {
        let names = self.repo.remotes().map_err(ctx("list remotes"))?;
        Ok(names.iter().flatten().map(str::to_string).collect())
    }

    /// The URL of remote `name`, without any user name or password it
    /// carries (`https://token@host/…` → `https://host/…`): it ends up in
    /// committed files. None when there is no such remote.
    pub fn remote_url(&self, name: &str) -> Result<Option<String>, Error> {
        let remote = match self.repo.find_remote(name) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ctx(format!("read remote {name}"))(e)),
        };
        Ok(remote.url().map(without_credentials))
    }

    /// The configured upstream of local branch `refname`
    /// (`branch.<name>.remote` and `.merge`), if any.
    pub fn upstream(&self, refname: &str) -> Result<Option<Upstream>, Error> {
        let text = |b: git2::Buf| b.as_str().map(str::to_string);
        let remote = match self.repo.branch_upstream_remote(refname) {
            Ok(b) => text(b),
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ctx(format!("read the upstream of {refname}"))(e)),
        };
        let merge = match self.repo.branch_upstream_merge(refname) {
            Ok(b) => text(b),
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ctx(format!("read the upstream of {refname}"))(e)),
        };
        let tracking = match self.repo.branch_upstream_name(refname) {
            Ok(b) => text(b),
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ctx(format!("read the upstream of {refname}"))(e)),
        };
        Ok(match (remote, merge, tracking) {
            (Some(remote), Some(merge), Some(tracking)) => Some(Upstream {
                remote,
                merge,
                tracking,
            }),
            _ => None,
        })
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: Oid, descendant: Oid) -> Result<bool, Error> {
        if ancestor == descendant {
            return Ok(true);
        }
        self.repo
            .graph_descendant_of(descendant, ancestor)
            .map_err(ctx(format!("compare {ancestor} with {descendant}")))
    }

    /// The first parent of commit `id`, if it has one.
    pub fn parent_of(&self, id: Oid) -> Result<Option<Oid>, Error> {
        let c = self
            .repo
            .find_commit(id)
            .map_err(ctx(format!("find commit {id}")))?;
        Ok(c.parent_ids().next())
    }

    /// Where `refname` points, if it exists.
    pub fn ref_target(&self, refname: &str) -> Result<Option<Oid>, Error> {
        match self.repo.refname_to_id(refname) {
            Ok(id) => Ok(Some(id)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(ctx(format!("read {refname}"))(e)),
        }
    }

    /// The files (path → content) in the tree of commit `id` whose path
    /// `keep` accepts; no other blob is read.
    pub fn files_where(
        &self,
        id: Oid,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        let tree = self.commit_tree(id)?;
        let mut out = BTreeMap::new();
        let mut failure = None;
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            let path = format!("{dir}{}", entry.name().unwrap_or_default());
            if entry.kind() == Some(ObjectType::Blob) && keep(&path) {
                match self.repo.find_blob(entry.id()) {
                    Ok(b) => {
                        out.insert(path, b.content().to_vec());
                    }
                    Err(e) => {
                        failure = Some(e);
                        return TreeWalkResult::Abort;
                    }
                }
            }
            TreeWalkResult::Ok
        })
        .map_err(ctx("walk tree"))?;
        if let Some(e) = failure {
            return Err(ctx("read blob")(e));
        }
        Ok(out)
    }

    /// The paths of every file (symbolic links included) in the tree of
    /// commit `id`; no blob is read.
    pub fn paths_at(&self, id: Oid) -> Result<Vec<String>, Error> {
        let tree = self.commit_tree(id)?;
        let mut out = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                out.push(format!("{dir}{}", entry.name().unwrap_or_default()));
            }
            TreeWalkResult::Ok
        })
        .map_err(ctx("walk tree"))?;
        Ok(out)
    }

    /// The content of `path` in the tree of commit `id`, if it is a file there.
    pub fn file_at(&self, id: Oid, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let tree = self.commit_tree(id)?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(ctx(format!("look up {path}"))(e)),
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(ctx(format!("read {path}")))?;
        Ok(Some(blob.content().to_vec()))
    }

    /// `user.name` and `user.email` from the repository's configuration.
    pub fn configured_identity(&self) -> Option<(String, String)> {
        let cfg = self.repo.config().ok()?;
        Some((
            cfg.get_string("user.name").ok()?,
            cfg.get_string("user.email").ok()?,
        ))
    }

    fn commit_tree(&self, id: Oid) -> Result<Tree<'_>, Error> {
        let c = self
            .repo
            .find_commit(id)
            .map_err(ctx(format!("find commit {id}")))?;
        c.tree().map_err(ctx("read commit tree"))
    }

    /// Paths that differ between the trees of two commits.
    pub fn changed_paths(&self, from: Oid, to: Oid) -> Result<Vec<String>, Error> {
        let (a, b) = (self.commit_tree(from)?, self.commit_tree(to)?);
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&a), Some(&b), None)
            .map_err(ctx("diff trees"))?;
        let mut out = Vec::new();
        for d in diff.deltas() {
            for f in [d.old_file(), d.new_file()] {
                if let Some(p) = f.path() {
                    let p = p.to_string_lossy().into_owned();
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Builds a tree: the tree of `base` (or empty) with `changes` applied
    /// (path → new content, or `None` to delete).
    pub fn build_tree(
        &self,
        base: Option<Oid>,
        changes: &BTreeMap<String, Option<Vec<u8>>>,
    ) -> Result<Oid, Error> {
        let base_tree = match base {
            Some(id) => Some(self.commit_tree(id)?),
            None => None,
        };
        let mut split: TreeChanges = BTreeMap::new();
        for (path, content) in changes {
            let blob = match content {
                Some(bytes) => Some((
                    self.repo
                        .blob(bytes)
                        .map_err(ctx(format!("write blob {path}")))?,
                    0o100644,
                )),
                None => None,
            };
            split.insert(path.split('/').map(str::to_string).collect(), blob);
        }
        let id = self.update_tree(base_tree.as_ref(), &split)?;
        match id {
            Some(id) => Ok(id),
            None => {
                let tb = self.repo.treebuilder(None).map_err(ctx("new tree"))?;
                tb.write().map_err(ctx("write empty tree"))
            }
        }
    }

    /// Applies changes (blob and mode, or `None` to delete) below one
    /// tree level; `None` when the result is empty.
    fn update_tree(
        &self,
        base: Option<&Tree>,
        changes: &TreeChanges,
    ) -> Result<Option<Oid>, Error> {
        let mut tb = self.repo.treebuilder(base).map_err(ctx("tree builder"))?;
        let mut by_dir: BTreeMap<&str, TreeChanges> = BTreeMap::new();
        for (parts, blob) in changes {
            match parts.as_slice() {
                [] => {}
                [name] => match blob {
                    Some((id, mode)) => {
                        tb.insert(name, *id, *mode)
                            .map_err(ctx(format!("insert {name}")))?;
                    }
                    None => {
                        if tb.get(name).map_err(ctx("tree lookup"))?.is_some() {
                            tb.remove(name).map_err(ctx(format!("remove {name}")))?;
                        }
                    }
                },
                [dir, rest @ ..] => {
                    by_dir
                        .entry(dir.as_str())
                        .or_default()
                        .insert(rest.to_vec(), *blob);
                }
            }
        }
        for (dir, sub) in by_dir {
            let existing = match tb.get(dir).map_err(ctx("tree lookup"))? {
                Some(e) if e.kind() == Some(ObjectType::Tree) => Some(
                    self.repo
                        .find_tree(e.id())
                        .map_err(ctx(format!("read tree {dir}")))?,
                ),
                _ => None,
            };
            match self.update_tree(existing.as_ref(), &sub)? {
                Some(id) => {
                    tb.insert(dir, id, 0o040000)
                        .map_err(ctx(format!("insert {dir}/")))?;
                }
                None => {
                    if tb.get(dir).map_err(ctx("tree lookup"))?.is_some() {
                        tb.remove(dir).map_err(ctx(format!("remove {dir}/")))?;
                    }
                }
            }
        }
        if tb.is_empty() {
            return Ok(None);
        }
        tb.write().map(Some).map_err(ctx("write tree"))
    }

    /// The tree id of commit `id`.
    pub fn tree_of(&self, id: Oid) -> Result<Oid, Error> {
        Ok(self.commit_tree(id)?.id())
    }

    /// Writes a commit of `tree` with `parent` (no ref moves).
    pub fn commit(
        &self,
        tree: Oid,
        parent: Option<Oid>,
        message: &str,
        who: &Identity,
    ) -> Result<Oid, Error> {
        let sig = Signature::new(&who.name, &who.email, &Time::new(who.time, 0))
            .map_err(ctx("signature"))?;
        let tree = self.repo.find_tree(tree).map_err(ctx("find tree"))?;
        let parent = match parent {
            Some(p) => Some(self.repo.find_commit(p).map_err(ctx("find parent"))?),
            None => None,
        };
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        self.repo
            .commit(None, &sig, &sig, message, &tree, &parents)
            .map_err(ctx("write commit"))
    }

    /// Moves `refname` from `expected` (None: must not exist) to `new`;
    /// fails with [`Error::Conflict`] if it is elsewhere now.
    pub fn update_ref(
        &self,
        refname: &str,
        new: Oid,
        expected: Option<Oid>,
        log: &str,
    ) -> Result<(), Error> {
        // libgit2 compares the old value under the ref's lock. A zero oid
        // means "must not exist"; plain creation (`force = false`) checks
        // existence before taking the lock, so two creators could both win.
        let old = expected.unwrap_or_else(Oid::zero);
        let result = self
            .repo
            .reference_matching(refname, new, true, old, log)
            .map(|_| ());
        result.map_err(|e| match e.code() {
            ErrorCode::Modified | ErrorCode::Exists | ErrorCode::Locked | ErrorCode::NotFound => {
                Error::Conflict {
                    refname: refname.to_string(),
                    expected: expected.map_or("nothing".into(), |o| o.to_string()),
                }
            }
            _ => ctx(format!("update {refname}"))(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_updates_compare_and_swap_including_creation() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        Repository::init(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let repo = Repo::discover(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let who = Identity {
            name: "t".into(),
            email: "t@example.com".into(),
            time: 1,
        };
        let mut files = BTreeMap::new();
        files.insert("a".to_string(), Some(b"1".to_vec()));
        let tree = repo
            .build_tree(None, &files)
            .unwrap_or_else(|e| panic!("{e}"));
        let c1 = repo
            .commit(tree, None, "one", &who)
            .unwrap_or_else(|e| panic!("{e}"));
        let c2 = repo
            .commit(tree, Some(c1), "two", &who)
            .unwrap_or_else(|e| panic!("{e}"));
        let r = "refs/heads/env/dev";
        repo.update_ref(r, c1, None, "create")
            .unwrap_or_else(|e| panic!("{e}"));
        // A second creator, or a writer that read an older tip, loses.
        assert!(matches!(
            repo.update_ref(r, c2, None, "x"),
            Err(Error::Conflict { .. })
        ));
        assert!(matches!(
            repo.update_ref(r, c1, Some(c2), "x"),
            Err(Error::Conflict { .. })
        ));
        repo.update_ref(r, c2, Some(c1), "advance")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(repo.ref_target(r).ok().flatten(), Some(c2));
    }
}
