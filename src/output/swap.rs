//! Switching an environment's output directory as a unit: the new tree is
//! built in a sibling `.<name>.hydrate-new-<pid>` (or in a claimed spare
//! tree, `spare`), then exchanged with the live directory in one step
//! (Linux `renameat2(RENAME_EXCHANGE)`; where that is missing, two renames
//! that the next run undoes if it finds them half done), and the old tree
//! is kept as the next spare tree or removed. A `kill -9` therefore leaves
//! the old tree or the new one, never a mix; the next run removes what a
//! killed run left beside the directory. It decides nothing about
//! contents.

use std::path::{Path, PathBuf};

use super::Error;

/// The marker in the names of staging (`new`) and set-aside (`old`) trees.
const MARK: &str = ".hydrate-";

/// `.<name>.hydrate-<what>-<pid>` beside `root`.
fn sibling(root: &Path, what: &str, pid: u32) -> Option<PathBuf> {
    let name = root.file_name()?.to_string_lossy();
    Some(root.with_file_name(format!(".{name}{MARK}{what}-{pid}")))
}

/// Where this process builds `root`'s next tree.
pub fn staging(root: &Path) -> Result<PathBuf, Error> {
    sibling(root, "new", std::process::id()).ok_or_else(|| Error::Target {
        path: root.to_path_buf(),
        reason: "it has no directory name".into(),
    })
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Leftovers of runs that died beside `root`: `(path, is_old, pid)`.
fn leftovers(root: &Path) -> Vec<(PathBuf, bool, u32)> {
    let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
        return Vec::new();
    };
    let prefix = format!(".{}{MARK}", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let (what, pid) = match rest.split_once('-') {
            Some((w @ ("new" | "old"), pid)) => (w, pid),
            _ => continue,
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        // A run still going (another process) keeps its trees; our own pid
        // here can only be a dead run's (this one has made none yet).
        if pid != std::process::id() && alive(pid) {
            continue;
        }
        out.push((root.with_file_name(&file), what == "old", pid));
    }
    out
}

/// Whether process `pid` exists (kill with signal 0 sends nothing; EPERM
/// means it exists and is someone else's).
#[cfg(unix)]
pub(super) fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    matches!(
        rustix::process::test_kill_process(pid),
        Ok(()) | Err(rustix::io::Errno::PERM)
    )
}

#[cfg(not(unix))]
pub(super) fn alive(_pid: u32) -> bool {
    false
}

/// Finishes or undoes what a killed run left beside `root`: a live
/// directory set aside by the two-rename fallback (`old`) is put back when
/// `root` is missing; then every dead run's staging and set-aside tree is
/// removed. Returns what it removed or restored, for a warning.
pub fn recover(root: &Path) -> Result<Vec<String>, Error> {
    let mut done = Vec::new();
    let found = leftovers(root);
    if std::fs::symlink_metadata(root).is_err() {
        if let Some((old, ..)) = found.iter().find(|(_, is_old, _)| *is_old) {
            std::fs::rename(old, root).map_err(io(old))?;
            done.push(format!(
                "{}: restored from {} (a run was killed while switching it)",
                root.display(),
                old.display()
            ));
        }
    }
    for (path, ..) in found {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let removed = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(io(&path))?;
        done.push(format!(
            "{}: removed (left by a run that was killed)",
            path.display()
        ));
    }
    Ok(done)
}

/// Puts the complete tree `staging` in place of `root`. Returns whether
/// the old tree is now at `staging` (exchanged: the caller keeps or
/// removes it); without an exchange it is removed here. `root`'s parent
/// must exist; `staging` may be anywhere on its filesystem.
pub fn install(root: &Path, staging: &Path) -> Result<bool, Error> {
    if std::fs::symlink_metadata(root).is_err() {
        return std::fs::rename(staging, root)
            .map(|()| false)
            .map_err(io(root));
    }
    match exchange(staging, root) {
        Ok(()) => Ok(true),
        Err(e) if unsupported(&e) => two_renames(root, staging).map(|()| false),
        Err(e) => Err(io(root)(e)),
    }
}

/// The exchange is not available here (old kernel, or a filesystem
/// without it): fall back to two renames.
fn unsupported(e: &std::io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL))
    }
    #[cfg(not(target_os = "linux"))]
    {
        e.kind() == std::io::ErrorKind::Unsupported
    }
}

/// Swaps two directories atomically (`renameat2(2)` with `RENAME_EXCHANGE`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Without an atomic exchange: `root` → `.<name>.hydrate-old-<pid>`, then
/// `staging` → `root`. A kill between the two leaves `root` missing and the
/// old tree set aside, which [`recover`] puts back (all old).
pub(super) fn two_renames(root: &Path, staging: &Path) -> Result<(), Error> {
    let old = sibling(root, "old", std::process::id()).ok_or_else(|| Error::Target {
        path: root.to_path_buf(),
        reason: "it has no directory name".into(),
    })?;
    std::fs::rename(root, &old).map_err(io(root))?;
    if let Err(e) = std::fs::rename(staging, root) {
        let _ = std::fs::rename(&old, root);
        return Err(io(root)(e));
    }
    std::fs::remove_dir_all(&old).map_err(io(&old))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, file: &str, text: &str) {
        std::fs::create_dir_all(root).unwrap();
        std::fs::write(root.join(file), text).unwrap();
    }

    #[test]
    fn install_swaps_in_the_new_tree_and_sets_the_old_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("dev");
        tree(&root, "a", "old");
        let st = staging(&root).unwrap();
        tree(&st, "a", "new");
        assert!(install(&root, &st).unwrap(), "exchanged");
        assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(st.join("a")).unwrap(), "old");
    }

    #[test]
    fn the_fallback_swaps_too_and_a_half_done_one_is_undone() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("dev");
        tree(&root, "a", "old");
        let st = staging(&root).unwrap();
        tree(&st, "a", "new");
        two_renames(&root, &st).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), "new");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // Killed between the renames (pid 0 stands for a dead run).
        let old = sibling(&root, "old", u32::MAX).unwrap();
        std::fs::rename(&root, &old).unwrap();
        let st = sibling(&root, "new", u32::MAX).unwrap();
        tree(&st, "a", "newer");
        let done = recover(&root).unwrap();
        assert_eq!(done.len(), 2, "{done:?}");
        assert_eq!(std::fs::read_to_string(root.join("a")).unwrap(), "new");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_live_run_keeps_its_staging_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("dev");
        tree(&root, "a", "x");
        // pid 1 (init) is always alive.
        let st = sibling(&root, "new", 1).unwrap();
        tree(&st, "a", "y");
        assert!(recover(&root).unwrap().is_empty());
        assert!(st.is_dir());
    }
}
