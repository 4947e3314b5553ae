//! A chart file's bytes (`chart.File.Data`), read when the chart loads or,
//! for a big file that loading itself does not need, the first time a
//! render asks (`.Files.Get`, `--include-crds`). helm reads every file at
//! load; kube-prometheus-stack carries 4.6 MB of CRDs that `helm template`
//! without `--include-crds` never prints, and reading them was a fifth of
//! the load. A deferred file is opened at load, so a file helm could not
//! read still fails the load with helm's error; only a file that changes
//! or goes away during the run reads differently, and that is reported,
//! naming it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Files at least this big are read when first used.
pub(super) const DEFER_FROM: u64 = 256 * 1024;

/// helm strips a UTF-8 byte order mark from every file it loads.
const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// One file's content; cloning shares it.
#[derive(Clone, Debug)]
pub struct FileData(Arc<Inner>);

#[derive(Debug)]
enum Inner {
    Loaded(Vec<u8>),
    Deferred {
        path: PathBuf,
        data: OnceLock<Result<Vec<u8>, String>>,
    },
}

impl FileData {
    /// Bytes read already (a byte order mark is stripped).
    pub fn loaded(mut data: Vec<u8>) -> FileData {
        if data.starts_with(BOM) {
            data.drain(..BOM.len());
        }
        FileData(Arc::new(Inner::Loaded(data)))
    }

    /// `path`, read when first asked for; opened now so that a file that
    /// cannot be read fails here, as helm's load does.
    pub(super) fn deferred(path: &Path) -> Result<FileData, std::io::Error> {
        std::fs::File::open(path)?;
        Ok(FileData(Arc::new(Inner::Deferred {
            path: path.to_path_buf(),
            data: OnceLock::new(),
        })))
    }

    /// The bytes, or why a deferred file could not be read.
    pub fn bytes(&self) -> Result<&[u8], String> {
        match &*self.0 {
            Inner::Loaded(d) => Ok(d),
            Inner::Deferred { path, data } => data
                .get_or_init(|| {
                    let mut d = std::fs::read(path)
                        .map_err(|e| format!("reading chart file {}: {e}", path.display()))?;
                    if d.starts_with(BOM) {
                        d.drain(..BOM.len());
                    }
                    Ok(d)
                })
                .as_ref()
                .map(Vec::as_slice)
                .map_err(Clone::clone),
        }
    }

    /// The bytes, owned: loaded ones without a copy when not shared.
    pub(super) fn into_bytes(self) -> Result<Vec<u8>, String> {
        match Arc::try_unwrap(self.0) {
            Ok(Inner::Loaded(d)) => Ok(d),
            Ok(inner) => FileData(Arc::new(inner)).bytes().map(<[u8]>::to_vec),
            Err(shared) => FileData(shared).bytes().map(<[u8]>::to_vec),
        }
    }
}

impl From<Vec<u8>> for FileData {
    fn from(data: Vec<u8>) -> FileData {
        FileData::loaded(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_marks_are_stripped_either_way() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"\xEF\xBB\xBFhello").unwrap();
        assert_eq!(
            FileData::loaded(b"\xEF\xBB\xBFhi".to_vec()).bytes(),
            Ok(&b"hi"[..])
        );
        let d = FileData::deferred(&p).unwrap();
        assert_eq!(d.bytes(), Ok(&b"hello"[..]));
        assert_eq!(d.into_bytes(), Ok(b"hello".to_vec()));
    }

    #[test]
    fn a_deferred_file_is_read_once_and_its_loss_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        assert!(FileData::deferred(&p).is_err(), "missing at load");
        std::fs::write(&p, "one").unwrap();
        let read = FileData::deferred(&p).unwrap();
        let lost = FileData::deferred(&p).unwrap();
        assert_eq!(read.bytes(), Ok(&b"one"[..]));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(read.bytes(), Ok(&b"one"[..]), "kept");
        let err = lost.bytes().unwrap_err();
        assert!(
            err.starts_with("reading chart file ") && err.contains("/f: "),
            "{err}"
        );
    }
}
