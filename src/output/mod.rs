//! Writing rendered output: files are written to a temporary sibling and
//! renamed into place, unchanged files are not touched, and nothing is
//! written until every render has succeeded (callers pass complete sets).

use std::io::Write;
use std::path::{Path, PathBuf};

/// An output write failed.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct Error {
    /// The path being written.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// What a write did to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The file did not exist.
    Created,
    /// The file existed with other content.
    Updated,
    /// The file already had this content (not rewritten).
    Unchanged,
}

/// Writes `bytes` to `path` atomically (temp file + rename in the same
/// directory), creating parent directories; skips identical content.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<Change, Error> {
    let err = |source| Error {
        path: path.to_path_buf(),
        source,
    };
    let change = match std::fs::read(path) {
        Ok(old) if old == bytes => return Ok(Change::Unchanged),
        Ok(_) => Change::Updated,
        Err(_) => Change::Created,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.hydrate-tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/out.yaml");
        assert_eq!(write_file_atomic(&p, b"x\n").unwrap(), Change::Created);
        assert_eq!(write_file_atomic(&p, b"x\n").unwrap(), Change::Unchanged);
        assert_eq!(write_file_atomic(&p, b"y\n").unwrap(), Change::Updated);
        assert_eq!(std::fs::read(&p).unwrap(), b"y\n");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }
}
