//! What a render's inputs are and what they hold now: the files it read and
//! the directories it looked in, each reduced to a hash that changes when
//! anything a render could observe changes. Hashes are memoised for one run
//! (shared bases are hashed once, not once per overlay) and, git-index
//! style, across runs: a path whose `stat` is what it was when it was last
//! hashed is not read again (see [`Stat`] for when that is trusted). It
//! renders nothing and writes nothing; `index` stores what it learnt.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::hash::BuildHasherDefault;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::entry::Key;
use crate::realpath::Realpath;

/// The inputs of a render that read `files_read`: those paths, plus the
/// directory each of them that is not a directory (`is_dir`) is in. A
/// directory counts with its listing, so a file that was probed and absent
/// (`kustomization.yml` beside `kustomization.yaml`, a new template in a
/// chart's `templates/`) changes the key when it appears. A directory's
/// own directory adds nothing: the directory's hash (its canonical path
/// and listing) changes when it is removed, replaced or pointed elsewhere,
/// and at 500 apps the parents of kustomize's named directories
/// (`overlays/dev/../..` for `../../base`) were a sixth of every input.
///
/// Each is spelled absolute, joined to `cwd` (the working directory, asked
/// once per run) when relative, with `.` parts and doubled or trailing
/// slashes gone, which changes nothing it leads to: a job's own directory
/// (`./apps/web/overlays/dev`) and the same directory as kustomize read its
/// files there (`/repo/apps/web/overlays/dev`) are one input, stated once.
/// `..` is kept: where it leads depends on the symlinks before it.
pub fn of(
    files_read: &[PathBuf],
    cwd: Option<&Path>,
    is_dir: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let named: BTreeSet<PathBuf> = files_read.iter().map(|f| spelled(f, cwd)).collect();
    let parents: Vec<PathBuf> = named
        .iter()
        .filter(|f| !is_dir(f))
        .filter_map(|f| f.parent().filter(|p| !p.as_os_str().is_empty()))
        .map(Path::to_path_buf)
        .collect();
    let mut all = named;
    all.extend(parents);
    all.into_iter().collect()
}

/// `path` as [`of`] spells an input: absolute (joined to `cwd` when
/// relative), without `.` parts or doubled and trailing slashes.
pub fn spelled(path: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path).components().collect(),
        _ => path.components().collect(),
    }
}

/// A path as the cache holds it in memory: its bytes, shared. The hash
/// memo, the stat index and every job record that names a path share one
/// allocation of it (at 2,000 apps, ~90,000 distinct paths named ~200,000
/// times by the job records).
pub type Name = Arc<OsStr>;

/// A file's or directory's `stat` (following symlinks): what changes when
/// its content or listing may have. Device, inode, size, mode and both
/// modification and change times (nanoseconds), as git's index compares
/// them; a write that restores the old `mtime` still moves `ctime`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stat {
    /// Device, inode, size, mode.
    pub id: [u64; 4],
    /// `mtime` and `ctime` as (seconds, nanoseconds) since the epoch.
    pub times: [(i64, i64); 2],
}

/// A file modified within this long before a run started may be modified
/// again within the same timestamp tick after it was hashed, leaving its
/// `stat` unchanged (git's "racy" entries): it is hashed again next run
/// rather than remembered. Generous, to cover coarse filesystem clocks.
pub const RACY: Duration = Duration::from_secs(1);

