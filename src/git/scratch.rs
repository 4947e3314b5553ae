//! The temporary directories a revision's files are exported to
//! (`hydrate diff --since`, `hydrate verify`, promotion's snapshot): each
//! is `hydrate-export-<pid>-<start>-<n>` in the system's temporary
//! directory (`$TMPDIR`), removed when dropped, and also when the process
//! gets SIGINT, SIGTERM or SIGHUP: a handler writes the signal to a pipe,
//! a thread reads it, removes every live directory, then lets the signal
//! end the process as it would have. SIGKILL cannot be caught: the next
//! run removes the directories of runs that are gone (their pid is not
//! running, or runs a process started at another time).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::lock::{alive, process_start};
use super::Error;

/// The start of every export directory's name.
const PREFIX: &str = "hydrate-export-";

/// The directories this process has made and not yet removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary directory of this process, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Makes a new directory in the system's temporary directory, after
    /// removing those that runs now gone left there.
    pub fn new() -> Result<Scratch, Error> {
        Scratch::new_in(&std::env::temp_dir())
    }

    /// [`Scratch::new`] in `parent`.
    pub fn new_in(parent: &Path) -> Result<Scratch, Error> {
        // Before the directory exists: a signal from here on removes it.
        signals::install();
        sweep(parent);
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let pid = std::process::id();
        let name = format!(
            "{PREFIX}{pid}-{}-{}",
            process_start(pid).unwrap_or(0),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let path = parent.join(name);
        // Registered while the lock is held: the signal thread removes it
        // only once it exists.
        let mut live = live();
        make_private_dir(&path).map_err(|source| Error::Io {
            what: format!("create {}", path.display()),
            source,
        })?;
        live.push(path.clone());
        Ok(Scratch { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Waits while the signal thread removes it (the process then ends).
        let mut live = live();
        if let Some(i) = live.iter().position(|p| *p == self.path) {
            live.swap_remove(i);
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(unix)]
fn make_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn make_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

/// The pid and start time in an export directory's name, if it is one.
fn owner(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    Some((pid, start))
}

/// Removes the export directories in `parent` whose process is gone.
/// Returns what it removed.
pub fn sweep(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, start)) = name.to_str().and_then(owner) else {
            continue;
        };
        // Our own pid can only be a dead run's here: this one registers
        // its directories, and a sweep never sees one half made.
        let ours = pid == std::process::id() && live().iter().any(|p| p.file_name() == Some(&name));
        if ours || (pid != std::process::id() && alive(pid, start)) {
            continue;
        }
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Removes every live directory: first renamed aside, so a thread still
/// writing into it fails instead of recreating part of it. The lock is
/// held by the caller until the process ends.
fn remove_live(live: &mut Vec<PathBuf>) {
    for path in live.drain(..) {
        let mut aside = path.clone().into_os_string();
        aside.push(".gone");
        let aside = PathBuf::from(aside);
        let target = if std::fs::rename(&path, &aside).is_ok() {
            aside
        } else {
            path
        };
        let _ = std::fs::remove_dir_all(&target);
    }
}

#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
mod signals {
    use std::sync::Once;

    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    static INSTALL: Once = Once::new();

    /// Installs the handlers once per process: a thread waits for SIGINT,
    /// SIGTERM or SIGHUP (signal-hook's self-pipe: the handler itself only
    /// writes a byte), removes the live directories, then ends the process
    /// with the signal's default action, so the shell sees a death by that
    /// signal as without the handler. A signal that is ignored (a run under
    /// `nohup`) stays ignored.
    pub fn install() {
        INSTALL.call_once(|| {
            let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
                .into_iter()
                .filter(|s| !ignored(*s))
                .collect();
            let Ok(mut signals) = Signals::new(&wanted) else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("hydrate-signals".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        let mut live = super::live();
                        super::remove_live(&mut live);
                        let _ = signal_hook::low_level::emulate_default_handler(sig);
                        std::process::exit(128 + sig);
                    }
                });
        });
    }

    /// Whether `sig` is ignored, read from `/proc/self/status`'s `SigIgn`
    /// mask (bit `sig - 1`); elsewhere nothing is taken as ignored.
    fn ignored(sig: i32) -> bool {
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
            return false;
        };
        status
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .zip(u32::try_from(sig - 1).ok())
            .is_some_and(|(mask, bit)| bit < 64 && mask & (1u64 << bit) != 0)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
mod signals {
    /// No handler here: the next run removes what a killed run left.
    pub fn install() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_is_removed_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let s = Scratch::new_in(parent.path()).unwrap();
        let path = s.path().to_path_buf();
        std::fs::write(path.join("f"), "x").unwrap();
        assert!(owner(&path.file_name().unwrap().to_string_lossy()).is_some());
        drop(s);
        assert!(!path.exists());
    }

    #[test]
    fn a_sweep_removes_only_the_directories_of_runs_that_are_gone() {
        let parent = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let start = process_start(me).unwrap_or(0);
        // A pid that cannot be running (beyond pid_max), and this process
        // with another start time (a reused pid): both gone.
        let dead = parent.path().join(format!("{PREFIX}4194999-1-0"));
        let reused = parent.path().join(format!("{PREFIX}{me}-{}-0", start + 1));
        let aside = parent.path().join(format!("{PREFIX}4194999-1-3.gone"));
        let other = parent.path().join("hydrate-sources-x");
        for d in [&dead, &reused, &aside, &other] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        let live = Scratch::new_in(parent.path()).unwrap();
        for d in [&dead, &aside] {
            assert!(!d.exists(), "{}", d.display());
        }
        // This process's own live directory, and what is not ours, stay.
        assert!(live.path().exists());
        assert!(other.exists());
        if start != 0 {
            assert!(!reused.exists());
        }
        assert!(sweep(parent.path()).is_empty());
        assert!(live.path().exists());
    }
}
