//! Paths from environment files stay inside the repository: each is taken
//! relative to the root and refused when it is absolute, climbs out with
//! `..`, or reaches outside through a symlink (the longest part of it that
//! exists is resolved). `allowOutside: true` in an environment file turns
//! the check off for that file. It decides; it reads no file's content.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::lock::lock;
use crate::realpath::Realpath;

/// A path an environment file names, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigPath {
    /// The key that holds it (`kustomize`, `valueFiles`, `output.dir`, ...).
    pub key: &'static str,
    /// The path as written.
    pub path: PathBuf,
    /// 1-based line in the environment file.
    pub line: u32,
}

/// Whether paths under one root stay inside it (see [`Confine::problem`]):
/// the root is resolved once, and the directories the paths share once
/// each.
pub struct Confine {
    /// The root made absolute once (resolving a relative path asks for the
    /// working directory each time).
    abs_root: PathBuf,
    real_root: PathBuf,
    real: Realpath,
    /// Paths found not to exist: nothing under them does either. A tree
    /// git exports lazily holds no app directory yet, and `set-image` on
    /// the 500-app bench probed every part of every app's path, leaf
    /// first: 25,000 failed `lstat`s, a third of its time.
    missing: Mutex<HashSet<PathBuf>>,
}

impl Confine {
    /// The check for paths relative to `root`.
    pub fn new(root: &Path) -> Confine {
        let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        Confine {
            abs_root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            real: Realpath::anchored(&real_root),
            real_root,
            missing: Mutex::default(),
        }
    }

    /// The directories the checks so far found to have no symlink in
    /// them ([`Realpath::unlinked`]).
    pub fn unlinked(&self) -> crate::realpath::Unlinked {
        self.real.unlinked()
    }

    /// Why `rel` is not inside the root, or `None`.
    pub fn problem(&self, rel: &Path) -> Option<String> {
        lexical_problem(rel).or_else(|| self.link_problem(rel))
    }

    /// `rel` reaches outside through a symlink.
    fn link_problem(&self, rel: &Path) -> Option<String> {
        let full = self.abs_root.join(rel);
        // Most paths exist: resolved whole, they need no probe for the
        // longest part that does.
        let resolved = match self.under_missing(&full) {
            true => None,
            false => self.real.resolve(&full),
        };
        let (existing, real) = match resolved {
            Some(real) => (full, real),
            None => {
                let existing = self.longest_existing(&full)?;
                let real = self.real.resolve(&existing)?;
                (existing, real)
            }
        };
        (!real.starts_with(&self.real_root)).then(|| {
            format!(
                "leaves the repository through a symlink (`{}` is `{}`)",
                existing
                    .strip_prefix(&self.abs_root)
                    .unwrap_or(&existing)
                    .display(),
                real.display()
            )
        })
    }
}

/// `rel` is absolute or climbs out with `..`.
fn lexical_problem(rel: &Path) -> Option<String> {
    if rel.is_absolute() || rel.has_root() {
        return Some("is absolute; paths are relative to the repository root".into());
    }
    let mut depth = 0usize;
    for c in rel.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => {
                return Some("is absolute; paths are relative to the repository root".into())
            }
            Component::ParentDir if depth == 0 => {
                return Some("leaves the repository through `..`".into())
            }
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
        }
    }
    None
}

impl Confine {
    /// Whether `p` or a directory above it was found not to exist.
    fn under_missing(&self, p: &Path) -> bool {
        let missing = lock(&self.missing);
        !missing.is_empty() && p.ancestors().any(|a| missing.contains(a))
    }

    /// The longest prefix of `p` that exists (a symlink counts, even
    /// dangling: `canonicalize` then fails and the path is not judged by
    /// this check). Found from the top down, so that the directories above
    /// are answered by the resolver's memo and a missing one, remembered,
    /// answers for every path under it.
    fn longest_existing(&self, p: &Path) -> Option<PathBuf> {
        let mut cur = PathBuf::new();
        let mut found = None;
        for part in p.components() {
            cur.push(part);
            if lock(&self.missing).contains(&cur) {
                break;
            }
            if self.real.resolve(&cur).is_some() {
                found = Some(cur.clone());
                continue;
            }
            // Not there, or a link that leads nowhere (which exists, but
            // nothing under it can).
            if cur.symlink_metadata().is_ok() {
                return Some(cur);
            }
            lock(&self.missing).insert(cur);
            break;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(root: &Path, rel: &Path) -> Option<String> {
        Confine::new(root).problem(rel)
    }

    #[test]
    fn relative_paths_stay_inside() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("repo");
        std::fs::create_dir_all(root.join("apps/web")).unwrap();
        assert_eq!(problem(&root, Path::new("apps/web")), None);
        assert_eq!(problem(&root, Path::new("apps/../apps/web")), None);
        assert_eq!(problem(&root, Path::new("rendered/new/dir")), None);
        assert!(problem(&root, Path::new("../outside")).is_some());
        assert!(problem(&root, Path::new("apps/../../x")).is_some());
        assert!(problem(&root, Path::new("/etc/passwd")).is_some());
        #[cfg(unix)]
        {
            std::fs::create_dir_all(d.path().join("outside")).unwrap();
            std::os::unix::fs::symlink(d.path().join("outside"), root.join("link")).unwrap();
            let why = problem(&root, Path::new("link/x")).unwrap();
            assert!(why.contains("symlink"), "{why}");
            std::os::unix::fs::symlink(root.join("apps"), root.join("inner")).unwrap();
            std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
            assert_eq!(problem(&root, Path::new("inner/web")), None);
            // One check for many paths judges each as a fresh one does.
            let c = Confine::new(&root);
            for p in [
                "apps/web",
                "link/x",
                "inner/web",
                "link",
                "../outside",
                "nope/x",
                "nope/y/z",
                "nope",
                "apps/nope/x",
                "dangling/x",
                "link/nope/x",
            ] {
                assert_eq!(c.problem(Path::new(p)), problem(&root, Path::new(p)), "{p}");
            }
        }
    }
}