impl Stat {
    /// `path`'s stat; `None` when it cannot be read (then it is hashed).
    #[cfg(unix)]
    pub fn of(path: &Path) -> Option<Stat> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Stat {
            id: [m.dev(), m.ino(), m.size(), u64::from(m.mode())],
            times: [(m.mtime(), m.mtime_nsec()), (m.ctime(), m.ctime_nsec())],
        })
    }

    /// No stat index off unix (no inode or change time to trust).
    #[cfg(not(unix))]
    pub fn of(_path: &Path) -> Option<Stat> {
        None
    }

    /// [`Stat::of`] `dir/rel`, looked up from an open `dir` (`rel`'s
    /// components only: a path under a deep root is not walked from `/`
    /// each time). The same values as [`Stat::of`] gives: std takes them
    /// from `statx` too, and makes the device number with `makedev`.
    #[cfg(target_os = "linux")]
    pub fn at(dir: std::os::fd::BorrowedFd<'_>, rel: &Path) -> Option<Stat> {
        use rustix::fs::{statx, AtFlags, StatxFlags};
        let x = statx(dir, rel, AtFlags::empty(), StatxFlags::BASIC_STATS).ok()?;
        let t = |t: rustix::fs::StatxTimestamp| (t.tv_sec, i64::from(t.tv_nsec));
        Some(Stat {
            id: [
                libc::makedev(x.stx_dev_major, x.stx_dev_minor),
                x.stx_ino,
                x.stx_size,
                u64::from(x.stx_mode),
            ],
            times: [t(x.stx_mtime), t(x.stx_ctime)],
        })
    }

    /// The stat in `m` (as `symlink_metadata` gives it for an entry that
    /// is itself a symlink: the link, not its target).
    #[cfg(unix)]
    pub fn of_metadata(m: &std::fs::Metadata) -> Option<Stat> {
        use std::os::unix::fs::MetadataExt;
        Some(Stat {
            id: [m.dev(), m.ino(), m.size(), u64::from(m.mode())],
            times: [(m.mtime(), m.mtime_nsec()), (m.ctime(), m.ctime_nsec())],
        })
    }

    /// No stat off unix.
    #[cfg(not(unix))]
    pub fn of_metadata(_m: &std::fs::Metadata) -> Option<Stat> {
        None
    }

    /// Whether it is the stat of a directory.
    pub fn is_dir(&self) -> bool {
        // POSIX's `S_IFMT` and `S_IFDIR` (the mode is only ever a unix one).
        self.id[3] & 0o170_000 == 0o040_000
    }

    /// Whether both times are before `t` (seconds, nanoseconds).
    fn before(&self, t: (i64, i64)) -> bool {
        self.times.iter().all(|x| *x < t)
    }

    /// Whether this stat can vouch for the content of what it was taken
    /// of (a file's bytes, a directory's entries): modified at least
    /// [`RACY`] before `started`. Any later change to the content moves the
    /// modification time past it; the change time may be newer (a hard
    /// link moves it, the content stays).
    pub fn modified_before(&self, started: SystemTime) -> bool {
        self.times[0] < epoch(started.checked_sub(RACY).unwrap_or(UNIX_EPOCH))
    }

    /// Whether this stat can vouch for what it was taken of: both times
    /// at least [`RACY`] before `started` (a change within the same tick
    /// could otherwise leave it as it was; git's "racily clean" entries).
    pub fn trusted(&self, started: SystemTime) -> bool {
        self.before(epoch(started.checked_sub(RACY).unwrap_or(UNIX_EPOCH)))
    }
}

/// A directory's `lstat` as the path resolver took it (for a directory
/// with no link in its path, what [`Stat::of`] gives).
impl From<&crate::realpath::Seen> for Stat {
    fn from(s: &crate::realpath::Seen) -> Stat {
        Stat {
            id: [s.dev, s.ino, s.size, u64::from(s.mode)],
            times: [s.mtime, s.ctime],
        }
    }
}

/// `t` as (seconds, nanoseconds) since the epoch, as `stat` gives times.
fn epoch(t: SystemTime) -> (i64, i64) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            i64::from(d.subsec_nanos()),
        ),
        Err(_) => (i64::MIN, 0),
    }
}

/// What the stat index knows about each path (by its bytes): its stat
/// when it was hashed and the hash.
pub type Known = PathMap<(Stat, Key)>;

/// What a run learnt for the stat index: (path, stat, hash), sorted by
/// path, each path once. A list, not a map: it is only looked at once the
/// run is over, and a map's table costs more than its entries.
pub type Learnt = Vec<(Name, Stat, Key)>;

