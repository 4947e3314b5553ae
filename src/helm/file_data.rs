//! A chart file's bytes (`chart.File.Data`), read when the chart loads or,
//! for a big file that loading itself does not need, the first time a
//! render asks (`.Files.Get`, `--include-crds`). helm reads every file at
//! load; kube-prometheus-stack carries 4.6 MB of CRDs that `helm template`
//! without `--include-crds` never prints, and reading them was a fifth of
//! the load. A deferred file is opened at load, so a file helm could not
//! read still fails the load with helm's error; only a file that changes
//! or goes away during the run reads differently, and that is reported,
//! naming it. When read, it must still resolve inside the chart and be no
//! bigger than helm's limit, as the walk checked at load.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::chart::MAX_FILE_SIZE;

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
        /// The chart directory, canonical: where `path` must still lead.
        root: PathBuf,
        data: OnceLock<Result<Vec<u8>, String>>,
    },
}

fn strip_bom(data: &mut Vec<u8>) {
    if data.starts_with(BOM) {
        data.drain(..BOM.len());
    }
}

/// Reads `path` if it still resolves inside `root` and is at most
/// [`MAX_FILE_SIZE`] long (never reading more).
fn read_confined(path: &Path, root: &Path) -> Result<Vec<u8>, String> {
    let what = |e: &dyn std::fmt::Display| format!("reading chart file {}: {e}", path.display());
    let real = std::fs::canonicalize(path).map_err(|e| what(&e))?;
    if !real.starts_with(root) {
        return Err(what(&format_args!(
            "it now leads to {}, outside the repository",
            real.display()
        )));
    }
    let mut data = Vec::new();
    std::fs::File::open(&real)
        .and_then(|f| f.take(MAX_FILE_SIZE + 1).read_to_end(&mut data))
        .map_err(|e| what(&e))?;
    if data.len() as u64 > MAX_FILE_SIZE {
        return Err(what(&format_args!(
            "it is now larger than the maximum file size {MAX_FILE_SIZE}"
        )));
    }
    strip_bom(&mut data);
    Ok(data)
}

impl FileData {
    /// Bytes read already (a byte order mark is stripped).
    pub fn loaded(mut data: Vec<u8>) -> FileData {
        strip_bom(&mut data);
        FileData(Arc::new(Inner::Loaded(data)))
    }

    /// `path` of the chart at canonical `root`, read when first asked
    /// for; opened now so that a file that cannot be read fails here, as
    /// helm's load does.
    pub(super) fn deferred(path: &Path, root: &Path) -> Result<FileData, std::io::Error> {
        std::fs::File::open(path)?;
        Ok(FileData(Arc::new(Inner::Deferred {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
            data: OnceLock::new(),
        })))
    }

    /// The bytes, or why a deferred file could not be read.
    pub fn bytes(&self) -> Result<&[u8], String> {
        match &*self.0 {
            Inner::Loaded(d) => Ok(d),
            Inner::Deferred { path, root, data } => data
                .get_or_init(|| read_confined(path, root))
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

    fn root(dir: &tempfile::TempDir) -> PathBuf {
        std::fs::canonicalize(dir.path()).unwrap()
    }

    /// What the walk checked at load still holds when the file is read:
    /// it leads inside the chart and is no bigger than helm's limit.
    #[test]
    fn a_deferred_file_is_read_only_inside_the_chart_and_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let (p, q) = (dir.path().join("f"), dir.path().join("g"));
        std::fs::write(&p, "one").unwrap();
        std::fs::write(&q, "two").unwrap();
        let (moved, grown) = (
            FileData::deferred(&p, &root(&dir)).unwrap(),
            FileData::deferred(&q, &root(&dir)).unwrap(),
        );
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "s").unwrap();
        std::fs::remove_file(&p).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, &p).unwrap();
            let err = moved.bytes().unwrap_err();
            assert!(err.contains("outside the repository"), "{err}");
        }
        std::fs::write(&q, vec![b'a'; MAX_FILE_SIZE as usize + 1]).unwrap();
        let err = grown.bytes().unwrap_err();
        assert!(err.contains("larger than the maximum file size"), "{err}");
    }

    #[test]
    fn byte_order_marks_are_stripped_either_way() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"\xEF\xBB\xBFhello").unwrap();
        assert_eq!(
            FileData::loaded(b"\xEF\xBB\xBFhi".to_vec()).bytes(),
            Ok(&b"hi"[..])
        );
        let d = FileData::deferred(&p, &root(&dir)).unwrap();
        assert_eq!(d.bytes(), Ok(&b"hello"[..]));
        assert_eq!(d.into_bytes(), Ok(b"hello".to_vec()));
    }

    #[test]
    fn a_deferred_file_is_read_once_and_its_loss_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        assert!(
            FileData::deferred(&p, &root(&dir)).is_err(),
            "missing at load"
        );
        std::fs::write(&p, "one").unwrap();
        let read = FileData::deferred(&p, &root(&dir)).unwrap();
        let lost = FileData::deferred(&p, &root(&dir)).unwrap();
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
