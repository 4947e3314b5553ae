//! The spare tree: the tree an environment's switch set aside, kept under
//! the repository's `.hydrate/spare/` (beside the render cache, ignored by
//! git through its own `.gitignore`) instead of deleted, so that the next
//! run builds its new tree by changing only what differs in it, where it
//! would otherwise make every directory and hard link of the environment
//! again (`dir`'s `build`). The switch itself stays the one atomic
//! exchange `swap` makes, so a reader or a `kill -9` still sees the old
//! tree or the new one.
//!
//! Nothing in a spare tree is trusted: a run claims it by renaming it to a
//! name of its own (so two runs never share one), and makes it the new
//! tree by comparing it with the live directory entry by entry: a file
//! stays only when it is the live file itself (the same inode, the hard
//! link the last switch left), everything else is replaced or removed. A
//! spare tree a killed run left half-changed is therefore as good as any.
//! It decides nothing about contents or ownership (`dir` does).

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use super::dir::{file_type, Type};
use super::Error;
use crate::env::cache::{Listing, Stat};

/// Where spare trees live, relative to the repository root.
pub const SPARE_DIR: &str = ".hydrate/spare";

/// What a spare tree holds at a relative path (never followed through a
/// symlink).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Have {
    /// A regular file, by inode number.
    File {
        ino: u64,
    },
    Dir,
    Symlink,
    Other,
}

impl Have {
    /// What a directory entry of type `t` is (`ino`: its inode number,
    /// from the entry).
    fn of(t: std::fs::FileType, ino: u64) -> Have {
        if t.is_symlink() {
            Have::Symlink
        } else if t.is_dir() {
            Have::Dir
        } else if t.is_file() {
            Have::File { ino }
        } else {
            Have::Other
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The spare tree's home for the output directory `root` (`base/dir`):
/// `base/.hydrate/spare/<dir, escaped>`. None when there can be none: `dir`
/// is not a plain relative path, `.hydrate` or `spare` is a symlink or not
/// a directory (hydrate never writes through a symlink), or the output is
/// itself inside `.hydrate`.
pub(super) fn home(base: &Path, dir: &Path) -> Option<PathBuf> {
    let mut key = String::new();
    for c in dir.components() {
        let Component::Normal(part) = c else {
            return None;
        };
        if !key.is_empty() {
            key.push_str("%2F");
        }
        for b in part.to_str()?.bytes() {
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => key.push(char::from(b)),
                // `.` too, so that no key is `.` or `..` or starts a
                // claimed name's `.<pid>` suffix.
                _ => key.push_str(&format!("%{b:02X}")),
            }
        }
    }
    if key.is_empty() || dir.starts_with(".hydrate") {
        return None;
    }
    // The output directory's own check: real directories up to the first
    // missing one.
    let dir = super::dir::target(base, Path::new(SPARE_DIR)).ok()?;
    Some(dir.join(key))
}

/// The name a run gives the spare tree it claimed.
fn claimed_name(home: &Path, pid: u32) -> Option<PathBuf> {
    let name = home.file_name()?.to_str()?;
    Some(home.with_file_name(format!("{name}.{pid}")))
}

/// Claims `root`'s spare tree at `home` for this run: renames it to a name
/// of its own (a run that lost the race finds none) and gives it `root`'s
/// mode. None when there is none, or it is not a directory on `root`'s
/// filesystem (the switch exchanges the two; it cannot cross filesystems).
/// Claims that dead runs left are put back first, or removed.
pub(super) fn claim(home: &Path, root: &Path) -> Option<PathBuf> {
    recover(home);
    let claimed = claimed_name(home, std::process::id())?;
    std::fs::rename(home, &claimed).ok()?;
    let usable = match (
        std::fs::symlink_metadata(&claimed),
        std::fs::symlink_metadata(root),
    ) {
        (Ok(s), Ok(r)) if s.is_dir() && r.is_dir() => {
            same_device(&s, &r) && std::fs::set_permissions(&claimed, r.permissions()).is_ok()
        }
        _ => false,
    };
    if usable {
        Some(claimed)
    } else {
        remove(&claimed);
        None
    }
}

#[cfg(unix)]
fn same_device(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    std::os::unix::fs::MetadataExt::dev(a) == std::os::unix::fs::MetadataExt::dev(b)
}

#[cfg(not(unix))]
fn same_device(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

/// Claims of runs that are gone: the first goes back home when there is
/// no spare tree there, the others are removed. (A claim left by a dead
/// run whose pid this process now has stays until another run or `hydrate
/// cache clean` removes it.)
fn recover(home: &Path) {
    let (Some(parent), Some(name)) = (home.parent(), home.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let prefix = format!("{name}.");
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // This process's own claims are in use (one stage per directory
        // and run; a library caller may run several at once).
        if pid == std::process::id() || super::swap::alive(pid) {
            continue;
        }
        let path = e.path();
        if std::fs::symlink_metadata(home).is_err() && std::fs::rename(&path, home).is_ok() {
            continue;
        }
        remove(&path);
    }
}

/// Gives back a claimed spare tree this run did not switch in (a failed
/// render, a refused plan, nothing changed): it goes home, whatever it
/// holds, or is removed.
pub(super) fn release(claimed: &Path, home: &Path) {
    if std::fs::rename(claimed, home).is_err() {
        remove(claimed);
    }
}

/// Keeps `old`, the tree a switch just set aside, as `home`'s spare tree;
/// removes it when it cannot be kept (another run kept one meanwhile, or
/// `home` is on another filesystem). Whether it was kept.
pub(super) fn keep(old: &Path, home: &Path) -> Result<bool, Error> {
    if let Some(parent) = home.parent() {
        if ensure_dir(parent).is_ok() && std::fs::rename(old, home).is_ok() {
            return Ok(true);
        }
    }
    std::fs::remove_dir_all(old).map_err(io(old))?;
    Ok(false)
}

/// Creates `.hydrate/spare` with a `.gitignore` of `*`, so that git never
/// lists the spare trees.
fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    let ignore = dir.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(ignore, "*\n")
}

fn remove(path: &Path) {
    let _ = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    };
}

/// Everything in a spare tree, by relative path (inode numbers from the
/// directory entries, as `dir::read_tree` takes the live tree's).
pub(super) fn walk(tree: &Path) -> Result<BTreeMap<PathBuf, Have>, Error> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(tree).follow_links(false).min_depth(1) {
        let e = e.map_err(|e| Error::Io {
            path: e.path().unwrap_or(tree).to_path_buf(),
            source: e.into(),
        })?;
        let rel = e
            .path()
            .strip_prefix(tree)
            .unwrap_or(e.path())
            .to_path_buf();
        out.insert(rel, Have::of(e.file_type(), ino(&e)));
    }
    Ok(out)
}