/// A map keyed by a path's bytes, hashed with [`Fx`]: hashing a `Path`
/// walks its components, and SipHash's flood resistance buys nothing for
/// keys that come from the repository and only index memory. Content
/// identity (the keys stored on disk) stays SHA-256.
pub type PathMap<V> = HashMap<Name, V, BuildHasherDefault<Fx>>;

pub use crate::fx::Fx;

/// Directories the hasher's [`Realpath`] remembers at most (it starts
/// over past it). A directory input is resolved once per run (the memo
/// then holds its hash), so the memo only saves the lstats of the
/// directories above it, which renders of one app share and meet close
/// together; unbounded, it held every spelling of every directory on the
/// way (`overlays/dev/..`, `overlays/dev/../..`): about 15 MB at 2,000
/// apps, growing with the repository.
const CANON_DIRS: usize = 16 << 10;

/// Content hashes of paths, each computed once per run, and not at all
/// when the stat index vouches for them.
pub struct Hasher {
    /// By the path's bytes (hashing a `Path` walks its components); with
    /// whether it is a directory ([`of`] asks).
    memo: Mutex<PathMap<(Key, bool)>>,
    /// Where directories really are (a directory named several ways is
    /// listed once).
    canon: Realpath,
    /// The stat index as the last run left it.
    prior: Known,
    /// Only stats older than this are remembered (see [`RACY`]).
    trust_before: (i64, i64),
    /// What this run learnt that `prior` does not say, for the next run
    /// (an unchanged run learns nothing and copies nothing); in the order
    /// learnt, a path twice when two threads hashed it at once.
    seen: Mutex<Learnt>,
    hashed: AtomicUsize,
    vouched: AtomicUsize,
}

impl Default for Hasher {
    fn default() -> Hasher {
        Hasher::new(Known::default())
    }
}

impl Hasher {
    /// A hasher that trusts `prior` (a stat index) where stats still match.
    pub fn new(prior: Known) -> Hasher {
        let now = SystemTime::now();
        Hasher {
            memo: Mutex::default(),
            canon: Realpath::bounded(CANON_DIRS),
            prior,
            trust_before: epoch(now.checked_sub(RACY).unwrap_or(UNIX_EPOCH)),
            seen: Mutex::default(),
            hashed: AtomicUsize::new(0),
            vouched: AtomicUsize::new(0),
        }
    }

