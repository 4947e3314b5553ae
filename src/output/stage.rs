//! Streaming an environment's directory output: opened before the renders
//! start, a [`Stage`] takes each app's files as its render finishes,
//! writes the ones that differ from the live directory into the staging
//! tree (`swap`'s `.<name>.hydrate-new-<pid>` beside it, or the spare tree
//! the last switch set aside, claimed: `spare`) and keeps only
//! their paths, hashes and how they compare with what is there, so that no
//! rendered byte waits in memory for the all-or-nothing write. Nothing is
//! visible until [`super::dir::DirPlan::apply`] switches the tree in; a
//! stage dropped before that (a failed render, a refused plan) removes what
//! it staged and the directories it created for it. It decides nothing
//! about ownership or pruning (`dir` does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::dir::{read_owned, read_tree, target, tree_of_stats, Old};
use super::files::{content_hash, is_safe_path, Owned};
use super::{spare, swap, Error};
use crate::env::cache::Listing;

/// How a staged file compares with the file at its path in the live
/// directory.
#[derive(Debug)]
pub(super) enum Existing {
    /// No regular file there.
    Absent,
    /// A file with exactly these bytes (it is hard-linked, not written).
    Same,
    /// A file with other bytes.
    Differs,
    /// A file that could not be read.
    Unreadable(std::io::Error),
}

/// One staged file.
#[derive(Debug)]
pub(super) struct StagedFile {
    /// The app it belongs to.
    pub app: String,
    /// [`content_hash`] of its bytes.
    pub hash: String,
    /// How it compares with the live directory.
    pub existing: Existing,
}

/// What the stage has taken so far.
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// app → its files (an app that rendered no file is here, empty).
    pub apps: BTreeMap<String, BTreeSet<String>>,
    /// path → the file.
    pub files: BTreeMap<String, StagedFile>,
    /// Write failures, by path (the first is reported).
    pub errors: BTreeMap<String, Error>,
}

/// Directories made to hold staging trees, shared by every stage of one
/// run. Several environments' stages can share a parent one of them made
/// (`rendered/` for `rendered/dev` and `rendered/prod`); a stage alone
/// cannot remove it while the others' staging trees are still inside, so
/// the directories are removed, innermost first and only if empty, when
/// the last stage holding them is dropped.
#[derive(Debug, Default)]
pub struct MadeDirs(Mutex<Vec<PathBuf>>);

