//! Directory output: plan an environment's new tree against what is on
//! disk (refusing symlinks on the way, files in the way that hydrate did not
//! write, and any path outside the directory), then build the complete new
//! tree beside the directory and switch it in as a unit (`swap`).
//!
//! Ownership: `.hydrate/owned` lists each app's files with the SHA-256 of
//! what hydrate wrote. A file is pruned only when it is listed, is a regular
//! file reached without a symlink, and still has that content; a changed
//! file, or one listed by an older hydrate without a hash (which cannot be
//! verified), is left in place with a warning and no longer owned. An
//! owned path that is rendered again is rewritten whatever its content (the
//! render is what the path holds). Files hydrate does not own (a README, a
//! `.gitkeep`) are carried into the new tree as hard links.
//! It renders nothing and never follows a symlink.
//!
//! The new tree starts empty, or as the spare tree the last switch set
//! aside (`spare`): then only what differs from the new tree is changed
//! in it, so that a run that changed one app does the work of one app.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use super::files::{content_hash, is_bookkeeping, Owned, LEGACY_OWNED_PATH, OWNED_PATH};
use super::spare::{self, Have};
use super::stage::{Existing, Stage, Staged};
use super::{swap, CheckReport, Error};
use crate::env::cache::{Listing, Stat};

/// What is in an output directory now, by relative path (never followed
/// through a symlink).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Old {
    /// A regular file, by inode number (from its directory entry).
    File {
        ino: u64,
    },
    Dir {
        empty: bool,
    },
    Symlink(PathBuf),
    Other,
}

/// One entry of the new tree.
#[derive(Debug)]
enum New {
    /// Already written to the staging tree (see [`Stage`]).
    Staged,
    /// The file at the same path in the old tree, unchanged (hard link).
    Keep,
    /// A symbolic link carried over as a link (its target is not read).
    Link(PathBuf),
    /// An empty directory carried over.
    Dir,
}

/// An environment's directory write, checked and ready: nothing has been
/// written yet.
#[derive(Debug)]
pub struct DirPlan {
    stage: Stage,
    /// Each app the stage took → its files and their hashes.
    files: BTreeMap<String, Vec<(String, String)>>,
    tree: BTreeMap<PathBuf, New>,
    owned: Vec<u8>,
    /// Files created, updated or deleted.
    changed: Vec<String>,
    check: CheckReport,
    /// Whether the directory already holds exactly the new tree.
    unchanged: bool,
    warnings: Vec<String>,
}

/// What a directory write did.
#[derive(Debug, Default)]
pub struct DirWrite {
    /// Files created, updated or deleted.
    pub changed: Vec<String>,
    /// Files left in place, ownership entries ignored, leftovers cleaned.
    pub warnings: Vec<String>,
    /// Each app written → its files (relative to the directory) and the
    /// `sha256:<hex>` of what they now hold.
    pub files: BTreeMap<String, Vec<(String, String)>>,
    /// Every entry of the directory after the write (relative, its
    /// directories included, not the directory itself), in path order:
    /// the tree it planned, which the write made exactly (a spare tree's
    /// other entries are removed) or found there.
    pub tree: Vec<PathBuf>,
    /// What the write did to the spare tree.
    pub spare: SpareAfter,
}

/// What a directory write did to the directory's spare tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpareAfter {
    /// Nothing was switched: it is as it was.
    Untouched,
    /// The switch set aside as the spare tree the live tree that the run's
    /// [`super::Known::live`] listed: that list describes it now.
    Listed,
    /// Anything else (a tree that was read, none kept).
    #[default]
    Unknown,
}

/// Plans writing `out` to `dir` (relative to `base`, the repository root)
/// and checks everything that could stop the write: no component of the
/// directory is a symlink or a file, no file hydrate did not write (or a
/// directory or symlink) is where a rendered file goes. With `recover`
/// (not for `--check`), first finishes or undoes what a killed run left
/// beside the directory, so that the plan starts from a whole tree, and
/// stages the files (see [`Stage`], which streams them instead).
#[cfg(test)]
pub fn plan(
    base: &Path,
    dir: &Path,
    out: &super::files::EnvOutput,
    recover: bool,
) -> Result<DirPlan, Error> {
    let stage = Stage::open(base, dir, recover)?;
    for (app, files) in &out.apps {
        stage.add(app, files);
    }
    finish(stage, out.complete, &out.known_apps)
}

/// [`plan`] with what the run knows of the directory's trees.
#[cfg(test)]
pub fn plan_known(
    base: &Path,
    dir: &Path,
    out: &super::files::EnvOutput,
    known: super::Known<'_>,
) -> Result<DirPlan, Error> {
    let stage = Stage::open_with(base, dir, true, std::sync::Arc::default(), known)?;
    for (app, files) in &out.apps {
        stage.add(app, files);
    }
    finish(stage, out.complete, &out.known_apps)
}

