//! A commit on the current branch made the way git makes one, safe under
//! `kill -9` at any moment: the transaction behind promote, set-image,
//! set-value and rollback.
//!
//! 1. [`Repo::begin`] takes `.git/index.lock` ([`IndexLock`]) and first
//!    finishes or undoes whatever a killed run left (its journal), then
//!    reads HEAD. The lock is held until the end, so no `git add`, `git
//!    commit` or second hydrate run interleaves.
//! 2. [`Transaction::commit`] builds the new tree from HEAD's tree plus the
//!    given blobs (never from other working-tree content), writes the
//!    commit, prepares the new index (only the touched paths change) and
//!    writes a journal naming all of it; then moves the branch by
//!    compare-and-swap. That is the commit point: before it nothing the
//!    user sees has changed; after it the index is switched, then the
//!    working-tree files are replaced (each by a rename), then the index
//!    gets their stat data, and the journal and the lock go.
//! 3. A run killed after the commit point is completed by the next
//!    transaction ([`recover`]): every step is conditional (an index entry
//!    still holding the old blob, a working-tree file still holding the
//!    old bytes), so redoing it is safe. Killed before, the journal is
//!    dropped and nothing happened.
//!
//! The index is written to a file of its own and renamed over
//! `.git/index` while the lock is held (libgit2 would take `index.lock`
//! itself). Working-tree files are written as committed (no eol
//! conversion or smudge filters).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{IndexEntry, IndexTime, ObjectType, Oid};
use serde_json::{json, Value as J};

use super::lock::IndexLock;
use super::{ctx, Error, Identity, Repo};

/// The journal of the transaction under way, in the git directory.
const JOURNAL: &str = "hydrate/transaction.json";

/// A source commit in the making; holds `.git/index.lock`.
pub struct Transaction<'r> {
    repo: &'r Repo,
    lock: IndexLock,
    refname: Option<String>,
    head: Option<Oid>,
    operation: String,
    recovered: Recovered,
}

/// What [`recover`] did with a killed run's journal.
#[derive(Debug, Default)]
struct Recovered {
    /// One sentence per thing done or left to do.
    notes: Vec<String>,
    /// The killed run's operation and the commit it made, when it had
    /// committed (and this run finished its index and working tree).
    committed: Option<(String, Oid)>,
}

/// What a committed transaction did.
#[derive(Debug)]
pub struct Committed {
    /// The new commit (None: nothing was committed, files only).
    pub commit: Option<Oid>,
    /// What could not be finished after the commit point, each a sentence
    /// that says what to do ("... run `git checkout -- FILE`").
    pub remaining: Vec<String>,
}

/// One touched path, as the journal records it.
#[derive(Clone, Debug)]
struct Touched {
    /// Relative to the working directory, `/`-separated, symlinks resolved.
    path: String,
    /// The blob at HEAD.
    old: Oid,
    /// The blob committed.
    new: Oid,
    /// Its tree mode (100644 or 100755).
    mode: u32,
    /// The blob id of the working-tree file's bytes when the run began.
    worktree: Oid,
    /// The temporary file the new bytes are written to before the rename.
    temp: String,
}

