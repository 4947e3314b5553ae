//! `realpath` for many paths that share directories: every resolved prefix
//! is remembered, so resolving thousands of paths under a few hundred
//! directories reads each directory's entries (`lstat`, `readlink`) once
//! instead of once per path, as `std::fs::canonicalize` would. It reads
//! only file types and link targets, never content, and writes nothing.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::fx::FxBuild;

/// Symlinks followed in one resolution before giving up (as Linux's
/// `MAXSYMLINKS`).
const MAX_LINKS: u32 = 40;

/// A memo of resolved absolute paths (see the module doc).
#[derive(Default)]
pub struct Realpath {
    /// By the path's bytes: hashing a `Path` walks its components, 1.5%
    /// of a settled run at 10,000 apps (two spellings of one path are two
    /// entries with one answer).
    /// Each with its `lstat` when its last part was found to be a
    /// directory there.
    memo: Mutex<HashMap<OsString, (PathBuf, Option<Seen>), FxBuild>>,
    /// When not zero: at most this many paths are remembered (the memo
    /// starts over when full), so a long-lived memo does not grow with
    /// the repository.
    limit: usize,
    /// A directory parts below it are looked up from (see
    /// [`Realpath::anchored`]).
    anchor: Option<Anchor>,
}

/// What a path is, not followed.
enum Kind {
    Link,
    Dir(Seen),
    Other,
}

/// A directory's `lstat` as the resolver took it: device, inode, size,
/// mode, and modification and change times (seconds, nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mode: u32,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl Kind {
    #[cfg(unix)]
    fn of(m: &std::fs::Metadata) -> Kind {
        use std::os::unix::fs::MetadataExt;
        match m.file_type() {
            t if t.is_symlink() => Kind::Link,
            t if t.is_dir() => Kind::Dir(Seen {
                dev: m.dev(),
                ino: m.ino(),
                size: m.size(),
                mode: m.mode(),
                mtime: (m.mtime(), m.mtime_nsec()),
                ctime: (m.ctime(), m.ctime_nsec()),
            }),
            _ => Kind::Other,
        }
    }

    /// Off unix, a directory's stat has nothing to compare: only links
    /// are told apart (and no directory is [`Unlinked`]).
    #[cfg(not(unix))]
    fn of(m: &std::fs::Metadata) -> Kind {
        match m.file_type().is_symlink() {
            true => Kind::Link,
            false => Kind::Other,
        }
    }
}

/// Absolute paths of directories with no symlink in them, with their
/// `lstat`, as one run found them ([`Realpath::unlinked`]).
#[derive(Default)]
pub struct Unlinked(HashMap<OsString, Seen, FxBuild>);

impl Unlinked {
    /// Whether `path` (its bytes, as spelled) is one of them.
    pub fn contains(&self, path: &std::ffi::OsStr) -> bool {
        self.0.contains_key(path)
    }

    /// Its `lstat`, when `path` is one of them (a stat following links
    /// gives the same: nothing in it is a link).
    pub(crate) fn get(&self, path: &std::ffi::OsStr) -> Option<&Seen> {
        self.0.get(path)
    }
}

/// A resolved directory, opened once, and its path with a final `/`.
struct Anchor {
    prefix: Vec<u8>,
    dir: std::fs::File,
}

impl Realpath {
    /// A memo of at most `limit` paths.
    pub fn bounded(limit: usize) -> Realpath {
        Realpath {
            memo: Mutex::default(),
            limit,
            anchor: None,
        }
    }

    /// A memo whose lookups below `dir` (absolute, resolved: a repository
    /// root as `canonicalize` gives it) start from `dir` opened once, not
    /// from `/`: the kernel then walks only the parts below it. Checking
    /// where 6,000 app paths lead at 2,000 apps spent twice as long per
    /// `lstat` as stating the inputs from the root did. Without `dir`
    /// (it cannot be opened) it is [`Realpath::default`].
    pub fn anchored(dir: &Path) -> Realpath {
        let anchor = std::fs::File::open(dir).ok().map(|f| {
            let mut prefix = dir.as_os_str().as_encoded_bytes().to_vec();
            if prefix.last() != Some(&b'/') {
                prefix.push(b'/');
            }
            Anchor { prefix, dir: f }
        });
        Realpath {
            anchor,
            ..Realpath::default()
        }
    }