/// The plan of an environment's streamed output: every app the stage
/// took; with `complete`, owned apps not in `known_apps` are pruned.
pub fn finish(
    mut stage: Stage,
    complete: bool,
    known_apps: &BTreeSet<String>,
) -> Result<DirPlan, Error> {
    let staged = stage.take()?;
    let root = stage.root.clone();
    let old = std::mem::take(&mut stage.old);
    let owned = std::mem::take(&mut stage.owned);
    let mut warnings = std::mem::take(&mut stage.warnings);
    let new_owned = next_owned(&owned, &staged, complete, known_apps);
    let removed = |app: &str| complete && !known_apps.contains(app);
    let keep = new_owned.paths();
    let mut dropped = BTreeSet::new();
    for (app, paths) in &owned.apps {
        if !staged.apps.contains_key(app) && !removed(app) {
            continue;
        }
        for p in paths.iter().filter(|p| !keep.contains(p.as_str())) {
            match prunable(&root, &old, &owned, p) {
                Ok(true) => {
                    dropped.insert(PathBuf::from(p));
                }
                Ok(false) => {}
                Err(why) => warnings.push(format!(
                    "{}: {why} (listed for app {app} in {OWNED_PATH}); left in place",
                    root.join(p).display()
                )),
            }
        }
    }
    let was_owned = owned.paths();
    for (path, f) in &staged.files {
        let same = matches!(f.existing, Existing::Same);
        in_the_way(&root, &old, &dropped, &was_owned, path, &f.app, same)?;
    }
    let owned_bytes = new_owned.to_bytes();
    let files = staged
        .apps
        .iter()
        .map(|(app, paths)| {
            let hashed = paths
                .iter()
                .filter_map(|p| Some((p.clone(), staged.files.get(p)?.hash.clone())))
                .collect();
            (app.clone(), hashed)
        })
        .collect();
    let mut plan = DirPlan {
        files,
        stage,
        tree: BTreeMap::new(),
        owned: owned_bytes,
        changed: Vec::new(),
        check: CheckReport::default(),
        unchanged: false,
        warnings,
    };
    plan.fill(&old, staged, &dropped)?;
    // The live tree's inode numbers tell `rebuild` which entries of a
    // spare tree are already right.
    plan.stage.old = old;
    Ok(plan)
}

impl DirPlan {
    /// The new tree and what changes, from the old tree `old`.
    fn fill(
        &mut self,
        old: &BTreeMap<PathBuf, Old>,
        staged: Staged,
        dropped: &BTreeSet<PathBuf>,
    ) -> Result<(), Error> {
        let root = self.stage.root.clone();
        let files = staged.files;
        let bookkeeping = [Path::new(OWNED_PATH), Path::new(LEGACY_OWNED_PATH)];
        for (rel, kind) in old {
            if bookkeeping.contains(&rel.as_path())
                || dropped.contains(rel)
                || rel.to_str().is_some_and(|p| files.contains_key(p))
            {
                continue;
            }
            let entry = match kind {
                Old::File { .. } => New::Keep,
                Old::Symlink(t) => New::Link(t.clone()),
                Old::Dir { empty: true } => New::Dir,
                Old::Dir { empty: false } => continue,
                Old::Other => {
                    return Err(Error::Target {
                        path: root.join(rel),
                        reason: "a special file (not a file, directory or symlink) is in the \
                                 directory; hydrate cannot carry it into the new tree"
                            .into(),
                    })
                }
            };
            self.tree.insert(rel.clone(), entry);
        }
        for p in dropped {
            let p = p.to_string_lossy().into_owned();
            self.check.note(&p, Some(b""), None);
            self.changed.push(p);
        }
        for (path, f) in files {
            let entry = match f.existing {
                Existing::Same => New::Keep,
                Existing::Unreadable(source) => {
                    return Err(Error::Io {
                        path: root.join(&path),
                        source,
                    })
                }
                Existing::Absent | Existing::Differs => {
                    if !is_bookkeeping(&path) {
                        match f.existing {
                            Existing::Absent => self.check.missing.push(path.clone()),
                            _ => self.check.stale.push(path.clone()),
                        }
                    }
                    self.changed.push(path.clone());
                    New::Staged
                }
            };
            self.tree.insert(PathBuf::from(path), entry);
        }
        self.changed.sort();
        let owned_now = std::fs::read(root.join(OWNED_PATH)).ok();
        self.unchanged = self.changed.is_empty()
            && owned_now.as_deref() == Some(self.owned.as_slice())
            && !old.contains_key(Path::new(LEGACY_OWNED_PATH));
        Ok(())
    }

    /// How the directory differs from the new tree (for `--check`).
    pub fn check(&self) -> CheckReport {
        self.check.clone()
    }

    /// Files created, updated or deleted by [`DirPlan::apply`].
    #[cfg(test)]
    pub fn changed(&self) -> &[String] {
        &self.changed
    }

    /// Builds the new tree beside the directory and switches it in. Writes
    /// nothing when the directory already holds the new tree.
    pub fn apply(self) -> Result<DirWrite, Error> {
        let DirPlan {
            mut stage,
            files,
            tree,
            owned,
            changed,
            unchanged,
            warnings,
            ..
        } = self;
        if unchanged {
            // Dropping the stage removes its (unused) staging tree.
            return Ok(DirWrite {
                changed: Vec::new(),
                warnings,
                files,
                tree: stage.old.keys().cloned().collect(),
                spare: SpareAfter::Untouched,
            });
        }
        let Some(staging) = stage.staging.clone() else {
            return Err(Error::Target {
                path: stage.root.clone(),
                reason: "planned for --check, not for writing".into(),
            });
        };
        // Every entry the new tree will hold: what the rebuild keeps of the
        // spare tree, and the record's list of the tree.
        let all = entries(&tree);
        if stage.reused {
            let have = match stage.spare_listed.take() {
                Some(listed) => spare::walk_listed(&staging, &listed)?,
                None => spare::walk(&staging)?,
            };
            rebuild(&stage.root, &staging, &tree, &all, &stage.old, have, &owned)?;
        } else {
            build(&stage.root, &staging, &tree, &owned)?;
        }
        let set_aside = swap::install(&stage.root, &staging)?;
        stage.installed();
        let mut kept = false;
        if set_aside {
            // `staging` now holds the old tree: the next run's spare.
            match &stage.spare_home {
                Some(home) => kept = spare::keep(&staging, home)?,
                None => std::fs::remove_dir_all(&staging).map_err(|source| Error::Io {
                    path: staging.clone(),
                    source,
                })?,
            }
        }
        Ok(DirWrite {
            changed,
            warnings,
            files,
            tree: all,
            spare: match kept && stage.old_listed {
                true => SpareAfter::Listed,
                false => SpareAfter::Unknown,
            },
        })
    }
}