impl Repo {
    /// Starts a transaction for `operation` (the command, as words that
    /// identify it: a rerun of the same command passes the same text):
    /// takes `.git/index.lock` (git's message and [`Error::Locked`] when
    /// someone else holds it), completes or undoes a killed run's journal,
    /// and reads HEAD.
    pub fn begin(&self, operation: &str) -> Result<Transaction<'_>, Error> {
        if self.repo.workdir().is_none() {
            return Err(Error::Usage(
                "this repository has no working tree (bare); run hydrate in a clone".into(),
            ));
        }
        let lock = IndexLock::acquire(self.repo.path())?;
        let recovered = recover(self)?;
        let (refname, head) = self.head_branch()?;
        Ok(Transaction {
            repo: self,
            lock,
            refname,
            head,
            operation: operation.to_string(),
            recovered,
        })
    }

    /// HEAD's branch (`refs/heads/…`, None when detached) and commit.
    fn head_branch(&self) -> Result<(Option<String>, Option<Oid>), Error> {
        let head = self.repo.find_reference("HEAD").map_err(ctx("read HEAD"))?;
        let refname = head
            .symbolic_target()
            .filter(|n| n.starts_with("refs/heads/"))
            .map(str::to_string);
        Ok((refname, self.head_id()?))
    }

    /// The path `path` (relative to the working directory) leads to in the
    /// tree of commit `id`, following symbolic links stored in the tree
    /// (mode 120000) component by component, as the file system would. A
    /// link that is absolute or climbs above the repository is
    /// [`Error::Outside`].
    pub fn real_path(&self, id: Oid, path: &str) -> Result<String, Error> {
        let tree = self.commit_tree(id)?;
        let mut todo: Vec<String> = path.split('/').rev().map(str::to_string).collect();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(part) = todo.pop() {
            match part.as_str() {
                "" | "." => continue,
                ".." => {
                    if done.pop().is_none() {
                        return Err(Error::Outside {
                            path: path.to_string(),
                        });
                    }
                    continue;
                }
                _ => {}
            }
            done.push(part);
            let here = done.join("/");
            let entry = match tree.get_path(Path::new(&here)) {
                Ok(e) => e,
                Err(e) if e.code() == git2::ErrorCode::NotFound => {
                    return Err(Error::NotFound { path: here })
                }
                Err(e) => return Err(ctx(format!("look up {here}"))(e)),
            };
            if entry.filemode() != 0o120000 {
                continue;
            }
            hops += 1;
            if hops > 40 {
                return Err(Error::Usage(format!(
                    "{path}: too many levels of symbolic links"
                )));
            }
            let blob = self
                .repo
                .find_blob(entry.id())
                .map_err(ctx(format!("read the link {here}")))?;
            let target = String::from_utf8_lossy(blob.content()).into_owned();
            if target.starts_with('/') {
                return Err(Error::Outside {
                    path: path.to_string(),
                });
            }
            done.pop();
            todo.extend(target.split('/').rev().map(str::to_string));
        }
        Ok(done.join("/"))
    }

    /// The blob id and mode of `path` in the tree of commit `id`.
    pub(super) fn blob_entry(&self, id: Oid, path: &str) -> Result<Option<(Oid, u32)>, Error> {
        let tree = self.commit_tree(id)?;
        match tree.get_path(Path::new(path)) {
            Ok(e) if e.kind() == Some(ObjectType::Blob) => Ok(Some((
                e.id(),
                u32::try_from(e.filemode()).unwrap_or(0o100644),
            ))),
            Ok(_) => Ok(None),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(ctx(format!("look up {path}"))(e)),
        }
    }
}

