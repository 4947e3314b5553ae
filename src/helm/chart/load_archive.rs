//! helm's `LoadArchive`: a packaged chart (`.tgz`) read defensively:
//! entries that escape the top directory, files over 5 MiB and archives
//! over 100 MiB decompressed are refused before they are read. Must not:
//! write anything to disk.

use super::super::file_data::FileData;
use super::load_files::from_files;
use super::{Chart, Error, Origin, MAX_FILE_SIZE};

/// helm's `MaxDecompressedChartSize`: all files of an archive together.
const MAX_CHART_SIZE: u64 = 100 * 1024 * 1024;

/// Go's `path.Clean` for a relative, `/`-separated path.
fn clean_rel(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// helm's `LoadArchiveFiles` path checks: the entry name without its top
/// directory, normalised, or why the archive is refused.
fn archive_entry_name(raw: &str) -> Result<String, String> {
    // Archives made on Windows may use `\`.
    let delim = if raw.contains('\\') { '\\' } else { '/' };
    let mut parts = raw.split(delim);
    let first = parts.next().unwrap_or_default();
    let n = parts.collect::<Vec<_>>().join("/");
    if n.starts_with('/') {
        return Err(format!("chart illegally contains absolute paths: {raw:?}"));
    }
    let n = clean_rel(&n);
    if n == "." {
        return Err(format!(
            "chart illegally contains content outside the base directory: {raw:?}"
        ));
    }
    if n.starts_with("..") {
        return Err(format!(
            "chart illegally references parent directory: {raw:?}"
        ));
    }
    let b = n.as_bytes();
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/' {
        return Err(format!("chart contains illegally named files: {raw:?}"));
    }
    if first == "Chart.yaml" {
        return Err("chart yaml not in base directory".into());
    }
    Ok(n)
}

/// helm's `LoadArchive`: a gzipped tar whose entries sit under one
/// top-level directory. Entries escaping that directory, files over 5 MiB
/// and archives over 100 MiB decompressed are refused, as helm does.
/// Links are skipped (helm reads them as empty files).
pub(super) fn load_archive(data: &[u8], at: &Origin<'_>) -> Result<Chart, Error> {
    use std::io::Read;
    let bad = |e: String| Error::Chart(format!("{}: {e}", at.dir.display()));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(data));
    let mut files = Vec::new();
    let mut remaining = MAX_CHART_SIZE;
    for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
        let entry = entry.map_err(|e| bad(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let raw = entry
            .path()
            .map_err(|e| bad(e.to_string()))?
            .to_string_lossy()
            .into_owned();
        let rel = archive_entry_name(&raw).map_err(bad)?;
        let size = entry.header().size().map_err(|e| bad(e.to_string()))?;
        let too_big = || {
            bad(format!(
                "decompressed chart is larger than the maximum file size {MAX_CHART_SIZE}"
            ))
        };
        if size > remaining {
            return Err(too_big());
        }
        if size > MAX_FILE_SIZE {
            return Err(bad(format!(
                "decompressed chart file {raw:?} is larger than the maximum file size {MAX_FILE_SIZE}"
            )));
        }
        // The header size may lie: never read past what is left.
        let mut buf = Vec::new();
        let read = entry
            .take(remaining)
            .read_to_end(&mut buf)
            .map_err(|e| bad(format!("{raw}: {e}")))? as u64;
        remaining -= read;
        if read < size || remaining == 0 {
            return Err(too_big());
        }
        files.push((rel, FileData::loaded(buf)));
    }
    if files.is_empty() {
        return Err(bad("no files in chart archive".into()));
    }
    from_files(files, at)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn at(dir: &Path) -> Origin<'_> {
        Origin::top(dir, None)
    }

    #[test]
    fn loads_packaged_charts() {
        let data = targz(&[
            (
                "pkg/Chart.yaml",
                "\u{feff}apiVersion: v2\nname: pkg\nversion: 1.2.3\n".as_bytes(),
            ),
            ("pkg/templates/a.yaml", b"x: 1"),
        ]);
        let c = load_archive(&data, &at(Path::new("pkg.tgz"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.name.as_str(), c.templates.len()), ("pkg", 1));
        assert!(load_archive(b"not gzip", &at(Path::new("x.tgz"))).is_err());
    }

    fn targz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, body) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            // set_path refuses `..`; write the raw name like a hostile tool would.
            let name = h.as_old_mut().name.as_mut_slice();
            name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            tar.append(&h, *body).unwrap_or_else(|e| panic!("{e}"));
        }
        let raw = tar.into_inner().unwrap_or_else(|e| panic!("{e}"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap_or_else(|e| panic!("{e}"));
        gz.finish().unwrap_or_else(|e| panic!("{e}"))
    }

    fn archive_error(entries: &[(&str, &[u8])]) -> String {
        match load_archive(&targz(entries), &at(Path::new("x.tgz"))) {
            Ok(_) => panic!("archive loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn archives_cannot_escape_or_explode() {
        let chart: &[u8] = b"apiVersion: v2\nname: x\nversion: 1.0.0\n";
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/../../etc/evil", b"x")]);
        assert!(
            e.contains("references parent directory") && e.contains("etc/evil"),
            "{e}"
        );
        let e = archive_error(&[("x/Chart.yaml", chart), ("x//etc/passwd", b"x")]);
        assert!(
            e.contains("absolute paths") && e.contains("etc/passwd"),
            "{e}"
        );
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/c:/win", b"x")]);
        assert!(e.contains("illegally named"), "{e}");
        let e = archive_error(&[("Chart.yaml", chart)]);
        assert!(e.contains("outside the base directory"), "{e}");
        let big = vec![b'a'; MAX_FILE_SIZE as usize + 1];
        let e = archive_error(&[("x/Chart.yaml", chart), ("x/big.txt", &big)]);
        assert!(e.contains("x/big.txt") && e.contains("5242880"), "{e}");
        // 21 files of 5 MiB: over the 100 MiB total.
        let five = vec![b'a'; MAX_FILE_SIZE as usize];
        let names: Vec<String> = (0..21).map(|i| format!("x/f{i}")).collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("x/Chart.yaml", chart)];
        entries.extend(names.iter().map(|n| (n.as_str(), five.as_slice())));
        let e = archive_error(&entries);
        assert!(
            e.contains("larger than the maximum file size 104857600"),
            "{e}"
        );
        // `..` that stays inside is fine, as path.Clean makes it.
        let ok = load_archive(
            &targz(&[("x/Chart.yaml", chart), ("x/a/../b.txt", b"b")]),
            &at(Path::new("x.tgz")),
        );
        assert!(ok.is_ok_and(|c| c.files.contains_key("b.txt")));
    }

    /// The chart files parse in the order they came: in an archive whose
    /// bad `values.yaml` precedes its bad `Chart.yaml`, the values fail.
    #[test]
    fn the_first_bad_chart_file_in_archive_order_is_the_error() {
        let data = targz(&[("x/values.yaml", b"a: [\n"), ("x/Chart.yaml", b"name: [\n")]);
        let e = load_archive(&data, &at(Path::new("x.tgz"))).map(|_| ());
        assert!(
            matches!(&e, Err(Error::ChartFile(f)) if f.file.to_str() == Some("values.yaml")),
            "{e:?}"
        );
    }
}