/// Every entry of the tree `build` or `rebuild` makes of `tree`: its
/// entries, the directories holding them and the ownership manifest, in
/// path order. `tree` is in path order, where a directory comes right
/// before what it holds, so each path's directories not yet listed are
/// the ones it does not share with the path before it: the list is made
/// in order, without a set (whose searches compared paths component by
/// component, 3% of a run after one base changed at 2,000 apps).
fn entries(tree: &BTreeMap<PathBuf, New>) -> Vec<PathBuf> {
    fn down(rel: &Path) -> Vec<&Path> {
        let mut chain: Vec<&Path> = rel
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty())
            .collect();
        chain.reverse();
        chain
    }
    let mut all: Vec<&Path> = Vec::with_capacity(tree.len() * 2);
    let mut last: Vec<&Path> = Vec::new();
    for rel in tree.keys() {
        let chain = down(rel);
        let same = last
            .iter()
            .zip(&chain)
            .take_while(|(a, b)| a.as_os_str() == b.as_os_str())
            .count();
        all.extend(chain.iter().skip(same));
        last = chain;
    }
    for p in down(Path::new(OWNED_PATH)) {
        if let Err(at) = all.binary_search(&p) {
            all.insert(at, p);
        }
    }
    all.into_iter().map(Path::to_path_buf).collect()
}

/// The ownership after writing the staged apps: their files with their
/// hashes, and the files of apps not rendered this run (other shards,
/// `--app`) as they were; with `complete`, apps not in `known_apps` (removed
/// from the environment) are gone.
fn next_owned(
    owned: &Owned,
    staged: &Staged,
    complete: bool,
    known_apps: &BTreeSet<String>,
) -> Owned {
    let mut next = Owned::default();
    for (app, paths) in &staged.apps {
        for p in paths {
            if let Some(f) = staged.files.get(p) {
                next.hashes.insert(p.clone(), f.hash.clone());
            }
        }
        next.apps.insert(app.clone(), paths.clone());
    }
    for (app, paths) in &owned.apps {
        if staged.apps.contains_key(app) || (complete && !known_apps.contains(app)) {
            continue;
        }
        for p in paths {
            if let Some(h) = owned.hashes.get(p) {
                next.hashes.insert(p.clone(), h.clone());
            }
        }
        next.apps.insert(app.clone(), paths.clone());
    }
    next
}

/// Completes the new tree under `staging`, which holds the rendered files
/// that changed: links the unchanged ones and what is carried over, and
/// writes the ownership manifest.
fn build(
    root: &Path,
    staging: &Path,
    tree: &BTreeMap<PathBuf, New>,
    owned: &[u8],
) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    for (rel, entry) in tree {
        let to = staging.join(rel);
        if matches!(entry, New::Staged) {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        match entry {
            New::Staged => {}
            New::Keep => {
                let from = root.join(rel);
                if std::fs::hard_link(&from, &to).is_err() {
                    std::fs::copy(&from, &to).map_err(io(&from))?;
                }
            }
            New::Link(target) => symlink(target, &to).map_err(io(&to))?,
            New::Dir => std::fs::create_dir_all(&to).map_err(io(&to))?,
        }
    }
    let to = staging.join(OWNED_PATH);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(&to, owned).map_err(io(&to))
}

/// [`build`] over a claimed spare tree, which holds an older tree (or
/// part of one) and the rendered files already staged: what the new tree
/// does not have is removed, and an entry is kept only when it is already
/// right (for an unchanged file, the live file itself: same inode), so
/// that the work is the difference between the two trees.
/// `all` is every entry of the new tree ([`entries`] of `tree`).
fn rebuild(
    root: &Path,
    staging: &Path,
    tree: &BTreeMap<PathBuf, New>,
    all: &[PathBuf],
    old: &BTreeMap<PathBuf, Old>,
    have: BTreeMap<PathBuf, Have>,
    owned: &[u8],
) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    let owned_path = Path::new(OWNED_PATH);
    // `all` ([`entries`]), hashed, not ordered: only asked whether it
    // holds a path (comparing paths component by component was a tenth of
    // a one-base run).
    let needed: HashSet<&Path> = all.iter().map(PathBuf::as_path).collect();
    // Parents sort right before their children, so a removed directory's
    // entries follow it.
    let mut removed: Option<&Path> = None;
    for (rel, kind) in &have {
        if removed.is_some_and(|d| rel.starts_with(d)) || needed.contains(rel.as_path()) {
            continue;
        }
        let at = staging.join(rel);
        if *kind == Have::Dir {
            std::fs::remove_dir_all(&at).map_err(io(&at))?;
            removed = Some(rel);
        } else {
            std::fs::remove_file(&at).map_err(io(&at))?;
        }
    }
    for (rel, entry) in tree {
        let to = staging.join(rel);
        let now = have.get(rel);
        match entry {
            New::Staged => continue,
            New::Keep => {
                if let (Some(Have::File { ino }), Some(Old::File { ino: live })) =
                    (now, old.get(rel))
                {
                    if ino == live {
                        continue;
                    }
                }
                spare::clear_way(staging, rel)?;
                let from = root.join(rel);
                if std::fs::hard_link(&from, &to).is_err() {
                    std::fs::copy(&from, &to).map_err(io(&from))?;
                }
            }
            New::Link(target) => {
                if now == Some(&Have::Symlink)
                    && std::fs::read_link(&to).is_ok_and(|t| t == *target)
                {
                    continue;
                }
                spare::clear_way(staging, rel)?;
                symlink(target, &to).map_err(io(&to))?;
            }
            New::Dir => {
                if now == Some(&Have::Dir) {
                    continue;
                }
                spare::clear_way(staging, rel)?;
                std::fs::create_dir(&to).map_err(io(&to))?;
            }
        }
    }
    spare::clear_way(staging, owned_path)?;
    let to = staging.join(owned_path);
    std::fs::write(&to, owned).map_err(io(&to))
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("cannot carry the symbolic link {}", link.display()),
    ))
}

