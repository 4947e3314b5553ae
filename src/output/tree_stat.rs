//! The stat of every entry of a directory output, as `render` records it
//! for an environment found unchanged ([`crate::env::cache::settled`]) and
//! compares it on the next run: any file or directory written, added,
//! removed, renamed or relinked there since moves some entry's stat.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::dir::target;
use crate::env::cache::Stat;

/// Every entry of output directory `dir` (relative to `base`), the
/// directory itself first as the empty path, then each entry below it in
/// file-name order, with its `lstat` (a symlink's own, never followed).
/// `None` when the directory fails [`target`]'s checks, is missing, or an
/// entry cannot be read: then there is nothing to compare.
#[cfg(test)]
pub fn stat_tree(base: &Path, dir: &Path) -> Option<Vec<(PathBuf, Stat)>> {
    let root = target(base, dir).ok()?;
    let walk = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .sort_by_file_name();
    let mut out = Vec::new();
    for e in walk {
        let e = e.ok()?;
        let rel = e.path().strip_prefix(&root).ok()?.to_path_buf();
        let stat = Stat::of_metadata(&e.metadata().ok()?)?;
        out.push((rel, stat));
    }
    Some(out)
}

/// [`stat_tree`]'s list of output directory `dir` (relative to `base`)
/// made from `entries` instead of read: every entry below it, as the write
/// that just made the tree lists them ([`super::dir::DirWrite::tree`]), each
/// `lstat`ed on every core, the directory itself first. `None` when the
/// directory fails [`target`]'s checks or an entry is gone. An entry added
/// since the write moves its directory's stat past the run's start, so
/// the record that keeps this list treats that directory as young.
pub fn stat_entries(base: &Path, dir: &Path, entries: &[PathBuf]) -> Option<Vec<(PathBuf, Stat)>> {
    let root = target(base, dir).ok()?;
    let own = Stat::of_metadata(&std::fs::symlink_metadata(&root).ok()?)?;
    let stats: Option<Vec<Stat>> = entries
        .par_iter()
        .map(|rel| Stat::of_metadata(&std::fs::symlink_metadata(root.join(rel)).ok()?))
        .collect();
    let listed = entries.iter().cloned().zip(stats?);
    Some([(PathBuf::new(), own)].into_iter().chain(listed).collect())
}

/// For each entry of `recorded` (from [`stat_tree`]), whether output
/// directory `dir` (relative to `base`) still has it with that stat (all
/// `false` when the directory fails [`target`]'s checks). Each recorded
/// entry is stated, no directory is read: an entry added to, removed from
/// or renamed in a directory changes that directory's modification time,
/// so its stat tells (as git's untracked cache trusts it).
pub fn tree_fresh(base: &Path, dir: &Path, recorded: &[(PathBuf, Stat)]) -> Vec<bool> {
    let Ok(root) = target(base, dir) else {
        return vec![false; recorded.len()];
    };
    recorded
        .par_iter()
        .map(|(rel, was)| {
            let now = std::fs::symlink_metadata(root.join(rel)).ok();
            now.as_ref().and_then(Stat::of_metadata).as_ref() == Some(was)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_below_the_directory_moves_the_tree_stat() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out/dev");
        std::fs::create_dir_all(out.join("web")).unwrap();
        std::fs::write(out.join("web/m.yaml"), "a\n").unwrap();
        let dir = Path::new("out/dev");
        let first = stat_tree(tmp.path(), dir).unwrap();
        let names: Vec<_> = first.iter().map(|(p, _)| p.clone()).collect();
        let want: Vec<PathBuf> = ["", "web", "web/m.yaml"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(names, want);
        assert_eq!(stat_tree(tmp.path(), dir).unwrap(), first, "stable");
        assert_eq!(tree_fresh(tmp.path(), dir, &first), [true; 3]);
        std::fs::write(out.join("web/m.yaml"), "b\n").unwrap();
        assert_ne!(stat_tree(tmp.path(), dir).unwrap(), first, "rewritten");
        assert_eq!(
            tree_fresh(tmp.path(), dir, &first),
            [true, true, false],
            "only the file moved"
        );
        let second = stat_tree(tmp.path(), dir).unwrap();
        std::fs::write(out.join("web/n.yaml"), "").unwrap();
        assert_ne!(stat_tree(tmp.path(), dir).unwrap(), second, "a new file");
        assert_eq!(
            tree_fresh(tmp.path(), dir, &second),
            [true, false, true],
            "a new file moves its directory's stat"
        );
        let third = stat_tree(tmp.path(), dir).unwrap();
        std::fs::remove_dir_all(out.join("web")).unwrap();
        assert_eq!(
            tree_fresh(tmp.path(), dir, &third),
            [false; 4],
            "removed (and the directory holding it moved)"
        );
        assert_eq!(
            tree_fresh(tmp.path(), Path::new("../x"), &third),
            [false; 4],
            "not a target"
        );
        assert_eq!(stat_tree(tmp.path(), Path::new("out/missing")), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&out, tmp.path().join("out/via")).unwrap();
            assert_eq!(
                stat_tree(tmp.path(), Path::new("out/via")),
                None,
                "a symlink"
            );
        }
    }
}
