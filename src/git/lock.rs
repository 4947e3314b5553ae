//! git's index lock, `.git/index.lock`, held by hydrate for the whole of an
//! operation that commits on the current branch (promote, set-image,
//! set-value, rollback), exactly as `git commit` holds it: every git
//! command that writes the index (`git add`, `git commit`, `git checkout`,
//! libgit2) creates that file exclusively first, so while hydrate holds it
//! nobody else stages, commits or checks out in this working tree.
//!
//! git writes the new index into the lock file and renames it over
//! `index`; hydrate instead writes a marker naming itself (pid, process
//! start time, a nonce) into the lock, so that a lock left by a hydrate
//! run killed with `kill -9` is recognised as such: the next hydrate run
//! completes or undoes that run (the journal, `transaction.rs`) and removes
//! the lock. A lock that is not hydrate's is never removed: that is git's
//! advice to the user ("remove the file manually"), and hydrate stops with
//! git's own message. The marker is created under a temporary name and
//! hard-linked to `index.lock`, so the lock never exists without it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Error;

/// What `index.lock` files written by hydrate start with.
const MAGIC: &str = "hydrate-index-lock";

/// How long to wait for another (live) hydrate run to release the lock:
/// two bumps started at once in one checkout then both commit, one after
/// the other, instead of one failing.
const WAIT_FOR_HYDRATE: Duration = Duration::from_secs(20);

/// The held lock; released (the file removed) by [`IndexLock::release`]
/// or when dropped.
#[derive(Debug)]
pub struct IndexLock {
    path: PathBuf,
    nonce: String,
    released: bool,
}

/// Who holds an existing lock.
#[derive(Debug, PartialEq, Eq)]
enum Holder {
    /// A hydrate run that is still alive.
    LiveHydrate,
    /// A hydrate run that is gone (killed): the lock is stale.
    DeadHydrate,
    /// git, libgit2, an editor opened by `git commit`, or a crashed git.
    Other,
    /// The lock disappeared while we looked.
    Gone,
}

/// git's message when `index.lock` exists (lockfile.c,
/// `unable_to_lock_message`), naming the file.
pub fn locked_message(lock: &Path) -> String {
    format!(
        "Unable to create '{}': File exists.\n\n\
         Another git process seems to be running in this repository, e.g.\n\
         an editor opened by 'git commit'. Please make sure all processes\n\
         are terminated then try again. If it still fails, a git process\n\
         may have crashed in this repository earlier:\n\
         remove the file manually to continue.",
        lock.display()
    )
}

impl IndexLock {
    /// Takes `<git_dir>/index.lock`. A lock held by a live hydrate run is
    /// waited for; one left by a killed hydrate run is removed (the caller
    /// then recovers that run's journal); any other lock is
    /// [`Error::Locked`] with git's message, and nothing is changed.
    pub fn acquire(git_dir: &Path) -> Result<IndexLock, Error> {
        let path = git_dir.join("index.lock");
        let nonce = nonce();
        let marker = format!(
            "{MAGIC} pid={} start={} nonce={nonce}\n",
            std::process::id(),
            process_start(std::process::id()).unwrap_or(0)
        );
        let tmp = git_dir.join(format!("index.lock.hydrate-{nonce}"));
        let io = |what: &str, e: std::io::Error| Error::Io {
            what: format!("{what} {}", tmp.display()),
            source: e,
        };
        std::fs::write(&tmp, marker.as_bytes()).map_err(|e| io("write", e))?;
        let deadline = Instant::now() + WAIT_FOR_HYDRATE;
        let result = loop {
            match std::fs::hard_link(&tmp, &path) {
                Ok(()) => break Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => break Err(io("link", e)),
            }
            match holder(&path) {
                Holder::Gone => continue,
                Holder::DeadHydrate => {
                    // Ours, from a killed run: the journal (if any) is
                    // recovered under the new lock.
                    match std::fs::remove_file(&path) {
                        Ok(()) => continue,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => break Err(io("remove", e)),
                    }
                }
                Holder::LiveHydrate if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Holder::LiveHydrate | Holder::Other => {
                    break Err(Error::Locked {
                        message: locked_message(&path),
                    })
                }
            }
        };
        let _ = std::fs::remove_file(&tmp);
        result.map(|()| IndexLock {
            path,
            nonce,
            released: false,
        })
    }

    /// The nonce written in the lock (the journal records it).
    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// Removes the lock file.
    pub fn release(mut self) -> Result<(), Error> {
        self.released = true;
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Io {
                what: format!("remove {}", self.path.display()),
                source: e,
            }),
        }
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        if !self.released {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads an existing lock and says whose it is.
fn holder(path: &Path) -> Holder {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Holder::Gone,
        Err(_) => return Holder::Other,
    };
    let Some(line) = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.strip_prefix(MAGIC))
    else {
        return Holder::Other;
    };
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let (Some(pid), Some(start)) = (field("pid"), field("start")) else {
        return Holder::Other;
    };
    let Ok(pid) = u32::try_from(pid) else {
        return Holder::Other;
    };
    if alive(pid, start) {
        Holder::LiveHydrate
    } else {
        Holder::DeadHydrate
    }
}

/// Whether process `pid`, started at `start` (clock ticks after boot, as
/// `/proc/<pid>/stat` says; 0 when unknown), is still running. A pid that
/// exists but started at another time was reused: the run is gone.
#[cfg(unix)]
pub(super) fn alive(pid: u32, start: u64) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    match (start, process_start(pid)) {
        (0, _) | (_, None) => true,
        (s, Some(now)) => s == now,
    }
}

#[cfg(not(unix))]
pub(super) fn alive(_pid: u32, _start: u64) -> bool {
    // No way to tell here: never treat a lock as stale.
    true
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`).
pub(super) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A value no other run picks: pid, time and a counter, hashed.
fn nonce() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{}-{now}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    Sha256::digest(seed.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_lock_is_refused_with_gits_message_and_left_alone() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let lock = dir.path().join("index.lock");
        std::fs::write(&lock, b"DIRC partial").unwrap_or_else(|e| panic!("{e}"));
        let e = IndexLock::acquire(dir.path()).err();
        let text = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("Another git process seems to be running in this repository"),
            "{text}"
        );
        assert!(text.contains("index.lock': File exists."), "{text}");
        assert_eq!(
            std::fs::read(&lock).ok().as_deref(),
            Some(&b"DIRC partial"[..])
        );
        // Nothing else was left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["index.lock"]);
    }

    #[test]
    fn a_killed_hydrate_runs_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let lock = dir.path().join("index.lock");
        // A pid that cannot be running (beyond pid_max).
        std::fs::write(&lock, format!("{MAGIC} pid=4194999 start=1 nonce=x\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let held = IndexLock::acquire(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&lock).unwrap_or_default();
        assert!(
            text.contains(&format!("pid={}", std::process::id())),
            "{text}"
        );
        held.release().unwrap_or_else(|e| panic!("{e}"));
        assert!(!lock.exists());
    }

    #[test]
    fn a_live_hydrate_lock_is_not_stale() {
        let me = std::process::id();
        let start = process_start(me).unwrap_or(0);
        assert!(alive(me, start));
        if start != 0 {
            assert!(!alive(me, start + 1), "a reused pid is another process");
        }
    }
}