impl Drop for MadeDirs {
    fn drop(&mut self) {
        let dirs = self.0.get_mut().unwrap_or_else(PoisonError::into_inner);
        for dir in dirs.iter().rev() {
            // Not empty: an installed output (or a user's file) is there.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// What a run knows of an output directory's trees without reading them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known<'a> {
    /// The live tree as a record listed it, each entry found again with
    /// its stat this run (see [`Stage::open_with`]).
    pub live: Option<&'a Listing>,
    /// The spare tree as the run that set it aside listed it (the live
    /// tree it replaced): not checked yet; the plan states its directories
    /// before it trusts the list (`spare::walk_listed`).
    pub spare: Option<&'a Listing>,
}

/// One environment's directory output being streamed.
#[derive(Debug)]
pub struct Stage {
    /// The output directory.
    pub(super) root: PathBuf,
    /// What is in it now.
    pub(super) old: BTreeMap<PathBuf, Old>,
    /// Its ownership manifest.
    pub(super) owned: Owned,
    /// What recovery did, and ownership entries ignored.
    pub(super) warnings: Vec<String>,
    /// The staging tree (None for `--check`: nothing is written).
    pub(super) staging: Option<PathBuf>,
    /// Where the spare tree of this directory lives (`spare::home`);
    /// None when it can have none.
    pub(super) spare_home: Option<PathBuf>,
    /// Whether the staging tree is a claimed spare tree (it then holds an
    /// older tree that the plan changes into the new one, instead of
    /// starting empty).
    pub(super) reused: bool,
    /// What the claimed spare tree held when it was set aside, as the run
    /// that set it aside knew it ([`Known::spare`]): its entries and the
    /// young ones.
    pub(super) spare_listed: Option<Listing>,
    /// Whether `old` was taken from [`Known::live`] (not read): then the
    /// same list describes the tree once the switch sets it aside.
    pub(super) old_listed: bool,
    /// Directories created to hold staging trees (this one's and, when
    /// opened with [`Stage::open_with`], the other stages' of the run).
    made: Arc<MadeDirs>,
    state: Mutex<Staged>,
    /// Set once the staging tree has been switched in.
    installed: bool,
}

impl Stage {
    /// Opens `dir` (relative to `base`) for streaming, after the checks
    /// [`target`] makes. With `write` (not for `--check`), first finishes
    /// or undoes what a killed run left beside the directory, then creates
    /// the staging tree.
    #[cfg(test)]
    pub fn open(base: &Path, dir: &Path, write: bool) -> Result<Stage, Error> {
        Stage::open_with(base, dir, write, Arc::default(), Known::default())
    }

    /// [`Stage::open`], recording the directories it makes in `made`,
    /// shared with the run's other stages. `known`: the directory's every
    /// entry and its `lstat`, as [`super::stat_tree`] listed it in an
    /// earlier run and this run found each of them again unchanged
    /// ([`super::tree_fresh`]); the tree is then taken from it instead of
    /// read, but for the directories too young to vouch for their entries
    /// (a one-base run at 2,000 apps spent a tenth of its time walking the
    /// unchanged trees of the environments it rewrites).
    pub fn open_with(
        base: &Path,
        dir: &Path,
        write: bool,
        made: Arc<MadeDirs>,
        known: Known<'_>,
    ) -> Result<Stage, Error> {
        let root = target(base, dir)?;
        let mut warnings = if write {
            swap::recover(&root)?
        } else {
            Vec::new()
        };
        // A recovery that changed anything beside the directory may have
        // put a tree back in its place: then it is read.
        let listed = known
            .live
            .filter(|_| warnings.is_empty())
            .and_then(|tree| tree_of_stats(&root, tree));
        let old_listed = listed.is_some();
        let old = match listed {
            Some(old) => old,
            None => read_tree(&root)?,
        };
        let (owned, rejected) = read_owned(&root, &old);
        for p in rejected {
            warnings.push(format!(
                "{}: ownership entry {p:?} is not a relative path inside the directory; ignored",
                root.join(super::OWNED_PATH).display()
            ));
        }
        let mut stage = Stage {
            spare_home: spare::home(base, dir),
            reused: false,
            spare_listed: None,
            old_listed,
            root,
            old,
            owned,
            warnings,
            staging: None,
            made,
            state: Mutex::new(Staged::default()),
            installed: false,
        };
        if write {
            let claimed = match (&stage.spare_home, stage.old.is_empty()) {
                (Some(home), false) => spare::claim(home, &stage.root),
                _ => None,
            };
            match claimed {
                Some(tree) => {
                    stage.staging = Some(tree);
                    stage.reused = true;
                    stage.spare_listed = known.spare.cloned();
                }
                None => stage.create_staging()?,
            }
        }
        Ok(stage)
    }

    /// Creates the empty staging tree (with the directory's mode, so a
    /// group-writable output stays so), remembering which of its parents
    /// did not exist.
    fn create_staging(&mut self) -> Result<(), Error> {
        let staging = swap::staging(&self.root)?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if let Some(parent) = staging.parent() {
            let mut missing: Vec<PathBuf> = parent
                .ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .take_while(|a| std::fs::symlink_metadata(a).is_err())
                .map(Path::to_path_buf)
                .collect();
            missing.reverse();
            std::fs::create_dir_all(parent).map_err(io(parent))?;
            let mut made = self.made.0.lock().unwrap_or_else(PoisonError::into_inner);
            made.extend(missing);
        }
        std::fs::create_dir(&staging).map_err(io(&staging))?;
        self.staging = Some(staging.clone());
        if let Ok(meta) = std::fs::metadata(&self.root) {
            std::fs::set_permissions(&staging, meta.permissions()).map_err(io(&staging))?;
        }
        Ok(())
    }

    /// Takes app `app`'s files (paths relative to the output directory):
    /// each is compared with the live file at its path and, unless equal,
    /// written to the staging tree. Safe to call from several threads; a
    /// failure is kept and reported when the plan is made.
    pub fn add(&self, app: &str, files: &BTreeMap<String, Vec<u8>>) {
        let mut staged = Vec::with_capacity(files.len());
        let mut errors = Vec::new();
        for (path, bytes) in files {
            if !is_safe_path(path) {
                errors.push((
                    path.clone(),
                    Error::Target {
                        path: self.root.join(path),
                        reason: format!(
                            "app {app}'s file {path:?} is not a relative path inside the directory"
                        ),
                    },
                ));
                continue;
            }
            let existing = match self.old.get(Path::new(path)) {
                Some(Old::File { .. }) => match std::fs::read(self.root.join(path)) {
                    Ok(old) if old == *bytes => Existing::Same,
                    Ok(_) => Existing::Differs,
                    Err(e) => Existing::Unreadable(e),
                },
                _ => Existing::Absent,
            };
            if let (Some(staging), false) = (&self.staging, matches!(existing, Existing::Same)) {
                // A spare tree's file may be a hard link of the live one:
                // it is replaced, never written through.
                let cleared = match self.reused {
                    true => spare::clear_way(staging, Path::new(path)),
                    false => Ok(()),
                };
                if let Err(e) = cleared.and_then(|()| write_new(&staging.join(path), bytes)) {
                    errors.push((path.clone(), e));
                }
            }
            staged.push((
                path.clone(),
                StagedFile {
                    app: app.to_string(),
                    hash: content_hash(bytes),
                    existing,
                },
            ));
        }
        self.took(app, staged, errors);
    }

    /// Takes app `app`'s files as the live directory holds them: each
    /// `(path, hash)` of `files` is known to be there with the content
    /// `hash` names (a settled record's stats vouch for it), so nothing is
    /// read or written; the plan carries the files into the new tree. A
    /// file that is not there after all fails the plan.
    pub fn keep(&self, app: &str, files: &[(String, String)]) {
        let staged: Vec<(String, StagedFile)> = files
            .iter()
            .map(|(path, hash)| {
                let existing = match (is_safe_path(path), self.old.get(Path::new(path))) {
                    (true, Some(Old::File { .. })) => Existing::Same,
                    _ => Existing::Unreadable(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "a file this run found unchanged is gone",
                    )),
                };
                let file = StagedFile {
                    app: app.to_string(),
                    hash: hash.clone(),
                    existing,
                };
                (path.clone(), file)
            })
            .collect();
        self.took(app, staged, Vec::new());
    }

    /// Keeps what was staged of app `app` and the write failures.
    fn took(&self, app: &str, staged: Vec<(String, StagedFile)>, errors: Vec<(String, Error)>) {
        let mut state = self.lock();
        let paths = state.apps.entry(app.to_string()).or_default();
        paths.extend(staged.iter().map(|(p, _)| p.clone()));
        state.files.extend(staged);
        state.errors.extend(errors);
    }

    /// What has been staged; the first write failure, if any.
    pub(super) fn take(&mut self) -> Result<Staged, Error> {
        let mut staged = std::mem::take(&mut *self.lock());
        match std::mem::take(&mut staged.errors).into_values().next() {
            Some(e) => Err(e),
            None => Ok(staged),
        }
    }

    /// Records that the staging tree is now the live directory.
    pub(super) fn installed(&mut self) {
        self.installed = true;
    }

    fn lock(&self) -> MutexGuard<'_, Staged> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Stage {
    /// A stage never switched in leaves nothing behind: its staging tree
    /// and the (empty) directories made for it are removed; a claimed
    /// spare tree goes back home (whatever it now holds: the next run
    /// checks it entry by entry).
    fn drop(&mut self) {
        if self.installed {
            return;
        }
        if let Some(s) = &self.staging {
            match (&self.spare_home, self.reused) {
                (Some(home), true) => spare::release(s, home),
                _ if std::fs::symlink_metadata(s).is_ok() => {
                    let _ = std::fs::remove_dir_all(s);
                }
                _ => {}
            }
        }
        // The directories made for it go with the run's last stage
        // (`MadeDirs`), when every staging tree in them is gone.
    }
}

/// Writes a new file of the staging tree, creating its parents.
fn write_new(to: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(to, bytes).map_err(io(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_stage_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let s = Stage::open(tmp.path(), Path::new("out/dev"), true).unwrap();
        let files = BTreeMap::from([("web/m.yaml".to_string(), b"a\n".to_vec())]);
        s.add("web", &files);
        let staging = s.staging.clone().unwrap();
        assert_eq!(std::fs::read(staging.join("web/m.yaml")).unwrap(), b"a\n");
        drop(s);
        assert!(!tmp.path().join("out").exists(), "created parents removed");
    }

    /// Two environments' stages under one parent the first one made: the
    /// parent goes when both are dropped, in either order.
    #[test]
    fn a_parent_made_for_several_stages_goes_with_the_last() {
        for first_dropped in [0, 1] {
            let tmp = tempfile::tempdir().unwrap();
            let made = Arc::new(MadeDirs::default());
            let mut stages: Vec<Stage> = ["out/dev", "out/prod"]
                .iter()
                .map(|d| {
                    Stage::open_with(
                        tmp.path(),
                        Path::new(d),
                        true,
                        Arc::clone(&made),
                        Known::default(),
                    )
                    .unwrap()
                })
                .collect();
            drop(made);
            drop(stages.remove(first_dropped));
            assert!(
                tmp.path().join("out").exists(),
                "still holds a staging tree"
            );
            drop(stages);
            assert!(!tmp.path().join("out").exists(), "made parent removed");
        }
    }

    #[test]
    fn an_unchanged_file_is_not_written_and_check_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = tmp.path().join("out/dev");
        std::fs::create_dir_all(dev.join("web")).unwrap();
        std::fs::write(dev.join("web/m.yaml"), "a\n").unwrap();
        let mut s = Stage::open(tmp.path(), Path::new("out/dev"), true).unwrap();
        let files = BTreeMap::from([
            ("web/m.yaml".to_string(), b"a\n".to_vec()),
            ("web/n.yaml".to_string(), b"b\n".to_vec()),
        ]);
        s.add("web", &files);
        let staging = s.staging.clone().unwrap();
        assert!(!staging.join("web/m.yaml").exists());
        assert!(staging.join("web/n.yaml").is_file());
        let staged = s.take().unwrap();
        assert!(matches!(
            staged.files["web/m.yaml"].existing,
            Existing::Same
        ));
        assert!(matches!(
            staged.files["web/n.yaml"].existing,
            Existing::Absent
        ));
        drop(s);
        assert!(!staging.exists());
        assert!(
            dev.join("web/m.yaml").is_file(),
            "the live tree is untouched"
        );
        let before: Vec<_> = std::fs::read_dir(tmp.path().join("out")).unwrap().collect();
        let c = Stage::open(tmp.path(), Path::new("out/dev"), false).unwrap();
        c.add("web", &files);
        let after: Vec<_> = std::fs::read_dir(tmp.path().join("out")).unwrap().collect();
        assert_eq!(before.len(), after.len());
    }
}
