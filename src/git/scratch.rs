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
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Once;

    /// The pipe's write end, for the handler.
    static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
    static INSTALL: Once = Once::new();
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn errno() -> *mut libc::c_int {
        // SAFETY: returns this thread's errno location; no precondition.
        unsafe { libc::__errno_location() }
    }

    #[cfg(target_vendor = "apple")]
    fn errno() -> *mut libc::c_int {
        // SAFETY: returns this thread's errno location; no precondition.
        unsafe { libc::__error() }
    }

    /// The handler: only write(2), which is async-signal-safe; errno is
    /// kept for the code it interrupted.
    extern "C" fn on_signal(sig: libc::c_int) {
        let fd = WRITE_FD.load(Ordering::Relaxed);
        let byte = u8::try_from(sig).unwrap_or(0);
        let e = errno();
        // SAFETY: `e` is this thread's errno; `byte` lives through the call.
        unsafe {
            let saved = *e;
            libc::write(fd, std::ptr::from_ref(&byte).cast(), 1);
            *e = saved;
        }
    }

    /// Installs the handlers once per process. A signal that is ignored
    /// (a run under `nohup`) stays ignored.
    pub fn install() {
        INSTALL.call_once(|| {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: `fds` has room for the two descriptors.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return;
            }
            for fd in fds {
                // SAFETY: `fd` was just opened by pipe(2).
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            let read_fd = fds[0];
            let spawned = std::thread::Builder::new()
                .name("hydrate-signals".into())
                .spawn(move || watch(read_fd));
            if spawned.is_err() {
                return;
            }
            WRITE_FD.store(fds[1], Ordering::Relaxed);
            for sig in SIGNALS {
                // SAFETY: zeroed sigaction structs are valid; `old` and `new`
                // outlive the calls.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                        || old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    new.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut new.sa_mask);
                    libc::sigaction(sig, &new, std::ptr::null_mut());
                }
            }
        });
    }

    /// Waits for a signal, removes the live directories, then ends the
    /// process with the signal's default action (the shell sees a death by
    /// that signal, as without the handler).
    fn watch(fd: libc::c_int) {
        let sig = loop {
            let mut byte = 0u8;
            // SAFETY: reads one byte into `byte`.
            let n = unsafe { libc::read(fd, std::ptr::from_mut(&mut byte).cast(), 1) };
            if n == 1 {
                break libc::c_int::from(byte);
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        };
        let mut live = super::live();
        super::remove_live(&mut live);
        // SAFETY: restores the default action, then raises the signal on
        // this thread: the default action of all three ends the process.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            libc::raise(sig);
        }
        std::process::exit(128 + sig);
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