#[cfg(unix)]
pub(super) fn ino(e: &walkdir::DirEntry) -> u64 {
    walkdir::DirEntryExt::ino(e)
}

#[cfg(not(unix))]
pub(super) fn ino(_e: &walkdir::DirEntry) -> u64 {
    0
}

/// [`walk`] of `tree` with `listed`, what it held when it was set aside
/// (the live tree the last switch replaced, as that run knew it): a
/// directory whose `lstat` is still the listed one, and was not young,
/// holds the listed entries (an entry added, removed or renamed moves its
/// directory's stat, as [`super::tree_fresh`] trusts it); any other
/// directory is read. The directories are stated; only those changed
/// since (the root, whose change time each rename moves; those this run's
/// staged files went into) are read. Falls back to [`walk`] on anything
/// the list cannot say (a listed directory that is no longer one).
pub(super) fn walk_listed(tree: &Path, listed: &Listing) -> Result<BTreeMap<PathBuf, Have>, Error> {
    // Directory → its listed entries; the directories that can vouch.
    let mut children: HashMap<&Path, Vec<&(PathBuf, Stat)>> = HashMap::new();
    let mut vouch: HashMap<&Path, &Stat> = HashMap::new();
    for (i, entry) in listed.entries.iter().enumerate() {
        let (rel, stat) = entry;
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return walk(tree);
        }
        if stat.is_dir() && listed.young.binary_search(&i).is_err() {
            vouch.insert(rel, stat);
        }
        if let Some(parent) = rel.parent() {
            children.entry(parent).or_default().push(entry);
        }
    }
    // Gathered, then made a map at once: one sort of runs already in
    // order (each directory's entries) instead of a search per entry.
    let mut out = Vec::with_capacity(listed.entries.len());
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let at = tree.join(&dir);
        let Some(now) = std::fs::symlink_metadata(&at)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .and_then(|m| Stat::of_metadata(&m))
        else {
            return walk(tree);
        };
        if vouch.get(dir.as_path()) == Some(&&now) {
            for (rel, stat) in children.get(dir.as_path()).into_iter().flatten() {
                let have = match file_type(stat) {
                    Some(Type::Dir) => {
                        dirs.push(rel.clone());
                        Have::Dir
                    }
                    Some(Type::File) => Have::File { ino: stat.id[1] },
                    Some(Type::Symlink) => Have::Symlink,
                    Some(Type::Other) => Have::Other,
                    None => return walk(tree),
                };
                out.push((rel.clone(), have));
            }
            continue;
        }
        for e in std::fs::read_dir(&at).map_err(io(&at))? {
            let e = e.map_err(io(&at))?;
            let rel = dir.join(e.file_name());
            let have = Have::of(e.file_type().map_err(io(&at))?, entry_ino(&e));
            if have == Have::Dir {
                dirs.push(rel.clone());
            }
            out.push((rel, have));
        }
    }
    Ok(out.into_iter().collect())
}