impl Transaction<'_> {
    /// HEAD's commit when the transaction began.
    pub fn head(&self) -> Option<Oid> {
        self.head
    }

    /// What was done to finish or undo a killed run, one sentence each.
    pub fn recovered(&self) -> &[String] {
        &self.recovered.notes
    }

    /// The commit of a killed run of this same operation that committed
    /// and that this transaction finished: the command is done, and
    /// running it again must not make a second commit (a retried
    /// `rollback --steps 1` would otherwise undo its own rollback).
    pub fn finished_earlier(&self) -> Option<Oid> {
        match &self.recovered.committed {
            Some((op, id)) if *op == self.operation => Some(*id),
            _ => None,
        }
    }

    /// Commits `files` (paths relative to the working directory, symlinks
    /// already resolved with [`Repo::real_path`], each a file at HEAD →
    /// new content) on top of HEAD, switches the index entries and the
    /// working-tree files of exactly those paths, and releases the lock.
    /// With `message` None, nothing is committed: only the working-tree
    /// files are replaced (`--no-commit`).
    pub fn commit(
        self,
        files: &BTreeMap<String, Vec<u8>>,
        message: Option<&str>,
        who: &Identity,
    ) -> Result<Committed, Error> {
        let head = self.head.ok_or_else(|| {
            Error::Usage("HEAD has no commit yet; commit the sources first".into())
        })?;
        let refname = match (&self.refname, message) {
            (Some(r), _) => Some(r.clone()),
            (None, None) => None,
            (None, Some(_)) => {
                return Err(Error::Usage(
                    "HEAD is detached; check out a branch to commit on".into(),
                ))
            }
        };
        let workdir = self.workdir()?;
        let mut touched = Vec::new();
        for (path, bytes) in files {
            let (old, mode) = self
                .repo
                .blob_entry(head, path)?
                .ok_or_else(|| Error::NotFound { path: path.clone() })?;
            let on_disk = std::fs::read(workdir.join(path)).map_err(|e| Error::Io {
                what: format!("read {path}"),
                source: e,
            })?;
            let new = if message.is_some() {
                self.repo
                    .repo
                    .blob(bytes)
                    .map_err(ctx(format!("write blob {path}")))?
            } else {
                Oid::hash_object(ObjectType::Blob, bytes).map_err(ctx("hash"))?
            };
            touched.push(Touched {
                path: path.clone(),
                old,
                new,
                mode,
                worktree: Oid::hash_object(ObjectType::Blob, &on_disk).map_err(ctx("hash"))?,
                temp: temp_name(path, self.lock.nonce()),
            });
        }
        let Some(message) = message else {
            write_journal(self.repo, &self.operation, None, &touched)?;
            let mut remaining = Vec::new();
            write_worktree(&workdir, &touched, files, &mut remaining);
            self.finish()?;
            return Ok(Committed {
                commit: None,
                remaining,
            });
        };
        let blobs: BTreeMap<String, (Oid, u32)> = touched
            .iter()
            .map(|t| (t.path.clone(), (t.new, t.mode)))
            .collect();
        let tree = self.repo.tree_with(head, &blobs)?;
        let commit = self.repo.commit(tree, Some(head), message, who)?;
        let refname = refname.unwrap_or_default();
        let mut index = StagedIndex::prepare(self.repo, self.lock.nonce(), &touched)?;
        write_journal(
            self.repo,
            &self.operation,
            Some((&refname, head, commit)),
            &touched,
        )?;
        if let Err(e) = self
            .repo
            .update_ref(&refname, commit, Some(head), "hydrate: commit")
        {
            index.discard();
            remove_journal(self.repo)?;
            return Err(e);
        }
        // The commit point is behind us: from here on, report what is left
        // instead of failing.
        let mut remaining = Vec::new();
        let short = &commit.to_string()[..12];
        if let Err(e) = index.install() {
            remaining.push(format!(
                "committed {short}; the index was not updated ({e}): run `git reset -q` to match it to HEAD"
            ));
        }
        let written = write_worktree(&workdir, &touched, files, &mut remaining);
        if let Err(e) = index.refresh(&workdir, &written) {
            remaining.push(format!("the index's file times were not refreshed: {e}"));
        }
        for r in &mut remaining {
            if !r.starts_with("committed") {
                *r = format!("committed {short}; {r}");
            }
        }
        self.finish()?;
        Ok(Committed {
            commit: Some(commit),
            remaining,
        })
    }

    /// Drops the transaction without changing anything.
    #[cfg(test)]
    pub fn abort(self) -> Result<(), Error> {
        self.lock.release()
    }

    fn workdir(&self) -> Result<PathBuf, Error> {
        self.repo
            .workdir()
            .ok_or_else(|| Error::Usage("this repository has no working tree".into()))
    }

    fn finish(self) -> Result<(), Error> {
        remove_journal(self.repo)?;
        self.lock.release()
    }
}