/// The output directory `base/dir`, checked: it names a directory below
/// its parent that is not `base` or one of its ancestors, and no part of it
/// (below `base`) is a symlink or a file.
pub fn target(base: &Path, dir: &Path) -> Result<PathBuf, Error> {
    let root = base.join(dir);
    let bad = |reason: &str| Error::Target {
        path: root.clone(),
        reason: reason.to_string(),
    };
    if dir
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        || root.file_name().is_none()
        || base.starts_with(&root)
    {
        return Err(bad(
            "an output directory must be a directory below the repository root \
             (no `.` or `..`, not the root itself)",
        ));
    }
    let mut at = if dir.is_absolute() {
        root.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        base.to_path_buf()
    };
    let parts: Vec<_> = if dir.is_absolute() {
        root.file_name().into_iter().collect()
    } else {
        dir.components().map(|c| c.as_os_str()).collect()
    };
    for part in parts {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::Target {
                    path: at,
                    reason: "it is a symbolic link; hydrate writes output only through real \
                             directories (make it a directory, or point `output.dir` at the \
                             link's target)"
                        .into(),
                })
            }
            Ok(m) if !m.is_dir() => {
                return Err(Error::Target {
                    path: at,
                    reason: "it is a file, not a directory".into(),
                })
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(source) => return Err(Error::Io { path: at, source }),
        }
    }
    Ok(root)
}

/// Everything under `root`, by relative path, without following symlinks.
pub(super) fn read_tree(root: &Path) -> Result<BTreeMap<PathBuf, Old>, Error> {
    let mut out = BTreeMap::new();
    if std::fs::symlink_metadata(root).is_err() {
        return Ok(out);
    }
    for e in walkdir::WalkDir::new(root).follow_links(false).min_depth(1) {
        let e = e.map_err(|e| Error::Io {
            path: e.path().unwrap_or(root).to_path_buf(),
            source: e.into(),
        })?;
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap_or(e.path())
            .to_path_buf();
        let t = e.file_type();
        let kind = if t.is_symlink() {
            Old::Symlink(std::fs::read_link(e.path()).map_err(|source| Error::Io {
                path: e.path().to_path_buf(),
                source,
            })?)
        } else if t.is_dir() {
            // Empty until an entry inside it is found (the walk lists a
            // directory's entries after it: no second read of each).
            Old::Dir { empty: true }
        } else if t.is_file() {
            Old::File {
                ino: spare::ino(&e),
            }
        } else {
            Old::Other
        };
        if let Some(Old::Dir { empty }) = rel.parent().and_then(|p| out.get_mut(p)) {
            *empty = false;
        }
        out.insert(rel, kind);
    }
    Ok(out)
}

/// [`read_tree`] of `root` as `listed` lists it: every entry below it
/// (relative, in [`super::stat_tree`]'s form, the root itself as the empty
/// path) with its `lstat`, each found unchanged this run. An entry added
/// to, removed from or renamed in a directory moves that directory's
/// stat, so the list is the whole tree, except in a directory whose stat
/// was too young to tell (`listed.young`): each of those is read, and must
/// hold exactly the entries listed in it. A file's inode is its stat's, a
/// symlink's target is read. `None` (then the tree is read) for an entry
/// that is not a plain relative path, a link that cannot be read, a young
/// directory that holds other entries, and off unix (no file type in the
/// stat).
pub(super) fn tree_of_stats(root: &Path, listed: &Listing) -> Option<BTreeMap<PathBuf, Old>> {
    // Directory → how many entries the list has in it (the root as "").
    let mut held: HashMap<&Path, usize> = HashMap::new();
    for (rel, _) in &listed.entries {
        if !rel.as_os_str().is_empty() {
            *held
                .entry(rel.parent().unwrap_or(Path::new("")))
                .or_default() += 1;
        }
    }
    let mut entries: Vec<(PathBuf, Old)> = Vec::with_capacity(listed.entries.len());
    for (rel, stat) in &listed.entries {
        if rel.as_os_str().is_empty() {
            continue;
        }
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return None;
        }
        let kind = match file_type(stat)? {
            Type::Symlink => Old::Symlink(std::fs::read_link(root.join(rel)).ok()?),
            Type::Dir => Old::Dir {
                empty: !held.contains_key(rel.as_path()),
            },
            Type::File => Old::File { ino: stat.id[1] },
            Type::Other => Old::Other,
        };
        entries.push((rel.clone(), kind));
    }
    // Built at once from the list (in path order as written, so the sort
    // is one pass), not entry by entry: searching the map for each entry
    // and its parent compared paths component by component, most of
    // opening an environment's live tree at 2,000 apps.
    let out: BTreeMap<PathBuf, Old> = entries.into_iter().collect();
    for i in &listed.young {
        let (rel, stat) = listed.entries.get(*i)?;
        if !stat.is_dir() {
            continue;
        }
        let mut found = 0usize;
        for e in std::fs::read_dir(root.join(rel)).ok()? {
            let name = e.ok()?.file_name();
            if !out.contains_key(&rel.join(name)) {
                return None;
            }
            found += 1;
        }
        if found != held.get(rel.as_path()).copied().unwrap_or(0) {
            return None;
        }
    }
    Some(out)
}