    /// The absolute path `path` leads to with every symlink and `..`
    /// resolved (as `realpath`); `None` when a part of it is missing or
    /// links loop. A `..` after a symlink climbs from where the link leads.
    pub fn resolve(&self, path: &Path) -> Option<PathBuf> {
        let abs = std::path::absolute(path).ok()?;
        self.resolve_abs(&abs, 0)
    }

    /// [`Realpath::resolve`], remembering only the directories on the way:
    /// for paths each resolved about once (a build's files), whose
    /// directories are shared. kustomize's loader resolves every file it
    /// reads and every kustomization directory (`EvalSymlinks`, its load
    /// restrictor); `std::fs::canonicalize` does one `readlink` per
    /// component of each, 5% of a cold 500-app render.
    pub fn resolve_leaf(&self, path: &Path) -> Option<PathBuf> {
        let abs = std::path::absolute(path).ok()?;
        match (abs.parent(), abs.components().next_back()) {
            (Some(parent), Some(Component::Normal(name))) => {
                Some(self.step(&self.resolve_abs(parent, 0)?, name, 0)?.0)
            }
            _ => self.resolve_abs(&abs, 0),
        }
    }

    /// Frees the memo (at the end of a run it holds every directory seen).
    pub fn forget(&self) {
        if let Ok(mut m) = self.memo.lock() {
            *m = HashMap::default();
        }
    }

    /// The directories this memo found to be what their path says: each
    /// part of the path, down to the directory itself, is no symlink.
    /// A `..` after such a directory climbs where it reads.
    pub fn unlinked(&self) -> Unlinked {
        let Ok(memo) = self.memo.lock() else {
            return Unlinked::default();
        };
        Unlinked(
            memo.iter()
                .filter(|(path, (real, _))| path.as_os_str() == real.as_os_str())
                .filter_map(|(path, (_, seen))| Some((path.clone(), (*seen)?)))
                .collect(),
        )
    }

    /// `name` in the resolved directory `base`, followed when it is a
    /// symlink (`depth` links followed so far); with whether it leads to
    /// a directory.
    fn step(
        &self,
        base: &Path,
        name: &std::ffi::OsStr,
        depth: u32,
    ) -> Option<(PathBuf, Option<Seen>)> {
        let joined = base.join(name);
        match self.kind(&joined)? {
            Kind::Link => {
                let target = base.join(std::fs::read_link(&joined).ok()?);
                self.resolve_typed(&target, depth + 1)
            }
            Kind::Dir(seen) => Some((joined, Some(seen))),
            Kind::Other => Some((joined, None)),
        }
    }