    /// How many paths were read and hashed, and how many the stat index
    /// answered.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.hashed.load(Ordering::Relaxed),
            self.vouched.load(Ordering::Relaxed),
        )
    }

    /// Whether the stat index learnt anything this run (it is then worth
    /// writing).
    pub fn changed(&self) -> bool {
        self.seen.lock().map_or(true, |s| !s.is_empty())
    }

    /// What this run learnt for the stat index, over [`Hasher::prior`]
    /// (which it replaces where both name a path).
    ///
    /// Called once, at the end of a run: what was learnt is moved out, not
    /// copied, and the run's memos are freed (at 2,000 apps they hold
    /// about 100,000 paths).
    pub fn take_learnt(&self) -> Learnt {
        if let Ok(mut m) = self.memo.lock() {
            *m = PathMap::default();
        }
        self.canon.forget();
        let mut learnt = self
            .seen
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        // Each entry is a stat and the hash taken after it, so either of
        // two for one path is a true one.
        learnt.sort_by(|a, b| a.0.cmp(&b.0));
        learnt.dedup_by(|a, b| a.0 == b.0);
        learnt
    }

    /// The stat index as the last run left it (paths this run did not look
    /// at are other shards').
    pub fn prior(&self) -> &Known {
        &self.prior
    }

    /// Remembers `path`'s stat and hash for the next run when the stat is
    /// old enough to be trusted ([`RACY`]) and the index does not already
    /// say so.
    fn learn(&self, path: &Name, stat: Stat, k: Key) {
        if !stat.before(self.trust_before) || self.prior.get(&**path) == Some(&(stat, k)) {
            return;
        }
        if let Ok(mut seen) = self.seen.lock() {
            seen.push((path.clone(), stat, k));
        }
    }

    /// The hash of what `path` holds now (see [`Hasher::hash_path`]).
    pub fn hash(&self, path: &Path) -> Key {
        self.entry(path.as_os_str(), None).1
    }

    /// The hash of what `name` holds now, as [`Hasher::hash`].
    pub fn hash_name(&self, name: &Name) -> Key {
        self.entry(name, Some(name)).1
    }

    /// [`Hasher::hash`] of `path`, and the path as the memo holds it, to be
    /// shared by whoever keeps it (`shared`, when given, is the allocation
    /// to keep if the memo has none yet).
    pub fn entry(&self, name: &OsStr, shared: Option<&Name>) -> (Name, Key) {
        let (name, k, _) = self.typed_entry(name, shared);
        (name, k)
    }

    /// [`Hasher::entry`], and whether the path was a directory when it was
    /// hashed or its stat vouched for it.
    pub fn typed_entry(&self, name: &OsStr, shared: Option<&Name>) -> (Name, Key, bool) {
        let memo = self.memo.lock().ok();
        if let Some((n, (k, dir))) = memo.as_ref().and_then(|m| m.get_key_value(name)) {
            return (n.clone(), *k, *dir);
        }
        drop(memo);
        let path = Path::new(name);
        let prior = self.prior.get_key_value(name);
        let (stat, k) = match prior {
            // Stat before reading: a change after this moves the stat.
            Some((_, (was, k))) => match Stat::of(path) {
                Some(s) if s == *was => {
                    self.vouched.fetch_add(1, Ordering::Relaxed);
                    (Some(s), *k)
                }
                stat => {
                    self.hashed.fetch_add(1, Ordering::Relaxed);
                    (stat, self.hash_path(path))
                }
            },
            // Nothing to vouch for it (a cold run's every input): opened
            // first and stated through the handle (see `stat_and_hash`).
            None => {
                self.hashed.fetch_add(1, Ordering::Relaxed);
                self.stat_and_hash(path)
            }
        };
        let name = match (shared, prior) {
            (Some(n), _) | (None, Some((n, _))) => n.clone(),
            (None, None) => Name::from(name),
        };
        if let Some(s) = stat {
            self.learn(&name, s, k);
        }
        let dir = stat.is_some_and(|s| s.is_dir());
        if let Ok(mut m) = self.memo.lock() {
            m.insert(name.clone(), (k, dir));
        }
        (name, k, dir)
    }

    /// A file a render read, told as it was read (kustomize's
    /// [`crate::kustomize::ReadHook`]): `stat` from the open file before
    /// reading, and `bytes`. Remembered as [`Hasher::entry`] would find
    /// them, so storing the render does not open the file again, and the
    /// hash is of the bytes the render used. The first word on a name in
    /// a run stands, as the memo's always does.
    pub fn saw_file(&self, name: &OsStr, stat: Option<Stat>, bytes: &[u8]) {
        if self.memo.lock().map_or(true, |m| m.contains_key(name)) {
            return;
        }
        let k = file_key(bytes);
        self.hashed.fetch_add(1, Ordering::Relaxed);
        let name = match self.prior.get_key_value(name) {
            Some((n, _)) => n.clone(),
            None => Name::from(name),
        };
        if let Some(s) = stat {
            self.learn(&name, s, k);
        }
        if let Ok(mut m) = self.memo.lock() {
            m.entry(name).or_insert((k, false));
        }
    }

    /// For each of `names` (sorted, each once): a stat it had when this
    /// run hashed it or the stat index vouched for it, under the hash this
    /// run found, old enough to be trusted ([`RACY`]); `None` for a name
    /// with no such stat. What the stat must still be for the hash to
    /// still hold. Read from what the run learnt and the stat index, so
    /// the memo keeps no stats: a path the index knows under the same hash
    /// gets the index's stat even when this run saw a younger one with the
    /// same bytes, which can only make a later comparison fail.
    ///
    /// Told to `each`, in the order of `names`: at 10,000 apps a list of
    /// them was 26 MB at the run's peak.
    pub fn trusted_stats(&self, names: &[&Name], mut each: impl FnMut(Option<Stat>)) {
        let (Ok(memo), Ok(mut seen)) = (self.memo.lock(), self.seen.lock()) else {
            names.iter().for_each(|_| each(None));
            return;
        };
        // Learnt this run (only trusted stats are): sorted in place, as
        // `take_learnt` sorts them anyway (a cold run learns every path).
        // Both lists in name order: one pass over it, no search.
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        let mut learnt = seen.iter().peekable();
        for n in names {
            while learnt.next_if(|(s, _, _)| **s < ***n).is_some() {}
            let here = learnt
                .peek()
                .filter(|(s, _, _)| **s == ***n)
                .map(|(_, st, k)| (st, k));
            let trusted = memo.get(&***n).and_then(|(k, _)| {
                let (st, known) = here.or_else(|| self.prior.get(&***n).map(|(s, k)| (s, k)))?;
                (known == k && st.before(self.trust_before)).then_some(*st)
            });
            each(trusted);
        }
    }

    /// A hash of what a render could observe at `path`:
    /// - a file: its bytes (a symlink's target is part of its directory's
    ///   listing, and that directory is an input too: see [`of`]);
    /// - a directory: its canonical path (where `../../base` really leads)
    ///   and its sorted listing (name, type, and symlink targets); a
    ///   directory named several ways is listed once;
    /// - anything unreadable or absent: a marker of its own.
    ///
    /// Opening and reading is all a file costs; [`Hasher::hash`] skips it
    /// when the stat index vouches for the path.
    fn hash_path(&self, path: &Path) -> Key {
        match std::fs::File::open(path) {
            Ok(f) => self.hash_open(path, f).1,
            Err(e) => absent(&e),
        }
    }

    /// [`Hasher::hash_path`] of `path`, and its stat taken from the open
    /// file before it is read (so it is the stat of what was read, as
    /// [`Stat::of`] before opening would be when nothing moves). One path
    /// walk and five system calls for a file instead of two walks and
    /// seven (`statx` of the path, then std's `read_to_end` states and
    /// seeks the handle for a size hint): input hashing was a tenth of a
    /// cold run's CPU at 500 apps. A path that cannot be opened is stated
    /// by its path, as before.
    fn stat_and_hash(&self, path: &Path) -> (Option<Stat>, Key) {
        match std::fs::File::open(path) {
            Ok(f) => self.hash_open(path, f),
            Err(e) => (Stat::of(path), absent(&e)),
        }
    }

    /// The stat of `f`, opened at `path`, and the hash of what it holds,
    /// read in one go: room for one byte more than its stated size, so the
    /// read that finds the end needs no new buffer, and read through
    /// `Take`, which asks the handle for no size hint.
    fn hash_open(&self, path: &Path, f: std::fs::File) -> (Option<Stat>, Key) {
        let m = f.metadata().ok();
        let stat = m.as_ref().and_then(Stat::of_metadata);
        let size = m.and_then(|m| usize::try_from(m.len()).ok()).unwrap_or(0);
        let mut bytes = Vec::with_capacity(size.saturating_add(1));
        let mut h = Sha256::new();
        match f.take(u64::MAX).read_to_end(&mut bytes) {
            Ok(_) => return (stat, file_key(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                match self.canon.resolve(path) {
                    Some(c) if c.as_path() != path => h.update(self.hash(&c)),
                    _ => hash_dir(path, &mut h),
                }
            }
            Err(e) => h.update(format!("E{:?}", e.kind()).as_bytes()),
        }
        (stat, h.finalize().into())
    }
}