/// What an `lstat` says an entry is.
pub(super) enum Type {
    File,
    Dir,
    Symlink,
    Other,
}

/// The type in `stat`'s mode.
#[cfg(unix)]
pub(super) fn file_type(stat: &Stat) -> Option<Type> {
    let format = u32::try_from(stat.id[3]).ok()? & libc::S_IFMT;
    Some(match format {
        libc::S_IFREG => Type::File,
        libc::S_IFDIR => Type::Dir,
        libc::S_IFLNK => Type::Symlink,
        _ => Type::Other,
    })
}

#[cfg(not(unix))]
pub(super) fn file_type(_stat: &Stat) -> Option<Type> {
    None
}

/// The ownership manifest (under its old name when the new one is
/// missing), read only when no symlink leads to it; and the entries it
/// rejected.
pub(super) fn read_owned(root: &Path, old: &BTreeMap<PathBuf, Old>) -> (Owned, Vec<String>) {
    for name in [OWNED_PATH, LEGACY_OWNED_PATH] {
        let rel = Path::new(name);
        if !matches!(old.get(rel), Some(Old::File { .. })) || symlink_on_the_way(old, rel).is_some()
        {
            continue;
        }
        if let Ok(bytes) = std::fs::read(root.join(rel)) {
            return Owned::parse_checked(&bytes);
        }
    }
    (Owned::default(), Vec::new())
}

/// The first ancestor of `rel` (below the root) that is a symlink.
fn symlink_on_the_way<'t>(old: &'t BTreeMap<PathBuf, Old>, rel: &Path) -> Option<&'t Path> {
    rel.ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .find_map(|a| match old.get_key_value(a) {
            Some((k, Old::Symlink(_))) => Some(k.as_path()),
            _ => None,
        })
}

/// Whether owned path `p` may be deleted: Ok(true) when it is a regular
/// file hydrate wrote with that content, Ok(false) when it is gone, and
/// why not otherwise.
fn prunable(
    root: &Path,
    old: &BTreeMap<PathBuf, Old>,
    owned: &Owned,
    p: &str,
) -> Result<bool, String> {
    let rel = Path::new(p);
    if let Some(link) = symlink_on_the_way(old, rel) {
        return Err(format!(
            "{} is a symbolic link; not followed",
            root.join(link).display()
        ));
    }
    match old.get(rel) {
        None => Ok(false),
        Some(Old::File { .. }) => {
            let Some(hash) = owned.hashes.get(p) else {
                return Err(
                    "written by an older hydrate that kept no content hash, so it \
                            cannot be verified; delete it if it is stale"
                        .into(),
                );
            };
            match std::fs::read(root.join(rel)) {
                Ok(bytes) if content_hash(&bytes) == *hash => Ok(true),
                Ok(_) => Err("changed since hydrate wrote it".into()),
                Err(e) => Err(format!("cannot be read ({e})")),
            }
        }
        Some(Old::Symlink(_)) => Err("is a symbolic link; not followed".into()),
        Some(_) => Err("is not a regular file".into()),
    }
}

