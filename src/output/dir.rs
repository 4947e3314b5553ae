//! Directory output: write an environment's files in place, each one
//! atomically, prune only files the ownership manifest says hydrate wrote.

use std::path::Path;

use super::files::{changes, is_bookkeeping, EnvOutput, Owned, LEGACY_OWNED_PATH, OWNED_PATH};
use super::{write_file_atomic, Change, CheckReport, Error};

/// Writes `out` under `root`; returns the paths it created, updated or deleted.
pub fn write(root: &Path, out: &EnvOutput) -> Result<Vec<String>, Error> {
    let old = read_owned(root);
    let (edits, _) = changes(&old, out);
    let mut changed = Vec::new();
    // The ownership manifest goes last: it must never list a file not yet
    // written. The old name goes after the new one (sorted order), so a
    // crash between the two leaves both, never neither.
    let (owned_edit, file_edits): (Vec<_>, Vec<_>) =
        edits.iter().partition(|(p, _)| is_bookkeeping(p));
    for (path, content) in file_edits.into_iter().chain(owned_edit) {
        let full = root.join(path);
        match content {
            Some(bytes) => {
                if write_file_atomic(&full, bytes)? != Change::Unchanged && !is_bookkeeping(path) {
                    changed.push(path.clone());
                }
            }
            None => {
                if full.is_file() {
                    std::fs::remove_file(&full).map_err(|source| Error::Io {
                        path: full.clone(),
                        source,
                    })?;
                    remove_empty_parents(root, &full);
                    if !is_bookkeeping(path) {
                        changed.push(path.clone());
                    }
                }
            }
        }
    }
    Ok(changed)
}

/// Compares `out` with what is on disk under `root`, writing nothing.
pub fn check(root: &Path, out: &EnvOutput) -> Result<CheckReport, Error> {
    let old = read_owned(root);
    let (edits, _) = changes(&old, out);
    let mut report = CheckReport::default();
    for (path, content) in &edits {
        let full = root.join(path);
        let existing = std::fs::read(&full).ok();
        report.note(path, existing.as_deref(), content.as_deref());
    }
    Ok(report)
}

/// The ownership manifest, under its old name when the new one is missing.
fn read_owned(root: &Path) -> Owned {
    std::fs::read(root.join(OWNED_PATH))
        .or_else(|_| std::fs::read(root.join(LEGACY_OWNED_PATH)))
        .map(|b| Owned::parse(&b))
        .unwrap_or_default()
}

/// Removes directories left empty by a deletion, up to (not including) `root`.
fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
