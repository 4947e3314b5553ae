//! Files read during one run, each read and parsed once: a base shared by
//! every environment's overlay, and a component used by hundreds of them,
//! would otherwise be read and parsed again for each. One [`Sources`] lives
//! as long as one `hydrate render` (or one build when none is given); it is
//! shared by every rayon thread. Only successful reads are kept, so an error
//! is reported by each build that meets it, exactly as without the cache.
//!
//! It must not outlive the run: files can change between runs (promotion
//! edits them, then renders), and it knows nothing of what the files mean.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::model::Kustomization;
use super::resource::read_file;
use super::Error;
use crate::yaml::Node;

/// The files of one run, keyed by the path they were read by.
#[derive(Default)]
pub struct Sources {
    bytes: Mutex<HashMap<PathBuf, Arc<[u8]>>>,
    resources: Mutex<HashMap<PathBuf, Arc<Vec<Node>>>>,
    kustomizations: Mutex<HashMap<PathBuf, Arc<Kustomization>>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("files", &lock(&self.bytes).len())
            .finish()
    }
}

impl Sources {
    /// A file's bytes (`std::fs::read`).
    pub fn read(&self, path: &Path) -> Result<Arc<[u8]>, Error> {
        if let Some(b) = lock(&self.bytes).get(path) {
            return Ok(b.clone());
        }
        let bytes: Arc<[u8]> = std::fs::read(path)
            .map_err(|source| Error::Read {
                path: path.to_path_buf(),
                source,
            })?
            .into();
        lock(&self.bytes).insert(path.to_path_buf(), bytes.clone());
        Ok(bytes)
    }

    /// A file's text (`std::fs::read_to_string`: invalid UTF-8 is a read error).
    fn text(&self, path: &Path) -> Result<Arc<[u8]>, Error> {
        let bytes = self.read(path)?;
        match std::str::from_utf8(&bytes) {
            Ok(_) => Ok(bytes),
            Err(_) => Err(Error::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            }),
        }
    }

    /// The resources of a resource file ([`read_file`]).
    pub fn resources(&self, path: &Path) -> Result<Arc<Vec<Node>>, Error> {
        if let Some(r) = lock(&self.resources).get(path) {
            return Ok(r.clone());
        }
        let bytes = self.text(path)?;
        let src = std::str::from_utf8(&bytes).unwrap_or_default();
        let nodes = Arc::new(read_file(path, src)?);
        lock(&self.resources).insert(path.to_path_buf(), nodes.clone());
        Ok(nodes)
    }

    /// A kustomization file, decoded ([`Kustomization::load`]).
    pub fn kustomization(&self, path: &Path) -> Result<Arc<Kustomization>, Error> {
        if let Some(k) = lock(&self.kustomizations).get(path) {
            return Ok(k.clone());
        }
        let bytes = self.text(path)?;
        let src = std::str::from_utf8(&bytes).unwrap_or_default();
        let k = Arc::new(Kustomization::parse(path, src)?);
        lock(&self.kustomizations).insert(path.to_path_buf(), k.clone());
        Ok(k)
    }
}

/// The map, even when another thread panicked while holding it (entries
/// are inserted whole, so it stays consistent).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cm.yaml");
        std::fs::write(
            &f,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )
        .unwrap();
        let s = Sources::default();
        let first = s.resources(&f).unwrap();
        // Changed on disk during the run: the run keeps what it read.
        std::fs::write(
            &f,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
        )
        .unwrap();
        let second = s.resources(&f).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        // A new run reads the file again.
        let again = Sources::default().resources(&f).unwrap();
        assert_eq!(
            again[0]
                .get_path(&["metadata", "name"])
                .and_then(Node::as_str),
            Some("b")
        );
    }

    #[test]
    fn an_error_is_reported_at_every_use() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.yaml");
        std::fs::write(&f, "kind: [\n").unwrap();
        let s = Sources::default();
        let first = s.resources(&f).unwrap_err().to_string();
        assert_eq!(s.resources(&f).unwrap_err().to_string(), first);
        let bin = dir.path().join("x.bin");
        std::fs::write(&bin, [0xff, 0xfe]).unwrap();
        let utf8 = s.resources(&bin).unwrap_err().to_string();
        assert!(
            utf8.ends_with("stream did not contain valid UTF-8"),
            "{utf8}"
        );
        assert_eq!(&*s.read(&bin).unwrap(), &[0xff, 0xfe]);
        assert!(s.read(&dir.path().join("missing")).is_err());
    }
}