impl Repo {
    /// The tree of commit `base` with `blobs` (path → blob id and mode) put
    /// in place, directories created as needed.
    pub(super) fn tree_with(
        &self,
        base: Oid,
        blobs: &BTreeMap<String, (Oid, u32)>,
    ) -> Result<Oid, Error> {
        let changes = blobs
            .iter()
            .map(|(p, (id, mode))| {
                let mode = i32::try_from(*mode).unwrap_or(0o100644);
                (
                    p.split('/').map(str::to_string).collect(),
                    Some((*id, mode)),
                )
            })
            .collect();
        let base = self.commit_tree(base)?;
        let id = self.update_tree(Some(&base), &changes)?;
        match id {
            Some(id) => Ok(id),
            None => {
                let tb = self.repo.treebuilder(None).map_err(ctx("new tree"))?;
                tb.write().map_err(ctx("write empty tree"))
            }
        }
    }
}

/// `dir/.name.hydrate-<nonce>`: where the new bytes of `path` are written
/// before the rename.
fn temp_name(path: &str, nonce: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/.{name}.hydrate-{nonce}"),
        None => format!(".{path}.hydrate-{nonce}"),
    }
}

/// Replaces each working-tree file that still holds the bytes the run
/// began with; returns the paths written. Each is written to its temp
/// file with the old file's permissions and renamed over it.
fn write_worktree(
    workdir: &Path,
    touched: &[Touched],
    files: &BTreeMap<String, Vec<u8>>,
    remaining: &mut Vec<String>,
) -> Vec<String> {
    let mut written = Vec::new();
    for t in touched {
        let Some(bytes) = files.get(&t.path) else {
            continue;
        };
        match replace_file(workdir, t, bytes) {
            Ok(true) => written.push(t.path.clone()),
            Ok(false) => remaining.push(format!(
                "the working tree of {} changed while hydrate ran and was not updated: run `git checkout -- {}` to get the committed file",
                t.path, t.path
            )),
            Err(e) => remaining.push(format!(
                "the working tree of {} was not updated ({e}): run `git checkout -- {}`",
                t.path, t.path
            )),
        }
    }
    written
}