/// The hash of a path that could not be opened (as [`Hasher::hash_path`]
/// gives it): what kept it from being opened.
fn absent(e: &std::io::Error) -> Key {
    let mut h = Sha256::new();
    h.update(format!("A{:?}", e.kind()).as_bytes());
    h.finalize().into()
}

/// The hash of a file holding `bytes` (as [`Hasher::hash_path`] gives it).
fn file_key(bytes: &[u8]) -> Key {
    let mut h = Sha256::new();
    h.update(b"F");
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    h.finalize().into()
}

/// A canonical directory: its path and listing.
fn hash_dir(path: &Path, h: &mut Sha256) {
    h.update(b"D");
    h.update(path.as_os_str().as_encoded_bytes());
    h.update(b"\0");
    let Ok(rd) = std::fs::read_dir(path) else {
        h.update(b"unreadable");
        return;
    };
    let mut entries: Vec<(std::ffi::OsString, u8, Option<PathBuf>)> = rd
        .filter_map(Result::ok)
        .map(|e| {
            let (ty, link) = match e.file_type() {
                Ok(t) if t.is_symlink() => (b'l', std::fs::read_link(e.path()).ok()),
                Ok(t) if t.is_dir() => (b'd', None),
                Ok(t) if t.is_file() => (b'f', None),
                Ok(_) => (b'o', None),
                Err(_) => (b'?', None),
            };
            (e.file_name(), ty, link)
        })
        .collect();
    entries.sort();
    for (name, ty, link) in entries {
        h.update(name.as_encoded_bytes());
        h.update([0, ty]);
        if let Some(l) = link {
            h.update(l.as_os_str().as_encoded_bytes());
        }
        h.update(b"\0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_change_with_content_listing_and_links() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.yaml");
        std::fs::write(&f, "a: 1\n").unwrap();
        let (file0, dir0) = (
            Hasher::default().hash_path(&f),
            Hasher::default().hash_path(d.path()),
        );
        assert_eq!(Hasher::default().hash_path(&f), file0, "stable");
        std::fs::write(&f, "a: 2\n").unwrap();
        assert_ne!(Hasher::default().hash_path(&f), file0, "content");
        assert_eq!(
            Hasher::default().hash_path(d.path()),
            dir0,
            "content is not the listing"
        );
        std::fs::write(d.path().join("kustomization.yml"), "").unwrap();
        assert_ne!(
            Hasher::default().hash_path(d.path()),
            dir0,
            "a new file in the directory"
        );
        let gone = d.path().join("gone");
        assert_ne!(
            Hasher::default().hash_path(&gone),
            Hasher::default().hash_path(&f)
        );
        #[cfg(unix)]
        {
            let other = d.path().join("b.yaml");
            std::fs::write(&other, "a: 2\n").unwrap();
            let link = d.path().join("l.yaml");
            std::os::unix::fs::symlink(&f, &link).unwrap();
            let before = Hasher::default().hash_path(d.path());
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink(&other, &link).unwrap();
            assert_eq!(
                Hasher::default().hash_path(&link),
                Hasher::default().hash_path(&other)
            );
            assert_ne!(
                Hasher::default().hash_path(d.path()),
                before,
                "same bytes, other target: the directory's listing changes"
            );
            // A directory named through a symlink is the directory it
            // leads to, however it is named.
            let sub = d.path().join("sub");
            std::fs::create_dir(&sub).unwrap();
            std::os::unix::fs::symlink(&sub, d.path().join("via")).unwrap();
            let h = Hasher::default();
            let via = h.hash_path(&d.path().join("via"));
            assert_eq!(h.hash_path(&d.path().join("via/../via/.")), via);
            std::fs::write(sub.join("new.yaml"), "").unwrap();
            assert_ne!(Hasher::default().hash_path(&d.path().join("via")), via);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_stat_from_an_open_directory_is_the_stat_of_the_path() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/f.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("sub/f.yaml", d.path().join("l")).unwrap();
        let dir = std::fs::File::open(d.path()).unwrap();
        use std::os::fd::AsFd;
        for rel in ["sub", "sub/f.yaml", "l", "sub/../sub/f.yaml", "missing"] {
            let abs = d.path().join(rel);
            assert_eq!(
                Stat::at(dir.as_fd(), Path::new(rel)),
                Stat::of(&abs),
                "{rel}"
            );
        }
        assert!(Stat::at(dir.as_fd(), Path::new("sub")).is_some());
    }

    #[test]
    fn inputs_add_each_files_directory() {
        let read: [PathBuf; 3] = ["r/a/k.yaml".into(), "r/a/p.yaml".into(), "r/b/x".into()];
        let want: Vec<PathBuf> = ["r/a", "r/a/k.yaml", "r/a/p.yaml", "r/b", "r/b/x"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(of(&read, None, |_| false), want);
    }

    #[test]
    fn inputs_are_spelled_absolute_and_once() {
        let read: [PathBuf; 5] = [
            "./r/a".into(),
            "/w/r/a/k.yaml".into(),
            "r//b/./x".into(),
            "/w/r/a/../../s/".into(),
            "../up".into(),
        ];
        let want: Vec<PathBuf> = [
            "/w/..",
            "/w/../up",
            "/w/r",
            "/w/r/a",
            "/w/r/a/../..",
            "/w/r/a/../../s",
            "/w/r/a/k.yaml",
            "/w/r/b",
            "/w/r/b/x",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(of(&read, Some(Path::new("/w")), |_| false), want);
        // A directory's own directory is not an input.
        let dirs = ["/w/r/a", "/w/r/a/../../s"].map(Path::new);
        let want: Vec<PathBuf> = want
            .into_iter()
            .filter(|p| !["/w/r", "/w/r/a/../.."].contains(&p.to_str().unwrap()))
            .collect();
        assert_eq!(
            of(&read, Some(Path::new("/w")), |p| dirs.contains(&p)),
            want
        );
    }

    #[test]
    fn opened_first_it_states_and_hashes_as_by_path() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("v.yaml");
        std::fs::write(&f, "x".repeat(20_000)).unwrap();
        let empty = d.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        let mut paths = vec![
            f.clone(),
            empty,
            d.path().to_path_buf(),
            d.path().join("gone"),
        ];
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("v.yaml", d.path().join("link")).unwrap();
            paths.push(d.path().join("link"));
        }
        let h = Hasher::default();
        for p in &paths {
            let (stat, k) = h.stat_and_hash(p);
            assert_eq!(stat, Stat::of(p), "{}", p.display());
            assert_eq!(k, Hasher::default().hash_path(p), "{}", p.display());
        }
        assert!(h.stat_and_hash(&f).0.is_some(), "a file has a stat");
        assert_ne!(
            h.stat_and_hash(&f).1,
            h.stat_and_hash(&d.path().join("empty")).1,
            "contents differ"
        );
    }

    #[test]
    fn the_memo_answers_for_the_run() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("v.yaml");
        std::fs::write(&f, "1").unwrap();
        let h = Hasher::default();
        let first = h.hash(&f);
        std::fs::write(&f, "2").unwrap();
        assert_eq!(h.hash(&f), first, "memoised");
        assert_ne!(
            Hasher::default().hash(&f),
            first,
            "a new run sees the change"
        );
    }

    #[test]
    fn a_file_told_as_read_is_hashed_from_what_was_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("v.yaml");
        std::fs::write(&f, "read").unwrap();
        let by_path = Hasher::default().hash(&f);
        let h = Hasher::default();
        let stat = Stat::of(&f);
        h.saw_file(f.as_os_str(), stat, b"read");
        // Gone before the result is stored: the hash is still of the bytes
        // the render used, stated as they were read.
        std::fs::remove_file(&f).unwrap();
        assert_eq!(h.hash(&f), by_path);
        assert_eq!(h.counts(), (1, 0));
        let name = Name::from(f.as_os_str());
        let mut told = Vec::new();
        h.trusted_stats(&[&name], |st| told.push(st));
        assert_eq!(told, vec![None], "too young to vouch");
        assert!(!h.typed_entry(f.as_os_str(), None).2, "a file");
        // The first word on a name stands.
        h.saw_file(f.as_os_str(), stat, b"other");
        assert_eq!(h.hash(&f), by_path);
    }
}