    /// What `joined` (a resolved directory and one name in it) is, not
    /// followed; `None` when it cannot be stated.
    #[cfg(target_os = "linux")]
    fn kind(&self, joined: &Path) -> Option<Kind> {
        use rustix::fs::{statx, AtFlags, FileType, StatxFlags};
        use std::os::unix::ffi::OsStrExt;
        let below = self.anchor.as_ref().and_then(|a| {
            let rest = joined
                .as_os_str()
                .as_bytes()
                .strip_prefix(a.prefix.as_slice())?;
            (!rest.is_empty()).then_some((a, std::ffi::OsStr::from_bytes(rest)))
        });
        match below {
            // `rest` has no `..` and no link before its last part: `base`
            // is resolved. So it names from the anchor what it names from
            // `/`.
            Some((a, rest)) => {
                let x = statx(
                    &a.dir,
                    rest,
                    AtFlags::SYMLINK_NOFOLLOW,
                    StatxFlags::BASIC_STATS,
                )
                .ok()?;
                let t = |t: rustix::fs::StatxTimestamp| (t.tv_sec, i64::from(t.tv_nsec));
                Some(match FileType::from_raw_mode(x.stx_mode.into()) {
                    FileType::Symlink => Kind::Link,
                    // The values std gives for the same path (it takes
                    // them from `statx` too).
                    FileType::Directory => Kind::Dir(Seen {
                        dev: libc::makedev(x.stx_dev_major, x.stx_dev_minor),
                        ino: x.stx_ino,
                        size: x.stx_size,
                        mode: u32::from(x.stx_mode),
                        mtime: t(x.stx_mtime),
                        ctime: t(x.stx_ctime),
                    }),
                    _ => Kind::Other,
                })
            }
            None => Some(Kind::of(&std::fs::symlink_metadata(joined).ok()?)),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn kind(&self, joined: &Path) -> Option<Kind> {
        Some(Kind::of(&std::fs::symlink_metadata(joined).ok()?))
    }

    fn resolve_abs(&self, path: &Path, depth: u32) -> Option<PathBuf> {
        Some(self.resolve_typed(path, depth)?.0)
    }

    /// [`Realpath::resolve_abs`], with whether it leads to a directory.
    fn resolve_typed(&self, path: &Path, depth: u32) -> Option<(PathBuf, Option<Seen>)> {
        if depth > MAX_LINKS {
            return None;
        }
        if let Some(c) = self.memo.lock().ok()?.get(path.as_os_str()) {
            return Some(c.clone());
        }
        let Some(parent) = path.parent() else {
            return Some((path.to_path_buf(), None));
        };
        let (base, _) = self.resolve_typed(parent, depth)?;
        let out = match path.components().next_back()? {
            // Neither is ever its own resolved path: no stat is needed.
            Component::ParentDir => (base.parent().unwrap_or(&base).to_path_buf(), None),
            Component::CurDir => (base, None),
            Component::Normal(name) => self.step(&base, name, depth)?,
            _ => (path.to_path_buf(), None),
        };
        let mut memo = self.memo.lock().ok()?;
        if self.limit > 0 && memo.len() >= self.limit {
            memo.clear();
        }
        memo.insert(path.as_os_str().to_os_string(), out.clone());
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_as_canonicalize_does() {
        resolves_as_canonicalize_does_with(|_| Realpath::default());
    }

    #[test]
    fn anchored_it_resolves_as_canonicalize_does() {
        // Anchored at the temporary directory and at a directory below it
        // (paths then cross the anchor through a link and `..`).
        resolves_as_canonicalize_does_with(Realpath::anchored);
        resolves_as_canonicalize_does_with(|d| Realpath::anchored(&d.join("a")));
    }

    /// [`Realpath::resolve`] and [`Realpath::resolve_leaf`] of memos `new`
    /// makes (given the temporary directory's resolved path) against
    /// `canonicalize`.
    fn resolves_as_canonicalize_does_with(new: impl Fn(&Path) -> Realpath) {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("a/sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("f"), "").unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        let r = new(&real);
        let canon = |p: &Path| std::fs::canonicalize(p).ok();
        for p in [
            sub.join("f"),
            d.path().join("a/./sub/../sub/f"),
            d.path().join("a"),
            d.path().join("a/sub/.."),
            sub.join("f/x"),
        ] {
            assert_eq!(r.resolve(&p), canon(&p), "{}", p.display());
            assert_eq!(r.resolve_leaf(&p), canon(&p), "{}", p.display());
        }
        assert_eq!(r.resolve(&d.path().join("nope/x")), None);
        assert_eq!(r.resolve_leaf(&d.path().join("nope/x")), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&sub, d.path().join("via")).unwrap();
            let via = d.path().join("via/../sub/.");
            assert_eq!(r.resolve(&via), canon(&sub));
            let gone = d.path().join("via/../via");
            assert_eq!(r.resolve(&gone), canon(&gone));
            assert_eq!(r.resolve(&gone), None);
            // `..` after a link climbs from its target, not lexically.
            let up = d.path().join("via/..");
            assert_eq!(r.resolve(&up), canon(&d.path().join("a")));
            std::os::unix::fs::symlink("loop", d.path().join("loop")).unwrap();
            assert_eq!(r.resolve(&d.path().join("loop")), None);
            // A link as the last part: followed (a fresh memo each, so the
            // leaf is not answered from what `resolve` remembered).
            std::os::unix::fs::symlink("a/sub/f", d.path().join("to-f")).unwrap();
            for p in [
                d.path().join("to-f"),
                d.path().join("via"),
                d.path().join("loop"),
            ] {
                assert_eq!(new(&real).resolve_leaf(&p), canon(&p), "{}", p.display());
            }
            // A memo that starts over when full answers the same.
            let small = Realpath::bounded(2);
            for p in [&via, &up, &gone, &sub.join("f"), &d.path().join("to-f")] {
                assert_eq!(small.resolve(p), canon(p), "{}", p.display());
                assert!(small.memo.lock().unwrap().len() <= 2);
            }
        }
    }
}