/// Writes `bytes` over `t.path` if the file still holds what it held when
/// the run began (or already holds `bytes`: true). False when it holds
/// something else.
fn replace_file(workdir: &Path, t: &Touched, bytes: &[u8]) -> std::io::Result<bool> {
    let path = workdir.join(&t.path);
    let now = std::fs::read(&path)?;
    let id = Oid::hash_object(ObjectType::Blob, &now).map_err(std::io::Error::other)?;
    if now == bytes {
        return Ok(true);
    }
    if id != t.worktree {
        return Ok(false);
    }
    let temp = workdir.join(&t.temp);
    let perms = std::fs::metadata(&path)?.permissions();
    let result = (|| {
        std::fs::write(&temp, bytes)?;
        std::fs::set_permissions(&temp, perms)?;
        std::fs::rename(&temp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map(|()| true)
}

/// The next index, written beside `.git/index` and renamed over it.
struct StagedIndex {
    index: git2::Index,
    file: PathBuf,
    target: PathBuf,
    touched: Vec<(String, Oid, u32)>,
}

impl StagedIndex {
    /// Reads `.git/index` into a copy and points the touched entries at
    /// their new blobs (stat data zeroed, so git compares contents until
    /// [`StagedIndex::refresh`]). An entry that does not hold the HEAD
    /// blob means staged changes: refused (nothing has changed yet).
    fn prepare(repo: &Repo, nonce: &str, touched: &[Touched]) -> Result<StagedIndex, Error> {
        let mut s = StagedIndex::copy_of(repo, nonce)?;
        for t in touched {
            let entry = s.index.get_path(Path::new(&t.path), 0);
            if entry.as_ref().is_some_and(|e| e.id != t.old) {
                s.discard();
                return Err(Error::Usage(format!(
                    "{} has staged changes; commit or unstage them first",
                    t.path
                )));
            }
            s.touched.push((t.path.clone(), t.new, t.mode));
        }
        s.point_at_new(None)?;
        s.index.write().map_err(ctx("write the new index"))?;
        Ok(s)
    }

    /// A copy of `.git/index` in `.git/hydrate/index-<name>`, opened.
    fn copy_of(repo: &Repo, name: &str) -> Result<StagedIndex, Error> {
        let target = repo.repo.path().join("index");
        let file = repo.repo.path().join(format!("hydrate/index-{name}"));
        let io = |what: String| move |e| Error::Io { what, source: e };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
        }
        match std::fs::copy(&target, &file) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(format!("copy {}", target.display()))(e)),
        }
        let index = git2::Index::open(&file).map_err(ctx("read the index"))?;
        Ok(StagedIndex {
            index,
            file,
            target,
            touched: Vec::new(),
        })
    }

    /// Sets the touched entries to their new blobs, with the stat data of
    /// the working-tree file where `stats` has it.
    fn point_at_new(&mut self, stats: Option<(&Path, &[String])>) -> Result<(), Error> {
        for (path, id, mode) in &self.touched {
            let mut e = entry(path, *id, *mode);
            if let Some((workdir, written)) = stats {
                if !written.contains(path) {
                    continue;
                }
                if let Ok(md) = std::fs::symlink_metadata(workdir.join(path)) {
                    stat_into(&mut e, &md);
                }
            }
            self.index.add(&e).map_err(ctx(format!("stage {path}")))?;
        }
        Ok(())
    }

    fn install(&mut self) -> Result<(), Error> {
        std::fs::rename(&self.file, &self.target).map_err(|e| Error::Io {
            what: format!("rename the new index over {}", self.target.display()),
            source: e,
        })
    }

    /// Gives the entries of the files just written their stat data, so
    /// `git status` need not hash them.
    fn refresh(&mut self, workdir: &Path, written: &[String]) -> Result<(), Error> {
        self.point_at_new(Some((workdir, written)))?;
        self.write_and_install()
    }

    fn write_and_install(&mut self) -> Result<(), Error> {
        self.index.write().map_err(ctx("write the index"))?;
        self.install()
    }

    fn discard(&self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn entry(path: &str, id: Oid, mode: u32) -> IndexEntry {
    let zero = IndexTime::new(0, 0);
    IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: u16::try_from(path.len().min(0xfff)).unwrap_or(0xfff),
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

#[cfg(unix)]
fn stat_into(e: &mut IndexEntry, md: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    // git keeps the low 32 bits of each (read-cache.c, fill_stat_data).
    let t = |s: i64, ns: i64| IndexTime::new(s as i32, u32::try_from(ns).unwrap_or(0));
    e.ctime = t(md.ctime(), md.ctime_nsec());
    e.mtime = t(md.mtime(), md.mtime_nsec());
    e.dev = md.dev() as u32;
    e.ino = md.ino() as u32;
    e.uid = md.uid();
    e.gid = md.gid();
    e.file_size = md.size() as u32;
}

#[cfg(not(unix))]
fn stat_into(e: &mut IndexEntry, md: &std::fs::Metadata) {
    e.file_size = u32::try_from(md.len()).unwrap_or(u32::MAX);
}

/// Writes the journal (atomically: a temp file renamed into place).
fn write_journal(
    repo: &Repo,
    operation: &str,
    commit: Option<(&str, Oid, Oid)>,
    touched: &[Touched],
) -> Result<(), Error> {
    let files: Vec<J> = touched
        .iter()
        .map(|t| {
            json!({
                "path": t.path, "old": t.old.to_string(), "new": t.new.to_string(),
                "mode": t.mode, "worktree": t.worktree.to_string(), "temp": t.temp,
            })
        })
        .collect();
    let doc = json!({
        "pid": std::process::id(),
        "operation": operation,
        "ref": commit.map(|c| c.0),
        "old": commit.map(|c| c.1.to_string()),
        "new": commit.map(|c| c.2.to_string()),
        "files": files,
    });
    let path = repo.repo.path().join(JOURNAL);
    let tmp = path.with_extension("json.tmp");
    let io = |what: String| move |e| Error::Io { what, source: e };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    }
    std::fs::write(&tmp, doc.to_string()).map_err(io(format!("write {}", tmp.display())))?;
    std::fs::rename(&tmp, &path).map_err(io(format!("write {}", path.display())))
}

fn remove_journal(repo: &Repo) -> Result<(), Error> {
    let path = repo.repo.path().join(JOURNAL);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io {
            what: format!("remove {}", path.display()),
            source: e,
        }),
    }
}