/// An error when something hydrate may not replace is where `path` (of
/// `app`) goes: a symlink or file on the way, a directory or symlink at
/// the path, or a file hydrate did not write (unless it already holds
/// exactly the rendered bytes (`same`), e.g. output committed without `.hydrate/`: it is then
/// adopted, nothing is lost).
fn in_the_way(
    root: &Path,
    old: &BTreeMap<PathBuf, Old>,
    dropped: &BTreeSet<PathBuf>,
    was_owned: &BTreeSet<&str>,
    path: &str,
    app: &str,
    same: bool,
) -> Result<(), Error> {
    let rel = Path::new(path);
    let err = |at: &Path, what: &str| Error::InTheWay {
        path: root.join(at),
        app: app.to_string(),
        file: path.to_string(),
        what: what.to_string(),
    };
    for a in rel
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
    {
        match old.get(a) {
            Some(Old::Symlink(_)) => return Err(err(a, "a symbolic link")),
            Some(Old::Dir { .. }) | None => {}
            Some(_) if dropped.contains(a) => {}
            Some(_) => return Err(err(a, "a file")),
        }
    }
    match old.get(rel) {
        None => Ok(()),
        Some(Old::File { .. }) if was_owned.contains(path) => Ok(()),
        Some(Old::File { .. }) if same => Ok(()),
        Some(Old::File { .. }) => Err(err(rel, "a file hydrate did not write")),
        Some(Old::Symlink(_)) => Err(err(rel, "a symbolic link")),
        Some(Old::Dir { .. }) => Err(err(rel, "a directory")),
        Some(Old::Other) => Err(err(rel, "a special file")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::files::EnvOutput;

    fn out(files: &[(&str, &str, &str)]) -> EnvOutput {
        let mut apps: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
        for (app, path, text) in files {
            apps.entry(app.to_string())
                .or_default()
                .insert(path.to_string(), text.as_bytes().to_vec());
        }
        EnvOutput {
            env: "dev".into(),
            known_apps: apps.keys().cloned().collect(),
            apps,
            complete: true,
            root_metadata: None,
            attributes: None,
            note: None,
        }
    }

    fn apply(base: &Path, o: &EnvOutput) -> DirWrite {
        plan(base, Path::new("out/dev"), o, true)
            .unwrap()
            .apply()
            .unwrap()
    }

    #[test]
    fn a_no_op_write_touches_nothing_and_check_sees_the_difference() {
        let tmp = tempfile::tempdir().unwrap();
        let o = out(&[("web", "web/m.yaml", "a\n")]);
        assert_eq!(apply(tmp.path(), &o).changed, ["web/m.yaml"]);
        let dev = tmp.path().join("out/dev");
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        let before = inode(&dev);
        assert!(apply(tmp.path(), &o).changed.is_empty());
        assert_eq!(inode(&dev), before, "not switched");
        let changed = out(&[("api", "api/m.yaml", "b\n")]);
        let p = plan(tmp.path(), Path::new("out/dev"), &changed, false).unwrap();
        let c = p.check();
        assert_eq!(
            (c.missing, c.extra),
            (
                vec!["api/m.yaml".to_string()],
                vec!["web/m.yaml".to_string()]
            )
        );
        assert_eq!(p.changed(), ["api/m.yaml", "web/m.yaml"]);
    }

    #[test]
    fn unverifiable_entries_are_rewritten_when_rendered_but_never_pruned() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = tmp.path().join("out/dev");
        std::fs::create_dir_all(dev.join(".hydrate")).unwrap();
        std::fs::create_dir_all(dev.join("web")).unwrap();
        std::fs::write(dev.join("web/m.yaml"), "old\n").unwrap();
        std::fs::write(dev.join("web/gone.yaml"), "old\n").unwrap();
        std::fs::write(
            dev.join(LEGACY_OWNED_PATH),
            r#"{"apps": {"web": ["web/m.yaml", "web/gone.yaml"]}}"#,
        )
        .unwrap();
        let w = apply(tmp.path(), &out(&[("web", "web/m.yaml", "new\n")]));
        assert_eq!(w.changed, ["web/m.yaml"]);
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(w.warnings[0].contains("web/gone.yaml: written by an older hydrate"));
        assert_eq!(
            std::fs::read_to_string(dev.join("web/m.yaml")).unwrap(),
            "new\n"
        );
        assert!(dev.join("web/gone.yaml").is_file());
        assert!(!dev.join(LEGACY_OWNED_PATH).exists());
        let owned = Owned::parse(&std::fs::read(dev.join(OWNED_PATH)).unwrap());
        assert_eq!(
            owned.paths().into_iter().collect::<Vec<_>>(),
            ["web/m.yaml"]
        );
        assert_eq!(owned.hashes["web/m.yaml"], content_hash(b"new\n"));
    }

    /// Every file under `dir` with its content, `.hydrate/owned` aside.
    fn files_in(dir: &Path) -> BTreeMap<String, String> {
        walkdir::WalkDir::new(dir)
            .into_iter()
            .map(Result::unwrap)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy();
                (rel.into_owned(), std::fs::read_to_string(e.path()).unwrap())
            })
            .filter(|(rel, _)| rel != OWNED_PATH)
            .collect()
    }

    /// From the second write on, the new tree is built in the spare tree
    /// the previous switch set aside; whatever the spare tree held, the
    /// live directory ends up exactly the new tree, a file the user added
    /// and a symlink are carried, and the live tree's files are never
    /// written through their hard links in the spare tree.
    #[test]
    fn the_spare_tree_becomes_exactly_the_new_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = tmp.path().join("out/dev");
        let spare = tmp.path().join(".hydrate/spare/out%2Fdev");
        let a = out(&[("web", "web/m.yaml", "1\n"), ("api", "api/m.yaml", "1\n")]);
        apply(tmp.path(), &a);
        std::fs::write(dev.join("README"), "mine\n").unwrap();
        std::os::unix::fs::symlink("web", dev.join("link")).unwrap();
        let b = out(&[("web", "web/m.yaml", "2\n"), ("api", "api/m.yaml", "1\n")]);
        assert_eq!(apply(tmp.path(), &b).changed, ["web/m.yaml"]);
        assert_eq!(
            files_in(&spare)["web/m.yaml"],
            "1\n",
            "the old tree set aside"
        );
        // The spare tree is damaged as a killed run could leave it: a file
        // where a directory goes, a stray file, a symlink out.
        std::fs::remove_dir_all(spare.join("api")).unwrap();
        std::fs::write(spare.join("api"), "junk").unwrap();
        std::fs::write(spare.join("stray.yaml"), "junk").unwrap();
        std::os::unix::fs::symlink(tmp.path(), spare.join("db")).unwrap();
        let c = out(&[
            ("web", "web/m.yaml", "3\n"),
            ("api", "api/m.yaml", "1\n"),
            ("db", "db/m.yaml", "1\n"),
        ]);
        assert_eq!(apply(tmp.path(), &c).changed, ["db/m.yaml", "web/m.yaml"]);
        let want: BTreeMap<String, String> = [
            ("README", "mine\n"),
            ("api/m.yaml", "1\n"),
            ("db/m.yaml", "1\n"),
            ("web/m.yaml", "3\n"),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
        assert_eq!(files_in(&dev), want);
        assert_eq!(
            std::fs::read_link(dev.join("link")).unwrap(),
            Path::new("web")
        );
        assert!(
            !tmp.path().join("m.yaml").exists(),
            "nothing written through db"
        );
        assert_eq!(files_in(&spare)["web/m.yaml"], "2\n");
        let owned = Owned::parse(&std::fs::read(dev.join(OWNED_PATH)).unwrap());
        assert_eq!(owned.hashes["web/m.yaml"], content_hash(b"3\n"));
    }

    /// Sequences of up to five trees of up to five paths each, every path
    /// `a` or `b` parts: a file of one tree is a directory of another.
    fn tree_sequences() -> impl proptest::strategy::Strategy<Value = Vec<BTreeMap<String, String>>>
    {
        proptest::collection::vec(
            proptest::collection::btree_map("[ab](/[ab]){0,2}\\.y|[ab]/[ab]", "[xyz]", 1..6),
            1..6,
        )
    }

    /// The files of `tree` (a path that is a prefix of another cannot be a
    /// file too, so it is left out), each the app its first part names,
    /// and the environment output holding them.
    fn tree_output(tree: &BTreeMap<String, String>) -> (Vec<(String, String)>, EnvOutput) {
        let files: Vec<(String, String)> = tree
            .iter()
            .filter(|(p, _)| !tree.keys().any(|q| q.starts_with(&format!("{p}/"))))
            .map(|(p, t)| (p.clone(), format!("{t}\n")))
            .collect();
        let apps: Vec<(String, &str, &str)> = files
            .iter()
            .map(|(p, t)| {
                (
                    p.split('/').next().unwrap_or("x").to_string(),
                    p.as_str(),
                    t.as_str(),
                )
            })
            .collect();
        let spec: Vec<(&str, &str, &str)> =
            apps.iter().map(|(a, p, t)| (a.as_str(), *p, *t)).collect();
        let o = out(&spec);
        (files, o)
    }

    proptest::proptest! {
        /// The entries listed in path order without a set are the set's:
        /// every path, every directory above one, and the ownership
        /// manifest with its directory, each once.
        #[test]
        fn entries_are_every_path_and_directory_in_order(
            paths in proptest::collection::btree_set("[ab-]{1,2}(/[ab-][ab.-]?){0,3}", 0..12)
        ) {
            let tree: BTreeMap<PathBuf, New> =
                paths.iter().map(|p| (PathBuf::from(p), New::Staged)).collect();
            let mut want: BTreeSet<PathBuf> = BTreeSet::new();
            for rel in tree.keys().map(PathBuf::as_path).chain([Path::new(OWNED_PATH)]) {
                want.extend(
                    rel.ancestors()
                        .take_while(|a| !a.as_os_str().is_empty())
                        .map(Path::to_path_buf),
                );
            }
            proptest::prop_assert_eq!(entries(&tree), want.into_iter().collect::<Vec<_>>());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Any sequence of trees, written one after the other (each from
        /// the spare tree of the one before), leaves exactly the last one,
        /// whatever kinds its paths had before (a file of one write is a
        /// directory of the next), and each write's list of entries is
        /// the tree it left.
        #[test]
        fn every_write_leaves_exactly_its_tree(
            trees in tree_sequences()
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let mut want = BTreeMap::new();
            for tree in &trees {
                let (files, o) = tree_output(tree);
                // A directory where a file now goes is refused (hydrate
                // replaces only files): the live tree then stays as it was.
                match plan(tmp.path(), Path::new("out/dev"), &o, true) {
                    Err(Error::InTheWay { .. }) => {}
                    p => {
                        let w = p.unwrap().apply().unwrap();
                        let walked: Vec<PathBuf> = super::super::stat_tree(tmp.path(), Path::new("out/dev"))
                            .unwrap()
                            .into_iter()
                            .map(|(p, _)| p)
                            .filter(|p| !p.as_os_str().is_empty())
                            .collect::<BTreeSet<_>>()
                            .into_iter()
                            .collect();
                        proptest::prop_assert_eq!(&w.tree, &walked);
                        // The same tree again: nothing to write, the same list.
                        let again = plan(tmp.path(), Path::new("out/dev"), &o, true);
                        let again = again.unwrap().apply().unwrap();
                        proptest::prop_assert!(again.changed.is_empty());
                        proptest::prop_assert_eq!(&again.tree, &walked);
                        want = files.into_iter().collect();
                    }
                }
                proptest::prop_assert_eq!(files_in(&tmp.path().join("out/dev")), want.clone());
            }
        }
    }

    /// The young entries of `entries`, listed at `at`: modified within a
    /// margin of it longer than a filesystem clock tick (as a record's
    /// racy window is), so that a change within the same tick cannot hide
    /// behind an unchanged stat.
    fn young_at(entries: &[(PathBuf, Stat)], at: std::time::SystemTime) -> Vec<usize> {
        let margin = at - std::time::Duration::from_millis(50);
        (0..entries.len())
            .filter(|i| !entries[*i].1.modified_before(margin))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// [`every_write_leaves_exactly_its_tree`] when each write knows
        /// the live tree from a list and the spare tree from the list of
        /// the tree the previous write set aside (stale when that write
        /// switched nothing): the lists save reading, never change a tree.
        /// The live tree's times are set back before it is listed, so that
        /// the lists vouch for directories instead of being read again.
        #[test]
        fn writes_from_listed_trees_leave_exactly_their_tree(
            trees in tree_sequences()
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let dir = Path::new("out/dev");
            let mut want = BTreeMap::new();
            let mut spare: Option<Listing> = None;
            for tree in &trees {
                let (files, o) = tree_output(tree);
                // Modified long ago, as far as the stats say: the list can
                // vouch for them (a change now moves them again).
                if let Ok(root) = target(tmp.path(), dir) {
                    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
                    for e in walkdir::WalkDir::new(root).into_iter().flatten() {
                        let f = std::fs::File::open(e.path()).unwrap();
                        f.set_modified(long_ago).unwrap();
                    }
                }
                let live = super::super::stat_tree(tmp.path(), dir).map(|entries| {
                    let young = young_at(&entries, std::time::SystemTime::now());
                    Listing { entries, young }
                });
                let known = super::super::Known { live: live.as_ref(), spare: spare.as_ref() };
                match plan_known(tmp.path(), dir, &o, known) {
                    Err(Error::InTheWay { .. }) => {}
                    p => {
                        let w = p.unwrap().apply().unwrap();
                        if w.spare == SpareAfter::Listed {
                            spare = live;
                        }
                        want = files.into_iter().collect();
                    }
                }
                proptest::prop_assert_eq!(files_in(&tmp.path().join("out/dev")), want.clone());
            }
        }
    }

    #[test]
    fn the_target_must_be_below_the_root_and_symlink_free() {
        let tmp = tempfile::tempdir().unwrap();
        for bad in ["", ".", "..", "a/..", "./.."] {
            assert!(target(tmp.path(), Path::new(bad)).is_err(), "{bad:?}");
        }
        assert!(target(tmp.path(), Path::new("/")).is_err());
        assert!(target(tmp.path(), tmp.path()).is_err());
        std::os::unix::fs::symlink("/", tmp.path().join("l")).unwrap();
        assert!(target(tmp.path(), Path::new("l/x")).is_err());
        assert!(target(tmp.path(), Path::new("ok/x")).is_ok());
    }

    #[test]
    fn a_tree_listed_by_its_stats_is_the_tree_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out/dev");
        std::fs::create_dir_all(root.join("web/sub")).unwrap();
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::write(root.join("web/manifest.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("web/sub/x.yaml"), "b: 1\n").unwrap();
        std::fs::write(root.join("README"), "hi\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("web/manifest.yaml", root.join("link")).unwrap();
        let listed = super::super::stat_tree(tmp.path(), Path::new("out/dev")).unwrap();
        let read = read_tree(&root).unwrap();
        #[cfg(unix)]
        {
            assert_eq!(tree_of_stats(&root, &all(&listed)), Some(read));
            assert!(matches!(
                tree_of_stats(&root, &all(&listed)).unwrap().get(Path::new("link")),
                Some(Old::Symlink(t)) if t == Path::new("web/manifest.yaml")
            ));
        }
        // Not a plain relative path: the tree is read instead.
        let mut odd = listed.clone();
        odd.push((PathBuf::from("../x"), listed[1].1));
        assert_eq!(tree_of_stats(&root, &all(&odd)), None);
    }

    fn all(entries: &[(PathBuf, Stat)]) -> Listing {
        Listing {
            entries: entries.to_vec(),
            young: Vec::new(),
        }
    }

    /// A directory too young to vouch for its entries is read: an entry
    /// added to it within the same tick, which its stat cannot show, is
    /// found, and then the whole tree is read.
    #[test]
    fn a_young_directory_of_a_listed_tree_is_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out/dev");
        std::fs::create_dir_all(root.join("web")).unwrap();
        std::fs::create_dir_all(root.join("api")).unwrap();
        std::fs::write(root.join("web/manifest.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("api/manifest.yaml"), "b: 1\n").unwrap();
        let entries = super::super::stat_tree(tmp.path(), Path::new("out/dev")).unwrap();
        let at = |p: &str| entries.iter().position(|(r, _)| r == Path::new(p)).unwrap();
        let young = [at(""), at("web"), at("web/manifest.yaml")];
        let listed = Listing {
            entries: entries.clone(),
            young: young.to_vec(),
        };
        #[cfg(unix)]
        assert_eq!(
            tree_of_stats(&root, &listed),
            Some(read_tree(&root).unwrap())
        );
        // What the list cannot show: a file added in the same tick (here,
        // its directory's stat is simply not compared again).
        std::fs::write(root.join("web/README"), "mine\n").unwrap();
        assert_eq!(
            tree_of_stats(&root, &listed),
            None,
            "found, so the tree is read"
        );
        // In a directory that was not young, the list is trusted (its stat
        // would have moved: `tree_fresh` compares it before).
        let young = [at("web"), at("web/manifest.yaml")];
        std::fs::remove_file(root.join("web/README")).unwrap();
        std::fs::write(root.join("api/README"), "mine\n").unwrap();
        let listed = Listing {
            entries: entries.clone(),
            young: young.to_vec(),
        };
        #[cfg(unix)]
        assert!(tree_of_stats(&root, &listed).is_some());
        std::fs::remove_file(root.join("web/manifest.yaml")).unwrap();
        assert_eq!(
            tree_of_stats(&root, &listed),
            None,
            "one gone from a young directory"
        );
    }
}