#[cfg(unix)]
fn entry_ino(e: &std::fs::DirEntry) -> u64 {
    std::os::unix::fs::DirEntryExt::ino(e)
}

#[cfg(not(unix))]
fn entry_ino(_e: &std::fs::DirEntry) -> u64 {
    0
}

/// Makes way in `tree` for a new entry at `rel`: an ancestor that is not
/// a directory (a file or symlink an older tree had there) is removed,
/// the missing ancestors are made, and whatever is at `rel` is removed. A
/// symlink in the tree is never followed.
pub(super) fn clear_way(tree: &Path, rel: &Path) -> Result<(), Error> {
    let mut at = tree.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    let Some((_, ancestors)) = parts.split_last() else {
        return Ok(());
    };
    for part in ancestors {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => std::fs::remove_file(&at).map_err(io(&at))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&at)(e)),
        }
        std::fs::create_dir(&at).map_err(io(&at))?;
    }
    let to = tree.join(rel);
    match std::fs::symlink_metadata(&to) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&to).map_err(io(&to)),
        Ok(_) => std::fs::remove_file(&to).map_err(io(&to)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(&to)(e)),
    }
}

/// `hydrate cache clean`: removes the spare trees of the repository at
/// `root` (they are only a head start; the next switch keeps one again).
/// Returns how many trees were removed.
pub fn clean(root: &Path) -> std::io::Result<usize> {
    let dir = root.join(SPARE_DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    }
    let mut removed = 0;
    for e in std::fs::read_dir(&dir)? {
        let e = e?;
        let name = e.file_name();
        if is_tree_name(&name.to_string_lossy()) && e.file_type()?.is_dir() {
            std::fs::remove_dir_all(e.path())?;
            removed += 1;
        }
    }
    let _ = std::fs::remove_file(dir.join(".gitignore"));
    let _ = std::fs::remove_dir(&dir);
    Ok(removed)
}