/// Finishes or undoes the run a journal describes (called under the lock,
/// so that run is gone). Returns what was done, for the user.
fn recover(repo: &Repo) -> Result<Recovered, Error> {
    let path = repo.repo.path().join(JOURNAL);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            remove_stale_indexes(repo);
            return Ok(Recovered::default());
        }
        Err(e) => {
            return Err(Error::Io {
                what: format!("read {}", path.display()),
                source: e,
            })
        }
    };
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("this repository has no working tree".into()))?;
    let doc: J = serde_json::from_str(&text).unwrap_or(J::Null);
    let oid = |v: &J| v.as_str().and_then(|s| Oid::from_str(s).ok());
    let touched: Vec<Touched> = doc["files"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| {
                    Some(Touched {
                        path: f["path"].as_str()?.to_string(),
                        old: oid(&f["old"])?,
                        new: oid(&f["new"])?,
                        mode: u32::try_from(f["mode"].as_u64()?).ok()?,
                        worktree: oid(&f["worktree"])?,
                        temp: f["temp"].as_str()?.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = Recovered::default();
    let notes = &mut out.notes;
    for t in &touched {
        if confined(&t.temp) {
            let _ = std::fs::remove_file(workdir.join(&t.temp));
        }
    }
    let (refname, old, new) = (doc["ref"].as_str(), oid(&doc["old"]), oid(&doc["new"]));
    if let (Some(refname), Some(old), Some(new)) = (refname, old, new) {
        remove_our_ref_lock(repo, refname, new, notes);
        let now = repo.ref_target(refname)?;
        if now == Some(new) {
            let mut remaining = Vec::new();
            let done = roll_forward(repo, &workdir, &touched, &mut remaining);
            notes.push(format!(
                "finished commit {} of a hydrate run that was killed ({} file(s) updated)",
                &new.to_string()[..12],
                done
            ));
            notes.extend(remaining);
            let op = doc["operation"].as_str().unwrap_or_default().to_string();
            out.committed = Some((op, new));
        } else if now == Some(old) {
            notes.push("undid a hydrate run that was killed before it committed".into());
        } else {
            notes.push(format!(
                "dropped the journal of a killed hydrate run: {refname} has moved on since"
            ));
        }
    }
    remove_stale_indexes(repo);
    let _ = std::fs::remove_file(&path);
    Ok(out)
}

/// A run killed while libgit2 moved the branch leaves `<ref>.lock`
/// behind (libgit2, like git, creates it exclusively, writes the new id
/// into it and renames it over the ref). The journal was written just
/// before, so a lock holding the journal's new commit, or nothing yet, is
/// that run's: removed, after which the ref says whether it moved. A lock
/// holding anything else belongs to someone else and stays.
fn remove_our_ref_lock(repo: &Repo, refname: &str, new: Oid, notes: &mut Vec<String>) {
    if !confined(refname) {
        return;
    }
    let lock = repo.repo.commondir().join(format!("{refname}.lock"));
    let Ok(text) = std::fs::read_to_string(&lock) else {
        return;
    };
    let held = text.trim();
    let ours = held.is_empty() || held == new.to_string();
    if ours && std::fs::remove_file(&lock).is_ok() {
        notes.push(format!(
            "removed {} that the killed run left while it moved {refname}",
            lock.display()
        ));
    }
}

/// Redoes the index and working-tree steps of a committed run; returns how
/// many files it wrote. An index entry is moved only if it still holds the
/// old blob, a file only if it still holds the bytes the run began with.
fn roll_forward(
    repo: &Repo,
    workdir: &Path,
    touched: &[Touched],
    remaining: &mut Vec<String>,
) -> usize {
    let blobs: BTreeMap<String, Vec<u8>> = touched
        .iter()
        .filter_map(|t| {
            let b = repo.repo.find_blob(t.new).ok()?;
            Some((t.path.clone(), b.content().to_vec()))
        })
        .collect();
    let mut index = match StagedIndex::copy_of(repo, "recover") {
        Ok(i) => Some(i),
        Err(e) => {
            remaining.push(format!(
                "the index was not updated ({e}): run `git reset -q`"
            ));
            None
        }
    };
    if let Some(i) = &mut index {
        i.touched = touched
            .iter()
            .filter(|t| {
                i.index
                    .get_path(Path::new(&t.path), 0)
                    .is_some_and(|e| e.id == t.old || e.id == t.new)
            })
            .map(|t| (t.path.clone(), t.new, t.mode))
            .collect();
        if let Err(e) = i.point_at_new(None).and_then(|()| i.write_and_install()) {
            remaining.push(format!(
                "the index was not updated ({e}): run `git reset -q`"
            ));
            index = None;
        }
    }
    let written = write_worktree(workdir, touched, &blobs, remaining);
    if let Some(i) = &mut index {
        let _ = i.refresh(workdir, &written);
    }
    written.len()
}

/// Removes index copies that killed runs left in `.git/hydrate/`.
fn remove_stale_indexes(repo: &Repo) {
    let dir = repo.repo.path().join("hydrate");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with("index-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A journal path names a file inside the working tree.
fn confined(path: &str) -> bool {
    !path.starts_with('/') && !path.split('/').any(|p| p == ".." || p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Identity {
        Identity {
            name: "t".into(),
            email: "t@example.com".into(),
            time: 1,
        }
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// A repository with one committed file, `a.yaml`.
    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        git(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.yaml"), "tag: 1\n").unwrap_or_else(|e| panic!("{e}"));
        git(dir.path(), &["add", "a.yaml"]);
        git(
            dir.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@x",
                "commit",
                "-q",
                "-m",
                "one",
            ],
        );
        dir
    }

    /// Runs a transaction up to its commit point and "dies" there: the
    /// branch has moved, the index and the working tree have not, the
    /// journal and the lock (now naming a dead process) are left behind.
    fn die_after_commit_point(dir: &Path, op: &str) -> Oid {
        let repo = Repo::discover(dir).unwrap_or_else(|e| panic!("{e}"));
        let tx = repo.begin(op).unwrap_or_else(|e| panic!("{e}"));
        let head = tx.head().unwrap_or_else(|| panic!("no HEAD"));
        let new = repo
            .repo
            .blob(b"tag: 2\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let old = repo
            .blob_entry(head, "a.yaml")
            .ok()
            .flatten()
            .map(|(id, _)| id)
            .unwrap_or_else(|| panic!("no a.yaml"));
        let touched = vec![Touched {
            path: "a.yaml".into(),
            old,
            new,
            mode: 0o100644,
            worktree: old,
            temp: temp_name("a.yaml", tx.lock.nonce()),
        }];
        let blobs = BTreeMap::from([("a.yaml".to_string(), (new, 0o100644))]);
        let tree = repo
            .tree_with(head, &blobs)
            .unwrap_or_else(|e| panic!("{e}"));
        let commit = repo
            .commit(tree, Some(head), "two", &who())
            .unwrap_or_else(|e| panic!("{e}"));
        write_journal(&repo, op, Some(("refs/heads/main", head, commit)), &touched)
            .unwrap_or_else(|e| panic!("{e}"));
        repo.update_ref("refs/heads/main", commit, Some(head), "t")
            .unwrap_or_else(|e| panic!("{e}"));
        // The process dies: nothing runs its drop, and its pid is gone.
        std::mem::forget(tx);
        std::fs::write(
            dir.join(".git/index.lock"),
            "hydrate-index-lock pid=4194999 start=1 nonce=dead\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        commit
    }

    #[test]
    fn the_next_run_finishes_a_run_killed_after_its_commit_point() {
        let dir = repo();
        let commit = die_after_commit_point(dir.path(), "bump a");
        // git itself refuses to work on: the lock is there.
        assert!(dir.path().join(".git/index.lock").exists());
        let repo = Repo::discover(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let tx = repo.begin("bump a").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tx.finished_earlier(), Some(commit));
        assert!(
            tx.recovered()[0].starts_with("finished commit"),
            "{:?}",
            tx.recovered()
        );
        tx.abort().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.yaml")).unwrap_or_default(),
            "tag: 2\n"
        );
        assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
        assert!(!dir.path().join(".git/index.lock").exists());
        assert!(!dir.path().join(".git/hydrate/transaction.json").exists());
    }

    #[test]
    fn a_ref_lock_left_by_a_run_killed_while_moving_the_branch_is_removed() {
        let dir = repo();
        let d = dir.path();
        let commit = die_after_commit_point(d, "bump a");
        // As if killed inside the ref update: the branch not moved yet, its
        // lock holding the new id.
        let first = git(d, &["rev-parse", "HEAD~1"]);
        git(d, &["update-ref", "refs/heads/main", &first]);
        std::fs::write(d.join(".git/refs/heads/main.lock"), format!("{commit}\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let repo = Repo::discover(d).unwrap_or_else(|e| panic!("{e}"));
        let tx = repo.begin("bump a").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tx.finished_earlier(), None, "it had not committed");
        tx.abort().unwrap_or_else(|e| panic!("{e}"));
        assert!(!d.join(".git/refs/heads/main.lock").exists());
        assert_eq!(git(d, &["rev-parse", "HEAD"]), first);
        assert_eq!(git(d, &["status", "--porcelain"]), "");
        // Someone else's ref lock stays.
        std::fs::write(d.join(".git/refs/heads/main.lock"), "0123\n")
            .unwrap_or_else(|e| panic!("{e}"));
        die_after_commit_point_without_ref(d);
        let tx = repo.begin("bump a").unwrap_or_else(|e| panic!("{e}"));
        tx.abort().unwrap_or_else(|e| panic!("{e}"));
        assert!(d.join(".git/refs/heads/main.lock").exists());
    }

    /// A journal and a dead run's lock, the branch never moved.
    fn die_after_commit_point_without_ref(dir: &Path) {
        let repo = Repo::discover(dir).unwrap_or_else(|e| panic!("{e}"));
        let head = repo
            .head_id()
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("HEAD"));
        write_journal(&repo, "bump a", Some(("refs/heads/main", head, head)), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.join(".git/index.lock"),
            "hydrate-index-lock pid=4194999 start=1 nonce=dead\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn another_operation_is_not_told_the_killed_run_was_its_own() {
        let dir = repo();
        die_after_commit_point(dir.path(), "bump a");
        let repo = Repo::discover(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let tx = repo
            .begin("something else")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tx.finished_earlier(), None);
        assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    }

    #[test]
    fn paths_resolve_through_links_in_the_tree_and_not_out_of_it() {
        let dir = repo();
        let d = dir.path();
        std::fs::create_dir_all(d.join("x")).unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("../a.yaml", d.join("x/link.yaml"))
                .unwrap_or_else(|e| panic!("{e}"));
            std::os::unix::fs::symlink("x", d.join("dir")).unwrap_or_else(|e| panic!("{e}"));
            std::os::unix::fs::symlink("../../etc/passwd", d.join("x/out"))
                .unwrap_or_else(|e| panic!("{e}"));
            git(d, &["add", "-A"]);
            git(
                d,
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@x",
                    "commit",
                    "-q",
                    "-m",
                    "links",
                ],
            );
            let repo = Repo::discover(d).unwrap_or_else(|e| panic!("{e}"));
            let head = repo
                .head_id()
                .ok()
                .flatten()
                .unwrap_or_else(|| panic!("HEAD"));
            let real = |p: &str| repo.real_path(head, p);
            assert_eq!(real("x/link.yaml").ok().as_deref(), Some("a.yaml"));
            assert_eq!(real("dir/link.yaml").ok().as_deref(), Some("a.yaml"));
            assert!(matches!(real("x/out"), Err(Error::Outside { .. })));
            assert!(matches!(real("nope.yaml"), Err(Error::NotFound { .. })));
        }
    }
}