/// A name [`home`] gives (an escaped directory), or a claim of one
/// (`<that>.<pid>`): the only entries `clean` removes.
fn is_tree_name(name: &str) -> bool {
    let (key, pid) = name.split_once('.').unwrap_or((name, "0"));
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'%'))
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_are_one_flat_name_per_directory() {
        let base = Path::new("/repo");
        assert_eq!(
            home(base, Path::new("rendered/dev")),
            Some(PathBuf::from("/repo/.hydrate/spare/rendered%2Fdev"))
        );
        assert_eq!(
            home(base, Path::new("out/a.b c")),
            Some(PathBuf::from("/repo/.hydrate/spare/out%2Fa%2Eb%20c"))
        );
        for none in ["", "../x", "/abs", ".hydrate/x"] {
            assert_eq!(home(base, Path::new(none)), None, "{none:?}");
        }
    }

    #[test]
    fn clean_knows_only_the_names_it_gives() {
        for ours in ["rendered%2Fdev", "out%2Fa%2Eb", "dev.4242"] {
            assert!(is_tree_name(ours), "{ours}");
        }
        for theirs in ["", ".gitignore", "a.b.c", "x.", "my dir", ".1"] {
            assert!(!is_tree_name(theirs), "{theirs:?}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(SPARE_DIR);
        std::fs::create_dir_all(dir.join("out%2Fdev")).unwrap();
        std::fs::create_dir_all(dir.join("my dir")).unwrap();
        assert_eq!(clean(tmp.path()).unwrap(), 1);
        assert!(dir.join("my dir").is_dir(), "not ours: left");
    }

    #[test]
    fn clearing_the_way_never_follows_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("t");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("m.yaml"), "keep").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("web")).unwrap();
        clear_way(&tree, Path::new("web/m.yaml")).unwrap();
        assert!(tree.join("web").is_dir());
        assert!(!tree.join("web").is_symlink());
        assert_eq!(std::fs::read(outside.join("m.yaml")).unwrap(), b"keep");
        // A file where a directory goes, and a directory where a file goes.
        std::fs::write(tree.join("api"), "x").unwrap();
        clear_way(&tree, Path::new("api/m.yaml")).unwrap();
        assert!(tree.join("api").is_dir());
        std::fs::create_dir_all(tree.join("db/m.yaml/deep")).unwrap();
        clear_way(&tree, Path::new("db/m.yaml")).unwrap();
        assert!(!tree.join("db/m.yaml").exists());
    }

    #[test]
    fn a_claim_takes_the_tree_and_a_release_puts_it_back() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out/dev");
        std::fs::create_dir_all(&root).unwrap();
        let home = home(tmp.path(), Path::new("out/dev")).unwrap();
        assert_eq!(claim(&home, &root), None, "no spare yet");
        let old = tmp.path().join("old");
        std::fs::create_dir_all(old.join("web")).unwrap();
        keep(&old, &home).unwrap();
        assert!(!old.exists());
        assert_eq!(
            std::fs::read(tmp.path().join(SPARE_DIR).join(".gitignore")).unwrap(),
            b"*\n"
        );
        let claimed = claim(&home, &root).unwrap();
        assert!(claimed.join("web").is_dir());
        assert!(!home.exists());
        assert_eq!(claim(&home, &root), None, "claimed once");
        release(&claimed, &home);
        assert!(home.join("web").is_dir());
        // A dead run's claim (pid u32::MAX) goes back home.
        std::fs::rename(&home, claimed_name(&home, u32::MAX).unwrap()).unwrap();
        assert!(claim(&home, &root).is_some());
        assert_eq!(clean(tmp.path()).unwrap(), 1);
        assert!(!tmp.path().join(SPARE_DIR).exists());
    }

    /// A listed directory whose stat is unchanged is taken from the list;
    /// a changed or young one is read: the result is what a walk finds,
    /// except for what the list says of a directory nothing moved.
    #[test]
    fn a_listed_tree_is_read_where_it_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        let tree = base.join("out/dev");
        std::fs::create_dir_all(tree.join("web")).unwrap();
        std::fs::create_dir_all(tree.join("api/sub")).unwrap();
        std::fs::write(tree.join("web/m.yaml"), "a\n").unwrap();
        std::fs::write(tree.join("api/sub/m.yaml"), "b\n").unwrap();
        let entries = super::super::stat_tree(base, Path::new("out/dev")).unwrap();
        let listed = |young: &[usize]| -> BTreeMap<PathBuf, Have> {
            let l = Listing {
                entries: entries.clone(),
                young: young.to_vec(),
            };
            walk_listed(&tree, &l).unwrap()
        };
        assert_eq!(listed(&[]), walk(&tree).unwrap(), "as listed");
        std::fs::write(tree.join("api/new.yaml"), "c\n").unwrap();
        assert_eq!(listed(&[]), walk(&tree).unwrap(), "api moved: read");
        // What only a young directory's reading finds: a list that left
        // an entry out while the directory's stat stayed.
        let without: Vec<(PathBuf, Stat)> = entries
            .iter()
            .filter(|(r, _)| r != Path::new("web/m.yaml"))
            .cloned()
            .collect();
        let web = without
            .iter()
            .position(|(r, _)| r == Path::new("web"))
            .unwrap();
        let walk_without = |young: &[usize]| {
            let l = Listing {
                entries: without.clone(),
                young: young.to_vec(),
            };
            walk_listed(&tree, &l).unwrap()
        };
        assert!(
            !walk_without(&[]).contains_key(Path::new("web/m.yaml")),
            "trusted"
        );
        assert_eq!(walk_without(&[web]), walk(&tree).unwrap(), "young: read");
        // A listed directory that is now a file (its parent moved).
        std::fs::remove_dir_all(tree.join("api/sub")).unwrap();
        std::fs::write(tree.join("api/sub"), "x\n").unwrap();
        assert_eq!(listed(&[]), walk(&tree).unwrap(), "read");
    }
}
